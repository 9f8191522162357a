/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenSSL backend end to end without the runner: configuration errors are reported,
 * every suite completes a handshake with each of its credentials over the memory transport,
 * forced groups are the ones negotiated, and the trace is well formed: steps nest, I/O and
 * crypto only inside steps, the crypto operations in the steps where OpenSSL does them, the
 * expected step sequence per peer, and I/O records that carry exactly the bytes moved. */
#include <string.h>

#include <openssl/ssl.h>

#include "openssl_internal.h"
#include "pair.h"
#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/trace.h"
#include "tlsbench/transport.h"

static const tb_backend *b = &tb_linked_backend;
static const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;

/* One record each way, then close_notify from both. */
static int tb_pair_exchange(tb_pair *p) {
    uint8_t out[100], in[200];
    int32_t e = 0;
    memset(out, 0x5a, sizeof out);
    for (uint8_t w = 0; w < 2; w++) {
        tb_trace_set_peer(w);
        tb_begin(TB_L_RECORD_WRITE);
        int n = b->write(p->peer[w], out, sizeof out, &e);
        tb_end(TB_L_RECORD_WRITE, n > 0 ? (uint64_t)n : 0);
        tb_trace_set_peer((uint8_t)(1 - w));
        tb_begin(TB_L_RECORD_READ);
        int m = b->read(p->peer[1 - w], in, sizeof in, &e);
        tb_end(TB_L_RECORD_READ, m > 0 ? (uint64_t)m : 0);
        if (n != (int)sizeof out || m != (int)sizeof out || memcmp(in, out, sizeof out) != 0)
            return -1;
    }
    int rc = 0;
    for (uint8_t w = 0; w < 2; w++) {
        tb_trace_set_peer(w);
        tb_begin(TB_L_CLOSE);
        rc |= b->close_notify(p->peer[w], &e);
        tb_end(TB_L_CLOSE, 0);
    }
    return rc;
}

/* What a run negotiated, read before the sessions are freed. */
typedef struct tb_outcome {
    int version;       /* SSL_version() */
    int group_nid;     /* SSL_get_negotiated_group() on the client */
    int peer_key_bits; /* the server's ephemeral key as the client saw it */
    uint16_t cipher;   /* IANA id */
    uint64_t wire[2];  /* bytes the transport carried client->server, server->client */
} tb_outcome;

/* Optional hook run on a freshly opened pair (to reconfigure a peer). */
typedef void (*tb_pair_hook)(tb_pair *p);

static int tb_run_one(const tb_conn_config *cfg, tb_pair_hook hook, tb_outcome *out, char *why, size_t whylen) {
    tb_pair p;
    int32_t e = 0;
    int ok = tb_pair_open_traced(&p, cfg) == 0;
    if (!ok)
        snprintf(why, whylen, "setup: %.200s", p.err);
    if (ok && hook)
        hook(&p);
    if (ok && tb_pair_handshake(&p, &e) != 0) {
        char text[128];
        b->error_text(e, text, sizeof text);
        snprintf(why, whylen, "handshake: %d %s", (int)e, text);
        ok = 0;
    }
    if (ok && out) {
        SSL *c = tb_openssl_session_ssl(p.peer[C]);
        EVP_PKEY *k = NULL;
        out->version = SSL_version(c);
        out->group_nid = SSL_get_negotiated_group(c);
        out->peer_key_bits = SSL_get_peer_tmp_key(c, &k) == 1 ? EVP_PKEY_get_bits(k) : 0;
        EVP_PKEY_free(k);
        out->cipher = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(c));
    }
    if (ok && tb_pair_exchange(&p) != 0) {
        snprintf(why, whylen, "application data or close failed");
        ok = 0;
    }
    if (out && p.t)
        tb_memory_transport.counters(p.t, &out->wire[0], &out->wire[1]);
    tb_pair_close(&p);
    return ok ? 0 : -1;
}

static void test_init(void) {
    char err[256] = "";
    CHECK(b->init(err, sizeof err) == 0);
    CHECK(b->init(err, sizeof err) == 0); /* idempotent */
}

static void test_configuration_errors(void) {
    static const struct {
        tb_conn_config cfg;
        const char *message_part;
    } bad[] = {
        {{.suite_id = 0xC0FF, .credential = TB_CREDENTIAL_ECDSA_P256}, "not in this OpenSSL build"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_RSA2048}, "does not fit suite"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ED25519}, "does not fit suite"},
        {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_PSK}, "does not fit suite"},
        {{.suite_id = 0xC02B, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
        {{.suite_id = 0xC02B, .group = 0x1234, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
        {{.suite_id = 0x009E, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, "does not fit"},
        {{.suite_id = 0x002F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "use group default"},
        {{.suite_id = 0x00A6, .credential = TB_CREDENTIAL_RSA2048}, "anonymous"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_pair p;
        CHECK(tb_pair_open_traced(&p, &bad[i].cfg) != 0);
        CHECK(strstr(p.err, bad[i].message_part) != NULL);
        if (!strstr(p.err, bad[i].message_part))
            fprintf(stderr, "  case %zu: \"%s\"\n", i, p.err);
        tb_pair_close(&p);
    }
}

static void test_every_suite_handshakes(void) {
    size_t ran = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        for (size_t c = 0; c < s->n_credentials; c++) {
            tb_conn_config cfg = {.suite_id = s->id, .credential = s->credentials[c]};
            char why[256] = "";
            tb_outcome o = {0};
            tb_trace_reset();
            int rc = tb_run_one(&cfg, NULL, &o, why, sizeof why);
            CHECK(rc == 0);
            CHECK_EQ_U(o.cipher, s->id); /* the pinned suite is the one negotiated */
            CHECK_EQ_U(o.version, strcmp(s->max_version, "TLS1.3") == 0 ? TLS1_3_VERSION : TLS1_2_VERSION);
            if (rc != 0 || o.cipher != s->id)
                fprintf(stderr, "  %s with %s: %s\n", s->name, tb_credential_name(cfg.credential), why);
            ran++;
        }
    }
    fprintf(stderr, "  %zu suite/credential pairs\n", ran);
    CHECK(ran > 100);
}

/* The forced group is the one negotiated (TLS 1.3 and TLS 1.2 ECDHE), and the DH size for
 * TLS 1.2 DHE is the forced FFDHE group's. */
static void test_forced_groups(void) {
    static const struct {
        tb_conn_config cfg;
        int nid;  /* expected negotiated group, or 0 */
        int bits; /* expected server key size, or 0 */
    } ok[] = {
        {{.suite_id = 0x1301, .group = 0, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_X25519, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_X25519, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_X9_62_prime256v1, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_X448, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_ffdhe2048, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, NID_X25519, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, NID_X9_62_prime256v1, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, NID_X448, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_RSA2048}, NID_ffdhe2048, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ED25519}, NID_X25519, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ED25519}, NID_X9_62_prime256v1, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ED25519}, NID_X448, 0},
        {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ED25519}, NID_ffdhe2048, 0},
        {{.suite_id = 0x1302, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P384}, NID_secp384r1, 0},
        {{.suite_id = 0x1303, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_RSA3072}, NID_secp521r1, 0},
        {{.suite_id = 0xC02B, .group = 0, .credential = TB_CREDENTIAL_ECDSA_P384}, NID_X9_62_prime256v1, 0},
        {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, NID_secp384r1, 0},
        {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P384}, NID_X25519, 0},
        {{.suite_id = 0xC02F, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, NID_X448, 0},
        {{.suite_id = 0x009E, .group = 0, .credential = TB_CREDENTIAL_RSA2048}, 0, 2048},
        {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA2048}, 0, 3072},
        {{.suite_id = 0x00AA, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_PSK}, 0, 4096},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char why[256] = "";
        tb_outcome o = {0};
        tb_trace_reset();
        int rc = tb_run_one(&ok[i].cfg, NULL, &o, why, sizeof why);
        CHECK(rc == 0);
        if (ok[i].nid)
            CHECK_EQ_U(o.group_nid, ok[i].nid);
        if (ok[i].bits)
            CHECK_EQ_U(o.peer_key_bits, ok[i].bits);
        if (rc != 0 || (ok[i].nid && o.group_nid != ok[i].nid) || (ok[i].bits && o.peer_key_bits != ok[i].bits))
            fprintf(stderr, "  case %zu (group %s): %s; negotiated nid %d, %d bits\n", i,
                    tb_group_name(ok[i].cfg.group), why, o.group_nid, o.peer_key_bits);
    }
}

/* ---------------------------------------------------------------- trace checks */

static int tb_is_step(uint16_t l) { return l >= 100 && l < 200; }
static int tb_is_io(uint16_t l) { return l == TB_L_SEND || l == TB_L_RECV; }
static int tb_is_crypto(uint16_t l) { return l >= 300 && l < 400; }

/* Well-formedness of the whole trace: spans nest; a step contains no step; I/O sits
 * directly in a step, a record call or the close; crypto sits in a step or in another
 * crypto span. */
typedef struct tb_shape {
    int nesting_ok;
    int steps;
    int step_in_step, io_outside_step, crypto_outside_step;
    uint64_t sent[2], received[2];
} tb_shape;

static tb_shape tb_trace_shape(void) {
    const tb_trace *t = &tb_trace_buffer;
    tb_shape sh = {.nesting_ok = t->count > 0 && t->dropped == 0};
    uint16_t stack[32];
    int depth = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        uint16_t parent = depth ? stack[depth - 1] : 0;
        if (r->kind == TB_KIND_START) {
            sh.steps += tb_is_step(r->label);
            sh.step_in_step += tb_is_step(r->label) && depth > 0;
            sh.io_outside_step += tb_is_io(r->label) && !tb_is_step(parent) && parent != TB_L_RECORD_WRITE &&
                                  parent != TB_L_RECORD_READ && parent != TB_L_CLOSE;
            sh.crypto_outside_step += tb_is_crypto(r->label) && !tb_is_step(parent) && !tb_is_crypto(parent);
            if (depth < 32)
                stack[depth++] = r->label;
            else
                sh.nesting_ok = 0;
            continue;
        }
        if (depth == 0 || stack[depth - 1] != r->label) {
            sh.nesting_ok = 0;
            continue;
        }
        depth--;
        uint8_t p = r->peer == S ? S : C;
        if (r->label == TB_L_SEND)
            sh.sent[p] += r->value;
        if (r->label == TB_L_RECV)
            sh.received[p] += r->value;
    }
    sh.nesting_ok &= depth == 0;
    return sh;
}

/* How many `crypto` spans of `peer` start inside a `step` span of the same peer. */
static int tb_nested(uint16_t step, uint16_t crypto, uint8_t peer) {
    const tb_trace *t = &tb_trace_buffer;
    int open = 0, n = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        if (r->peer != peer)
            continue;
        if (r->label == step)
            open = r->kind == TB_KIND_START;
        else if (open && r->label == crypto && r->kind == TB_KIND_START)
            n++;
    }
    return n;
}

static int tb_count(uint16_t label, uint8_t peer) {
    int n = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++)
        n += tb_trace_buffer.records[i].label == label && tb_trace_buffer.records[i].peer == peer &&
             tb_trace_buffer.records[i].kind == TB_KIND_START;
    return n;
}

/* The peer's step labels in order, consecutive repeats collapsed (a step that waited for
 * its message shows up twice in a row). Returns how many. */
static size_t tb_step_sequence(uint8_t peer, uint16_t *out, size_t max) {
    size_t n = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++) {
        const tb_record *r = &tb_trace_buffer.records[i];
        if (r->peer != peer || r->kind != TB_KIND_START || !tb_is_step(r->label))
            continue;
        if ((n == 0 || out[n - 1] != r->label) && n < max)
            out[n++] = r->label;
    }
    return n;
}

static void tb_check_sequence(uint8_t peer, const uint16_t *want, size_t n_want) {
    uint16_t got[64];
    size_t n = tb_step_sequence(peer, got, 64);
    int same = n == n_want && memcmp(got, want, n * sizeof *got) == 0;
    CHECK(same);
    if (!same) {
        fprintf(stderr, "  %s steps:", tb_peer_name(peer));
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s", tb_label_name(got[i]));
        fprintf(stderr, "\n");
    }
}

/* Bytes of the SENDs nested directly in a RECORD_WRITE of `peer`. */
static uint64_t tb_record_send_bytes(uint8_t peer) {
    uint64_t n = 0;
    int in_write = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++) {
        const tb_record *r = &tb_trace_buffer.records[i];
        if (r->peer != peer)
            continue;
        if (r->label == TB_L_RECORD_WRITE)
            in_write = r->kind == TB_KIND_START;
        else if (in_write && r->label == TB_L_SEND && r->kind == TB_KIND_STOP)
            n += r->value;
    }
    return n;
}

/* The trace is well formed, and its I/O is the bytes on the wire: each peer's SENDs are
 * what the transport carried; each peer's RECVs are the other's SENDs except the other's
 * close_notify record (close_len bytes: nobody reads it); each 100-byte record went out
 * as one protected record of 100 + record_overhead bytes. */
static void tb_check_shape_and_bytes(const tb_outcome *o, uint64_t close_len, uint64_t record_overhead) {
    tb_shape sh = tb_trace_shape();
    CHECK(sh.nesting_ok);
    CHECK(sh.steps > 10);
    CHECK_EQ_U(sh.step_in_step, 0);
    CHECK_EQ_U(sh.io_outside_step, 0);
    CHECK_EQ_U(sh.crypto_outside_step, 0);
    CHECK(o->wire[0] > 0 && o->wire[1] > 0);
    CHECK_EQ_U(sh.sent[C], o->wire[0]);
    CHECK_EQ_U(sh.sent[S], o->wire[1]);
    CHECK_EQ_U(sh.received[S] + close_len, o->wire[0]);
    CHECK_EQ_U(sh.received[C] + close_len, o->wire[1]);
    CHECK_EQ_U(tb_record_send_bytes(C), 100 + record_overhead);
    CHECK_EQ_U(tb_record_send_bytes(S), 100 + record_overhead);
}

static void test_tls13_trace(void) {
    tb_conn_config cfg = {.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    tb_outcome o = {0};
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, NULL, &o, why, sizeof why) == 0);
    /* TLS 1.3 AES-GCM record: header 5 + content type 1 + tag 16; close_notify: 5 + 2 + 1 + 16. */
    tb_check_shape_and_bytes(&o, 24, 22);

    /* Where OpenSSL 3.0 does the work (docs/backend-openssl.md). */
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_HELLO, TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_KEY_GENERATE, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, S), 1);
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_KDF, S) > 0);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_SIGN, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, C), 1);
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_KDF, C) > 0);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_PK_VERIFY, C), 1); /* inside CHAIN_VERIFY */
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_VERIFY, C), 1);
    CHECK(tb_nested(TB_L_SERVER_FINISHED, TB_L_KDF, C) > 0);
    /* Nothing where it does not belong: one key pair and one secret per peer, the server
     * signs and verifies nothing else (no chain building: SSL_MODE_NO_AUTO_CHAIN). */
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, S), 1);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, C), 1);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, S), 1);
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C), 0);
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, S), 1);
    CHECK_EQ_U(tb_count(TB_L_CHAIN_VERIFY, S), 0);
    CHECK_EQ_U(tb_count(TB_L_PK_VERIFY, S), 0);

    /* I/O in the step that moves the message. */
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_HELLO, TB_L_SEND, C), 1);
    CHECK(tb_nested(TB_L_CLIENT_HELLO, TB_L_RECV, S) >= 2); /* header, body */
    CHECK_EQ_U(tb_nested(TB_L_SERVER_FINISHED, TB_L_SEND, S), 1);
    CHECK_EQ_U(tb_count(TB_L_SEND, S), 3); /* the whole flight in one flush, the record, close_notify */
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_RECV, C) >= 2);
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_RECV, C) >= 2);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_FINISHED, TB_L_SEND, C), 1);
    CHECK(tb_nested(TB_L_CLIENT_FINISHED, TB_L_RECV, S) >= 2);

    static const uint16_t client[] = {TB_L_CLIENT_HELLO, TB_L_SERVER_HELLO, TB_L_ENCRYPTED_EXTENSIONS,
                                      TB_L_SERVER_CERTIFICATE, TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_SERVER_FINISHED,
                                      TB_L_CLIENT_CHANGE_CIPHER_SPEC, TB_L_CLIENT_FINISHED, TB_L_HANDSHAKE_DONE};
    static const uint16_t server[] = {TB_L_CLIENT_HELLO, TB_L_SERVER_HELLO, TB_L_SERVER_CHANGE_CIPHER_SPEC,
                                      TB_L_ENCRYPTED_EXTENSIONS, TB_L_SERVER_CERTIFICATE,
                                      TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_SERVER_FINISHED, TB_L_CLIENT_FINISHED,
                                      TB_L_HANDSHAKE_DONE};
    tb_check_sequence(C, client, sizeof client / sizeof client[0]);
    tb_check_sequence(S, server, sizeof server / sizeof server[0]);
}

static void test_tls12_traces(void) {
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    tb_outcome o = {0};
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, NULL, &o, why, sizeof why) == 0);
    /* TLS 1.2 AES-GCM record: header 5 + explicit nonce 8 + tag 16; close_notify: 5 + 8 + 2 + 16. */
    tb_check_shape_and_bytes(&o, 31, 29);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_KEY_GENERATE, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_SIGN, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_VERIFY, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_SHARED_SECRET, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_KDF, C), 1); /* master secret */
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_SHARED_SECRET, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_KDF, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_CHANGE_CIPHER_SPEC, TB_L_KDF, S), 1); /* key block */
    static const uint16_t client[] = {TB_L_CLIENT_HELLO, TB_L_SERVER_HELLO, TB_L_SERVER_CERTIFICATE,
                                      TB_L_SERVER_KEY_EXCHANGE, TB_L_SERVER_HELLO_DONE, TB_L_CLIENT_KEY_EXCHANGE,
                                      TB_L_CLIENT_CHANGE_CIPHER_SPEC, TB_L_CLIENT_FINISHED,
                                      TB_L_SERVER_CHANGE_CIPHER_SPEC, TB_L_SERVER_FINISHED, TB_L_HANDSHAKE_DONE};
    static const uint16_t server[] = {TB_L_CLIENT_HELLO, TB_L_SERVER_HELLO, TB_L_SERVER_CERTIFICATE,
                                      TB_L_SERVER_KEY_EXCHANGE, TB_L_SERVER_HELLO_DONE, TB_L_CLIENT_KEY_EXCHANGE,
                                      TB_L_CLIENT_CHANGE_CIPHER_SPEC, TB_L_CLIENT_FINISHED,
                                      TB_L_SERVER_CHANGE_CIPHER_SPEC, TB_L_SERVER_FINISHED, TB_L_HANDSHAKE_DONE};
    tb_check_sequence(C, client, sizeof client / sizeof client[0]);
    tb_check_sequence(S, server, sizeof server / sizeof server[0]);

    /* RSA key transport; DHE. */
    cfg = (tb_conn_config){.suite_id = 0x009C, .credential = TB_CREDENTIAL_RSA2048};
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_ENCRYPT, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_DECRYPT, S), 1);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C) + tb_count(TB_L_KEY_GENERATE, S), 0);
    cfg = (tb_conn_config){.suite_id = 0x009E, .credential = TB_CREDENTIAL_RSA2048};
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_KEY_GENERATE, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_SIGN, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_SHARED_SECRET, S), 1);
}

/* A client that offers X25519 first but a server that only takes P-256: HelloRetryRequest. */
static void tb_force_hrr(tb_pair *p) {
    int client[] = {NID_X25519, NID_X9_62_prime256v1};
    int server[] = {NID_X9_62_prime256v1};
    SSL_set1_groups(tb_openssl_session_ssl(p->peer[C]), client, 2);
    SSL_set1_groups(tb_openssl_session_ssl(p->peer[S]), server, 1);
}

static void test_hello_retry_request(void) {
    tb_conn_config cfg = {.suite_id = 0x1301, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    tb_outcome o = {0};
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, tb_force_hrr, &o, why, sizeof why) == 0);
    CHECK_EQ_U(o.group_nid, NID_X9_62_prime256v1);
    CHECK_EQ_U(tb_count(TB_L_HELLO_RETRY_REQUEST, S), 1);
    CHECK(tb_count(TB_L_HELLO_RETRY_REQUEST, C) >= 1);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C), 2); /* X25519 share, then the P-256 one */
    tb_shape sh = tb_trace_shape();
    CHECK(sh.io_outside_step == 0 && sh.crypto_outside_step == 0);
}

int main(void) {
    RUN_TEST(test_init);
    RUN_TEST(test_configuration_errors);
    RUN_TEST(test_every_suite_handshakes);
    RUN_TEST(test_forced_groups);
    RUN_TEST(test_tls13_trace);
    RUN_TEST(test_tls12_traces);
    RUN_TEST(test_hello_retry_request);
    b->deinit();
    return tb_test_report();
}
