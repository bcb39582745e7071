#define _GNU_SOURCE
#include "agent_system.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A process's code pages are file pages it maps itself, with the kernel mapping up to 16 around
   each one touched: a forked worker inherits no page table of its fork server's code, so every
   process maps what its start touched, and a page mapped in 21 processes is 1/21 of its size in
   each one's PSS — ~0.5 MB of each idle worker's 1.3, for code only the start ran. Unmapping
   it once the start is over (MADV_DONTNEED) leaves the pages in the page cache; what runs again
   is mapped again at its next touch (a minor fault).

   Safe only where the memory is the file's and stays so while it is released: the read-only
   segments (code, constants) of the objects the dynamic loader has loaded, with no page copied
   on write (a debugger's breakpoint, a uprobe). Walked with dl_iterate_phdr, whose lock keeps
   every listed object mapped until the walk ends (dlclose unmaps under it), and whose list
   holds an object only once its segments are in place (dlopen maps them first): a segment is
   never one that a dlopen beside the release is still mapping over, and smaps, read under the
   same lock, describes the objects listed. A breakpoint or a uprobe put into a segment in the
   few ms between the reading and its madvise is lost with it: AGENT_RELEASE_START_PAGES=0
   when debugging. Not an object whose
   relocations write into its code (DT_TEXTREL), not its RELRO part (written at load). */

/* One mapping of /proc/self/smaps: clean when private, not writable, of a file, and without a
   copied-on-write page, resident (Anonymous) or swapped out (Swap). */
struct mapping {
    uintptr_t start, end;
    int clean;
};

struct walk {
    struct mapping *mappings;
    size_t count;
    uintptr_t page;
    long released;
    int problem;
};

/* A header line, "start-end perms offset dev inode path": fills `m`; 0 for a field line. */
static int read_header(const char *line, struct mapping *m) {
    unsigned long start, end;
    char perms[5];
    int path_at = 0;
    if (sscanf(line, "%lx-%lx %4s %*x %*x:%*x %*u %n", &start, &end, perms, &path_at) != 3 || path_at == 0) return 0;
    m->start = start;
    m->end = end;
    m->clean = perms[1] != 'w' && perms[3] == 'p' && line[path_at] == '/';
    return 1;
}

/* The process's mappings, in address order; NULL (errno set) when smaps cannot be read. */
static struct mapping *read_mappings(size_t *count) {
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (!smaps) return NULL;
    struct mapping *mappings = NULL;
    size_t capacity = 0;
    *count = 0;
    char *line = NULL;
    size_t length = 0;
    while (getline(&line, &length, smaps) > 0) {
        struct mapping next;
        if (read_header(line, &next)) {
            if (*count == capacity) {
                capacity = capacity ? capacity * 2 : 256;
                struct mapping *grown = realloc(mappings, capacity * sizeof(*mappings));
                if (!grown) break;
                mappings = grown;
            }
            mappings[(*count)++] = next;
            continue;
        }
        long kb;
        if (*count > 0 && (sscanf(line, "Anonymous: %ld", &kb) == 1 || sscanf(line, "Swap: %ld", &kb) == 1) && kb != 0) {
            mappings[*count - 1].clean = 0;
        }
    }
    free(line);
    fclose(smaps);
    if (!mappings) errno = ENOMEM;
    return mappings;
}

/* Whether [start, end) is covered by clean mappings, end to end. */
static int all_clean(const struct walk *walk, uintptr_t start, uintptr_t end) {
    uintptr_t covered = start;
    for (size_t i = 0; i < walk->count && covered < end; i++) {
        const struct mapping *m = &walk->mappings[i];
        if (m->end <= covered) continue;
        if (m->start > covered || !m->clean) return 0;
        covered = m->end;
    }
    return covered >= end;
}

/* Whether the object's relocations write into its code (DT_TEXTREL, or DF_TEXTREL in DT_FLAGS). */
static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 1;
        }
    }
    return 0;
}

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct walk *walk = data;
    /* Read under the loader's lock, which the walk holds from its first object to its last: no
       object is unloaded, and none loaded where one was, between the reading and the madvise. */
    if (!walk->mappings) {
        walk->mappings = read_mappings(&walk->count);
        if (!walk->mappings) {
            walk->problem = errno;
            return 1;
        }
    }
    if (has_text_relocations(info)) return 0;
    uintptr_t relro_start = 0, relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_GNU_RELRO) continue;
        relro_start = (info->dlpi_addr + p->p_vaddr) & ~(walk->page - 1);
        relro_end = (info->dlpi_addr + p->p_vaddr + p->p_memsz + walk->page - 1) & ~(walk->page - 1);
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD || (p->p_flags & PF_W) || p->p_memsz == 0) continue;
        uintptr_t start = (info->dlpi_addr + p->p_vaddr) & ~(walk->page - 1);
        uintptr_t end = (info->dlpi_addr + p->p_vaddr + p->p_memsz + walk->page - 1) & ~(walk->page - 1);
        if (start < relro_end && relro_start < end) continue;
        if (!all_clean(walk, start, end)) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) {
            walk->released += (long)(end - start);
        } else if (errno != EINVAL && walk->problem == 0) {
            /* EINVAL: a locked mapping, which keeps its pages by design. */
            walk->problem = errno;
        }
    }
    return 0;
}

long agent_release_file_pages(int *problem) {
    struct walk walk = {.page = (uintptr_t)sysconf(_SC_PAGESIZE)};
    dl_iterate_phdr(release_object, &walk);
    free(walk.mappings);
    *problem = walk.problem;
    return walk.released;
}

long agent_resident_file_kb(void) {
    /* Plain read(2) and a scan: the supervisor calls it every 30 s, and what it runs stays
       mapped (Foundation's file and string code was 0.7 MB of it). */
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char text[4096];
    ssize_t length = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (length <= 0) return -1;
    text[length] = 0;
    const char *line = strstr(text, "\nRssFile:");
    return line ? strtol(line + strlen("\nRssFile:"), NULL, 10) : -1;
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
