#define _GNU_SOURCE
#include "agent_system.h"
#include "fork_zygotes.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#endif

/* The fork server (agent-worker --fork-server) forks workers instead of exec'ing them: the
   Swift runtime, Foundation and the worker code are already mapped and relocated, so a worker
   is ready in a fraction of the time and shares those pages with its siblings.

   It is safe only because the server is single-threaded when it forks (it never starts a
   thread: this loop is plain C, entered before any Swift code that could start one). Each
   worker is forked twice, the middle process exiting at once, so that the worker is
   reparented to the nearest child subreaper — the supervisor, which then waits for it like a
   worker it spawned itself, and which a crash of the fork server cannot take down. */

static void close_received(int *fds, int count) {
    for (int i = 0; i < count; i++) if (fds[i] >= 0) close(fds[i]);
}

/* A request on the control socket: one data buffer and room for three fds. */
struct request_message {
    struct iovec data;
    struct msghdr header;
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * 3)];
    } control;
};

static void prepare_message(struct request_message *request, void *data, size_t length) {
    memset(request, 0, sizeof(*request));
    request->data.iov_base = data;
    request->data.iov_len = length;
    request->header.msg_iov = &request->data;
    request->header.msg_iovlen = 1;
    request->header.msg_control = request->control.space;
    request->header.msg_controllen = sizeof(request->control.space);
}

/* Receives one request: the payload into buf, up to three fds. Returns the payload length,
   0 on end of file, -1 on error. */
static ssize_t receive_request(int control, char *buf, size_t capacity, int fds[3]) {
    struct request_message request;
    prepare_message(&request, buf, capacity);
    struct msghdr *message = &request.header;
    ssize_t n;
    do { n = recvmsg(control, message, MSG_CMSG_CLOEXEC); } while (n < 0 && errno == EINTR);
    fds[0] = fds[1] = fds[2] = -1;
    if (n <= 0) return n;
    int received = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(message); c; c = CMSG_NXTHDR(message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *data = (int *)CMSG_DATA(c);
        for (int i = 0; i < count; i++) {
            if (received < 3) fds[received++] = data[i];
            else close(data[i]);
        }
    }
    /* The supervisor's clean goodbye, as opposed to an end of file at its death. */
    if (received == 0 && n == 4 && memcmp(buf, "quit", 4) == 0) return -3;
    if (received != 3 || (message->msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        close_received(fds, 3);
        fds[0] = fds[1] = fds[2] = -1;
        errno = EINVAL;
        return -2;
    }
    return n;
}

void fork_reply(int control, int32_t value, int32_t refusal) {
    int32_t message[2] = {value, refusal};
    ssize_t n;
    do { n = send(control, message, sizeof(message), MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
}

/* Thread ids cached in thread-local storage. The Swift runtime's locks (swift::threading_impl
   ulock), Synchronization's Mutex and libdispatch's locks are priority-inheritance futexes
   whose owner word is the locking thread's id, which each caches per thread on first use. A
   forked worker's first thread is a copy of the server's main thread, caches included (seen
   here: libswiftCore's and libdispatch's held the server's id), so it would lock with another
   process's thread id, and the kernel checks that id when a contended PI futex is unlocked.
   The worker rewrites each cache with its own id.

   Which words are caches is decided once, in the server (whose thread-local blocks do not
   change while it serves): a 32-bit word that holds the server's id, unless it is half of a
   pointer. With pid_max at 32768 a pid often equals the upper half of a pointer (0x55xx..0x56xx
   for the heap, 0x7fxx for mappings); rewriting one such half sent a worker to an address that
   does not exist, and every worker of that server crashed at its first instruction after the
   fork (seen in the tests: SIGSEGV six times in a row, 0.00 s after each start). */
enum { TID_CACHES_MAX = 32 };
static int32_t *tid_caches[TID_CACHES_MAX];
static size_t tid_cache_count;

/* Whether the address is mapped in this process. */
static int is_mapped(uint64_t address) {
    long page = sysconf(_SC_PAGESIZE);
    if (address < (uint64_t)page || address >= 0x800000000000ULL) return 0;
    return msync((void *)(uintptr_t)(address & ~(uint64_t)(page - 1)), (size_t)page, MS_ASYNC) == 0;
}

/* Which of `count` words (a thread-local block) are caches of the thread id `tid`: those equal
   to it that are not half of an 8-byte value that is a mapped address. Writes at most
   `capacity` indices; returns how many. */
static size_t tid_cache_words(const int32_t *words, size_t count, int32_t tid, size_t *indices, size_t capacity) {
    size_t found = 0;
    for (size_t i = 0; i < count && found < capacity; i++) {
        if (words[i] != tid) continue;
        /* The aligned 8 bytes the word is half of (when both halves are in the block). */
        int upper = ((uintptr_t)&words[i] & 7) != 0;
        if (upper ? i >= 1 : i + 1 < count) {
            size_t low = upper ? i - 1 : i;
            uint64_t value = (uint64_t)(uint32_t)words[low] | ((uint64_t)(uint32_t)words[low + 1] << 32);
            if (is_mapped(value)) continue;
        }
        indices[found++] = i;
    }
    return found;
}

static int find_tid_caches(struct dl_phdr_info *info, size_t size, void *context) {
    const int32_t *server = context;
    if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(info->dlpi_tls_data)) return 1;
    if (info->dlpi_tls_data == NULL) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_TLS) continue;
        int32_t *words = info->dlpi_tls_data;
        size_t indices[TID_CACHES_MAX];
        size_t found = tid_cache_words(words, header->p_memsz / sizeof(int32_t), *server, indices,
                                             TID_CACHES_MAX - tid_cache_count);
        for (size_t j = 0; j < found; j++) tid_caches[tid_cache_count++] = &words[indices[j]];
    }
    return 0;
}

/* In the new worker: the channel on fd 3, stdout and stderr on 1 and 2, its own process
   group, nothing else open (fd 3 was the server's control socket, replaced here). */
static void adopt_tid_caches(pid_t server) {
    pid_t self = getpid();
    for (size_t i = 0; i < tid_cache_count; i++) {
        if (*tid_caches[i] == server) *tid_caches[i] = self;
    }
}

/* The calling thread's rseq area (glibc's, at the thread pointer plus __rseq_offset) registered
   with the kernel again. The kernel gives a child that shares its parent's memory (the vfork'd
   middle process) no registration, and a fork copies the middle's: so a worker's main thread
   would run unregistered while glibc believes it is (sched_getcpu reading a stale CPU, a
   per-CPU critical section unprotected). Threads started later register themselves. Found by
   an adversary at stop 68. */
static void register_rseq_again(void) {
#if defined(RSEQ_SIG) && defined(SYS_rseq)
    if (__rseq_size == 0) return; /* glibc registers none (its tunable turned it off) */
    char *thread_pointer;
#if __has_builtin(__builtin_thread_pointer)
    thread_pointer = __builtin_thread_pointer();
#elif defined(__x86_64__)
    __asm__("mov %%fs:0, %0" : "=r"(thread_pointer));
#else
    return;
#endif
    /* glibc 2.35-2.39 registers 32 bytes and says 20 (the original ABI's size). */
    unsigned int length = __rseq_size < 32 ? 32 : __rseq_size;
    syscall(SYS_rseq, thread_pointer + __rseq_offset, length, 0, RSEQ_SIG);
#endif
}

static void become_worker(int channel, int out, int err, pid_t server) {
    adopt_tid_caches(server);
    register_rseq_again();
    setpgid(0, 0);
    /* The received fds are 4 or above unless the server's own 0-2 were closed: move any that
       sits on a target before the dup2s overwrite it. */
    int fds[3] = {channel, out, err};
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 1 && fds[i] <= 3) fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 4);
    }
    dup2(fds[0], 3);
    dup2(fds[1], 1);
    dup2(fds[2], 2);
    /* dup2 onto itself (a received fd that landed on 1 or 2) keeps close-on-exec. */
    for (int fd = 1; fd <= 3; fd++) fcntl(fd, F_SETFD, 0);
    syscall(SYS_close_range, 4U, ~0U, 0U);
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
}

/* In a new zygote: its socket to the server on fd 3, nothing above (the supervisor's socket,
   the request's fds, the other zygotes' sockets closed); it stays in the server's process group
   and ignores the stop signals as the server does, and dies with the server. */
static void become_zygote(int control, pid_t server) {
    adopt_tid_caches(server);
    zygote_note_inherited_objects();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server) _exit(0);
    if (control != 3) dup2(control, 3);
    fcntl(3, F_SETFD, FD_CLOEXEC);
    syscall(SYS_close_range, 4U, ~0U, 0U);
}

/* Sends the request to the zygote of the library it names, if there is one that can take it:
   1 when answered (`*result` to reply), 0 to fork it here, 2 in a new zygote. `*refusal`: why
   the library's zygote is not used, when this request is the first to find out (else 0). */
static int route_to_zygote(char *buf, size_t n, int fds[3], pid_t server, int32_t *result, int32_t *refusal) {
    const char *file = fork_request_value(buf, n, "--module-file");
    struct zygote *entry = file ? zygote_entry(file) : NULL;
    if (!entry) return 0;
    if (entry->state == ZYGOTE_PLAIN) {
        *refusal = zygote_take_refusal(entry);
        return 0;
    }
    if (entry->state == 0) {
        int child = -1;
        if (zygote_start(entry, &child) == 1) {
            become_zygote(child, server);
            return 2;
        }
        return 0;
    }
    int forwarded = zygote_forward(entry, buf, n, fds, result);
    *refusal = zygote_take_refusal(entry);
    if (forwarded == 0) return 0;
    close_received(fds, 3);
    return 1;
}

/* The server ignores these (see agent_fork_server_serve); a worker starts with defaults, set in
   the middle process before it forks, so that they hold from the worker's first instruction. */
static void default_stop_signals(void) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

/* Waits until `control` is readable (or ended), up to `timeout_ms`: poll's result, 0 on the timeout. */
static int await_readable(int control, int timeout_ms) {
    struct pollfd wait = {.fd = control, .events = POLLIN};
    int ready;
    do { ready = poll(&wait, 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    return ready;
}

/* The middle process, on its parent's stack (see fork_worker): forks the worker and exits.
   Returns (1) only in the worker, whose memory is its own copy. */
static __attribute__((noinline)) int fork_from_middle(int fds[3], pid_t server, volatile int32_t *shared) {
    default_stop_signals();
    pid_t worker = fork();
    if (worker == 0) {
        become_worker(fds[0], fds[1], fds[2], server);
        return 1;
    }
    /* Its own process group before the supervisor learns its pid (it may signal the group
       at once); the worker's own setpgid covers the other order. */
    if (worker > 0) setpgid(worker, worker);
    *shared = worker > 0 ? worker : -errno;
    _exit(0);
}

/* Forks a worker twice (the middle process exits at once, so the worker is the supervisor's):
   returns 1 in the worker, 0 in the server with `*result` its pid or -errno. `shared` is where
   the middle process leaves the worker's pid for the server.

   The middle process is a vfork: it borrows the server's memory while the server waits, so
   that the worker's start copies the server's page tables once (in the worker's fork), not
   twice, and the middle's exit frees none. It runs nothing but fork_from_middle, whose frame
   is below this one (it writes nothing of the server's but the frames it calls, errno and
   `*shared`); a symbol it binds lazily stays bound for the next. The handlers it changes are
   its own (vfork copies them). glibc's fork in it runs the atfork handlers as the server
   itself would, in turn: the server is single-threaded and waits. Measured at stop 68: the
   middle process's page tables were ~0.35 ms of the zygote's CPU per worker. No tail call:
   the middle's frame must be below this one, never in its place. */
static __attribute__((disable_tail_calls)) int fork_worker(int fds[3], pid_t server, volatile int32_t *shared, int32_t *result) {
    *shared = -EAGAIN;
    pid_t middle = vfork();
    if (middle == 0) {
        if (fork_from_middle(fds, server, shared)) return 1;
        _exit(0);
    }
    if (middle < 0) {
        *result = -errno;
    } else {
        int status;
        while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {}
        /* The middle process has exited: its child is the supervisor's now. */
        *result = *shared;
    }
    return 0;
}

int agent_fork_server_serve(int control, char *buf, size_t capacity, size_t *length, int release_after_ms, int zygotes) {
    /* A stop of the whole group or cgroup (Ctrl-C, systemd) is the supervisor's to handle: the
       server ends when the supervisor closes its socket, or with it (parent-death signal). */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* Where the middle process leaves the worker's pid (or -errno) for the server. */
    /* The server's main thread (this one) has the server's pid as its thread id. */
    pid_t server = getpid();
    if (zygotes == FORK_SERVE_AS_ZYGOTE) zygote_record_objects();
    tid_cache_count = 0;
    dl_iterate_phdr(find_tid_caches, &server);
    volatile int32_t *shared = mmap(NULL, sizeof(int32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return -1;
    int released = release_after_ms < 0;
    for (;;) {
        /* Its code pages, once the start's requests are over: a forked worker maps its own
           either way (no page table of a file mapping is copied at fork). */
        if (!released && await_readable(control, release_after_ms) == 0) {
            int problem;
            agent_release_file_pages(&problem);
            released = 1;
        }
        /* While no request comes: a zygote's load past its limit is ended, and the zygotes
           given up are reaped, without waiting for the next request of their library. */
        if (zygotes == FORK_SERVE_ROUTING) {
            for (int wait; (wait = zygotes_next_check_ms()) >= 0 && await_readable(control, wait) == 0;) zygotes_check();
        }
        int fds[3];
        ssize_t n = receive_request(control, buf, capacity - 1, fds);
        if (n == 0 || n == -1 || n == -3) {
            munmap((void *)shared, sizeof(int32_t));
            return n == -3 ? -3 : -1;
        }
        if (n == -2) {
            fork_reply(control, -EINVAL, 0);
            continue;
        }
        buf[n] = 0;
        /* Why the zygote of the library named is not used, told once (see route_to_zygote). */
        int32_t refusal = 0;
        if (zygotes == FORK_SERVE_AS_ZYGOTE && zygote_objects_changed()) {
            close_received(fds, 3);
            fork_reply(control, -ESTALE, 0);
            munmap((void *)shared, sizeof(int32_t));
            return -1;
        }
        if (zygotes == FORK_SERVE_ROUTING) {
            zygotes_reap();
            int32_t answer = 0;
            int routed = route_to_zygote(buf, (size_t)n, fds, server, &answer, &refusal);
            if (routed == 2) {
                munmap((void *)shared, sizeof(int32_t));
                *length = (size_t)n;
                return 1;
            }
            if (routed == 1) {
                fork_reply(control, answer, refusal);
                continue;
            }
        }
        int32_t result;
        if (fork_worker(fds, server, shared, &result)) {
            munmap((void *)shared, sizeof(int32_t));
            *length = (size_t)n;
            return 0;
        }
        close_received(fds, 3);
        fork_reply(control, result, refusal);
    }
}

int fork_request_send(int control, const char *payload, size_t length, const int fds[3]) {
    struct request_message request;
    prepare_message(&request, (void *)payload, length);
    struct cmsghdr *c = CMSG_FIRSTHDR(&request.header);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * 3);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * 3);
    ssize_t n;
    do { n = sendmsg(control, &request.header, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n < 0 ? errno : 0;
}

int agent_fork_server_request(int control, pid_t server, const char *payload, size_t length, int channel, int out, int err,
                              int timeout_ms, pid_t *pid, int *refusal) {
    int fds[3] = {channel, out, err};
    *refusal = 0;
    int problem = fork_request_send(control, payload, length, fds);
    return problem ? problem : fork_request_await(control, server, timeout_ms, pid, refusal);
}

/* Whether `pid` is stopped (SIGSTOP, or a debugger's stop): /proc/PID/stat's state, after the
   command's closing parenthesis, is T or t. */
static int is_stopped(pid_t pid) {
    char path[32], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n;
    do { n = read(fd, buf, sizeof buf - 1); } while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' && (close_paren[2] == 'T' || close_paren[2] == 't');
}

/* How long a reply is waited for before the peer is looked at: a peer that answers within it
   (nearly every request) costs no look. */
enum { REPLY_LOOK_MS = 20 };

int fork_request_await(int control, pid_t peer, int timeout_ms, pid_t *pid, int *refusal) {
    ssize_t n;
    int ready = 0;
    /* In slices: a stopped peer never answers, and waiting out the whole timeout for it would
       hold the caller (the supervisor's loop, or the server with every later request). */
    for (int left = timeout_ms; ready == 0 && (timeout_ms < 0 || left > 0); left -= REPLY_LOOK_MS) {
        ready = await_readable(control, timeout_ms < 0 || left > REPLY_LOOK_MS ? REPLY_LOOK_MS : left);
        if (ready == 0 && peer > 0 && is_stopped(peer)) return EHOSTDOWN;
    }
    if (ready == 0) return ETIMEDOUT;
    if (ready < 0) return errno;
    /* The worker's pid (or -errno), and why a zygote is not used (0: nothing to tell). */
    int32_t message[2] = {0, 0};
    do { n = recv(control, message, sizeof(message), 0); } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    if (n != (ssize_t)sizeof(message)) return EPIPE;
    if (refusal && message[1] > 0) *refusal = message[1];
    if (message[0] <= 0) return message[0] == 0 ? EPROTO : -message[0];
    *pid = message[0];
    return 0;
}

int agent_fork_server_quit(int control) {
    ssize_t n;
    do { n = send(control, "quit", 4, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n == 4 ? 0 : errno;
}

int agent_seqpacket_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

int agent_set_command_line(char **argv, int argc, const char *text, size_t length) {
    /* The area as first found, kept for later calls (a zygote's worker rewrites what its zygote
       wrote, and the strings no longer tell where the area ends). */
    static char *start;
    static size_t capacity;
    if (!start) {
        if (argc < 1 || argv == NULL || argv[0] == NULL) return -1;
        /* The strings of argv are contiguous; ps and /proc/PID/cmdline show that area. */
        char *end = argv[argc - 1] + strlen(argv[argc - 1]);
        for (int i = 1; i < argc; i++) {
            if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1) return -1;
        }
        start = argv[0];
        capacity = (size_t)(end - start);
    }
    if (length > capacity) length = capacity;
    memset(start, 0, capacity + 1);
    memcpy(start, text, length);
    return 0;
}
