#define _GNU_SOURCE
#include "agent_system.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* A process's code pages are file pages it maps itself, with the kernel mapping up to 16 around
   each one touched: a forked worker inherits no page table of its fork server's code, so every
   process maps what its start touched, and a page mapped in 21 processes is 1/21 of its size in
   each one's PSS — ~0.7 MB of each idle worker's 1.3, for code only the start ran. Unmapping
   the never-written file mappings once the start is over (MADV_DONTNEED) leaves the pages in the
   page cache; what runs again is mapped again at its next touch (a minor fault). Safe for a
   private mapping with no copied-on-write page only: its content is the file's. */

/* One mapping of /proc/self/smaps as it is read. */
struct file_mapping {
    uintptr_t start, end;
    int eligible;
    long copied_kb;
};

/* Releases `m` when it qualifies; adds its size to *released, or sets *problem. */
static void release_mapping(const struct file_mapping *m, long *released, int *problem) {
    if (!m->eligible || m->copied_kb != 0) return;
    if (madvise((void *)m->start, m->end - m->start, MADV_DONTNEED) == 0) {
        *released += (long)(m->end - m->start);
    } else if (errno != EINVAL && *problem == 0) {
        /* EINVAL: a locked mapping, which keeps its pages by design. */
        *problem = errno;
    }
}

/* A header line: "start-end perms offset dev inode path". Fills `m` from it; 0 for a field line. */
static int read_header(const char *line, struct file_mapping *m) {
    unsigned long start, end;
    char perms[5];
    int path_at = 0;
    if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %*u %n", &start, &end, perms, &path_at) != 3 || path_at == 0) return 0;
    const char *path = line + path_at;
    m->start = start;
    m->end = end;
    m->copied_kb = 0;
    /* A private, read-only mapping of a file (not [stack], not a memfd's shared ring). */
    m->eligible = perms[1] != 'w' && perms[3] == 'p' && path[0] == '/' && end > start;
    return 1;
}

long agent_release_file_pages(int *problem) {
    *problem = 0;
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (!smaps) {
        *problem = errno;
        return 0;
    }
    char *line = NULL;
    size_t capacity = 0;
    struct file_mapping current = {0};
    long released = 0;
    while (getline(&line, &capacity, smaps) > 0) {
        struct file_mapping next;
        if (read_header(line, &next)) {
            release_mapping(&current, &released, problem);
            current = next;
            continue;
        }
        /* Resident copies (Anonymous) or swapped-out ones (Swap): the mapping was written. */
        long kb;
        if (sscanf(line, "Anonymous: %ld", &kb) == 1 || sscanf(line, "Swap: %ld", &kb) == 1) current.copied_kb += kb;
    }
    release_mapping(&current, &released, problem);
    free(line);
    fclose(smaps);
    return released;
}

static void *release_later(void *argument) {
    unsigned delay_ms = (unsigned)(uintptr_t)argument;
    struct timespec delay = {.tv_sec = delay_ms / 1000, .tv_nsec = (long)(delay_ms % 1000) * 1000000L};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {}
    int problem;
    agent_release_file_pages(&problem);
    return NULL;
}

int agent_release_file_pages_later(unsigned delay_ms) {
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return -1;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    /* Room for stdio's line buffer and sscanf; the thread touches a few pages of it. */
    pthread_attr_setstacksize(&attributes, 128 << 10);
    /* No signal for the worker's handlers lands on this thread: it inherits a full mask. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pthread_t thread;
    int made = pthread_create(&thread, &attributes, release_later, (void *)(uintptr_t)delay_ms);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    pthread_attr_destroy(&attributes);
    if (made != 0) return -1;
    pthread_setname_np(thread, "agent-pages");
    return 0;
}
