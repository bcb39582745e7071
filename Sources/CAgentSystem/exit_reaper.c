/* A worker's exit reaper: a process that shares the worker's address space (CLONE_VM, its own
   thread group) and waits. When the worker dies, the kernel frees the address space only when
   its last user leaves it; with the reaper still holding it, the worker's own exit skips that
   teardown (a millisecond for a Swift process, proportional to the pages it mapped), closes its
   descriptors and is reported at once. The reaper then waits until the supervisor kills it —
   once no restart is starting — and frees the address space off the restart's path: left to
   the scheduler, the teardown ran on the core the supervisor had been preempted on, and the
   supervisor waited for it (a SCHED_IDLE policy did not prevent that).

   The reaper runs in the worker's memory with the calling thread's thread pointer, so it must
   not touch thread-local storage: no errno, no libc call that may set it — raw system calls
   only, on a stack of its own. It closes the descriptors the clone copied (all but a pidfd of
   the worker), so that a dead worker's sockets, pipes, locks and ports are released with it.
   A worker that calls execve keeps its reaper, which holds the old memory until the new
   program ends. */
#define _GNU_SOURCE
#include "agent_system.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <linux/kcmp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)

static long raw_syscall4(long number, long a, long b, long c, long d) {
    long result;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
#else
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    result = x0;
#endif
    return result;
}

/* What the reaper touches, in one page (each page it touches is a private copy in a forked
   worker): its stack — it makes a handful of system calls and nothing else — the pidfd of the
   worker it watches (opened by the worker: the reaper cannot watch a pid that was reused), and
   whether a reaper was started. */
static struct {
    char stack[2048];
    int watch;
    int started;
} reaper __attribute__((aligned(4096)));

static void reaper_exit(void) {
    for (;;) raw_syscall4(SYS_exit, 0, 0, 0, 0);
}

static int reaper_main(void *unused) {
    (void)unused;
    /* The clone copied the worker's descriptors: holding them would keep its sockets, pipes,
       locks and ports open after its death. Only the pidfd stays; "/" for its folder. */
    int watch = reaper.watch;
    if (watch > 0) raw_syscall4(436 /* close_range */, 0, watch - 1, 0, 0);
    raw_syscall4(436 /* close_range */, watch + 1, ~0U, 0, 0);
    static const char root[] = "/";
    raw_syscall4(SYS_chdir, (long)root, 0, 0, 0);
    struct pollfd dead = {.fd = watch, .events = POLLIN};
    /* Every signal is blocked (inherited): only SIGKILL ends a wait early. */
    while (raw_syscall4(SYS_ppoll, (long)&dead, 1, 0, 0) != 1) {}
    /* The worker is dead: the supervisor kills the reaper once no restart is starting; one
       that does not (embedded in a program that is no subreaper) leaves it a second. */
    static const struct timespec bound = {.tv_sec = 1, .tv_nsec = 0};
    raw_syscall4(SYS_ppoll, 0, 0, (long)&bound, 0);
    reaper_exit();
    return 0;
}

pid_t agent_start_exit_reaper(void) {
    if (reaper.started) return -EALREADY;
    int watch = (int)syscall(434 /* pidfd_open */, getpid(), 0);
    if (watch < 0) return -errno;
    sigset_t all, previous;
    sigfillset(&all);
    int failed = pthread_sigmask(SIG_SETMASK, &all, &previous);
    if (failed != 0) {
        close(watch);
        return -failed;
    }
    /* The reaper is whole when clone returns, before it first runs: its name (copied from this
       thread's, which is renamed for the moment), then its group, set from here. */
    char name[16] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    prctl(PR_SET_NAME, "agent-exit", 0, 0, 0);
    reaper.watch = watch;
    /* No SIGCHLD (exit signal 0): the worker's own waits never see it; once the worker is dead
       the kernel makes it the supervisor's child (a subreaper), which ends it. */
    pid_t pid = clone(reaper_main, reaper.stack + sizeof(reaper.stack), CLONE_VM | CLONE_UNTRACED, NULL);
    int error = pid < 0 ? errno : 0;
    prctl(PR_SET_NAME, name, 0, 0, 0);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(watch);
    if (pid < 0) return -error;
    reaper.started = 1;
    /* Its own process group: the supervisor's kill of the dead worker's group must not free
       the memory while the replacement starts. */
    setpgid(pid, pid);
    return pid;
}

#else

pid_t agent_start_exit_reaper(void) { return -ENOSYS; }

#endif

int agent_share_address_space(pid_t a, pid_t b) {
    long same = syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0);
    return same < 0 ? -1 : same == 0;
}
