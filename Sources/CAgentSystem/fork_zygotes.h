#ifndef AGENT_FORK_ZYGOTES_H
#define AGENT_FORK_ZYGOTES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The fork server's zygotes: one child per module library that has loaded the module and forks
   that module's workers, which then share the library's relocated pages and the runtime's
   records of it, and skip the load. Private to the fork server (fork_server.c). */

enum zygote_state { ZYGOTE_LOADING = 1, ZYGOTE_READY, ZYGOTE_PLAIN };

struct zygote {
    char *file;
    /* The file's identity when the zygote loaded it: a rebuilt module gets a new zygote. */
    dev_t device;
    ino_t inode;
    off_t size;
    struct timespec modified;
    struct timespec changed;
    pid_t pid;
    int control;
    enum zygote_state state;
    /* A request has waited for this zygote's load once: later ones do not wait. */
    int waited;
    /* Zygotes of this file that died while serving: after a few, its workers load it themselves. */
    int deaths;
    /* When a request last named it (monotonic seconds): a full table's oldest entry makes room. */
    time_t used;
    /* Why its zygote was not used (ZYGOTE_…, ZYGOTE_DIED), once known and until told. */
    int refusal;
    /* When its zygote was started (monotonic milliseconds): its load has a limit. */
    long long started_ms;
};

/* The value after `flag` among the request's NUL-separated arguments, or NULL. */
const char *fork_request_value(const char *payload, size_t length, const char *flag);

/* The zygote entry for `file` (a stale one — the file changed — retired first; when the table is
   full, the entry used least recently makes room), or NULL when the file cannot be read: such a
   request is forked as before. */
struct zygote *zygote_entry(const char *file);

/* Starts a zygote for `entry`: returns 1 in the new child, with its end of the socket in
   `*child_control`, 0 in the server, -1 on failure (the entry is then plain). */
int zygote_start(struct zygote *entry, int *child_control);

/* Hands a request (payload and three fds) to the entry's zygote. Returns 1 when the zygote
   answered (`*result`: the worker's pid or -errno), 0 when it cannot take it (not loaded yet, not
   usable, dead before the request was sent: fork the worker as before), -1 when it failed after
   the request was sent (`*result` = -EREMOTEIO; it may have forked the worker). */
int zygote_forward(struct zygote *entry, const char *payload, size_t length, const int fds[3], int32_t *result);

/* Why the entry's zygote is not used, the first time it is asked once that is known (0 else,
   and after). */
int zygote_take_refusal(struct zygote *entry);

/* Sends a reply: the worker's pid or -errno, and a refusal code (0: none). */
void fork_reply(int control, int32_t value, int32_t refusal);

/* Reaps the zygotes retired (killed) or exited, never another child. */
void zygotes_reap(void);

/* How long the server may wait for a request before zygotes_check has work (a loading
   zygote's limit, a killed zygote to reap), in ms; -1: none. */
long long zygotes_next_check_ms(void);

/* Between requests: reads the verdicts of the zygotes loading, ends those past their load
   limit (their refusal told with the next request of their library), reaps. */
void zygotes_check(void);

/* In a new zygote, before its module is loaded: notes the objects it has from the server. */
void zygote_note_inherited_objects(void);

/* In a zygote, once its module is loaded: records the identity of every object the load
   brought. */
void zygote_record_objects(void);

/* Whether one of the objects recorded has changed on disk (or is gone). */
int zygote_objects_changed(void);

/* fork_server.c's halves of a request: send the payload and three fds (0 or an errno value),
   then wait up to `timeout_ms` for the reply of `peer` (see fork_reply; `refusal` may be NULL):
   0 and `*pid`, or an errno value; EHOSTDOWN at once when `peer` is found stopped. */
int fork_request_send(int control, const char *payload, size_t length, const int fds[3]);
int fork_request_await(int control, pid_t peer, int timeout_ms, pid_t *pid, int *refusal);

#endif
