/* SPDX-License-Identifier: Apache-2.0 */
/* The tracer: fixed-size records in a static buffer, no allocation on the hot path.
 *
 * One global trace per agent (the agent is single-threaded: both in-memory peers run in
 * one thread, taking turns). The runner sets the current peer before handing control to
 * a peer, so I/O callbacks and crypto wrappers need not know whose turn it is.
 *
 * Build with -DTB_TRACE_ENABLED=0 for the uninstrumented baseline: every call below
 * compiles to nothing and the rest of the code path stays the same. */
#ifndef TLSBENCH_TRACE_H
#define TLSBENCH_TRACE_H
#include <stdint.h>
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

#ifndef TB_TRACE_ENABLED
#define TB_TRACE_ENABLED 1
#endif

/* Records per repetition; overflow is counted, flags the repetition, never crashes. */
#ifndef TB_TRACE_CAPACITY
#define TB_TRACE_CAPACITY 8192
#endif

/* One event; its memory layout is the wire layout (little-endian targets only,
 * checked at compile time in trace.c). */
typedef struct tb_record {
    uint16_t label;  /* enum tb_label */
    uint8_t kind;    /* TB_KIND_* */
    uint8_t peer;    /* TB_PEER_* */
    uint32_t seq;    /* index within the repetition */
    uint64_t t_ns;   /* tb_port_now_ns() */
    uint64_t cpu_ns; /* tb_port_cpu_ns() on phase spans, else 0 */
    uint64_t value;  /* bytes moved, or a return code (two's complement) */
} tb_record;

typedef struct tb_trace {
    uint32_t count;   /* records stored */
    uint32_t dropped; /* records lost because the buffer was full */
    uint8_t peer;     /* current peer, stamped on every record */
    tb_record records[TB_TRACE_CAPACITY];
} tb_trace;

extern tb_trace tb_trace_buffer;

/* Start a new repetition: empties the buffer and the drop counter. */
void tb_trace_reset(void);

/* Where the trace stands, to forget later what was recorded since (work that belongs to
 * another repetition, e.g. a lingering DTLS association answered between two). */
typedef struct tb_trace_mark {
    uint32_t count;
    uint32_t dropped;
    uint8_t peer;
} tb_trace_mark;

static inline tb_trace_mark tb_trace_here(void) {
    return (tb_trace_mark){tb_trace_buffer.count, tb_trace_buffer.dropped, tb_trace_buffer.peer};
}

static inline void tb_trace_rewind(tb_trace_mark m) {
    tb_trace_buffer.count = m.count;
    tb_trace_buffer.dropped = m.dropped;
    tb_trace_buffer.peer = m.peer;
}

/* The firmware calls tb_trace_stepped() once per record it writes, right after reading the
 * counter: an empty function kept out of line so that the cycle model's QEMU plugin can take a
 * snapshot of its class counts at each record (docs/cycles.md, "Per-step cycles"). One call
 * per record, counted the same with and without the plugin; hosts omit it. */
#ifndef TB_TRACE_STEP_HOOK
#define TB_TRACE_STEP_HOOK 0
#endif
#if TB_TRACE_STEP_HOOK
void tb_trace_stepped(void);
#else
static inline void tb_trace_stepped(void) {}
#endif

/* Result of the start-up self-calibration, reported in HELLO. */
typedef struct tb_calibration {
    double event_cost_ns; /* wall time to record one event: the median of batch means */
    double empty_span_ns; /* median duration a START immediately followed by STOP shows */
    uint32_t pairs;       /* how many empty pairs were timed */
} tb_calibration;

/* Times `pairs` empty START/STOP pairs (label TRACER_CALIBRATION); leaves the trace empty. */
tb_calibration tb_trace_calibrate(uint32_t pairs);

#if TB_TRACE_ENABLED
static inline void tb_trace_emit(uint16_t label, uint8_t kind, uint64_t cpu_ns, uint64_t value) {
    tb_trace *t = &tb_trace_buffer;
    if (t->count >= TB_TRACE_CAPACITY) {
        t->dropped++;
        return;
    }
    tb_record *r = &t->records[t->count];
    r->label = label;
    r->kind = kind;
    r->peer = t->peer;
    r->seq = t->count + t->dropped;
    r->t_ns = tb_port_now_ns();
    tb_trace_stepped();
    r->cpu_ns = cpu_ns;
    r->value = value;
    t->count++;
}
static inline void tb_trace_set_peer(uint8_t peer) { tb_trace_buffer.peer = peer; }
#else
static inline void tb_trace_emit(uint16_t label, uint8_t kind, uint64_t cpu_ns, uint64_t value) {
    (void)label; (void)kind; (void)cpu_ns; (void)value;
}
static inline void tb_trace_set_peer(uint8_t peer) { (void)peer; }
#endif

static inline void tb_begin(uint16_t label) { tb_trace_emit(label, TB_KIND_START, 0, 0); }
static inline void tb_end(uint16_t label, uint64_t value) { tb_trace_emit(label, TB_KIND_STOP, 0, value); }
static inline void tb_instant(uint16_t label, uint64_t value) { tb_trace_emit(label, TB_KIND_INSTANT, 0, value); }

/* Phase spans also record thread CPU time (a system call on Linux: phases only).
 * Compiled out with the tracer, so the baseline pays for no clock read at all. */
#if TB_TRACE_ENABLED
static inline void tb_begin_phase(uint16_t label) { tb_trace_emit(label, TB_KIND_START, tb_port_cpu_ns(), 0); }
static inline void tb_end_phase(uint16_t label, uint64_t value) { tb_trace_emit(label, TB_KIND_STOP, tb_port_cpu_ns(), value); }
#else
static inline void tb_begin_phase(uint16_t label) { (void)label; }
static inline void tb_end_phase(uint16_t label, uint64_t value) { (void)label; (void)value; }
#endif

/* Run-queue wait over one repetition (port.h): read just before its REPETITION span and
 * recorded as a RUNQUEUE_WAIT instant just after it, so the reads stay outside the span.
 * Nothing where the port cannot tell, and nothing read when tracing is compiled out. */
typedef struct tb_runqueue_mark {
    int known;
    uint64_t ns;
} tb_runqueue_mark;

static inline tb_runqueue_mark tb_runqueue_before(void) {
    tb_runqueue_mark m = {0, 0};
    m.known = TB_TRACE_ENABLED && tb_port_runqueue_wait_ns(&m.ns) == 0;
    return m;
}

static inline void tb_runqueue_after(tb_runqueue_mark m) {
    uint64_t now;
    if (m.known && tb_port_runqueue_wait_ns(&now) == 0)
        tb_instant(TB_L_RUNQUEUE_WAIT, now - m.ns);
}

#endif
