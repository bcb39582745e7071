#define _GNU_SOURCE
#include "agent_system.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Children that a module starts must begin with default signal dispositions and an empty
   signal mask, as if started from a shell. A worker's threads do not have that state to give:
   libdispatch blocks nearly every signal in its worker threads (where Swift concurrency runs a
   module's async code), and the worker ignores SIGPIPE. fork() copies the calling thread's
   mask and every disposition, posix_spawn() the mask and the ignored signals, and exec keeps
   both. So the worker sets them right where children are made: an atfork child handler for
   fork(), and posix_spawn()/posix_spawnp() defined here, which the worker executable exports
   in place of the C library's (Foundation's Process, and any module, bind to them), adding a
   default mask and dispositions unless the caller chose its own. Until the worker turns it on
   (agent_clean_child_signals) every call passes straight through: the same code is linked into
   agent-control and the tests. posix_spawn does not run atfork handlers; the C library's own
   system() and popen() call its internal spawn and are not covered. */

static atomic_int clean_children = 0;

/* glibc reserves signals 32 and 33 (SIGCANCEL, SIGSETXID) and refuses them in sigaction and
   sigaddset; its posix_spawn sets them to SIG_IGN in the child unless they are in the set of
   defaults, so a worker (spawned by a threaded supervisor) has them ignored. They are reset
   here with the kernel's calls. The kernel's sigaction starts with the handler on every
   architecture; zeros stand for the rest. */
#define RESERVED_SIGNALS_MASK (3UL << 31)

static void reset_reserved_signals_in_child(void) {
    for (int signo = 32; signo <= 33; signo++) {
        unsigned long current[4] = {0, 0, 0, 0};
        if (syscall(SYS_rt_sigaction, signo, NULL, current, 8) != 0) continue;
        if ((void (*)(int))current[0] != SIG_IGN) continue;
        unsigned long defaults[4] = {(unsigned long)SIG_DFL, 0, 0, 0};
        syscall(SYS_rt_sigaction, signo, defaults, NULL, 8);
    }
}

static void reset_signals_in_child(void) {
    if (!atomic_load_explicit(&clean_children, memory_order_relaxed)) return;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    for (int signo = 1; signo < NSIG; signo++) {
        if (signo == SIGKILL || signo == SIGSTOP) continue;
        struct sigaction current;
        if (sigaction(signo, NULL, &current) != 0) continue;
        if (current.sa_handler != SIG_DFL) sigaction(signo, &action, NULL);
    }
    reset_reserved_signals_in_child();
    sigset_t empty;
    sigemptyset(&empty);
    pthread_sigmask(SIG_SETMASK, &empty, NULL);
}

int agent_clean_child_signals(void) {
    static atomic_int registered = 0;
    int expected = 0;
    if (atomic_compare_exchange_strong(&registered, &expected, 1)) {
        int rc = pthread_atfork(NULL, NULL, reset_signals_in_child);
        if (rc != 0) {
            atomic_store(&registered, 0);
            return rc;
        }
    }
    atomic_store(&clean_children, 1);
    return 0;
}

typedef int (*spawn_function)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                              const posix_spawnattr_t *, char *const[], char *const[]);

/* The caller's attributes with a default mask and dispositions added, unless it set its own. */
static int clean_attributes(const posix_spawnattr_t *given, posix_spawnattr_t *attr) {
    int rc = posix_spawnattr_init(attr);
    if (rc != 0) return rc;
    /* glibc's attributes are plain data (flags, group, masks, scheduling): a copy is a copy. */
    if (given != NULL) memcpy(attr, given, sizeof(*attr));
    short flags = 0;
    posix_spawnattr_getflags(attr, &flags);
    if (!(flags & POSIX_SPAWN_SETSIGMASK)) {
        sigset_t empty;
        sigemptyset(&empty);
        posix_spawnattr_setsigmask(attr, &empty);
        flags |= POSIX_SPAWN_SETSIGMASK;
    }
    if (!(flags & POSIX_SPAWN_SETSIGDEF)) {
        sigset_t all;
        sigfillset(&all);
        /* Signals 1-64 are the first word of glibc's sigset_t, bit n-1 for signal n. */
        ((unsigned long *)&all)[0] |= RESERVED_SIGNALS_MASK;
        posix_spawnattr_setsigdefault(attr, &all);
        flags |= POSIX_SPAWN_SETSIGDEF;
    }
    return posix_spawnattr_setflags(attr, flags);
}

static int spawn_through(const char *name, spawn_function *cache, pid_t *pid, const char *path,
                         const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *given,
                         char *const argv[], char *const envp[]) {
    spawn_function real = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (real == NULL) {
        real = (spawn_function)dlsym(RTLD_NEXT, name);
        if (real == NULL) return ENOSYS;
        __atomic_store_n(cache, real, __ATOMIC_RELEASE);
    }
    if (!atomic_load_explicit(&clean_children, memory_order_relaxed)) {
        return real(pid, path, actions, given, argv, envp);
    }
    posix_spawnattr_t attr;
    int rc = clean_attributes(given, &attr);
    if (rc != 0) return rc;
    rc = real(pid, path, actions, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    static spawn_function real;
    return spawn_through("posix_spawn", &real, pid, path, actions, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    static spawn_function real;
    return spawn_through("posix_spawnp", &real, pid, file, actions, attr, argv, envp);
}
