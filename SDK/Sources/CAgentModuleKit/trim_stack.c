#define _GNU_SOURCE
#include "agent_module_kit.h"

#if defined(__linux__)
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* A process's thread (the one the host calls run_process on) decodes the settings and starts
   the process's task, tens of kB deep, then waits until the process ends a few kB from the
   top: the pages in between stay resident, in every worker its own. Below the calling thread's
   depth nothing is live (the x86-64 red zone is 128 bytes; aarch64 has none), and no other
   thread uses the thread's stack there, so the thread gives them back before it waits; a later
   touch maps a zeroed page, as the first one did. The host calls it too, for its own threads: its
   main thread and writer in a worker, the loop's thread in agent-control. */
enum { KEEP_BELOW_BYTES = 4 << 10 };

__attribute__((noinline)) long agent_module_kit_trim_stack(void) {
    volatile char here = 0;
    uintptr_t depth = (uintptr_t)&here;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return -1;
    void *base = NULL;
    size_t size = 0;
    int read = pthread_attr_getstack(&attributes, &base, &size);
    pthread_attr_destroy(&attributes);
    if (read != 0 || base == NULL) return -1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t low = ((uintptr_t)base + page - 1) & ~(page - 1);
    if (depth < KEEP_BELOW_BYTES + page) return 0;
    uintptr_t high = (depth - KEEP_BELOW_BYTES) & ~(page - 1);
    if (high <= low) return 0;
    if (madvise((void *)low, high - low, MADV_DONTNEED) != 0 && errno != ENOMEM) return -1;
    return (long)(high - low);
}
#else
long agent_module_kit_trim_stack(void) { return 0; }
#endif
