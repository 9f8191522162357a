/* SPDX-License-Identifier: Apache-2.0 */
/* Pacing (tlsbench/pace.h): a step is held for its modelled ns before its first send, once per
 * handshake; a call that waits for data is not held; in memory and without a table nothing is. */
#include "tb_test.h"
#include "tlsbench/pace.h"
#include "tlsbench/trace.h"

#define MODEL_NS 2000000u /* 2 ms */

static uint32_t one_row(uint32_t config_id, tb_pace_row *rows, uint32_t max) {
    if (config_id != 5 || max < 1)
        return 0;
    rows[0] = (tb_pace_row){5, TB_PEER_CLIENT, TB_L_CLIENT_HELLO, MODEL_NS};
    return 1;
}

static void spin_until(uint64_t deadline) {
    while (tb_port_now_ns() < deadline) {
    }
}

static uint32_t holds(uint64_t *last_value) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++)
        if (tb_trace_buffer.records[i].label == TB_L_PACE_HOLD && tb_trace_buffer.records[i].kind == TB_KIND_STOP) {
            n++;
            *last_value = tb_trace_buffer.records[i].value;
        }
    return n;
}

static void test_a_step_is_held_before_its_send_once(void) {
    tb_pace_install(one_row, spin_until);
    tb_pace_run(5, true);
    CHECK(tb_pace_active());
    tb_pace_handshake();
    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_CLIENT);
    uint64_t t0 = tb_port_now_ns();
    tb_pace_step_begin(TB_L_CLIENT_HELLO);
    tb_pace_before_send();
    uint64_t held = tb_port_now_ns() - t0;
    tb_pace_before_send(); /* a second send of the same call: no second hold */
    tb_pace_step_end(true);
    CHECK(held >= MODEL_NS);
    uint64_t value = 99;
    CHECK_EQ_U(holds(&value), 1);
    CHECK_EQ_U(value, 0); /* it held: the host's work did not overrun the model */
    /* the budget is spent: the next call of the step is not held again, and says it overran */
    t0 = tb_port_now_ns();
    tb_pace_step_begin(TB_L_CLIENT_HELLO);
    tb_pace_step_end(true);
    CHECK(tb_port_now_ns() - t0 < MODEL_NS / 2);
    CHECK_EQ_U(holds(&value), 2);
}

static void test_a_waiting_call_is_not_held_and_other_steps_or_peers_are_not_paced(void) {
    tb_pace_install(one_row, spin_until);
    tb_pace_run(5, true);
    tb_pace_handshake();
    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_CLIENT);
    uint64_t t0 = tb_port_now_ns();
    tb_pace_step_begin(TB_L_CLIENT_HELLO);
    tb_pace_step_end(false); /* want read */
    tb_trace_set_peer(TB_PEER_SERVER);
    tb_pace_step_begin(TB_L_CLIENT_HELLO); /* the server's: no row */
    tb_pace_before_send();
    tb_pace_step_end(true);
    tb_trace_set_peer(TB_PEER_CLIENT);
    tb_pace_step_begin(TB_L_SERVER_HELLO); /* no row */
    tb_pace_step_end(true);
    uint64_t value;
    CHECK_EQ_U(holds(&value), 0);
    CHECK(tb_port_now_ns() - t0 < MODEL_NS / 2);
}

static void test_in_memory_or_without_rows_nothing_is_paced(void) {
    tb_pace_install(one_row, spin_until);
    tb_pace_run(5, false);
    CHECK(!tb_pace_active());
    tb_pace_run(6, true);
    CHECK(!tb_pace_active());
    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_CLIENT);
    tb_pace_step_begin(TB_L_CLIENT_HELLO);
    tb_pace_before_send();
    tb_pace_step_end(true);
    CHECK_EQ_U(tb_trace_buffer.count, 0);
}

int main(void) {
    RUN_TEST(test_a_step_is_held_before_its_send_once);
    RUN_TEST(test_a_waiting_call_is_not_held_and_other_steps_or_peers_are_not_paced);
    RUN_TEST(test_in_memory_or_without_rows_nothing_is_paced);
    return tb_test_report();
}
