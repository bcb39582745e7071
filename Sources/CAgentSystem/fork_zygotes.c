#define _GNU_SOURCE
#include "fork_zygotes.h"
#include "agent_system.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the second request for a module waits for its zygote's load (the first is forked
   as before while the zygote loads): the supervisor's loop waits with it, so briefly. A module
   slower to load gets its zygote for the requests after. A zygote forks in well under a
   millisecond: one that has not answered a request in half a second is stopped or stuck. */
enum { ZYGOTE_FIRST_WAIT_MS = 5, ZYGOTE_REPLY_MS = 500, ZYGOTES_MAX = 32, ZYGOTE_DEATHS_MAX = 3, RETIRED_MAX = 64 };
/* A full table makes room only from a zygote unused this long: more libraries than slots, each
   asked for in turn, would otherwise start and kill a zygote at every request. */
static const time_t ZYGOTE_IDLE_EVICTION_S = 60;

static struct zygote zygotes[ZYGOTES_MAX];
static size_t zygote_count;

static time_t now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec;
}

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* How long a zygote may take to load its module and warm it up before the server stops it: a
   constructor or a warm-up that waits (on the network, a lock, its input) would otherwise keep
   it, silently and for good. Every worker forked meanwhile loads the module itself. The
   environment's AGENT_ZYGOTE_LOAD_LIMIT_MS (tests) replaces the default. */
static long long load_limit_ms(void) {
    static long long limit = -1;
    if (limit < 0) {
        /* Digits only, as the supervisor reads it for its log line. */
        const char *text = getenv("AGENT_ZYGOTE_LOAD_LIMIT_MS");
        char *end = NULL;
        long long value = (text && text[0] >= '0' && text[0] <= '9') ? strtoll(text, &end, 10) : 0;
        limit = (end && *end == 0 && value > 0) ? value : 10000;
    }
    return limit;
}

/* Zygotes killed and not reaped yet. Only these pids, and a live entry's, are ever waited for:
   a child not reaped keeps its pid, so no pid the server signals can belong to another process. */
static pid_t retired[RETIRED_MAX];
static size_t retired_count;

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
    if (entry->pid > 0) {
        kill(entry->pid, SIGKILL);
        int status;
        if (waitpid(entry->pid, &status, WNOHANG) == 0) {
            if (retired_count == RETIRED_MAX) {
                /* Killed: its exit is a matter of moments. */
                while (waitpid(entry->pid, &status, 0) < 0 && errno == EINTR) {}
            } else {
                retired[retired_count++] = entry->pid;
            }
        }
    }
    entry->control = -1;
    entry->pid = 0;
}

static int has_exited(struct zygote *entry);

void zygotes_reap(void) {
    /* A zygote that refused its library, or died, is reaped now rather than at its library's
       next request (its verdict, if any, stays in its socket). */
    for (size_t i = 0; i < zygote_count; i++) {
        if (zygotes[i].pid > 0) has_exited(&zygotes[i]);
    }
    for (size_t i = 0; i < retired_count;) {
        int status;
        pid_t reaped = waitpid(retired[i], &status, WNOHANG);
        if (reaped == retired[i] || (reaped < 0 && errno == ECHILD)) {
            retired[i] = retired[--retired_count];
        } else {
            i++;
        }
    }
}

static int same_file(const struct zygote *entry, const struct stat *info) {
    /* ctime too: a copy in place that keeps the size and the mtime (cp -p) still changes it. */
    return entry->device == info->st_dev && entry->inode == info->st_ino && entry->size == info->st_size &&
           entry->modified.tv_sec == info->st_mtim.tv_sec && entry->modified.tv_nsec == info->st_mtim.tv_nsec &&
           entry->changed.tv_sec == info->st_ctim.tv_sec && entry->changed.tv_nsec == info->st_ctim.tv_nsec;
}

/* A slot for a new library: a free one, else the one used least recently if it has been idle
   long enough (its zygote retired), else none. */
static struct zygote *free_slot(void) {
    if (zygote_count < ZYGOTES_MAX) return &zygotes[zygote_count++];
    struct zygote *oldest = &zygotes[0];
    for (size_t i = 1; i < ZYGOTES_MAX; i++) {
        if (zygotes[i].used < oldest->used) oldest = &zygotes[i];
    }
    if (now_seconds() - oldest->used < ZYGOTE_IDLE_EVICTION_S) return NULL;
    retire(oldest);
    free(oldest->file);
    oldest->file = NULL;
    return oldest;
}

struct zygote *zygote_entry(const char *file) {
    struct stat info;
    if (stat(file, &info) != 0) return NULL;
    struct zygote *entry = NULL;
    for (size_t i = 0; i < zygote_count; i++) {
        if (zygotes[i].file && strcmp(zygotes[i].file, file) == 0) { entry = &zygotes[i]; break; }
    }
    if (entry && same_file(entry, &info)) {
        entry->used = now_seconds();
        return entry;
    }
    if (entry) {
        retire(entry);
    } else {
        entry = free_slot();
        if (!entry) return NULL;
        entry->file = strdup(file);
        if (!entry->file) {
            entry->state = ZYGOTE_PLAIN;
            return NULL;
        }
    }
    entry->device = info.st_dev;
    entry->inode = info.st_ino;
    entry->size = info.st_size;
    entry->modified = info.st_mtim;
    entry->changed = info.st_ctim;
    entry->pid = 0;
    entry->control = -1;
    entry->state = 0;
    entry->waited = 0;
    entry->deaths = 0;
    entry->refusal = 0;
    entry->used = now_seconds();
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
    entry->started_ms = now_ms();
    return 0;
}

/* A zygote that cannot serve: plain when it said so or failed its load, else (it died while
   serving) started again at the next request, up to a few times. */
static void give_up(struct zygote *entry, int plain) {
    retire(entry);
    if (!plain && ++entry->deaths < ZYGOTE_DEATHS_MAX) {
        entry->state = 0;
    } else {
        if (!plain) entry->refusal = ZYGOTE_KEPT_DYING;
        entry->state = ZYGOTE_PLAIN;
    }
}

/* Whether the entry's zygote has exited (reaped here if so: its pid is then forgotten). A dead
   zygote's socket may stay open in a process it forked, so its end of file does not tell. */
static int has_exited(struct zygote *entry) {
    int status;
    if (entry->pid > 0 && waitpid(entry->pid, &status, WNOHANG) == entry->pid) {
        entry->pid = 0;
        return 1;
    }
    return entry->pid <= 0;
}

/* Reads the loading zygote's verdict if it came within `timeout_ms`. */
static void await_load(struct zygote *entry, int timeout_ms) {
    struct pollfd wait = {.fd = entry->control, .events = POLLIN};
    int ready;
    do { ready = poll(&wait, 1, timeout_ms); } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
        /* No verdict yet: a zygote that died loading says none; one past its limit is stopped. */
        if (has_exited(entry)) {
            entry->refusal = ZYGOTE_DIED;
            give_up(entry, 1);
        } else if (now_ms() - entry->started_ms >= load_limit_ms()) {
            entry->refusal = ZYGOTE_LOAD_TIMEOUT;
            give_up(entry, 1);
        }
        return;
    }
    int32_t verdict = -1;
    ssize_t n;
    do { n = recv(entry->control, &verdict, sizeof(verdict), 0); } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof(verdict) && verdict == 0) {
        entry->state = ZYGOTE_READY;
    } else {
        /* It could not load the module, or found it unsafe to fork from, or crashed loading it. */
        entry->refusal = n == (ssize_t)sizeof(verdict) && verdict > 0 ? verdict : ZYGOTE_DIED;
        give_up(entry, 1);
    }
}

long long zygotes_next_check_ms(void) {
    /* A zygote killed is gone within moments: reaped soon after. */
    long long next = retired_count > 0 ? 50 : -1;
    for (size_t i = 0; i < zygote_count; i++) {
        const struct zygote *entry = &zygotes[i];
        if (entry->state != ZYGOTE_LOADING || entry->pid <= 0) continue;
        long long left = entry->started_ms + load_limit_ms() - now_ms();
        if (left < 0) left = 0;
        if (next < 0 || left < next) next = left;
    }
    if (next > INT32_MAX) next = INT32_MAX;
    return next;
}

void zygotes_check(void) {
    for (size_t i = 0; i < zygote_count; i++) {
        /* Its verdict if it came (it is then ready for the next request at once), else its
           death, else its limit. */
        if (zygotes[i].state == ZYGOTE_LOADING && zygotes[i].pid > 0) await_load(&zygotes[i], 0);
    }
    zygotes_reap();
}

int zygote_take_refusal(struct zygote *entry) {
    if (entry->state != ZYGOTE_PLAIN) return 0;
    int refusal = entry->refusal;
    entry->refusal = 0;
    return refusal;
}

int zygote_forward(struct zygote *entry, const char *payload, size_t length, const int fds[3], int32_t *result) {
    if (entry->state == ZYGOTE_LOADING) {
        await_load(entry, entry->waited ? 0 : ZYGOTE_FIRST_WAIT_MS);
        entry->waited = 1;
    }
    if (entry->state != ZYGOTE_READY) return 0;
    if (has_exited(entry) || fork_request_send(entry->control, payload, length, fds) != 0) {
        give_up(entry, 0);
        return 0;
    }
    pid_t pid = 0;
    int problem = fork_request_await(entry->control, entry->pid, ZYGOTE_REPLY_MS, &pid, NULL);
    if (problem == 0) {
        *result = pid;
        return 1;
    }
    /* A library it loaded changed on disk: it forked nothing and exits; the next request starts
       a zygote of the library as it is now, this one is forked here. */
    if (problem == ESTALE) {
        retire(entry);
        entry->state = 0;
        return 0;
    }
    /* The zygote's own fork failed (it is fine): the supervisor hears why. */
    if (problem == EAGAIN || problem == ENOMEM) {
        *result = -problem;
        return 1;
    }
    /* It may have forked the worker before failing: the supervisor treats this as a failed
       request (it sweeps what was started and starts a new server), told by EREMOTEIO that
       the library's zygote failed, so that it asks for none for that library again. */
    give_up(entry, 0);
    *result = -EREMOTEIO;
    return -1;
}

/* Whether this process (a zygote's one thread) has a child: a constructor's helper would hold
   the zygote's socket and outlive it unseen. */
static int has_children(void) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *file = fopen(path, "re");
    if (!file) return 0;
    int c = fgetc(file);
    fclose(file);
    return c != EOF;
}

/* Whether a descriptor above 3 is open (each worker closes them). */
static int keeps_descriptors(void) {
    DIR *fds = opendir("/proc/self/fd");
    if (!fds) return 1;
    int own = dirfd(fds), kept = 0;
    for (struct dirent *entry; (entry = readdir(fds));) {
        if (entry->d_name[0] == '.') continue;
        int fd = atoi(entry->d_name);
        if (fd > 3 && fd != own) kept = 1;
    }
    closedir(fds);
    return kept;
}

/* Whether a mapping is marked not to be copied at fork, or to be wiped (MADV_DONTFORK,
   MADV_WIPEONFORK: smaps' "dc" and "wf"): a worker forked from the zygote would lack it. */
static int has_fork_flags(void) {
    FILE *file = fopen("/proc/self/smaps", "re");
    if (!file) return 1;
    char *line = NULL;
    size_t capacity = 0;
    int found = 0;
    while (!found && getline(&line, &capacity, file) > 0) {
        if (strncmp(line, "VmFlags:", 8) != 0) continue;
        for (char *flag = strtok(line + 8, " \n"); flag; flag = strtok(NULL, " \n")) {
            if (strcmp(flag, "dc") == 0 || strcmp(flag, "wf") == 0) found = 1;
        }
    }
    free(line);
    fclose(file);
    return found;
}

/* The identity of each object the module's load brought (the module and the libraries the
   server did not have), as loaded: a zygote forks nothing once one of them changed on disk.
   The server's own objects are not stat'ed at every request (~30, 90 µs on each request's
   path, measured at stop 68): a server forks its own workers from them as they are too. */
enum { OBJECTS_MAX = 128 };
static struct loaded_object { char *path; struct stat info; } objects[OBJECTS_MAX];
static size_t object_count;
/* How many objects the zygote had before its module's load (dl_iterate_phdr lists them in load
   order, a dlopen's after them), and how many of the list record_object has passed. */
static size_t inherited_objects, objects_seen;

static int count_object(struct dl_phdr_info *info, size_t size, void *count) {
    (void)info; (void)size;
    (*(size_t *)count)++;
    return 0;
}

void zygote_note_inherited_objects(void) {
    inherited_objects = 0;
    dl_iterate_phdr(count_object, &inherited_objects);
}

static int record_object(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size; (void)unused;
    if (objects_seen++ < inherited_objects) return 0;
    if (!info->dlpi_name || info->dlpi_name[0] != '/' || object_count == OBJECTS_MAX) return 0;
    struct loaded_object *object = &objects[object_count];
    if (stat(info->dlpi_name, &object->info) != 0) return 0;
    object->path = strdup(info->dlpi_name);
    if (object->path) object_count++;
    return 0;
}

void zygote_record_objects(void) {
    object_count = 0;
    objects_seen = 0;
    dl_iterate_phdr(record_object, NULL);
}

int zygote_objects_changed(void) {
    for (size_t i = 0; i < object_count; i++) {
        struct stat now;
        const struct stat *then = &objects[i].info;
        if (stat(objects[i].path, &now) != 0 || now.st_dev != then->st_dev || now.st_ino != then->st_ino ||
            now.st_size != then->st_size || now.st_mtim.tv_sec != then->st_mtim.tv_sec ||
            now.st_mtim.tv_nsec != then->st_mtim.tv_nsec || now.st_ctim.tv_sec != then->st_ctim.tv_sec ||
            now.st_ctim.tv_nsec != then->st_ctim.tv_nsec) return 1;
    }
    return 0;
}

int agent_zygote_forkable(const char *file, pid_t session, pid_t group) {
    /* One thread: the other threads would not exist in the forked workers, whatever they hold. */
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return ZYGOTE_UNCHECKED;
    int threads = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] != '.') threads++;
    }
    closedir(tasks);
    if (threads != 1) return ZYGOTE_THREADS;
    if (keeps_descriptors()) return ZYGOTE_DESCRIPTORS;
    if (has_children()) return ZYGOTE_CHILDREN;
    if (has_fork_flags()) return ZYGOTE_FORK_FLAGS;
    /* The workers' session and process group are the supervisor's to give, their orphans the
       supervisor's to reap. */
    int subreaper = 0;
    if (getsid(0) != session || getpgid(0) != group || prctl(PR_GET_CHILD_SUBREAPER, &subreaper) != 0 || subreaper)
        return ZYGOTE_PROCESS_STATE;
    void *handle = dlopen(file, RTLD_NOLOAD | RTLD_LAZY);
    if (!handle) return ZYGOTE_UNCHECKED;
    /* The reference RTLD_NOLOAD took is kept: a Swift library is never closed. */
    return dlsym(handle, "agent_module_no_zygote") ? ZYGOTE_DECLINED : 0;
}

int agent_zygote_loaded(int control, int verdict) {
    fflush(NULL);
    int32_t value = verdict;
    ssize_t n;
    do { n = send(control, &value, sizeof(value), MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(value) ? 0 : errno;
}
