/* SPDX-License-Identifier: Apache-2.0 */
/* The tracer, built twice: traced (records appear) and notrace (every call is a no-op). */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/trace.h"

static void test_reset_empties(void) {
    tb_trace_reset();
    tb_begin(TB_L_HANDSHAKE);
    tb_end(TB_L_HANDSHAKE, 7);
    tb_trace_reset();
    CHECK_EQ_U(tb_trace_buffer.count, 0);
    CHECK_EQ_U(tb_trace_buffer.dropped, 0);
    CHECK_EQ_U(tb_trace_buffer.peer, TB_PEER_NONE);
}

static void test_records_fields(void) {
    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_SERVER);
    tb_begin(TB_L_SEND);
    tb_end(TB_L_SEND, 123);
    tb_trace_set_peer(TB_PEER_CLIENT);
    tb_instant(TB_L_RECV, UINT64_MAX);
    tb_begin_phase(TB_L_REPETITION);
    tb_end_phase(TB_L_REPETITION, 0);
    const tb_record *r = tb_trace_buffer.records;
    if (!TB_TRACE_ENABLED) {
        CHECK_EQ_U(tb_trace_buffer.count, 0);
        return;
    }
    CHECK_EQ_U(tb_trace_buffer.count, 5);
    CHECK_EQ_U(r[0].label, TB_L_SEND);
    CHECK_EQ_U(r[0].kind, TB_KIND_START);
    CHECK_EQ_U(r[0].peer, TB_PEER_SERVER);
    CHECK_EQ_U(r[0].cpu_ns, 0);
    CHECK_EQ_U(r[1].kind, TB_KIND_STOP);
    CHECK_EQ_U(r[1].value, 123);
    CHECK(r[1].t_ns >= r[0].t_ns);
    CHECK_EQ_U(r[2].kind, TB_KIND_INSTANT);
    CHECK_EQ_U(r[2].peer, TB_PEER_CLIENT);
    CHECK_EQ_U(r[2].value, UINT64_MAX);
    CHECK(r[3].cpu_ns > 0); /* phase spans read the thread CPU clock */
    CHECK(r[4].cpu_ns >= r[3].cpu_ns);
    for (uint32_t i = 0; i < 5; i++)
        CHECK_EQ_U(r[i].seq, i);
}

static void test_overflow_counts_and_keeps_seq(void) {
    tb_trace_reset();
    for (uint32_t i = 0; i < TB_TRACE_CAPACITY + 5; i++)
        tb_instant(TB_L_RECV, i);
    if (!TB_TRACE_ENABLED) {
        CHECK_EQ_U(tb_trace_buffer.count, 0);
        CHECK_EQ_U(tb_trace_buffer.dropped, 0);
        return;
    }
    CHECK_EQ_U(tb_trace_buffer.count, TB_TRACE_CAPACITY);
    CHECK_EQ_U(tb_trace_buffer.dropped, 5);
    CHECK_EQ_U(tb_trace_buffer.records[TB_TRACE_CAPACITY - 1].value, TB_TRACE_CAPACITY - 1);
    tb_trace_reset();
    tb_instant(TB_L_RECV, 1);
    CHECK_EQ_U(tb_trace_buffer.dropped, 0);
    CHECK_EQ_U(tb_trace_buffer.records[0].seq, 0);
}

static void test_calibration(void) {
    /* More pairs than the buffer holds: calibration must batch, and leave the trace empty. */
    tb_calibration c = tb_trace_calibrate(3 * TB_TRACE_CAPACITY);
    CHECK_EQ_U(c.pairs, 3 * TB_TRACE_CAPACITY);
    CHECK_EQ_U(tb_trace_buffer.count, 0);
    CHECK_EQ_U(tb_trace_buffer.dropped, 0);
    CHECK(c.event_cost_ns >= 0.0 && c.event_cost_ns < 5000.0);
    CHECK(c.empty_span_ns >= 0.0 && c.empty_span_ns < 5000.0);
    if (TB_TRACE_ENABLED)
        CHECK(c.event_cost_ns > 0.0);
    else
        CHECK(c.empty_span_ns == 0.0);
    fprintf(stderr, "calibration: event_cost_ns=%.2f empty_span_ns=%.1f\n", c.event_cost_ns, c.empty_span_ns);
    tb_calibration z = tb_trace_calibrate(0);
    CHECK(z.event_cost_ns == 0.0 && z.pairs == 0);
}

int main(void) {
    RUN_TEST(test_reset_empties);
    RUN_TEST(test_records_fields);
    RUN_TEST(test_overflow_counts_and_keeps_seq);
    RUN_TEST(test_calibration);
    return tb_test_report();
}
