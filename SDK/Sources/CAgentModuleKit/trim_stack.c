#define _GNU_SOURCE
#include "agent_module_kit.h"

#if defined(__linux__)
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A process's thread (the one the host calls run_process on) decodes the settings and starts
   the process's task, tens of kB deep, then waits until the process ends a few kB from the
   top: the pages in between stay resident, in every worker its own. Below the calling thread's
   depth nothing is live (the x86-64 red zone is 128 bytes; aarch64 has none), and no other
   thread uses the thread's stack there, so the thread gives them back before it waits; a later
   touch maps a zeroed page, as the first one did. The host calls it too, for its own threads: its
   main thread and writer in a worker, the loop's thread in agent-control. */
enum { KEEP_BELOW_BYTES = 4 << 10 };

/* The mapping that holds `address` (/proc/self/maps): 1 with [*start, *end), 0 when none is found.
   For the main thread only: glibc reports its stack from the limit (RLIMIT_STACK) down to the
   mapping below, and with no limit the mapping below is the heap, reported as the stack's end:
   the range would reach across the whole gap between them, where another thread's brk or mmap
   may place memory between the reading and the madvise (an adversary's test zeroed a growing
   heap that way). The stack's own mapping ends where the thread has been, and nothing else can
   be mapped inside it. */
static int find_mapping(uintptr_t address, uintptr_t *start, uintptr_t *end) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return 0;
    int found = 0;
    char line[512];
    while (fgets(line, sizeof(line), maps)) {
        /* "start-end perms …" in hex; strtoul, not sscanf: this runs in every worker's start. */
        char *rest = NULL;
        unsigned long low = strtoul(line, &rest, 16);
        if (rest != line && *rest == '-') {
            const char *from = rest + 1;
            unsigned long high = strtoul(from, &rest, 16);
            if (rest != from && low <= address && address < high) {
                *start = low;
                *end = high;
                found = 1;
                break;
            }
        }
        /* A line longer than the buffer (a long path): skip its rest. */
        while (!strchr(line, '\n') && fgets(line, sizeof(line), maps)) {}
    }
    fclose(maps);
    return found;
}

/* The main thread's stack mapping as last read, [low, high). A process forked from the main
   thread (each forked worker, from its fork server's and zygote's main thread) has it at the
   same addresses, and a stack mapping only grows down: while the page below the start read is
   unmapped (one mincore), that start is still the mapping's, and the read (a walk of every
   mapping's line, ~0.1 ms of a worker's start) is not made again. A module's load forgets it
   (its constructor may unmap the stack's lowest pages and map something else there: the
   start read before would then be inside that). `low` is read and forgotten atomically (a
   load may run on any thread); the rest is the main thread's. */
static uintptr_t main_stack_low, main_stack_high;

static uintptr_t main_stack_start(uintptr_t depth, uintptr_t page) {
    uintptr_t low = __atomic_load_n(&main_stack_low, __ATOMIC_ACQUIRE);
    if (low > page && low <= depth && depth < main_stack_high) {
        unsigned char resident = 0;
        if (mincore((void *)(low - page), page, &resident) != 0 && errno == ENOMEM) return low;
    }
    uintptr_t start = 0, end = 0;
    if (!find_mapping(depth, &start, &end)) return 0;
    main_stack_high = end;
    __atomic_store_n(&main_stack_low, start, __ATOMIC_RELEASE);
    return start;
}

void agent_module_kit_forget_main_stack(void) {
    __atomic_store_n(&main_stack_low, 0, __ATOMIC_RELEASE);
}

/* The lowest address of the calling thread's stack that may be given back. The main thread's
   is where its mapping starts (above where glibc would report it, see find_mapping; glibc's
   own report reads /proc/self/maps as well, so it is not asked); another thread's is its
   stack's base. */
static uintptr_t stack_low(uintptr_t depth, uintptr_t page) {
    if (getpid() == (pid_t)syscall(SYS_gettid)) return main_stack_start(depth, page);
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *base = NULL;
    size_t size = 0;
    int read = pthread_attr_getstack(&attributes, &base, &size);
    pthread_attr_destroy(&attributes);
    if (read != 0 || base == NULL) return 0;
    return ((uintptr_t)base + page - 1) & ~(page - 1);
}

__attribute__((noinline)) long agent_module_kit_trim_stack(void) {
    volatile char here = 0;
    uintptr_t depth = (uintptr_t)&here;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t low = stack_low(depth, page);
    if (low == 0) return -1;
    if (depth < KEEP_BELOW_BYTES + page) return 0;
    uintptr_t high = (depth - KEEP_BELOW_BYTES) & ~(page - 1);
    if (high <= low) return 0;
    if (madvise((void *)low, high - low, MADV_DONTNEED) != 0) return -1;
    return (long)(high - low);
}

__attribute__((noinline)) void agent_module_kit_note_main_stack(void) {
    volatile char here = 0;
    if (getpid() != (pid_t)syscall(SYS_gettid)) return;
    agent_module_kit_forget_main_stack();
    (void)main_stack_start((uintptr_t)&here, (uintptr_t)sysconf(_SC_PAGESIZE));
}
#else
long agent_module_kit_trim_stack(void) { return 0; }
void agent_module_kit_note_main_stack(void) {}
void agent_module_kit_forget_main_stack(void) {}
#endif
