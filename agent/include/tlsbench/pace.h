/* SPDX-License-Identifier: Apache-2.0 */
/* Pacing (docs/networks.md "Paced peers"): a host agent takes, for each handshake step, as
 * long as the chosen part takes by the cycle model. The controller computes each step's
 * modelled ns (a device run's counts through the one conversion) and hands a table to the
 * agent (the posix port reads it from the file named by TLSBENCH_PACE, at every RUN).
 *
 * A step's modelled time is its share of the handshake: the sum over its calls. A call holds
 * (a PACE_HOLD span nested in the step) before its first send, so its message leaves when the
 * part would have computed it, and again at its end when it completed (a call that returned
 * "want read" is not held: the part would wait too); what a call spends of the budget is its
 * time outside I/O, holds included. Nothing is paced without a table: every hook is a test. */
#ifndef TLSBENCH_PACE_H
#define TLSBENCH_PACE_H
#include <stdbool.h>
#include <stdint.h>

/* One row of the table: the modelled ns of a step label of a peer in a configuration. */
typedef struct tb_pace_row {
    uint32_t config_id;
    uint8_t peer;
    uint16_t label;
    uint64_t ns;
} tb_pace_row;

/* Fills `rows` (at most `max`) with the rows of `config_id`; returns how many (0: unpaced). */
typedef uint32_t (*tb_pace_loader)(uint32_t config_id, tb_pace_row *rows, uint32_t max);
/* Sleeps until the port's clock reads `deadline_ns` (tb_port_now_ns's time line). */
typedef void (*tb_pace_sleeper)(uint64_t deadline_ns);

/* Set by a port that paces (the posix serve loop); a device never does. */
void tb_pace_install(tb_pace_loader load, tb_pace_sleeper sleep);

/* The posix port's: the table from the file TLSBENCH_PACE names (src/posix/posix_pace.c). */
void tb_posix_pace_install(void);

extern uint32_t tb_pace_n; /* the rows of the RUN in progress: 0, unpaced */
static inline bool tb_pace_active(void) { return tb_pace_n > 0; }

void tb_pace_run(uint32_t config_id, bool over_network); /* a RUN begins: its rows (none in memory) */
void tb_pace_handshake(void);         /* a handshake begins: every step's budget is whole again */
void tb_pace_before_send(void);
void tb_pace_io(uint64_t ns);          /* one I/O call inside the step took ns */
void tb_pace_paced_step_begin(uint16_t label);
void tb_pace_paced_step_end(bool completed);

/* The backends' step hooks sit inside the step's traced span: unpaced (every device, every
 * run in memory), they are a test of one variable and no call. */
static inline void tb_pace_step_begin(uint16_t label) {
    if (tb_pace_active())
        tb_pace_paced_step_begin(label);
}
static inline void tb_pace_step_end(bool completed) {
    if (tb_pace_active())
        tb_pace_paced_step_end(completed);
}

#endif
