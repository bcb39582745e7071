#define _GNU_SOURCE
#include "fork_server_state.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* How many threads this process has (-1 if /proc cannot tell). */
static int thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

void server_state_take(struct server_state *state) {
    memset(state, 0, sizeof(*state));
    state->threads = thread_count();
    state->umask = umask(0);
    umask(state->umask);
    sigprocmask(SIG_SETMASK, NULL, &state->mask);
    for (int signal = 1; signal < NSIG; signal++) {
        struct sigaction action;
        if (sigaction(signal, NULL, &action) != 0) continue;
        state->handlers[signal] = (action.sa_flags & SA_SIGINFO) ? (void *)action.sa_sigaction : (void *)action.sa_handler;
        state->flags[signal] = action.sa_flags;
    }
    for (int fd = 0; fd < 4; fd++) {
        struct stat info;
        if (fstat(fd, &info) == 0) {
            state->devices[fd] = info.st_dev;
            state->inodes[fd] = info.st_ino;
        }
    }
    struct stat folder;
    if (stat(".", &folder) == 0) {
        state->cwd_device = folder.st_dev;
        state->cwd_inode = folder.st_ino;
    }
    state->environment = environ;
    unsigned long long sum = 1469598103934665603ULL;
    for (char **variable = environ; variable && *variable; variable++) {
        state->variables++;
        for (const unsigned char *c = (const unsigned char *)*variable; *c; c++) sum = (sum ^ *c) * 1099511628211ULL;
        sum = (sum ^ 0xff) * 1099511628211ULL;
    }
    state->environment_sum = sum;
}

int server_state_changed(const struct server_state *before, const struct server_state *after) {
    if (after->threads != 1 || before->threads != 1) return SERVER_STATE_THREADS;
    if (after->umask != before->umask) return SERVER_STATE_UMASK;
    for (int signal = 1; signal < NSIG; signal++) {
        if (sigismember(&before->mask, signal) != sigismember(&after->mask, signal)) return SERVER_STATE_SIGNAL_MASK;
        if (before->handlers[signal] != after->handlers[signal] || before->flags[signal] != after->flags[signal]) {
            return SERVER_STATE_SIGNAL_HANDLER;
        }
    }
    for (int fd = 0; fd < 4; fd++) {
        if (before->devices[fd] != after->devices[fd] || before->inodes[fd] != after->inodes[fd]) {
            return SERVER_STATE_DESCRIPTORS;
        }
    }
    if (before->cwd_device != after->cwd_device || before->cwd_inode != after->cwd_inode) return SERVER_STATE_FOLDER;
    if (before->environment != after->environment || before->variables != after->variables || before->environment_sum != after->environment_sum) {
        return SERVER_STATE_ENVIRONMENT;
    }
    return SERVER_STATE_SAME;
}
