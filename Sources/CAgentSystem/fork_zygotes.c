#define _GNU_SOURCE
#include "fork_zygotes.h"

#include "agent_system.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the second request for a module waits for its zygote's load (the first is forked
   as before while the zygote loads): the supervisor's loop waits with it, so briefly. A module
   slower to load gets its zygote for the requests after. */
enum { ZYGOTE_FIRST_WAIT_MS = 5, ZYGOTE_REPLY_MS = 4000, ZYGOTES_MAX = 32, ZYGOTE_DEATHS_MAX = 3 };

static struct zygote zygotes[ZYGOTES_MAX];
static size_t zygote_count;

const char *fork_request_value(const char *payload, size_t length, const char *flag) {
    const char *end = payload + length;
    for (const char *p = payload; p < end;) {
        size_t n = strnlen(p, (size_t)(end - p));
        const char *next = p + n + 1;
        if (strcmp(p, flag) == 0 && next < end) return next;
        p = next;
    }
    return NULL;
}

/* Ends the entry's zygote (if any): its socket closed, killed, reaped later. */
static void retire(struct zygote *entry) {
    if (entry->control >= 0) close(entry->control);
    if (entry->pid > 0) kill(entry->pid, SIGKILL);
    entry->control = -1;
    entry->pid = 0;
}

static int same_file(const struct zygote *entry, const struct stat *info) {
    return entry->device == info->st_dev && entry->inode == info->st_ino && entry->size == info->st_size &&
           entry->modified.tv_sec == info->st_mtim.tv_sec && entry->modified.tv_nsec == info->st_mtim.tv_nsec;
}

struct zygote *zygote_entry(const char *file) {
    struct stat info;
    if (stat(file, &info) != 0) return NULL;
    struct zygote *entry = NULL;
    for (size_t i = 0; i < zygote_count; i++) {
        if (strcmp(zygotes[i].file, file) == 0) { entry = &zygotes[i]; break; }
    }
    if (entry && same_file(entry, &info)) return entry;
    if (entry) {
        retire(entry);
    } else {
        if (zygote_count == ZYGOTES_MAX) return NULL;
        char *copy = strdup(file);
        if (!copy) return NULL;
        entry = &zygotes[zygote_count++];
        entry->file = copy;
    }
    entry->device = info.st_dev;
    entry->inode = info.st_ino;
    entry->size = info.st_size;
    entry->modified = info.st_mtim;
    entry->pid = 0;
    entry->control = -1;
    entry->state = 0;
    entry->waited = 0;
    entry->deaths = 0;
    return entry;
}

int zygote_start(struct zygote *entry, int *child_control) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        entry->state = ZYGOTE_PLAIN;
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pair[0]);
        *child_control = pair[1];
        return 1;
    }
    close(pair[1]);
    if (pid < 0) {
        close(pair[0]);
        entry->state = ZYGOTE_PLAIN;
        return -1;
    }
    entry->pid = pid;
    entry->control = pair[0];
    entry->state = ZYGOTE_LOADING;
    entry->waited = 0;
    return 0;
}

/* A zygote that cannot serve: plain when it said so or failed its load, else (it died while
   serving) started again at the next request, up to a few times. */
static void give_up(struct zygote *entry, int plain) {
    retire(entry);
    if (!plain && ++entry->deaths < ZYGOTE_DEATHS_MAX) {
        entry->state = 0;
    } else {
        entry->state = ZYGOTE_PLAIN;
    }
}

/* Reads the loading zygote's verdict if it came within `timeout_ms`. */
static void await_load(struct zygote *entry, int timeout_ms) {
    struct pollfd wait = {.fd = entry->control, .events = POLLIN};
    int ready;
    do { ready = poll(&wait, 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    if (ready == 0) return;
    int32_t verdict = -1;
    ssize_t n;
    do { n = recv(entry->control, &verdict, sizeof(verdict), 0); } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(verdict) && verdict == 0) {
        entry->state = ZYGOTE_READY;
    } else {
        /* It could not load the module, or found it unsafe to fork from, or crashed loading it. */
        give_up(entry, 1);
    }
}

int zygote_forward(struct zygote *entry, const char *payload, size_t length, const int fds[3], int32_t *result) {
    if (entry->state == ZYGOTE_LOADING) {
        await_load(entry, entry->waited ? 0 : ZYGOTE_FIRST_WAIT_MS);
        entry->waited = 1;
    }
    if (entry->state != ZYGOTE_READY) return 0;
    if (fork_request_send(entry->control, payload, length, fds) != 0) {
        give_up(entry, 0);
        return 0;
    }
    pid_t pid = 0;
    int problem = fork_request_await(entry->control, ZYGOTE_REPLY_MS, &pid);
    if (problem == 0) {
        *result = pid;
        return 1;
    }
    /* The zygote's own fork failed (it is fine): the supervisor hears why. */
    if (problem == EAGAIN || problem == ENOMEM) {
        *result = -problem;
        return 1;
    }
    give_up(entry, 0);
    *result = -problem;
    return -1;
}

void zygotes_reap(void) {
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {}
}

int agent_zygote_forkable(void) {
    /* One thread: the other threads would not exist in the forked workers, whatever they hold. */
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return ZYGOTE_UNCHECKED;
    int threads = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] != '.') threads++;
    }
    closedir(tasks);
    if (threads != 1) return ZYGOTE_THREADS;
    /* Nothing open above the control socket: each worker closes every fd from 4 up. */
    DIR *fds = opendir("/proc/self/fd");
    if (!fds) return ZYGOTE_UNCHECKED;
    int own = dirfd(fds), kept = 0;
    for (struct dirent *entry; (entry = readdir(fds));) {
        if (entry->d_name[0] == '.') continue;
        int fd = atoi(entry->d_name);
        if (fd > 3 && fd != own) kept = 1;
    }
    closedir(fds);
    return kept ? ZYGOTE_DESCRIPTORS : 0;
}

int agent_zygote_loaded(int control, int verdict) {
    int32_t value = verdict;
    ssize_t n;
    do { n = send(control, &value, sizeof(value), MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(value) ? 0 : errno;
}
