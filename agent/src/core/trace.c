/* SPDX-License-Identifier: Apache-2.0 */
/* The trace buffer and the tracer's start-up self-calibration. */
#include "tlsbench/trace.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The record's memory layout is the wire layout ([layout.record], checked field by field in
 * layout_gen.h): no byte swapping on the hot path. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tlsbench ships trace records as memory images: little-endian targets only"
#endif

/* Zero-initialised on purpose: an initialiser would put the whole buffer (records included)
 * into .data, i.e. into a device's flash image and its start-up copy. The serve loop resets
 * it (peer NONE) before anything is traced. */
tb_trace tb_trace_buffer;

#if TB_TRACE_STEP_HOOK
/* The asm keeps the call: an empty function's calls may otherwise be dropped. */
__attribute__((noinline)) void tb_trace_stepped(void) { __asm__ volatile(""); }
#endif

void tb_trace_reset(void) {
    tb_trace_buffer.count = 0;
    tb_trace_buffer.dropped = 0;
    tb_trace_buffer.peer = TB_PEER_NONE;
}

/* Durations of empty spans, 1 ns buckets; the last bucket collects the tail.
 * A histogram gives the median of any number of pairs without storing them. */
#define TB_CAL_BUCKETS 4096u
static uint32_t tb_cal_hist[TB_CAL_BUCKETS];

static void tb_cal_collect(const tb_trace *t) {
    for (uint32_t i = 0; i + 1 < t->count; i += 2) {
        uint64_t d = t->records[i + 1].t_ns - t->records[i].t_ns;
        tb_cal_hist[d < TB_CAL_BUCKETS ? d : TB_CAL_BUCKETS - 1]++;
    }
}

static double tb_cal_median(uint64_t n) {
    uint64_t seen = 0;
    for (uint32_t b = 0; b < TB_CAL_BUCKETS && n > 0; b++) {
        seen += tb_cal_hist[b];
        if (seen * 2 >= n)
            return (double)b;
    }
    return 0.0;
}

/* The event cost is the median over batches of a batch's mean, not the mean over all pairs:
 * on a shared machine a preemption inside one batch would otherwise add its milliseconds to
 * the cost of every event (seen here: 70 ns instead of 10 in one calibration in three). */
#define TB_CAL_BATCHES_MAX 256u
static double tb_cal_batch_cost[TB_CAL_BATCHES_MAX];

static int tb_cal_less(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

tb_calibration tb_trace_calibrate(uint32_t pairs) {
    const uint32_t batch_max = TB_TRACE_CAPACITY / 2;
    uint64_t spans = 0;
    uint32_t batches = 0;
    memset(tb_cal_hist, 0, sizeof tb_cal_hist);
    for (uint32_t done = 0; done < pairs;) {
        uint32_t batch = pairs - done < batch_max ? pairs - done : batch_max;
        tb_trace_reset();
        uint64_t t0 = tb_port_now_ns();
        for (uint32_t i = 0; i < batch; i++) {
            tb_begin(TB_L_TRACER_CALIBRATION);
            tb_end(TB_L_TRACER_CALIBRATION, 0);
        }
        uint64_t wall = tb_port_now_ns() - t0;
        if (batches < TB_CAL_BATCHES_MAX)
            tb_cal_batch_cost[batches++] = (double)wall / (2.0 * batch);
        tb_cal_collect(&tb_trace_buffer);
        spans += tb_trace_buffer.count / 2;
        done += batch;
    }
    tb_trace_reset();
    qsort(tb_cal_batch_cost, batches, sizeof tb_cal_batch_cost[0], tb_cal_less);
    tb_calibration c = {.pairs = pairs};
    c.event_cost_ns = batches ? tb_cal_batch_cost[batches / 2] : 0.0;
    c.empty_span_ns = tb_cal_median(spans);
    return c;
}
