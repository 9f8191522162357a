/* SPDX-License-Identifier: Apache-2.0 */
/* Pacing the wolfSSL 5.7 backend over DTLS 1.3 (tlsbench/pace.h): a step is a connect/accept
 * TURN, and a device's turn always sends or finishes. Over a network a flight arrives datagram by datagram, so a
 * call may only read: it continues the same turn, its budget carried over, and the whole
 * budget is held before the turn's flight. Here the server's flight reaches the client one
 * record per call, as over a link whose MTU spreads a flight over datagrams. */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/pace.h"
#include "tlsbench/runner.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"
#include "tlsbench/transport.h"

static const tb_backend *B = &tb_linked_backend;

#define CONFIG 7u
#define TURN_1_NS 5000000u  /* 5 ms: the ClientHello */
#define TURN_2_NS 40000000u /* 40 ms: the server's flight read, the client's sent */

/* DTLS 1.3 (not in Debian's 5.5): wolfSSL writes one record per handshake message. */
#define SUITE 0x1301u /* TLS_AES_128_GCM_SHA256 */

static uint32_t client_rows(uint32_t config_id, tb_pace_row *rows, uint32_t max) {
    if (config_id != CONFIG || max < 2)
        return 0;
    rows[0] = (tb_pace_row){CONFIG, TB_PEER_CLIENT, TB_L_HANDSHAKE_TURN_1, TURN_1_NS};
    rows[1] = (tb_pace_row){CONFIG, TB_PEER_CLIENT, TB_L_HANDSHAKE_TURN_2, TURN_2_NS};
    return 2;
}

static void spin_until(uint64_t deadline) {
    while (tb_port_now_ns() < deadline) {
    }
}

/* The client's raw endpoint, cut into one record per datagram and let through one record per
 * connect call: a flight spread over datagrams, as a link's MTU spreads it. */
static tb_io client_raw;
static int allowance;
static uint8_t pending[4096];
static size_t pending_len;

/* The length of the record at b: DTLS 1.2's 13-byte header, or DTLS 1.3's unified header
 * (001CSLEE: no connection ID here, an 8- or 16-bit sequence number, a length or the rest). */
static size_t record_len(const uint8_t *b, size_t n) {
    if ((b[0] & 0xE0) != 0x20) /* a plaintext record: DTLS 1.2's 13-byte header (the hellos) */
        return n < 13 ? n : 13u + (size_t)(b[11] << 8 | b[12]);
    size_t h = (b[0] & 0x08) ? 3 : 2;
    return (b[0] & 0x04) ? h + 2 + (size_t)(b[h] << 8 | b[h + 1]) : n;
}

static int one_record_per_call(void *ctx, uint8_t *buf, size_t len) {
    (void)ctx;
    if (allowance == 0)
        return TB_IO_WOULD_BLOCK;
    if (pending_len == 0) {
        int n = client_raw.recv(client_raw.ctx, pending, sizeof pending);
        if (n <= 0)
            return n;
        pending_len = (size_t)n;
    }
    size_t r = record_len(pending, pending_len);
    r = r > pending_len ? pending_len : r;
    if (r > len)
        return -1;
    memcpy(buf, pending, r);
    memmove(pending, pending + r, pending_len - r);
    pending_len -= r;
    allowance--;
    return (int)r;
}

static int handshake(tb_session *peer[2]) {
    int done[2] = {0, 0};
    int32_t e = 0;
    for (int turn = 0; turn < 400 && !(done[0] && done[1]); turn++) {
        uint8_t p = (uint8_t)(turn % 2);
        tb_trace_set_peer(p);
        allowance = 1;
        for (tb_step_result r = TB_STEP_CONTINUE; !done[p] && r == TB_STEP_CONTINUE;) {
            r = B->step(peer[p], &e);
            if (r == TB_STEP_ERROR) {
                fprintf(stderr, "  peer %u: library error %d\n", p, (int)e);
                return -1;
            }
            done[p] = r == TB_STEP_DONE;
        }
    }
    return done[0] && done[1] ? 0 : -1;
}

static void test_a_turn_read_in_several_calls_holds_its_whole_budget_before_its_flight(void) {
    char err[256] = "";
    tb_conn_config cfg = {.suite_id = SUITE, .group = 23, .credential = TB_CREDENTIAL_ECDSA_P256,
                          .transport = TB_TRANSPORT_MEMORY, .protocol = TB_PROTOCOL_KIND_DTLS,
                          .first_connection = true};
    CHECK(B->init(err, sizeof err) == 0);
    CHECK(tb_memory_transport.prepare(&(tb_link_params){.role = TB_ROLE_BOTH, .datagram = 1}, err, sizeof err) == 0);
    tb_transport *t = tb_memory_transport.open(0, err, sizeof err);
    CHECK(t != NULL);
    tb_io raw[2], io[2];
    tb_session *peer[2] = {NULL, NULL};
    for (uint8_t p = 0; t && p < 2; p++) {
        tb_trace_set_peer(p);
        raw[p] = tb_memory_transport.endpoint(t, p);
        if (p == TB_PEER_CLIENT) {
            client_raw = raw[p];
            raw[p].recv = one_record_per_call;
        }
        io[p] = tb_traced_io(&raw[p]);
        peer[p] = B->session_new(p, &cfg, io[p], err, sizeof err);
        if (!peer[p])
            fprintf(stderr, "  session: %s\n", err);
    }
    tb_pace_install(client_rows, spin_until);
    tb_pace_run(CONFIG, true);
    tb_pace_handshake();
    tb_trace_reset();
    CHECK(peer[0] && peer[1] && handshake(peer) == 0);

    uint32_t calls = 0, holds = 0;
    uint64_t start = 0, longest = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++) {
        const tb_record *r = &tb_trace_buffer.records[i];
        if (r->peer != TB_PEER_CLIENT)
            continue;
        calls += r->kind == TB_KIND_START && r->label >= TB_L_HANDSHAKE_TURN_1 && r->label <= TB_L_HANDSHAKE_TURN_4;
        if (r->label == TB_L_PACE_HOLD && r->kind == TB_KIND_START)
            start = r->t_ns;
        if (r->label == TB_L_PACE_HOLD && r->kind == TB_KIND_STOP) {
            holds++;
            longest = r->t_ns - start > longest ? r->t_ns - start : longest;
        }
    }
    CHECK(calls > 3);       /* the server's flight took the client several calls that only read */
    CHECK_EQ_U(holds, 2);   /* before the ClientHello and before the client's flight, never a read */
    /* the second flight waited for TURN_2's budget, less the host's own work of its calls */
    CHECK(longest >= TURN_2_NS * 3 / 4);
    tb_pace_run(CONFIG, false);
    for (int p = 0; p < 2; p++)
        B->session_free(peer[p]);
    tb_memory_transport.close(t);
    B->deinit();
}

int main(void) {
    RUN_TEST(test_a_turn_read_in_several_calls_holds_its_whole_budget_before_its_flight);
    return tb_test_report();
}
