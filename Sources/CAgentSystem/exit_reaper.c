/* A worker's exit reaper: a process that shares the worker's address space (CLONE_VM, its own
   thread group) and waits. When the worker dies, the kernel frees the address space only when
   its last user leaves it; with the reaper still holding it, the worker's own exit skips that
   teardown (a millisecond for a Swift process, proportional to the pages it mapped), closes its
   descriptors and is reported at once. The reaper then waits until the supervisor kills it —
   once the replacement is ready — and frees the address space off the restart's path: left to
   the scheduler, the teardown ran on the core the supervisor had been preempted on, and the
   supervisor waited for it (a SCHED_IDLE policy did not prevent that).

   The reaper runs in the worker's memory with the calling thread's thread pointer, so it must
   not touch thread-local storage: no errno, no libc call that may set it — raw system calls
   only, on a stack of its own. */
#define _GNU_SOURCE
#include "agent_system.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <linux/futex.h>
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

/* The reaper's stack: it makes a handful of system calls and nothing else. */
static char reaper_stack[8192] __attribute__((aligned(64)));
/* The worker's pid, as the reaper's parent must be. */
static pid_t reaper_parent;
/* Set by the reaper once it has named itself and left the worker's group: until then a sweep
   of the supervisor's could not tell it from an orphan. */
static int32_t reaper_settled;

static void reaper_exit(void) {
    for (;;) raw_syscall4(SYS_exit, 0, 0, 0, 0);
}

static int reaper_main(void *unused) {
    (void)unused;
    /* Its own process group: the supervisor's kill of the dead worker's group must not free
       the memory while the replacement starts. */
    raw_syscall4(SYS_setpgid, 0, 0, 0, 0);
    static const struct sched_param idle = {.sched_priority = 0};
    raw_syscall4(SYS_sched_setscheduler, 0, SCHED_IDLE, (long)&idle, 0);
    static const char name[16] = "agent-exit";
    raw_syscall4(SYS_prctl, PR_SET_NAME, (long)name, 0, 0);
    __atomic_store_n(&reaper_settled, 1, __ATOMIC_RELEASE);
    raw_syscall4(SYS_futex, (long)&reaper_settled, FUTEX_WAKE_PRIVATE, 1, 0);
    /* A pidfd of the worker turns readable when it has died (at once if it already has). */
    long worker = raw_syscall4(434 /* pidfd_open */, reaper_parent, 0, 0, 0);
    if (worker < 0) reaper_exit();
    struct pollfd watch = {.fd = (int)worker, .events = POLLIN};
    /* Every signal is blocked (inherited): only SIGKILL ends a wait early. */
    while (raw_syscall4(SYS_ppoll, (long)&watch, 1, 0, 0) != 1) {}
    /* The worker is dead: the supervisor kills the reaper once the replacement is ready; a
       supervisor that does not (embedded in a program that does not sweep its orphans) gets a
       second. */
    static const struct timespec bound = {.tv_sec = 1, .tv_nsec = 0};
    raw_syscall4(SYS_ppoll, 0, 0, (long)&bound, 0);
    reaper_exit();
    return 0;
}

pid_t agent_start_exit_reaper(void) {
    if (reaper_parent != 0) return -EALREADY;
    sigset_t all, previous;
    sigfillset(&all);
    int failed = pthread_sigmask(SIG_SETMASK, &all, &previous);
    if (failed != 0) return -failed;
    reaper_parent = getpid();
    /* No SIGCHLD (exit signal 0): the worker's own waits never see it; once the worker is dead
       the kernel makes it the supervisor's child like any orphan (reaped as one). */
    pid_t pid = clone(reaper_main, reaper_stack + sizeof(reaper_stack), CLONE_VM | CLONE_UNTRACED, NULL);
    int error = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (pid < 0) {
        reaper_parent = 0;
        return -error;
    }
    /* Some µs: the worker says ready only once its reaper is what it says it is. */
    const struct timespec patience = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
    for (int tries = 0; tries < 20 && !__atomic_load_n(&reaper_settled, __ATOMIC_ACQUIRE); tries++) {
        syscall(SYS_futex, &reaper_settled, FUTEX_WAIT_PRIVATE, 0, &patience, NULL, 0);
    }
    return pid;
}

#else

pid_t agent_start_exit_reaper(void) { return -ENOSYS; }

#endif

int agent_share_address_space(pid_t a, pid_t b) {
    long same = syscall(SYS_kcmp, a, b, 0 /* KCMP_VM */, 0, 0);
    return same < 0 ? -1 : same == 0;
}
