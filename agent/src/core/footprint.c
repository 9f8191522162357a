/* SPDX-License-Identifier: Apache-2.0 */
/* Memory footprint per peer (footprint.h). The stack is painted again at every hand-over, so
 * each peer's depth is measured only while its own calls run; heap peaks come from the port,
 * which charges each allocation to the owner of the moment. */
#include "tlsbench/footprint.h"

#include <stdbool.h>
#include <stddef.h>

#include "tlsbench/port.h"
#include "tlsbench/trace.h"

static struct {
    const tb_memory_probes *probes; /* NULL: nothing to measure in this repetition */
    uint8_t owner;                  /* who runs now: TB_PEER_CLIENT, _SERVER or _NONE */
    bool ran[2];                    /* which peers ran in this repetition (one in two-process mode) */
    uint32_t stack[2];              /* deepest stack seen per peer */
    uint64_t allocated[2];          /* bytes each peer had allocated when the repetition began */
    uint64_t step_allocated;        /* bytes the owner had allocated when its step call began */
} tb_fp;

static void tb_fp_emit(uint8_t peer, uint16_t label, uint64_t bytes) {
    uint8_t was = tb_trace_buffer.peer;
    tb_trace_set_peer(peer);
    tb_instant(label, bytes);
    tb_trace_set_peer(was);
}

/* The stack the current owner used since the last paint is its; then a fresh paint. */
static void tb_fp_stack_settle(void) {
    if (tb_fp.owner <= TB_PEER_SERVER) {
        uint32_t depth = tb_fp.probes->stack_high_water();
        if (depth > tb_fp.stack[tb_fp.owner])
            tb_fp.stack[tb_fp.owner] = depth;
    }
    tb_fp.probes->stack_paint();
}

static void tb_fp_hand_to(uint8_t owner) {
    tb_fp_stack_settle();
    tb_fp.owner = owner;
    tb_fp.probes->heap_owner(owner);
}

void tb_footprint_begin(void) {
    tb_fp.probes = tb_port_memory_probes();
    if (!tb_fp.probes)
        return;
    tb_fp.owner = TB_PEER_NONE;
    tb_fp.ran[0] = tb_fp.ran[1] = false;
    tb_fp.stack[0] = tb_fp.stack[1] = 0;
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++)
        tb_fp.allocated[p] = tb_fp.probes->heap_allocated ? tb_fp.probes->heap_allocated(p) : 0;
    tb_fp_hand_to(TB_PEER_NONE);
    if (tb_fp.probes->heap_repetition_zero)
        tb_fp.probes->heap_repetition_zero();
    tb_fp.probes->heap_peaks_restart();
    tb_fp_emit(TB_PEER_NONE, TB_L_HEAP_SHARED, tb_fp.probes->heap_live(TB_PEER_NONE));
}

void tb_footprint_enter(uint8_t peer) {
    if (!tb_fp.probes || peer > TB_PEER_SERVER || peer == tb_fp.owner)
        return;
    tb_fp.ran[peer] = true;
    tb_fp_hand_to(peer);
}

/* One record per peer that ran, then every peak restarts from what is held now. */
static void tb_fp_heap_records(uint16_t peak_label, uint16_t live_label) {
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++) {
        if (!tb_fp.ran[p])
            continue;
        tb_fp_emit(p, peak_label, tb_fp.probes->heap_peak(p));
        if (live_label)
            tb_fp_emit(p, live_label, tb_fp.probes->heap_live(p));
    }
    tb_fp.probes->heap_peaks_restart();
}

void tb_footprint_handshake_end(void) {
    if (!tb_fp.probes)
        return;
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++)
        if (tb_fp.ran[p] && tb_fp.probes->heap_allocated)
            tb_fp_emit(p, TB_L_HEAP_ALLOCATED_HANDSHAKE, tb_fp.probes->heap_allocated(p) - tb_fp.allocated[p]);
    tb_fp_heap_records(TB_L_HEAP_PEAK_HANDSHAKE, TB_L_HEAP_KEPT);
}

/* Per step: only ports whose probes measure steps (posix), only inside a peer's turn. */
static bool tb_fp_steps(void) {
    return tb_fp.probes && tb_fp.probes->heap_step_restart && tb_fp.owner <= TB_PEER_SERVER;
}

void tb_footprint_step_begin(void) {
    if (!tb_fp_steps())
        return;
    tb_fp_stack_settle();
    tb_fp.probes->heap_step_restart();
    tb_fp.step_allocated = tb_fp.probes->heap_allocated(tb_fp.owner);
}

void tb_footprint_step_end(void) {
    if (!tb_fp_steps())
        return;
    uint8_t p = tb_fp.owner;
    uint32_t depth = tb_fp.probes->stack_high_water();
    if (depth > tb_fp.stack[p])
        tb_fp.stack[p] = depth;
    tb_fp_emit(p, TB_L_HEAP_STEP_PEAK, tb_fp.probes->heap_step_peak(p));
    tb_fp_emit(p, TB_L_HEAP_STEP_ALLOCATED, tb_fp.probes->heap_allocated(p) - tb_fp.step_allocated);
    tb_fp_emit(p, TB_L_STACK_STEP, depth);
}

void tb_footprint_connected_end(void) {
    if (tb_fp.probes)
        tb_fp_heap_records(TB_L_HEAP_PEAK_CONNECTED, 0);
}

void tb_footprint_end(void) {
    if (!tb_fp.probes)
        return;
    tb_fp_hand_to(TB_PEER_NONE);
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++)
        if (tb_fp.ran[p])
            tb_fp_emit(p, TB_L_STACK_HIGH_WATER, tb_fp.stack[p]);
}
