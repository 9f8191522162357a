/* SPDX-License-Identifier: Apache-2.0 */
/* Pacing a host agent at a part's modelled speed (tlsbench/pace.h). */
#include "tlsbench/pace.h"

#include "tlsbench/trace.h"

#define TB_PACE_MAX 96u /* steps of both peers of one configuration, with room */

static tb_pace_loader tb_pace_load;
static tb_pace_sleeper tb_pace_sleep;
static tb_pace_row tb_pace_rows[TB_PACE_MAX];
static uint64_t tb_pace_left[TB_PACE_MAX]; /* budget left in this handshake, per row */
uint32_t tb_pace_n;

/* The step call in progress (steps do not nest). */
static struct {
    int row; /* -1: not paced */
    uint64_t start, io;
    bool held_send;
} tb_pace_call = {-1, 0, 0, false};

void tb_pace_install(tb_pace_loader load, tb_pace_sleeper sleep) {
    tb_pace_load = load;
    tb_pace_sleep = sleep;
}

void tb_pace_run(uint32_t config_id, bool over_network) {
    tb_pace_n = over_network && tb_pace_load && tb_pace_sleep ? tb_pace_load(config_id, tb_pace_rows, TB_PACE_MAX) : 0;
    tb_pace_call.row = -1;
}

void tb_pace_handshake(void) {
    for (uint32_t i = 0; i < tb_pace_n; i++)
        tb_pace_left[i] = tb_pace_rows[i].ns;
}

void tb_pace_paced_step_begin(uint16_t label) {
    tb_pace_call.row = -1;
    uint8_t peer = tb_trace_buffer.peer;
    for (uint32_t i = 0; i < tb_pace_n; i++)
        if (tb_pace_rows[i].label == label && tb_pace_rows[i].peer == peer) {
            tb_pace_call.row = (int)i;
            tb_pace_call.start = tb_port_now_ns();
            tb_pace_call.io = 0;
            tb_pace_call.held_send = false;
            return;
        }
}

/* Holds until the step's budget (plus its I/O so far) has passed since the call began: a
 * PACE_HOLD span whose STOP value says by how much the host's own work overran it. */
static void tb_pace_hold(void) {
    uint64_t deadline = tb_pace_call.start + tb_pace_left[tb_pace_call.row] + tb_pace_call.io;
    tb_begin(TB_L_PACE_HOLD);
    uint64_t now = tb_port_now_ns();
    if (now < deadline)
        tb_pace_sleep(deadline);
    tb_end(TB_L_PACE_HOLD, now < deadline ? 0 : now - deadline);
}

void tb_pace_before_send(void) {
    if (tb_pace_call.row < 0 || tb_pace_call.held_send)
        return;
    tb_pace_call.held_send = true;
    tb_pace_hold();
}

void tb_pace_io(uint64_t ns) {
    if (tb_pace_call.row >= 0)
        tb_pace_call.io += ns;
}

void tb_pace_paced_step_end(bool completed) {
    if (tb_pace_call.row < 0)
        return;
    if (completed && !tb_pace_call.held_send) /* a step that sent was held before it: the part's work came first */
        tb_pace_hold();
    uint64_t spent = tb_port_now_ns() - tb_pace_call.start - tb_pace_call.io;
    uint64_t *left = &tb_pace_left[tb_pace_call.row];
    *left = spent >= *left ? 0 : *left - spent;
    tb_pace_call.row = -1;
}
