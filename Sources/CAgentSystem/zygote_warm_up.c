#define _GNU_SOURCE
#include "agent_system.h"

#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* What a worker forked from a zygote inherits of the process beyond its memory, and a worker
   that loads the module itself would not get from the module's warm-up, which runs in the
   zygote alone: the warm-up must leave it as it found it. (A constructor's changes are another
   matter: every worker that loads the module runs the constructor too.) */
struct process_state {
    char cwd[PATH_MAX];
    mode_t mask;
    struct { uintptr_t handler; int flags; } actions[NSIG];
    struct rlimit limits[RLIM_NLIMITS];
    int priority;
    uint64_t environment;
    /* fds 0-2 and the zygote's socket to its server, fd 3: device and inode, 0 when closed. */
    struct { dev_t device; ino_t inode; } fds[4];
};

static uint64_t environment_hash(void) {
    uint64_t hash = 1469598103934665603ULL;
    for (char **entry = environ; entry && *entry; entry++) {
        for (const unsigned char *c = (const unsigned char *)*entry; *c; c++) hash = (hash ^ *c) * 1099511628211ULL;
        hash = (hash ^ 0xff) * 1099511628211ULL;
    }
    return hash;
}

/* The umask read from /proc (Linux 4.7+), not by setting it and back: a thread the module
   started could spawn a child in between. */
static mode_t current_umask(void) {
    FILE *status = fopen("/proc/self/status", "re");
    if (status) {
        char line[256];
        unsigned mask;
        while (fgets(line, sizeof(line), status)) {
            if (sscanf(line, "Umask: %o", &mask) == 1) { fclose(status); return (mode_t)mask; }
        }
        fclose(status);
    }
    mode_t mask = umask(022);
    umask(mask);
    return mask;
}

static void read_state(struct process_state *state) {
    memset(state, 0, sizeof(*state));
    if (!getcwd(state->cwd, sizeof(state->cwd))) state->cwd[0] = 0;
    state->mask = current_umask();
    for (int signal = 1; signal < NSIG; signal++) {
        struct sigaction action;
        if (sigaction(signal, NULL, &action) != 0) continue;
        state->actions[signal].handler = (uintptr_t)action.sa_handler;
        state->actions[signal].flags = action.sa_flags;
    }
    for (int resource = 0; resource < RLIM_NLIMITS; resource++) getrlimit(resource, &state->limits[resource]);
    state->priority = getpriority(PRIO_PROCESS, 0);
    state->environment = environment_hash();
    for (int fd = 0; fd < 4; fd++) {
        struct stat info;
        if (fstat(fd, &info) == 0) {
            state->fds[fd].device = info.st_dev;
            state->fds[fd].inode = info.st_ino;
        }
    }
}

static int same_state(const struct process_state *a, const struct process_state *b) {
    if (strcmp(a->cwd, b->cwd) != 0 || a->mask != b->mask || a->priority != b->priority || a->environment != b->environment) return 0;
    if (memcmp(a->actions, b->actions, sizeof(a->actions)) != 0) return 0;
    for (int resource = 0; resource < RLIM_NLIMITS; resource++) {
        if (a->limits[resource].rlim_cur != b->limits[resource].rlim_cur || a->limits[resource].rlim_max != b->limits[resource].rlim_max) return 0;
    }
    for (int fd = 0; fd < 4; fd++) {
        if (a->fds[fd].device != b->fds[fd].device || a->fds[fd].inode != b->fds[fd].inode) return 0;
    }
    return 1;
}

int agent_zygote_warm_up(const char *file) {
    void *handle = dlopen(file, RTLD_NOLOAD | RTLD_LAZY);
    if (!handle) return ZYGOTE_UNCHECKED;
    /* The reference RTLD_NOLOAD took is kept: a Swift library is never closed. */
    void (*warm_up)(void) = (void (*)(void))dlsym(handle, "agent_module_warm_up");
    if (!warm_up) return 0;
    static struct process_state before, after;
    read_state(&before);
    warm_up();
    /* What it wrote through stdio goes now, not again from each worker's copy of the buffer. */
    fflush(NULL);
    read_state(&after);
    return same_state(&before, &after) ? 0 : ZYGOTE_WARM_UP_STATE;
}
