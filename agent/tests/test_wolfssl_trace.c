/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL backend's traces through the runner: turns nest inside the runner's peer
 * turns, I/O happens only inside a turn (or a record call, or close), crypto operations
 * sit in the turns where the protocol does them, records carry the right bytes, and the
 * COLD_CACHES option makes the server's ECDSA signature measurably slower than warm. */
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tlsbench/runner.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/transport.h"

static const tb_backend *B = &tb_linked_backend;

#define MAX_REPS 16
#define N_TURNS 4

/* What one repetition's trace showed. */
typedef struct shape {
    int nesting_ok;
    int io_outside_steps;     /* SEND/RECV during the handshake whose parent is not a turn */
    int crypto_outside_steps; /* crypto during the handshake whose parent is not a turn/crypto */
    int turns_outside_peer_turn;
    /* crypto[peer][turn] bit set of (label - 300) */
    uint64_t crypto[2][N_TURNS];
    int verify_in_chain; /* PK_VERIFY nested inside CHAIN_VERIFY */
    int64_t turn_value[2][N_TURNS];
    uint64_t written[2], read[2], record_send[2], sent[2];
    int record_overhead_ok; /* every RECORD_WRITE's nested SENDs exceed its plaintext */
    uint64_t server_sign_ns;
} shape;

typedef struct run_seen {
    uint32_t n;
    shape s[MAX_REPS];
    tb_rep_result r[MAX_REPS];
} run_seen;

static int is_turn(uint16_t l) { return l >= TB_L_HANDSHAKE_TURN_1 && l <= TB_L_HANDSHAKE_TURN_4; }
static int is_crypto(uint16_t l) { return l >= 300 && l < 400; }

static void inspect(shape *s, const tb_trace *t) {
    struct {
        uint16_t label;
        uint64_t t0;
        uint64_t sent; /* bytes sent by SENDs nested in this span */
    } st[64];
    int depth = 0, in_handshake = 0;
    memset(s, 0, sizeof *s);
    s->nesting_ok = 1;
    s->record_overhead_ok = 1;
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < N_TURNS; k++)
            s->turn_value[p][k] = -1;
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        uint8_t p = r->peer <= TB_PEER_SERVER ? r->peer : 0;
        uint16_t parent = depth ? st[depth - 1].label : 0;
        if (r->kind == TB_KIND_START) {
            in_handshake |= r->label == TB_L_HANDSHAKE;
            if (in_handshake && (r->label == TB_L_SEND || r->label == TB_L_RECV) && !is_turn(parent))
                s->io_outside_steps++;
            if (in_handshake && is_crypto(r->label) && !is_turn(parent) && !is_crypto(parent))
                s->crypto_outside_steps++;
            if (is_turn(r->label) && parent != TB_L_PEER_TURN)
                s->turns_outside_peer_turn++;
            if (is_crypto(r->label)) {
                for (int d = depth - 1; d >= 0; d--)
                    if (is_turn(st[d].label)) {
                        s->crypto[p][st[d].label - TB_L_HANDSHAKE_TURN_1] |= 1ull << (r->label - 300);
                        break;
                    }
            }
            s->verify_in_chain += r->label == TB_L_PK_VERIFY && parent == TB_L_CHAIN_VERIFY;
            if (depth == 64) {
                s->nesting_ok = 0;
                return;
            }
            st[depth].label = r->label;
            st[depth].t0 = r->t_ns;
            st[depth].sent = 0;
            depth++;
            continue;
        }
        if (r->kind != TB_KIND_STOP)
            continue;
        if (depth == 0 || st[depth - 1].label != r->label) {
            s->nesting_ok = 0;
            return;
        }
        depth--;
        in_handshake &= r->label != TB_L_HANDSHAKE;
        if (is_turn(r->label))
            s->turn_value[p][r->label - TB_L_HANDSHAKE_TURN_1] = (int64_t)r->value;
        if (r->label == TB_L_SEND) {
            s->sent[p] += r->value;
            if (depth > 0)
                st[depth - 1].sent += r->value;
        }
        if (r->label == TB_L_RECORD_WRITE) {
            s->written[p] += r->value;
            s->record_send[p] += st[depth].sent;
            s->record_overhead_ok &= st[depth].sent > r->value;
        }
        if (r->label == TB_L_RECORD_READ)
            s->read[p] += r->value;
        if (r->label == TB_L_PK_SIGN && p == TB_PEER_SERVER)
            s->server_sign_ns += r->t_ns - st[depth].t0;
    }
    s->nesting_ok &= depth == 0;
}

static int sink(void *ctx, const tb_rep_result *r, const tb_trace *t) {
    run_seen *seen = ctx;
    if (seen->n < MAX_REPS) {
        inspect(&seen->s[seen->n], t);
        seen->r[seen->n] = *r;
        seen->n++;
    }
    return 0;
}

static run_seen *run(uint16_t suite, uint16_t group, uint8_t cred, uint32_t reps, uint32_t warmup, uint8_t options) {
    static run_seen seen;
    memset(&seen, 0, sizeof seen);
    tb_run_request req = {.config_id = 1, .suite_id = suite, .group = group, .credential = cred,
                          .direction = TB_DIRECTION_BOTH, .transport = TB_TRANSPORT_MEMORY, .options = options,
                          .repetitions = reps, .warmup = warmup, .total_bytes = 3000, .record_size = 1000};
    tb_run_summary sum;
    const char *code = NULL;
    char err[256] = "";
    CHECK(tb_run_check(B, &req, &code, err, sizeof err) == 0);
    CHECK(tb_run(B, &req, sink, &seen, &sum) == 0);
    CHECK_EQ_U(sum.failed, 0);
    if (sum.failed)
        fprintf(stderr, "  0x%04X: %s\n", suite, sum.first_error);
    return &seen;
}

#define BIT(label) (1ull << ((label) - 300))
#define HAS(set, label) (((set) & BIT(label)) != 0)

static void check_structure(const shape *s) {
    CHECK(s->nesting_ok);
    CHECK_EQ_U(s->io_outside_steps, 0);
    CHECK_EQ_U(s->crypto_outside_steps, 0);
    CHECK_EQ_U(s->turns_outside_peer_turn, 0);
    /* records: every plaintext byte written was read by the other peer, each record went
     * out as protected bytes (more than the plaintext) through the traced send */
    for (int p = 0; p < 2; p++) {
        CHECK_EQ_U(s->written[p], 3000);
        CHECK_EQ_U(s->read[1 - p], 3000);
        CHECK(s->record_send[p] > s->written[p]);
    }
    CHECK(s->record_overhead_ok);
}

/* TLS 1.3 ECDHE-ECDSA: the server's first turn generates its key share, computes the
 * shared secret and signs; the client's second turn computes the secret and verifies. */
static void test_tls13_ecdsa_turns(void) {
    static const uint16_t groups[] = {TB_GROUP_X25519, TB_GROUP_SECP256R1};
    for (size_t g = 0; g < 2; g++) {
        run_seen *seen = run(0x1301, groups[g], TB_CREDENTIAL_ECDSA_P256, 2, 1, 0);
        const shape *s = &seen->s[1];
        check_structure(s);
        const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;
        CHECK(HAS(s->crypto[C][0], TB_L_KEY_GENERATE));
        CHECK(!HAS(s->crypto[C][0], TB_L_SHARED_SECRET));
        CHECK(HAS(s->crypto[S][0], TB_L_KEY_GENERATE));
        CHECK(HAS(s->crypto[S][0], TB_L_SHARED_SECRET));
        CHECK(HAS(s->crypto[S][0], TB_L_PK_SIGN));
        CHECK(HAS(s->crypto[S][0], TB_L_KDF));
        CHECK(HAS(s->crypto[C][1], TB_L_SHARED_SECRET));
        CHECK(HAS(s->crypto[C][1], TB_L_PK_VERIFY));
        CHECK(HAS(s->crypto[C][1], TB_L_CHAIN_VERIFY));
        CHECK(!HAS(s->crypto[C][1], TB_L_PK_SIGN));
        CHECK(s->verify_in_chain >= 1);
        CHECK(!HAS(s->crypto[S][0] | s->crypto[S][1], TB_L_PK_VERIFY)); /* no client certificate */
        /* client: 1st turn waits (WANT_READ = 2), 2nd finishes; server: 1st waits for Finished */
        CHECK_EQ_U(s->turn_value[C][0], 2);
        CHECK_EQ_U(s->turn_value[C][1], 0);
        CHECK_EQ_U(s->turn_value[S][0], 2);
        CHECK_EQ_U(s->turn_value[S][1], 0);
        CHECK_EQ_U(s->turn_value[C][2], (uint64_t)-1); /* no third turn in TLS 1.3 */
        CHECK_EQ_U(s->sent[C], seen->r[1].bytes_c2s);
        CHECK_EQ_U(s->sent[S], seen->r[1].bytes_s2c);
    }
}

/* TLS 1.3 with RSA (PSS signatures) and Ed25519 certificates: same placement. */
static void test_tls13_other_certificates(void) {
    static const uint8_t creds[] = {TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_ED25519};
    for (size_t c = 0; c < 2; c++) {
        run_seen *seen = run(0x1301, TB_GROUP_X25519, creds[c], 1, 0, 0);
        const shape *s = &seen->s[0];
        check_structure(s);
        CHECK(HAS(s->crypto[TB_PEER_SERVER][0], TB_L_PK_SIGN));
        CHECK(HAS(s->crypto[TB_PEER_CLIENT][1], TB_L_PK_VERIFY));
        CHECK(s->verify_in_chain >= 1);
    }
}

/* TLS 1.2: client ClientHello; server hello..done; client key exchange..finished;
 * server finished; client reads it. */
static void test_tls12_turns(void) {
    run_seen *seen = run(0xC02F, TB_GROUP_SECP256R1, TB_CREDENTIAL_RSA2048, 1, 1, 0); /* ECDHE-RSA-AES128-GCM */
    const shape *s = &seen->s[0];
    const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;
    check_structure(s);
    CHECK_EQ_U(s->crypto[C][0], 0);
    CHECK(HAS(s->crypto[S][0], TB_L_KEY_GENERATE));
    CHECK(HAS(s->crypto[S][0], TB_L_PK_SIGN));
    CHECK(HAS(s->crypto[C][1], TB_L_CHAIN_VERIFY));
    CHECK(HAS(s->crypto[C][1], TB_L_PK_VERIFY));
    CHECK(HAS(s->crypto[C][1], TB_L_KEY_GENERATE));
    CHECK(HAS(s->crypto[C][1], TB_L_SHARED_SECRET));
    CHECK(HAS(s->crypto[C][1], TB_L_KDF));
    CHECK(HAS(s->crypto[S][1], TB_L_SHARED_SECRET));
    CHECK(HAS(s->crypto[S][1], TB_L_KDF));
    CHECK_EQ_U(s->turn_value[C][2], 0); /* the client finishes in its 3rd turn */
    CHECK_EQ_U(s->turn_value[S][1], 0);

    seen = run(0x009E, TB_GROUP_FFDHE2048, TB_CREDENTIAL_RSA2048, 1, 0, 0); /* DHE-RSA: wc_DhGenerateKeyPair/Agree */
    s = &seen->s[0];
    check_structure(s);
    CHECK(HAS(s->crypto[S][0], TB_L_KEY_GENERATE));
    CHECK(HAS(s->crypto[C][1], TB_L_KEY_GENERATE));
    CHECK(HAS(s->crypto[C][1], TB_L_SHARED_SECRET));
    CHECK(HAS(s->crypto[S][1], TB_L_SHARED_SECRET));

    seen = run(0xCCAB, 0, TB_CREDENTIAL_PSK, 1, 0, 0); /* plain PSK: no public-key operation at all */
    s = &seen->s[0];
    check_structure(s);
    uint64_t pk = BIT(TB_L_KEY_GENERATE) | BIT(TB_L_SHARED_SECRET) | BIT(TB_L_PK_SIGN) | BIT(TB_L_PK_VERIFY) |
                  BIT(TB_L_CHAIN_VERIFY);
    for (int p = 0; p < 2; p++)
        for (int k = 0; k < N_TURNS; k++)
            CHECK((s->crypto[p][k] & pk) == 0);
    CHECK(HAS(s->crypto[S][1], TB_L_KDF));
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct medians {
    uint64_t sign_ns, handshake_cpu_ns;
} medians;

static medians run_medians(uint8_t options) {
    enum { N = 7 };
    uint64_t sign[N], cpu[N];
    /* 3 warm-ups: FP_ECC builds a point's table on its 2nd use, not its 1st */
    run_seen *seen = run(0x1301, TB_GROUP_X25519, TB_CREDENTIAL_ECDSA_P256, N, 3, options);
    for (uint32_t i = 0; i < N; i++) {
        sign[i] = seen->s[i].server_sign_ns;
        cpu[i] = seen->r[i].handshake_cpu_ns;
    }
    qsort(sign, N, sizeof sign[0], cmp_u64);
    qsort(cpu, N, sizeof cpu[0], cmp_u64);
    return (medians){sign[N / 2], cpu[N / 2]};
}

/* Warm (default) vs COLD_CACHES: a ratio, robust to a noisy machine. Measured here: server
 * PK_SIGN ~83 us warm vs ~360 us cold (no table: a plain scalar multiplication), handshake
 * CPU ~0.57 ms vs ~4.2 ms (the client's verifications rebuild the generator's table). */
static void test_cold_caches_slower(void) {
    medians warm = run_medians(0);
    medians cold = run_medians(TB_OPTION_COLD_CACHES);
    fprintf(stderr, "  server PK_SIGN median: warm %.1f us, cold %.1f us; handshake CPU warm %.1f us, cold %.1f us\n",
            warm.sign_ns / 1e3, cold.sign_ns / 1e3, warm.handshake_cpu_ns / 1e3, cold.handshake_cpu_ns / 1e3);
    CHECK(warm.sign_ns > 0);
    CHECK(cold.sign_ns > 2 * warm.sign_ns);
    CHECK(cold.handshake_cpu_ns > 3 * warm.handshake_cpu_ns);
}

int main(void) {
    char err[256] = "";
    if (B->init(err, sizeof err) != 0) {
        fprintf(stderr, "backend failed to start: %s\n", err);
        return 1;
    }
    if (!TB_TRACE_ENABLED)
        return 0;
    RUN_TEST(test_tls13_ecdsa_turns);
    RUN_TEST(test_tls13_other_certificates);
    RUN_TEST(test_tls12_turns);
    RUN_TEST(test_cold_caches_slower);
    B->deinit();
    return tb_test_report();
}
