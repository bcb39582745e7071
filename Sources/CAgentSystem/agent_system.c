#define _GNU_SOURCE
#include "agent_system.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* dup2 of an fd onto itself would keep its close-on-exec flag (and the target slots may hold
   other sources), so every source is first moved above the range the child uses. */
static int lift(int fd, int *lifted) {
    if (fd < 0) { *lifted = -1; return 0; }
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (copy < 0) return errno;
    *lifted = copy;
    return 0;
}

int agent_spawn(const char *path, char *const argv[], char *const envp[],
                int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                int new_group, pid_t *pid) {
    return agent_spawn_in(path, argv, envp, stdin_fd, stdout_fd, stderr_fd, channel_fd, NULL, new_group, pid);
}

/* Processes and threads of the user that the supervisor keeps for itself (0: none kept). */
static rlim_t kept_processes = 0;

void agent_keep_processes_for_self(unsigned long count) {
    kept_processes = (rlim_t)count;
}

/* The user's limit of processes and threads (`ulimit -u`) for what this process starts: its
   own less what it keeps (at most a quarter of it), soft and hard alike, so that a child or a
   descendant cannot raise it back; 0 when nothing is kept or the limit is unlimited. */
unsigned long agent_children_process_limit(unsigned long limit, unsigned long kept) {
    if (limit == (unsigned long)RLIM_INFINITY) return limit;
    return limit - (kept < limit / 4 ? kept : limit / 4);
}

static int children_process_limit(struct rlimit *limit) {
    if (kept_processes == 0 || getrlimit(RLIMIT_NPROC, limit) != 0) return 0;
    rlim_t lowered = agent_children_process_limit(limit->rlim_cur, kept_processes);
    if (lowered == limit->rlim_cur) return 0;
    limit->rlim_cur = lowered;
    limit->rlim_max = lowered;
    return 1;
}

int agent_spawn_in(const char *path, char *const argv[], char *const envp[],
                   int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                   const char *directory, int new_group, pid_t *pid) {
    int sources[4] = {stdin_fd, stdout_fd, stderr_fd, channel_fd};
    int lifted[4] = {-1, -1, -1, -1};
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) rc = lift(sources[i], &lifted[i]);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int have_actions = 0, have_attr = 0;
    if (rc == 0 && (rc = posix_spawn_file_actions_init(&actions)) == 0) have_actions = 1;
    if (rc == 0 && (rc = posix_spawnattr_init(&attr)) == 0) have_attr = 1;

    if (rc == 0) {
        if (lifted[0] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, lifted[0], 0);
        else rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    }
    if (rc == 0 && lifted[1] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, lifted[1], 1);
    if (rc == 0 && lifted[2] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, lifted[2], 2);
    if (rc == 0 && lifted[3] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, lifted[3], 3);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, lifted[3] >= 0 ? 4 : 3);
    if (rc == 0 && directory) rc = posix_spawn_file_actions_addchdir_np(&actions, directory);

    if (rc == 0) {
        sigset_t empty, defaults;
        sigemptyset(&empty);
        sigemptyset(&defaults);
        int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2};
        for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++) sigaddset(&defaults, reset[i]);
        short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        if (new_group == 1) flags |= POSIX_SPAWN_SETPGROUP;
        if (new_group == 2) flags |= POSIX_SPAWN_SETSID;
        rc = posix_spawnattr_setflags(&attr, flags);
        if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &empty);
        if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &defaults);
        if (rc == 0 && new_group == 1) rc = posix_spawnattr_setpgroup(&attr, 0);
    }
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attr, argv, envp);

    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    if (have_attr) posix_spawnattr_destroy(&attr);
    for (int i = 0; i < 4; i++) if (lifted[i] >= 0) close(lifted[i]);
    return rc;
}

int agent_set_parent_death_signal(int sig) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)sig, 0, 0, 0);
}

int agent_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void fill(sigset_t *set, const int *signals, int count) {
    sigemptyset(set);
    for (int i = 0; i < count; i++) sigaddset(set, signals[i]);
}

int agent_block_signals(const int *signals, int count) {
    sigset_t set;
    fill(&set, signals, count);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int agent_unblock_signals(const int *signals, int count) {
    sigset_t set;
    fill(&set, signals, count);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int agent_signalfd(const int *signals, int count) {
    sigset_t set;
    fill(&set, signals, count);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int agent_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof(info));
    if (n == (ssize_t)sizeof(info)) return (int)info.ssi_signo;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    return -1;
}

static int signal_pipe_write = -1;

static void on_signal(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    if (signal_pipe_write >= 0) { ssize_t ignored = write(signal_pipe_write, &byte, 1); (void)ignored; }
    errno = saved;
}

int agent_signal_pipe(const int *signals, int count) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    signal_pipe_write = fds[1];
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < count; i++) {
        sigaction(signals[i], &action, NULL);
        sigaddset(&set, signals[i]);
    }
    /* A parent may have started us with these blocked (the mask is inherited). */
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    return fds[0];
}

int agent_set_child_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int agent_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

int agent_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

static int unix_address(struct sockaddr_un *address, int directory_fd, const char *name) {
    memset(address, 0, sizeof(*address));
    address->sun_family = AF_UNIX;
    int n = snprintf(address->sun_path, sizeof(address->sun_path), "/proc/self/fd/%d/%s", directory_fd, name);
    if (n < 0 || (size_t)n >= sizeof(address->sun_path)) { errno = ENAMETOOLONG; return -1; }
    return 0;
}

/* Binds `fd` at `name` in the directory, 0600, without touching the process-wide umask: bound
   under a name of its own, made 0600, renamed into place, and only then listening, so nobody
   else ever connects. (Setting the umask around bind() raced the other threads: a child spawned
   in that moment kept umask 0177 and wrote every file 0600 — programs it built could not run —
   and two binds at once could leave the whole process at 0177 for good.) */
static int bind_private(int fd, int directory_fd, const char *name) {
    char binding[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int n = snprintf(binding, sizeof(binding), ".%s.binding", name);
    if (n < 0 || (size_t)n >= sizeof(binding)) { errno = ENAMETOOLONG; return -1; }
    struct sockaddr_un address;
    if (unix_address(&address, directory_fd, binding) != 0) return -1;
    unlinkat(directory_fd, binding, 0);
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) != 0) return -1;
    if (fchmodat(directory_fd, binding, 0600, 0) != 0 || renameat(directory_fd, binding, directory_fd, name) != 0) {
        int saved = errno;
        unlinkat(directory_fd, binding, 0);
        errno = saved;
        return -1;
    }
    return 0;
}

int agent_unix_socket(int directory_fd, const char *name, int listen_mode) {
    struct sockaddr_un address;
    if (unix_address(&address, directory_fd, name) != 0) return -1;
    /* A client connects without blocking: a listener whose queue is full (a stopped agent's)
       answers EAGAIN at once rather than holding the caller for ever. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (listen_mode ? 0 : SOCK_NONBLOCK), 0);
    if (fd < 0) return -1;
    if (listen_mode) {
        if (bind_private(fd, directory_fd, name) != 0 || listen(fd, 64) != 0) { int saved = errno; close(fd); errno = saved; return -1; }
    } else if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0 || fcntl(fd, F_SETFL, 0) != 0) {
        int saved = errno; close(fd); errno = saved; return -1;
    }
    return fd;
}

int agent_open_directory(const char *path) {
    return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int agent_accept(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

long agent_peer_uid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return (long)credentials.uid;
}

long agent_peer_pid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 || credentials.pid <= 0) return -1;
    return (long)credentials.pid;
}

void agent_set_thread_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = 0;
    pthread_setname_np(pthread_self(), buf);
}

/* glibc gives each thread that mallocs an arena of its own, up to 8 per core (64 MiB
   reserved, its first pages touched): in a worker, a few pages each, private to the process. */
int agent_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}

/* Gives the free pages of every arena back to the system (malloc_trim(0)); 1 if any was. */
int agent_malloc_trim(void) {
    return malloc_trim(0);
}

int agent_wait_stop_change(pid_t pid, int *signo) {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    /* Without WEXITED: an exit stays for the one who reaps. */
    if (waitid(P_PID, (id_t)pid, &info, WSTOPPED | WCONTINUED | WNOHANG) != 0) return -1;
    if (info.si_pid != pid) return 0;
    if (signo) *signo = info.si_status;
    if (info.si_code == CLD_STOPPED || info.si_code == CLD_TRAPPED) return 1;
    if (info.si_code == CLD_CONTINUED) return 2;
    return 0;
}

int agent_child_is_stopped_or_dead(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    if (waitid(P_PID, (id_t)pid, &info, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    return info.si_pid == pid;
}

int agent_open_pty(int *primary, int *secondary) {
    int main_fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (main_fd < 0) return errno;
    char name[128];
    if (grantpt(main_fd) != 0 || unlockpt(main_fd) != 0 || ptsname_r(main_fd, name, sizeof name) != 0) {
        int error = errno;
        close(main_fd);
        return error;
    }
    int other = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (other < 0) {
        int error = errno;
        close(main_fd);
        return error;
    }
    *primary = main_fd;
    *secondary = other;
    return 0;
}

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int agent_rename_exchange(const char *first, const char *second) {
    return syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE) == 0 ? 0 : errno;
}

/* clone3's arguments (linux/sched.h's struct clone_args up to `cgroup`, Linux 5.7). */
struct agent_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#define AGENT_CLONE_INTO_CGROUP 0x200000000ULL
#define AGENT_CLOSE_RANGE_CLOEXEC (1U << 2)

/* In the new child (a copy of the caller with only this thread): only system calls from here
   to execve, no allocation or lock. `join` (the fallback without clone3) is the cgroup's
   cgroup.procs, and `joins` those of further cgroups (v1 hierarchies), written before anything
   else. On failure the errno goes to `report`. */
static void exec_child(int report, int join, const int *joins, int join_count, const char *path,
                       char *const argv[], char *const envp[], const int lifted[4], const char *directory,
                       int new_group) {
    int code = 0;
    if (join >= 0 && write(join, "0\n", 2) != 2) goto fail;
    for (int i = 0; i < join_count; i++) {
        if (write(joins[i], "0\n", 2) != 2) goto fail;
    }
    if (new_group == 1 && setpgid(0, 0) != 0) goto fail;
    if (new_group == 2 && setsid() < 0) goto fail;
    struct rlimit lowered;
    if (children_process_limit(&lowered) && setrlimit(RLIMIT_NPROC, &lowered) != 0) goto fail;
    if (lifted[0] >= 0) {
        if (dup2(lifted[0], 0) < 0) goto fail;
    } else {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || (null != 0 && dup2(null, 0) < 0)) goto fail;
    }
    for (int i = 1; i < 4; i++) if (lifted[i] >= 0 && dup2(lifted[i], i) < 0) goto fail;
    /* Everything else closes at exec (the report pipe stays open until then). */
    unsigned first = lifted[3] >= 0 ? 4U : 3U;
    if (syscall(SYS_close_range, first, ~0U, AGENT_CLOSE_RANGE_CLOEXEC) != 0) {
        /* Before Linux 5.11, or refused by a seccomp filter: each descriptor up to the limit
           (system calls only, as everything here). */
        struct rlimit files;
        rlim_t last = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < (1 << 20) ? files.rlim_cur : (1 << 20);
        for (unsigned fd = first; fd < last; fd++) {
            int flags = fcntl((int)fd, F_GETFD);
            if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
    if (directory && chdir(directory) != 0) goto fail;
    struct sigaction defaults;
    memset(&defaults, 0, sizeof(defaults));
    defaults.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &defaults, NULL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    execve(path, argv, envp);
fail:
    code = errno;
    while (write(report, &code, sizeof(code)) < 0 && errno == EINTR) {}
    _exit(127);
}

/* clone3 into the cgroup (the child is in it from its first instruction); where clone3 is
   refused (a seccomp filter answers ENOSYS), fork and join it before exec. Signals stay
   blocked across, so that no handler of the caller runs in the child. */
/* Test only: AGENT_TEST_FORK_JOIN=1 takes the fallbacks as if clone3 were refused (read once;
   the value is the same for every thread that reads it first). */
static int clone3_refused_for_test(void) {
    static int forced = -1;
    if (forced < 0) {
        const char *value = getenv("AGENT_TEST_FORK_JOIN");
        forced = value && strcmp(value, "1") == 0;
    }
    return forced;
}

static pid_t clone_into(int cgroup_fd, int *join) {
    int forced = clone3_refused_for_test();
    if (forced) errno = ENOSYS;
    struct agent_clone_args args;
    memset(&args, 0, sizeof(args));
    args.flags = AGENT_CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)cgroup_fd;
    pid_t child = forced ? -1 : (pid_t)syscall(SYS_clone3, &args, sizeof(args));
    if (child >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EPERM)) return child;
    *join = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (*join < 0) return -1;
    return fork();
}

#if defined(__x86_64__)
/* clone3 that runs `start(argument)` in the child on the stack `args` gives it, and exits with
   its result: the raw system call returns in the child on that stack, where no C frame can
   return to (glibc has such a wrapper but exports none). Returns the child's pid, or -errno. */
__attribute__((naked, noinline)) static long clone3_running(struct agent_clone_args *args, size_t size,
                                                           int (*start)(void *), void *argument) {
    __asm__ volatile(
        "mov %rcx, %r8\n\t"      /* the argument: rcx does not survive syscall */
        "mov $435, %eax\n\t"     /* SYS_clone3 */
        "syscall\n\t"
        "test %rax, %rax\n\t"
        "jz 1f\n\t"
        "ret\n"
        "1:\n\t"
        "xor %ebp, %ebp\n\t"     /* the outermost frame of the child */
        "mov %r8, %rdi\n\t"
        "call *%rdx\n\t"
        "mov %eax, %edi\n\t"
        "mov $60, %eax\n\t"      /* SYS_exit */
        "syscall\n\t"
        "hlt\n");
}
#define AGENT_CAN_CLONE_SHARING_MEMORY 1
#endif

/* What a spawn through exec_child needs beyond the program: where the child starts (a cgroup to
   clone into, -1: a plain fork), the cgroups it joins, and its parent-death signal (0: none). */
struct agent_spawn_place {
    int cgroup_fd;
    const int *joins;
    int join_count;
    int death_signal;
};

/* What the child of a spawn runs before exec_child, and with what. */
struct child_start {
    int report, join, new_group, death_signal;
    pid_t parent;
    struct agent_spawn_place place;
    const char *path, *directory;
    char *const *argv, *const *envp;
    const int *lifted;
};

static int start_child(void *opaque) {
    const struct child_start *start = opaque;
    /* Dies with the caller's thread (see agent_spawn_program), and not at all if the caller
       died before this line. */
    if (start->death_signal > 0 && (prctl(PR_SET_PDEATHSIG, start->death_signal) != 0 || getppid() != start->parent)) {
        int code = errno ? errno : ESRCH;
        while (write(start->report, &code, sizeof(code)) < 0 && errno == EINTR) {}
        _exit(127);
    }
    exec_child(start->report, start->join, start->place.joins, start->place.join_count, start->path, start->argv,
               start->envp, start->lifted, start->directory, start->new_group);
    return 127;
}

/* The child as posix_spawn makes it: sharing the caller's memory, the caller's thread held until
   it has exec'd (CLONE_VM | CLONE_VFORK), on a stack of its own, into the cgroup if there is one.
   A fork would first copy the caller's page tables (a supervisor's tens of megabytes: a
   millisecond, on the path to the first worker) and then fault on every page the caller writes
   while or after it. The child touches nothing of the caller's but its own arguments (see
   exec_child); its signal handlers and descriptors are copies. -1 and errno ENOSYS where this
   cannot be done (not x86_64, or clone3 refused): the caller forks instead. */
static pid_t clone_sharing_memory(const struct child_start *start) {
#ifdef AGENT_CAN_CLONE_SHARING_MEMORY
    if (clone3_refused_for_test()) { errno = ENOSYS; return -1; }
    enum { STACK_SIZE = 64 * 1024 };
    void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -1;
    struct agent_clone_args args;
    memset(&args, 0, sizeof(args));
    args.flags = CLONE_VM | CLONE_VFORK | (start->place.cgroup_fd >= 0 ? AGENT_CLONE_INTO_CGROUP : 0);
    args.exit_signal = SIGCHLD;
    args.stack = (uint64_t)(uintptr_t)stack;
    args.stack_size = STACK_SIZE;
    args.cgroup = start->place.cgroup_fd >= 0 ? (uint64_t)start->place.cgroup_fd : 0;
    long child = clone3_running(&args, sizeof(args), start_child, (void *)start);
    /* Held until the child exec'd or exited: its stack is no longer used. */
    munmap(stack, STACK_SIZE);
    if (child < 0) { errno = (int)-child; return -1; }
    return (pid_t)child;
#else
    (void)start;
    errno = ENOSYS;
    return -1;
#endif
}

/* Whether clone_sharing_memory can work here (x86_64; clone3 not refused so far). */
static int clone3_refused = 0;
static int can_clone_sharing_memory(void) {
#ifdef AGENT_CAN_CLONE_SHARING_MEMORY
    return !clone3_refused && !clone3_refused_for_test();
#else
    return 0;
#endif
}

/* Forks (or clones into a cgroup) a child that runs exec_child, and waits for its exec or the
   errno of its failure on a report pipe. */
static int spawn_reported(const char *path, char *const argv[], char *const envp[], const int sources[4],
                          const char *directory, int new_group, struct agent_spawn_place place, pid_t *pid) {
    int lifted[4] = {-1, -1, -1, -1};
    int pipe_fds[2] = {-1, -1};
    int report[2] = {-1, -1};
    int join = -1;
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) rc = lift(sources[i], &lifted[i]);
    /* The report pipe's write end above the fds the child sets up, so no dup2 covers it. */
    if (rc == 0 && pipe2(pipe_fds, O_CLOEXEC) != 0) rc = errno;
    if (rc == 0) rc = lift(pipe_fds[1], &report[1]);
    report[0] = pipe_fds[0];
    if (pipe_fds[1] >= 0) close(pipe_fds[1]);
    if (rc == 0) {
        pid_t parent = getpid();
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        struct child_start start = {report[1], -1, new_group, place.death_signal, parent, place,
                                    path, directory, argv, envp, lifted};
        pid_t child = clone_sharing_memory(&start);
        /* EPERM: an older container's seccomp filter refuses clone3 so. */
        if (child < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL || errno == EPERM)) {
            if (errno == ENOSYS || errno == EPERM) clone3_refused = 1;
            child = place.cgroup_fd >= 0 ? clone_into(place.cgroup_fd, &join) : fork();
            start.join = join;
            if (child == 0) _exit(start_child(&start));
        }
        if (child < 0) rc = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(report[1]);
        report[1] = -1;
        if (child > 0) {
            /* End of file: the exec happened; four bytes: why it did not. */
            int code = 0;
            ssize_t n;
            do { n = read(report[0], &code, sizeof(code)); } while (n < 0 && errno == EINTR);
            if (n == (ssize_t)sizeof(code)) {
                rc = code ? code : EIO;
                int status;
                while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
            } else {
                *pid = child;
            }
        }
    }
    for (int i = 0; i < 4; i++) if (lifted[i] >= 0) close(lifted[i]);
    for (int i = 0; i < 2; i++) if (report[i] >= 0) close(report[i]);
    if (join >= 0) close(join);
    return rc;
}

int agent_spawn_into(const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd, int channel_fd,
                     const char *directory, int new_group, int cgroup_fd, const int *joins, int join_count,
                     pid_t *pid) {
    /* posix_spawn cannot lower a limit before the exec (set after it, a child that forked at
       once kept the whole limit): a child whose limit is lowered is cloned and sets it itself,
       where the clone shares the caller's memory. Elsewhere (a fork would copy the page
       tables of the whole supervisor for each spawn) the limit is set just after the exec. */
    struct rlimit lowered;
    int lowering = children_process_limit(&lowered);
    if (cgroup_fd < 0 && (!lowering || !can_clone_sharing_memory())) {
        int rc = agent_spawn_in(path, argv, envp, stdin_fd, stdout_fd, stderr_fd, channel_fd, directory, new_group, pid);
        if (rc == 0 && lowering) prlimit(*pid, RLIMIT_NPROC, &lowered, NULL);
        return rc;
    }
    int sources[4] = {stdin_fd, stdout_fd, stderr_fd, channel_fd};
    struct agent_spawn_place place = {cgroup_fd, joins, join_count, 0};
    return spawn_reported(path, argv, envp, sources, directory, new_group, place, pid);
}

int agent_spawn_program(const char *path, char *const argv[], char *const envp[],
                        int stdin_fd, int stdout_fd, int stderr_fd, const char *directory,
                        int death_signal, pid_t *pid) {
    int sources[4] = {stdin_fd, stdout_fd, stderr_fd, -1};
    struct agent_spawn_place place = {-1, NULL, 0, death_signal};
    return spawn_reported(path, argv, envp, sources, directory, 0, place, pid);
}

int agent_spawn_program_grouped(const char *path, char *const argv[], char *const envp[],
                                int stdin_fd, int stdout_fd, int stderr_fd, const char *directory,
                                int death_signal, pid_t *pid) {
    int sources[4] = {stdin_fd, stdout_fd, stderr_fd, -1};
    struct agent_spawn_place place = {-1, NULL, 0, death_signal};
    return spawn_reported(path, argv, envp, sources, directory, 1, place, pid);
}

int agent_is_cgroup_v1(const char *path) {
    struct statfs info;
    /* CGROUP_SUPER_MAGIC (linux/magic.h); v2 is CGROUP2_SUPER_MAGIC. */
    return statfs(path, &info) == 0 && info.f_type == 0x27e0eb;
}
