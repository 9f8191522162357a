/* SPDX-License-Identifier: Apache-2.0 */
/* Executes RUN requests. One repetition = fresh transport and sessions, then the phases
 * of tb_phases[] in order, stopping at the first that fails; teardown always runs.
 * Phase spans are emitted here with peer NONE; the peer is set before every call into
 * a peer so the backend's step/crypto spans and our I/O spans carry the right peer.
 *
 * Two modes, one code path: role "both" drives both peers in this thread over the memory
 * transport (a peer's turn ends when it needs the other's bytes); role "client"/"server"
 * drives the one local peer over a socket, and where it needs the other agent's bytes the
 * runner waits (poll) in a WAIT span, bounded by the library's DTLS retransmission timer,
 * then steps again. docs/networks.md. Experiment RUNs take their own path
 * (runner_experiment.c).
 *
 * Two-process waits derive from the RUN's DTLS timer (docs/networks.md "Timeouts"): an agent
 * gives a phase up after G, a server waits 2 G + margin for its next client, and a DTLS
 * server that sent the last flight lingers: the finished session answers its client's
 * retransmissions while the server waits for the next ClientHello. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tlsbench/experiment_run.h"
#include "tlsbench/footprint.h"
#include "tlsbench/pace.h"
#include "tlsbench/port.h"
#include "tlsbench/runner.h"
#include "tlsbench/transport.h"

/* 50 µs on a host: five samples of a 100 kHz analyzer (a PPK2's rate). */
#define TB_MARKER_MIN_LOW 50000u
static uint64_t tb_marker_low_since;

void tb_marker_wait_low(void) {
    if (!tb_port_marker_enabled())
        return;
    while (tb_port_now_ns() - tb_marker_low_since < TB_MARKER_MIN_LOW) {
    }
}

void tb_marker_note_low(void) { tb_marker_low_since = tb_port_now_ns(); }

/* Safety nets against a backend that never stops: far above any real handshake. */
#define TB_MAX_TURNS 256u
#define TB_MAX_STEPS_PER_TURN 1024u
#define TB_MAX_IDLE_READS 64u
#define TB_MAX_NET_TURNS 4096u      /* one local peer: a turn per arrival or timer expiry */

typedef struct tb_rep {
    const tb_backend *b;
    const tb_run_request *req;
    const tb_transport_ops *tops;
    tb_conn_config cfg;
    tb_transport *link;
    uint32_t conn;      /* the connection's number on the wire (the repetition's; warm-ups below) */
    tb_io raw[2][2];    /* untraced endpoints per slot, wrapped by tb_traced_io */
    uint8_t slot;       /* this repetition's raw[] slot; a lingering session keeps the other */
    tb_session *s[2];
    bool local[2];      /* which peers run in this agent (both in memory mode) */
    bool one_peer;      /* two-process mode: one local peer, the other is another agent */
    tb_rep_result res;
    uint32_t retrans;   /* the local sessions' DTLS retransmissions, read before they are freed */
    uint32_t give_up_ms; /* G: how long one two-process phase may wait for the other agent */
    tb_session *linger_s;      /* a DTLS server's finished session, answering retransmissions */
    tb_transport *linger_link; /* and its association */
    char prepare_err[160]; /* why the transport could not be prepared for this RUN ("" = ok) */
    char err[TB_REP_REASON_MAX + 1];
} tb_rep;

static tb_ready_fn tb_ready_hook;
static void *tb_ready_ctx;

void tb_run_on_ready(tb_ready_fn fn, void *ctx) {
    tb_ready_hook = fn;
    tb_ready_ctx = ctx;
}

static uint8_t tb_other(uint8_t peer) { return peer == TB_PEER_CLIENT ? TB_PEER_SERVER : TB_PEER_CLIENT; }

/* The runner is about to call into peer p: its records, allocations and stack are p's. */
static void tb_enter(uint8_t p) {
    tb_trace_set_peer(p);
    tb_footprint_enter(p);
}
static const char *tb_peer_str(uint8_t peer) { return tb_peer_name(peer) ? tb_peer_name(peer) : "?"; }

/* Records the first failure of a repetition: status, peer, library code and a message. */
static int tb_rep_fail(tb_rep *rep, uint8_t status, uint8_t peer, int32_t lib, const char *fmt, ...) {
    if (rep->res.status != TB_STATUS_OK)
        return -1;
    rep->res.status = status;
    rep->res.failed_peer = peer;
    rep->res.error_code = lib;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rep->err, sizeof rep->err, fmt, ap);
    va_end(ap);
    if (lib != 0 && n >= 0 && (size_t)n < sizeof rep->err) {
        char text[128];
        uint32_t mag = lib < 0 ? (uint32_t)(-(int64_t)lib) : (uint32_t)lib;
        rep->b->error_text(lib, text, sizeof text);
        snprintf(rep->err + n, sizeof rep->err - (size_t)n, ": %s0x%04X %s", lib < 0 ? "-" : "", (unsigned)mag, text);
    }
    const tb_memory_probes *m = tb_port_memory_probes();
    size_t used = strlen(rep->err);
    if (m && m->heap_refused && used + 3 < sizeof rep->err) { /* why the library ran out of memory */
        memcpy(rep->err + used, "; ", 2);
        if (!m->heap_refused(rep->err + used + 2, sizeof rep->err - used - 2))
            rep->err[used] = '\0';
    }
    return -1;
}

/* ---------------------------------------------------------------- traced I/O */
/* A paced step (tlsbench/pace.h) holds before its first send and counts its I/O apart from
 * its work; unpaced, the wrappers read no extra clock. */
static int tb_traced_send(void *ctx, const uint8_t *buf, size_t len) {
    const tb_io *raw = ctx;
    bool paced = tb_pace_active();
    if (paced)
        tb_pace_before_send();
    uint64_t t0 = paced ? tb_port_now_ns() : 0;
    tb_begin(TB_L_SEND);
    int n = raw->send(raw->ctx, buf, len);
    tb_end(TB_L_SEND, n > 0 ? (uint64_t)n : 0);
    if (paced)
        tb_pace_io(tb_port_now_ns() - t0);
    return n;
}

static int tb_traced_recv(void *ctx, uint8_t *buf, size_t len) {
    const tb_io *raw = ctx;
    bool paced = tb_pace_active();
    uint64_t t0 = paced ? tb_port_now_ns() : 0;
    tb_begin(TB_L_RECV);
    int n = raw->recv(raw->ctx, buf, len);
    tb_end(TB_L_RECV, n > 0 ? (uint64_t)n : 0);
    if (paced)
        tb_pace_io(tb_port_now_ns() - t0);
    return n;
}

tb_io tb_traced_io(tb_io *raw) {
    return (tb_io){.send = tb_traced_send, .recv = tb_traced_recv, .ctx = raw};
}

/* ---------------------------------------------------------------- linger */
static uint8_t tb_rx[TB_MAX_RECORD_SIZE];

/* The lingering association's datagram goes to its finished session: the library resends its
 * last flight when the client retransmitted its own. That work belongs to the previous
 * repetition: it is left out of this trace, which keeps one LINGER instant (bytes sent). A
 * read error (the client's close_notify, or anything else) ends the association. */
static int tb_linger_answer(void *ctx) {
    tb_rep *rep = ctx;
    tb_link_counters before, after;
    int32_t lib = 0;
    rep->tops->stats(rep->linger_link, &before);
    tb_trace_mark mark = tb_trace_here();
    tb_trace_set_peer(TB_PEER_SERVER);
    int n = rep->b->read(rep->linger_s, tb_rx, sizeof tb_rx, &lib);
    tb_trace_rewind(mark);
    rep->tops->stats(rep->linger_link, &after);
    tb_trace_set_peer(TB_PEER_SERVER);
    tb_instant(TB_L_LINGER, after.bytes[TB_PEER_SERVER] - before.bytes[TB_PEER_SERVER]);
    tb_trace_set_peer(mark.peer);
    if (n != -1)
        return 0;
    rep->b->session_free(rep->linger_s);
    rep->linger_s = NULL;
    return -1;
}

/* Only a DTLS server that finished sends the last flight; TCP retransmits on its own. */
static bool tb_may_linger(const tb_rep *rep) {
    return rep->one_peer && rep->local[TB_PEER_SERVER] && rep->cfg.protocol == TB_PROTOCOL_KIND_DTLS &&
           rep->tops->linger && rep->res.status == TB_STATUS_OK;
}

static void tb_end_linger(tb_rep *rep) {
    if (rep->linger_s)
        rep->b->session_free(rep->linger_s);
    if (rep->linger_link)
        rep->tops->close(rep->linger_link);
    rep->linger_s = NULL;
    rep->linger_link = NULL;
}

/* ---------------------------------------------------------------- phases */
static int tb_setup(tb_rep *rep) {
    char err[TB_REP_REASON_MAX + 1] = "";
    if (rep->prepare_err[0])
        return tb_rep_fail(rep, TB_STATUS_SETUP_FAILED, TB_PEER_NONE, 0, "setup: transport %s: %s",
                           rep->tops->name, rep->prepare_err);
    rep->slot ^= 1u;
    rep->link = rep->tops->open(rep->conn, err, sizeof err);
    tb_end_linger(rep); /* the next client came (or never will): the last one is done */
    if (!rep->link)
        return tb_rep_fail(rep, TB_STATUS_SETUP_FAILED, TB_PEER_NONE, 0, "setup: transport %s: %s",
                           rep->tops->name, err);
    rep->cfg.peer_id_len = (uint8_t)rep->tops->peer_id(rep->link, rep->cfg.peer_id, sizeof rep->cfg.peer_id);
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++) {
        if (!rep->local[p])
            continue;
        rep->raw[rep->slot][p] = rep->tops->endpoint(rep->link, p);
        tb_enter(p);
        rep->s[p] = rep->b->session_new(p, &rep->cfg, tb_traced_io(&rep->raw[rep->slot][p]), err, sizeof err);
        if (!rep->s[p])
            return tb_rep_fail(rep, TB_STATUS_SETUP_FAILED, p, 0, "setup: %s: %s", tb_peer_str(p), err);
    }
    return 0;
}

/* One peer steps until it must wait for the other (or finishes, or fails). */
static tb_step_result tb_peer_turn(tb_rep *rep, uint8_t p, int32_t *lib) {
    tb_step_result r = TB_STEP_CONTINUE;
    tb_enter(p);
    tb_begin(TB_L_PEER_TURN);
    for (uint32_t i = 0; r == TB_STEP_CONTINUE && i < TB_MAX_STEPS_PER_TURN; i++) {
        tb_footprint_step_begin();
        r = rep->b->step(rep->s[p], lib);
        tb_footprint_step_end();
    }
    tb_end(TB_L_PEER_TURN, (uint64_t)r);
    return r;
}

enum { TB_PS_READY, TB_PS_WAITING, TB_PS_DONE };

/* A peer may take a turn if it has not waited yet, or if bytes arrived for it. */
static int tb_runnable(const tb_rep *rep, const uint8_t *state, uint8_t p) {
    return state[p] == TB_PS_READY || (state[p] == TB_PS_WAITING && rep->tops->pending(rep->link, p));
}

static int tb_handshake_loop(tb_rep *rep) {
    uint8_t state[2] = {TB_PS_READY, TB_PS_READY};
    uint8_t last = TB_PEER_SERVER; /* so the client opens */
    for (uint32_t turn = 0; state[0] != TB_PS_DONE || state[1] != TB_PS_DONE; turn++) {
        uint8_t p = tb_runnable(rep, state, tb_other(last)) ? tb_other(last) : last;
        if (!tb_runnable(rep, state, p) || turn == TB_MAX_TURNS)
            return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, TB_PEER_NONE, 0,
                               "handshake: deadlock after %u turns: no peer can progress", (unsigned)turn);
        int32_t lib = 0;
        switch (tb_peer_turn(rep, p, &lib)) {
        case TB_STEP_WANT_READ: state[p] = TB_PS_WAITING; break;
        case TB_STEP_DONE: state[p] = TB_PS_DONE; break;
        case TB_STEP_CONTINUE:
            return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, p, 0,
                               "handshake: %s: still stepping after %u steps", tb_peer_str(p),
                               TB_MAX_STEPS_PER_TURN);
        case TB_STEP_ERROR:
        default:
            return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, p, lib, "handshake: %s", tb_peer_str(p));
        }
        last = p;
    }
    return 0;
}

/* Two-process mode: the local peer needs the other agent's bytes. Waits in a WAIT span
 * until they arrive, the library's DTLS timer expires (then the caller steps again and the
 * library retransmits) or the phase's deadline passes (-1, the repetition failed). */
static int tb_wait_peer(tb_rep *rep, uint8_t p, uint64_t deadline, uint8_t status, const char *phase) {
    uint64_t now = tb_port_now_ns();
    if (now >= deadline)
        return tb_rep_fail(rep, status, p, 0, "%s: %s: nothing from the other agent within %u ms", phase,
                           tb_peer_str(p), (unsigned)rep->give_up_ms);
    uint64_t left = (deadline - now) / 1000000u + 1u;
    uint32_t timer = rep->b->timeout_ms ? rep->b->timeout_ms(rep->s[p]) : TB_NO_TIMER;
    uint32_t ms = timer < left ? timer : (uint32_t)left;
    tb_trace_set_peer(p);
    tb_begin(TB_L_WAIT);
    int rc = rep->tops->wait(rep->link, p, ms);
    tb_end(TB_L_WAIT, rc == TB_WAIT_READY);
    const char *why = rep->tops->why ? rep->tops->why(rep->link) : "";
    if (rc == TB_WAIT_ERROR)
        return tb_rep_fail(rep, status, p, 0, "%s: %s: %s", phase, tb_peer_str(p),
                           why[0] ? why : "the connection failed while waiting");
    return 0;
}

static uint64_t tb_deadline(const tb_rep *rep) { return tb_port_now_ns() + (uint64_t)rep->give_up_ms * 1000000u; }

static uint8_t tb_local_peer(const tb_rep *rep) { return rep->local[TB_PEER_CLIENT] ? TB_PEER_CLIENT : TB_PEER_SERVER; }

/* Two-process mode: the one local peer steps; between its turns the network brings bytes. */
static int tb_handshake_one(tb_rep *rep) {
    uint8_t p = tb_local_peer(rep);
    uint64_t deadline = tb_deadline(rep);
    for (uint32_t turn = 0; turn < TB_MAX_NET_TURNS; turn++) {
        int32_t lib = 0;
        switch (tb_peer_turn(rep, p, &lib)) {
        case TB_STEP_DONE: return 0;
        case TB_STEP_WANT_READ: break;
        case TB_STEP_CONTINUE:
            return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, p, 0, "handshake: %s: still stepping after %u steps",
                               tb_peer_str(p), TB_MAX_STEPS_PER_TURN);
        case TB_STEP_ERROR:
        default:
            return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, p, lib, "handshake: %s", tb_peer_str(p));
        }
        if (tb_wait_peer(rep, p, deadline, TB_STATUS_HANDSHAKE_FAILED, "handshake") != 0)
            return -1;
    }
    return tb_rep_fail(rep, TB_STATUS_HANDSHAKE_FAILED, p, 0, "handshake: %s: no end after %u turns", tb_peer_str(p),
                       TB_MAX_NET_TURNS);
}

/* Wall and CPU time are read directly, not through the tracer: the notrace build has them. */
static int tb_handshake(tb_rep *rep) {
    tb_pace_handshake();
    uint64_t w0 = tb_port_now_ns(), c0 = tb_port_cpu_ns();
    int rc = rep->one_peer ? tb_handshake_one(rep) : tb_handshake_loop(rep);
    uint64_t c1 = tb_port_cpu_ns(), w1 = tb_port_now_ns();
    rep->res.handshake_wall_ns = w1 - w0;
    rep->res.handshake_cpu_ns = c1 - c0;
    return rc;
}

/* Application data: a deterministic pattern per (writer, offset), so a lost, reordered or
 * reflected byte shows up as a mismatch. Static buffers (tb_rx above): no allocation per record. */
static uint8_t tb_tx[TB_MAX_RECORD_SIZE];

static void tb_pattern(uint8_t *buf, uint32_t offset, uint32_t len, uint8_t writer) {
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (uint8_t)((offset + i) * 167u + writer * 89u + 1u);
}

static int tb_write_record(tb_rep *rep, uint8_t w, uint32_t len) {
    int32_t lib = 0;
    tb_enter(w);
    for (uint32_t sent = 0; sent < len;) {
        tb_begin(TB_L_RECORD_WRITE);
        int n = rep->b->write(rep->s[w], tb_tx + sent, len - sent, &lib);
        tb_end(TB_L_RECORD_WRITE, n > 0 ? (uint64_t)n : 0);
        if (n <= 0)
            return tb_rep_fail(rep, TB_STATUS_DATA_FAILED, w, lib, "data: %s: write returned %d after %u of %u bytes",
                               tb_peer_str(w), n, (unsigned)sent, (unsigned)len);
        sent += (uint32_t)n;
    }
    return 0;
}

/* Each read call is one span; a would-block read is retried only while bytes are pending
 * (memory) or after a WAIT for the other agent's bytes (two-process mode). */
static int tb_read_record(tb_rep *rep, uint8_t r, uint32_t len) {
    int32_t lib = 0;
    uint32_t idle = 0;
    uint64_t deadline = rep->one_peer ? tb_deadline(rep) : 0;
    tb_enter(r);
    for (uint32_t got = 0; got < len;) {
        tb_begin(TB_L_RECORD_READ);
        int n = rep->b->read(rep->s[r], tb_rx + got, len - got, &lib);
        tb_end(TB_L_RECORD_READ, n > 0 ? (uint64_t)n : 0);
        if (n > 0) {
            got += (uint32_t)n;
            idle = 0;
            continue;
        }
        if (n == TB_IO_WOULD_BLOCK && rep->one_peer) {
            if (tb_wait_peer(rep, r, deadline, TB_STATUS_DATA_FAILED, "data") != 0)
                return -1;
            tb_trace_set_peer(r);
            continue;
        }
        if (n == TB_IO_WOULD_BLOCK && rep->tops->pending(rep->link, r) && ++idle < TB_MAX_IDLE_READS)
            continue;
        return tb_rep_fail(rep, TB_STATUS_DATA_FAILED, r, lib, "data: %s: read returned %d after %u of %u bytes",
                           tb_peer_str(r), n, (unsigned)got, (unsigned)len);
    }
    return 0;
}

/* Each agent does its own peer's half: the writer writes, the reader reads and checks. */
static int tb_move_record(tb_rep *rep, uint8_t w, uint32_t offset, uint32_t len) {
    tb_pattern(tb_tx, offset, len, w);
    if (rep->local[w] && tb_write_record(rep, w, len) != 0)
        return -1;
    if (!rep->local[tb_other(w)])
        return 0;
    if (tb_read_record(rep, tb_other(w), len) != 0)
        return -1;
    for (uint32_t i = 0; i < len; i++)
        if (tb_rx[i] != tb_tx[i])
            return tb_rep_fail(rep, TB_STATUS_DATA_FAILED, tb_other(w), 0,
                               "data: %s received a wrong byte at offset %u", tb_peer_str(tb_other(w)),
                               (unsigned)(offset + i));
    return 0;
}

/* Who writes each record, per direction ("both": the client's record, then the server's). */
static const struct {
    uint8_t n;
    uint8_t writers[2];
} tb_legs[] = {
    [TB_DIRECTION_NONE] = {0, {0, 0}},
    [TB_DIRECTION_C2S] = {1, {TB_PEER_CLIENT, 0}},
    [TB_DIRECTION_S2C] = {1, {TB_PEER_SERVER, 0}},
    [TB_DIRECTION_BOTH] = {2, {TB_PEER_CLIENT, TB_PEER_SERVER}},
};

static int tb_app_data(tb_rep *rep) {
    const tb_run_request *q = rep->req;
    uint8_t legs = q->direction < sizeof tb_legs / sizeof tb_legs[0] ? tb_legs[q->direction].n : 0;
    for (uint32_t off = 0; legs > 0 && off < q->total_bytes;) {
        uint32_t len = q->total_bytes - off < q->record_size ? q->total_bytes - off : q->record_size;
        for (uint8_t i = 0; i < legs; i++)
            if (tb_move_record(rep, tb_legs[q->direction].writers[i], off, len) != 0)
                return -1;
        off += len;
    }
    return 0;
}

/* Counters are read before the sessions and the transport go away; a DTLS server that
 * finished keeps its session and association lingering instead. Safe to call twice. */
static void tb_teardown(tb_rep *rep) {
    bool linger = tb_may_linger(rep) && rep->s[TB_PEER_SERVER] && rep->link;
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++) {
        if (rep->s[p]) {
            rep->retrans += rep->b->retransmissions ? rep->b->retransmissions(rep->s[p]) : 0;
            if (linger && rep->b->linger)
                rep->b->linger(rep->s[p]);
            if (linger)
                rep->linger_s = rep->s[p];
            else
                rep->b->session_free(rep->s[p]);
        }
        rep->s[p] = NULL;
    }
    if (rep->link) {
        tb_link_counters c;
        rep->tops->stats(rep->link, &c);
        rep->res.bytes_c2s = c.bytes[TB_PEER_CLIENT];
        rep->res.bytes_s2c = c.bytes[TB_PEER_SERVER];
        rep->res.packets_c2s = c.packets[TB_PEER_CLIENT];
        rep->res.packets_s2c = c.packets[TB_PEER_SERVER];
        rep->res.retransmissions = c.retransmissions + rep->retrans;
        rep->res.client_port = c.client_port;
        rep->res.server_port = c.server_port;
        if (linger) {
            rep->linger_link = rep->link;
            rep->tops->linger(rep->link, tb_linger_answer, rep);
        } else {
            rep->tops->close(rep->link);
        }
    }
    rep->link = NULL;
}

static int tb_close(tb_rep *rep) {
    for (uint8_t p = TB_PEER_CLIENT; p <= TB_PEER_SERVER; p++) {
        if (!rep->local[p])
            continue;
        int32_t lib = 0;
        tb_enter(p);
        int rc = rep->b->close_notify(rep->s[p], &lib);
        if (rc != 0)
            return tb_rep_fail(rep, TB_STATUS_CLOSE_FAILED, p, lib, "close: %s: close_notify returned %d",
                               tb_peer_str(p), rc);
    }
    if (rep->one_peer && rep->tops->finish) /* TCP: half-close, read the peer's last bytes */
        rep->tops->finish(rep->link);
    tb_teardown(rep);
    return 0;
}

typedef int (*tb_phase_fn)(tb_rep *rep);

/* The phases in order; `after` records what the phase left behind (the memory footprint,
 * where the port measures it), whether or not the phase succeeded. */
static const struct {
    uint16_t label;
    tb_phase_fn run;
    void (*after)(void);
} tb_phases[] = {
    {TB_L_CONNECTION_SETUP, tb_setup, NULL},
    {TB_L_HANDSHAKE, tb_handshake, tb_footprint_handshake_end},
    {TB_L_APPLICATION_DATA, tb_app_data, NULL},
    {TB_L_CLOSE, tb_close, tb_footprint_connected_end},
};

/* A phase span (peer NONE, CPU time at both ends); STOP value = the repetition's status. */
static int tb_phase(tb_rep *rep, uint16_t label, tb_phase_fn run, void (*after)(void)) {
    tb_trace_set_peer(TB_PEER_NONE);
    tb_begin_phase(label);
    int rc = run(rep);
    if (after)
        after();
    tb_trace_set_peer(TB_PEER_NONE);
    tb_end_phase(label, rep->res.status);
    return rc;
}

static void tb_repetition(tb_rep *rep, uint32_t index, uint32_t conn, uint32_t flags) {
    rep->res = (tb_rep_result){.config_id = rep->req->config_id, .index = index, .status = TB_STATUS_OK,
                               .failed_peer = TB_PEER_NONE, .flags = flags, .role = rep->req->role};
    rep->conn = conn;
    rep->retrans = 0;
    rep->err[0] = '\0';
    rep->link = NULL;
    rep->s[0] = rep->s[1] = NULL;
    tb_trace_reset();
    /* The marker frames shipped repetitions only, so a power capture has one pulse per stored
     * repetition (warm-ups stay low): the host aligns pulses to stored REPETITION spans. Its
     * edges lie just inside the span, so a preemption between an edge and the span's record
     * lands inside the repetition, where the host sees it (wall time above CPU time). */
    int marked = !(flags & TB_FLAG_WARMUP);
    if (marked)
        tb_marker_wait_low();
    tb_runqueue_mark mark = tb_runqueue_before();
    rep->res.start_ns = tb_port_now_ns();
    tb_begin_phase(TB_L_REPETITION);
    if (marked)
        tb_port_marker(1);
    tb_footprint_begin();
    for (size_t i = 0; i < sizeof tb_phases / sizeof tb_phases[0]; i++)
        if (tb_phase(rep, tb_phases[i].label, tb_phases[i].run, tb_phases[i].after) != 0)
            break;
    tb_teardown(rep);
    tb_footprint_end();
    tb_trace_set_peer(TB_PEER_NONE);
    if (marked)
        tb_port_marker(0);
    tb_end_phase(TB_L_REPETITION, rep->res.status);
    rep->res.repetition_wall_ns = tb_port_now_ns() - rep->res.start_ns;
    if (marked)
        tb_marker_note_low();
    tb_runqueue_after(mark);
    snprintf(rep->res.reason, sizeof rep->res.reason, "%s", rep->err);
    if (tb_trace_buffer.dropped > 0)
        rep->res.flags |= TB_FLAG_TRACE_OVERFLOW;
    if (rep->res.retransmissions > 0)
        rep->res.flags |= TB_FLAG_RETRANSMITTED;
}

/* ---------------------------------------------------------------- checks and the run loop */

/* G (docs/networks.md "Timeouts"): DTLS, the first give_up_flights periods of the RUN's
 * retransmission timer (min, 2 min, 4 min, ... capped at max); TLS over TCP, a fixed time. */
static uint32_t tb_give_up_ms(const tb_run_request *q) {
    if (q->protocol != TB_PROTOCOL_KIND_DTLS)
        return TB_NET_TCP_GIVE_UP_MS;
    uint64_t lo = q->dtls_timeout_min_ms ? q->dtls_timeout_min_ms : TB_NET_DTLS_DEFAULT_MIN_MS;
    uint64_t hi = q->dtls_timeout_max_ms ? q->dtls_timeout_max_ms : TB_NET_DTLS_DEFAULT_MAX_MS;
    uint64_t sum = 0, period = lo;
    for (uint32_t i = 0; i < TB_NET_GIVE_UP_FLIGHTS; i++, period *= 2)
        sum += period < hi ? period : hi > lo ? hi : lo;
    return sum > UINT32_MAX / 4 ? UINT32_MAX / 4 : (uint32_t)sum;
}
static int tb_credential_fits(const tb_suite_info *s, uint8_t credential) {
    for (uint8_t i = 0; i < s->n_credentials && i < TB_MAX_SUITE_CREDENTIALS; i++)
        if (s->credentials[i] == credential)
            return 1;
    return 0;
}

static void tb_credential_list(const tb_suite_info *s, char *out, size_t len) {
    size_t used = 0;
    out[0] = '\0';
    for (uint8_t i = 0; i < s->n_credentials && i < TB_MAX_SUITE_CREDENTIALS && used < len; i++) {
        const char *name = tb_credential_name(s->credentials[i]);
        int n = snprintf(out + used, len - used, "%s%s", i ? ", " : "", name ? name : "?");
        used += n > 0 ? (size_t)n : 0;
    }
}

static int tb_check_fail(const char **code, const char *name, char *err, size_t errlen, const char *fmt, ...) {
    *code = name;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* What the RUN options mean together, whatever the library (spec [options]): a combination
 * with no meaning is refused before any repetition. */
typedef struct tb_option_rule {
    uint16_t options;  /* the rule applies when all of these are set */
    bool (*holds)(const tb_suite_info *s, uint16_t options, uint8_t credential);
    const char *code, *message;
} tb_option_rule;

static bool tb_suite_tls13(const tb_suite_info *s) { return strcmp(s->max_version, "TLS1.3") == 0; }

static bool tb_with_resume(const tb_suite_info *s, uint16_t options, uint8_t credential) {
    (void)s;
    (void)credential;
    return options & TB_OPTION_RESUME;
}

static bool tb_on_tls12(const tb_suite_info *s, uint16_t options, uint8_t credential) {
    (void)options;
    (void)credential;
    return !tb_suite_tls13(s);
}

static bool tb_tls13_psk(const tb_suite_info *s, uint16_t options, uint8_t credential) {
    (void)options;
    return tb_suite_tls13(s) && credential == TB_CREDENTIAL_PSK;
}

static bool tb_with_certificates(const tb_suite_info *s, uint16_t options, uint8_t credential) {
    (void)s;
    (void)options;
    return credential != TB_CREDENTIAL_PSK;
}

static bool tb_not_tls13_psk(const tb_suite_info *s, uint16_t options, uint8_t credential) {
    return !tb_tls13_psk(s, options, credential);
}

static const tb_option_rule tb_option_rules[] = {
    {TB_OPTION_RESUME_ID, tb_with_resume, "bad_request", "option RESUME_ID needs RESUME (it says how to resume)"},
    {TB_OPTION_RESUME_ID, tb_on_tls12, "unsupported",
     "option RESUME_ID: TLS 1.3 has no session IDs (it resumes with tickets); use RESUME alone"},
    {TB_OPTION_PSK_ONLY, tb_tls13_psk, "bad_request",
     "option PSK_ONLY needs a TLS 1.3 suite and the psk credential (a TLS 1.2 PSK suite decides itself)"},
    {TB_OPTION_MUTUAL_AUTH, tb_with_certificates, "unsupported", "option MUTUAL_AUTH needs a certificate credential"},
    {TB_OPTION_RESUME, tb_not_tls13_psk, "unsupported",
     "option RESUME with the psk credential on TLS 1.3: a ticket is itself a pre-shared key, and both in one "
     "handshake measure neither; use a certificate credential"},
};

static int tb_options_check(const tb_suite_info *s, const tb_run_request *req, const char **code, char *err,
                            size_t errlen) {
    uint8_t credential = req->credential == TB_CREDENTIAL_AUTO ? s->credentials[0] : req->credential;
    uint16_t options = tb_run_request_options(req);
    for (size_t i = 0; i < sizeof tb_option_rules / sizeof tb_option_rules[0]; i++) {
        const tb_option_rule *r = &tb_option_rules[i];
        if ((options & r->options) == r->options && !r->holds(s, options, credential))
            return tb_check_fail(code, r->code, err, errlen, "%s", r->message);
    }
    return 0;
}

int tb_run_check(const tb_backend *b, const tb_run_request *req, const char **code, char *err, size_t errlen) {
    if (req->experiment != 0)
        return tb_experiment_check(req, code, err, errlen);
    const tb_suite_info *s = tb_suite_by_id(b, req->suite_id);
    char allowed[128];
    if (!s)
        return tb_check_fail(code, "unknown_suite", err, errlen, "suite 0x%04X is not in this %s build",
                             req->suite_id, b->library_name);
    if (s->n_credentials == 0)
        return tb_check_fail(code, "unsupported", err, errlen, "suite %s cannot run in this agent: %s", s->name,
                             s->why_unsupported ? s->why_unsupported : "no usable credential");
    if (req->credential != TB_CREDENTIAL_AUTO && !tb_credential_fits(s, req->credential)) {
        tb_credential_list(s, allowed, sizeof allowed);
        const char *cname = tb_credential_name(req->credential);
        return tb_check_fail(code, "unsupported", err, errlen, "credential %s does not fit suite %s; allowed: %s",
                             cname ? cname : "?", s->name, allowed);
    }
    if (!tb_transport_find(req->transport))
        return tb_check_fail(code, "unsupported", err, errlen, "transport %u is not in this agent",
                             (unsigned)req->transport);
    if (req->protocol == TB_PROTOCOL_KIND_DTLS && !b->timeout_ms) /* no DTLS timer: no DTLS */
        return tb_check_fail(code, "unsupported", err, errlen, "the %s backend has no DTLS support yet",
                             b->library_name);
    if (req->protocol == TB_PROTOCOL_KIND_DTLS && !s->dtls)
        return tb_check_fail(code, "unsupported", err, errlen, "suite %s cannot run over DTLS (a stream cipher "
                             "or TLS 1.3 only)", s->name);
    if ((tb_run_request_options(req) & TB_OPTION_CONNECTION_ID) && req->protocol != TB_PROTOCOL_KIND_DTLS)
        return tb_check_fail(code, "bad_request", err, errlen, "option CONNECTION_ID is DTLS's (RFC 9146/9147): "
                             "the RUN is TLS");
    if (!tb_group_name(req->group))
        return tb_check_fail(code, "bad_request", err, errlen, "group %u is not in spec/protocol.toml",
                             (unsigned)req->group);
    if (req->record_size < 1 || req->record_size > TB_MAX_RECORD_SIZE)
        return tb_check_fail(code, "bad_request", err, errlen, "record size %u is not in 1 .. %u",
                             (unsigned)req->record_size, (unsigned)TB_MAX_RECORD_SIZE);
    if (req->repetitions == 0)
        return tb_check_fail(code, "bad_request", err, errlen, "repetitions must be at least 1");
    uint16_t missing = (uint16_t)(tb_run_request_options(req) & ~(TB_OPTIONS_BASE | b->options));
    if (missing) {
        unsigned lowest = missing & (0u - missing); /* name one bit: each is checked in turn */
        return tb_check_fail(code, "unsupported", err, errlen, "option %s is not implemented by the %s backend",
                             tb_option_name(lowest), b->library_name);
    }
    return tb_options_check(s, req, code, err, errlen);
}

int tb_run(const tb_backend *b, const tb_run_request *req, tb_rep_sink sink, void *ctx,
           tb_run_summary *summary) {
    const char *code;
    tb_rep rep = {.b = b, .req = req};
    *summary = (tb_run_summary){0};
    if (tb_run_check(b, req, &code, summary->first_error, sizeof summary->first_error) != 0) {
        summary->refused = code;
        return -1;
    }
    if (req->experiment != 0)
        return tb_experiment_run(req, sink, ctx, summary);
    const tb_suite_info *s = tb_suite_by_id(b, req->suite_id);
    rep.tops = tb_transport_find(req->transport);
    rep.cfg = (tb_conn_config){
        .suite_id = req->suite_id,
        .group = req->group,
        .credential = req->credential == TB_CREDENTIAL_AUTO ? s->credentials[0] : req->credential,
        .transport = req->transport,
        .options = tb_run_request_options(req),
        .protocol = req->protocol,
        .max_fragment = req->max_fragment,
        .dtls_timeout_min_ms = req->dtls_timeout_min_ms,
        .dtls_timeout_max_ms = req->dtls_timeout_max_ms,
        .dtls_mtu = req->dtls_mtu,
    };
    /* What the library cannot do is refused once, by name, not in every repetition's setup. */
    if (b->check && b->check(&rep.cfg, summary->first_error, sizeof summary->first_error) != 0) {
        summary->refused = "unsupported";
        return -1;
    }
    rep.one_peer = req->role != TB_ROLE_BOTH;
    rep.local[TB_PEER_CLIENT] = req->role != TB_ROLE_SERVER;
    rep.local[TB_PEER_SERVER] = req->role != TB_ROLE_CLIENT;
    rep.give_up_ms = tb_give_up_ms(req);
    tb_pace_run(req->config_id, rep.one_peer); /* two agents over a network only */
    tb_link_params lp = {.role = req->role, .family = req->family, .port = req->port, .options = rep.cfg.options,
                         .tcp_mss = req->tcp_mss, .datagram = req->protocol == TB_PROTOCOL_KIND_DTLS,
                         .give_up_ms = rep.give_up_ms, .accept_ms = 2u * rep.give_up_ms + TB_NET_MARGIN_MS};
    memcpy(lp.addr, req->addr, sizeof lp.addr);
    /* A transport that cannot be prepared fails every repetition with its reason (shipped). */
    if (rep.tops->prepare(&lp, rep.prepare_err, sizeof rep.prepare_err) != 0 && !rep.prepare_err[0])
        snprintf(rep.prepare_err, sizeof rep.prepare_err, "cannot be prepared");
    if (!rep.prepare_err[0] && tb_ready_hook && rep.tops->where()[0])
        tb_ready_hook(tb_ready_ctx, rep.tops->name, rep.tops->where());
    int rc = 0;
    /* Warm-ups are numbered on the wire just below the first shipped repetition (modulo 2^32),
     * so every connection of the RUN has its own number and client port. RESUME: one more
     * below them, the full handshake that makes the session the next connection resumes. */
    uint32_t priming = (rep.cfg.options & TB_OPTION_RESUME) ? 1u : 0u;
    rep.cfg.first_connection = true;
    for (uint32_t i = 0; i < priming + req->warmup; i++) {
        tb_repetition(&rep, req->first_index, req->first_index - priming - req->warmup + i, TB_FLAG_WARMUP);
        rep.cfg.first_connection = false;
    }
    for (uint32_t i = 0; i < req->repetitions && rc == 0; i++) {
        tb_repetition(&rep, req->first_index + i, req->first_index + i, 0);
        rep.cfg.first_connection = false;
        if (rep.res.status != TB_STATUS_OK && summary->failed++ == 0)
            snprintf(summary->first_error, sizeof summary->first_error, "%s", rep.err);
        if (sink && sink(ctx, &rep.res, &tb_trace_buffer) != 0)
            rc = -1;
        else
            summary->shipped++;
    }
    /* No next client will end the last association: it lingers for as long as its client may
     * still retransmit (G), or until it ends (the client's close_notify). */
    if (rep.linger_link && rep.tops->serve && rc == 0)
        rep.tops->serve(rep.give_up_ms + TB_NET_MARGIN_MS);
    tb_end_linger(&rep);
    rep.tops->release();
    return rc;
}
