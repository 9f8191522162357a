/* SPDX-License-Identifier: Apache-2.0 */
/* Experiment RUNs (RUN offset 66 != 0; docs/experiments.md): setup once, untraced; the
 * warm-up repetitions; then per shipped repetition a REPETITION phase (marker high, CPU time
 * at both ends) holding one MEASURED_BLOCK span around the block, its USER_GROUP spans
 * inside; teardown last. Everything here is peer NONE: there is no connection. */
#include <stdarg.h>
#include <stdio.h>

#include "tlsbench/experiment_run.h"
#include "tlsbench/runner.h"

typedef struct tb_xrep {
    const tb_experiment *e;
    const tb_run_request *req;
    void *state;
    tb_rep_result res;
    char err[192];
} tb_xrep;

/* Why a block that returned 0 was discarded, by TB_DISCARD_GROUP_* code. */
static const struct {
    int32_t code;
    const char *text;
} tb_group_faults[] = {
    {TB_DISCARD_GROUP_INDEX, "a group index outside the experiment's groups"},
    {TB_DISCARD_GROUP_ORDER, "tb_group_end of a group that is not the innermost open one"},
    {TB_DISCARD_GROUP_OPEN, "groups still open when the block returned"},
    {TB_DISCARD_GROUP_DEPTH, "more nested groups than TB_EXPERIMENT_MAX_GROUPS"},
};

static const char *tb_group_fault_text(int32_t code) {
    for (size_t i = 0; i < sizeof tb_group_faults / sizeof tb_group_faults[0]; i++)
        if (tb_group_faults[i].code == code)
            return tb_group_faults[i].text;
    return "unknown";
}

/* The block's own nonzero code wins: a block that bails out inside a group leaves it open
 * as a consequence, and its code says why. */
static void tb_xrep_verdict(tb_xrep *x, int rc, int32_t fault) {
    if (rc != 0) {
        x->res.status = TB_STATUS_DISCARDED;
        x->res.error_code = rc;
        snprintf(x->err, sizeof x->err, "%s: the measured block returned %d", x->e->name, rc);
    } else if (fault != 0) {
        x->res.status = TB_STATUS_DISCARDED;
        x->res.error_code = fault;
        snprintf(x->err, sizeof x->err, "%s: discarded (%ld): %s", x->e->name, (long)fault,
                 tb_group_fault_text(fault));
    }
}

/* The block's wall and CPU time go to the REP header's handshake fields, read directly (not
 * through the tracer) so the notrace agent reports them too, as for a handshake. The CPU
 * clock (a system call, ~0.5 µs here) is read outside the wall-clock reads: a block of a
 * few hundred ns would otherwise show mostly the clock's cost. */
static void tb_xrep_run(tb_xrep *x, uint32_t index, uint32_t flags) {
    x->res = (tb_rep_result){.config_id = x->req->config_id, .index = index, .status = TB_STATUS_OK,
                             .failed_peer = TB_PEER_NONE, .flags = flags, .role = TB_ROLE_BOTH};
    x->err[0] = '\0';
    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_NONE);
    int marked = !(flags & TB_FLAG_WARMUP); /* as for a handshake (runner.c): shipped ones only */
    if (marked)
        tb_marker_wait_low();
    tb_runqueue_mark mark = tb_runqueue_before();
    x->res.start_ns = tb_port_now_ns();
    tb_begin_phase(TB_L_REPETITION);
    if (marked)
        tb_port_marker(1);
    tb_groups_arm(x->e);
    uint64_t c0 = tb_port_cpu_ns(), w0 = tb_port_now_ns();
    tb_begin(TB_L_MEASURED_BLOCK);
    int rc = x->e->measure(x->state);
    int32_t fault = tb_groups_disarm(); /* closes open groups inside MEASURED_BLOCK */
    tb_end(TB_L_MEASURED_BLOCK, (uint64_t)(int64_t)rc);
    uint64_t w1 = tb_port_now_ns(), c1 = tb_port_cpu_ns();
    x->res.handshake_wall_ns = w1 - w0;
    x->res.handshake_cpu_ns = c1 - c0;
    tb_xrep_verdict(x, rc, fault);
    if (marked)
        tb_port_marker(0);
    tb_end_phase(TB_L_REPETITION, x->res.status);
    x->res.repetition_wall_ns = tb_port_now_ns() - x->res.start_ns;
    if (marked)
        tb_marker_note_low();
    tb_runqueue_after(mark);
    if (tb_trace_buffer.dropped > 0)
        x->res.flags |= TB_FLAG_TRACE_OVERFLOW;
}

static int tb_xcheck_fail(const char **code, const char *name, char *err, size_t errlen, const char *fmt, ...) {
    *code = name;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int tb_experiment_check(const tb_run_request *req, const char **code, char *err, size_t errlen) {
    unsigned n = tb_experiment_count();
    const tb_experiment *e = tb_experiment_get(req->experiment);
    if (!e && n == 0)
        return tb_xcheck_fail(code, "unsupported", err, errlen, "experiment %u: this agent has no experiments",
                              (unsigned)req->experiment);
    if (!e)
        return tb_xcheck_fail(code, "unsupported", err, errlen,
                              "experiment %u is not in this agent: valid ids are 1 .. %u (HELLO experiments)",
                              (unsigned)req->experiment, n);
    if (!e->measure)
        return tb_xcheck_fail(code, "unsupported", err, errlen, "experiment %s has no measured block", e->name);
    uint32_t max = tb_experiment_max_size(e);
    if (max == 0 && req->total_bytes != 0)
        return tb_xcheck_fail(code, "unsupported", err, errlen,
                              "experiment %s takes no size: the RUN's size must be 0, not %u", e->name,
                              (unsigned)req->total_bytes);
    if (max != 0 && (req->total_bytes == 0 || req->total_bytes > max))
        return tb_xcheck_fail(code, "unsupported", err, errlen, "experiment %s: size %u is not in 1 .. %u",
                              e->name, (unsigned)req->total_bytes, (unsigned)max);
    if (req->repetitions == 0)
        return tb_xcheck_fail(code, "bad_request", err, errlen, "repetitions must be at least 1");
    return 0;
}

int tb_experiment_run(const tb_run_request *req, tb_rep_sink sink, void *ctx, tb_run_summary *summary) {
    tb_xrep x = {.e = tb_experiment_get(req->experiment), .req = req};
    char err[160] = "";
    if (x.e->setup && x.e->setup(&x.state, req->total_bytes, err, sizeof err) != 0) {
        summary->refused = "unsupported";
        snprintf(summary->first_error, sizeof summary->first_error, "experiment %s: setup (size %u) failed: %s",
                 x.e->name, (unsigned)req->total_bytes, err[0] ? err : "no reason given");
        return -1;
    }
    int rc = 0;
    for (uint32_t i = 0; i < req->warmup; i++)
        tb_xrep_run(&x, req->first_index, TB_FLAG_WARMUP);
    for (uint32_t i = 0; i < req->repetitions && rc == 0; i++) {
        tb_xrep_run(&x, req->first_index + i, 0);
        if (x.res.status != TB_STATUS_OK && summary->failed++ == 0)
            snprintf(summary->first_error, sizeof summary->first_error, "%s", x.err);
        if (sink && sink(ctx, &x.res, &tb_trace_buffer) != 0)
            rc = -1;
        else
            summary->shipped++;
    }
    if (x.e->teardown)
        x.e->teardown(x.state);
    return rc;
}
