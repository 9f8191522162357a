/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port's monotonic clock (tb_port_now_ns): a CPU counter read in user space (the
 * invariant TSC on x86-64, CNTVCT_EL0 on AArch64; counters/<arch>.h, chosen by CMake)
 * converted to ns on CLOCK_MONOTONIC's time line, or CLOCK_MONOTONIC itself (the vDSO: about
 * 20 ns per trace event here against about 9 ns) where the counter may change its rate.
 *
 * Calibration: at start-up (a constructor, before anything is measured) the counter's rate
 * is measured against CLOCK_MONOTONIC over TB_CLOCK_WINDOW_NS. The serve loop checks it after
 * every RUN (tb_port_clock_check): the counter's ns since the previous check against
 * CLOCK_MONOTONIC's. Within TB_CLOCK_TOLERANCE_PPM the rate is refined over the whole time
 * since start-up and the conversion re-anchored, so timestamps stay on CLOCK_MONOTONIC's time
 * line (the link emulator and power captures are aligned on it); beyond it the port stops
 * using the counter for good and says why in the next DONE. TLSBENCH_CLOCK=monotonic in the
 * environment forces CLOCK_MONOTONIC (comparisons, tests).
 *
 * TLSBENCH_COLLECT=instructions under the tbcount valgrind tool (posix_icount.c): the clock
 * is the instruction count, its unit says so, and nothing is calibrated (docs/metrics.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "posix_icount.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"
#include TB_COUNTER_HEADER

#define TB_CLOCK_REFERENCE "CLOCK_MONOTONIC"
#define TB_CLOCK_WINDOW_NS 20000000u        /* start-up calibration: 20 ms, a few ppm */
#define TB_CLOCK_CHECK_MIN_NS 100000000u    /* a shorter check would measure read jitter */
#define TB_CLOCK_TOLERANCE_PPM 1000.0       /* 0.1%: far beyond NTP slewing (500 ppm max) */
#define TB_CLOCK_SAMPLES 7                  /* bracketed reads, the narrowest bracket wins */
#define TB_CLOCK_SHIFT 32                   /* ns per tick in 32.32 fixed point */

__extension__ typedef __int128 tb_i128;

/* One counter value and the reference time read between two counter reads. */
typedef struct tb_clock_pair {
    uint64_t ticks, ns;
} tb_clock_pair;

static struct {
    int instructions;        /* 1: tb_port_now_ns is the instruction count (TLSBENCH_COLLECT) */
    int counting;            /* 1: tb_port_now_ns converts the counter */
    char fallback[160];      /* why not, "" while counting or when there is no counter */
    tb_clock_pair start;     /* the first calibration sample: the long baseline's origin */
    tb_clock_pair anchor;    /* where the conversion starts from (re-anchored at each check) */
    uint64_t mult;           /* ns per tick << TB_CLOCK_SHIFT */
    double hz;               /* counter ticks per second */
    uint64_t window_ns;      /* reference time the rate was measured over */
    double drift_ppm;        /* at the last check */
} tb_clock;

static uint64_t tb_reference_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The reference read between two counter reads; of a few tries the one whose counter reads
 * lie closest together (least disturbed), paired with their midpoint. */
static tb_clock_pair tb_clock_sample(void) {
    tb_clock_pair best = {0, 0};
    uint64_t narrowest = UINT64_MAX;
    for (int i = 0; i < TB_CLOCK_SAMPLES; i++) {
        uint64_t t0 = tb_counter_read();
        uint64_t ns = tb_reference_ns();
        uint64_t t1 = tb_counter_read();
        if (t1 - t0 < narrowest) {
            narrowest = t1 - t0;
            best = (tb_clock_pair){t0 + (t1 - t0) / 2, ns};
        }
    }
    return best;
}

static uint64_t tb_counter_to_ns(uint64_t ticks) {
    int64_t d = (int64_t)(ticks - tb_clock.anchor.ticks);
    return tb_clock.anchor.ns + (uint64_t)(int64_t)(((tb_i128)d * (tb_i128)tb_clock.mult) >> TB_CLOCK_SHIFT);
}

uint64_t tb_port_now_ns(void) {
    if (tb_clock.instructions)
        return tb_posix_icount();
    if (!tb_clock.counting)
        return tb_reference_ns();
    return tb_counter_to_ns(tb_counter_read());
}

/* The rate from `from` to `to`; 0 when the counter did not advance (then it is unusable). */
static int tb_clock_set_rate(tb_clock_pair from, tb_clock_pair to) {
    uint64_t ticks = to.ticks - from.ticks, ns = to.ns - from.ns;
    if (ticks == 0 || ns == 0 || to.ticks < from.ticks)
        return -1;
    tb_clock.hz = (double)ticks * 1e9 / (double)ns;
    tb_clock.mult = (uint64_t)((double)ns / (double)ticks * (double)(1ull << TB_CLOCK_SHIFT) + 0.5);
    tb_clock.window_ns = ns;
    tb_clock.anchor = to;
    return 0;
}

static void tb_clock_fall_back(const char *why) {
    tb_clock.counting = 0;
    snprintf(tb_clock.fallback, sizeof tb_clock.fallback, "%s", why);
}

int tb_posix_counting_instructions(void) { return tb_clock.instructions; }

__attribute__((constructor)) static void tb_clock_calibrate(void) {
    const char *collect = getenv("TLSBENCH_COLLECT");
    if (collect && strcmp(collect, tb_collect_name(TB_COLLECT_INSTRUCTIONS)) == 0 && tb_posix_icount_start() == 0) {
        tb_clock.instructions = 1;
        snprintf(tb_clock.fallback, sizeof tb_clock.fallback, "counting instructions (TLSBENCH_COLLECT)");
        return;
    }
    const char *forced = getenv("TLSBENCH_CLOCK");
    const char *unsteady = tb_counter_unsteady();
    if (!tb_counter_name[0])
        return; /* nothing to fall back from */
    if (forced && strcmp(forced, "monotonic") == 0) {
        tb_clock_fall_back("TLSBENCH_CLOCK=monotonic");
        return;
    }
    if (unsteady) {
        tb_clock_fall_back(unsteady);
        return;
    }
    tb_clock.start = tb_clock_sample();
    struct timespec wait = {0, TB_CLOCK_WINDOW_NS};
    nanosleep(&wait, NULL);
    if (tb_clock_set_rate(tb_clock.start, tb_clock_sample()) != 0) {
        tb_clock_fall_back("the counter did not advance during calibration");
        return;
    }
    tb_clock.counting = 1;
}

double tb_port_clock_check(void) {
    if (!tb_clock.counting)
        return 0.0;
    tb_clock_pair now = tb_clock_sample();
    uint64_t elapsed = now.ns - tb_clock.anchor.ns;
    if (elapsed < TB_CLOCK_CHECK_MIN_NS)
        return tb_clock.drift_ppm;
    double off = (double)(int64_t)(tb_counter_to_ns(now.ticks) - now.ns);
    tb_clock.drift_ppm = off / (double)elapsed * 1e6;
    if (tb_clock.drift_ppm > TB_CLOCK_TOLERANCE_PPM || tb_clock.drift_ppm < -TB_CLOCK_TOLERANCE_PPM) {
        char why[160];
        snprintf(why, sizeof why, "the %s drifted %.0f ppm from " TB_CLOCK_REFERENCE " during a RUN", tb_counter_name,
                 tb_clock.drift_ppm);
        tb_clock_fall_back(why);
    } else if (tb_clock_set_rate(tb_clock.start, now) != 0) {
        tb_clock_fall_back("the counter went backwards");
    }
    return tb_clock.drift_ppm;
}

const char *tb_port_clock_name(void) {
    return tb_clock.instructions ? "tbcount" : tb_clock.counting ? tb_counter_name : TB_CLOCK_REFERENCE;
}

const char *tb_port_clock_unit(void) { return tb_clock.instructions ? tb_posix_icount_unit() : "ns"; }

uint64_t tb_port_clock_resolution_ns(void) {
    if (tb_clock.instructions)
        return 1;
    if (tb_clock.counting)
        return tb_clock.hz >= 1e9 ? 1 : (uint64_t)(1e9 / tb_clock.hz + 0.999);
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

tb_port_clock_info tb_port_clock_calibration(void) {
    return (tb_port_clock_info){.counter = tb_counter_name,
                                .reference = tb_clock.counting ? TB_CLOCK_REFERENCE : "",
                                .fallback = tb_clock.fallback,
                                .counter_hz = tb_clock.counting ? tb_clock.hz : 0.0,
                                .window_ns = tb_clock.counting ? tb_clock.window_ns : 0,
                                .drift_ppm = tb_clock.drift_ppm};
}
