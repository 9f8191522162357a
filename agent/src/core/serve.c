/* SPDX-License-Identifier: Apache-2.0 */
/* The framed serve loop (serve.h): HELLO, SUITES, then one answer per controller frame.
 * Portable on purpose: a device runs this over its UART with its own port and backend. */
#include "tlsbench/serve.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tlsbench/messages.h"
#include "tlsbench/protocol.h"
#include "tlsbench/runner.h"

/* Controller frames are small (RUN is 72 bytes): a device port may set this far smaller. */
#ifndef TB_SERVE_FRAME_MAX
#define TB_SERVE_FRAME_MAX (64u * 1024u)
#endif

enum { TB_SERVE_CONTINUE = -1 };

int tb_agent_start(const tb_agent *a, char *err, size_t errlen) {
    tb_trace_reset(); /* peer NONE for whatever the backend's start-up traces */
    return a->backend->init(err, errlen);
}

void tb_agent_calibrate(tb_agent *a) { a->calibration = tb_trace_calibrate(TB_CALIBRATION_PAIRS); }

/* A non-fatal refusal: the agent waits for the next request, unless the channel failed. */
static int tb_refuse(tb_channel *ch, const char *code, const char *message, const char *hint) {
    return tb_send_error(ch, code, message, hint, false) == 0 ? TB_SERVE_CONTINUE : TB_EXIT_PROTOCOL;
}

/* A server agent tells the controller where it listens before its first repetition, so the
 * controller starts the client agent only then (a DTLS ClientHello sent earlier would be
 * lost and cost a retransmission timeout). */
static void tb_ready_frame(void *ctx, const char *transport, const char *where) {
    tb_send_ready(ctx, transport, where);
}

static int tb_sink_channel(void *ctx, const tb_rep_result *r, const tb_trace *t) { return tb_send_rep(ctx, r, t); }

static int tb_serve_run(tb_agent *a, tb_channel *ch, const tb_frame *f) {
    tb_run_request req = {0}; /* read for the hint even when decoding failed */
    tb_run_summary sum;
    const char *code = "bad_request";
    char err[256];
    if (tb_run_request_decode(f->payload, f->length, &req, err, sizeof err) != 0 ||
        tb_run_check(a->backend, &req, &code, err, sizeof err) != 0) {
        const char *hint = strcmp(code, "unknown_suite") == 0 ? "run 'suites' to list them"
                           : req.experiment != 0 ? "run 'experiments' to list them with their sizes"
                                                 : "";
        return tb_refuse(ch, code, err, hint);
    }
    tb_run_on_ready(tb_ready_frame, ch);
    int rc = tb_run(a->backend, &req, tb_sink_channel, ch, &sum);
    if (rc != 0 && sum.refused) /* before any REP: an experiment's setup failed */
        return tb_refuse(ch, sum.refused, sum.first_error, "");
    if (rc != 0)
        return TB_EXIT_PROTOCOL; /* only a failed write stops a checked run: the controller is gone */
    tb_port_clock_check(); /* between RUNs: nothing is being measured; DONE reports it */
    return tb_send_done(ch, req.config_id, &sum) == 0 ? TB_SERVE_CONTINUE : TB_EXIT_PROTOCOL;
}

static int tb_serve_quit(tb_agent *a, tb_channel *ch, const tb_frame *f) {
    (void)a;
    (void)ch;
    (void)f;
    return TB_EXIT_OK;
}

typedef int (*tb_serve_fn)(tb_agent *a, tb_channel *ch, const tb_frame *f);
static const struct {
    uint8_t type;
    tb_serve_fn handle;
} tb_serve_table[] = {
    {TB_FRAME_RUN, tb_serve_run},
    {TB_FRAME_QUIT, tb_serve_quit},
};

static int tb_serve_frame(tb_agent *a, tb_channel *ch, const tb_frame *f) {
    for (size_t i = 0; i < sizeof tb_serve_table / sizeof tb_serve_table[0]; i++)
        if (tb_serve_table[i].type == f->type)
            return tb_serve_table[i].handle(a, ch, f);
    char msg[128];
    snprintf(msg, sizeof msg, "frame type %u is not a controller request", (unsigned)f->type);
    return tb_refuse(ch, "bad_request", msg, "send RUN or QUIT");
}

/* Starts the backend and introduces the agent: HELLO, SUITES. */
static int tb_serve_hello(tb_agent *a, tb_channel *ch) {
    char err[256] = "", msg[320];
    if (tb_agent_start(a, err, sizeof err) != 0) {
        snprintf(msg, sizeof msg, "the %s backend failed to start: %s", a->backend->library_name, err);
        tb_send_error(ch, "internal", msg, "", true);
        return -1;
    }
    tb_agent_calibrate(a);
    return tb_send_hello(ch, a) == 0 && tb_send_suites(ch, a->backend) == 0 ? 0 : -1;
}

int tb_serve(tb_agent *a, tb_channel *ch) {
    static uint8_t frame_buf[TB_SERVE_FRAME_MAX];
    if (tb_serve_hello(a, ch) != 0)
        return TB_EXIT_PROTOCOL;
    for (uint64_t offset = 0;;) {
        tb_frame f;
        tb_frame_status st = tb_frame_read(ch, frame_buf, sizeof frame_buf, &f);
        if (st == TB_FRAME_END)
            return TB_EXIT_OK;
        if (st != TB_FRAME_OK) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s in the frame at stream offset %" PRIu64, tb_frame_status_text(st), offset);
            tb_send_error(ch, "bad_frame", msg, "the stream cannot be resynchronised: restart the agent", true);
            return TB_EXIT_PROTOCOL;
        }
        offset += (uint64_t)TB_FRAME_HEADER_SIZE + f.length + TB_FRAME_TRAILER_SIZE;
        int rc = tb_serve_frame(a, ch, &f);
        if (rc != TB_SERVE_CONTINUE)
            return rc;
    }
}
