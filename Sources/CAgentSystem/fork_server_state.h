/* What of the fork server's process every worker it forks inherits, and which a module
   library's constructors could change while the server loads it (fork_server_state.c). */
#ifndef FORK_SERVER_STATE_H
#define FORK_SERVER_STATE_H

#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

struct server_state {
    int threads;
    mode_t umask;
    sigset_t mask;
    /* Each signal's handler and flags (index: the signal number). */
    void *handlers[NSIG];
    int flags[NSIG];
    /* The identity of fds 0 to 3 (the control socket is 3). */
    dev_t devices[4];
    ino_t inodes[4];
    /* The working folder's identity. */
    dev_t cwd_device;
    ino_t cwd_inode;
    /* The environment: its array and a checksum of its strings. */
    char **environment;
    size_t variables;
    unsigned long long environment_sum;
};

/* Takes the state now. */
void server_state_take(struct server_state *state);

/* Whether `after` differs from `before` in anything a forked worker inherits, and in what
   (the first difference found; agent_system.h's AGENT_FORK_SERVER_LOAD_* values less one). */
enum {
    SERVER_STATE_SAME = 0,
    SERVER_STATE_THREADS,
    SERVER_STATE_UMASK,
    SERVER_STATE_SIGNAL_MASK,
    SERVER_STATE_SIGNAL_HANDLER,
    SERVER_STATE_DESCRIPTORS,
    SERVER_STATE_FOLDER,
    SERVER_STATE_ENVIRONMENT,
};
int server_state_changed(const struct server_state *before, const struct server_state *after);

#endif
