/*
 * event_clock.c — the wall-clock stamp of every emitted event, read from the CPU's
 * timestamp counter between reads of CLOCK_REALTIME.
 *
 * clock_gettime costs ~30 ns on this kind of VM, most of it the serialised counter read inside
 * the vDSO; an event's stamp needs neither that ordering nor a fresh read of the kernel's
 * clock data. When the kernel itself keeps time with the TSC (so the counter is invariant and
 * synchronised across CPUs), each thread reads CLOCK_REALTIME at most once a millisecond and
 * extrapolates with the counter in between, at a rate measured against the kernel's clock
 * over about a second. A read that lands more than 10 µs from the extrapolation (a step of the
 * clock) or a rate that moved by more than NTP can slew starts the measurement again, and the
 * kernel's clocksource is looked at again each second. Elsewhere (another clocksource, another
 * architecture) every stamp is a plain clock_gettime.
 *
 * Each thread calibrates on its own: stamps taken on different threads at nearly the same
 * moment may be ordered differently than the clock would order them, by up to the
 * extrapolation's error (about 1 µs).
 */
#define _GNU_SOURCE
#include "agent_system.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static int64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reads of CLOCK_REALTIME by agent_event_time_ns in this thread (for tests). */
static __thread uint64_t clock_reads;

uint64_t agent_event_clock_reads(void) { return clock_reads; }

#if defined(__x86_64__)

/* Extrapolated at most this far from a read of the kernel's clock. */
#define EXTRAPOLATION_NS 1000000
/* The counter's rate is first measured over 10 ms (every stamp reads the clock until then),
   then again over each following second, so that it follows NTP's slewing. */
#define FIRST_WINDOW_NS 10000000
#define RATE_WINDOW_NS 1000000000
/* A read of the clock further than this from where the extrapolation puts it is a step. */
#define STEP_NS 10000
/* The most a new measurement of the rate may differ from the last one (NTP slews by at most
   500 ppm). */
#define RATE_CHANGE 0.001
/* A clock read is paired with the counter only when the counter moved less than this across
   it (about 1 µs at 2 GHz): one interrupted or preempted in between is not used. */
#define PAIR_TICKS 2000

struct calibration {
    /* The last clock read that was paired with the counter, and the counter then. */
    uint64_t tsc;
    int64_t ns;
    /* Counter ticks that may pass before the clock is read again; 0: read it every time. */
    uint64_t limit;
    double ns_per_tick;
    /* Where the rate's current window started (window_ns 0: not started). */
    uint64_t window_tsc;
    int64_t window_ns;
    /* The last stamp: an extrapolation that ran slightly ahead of the clock must not make the
       next stamp earlier than it. */
    int64_t last;
};

static __thread struct calibration calibration;

/* 1: the kernel's clocksource is the TSC; -1: it is not (or unknown, or it gave it up);
   0: not looked yet. */
static int tsc_usable;

static int kernel_uses_tsc(void) {
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char name[16] = {0};
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    return n >= 3 && memcmp(name, "tsc", 3) == 0 && (n == 3 || name[3] == '\n');
}

/* Reads the clock; pairs it with the counter and measures the rate when it can. */
static int64_t recalibrate(struct calibration *c) {
    clock_reads++;
    uint64_t before = __rdtsc();
    int64_t ns = realtime_ns();
    uint64_t after = __rdtsc();
    if (after - before <= PAIR_TICKS) {
        uint64_t tsc = before + (after - before) / 2;
        int stepped = 0;
        if (c->limit != 0) {
            /* Where the extrapolation puts this read: further off than the rate's error can
               explain, the clock was stepped (settimeofday, NTP) or the counter misbehaved. */
            double error = (double)(ns - c->ns) - (double)(tsc - c->tsc) * c->ns_per_tick;
            stepped = error > STEP_NS || error < -STEP_NS;
        }
        if (stepped || c->window_ns == 0 || ns <= c->window_ns || tsc <= c->window_tsc) {
            /* The first read in this thread, or a step: measure afresh, reading the clock
               meanwhile. */
            c->window_tsc = tsc;
            c->window_ns = ns;
            c->limit = 0;
            c->ns_per_tick = 0;
        } else {
            int64_t span = ns - c->window_ns;
            if ((c->limit == 0 && span >= FIRST_WINDOW_NS) || span >= RATE_WINDOW_NS) {
                double rate = (double)span / (double)(tsc - c->window_tsc);
                /* A counter between 100 MHz and 100 GHz; and once measured, the rate moves only
                   by NTP's slewing (at most 500 ppm): a window off by more held a step. */
                int sane = rate > 0.01 && rate < 10 &&
                           (c->ns_per_tick == 0 || (rate / c->ns_per_tick > 1 - RATE_CHANGE && rate / c->ns_per_tick < 1 + RATE_CHANGE));
                /* Once a second the kernel's choice is looked at again: it may give the TSC up
                   (marked unstable) and move to another clocksource. */
                if (span >= RATE_WINDOW_NS && !kernel_uses_tsc()) {
                    __atomic_store_n(&tsc_usable, -1, __ATOMIC_RELAXED);
                    sane = 0;
                }
                if (sane) {
                    c->ns_per_tick = rate;
                    c->limit = (uint64_t)((double)EXTRAPOLATION_NS / rate);
                } else {
                    c->ns_per_tick = 0;
                    c->limit = 0;
                }
                c->window_tsc = tsc;
                c->window_ns = ns;
            }
        }
        c->tsc = tsc;
        c->ns = ns;
    }
    /* A step back larger than an extrapolation can explain is the clock's own (settimeofday,
       NTP): it is followed. */
    if (ns < c->last && c->last - ns < EXTRAPOLATION_NS) return c->last;
    c->last = ns;
    return ns;
}

int64_t agent_event_time_ns(void) {
    int usable = __atomic_load_n(&tsc_usable, __ATOMIC_RELAXED);
    if (usable == 0) {
        usable = kernel_uses_tsc() ? 1 : -1;
        __atomic_store_n(&tsc_usable, usable, __ATOMIC_RELAXED);
    }
    if (usable < 0) {
        clock_reads++;
        return realtime_ns();
    }
    struct calibration *c = &calibration;
    uint64_t ticks = __rdtsc() - c->tsc;
    /* Past the limit, or behind the last pairing (another CPU's counter): read the clock. */
    if (ticks >= c->limit) return recalibrate(c);
    int64_t ns = c->ns + (int64_t)((double)ticks * c->ns_per_tick);
    if (ns < c->last) ns = c->last;
    c->last = ns;
    return ns;
}

#else

int64_t agent_event_time_ns(void) {
    clock_reads++;
    return realtime_ns();
}

#endif
