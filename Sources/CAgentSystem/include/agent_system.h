/*
 * agent_system.h — the few Linux calls Swift's Glibc module does not import
 * (variadic prctl/syscall, posix_spawn extensions, pidfd).
 */
#ifndef AGENT_SYSTEM_H
#define AGENT_SYSTEM_H

#include <sys/types.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Spawns `path` with `argv`/`envp` (NULL-terminated arrays) through posix_spawn.
 * In the child: stdin/stdout/stderr become `stdin_fd`/`stdout_fd`/`stderr_fd` (-1 keeps
 * /dev/null for stdin, the parent's for the others), `channel_fd` becomes fd 3 (-1: none),
 * every other fd is closed, the signal mask is emptied, signals the parent may ignore or
 * handle are reset to default. `new_group`: 0 keeps the parent's process group, 1 makes the
 * child lead a new process group, 2 a new session (a daemon).
 * Returns 0 and sets `*pid`, or an errno value.
 */
int agent_spawn(const char *path, char *const argv[], char *const envp[],
                int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                int new_group, pid_t *pid);

/**
 * As agent_spawn, in the working directory `directory` (NULL: the parent's). A relative `path`
 * is found from there. A directory the child cannot enter fails the spawn with chdir's errno,
 * which the caller cannot tell from exec's: check the directory first for a clear message.
 */
int agent_spawn_in(const char *path, char *const argv[], char *const envp[],
                   int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                   const char *directory, int new_group, pid_t *pid);

/**
 * As agent_spawn_in, the child starting in the cgroup (v2) whose folder `cgroup_fd` is open
 * (O_DIRECTORY; -1: the caller's cgroup, through posix_spawn): clone3 with CLONE_INTO_CGROUP,
 * so that the child is in it before its first instruction and whatever it forks is too;
 * where clone3 is refused (ENOSYS from a seccomp filter), fork, and the child joins the cgroup
 * before anything else. The child then writes itself into each of the `join_count` open
 * cgroup.procs files `joins` (cgroups of v1 hierarchies, which clone3 cannot start it in),
 * still before exec; only with `cgroup_fd`. Returns once the child has exec'd (0 and `*pid`)
 * or failed to (its errno; the child is reaped).
 */
int agent_spawn_into(const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                     const char *directory, int new_group, int cgroup_fd, const int *joins, int join_count,
                     pid_t *pid);

/**
 * Forks and execs a module's program (a jsonl/1 module, from its worker): stdin/stdout/stderr
 * as in agent_spawn (no fd 3), in `directory`, in the caller's process group and cgroup, with
 * PR_SET_PDEATHSIG `death_signal` (0: none) set before exec. The death signal follows the
 * calling *thread*: call it from one that lives as long as the caller. `path` is run as given
 * (execve, no PATH search: resolve it first). Returns once the child has exec'd (0 and `*pid`)
 * or failed to (its errno; the child is reaped).
 */
int agent_spawn_program(const char *path, char *const argv[], char *const envp[],
                        int stdin_fd, int stdout_fd, int stderr_fd, const char *directory,
                        int death_signal, pid_t *pid);

/**
 * agent_spawn_program, with the child in a process group of its own (its pid): a logic
 * adapter's program, whose group is killed with it when the chatbot starts it again (what it
 * started dies too; the chatbot's worker goes on).
 */
int agent_spawn_program_grouped(const char *path, char *const argv[], char *const envp[],
                                int stdin_fd, int stdout_fd, int stderr_fd, const char *directory,
                                int death_signal, pid_t *pid);

/** prctl(PR_SET_PDEATHSIG, sig). Returns 0 or -1 with errno. */
int agent_set_parent_death_signal(int sig);

/**
 * Starts the calling worker's exit reaper (exit_reaper.c): a process sharing its address space
 * that keeps the kernel from tearing that space down inside the worker's own exit, so that the
 * worker's death is reported (pidfd, end of file on its sockets) a millisecond sooner. It is
 * named "agent-exit" and in a process group of its own when this returns, and keeps none of
 * the worker's descriptors but a pidfd of it. Once the worker is dead it waits for the
 * supervisor's SIGKILL (sent when no restart is starting) or a second, then exits and frees
 * the memory. Call it once, from the main thread. Returns the reaper's pid, or -errno
 * (-ENOSYS on an architecture it does not support).
 */
pid_t agent_start_exit_reaper(void);

/** Whether processes `a` and `b` share one address space (kcmp KCMP_VM): 1, 0, or -1 with errno. */
int agent_share_address_space(pid_t a, pid_t b);

/**
 * Unmaps (MADV_DONTNEED) the read-only segments (code, constants) of the executable and every
 * library the dynamic loader has loaded, but a segment with a page copied on write, resident or
 * swapped out, its RELRO part and an object with text relocations (file_pages.c). The pages
 * stay in the page cache; one touched again is mapped again. Returns the bytes of the mappings released; `*problem` is 0,
 * or the first errno met (smaps unreadable, a madvise refused).
 */
long agent_release_file_pages(int *problem);

/** The calling process's resident file pages in kB (`RssFile:` of /proc/self/status), or -1. */
long agent_resident_file_kb(void);

/**
 * Calls agent_release_file_pages on a detached thread of its own ("agent-pages", all
 * signals blocked) after `delay_ms`. Returns 0, or -1 when the thread cannot be made.
 */
int agent_release_file_pages_later(unsigned delay_ms);

/** pidfd_open(pid, 0). Returns the fd or -1 with errno. */
int agent_pidfd_open(pid_t pid);

/** Blocks `count` signals in the calling thread (inherited by threads it creates). */
int agent_block_signals(const int *signals, int count);

/** Unblocks `count` signals in the calling thread. */
int agent_unblock_signals(const int *signals, int count);

/** A signalfd (non-blocking, close-on-exec) for `count` signals, which must be blocked. */
int agent_signalfd(const int *signals, int count);

/** Reads one pending signal from a signalfd: returns the signal number, 0 if none, -1 on error. */
int agent_signalfd_read(int fd);

/**
 * Installs handlers for `count` signals that write the signal number (one byte) to a pipe,
 * whichever thread receives them. Returns the pipe's read end (non-blocking, close-on-exec)
 * or -1. Call once per process.
 */
int agent_signal_pipe(const int *signals, int count);

/**
 * Whether the child `pid` was stopped or continued since the last call (waitid with WSTOPPED |
 * WCONTINUED | WNOHANG, which leaves exits alone): 1 stopped (by `*signo`), 2 continued, 0
 * nothing new, -1 with errno on error.
 */
int agent_wait_stop_change(pid_t pid, int *signo);

/**
 * Whether the child `pid` is stopped or has exited, its report left for a later wait (waitid
 * with WSTOPPED | WEXITED | WNOHANG | WNOWAIT): 1 yes, 0 no, -1 with errno on error.
 */
int agent_child_is_stopped_or_dead(pid_t pid);

/**
 * The children of `pid`'s threads (each /proc/PID/task/TID/children), up to `capacity` pids
 * into `out`; each file read takes one from `*budget`, and none is read once it is 0. Returns
 * how many were written.
 */
int agent_process_children(pid_t pid, int32_t *out, int capacity, int *budget);

/** Keeps `count` of the user's processes and threads (`ulimit -u`) for this process: what it
    spawns from now on may run at most its own limit less `count` (at most a quarter of it), so
    that a command or module forking to the limit leaves it room to start its own threads. */
void agent_keep_processes_for_self(unsigned long count);

/** The limit of processes a child gets under `limit` when `kept` are kept: `limit` less `kept`,
    at most a quarter of it; RLIM_INFINITY stays. */
unsigned long agent_children_process_limit(unsigned long limit, unsigned long kept);

/** prctl(PR_SET_CHILD_SUBREAPER, 1): orphaned descendants are reparented to the caller. */
int agent_set_child_subreaper(void);

/** prctl(PR_SET_TIMERSLACK, nanoseconds) for the calling thread: how late its timed waits may
    wake (50 µs by default). Returns 0 or -1 with errno. */
int agent_set_timer_slack(unsigned long nanoseconds);

/** pipe2(fds, O_CLOEXEC). */
int agent_pipe_cloexec(int fds[2]);

/** Binds (listen = 1) or connects (listen = 0) a Unix stream socket at `directory_fd`/`name`,
    through /proc/self/fd so that paths longer than sun_path's 108 bytes work. Returns the
    socket (close-on-exec) or -1 with errno. A listening socket gets mode 0600. A connect does
    not wait: a listener whose queue is full gives EAGAIN (the socket returned blocks). */
int agent_unix_socket(int directory_fd, const char *name, int listen);

/** open(path, O_PATH | O_DIRECTORY | O_CLOEXEC): a handle on a directory for agent_unix_socket. */
int agent_open_directory(const char *path);

/** accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC. */
int agent_accept(int fd);
/// The user id of a Unix socket's peer (SO_PEERCRED), or -1.
long agent_peer_uid(int fd);
/// The process id of a Unix socket's peer (SO_PEERCRED: for a client, the listener's, in the
/// caller's pid namespace), or -1.
long agent_peer_pid(int fd);

/** Sets the calling thread's name (15 bytes max), for ps/top. */
void agent_set_thread_name(const char *name);

/** mallopt(M_ARENA_MAX, count): at most `count` malloc arenas in this process (and in the
    processes it forks). Call before any thread starts. Returns 1 on success, 0 on failure. */
int agent_limit_malloc_arenas(int count);
/** Gives the free pages of every malloc arena back to the system (malloc_trim(0)): 1 if any was. */
int agent_malloc_trim(void);

/**
 * The fork server's loop (run by `agent-worker --fork-server`, single-threaded, with its
 * control socket — SOCK_SEQPACKET — on `control`). Each request is a payload (the worker's
 * arguments) with three fds (the worker's channel, stdout and stderr); the server forks a
 * worker (twice, so that it is reparented to the child subreaper above the server) and replies
 * with its pid as an int32 (or -errno). Returns 0 in the new worker, with the payload in `buf`
 * (NUL-terminated, `*length` bytes), the channel on fd 3, stdout and stderr on fds 1 and 2,
 * its own process group and no other fd; returns -1 in the server when the control socket closes
 * (the supervisor is gone), -3 when the supervisor asked it to quit (agent_fork_server_quit).
 * Once no request has come for `release_after_ms` (< 0: never), the server gives back its code
 * pages (agent_release_file_pages), once.
 */
int agent_fork_server_serve(int control, char *buf, size_t capacity, size_t *length, int release_after_ms, int zygotes);

/** `zygotes` of agent_fork_server_serve: none, route requests to zygotes (the server), or serve as a zygote. */
enum { FORK_SERVE_PLAIN = 0, FORK_SERVE_ROUTING = 1, FORK_SERVE_AS_ZYGOTE = 2 };

/*
 * With `zygotes` non-zero, a request that names a module library (the value after
 * "--module-file") goes to that library's zygote: a child of the server that has
 * loaded the module and forks its workers (through the same loop, called again with `zygotes`
 * 0), which then share the library's relocated pages and skip the load. The first request for
 * a library is forked as before while its zygote starts: agent_fork_server_serve returns 1 in
 * the new zygote, with that request's payload in `buf`, its socket to the server on fd 3 and no
 * fd above; it loads the module, checks agent_zygote_forkable, says agent_zygote_loaded and
 * serves (FORK_SERVE_AS_ZYGOTE: it records every object it has loaded, and once one changes on
 * disk it forks no more: it answers -ESTALE and exits, and the server forks that request and
 * starts a new zygote for the next). A zygote that fails after a request was sent to it
 * (no answer in 0.5 s, found stopped after 20 ms, or dead) makes the request fail with EREMOTEIO. A library that changed on disk gets a new zygote; one that cannot be loaded, or that
 * agent_zygote_forkable refuses, is loaded by each of its workers as before.
 */

/** Why a zygote cannot fork workers after its load, or 0 when it can. */
enum { ZYGOTE_THREADS = 1, ZYGOTE_DESCRIPTORS = 2, ZYGOTE_UNCHECKED = 3, ZYGOTE_CHILDREN = 4, ZYGOTE_PROCESS_STATE = 5, ZYGOTE_DECLINED = 6,
       ZYGOTE_FORK_FLAGS = 7, ZYGOTE_WARM_UP_STATE = 8, ZYGOTE_DIED = 9,
       /* The server's own verdicts: no word from the zygote within the load limit (it is then
          killed; AGENT_ZYGOTE_LOAD_LIMIT_MS, 10 s by default), or it died serving three times. */
       ZYGOTE_LOAD_TIMEOUT = 10, ZYGOTE_KEPT_DYING = 11 };

/**
 * Calls the library `file`'s `agent_module_warm_up` when it exports one (agent_module.h), in a
 * zygote after the load: 0 when there is none or it left the process as it found it — the
 * working folder, umask, signal dispositions, resource limits, priority, environment and fds
 * 0-3 (a worker forked from the zygote would inherit a change that no worker loading the module
 * itself gets) —, else ZYGOTE_WARM_UP_STATE. What it wrote through stdio is flushed.
 */
int agent_zygote_warm_up(const char *file);

/**
 * Whether the zygote can fork workers after loading the library `file`: 0 when it has one
 * thread, no fd above 3, no child, no mapping marked MADV_DONTFORK or MADV_WIPEONFORK, still
 * the session `session` and process group `group` it had before the load and no
 * child-subreaper flag, and the library does not export
 * agent_module_no_zygote; else why not (ZYGOTE_…).
 */
int agent_zygote_forkable(const char *file, pid_t session, pid_t group);

/** The zygote's verdict to the server on `control`: 0 ready, else unusable (it then exits).
    Flushes stdio first (what the load printed goes from the zygote, not from each worker's
    copy of the buffer). Returns 0 or an errno value. */
int agent_zygote_loaded(int control, int verdict);

/** Asks the fork server on `control` to end (a request "quit" without fds). Returns 0 or an errno value. */
int agent_fork_server_quit(int control);

/**
 * From now on, children this process makes with fork(), posix_spawn() or posix_spawnp() start
 * with default signal dispositions and an empty signal mask (unless a posix_spawn caller set
 * its own), whatever the calling thread blocks or the process ignores. For agent-worker, which
 * runs module code on threads that block signals. Returns 0 or an errno value.
 */
int agent_clean_child_signals(void);

/**
 * Asks the fork server on `control` (process `server`) for a worker: sends `payload` and the
 * three fds (its channel, stdout and stderr), waits up to `timeout_ms` for the reply. Returns 0
 * and sets `*pid`, or an errno value: EHOSTDOWN as soon as the server is found stopped.
 * `*refusal`: 0, or why the zygote of the library the request names will not be used (a
 * ZYGOTE_… code, ZYGOTE_DIED when it exited while loading): told once per library, in the reply
 * to the first request that found out (whatever that reply's outcome).
 */
int agent_fork_server_request(int control, pid_t server, const char *payload, size_t length, int channel, int out, int err,
                              int timeout_ms, pid_t *pid, int *refusal);

/**
 * Rewrites the process's command line (what ps and /proc/PID/cmdline show) in place, within
 * the space of the original arguments `argv[0..argc)`: `text` holds the new arguments
 * separated by NULs, truncated to fit. Returns 0, or -1 when the arguments are not contiguous.
 */
int agent_set_command_line(char **argv, int argc, const char *text, size_t length);

/** Whether `path` is on a cgroup v1 file system (statfs: CGROUP_SUPER_MAGIC). */
int agent_is_cgroup_v1(const char *path);

/** socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC). */
int agent_seqpacket_pair(int fds[2]);

/** Asked now and then during a transfer; non-zero aborts it. */
typedef int (*agent_abort_check)(void *context);

/** NULL when libcurl (libcurl.so.4, loaded on first use) is usable, else why not. */
const char *agent_curl_problem(void);

/**
 * POSTs `body` to `url` with libcurl, `headers` being "Name: value" lines, within `timeout_ms`;
 * `check` (may be NULL) is called during the transfer and aborts it by returning non-zero.
 * Returns 0 with the HTTP status in `*status`; 1 on failure, 3 on a timeout (both with a
 * message in `error`); 2 when `check` aborted; -1 when libcurl cannot be loaded (why in `error`).
 */
int agent_curl_post(const char *url, const char *const *headers, int header_count, const void *body, size_t length,
                    long timeout_ms, agent_abort_check check, void *context, long *status, char *error, size_t capacity);

/** What `agent_curl_smtp_send` asks of TLS on an `smtp://` URL (`smtps://` is TLS from the start). */
enum { AGENT_SMTP_TLS_NEVER = 0, AGENT_SMTP_TLS_TRY = 1, AGENT_SMTP_TLS_REQUIRED = 3 };

/**
 * Sends one message (RFC 5322 text with CRLF line ends) over SMTP with libcurl: `url` is
 * `smtp://host:port` (STARTTLS per `tls`) or `smtps://host:port`; `username`/`password` may be
 * NULL (no AUTH); `ca_file` (may be NULL) replaces the system's CA certificates. Only SMTP and
 * SMTPS are allowed. Bounded by `connect_timeout_ms` and `timeout_ms`; `check` aborts as in
 * `agent_curl_post`. Returns 0 with the server's last reply code in `*reply`; 1 on failure, 3 on a
 * timeout (with a message in `error`); 2 when `check` aborted; -1 when libcurl cannot be loaded.
 */
int agent_curl_smtp_send(const char *url, const char *username, const char *password, const char *from,
                         const char *const *recipients, int recipient_count, const void *message, size_t length,
                         int tls, const char *ca_file, long connect_timeout_ms, long timeout_ms,
                         agent_abort_check check, void *context, long *reply, char *error, size_t capacity);

/* Shared event rings (AgentCore's SharedRing). */

/** A memfd (close-on-exec) of `header + capacity` bytes, sealed at that size (it can be
    neither shrunk nor grown, by whoever holds it). Returns it or -1 with errno. */
int agent_ring_create(size_t header, size_t capacity);

/**
 * Maps the memfd `fd` made by agent_ring_create: its header, its data, then its data again
 * (so that a frame running past the end continues at the start). `capacity` must be a
 * multiple of the page size. Returns the base address or NULL with errno.
 */
void *agent_ring_map(int fd, size_t header, size_t capacity);

/** Undoes agent_ring_map. */
void agent_ring_unmap(void *base, size_t header, size_t capacity);

/**
 * Sleeps while the 32-bit word at `address`, in memory shared with another process, holds
 * `expected` (FUTEX_WAIT, not private: the other process wakes it through its own mapping),
 * for at most `timeout_ns` (negative: no limit). Returns 0 once woken or when the word held
 * something else, -1 with errno (ETIMEDOUT, EINTR) otherwise.
 */
int agent_futex_wait_shared(const void *address, uint32_t expected, int64_t timeout_ns);

/** Wakes every thread sleeping in agent_futex_wait_shared on `address`, in any process. */
void agent_futex_wake_shared(void *address);

/** Writes `length` bytes to a Unix socket with `count` (1 to 4) fds attached to the first of them. */
int agent_send_fds(int socket, const void *bytes, size_t length, const int *fds, int count);

/**
 * recvmsg of up to `capacity` bytes; fds that came with them (close-on-exec) are appended to
 * `fds` (room for 4), `*count` counting them. Returns the bytes read, 0 at EOF, -1 with errno.
 */
ssize_t agent_receive_fds(int socket, void *bytes, size_t capacity, int *fds, int *count);

/**
 * CLOCK_REALTIME in nanoseconds, for stamping events: where the kernel keeps time with the
 * TSC, extrapolated with the counter from a read of the clock at most 1 ms old (per thread;
 * within about 1 µs of the clock), and never earlier than the calling thread's previous stamp
 * unless the clock was stepped back by more than 1 ms; elsewhere a plain clock_gettime.
 * Stamps of different threads may disagree by the extrapolation's error.
 */
int64_t agent_event_time_ns(void);

/** How many times agent_event_time_ns read CLOCK_REALTIME in the calling thread. */
uint64_t agent_event_clock_reads(void);

/* Atomics on shared memory (the ring's header words). */
static inline uint64_t agent_load_acquire_u64(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_ACQUIRE);
}
static inline void agent_store_release_u64(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELEASE);
}
static inline uint32_t agent_load_u32(const void *address) {
    return __atomic_load_n((const uint32_t *)address, __ATOMIC_SEQ_CST);
}
static inline void agent_store_u32(void *address, uint32_t value) {
    __atomic_store_n((uint32_t *)address, value, __ATOMIC_SEQ_CST);
}
static inline uint32_t agent_exchange_u32(void *address, uint32_t value) {
    return __atomic_exchange_n((uint32_t *)address, value, __ATOMIC_SEQ_CST);
}
/** Starts loading the cache line at `address` ahead of a read (a hint: it never faults, so any
    address may be given). */
static inline void agent_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}
/** A full fence: a store before it is visible before any load after it. */
static inline void agent_fence(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/**
 * Opens a pseudo-terminal pair (posix_openpt, grantpt, unlockpt, then its secondary side),
 * both close-on-exec and neither the caller's controlling terminal: what a person's terminal
 * looks like to a program (isatty is true on the secondary side). Returns 0 and sets
 * `*primary` and `*secondary`, or an errno value. Used by tests of terminal output.
 */
int agent_open_pty(int *primary, int *secondary);

/**
 * Swaps two paths atomically (renameat2 with RENAME_EXCHANGE): each names the other's file
 * after. Returns 0, or an errno value (EINVAL or ENOSYS where the file system or the kernel
 * cannot).
 */
int agent_rename_exchange(const char *first, const char *second);

#ifdef __cplusplus
}
#endif

#endif
