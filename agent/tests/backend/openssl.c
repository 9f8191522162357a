/* SPDX-License-Identifier: Apache-2.0 */
/* What is true of the OpenSSL 3 backend for the conformance suite, and its own tests: the
 * trace is well formed (steps nest, I/O and crypto only inside steps, the crypto operations
 * in the steps where OpenSSL does them, the expected step sequence per peer, I/O records
 * that carry exactly the bytes moved), a HelloRetryRequest is traced as one, and (3.5) the
 * ML-KEM groups and ML-DSA credentials work and trace their KEM and signature operations.
 * The same file runs against OpenSSL 3.0 (Debian 12) and 3.5 (openssl-3.5.c includes it):
 * what differs is the table below. */
#include <string.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "conformance.h"
#include "openssl_internal.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"

/* Set by openssl.cmake: 0 = any count. */
#ifndef TB_OPENSSL_EXPECTED_SUITES
#define TB_OPENSSL_EXPECTED_SUITES 0
#endif

/* What OpenSSL 3.5 adds: ML-KEM groups, ML-DSA credentials, brainpool's TLS 1.3 code points,
 * psk_ke (SSL_OP_PREFER_NO_DHE_KEX, 3.3), raw public keys (RFC 7250, 3.2) for ECDSA and
 * TLS 1.3 suites. */
#if OPENSSL_VERSION_PREREQ(3, 5)
#define TB_OSSL_PQ 1
#define C_MLDSA TB_CREDENTIAL_MLDSA44, TB_CREDENTIAL_MLDSA65, TB_CREDENTIAL_MLDSA87,
#define C_RPK , TB_CREDENTIAL_RPK_ECDSA
#define TB_OSSL_TLS13_CREDS 10
#else
#define TB_OSSL_PQ 0
#define C_MLDSA
#define C_RPK
#define TB_OSSL_TLS13_CREDS 6
#endif

static const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;

/* The count OpenSSL itself reports for a context with every suite enabled. */
static size_t tb_ossl_library_suites(void) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL_CTX_set_security_level(ctx, 0);
    CHECK(SSL_CTX_set_cipher_list(ctx, "ALL:COMPLEMENTOFALL") == 1);
    CHECK(SSL_CTX_set_ciphersuites(ctx, "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                                        "TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256") == 1);
    int n = sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(ctx));
    SSL_CTX_free(ctx);
    return n > 0 ? (size_t)n : 0;
}

/* OpenSSL's group NIDs as IANA values (groups without a NID come as TLSEXT_nid_unknown | id). */
static const struct {
    int nid;
    uint16_t group;
} tb_ossl_nids[] = {
    {NID_X25519, TB_GROUP_X25519},
    {NID_X448, TB_GROUP_X448},
    {NID_X9_62_prime256v1, TB_GROUP_SECP256R1},
    {NID_secp384r1, TB_GROUP_SECP384R1},
    {NID_secp521r1, TB_GROUP_SECP521R1},
    {NID_X9_62_prime192v1, TB_GROUP_SECP192R1},
    {NID_secp224r1, TB_GROUP_SECP224R1},
    {NID_ffdhe2048, TB_GROUP_FFDHE2048},
    {NID_ffdhe3072, TB_GROUP_FFDHE3072},
    {NID_ffdhe4096, TB_GROUP_FFDHE4096},
#ifdef NID_brainpoolP256r1tls13 /* 3.5: NIDs of their own for brainpool's TLS 1.3 code points */
    {NID_brainpoolP256r1tls13, TB_GROUP_BRAINPOOLP256R1TLS13},
    {NID_brainpoolP384r1tls13, TB_GROUP_BRAINPOOLP384R1TLS13},
    {NID_brainpoolP512r1tls13, TB_GROUP_BRAINPOOLP512R1TLS13},
#endif
};

/* TLS 1.2 and 1.3 share brainpool's NIDs: the version says which code point was used. */
static const struct {
    int nid;
    uint16_t tls12, tls13;
} tb_ossl_brainpool[] = {
    {NID_brainpoolP256r1, TB_GROUP_BRAINPOOLP256R1, TB_GROUP_BRAINPOOLP256R1TLS13},
    {NID_brainpoolP384r1, TB_GROUP_BRAINPOOLP384R1, TB_GROUP_BRAINPOOLP384R1TLS13},
    {NID_brainpoolP512r1, TB_GROUP_BRAINPOOLP512R1, TB_GROUP_BRAINPOOLP512R1TLS13},
};

/* The group of the server's ephemeral key: for a DH key (FFDHE; in TLS 1.2 OpenSSL 3.0
 * negotiates no group, the server sends parameters) the RFC 7919 group of its size, else
 * the negotiated group. */
static uint16_t tb_ossl_group(SSL *client) {
    EVP_PKEY *k = NULL;
    int bits = SSL_get_peer_tmp_key(client, &k) == 1 && EVP_PKEY_is_a(k, "DH") ? EVP_PKEY_get_bits(k) : 0;
    EVP_PKEY_free(k);
    if (bits)
        return bits == 2048 ? TB_GROUP_FFDHE2048 : bits == 3072 ? TB_GROUP_FFDHE3072 : bits == 4096 ? TB_GROUP_FFDHE4096 : 0;
    int nid = SSL_get_negotiated_group(client);
    if (nid & TLSEXT_nid_unknown)
        return (uint16_t)(nid & 0xFFFF);
    for (size_t i = 0; i < TB_COUNT(tb_ossl_nids); i++)
        if (tb_ossl_nids[i].nid == nid)
            return tb_ossl_nids[i].group;
    for (size_t i = 0; i < TB_COUNT(tb_ossl_brainpool); i++)
        if (tb_ossl_brainpool[i].nid == nid)
            return SSL_version(client) == TLS1_3_VERSION ? tb_ossl_brainpool[i].tls13 : tb_ossl_brainpool[i].tls12;
    return 0;
}

static void tb_ossl_negotiated(tb_session *client, tb_outcome *o) {
    SSL *c = tb_openssl_session_ssl(client);
    o->version = SSL_version(c) == TLS1_3_VERSION ? "TLS1.3" : SSL_version(c) == TLS1_2_VERSION ? "TLS1.2" : "other";
    o->suite = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(c));
    o->group = tb_ossl_group(c);
}

#define C_ECDSA TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384
#define C_EC C_ECDSA C_RPK
#define C_RSA TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072
#define C_13 C_ECDSA, C_RSA, TB_CREDENTIAL_ED25519, C_MLDSA TB_CREDENTIAL_PSK C_RPK

static const tb_expected_suite tb_ossl_known[] = {
    {0x1301, "TLS_AES_128_GCM_SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-GCM", "SHA256", false, {C_13}},
    {0x1302, "TLS_AES_256_GCM_SHA384", "TLS1.3", "TLS1.3", "any", "any", "AES-256-GCM", "SHA384", false, {C_13}},
    {0x1303, "TLS_CHACHA20_POLY1305_SHA256", "TLS1.3", "TLS1.3", "any", "any", "CHACHA20-POLY1305", "SHA256", false,
     {C_13}},
    {0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256",
     true, {C_EC}},
    {0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "ECDHE", "RSA", "AES-128-GCM", "SHA256",
     true, {C_RSA}},
    {0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS1.0", "TLS1.2", "RSA", "RSA", "AES-128-CBC", "SHA1", true, {C_RSA}},
    {0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "RSA", "AES-128-GCM", "SHA256", true,
     {C_RSA}},
    {0xC0AE, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-CCM-8", "SHA256",
     true, {C_EC}},
    {0x00AC, "TLS_RSA_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "RSA", "PSK", "AES-128-GCM", "SHA256", true,
     {C_RSA}},
    {0x00AA, "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "PSK", "AES-128-GCM", "SHA256", true,
     {TB_CREDENTIAL_PSK}},
    {0xCCAB, "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305", "SHA256",
     true, {TB_CREDENTIAL_PSK}},
    {0xC006, "TLS_ECDHE_ECDSA_WITH_NULL_SHA", "TLS1.0", "TLS1.2", "ECDHE", "ECDSA", "NULL", "SHA1", true, {C_EC}},
    {0x00A6, "TLS_DH_anon_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "NONE", "AES-128-GCM", "SHA256", true,
     {0}},
};

/* TLS 1.3 suites run with every certificate credential (ML-DSA from 3.5) and the external
 * PSK; anonymous, SRP and DSS with none. */
static void tb_ossl_check_suite(const tb_suite_info *s) {
    if (strcmp(s->max_version, "TLS1.3") == 0)
        CHECK_EQ_U(s->n_credentials, TB_OSSL_TLS13_CREDS);
    if (strcmp(s->authentication, "NONE") == 0 || strcmp(s->authentication, "SRP") == 0 ||
        strcmp(s->authentication, "DSS") == 0)
        CHECK(s->n_credentials == 0);
}

static const tb_refusal tb_ossl_refusals[] = {
    {{.suite_id = 0x002F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "use group default"},
    {{.suite_id = 0x00A6, .credential = TB_CREDENTIAL_RSA2048}, "anonymous"},
    /* groups OpenSSL offers in one version only; ML-KEM is TLS 1.3's (the spec's families) */
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "TLS 1.2 only"},
    {{.suite_id = 0x1301, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256},
     "TLS 1.2 only"},
    {{.suite_id = 0xC02B, .group = TB_GROUP_MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
    {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_MLDSA44}, "does not fit suite"},
    /* wolfSSL's pre-standard Kyber code points are not OpenSSL's */
    {{.suite_id = 0x1301, .group = TB_GROUP_KYBER_LEVEL3, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not supported by the OpenSSL agent"},
#if !TB_OSSL_PQ
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not in this OpenSSL build"},
    {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_MLDSA44}, "does not fit suite"},
#endif
};

/* The forced group is the one negotiated (TLS 1.3 and TLS 1.2 ECDHE), and the DH size for
 * TLS 1.2 DHE is the forced FFDHE group's. */
static const tb_forced_group tb_ossl_groups[] = {
    {{.suite_id = 0x1301, .group = 0, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP256R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_X448},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_FFDHE2048},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_SECP256R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_X448},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_FFDHE2048},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ED25519}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ED25519}, TB_GROUP_SECP256R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ED25519}, TB_GROUP_X448},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ED25519}, TB_GROUP_FFDHE2048},
    {{.suite_id = 0x1302, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P384}, TB_GROUP_SECP384R1},
    {{.suite_id = 0x1303, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_RSA3072}, TB_GROUP_SECP521R1},
    {{.suite_id = 0xC02B, .group = 0, .credential = TB_CREDENTIAL_ECDSA_P384}, TB_GROUP_SECP256R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP384R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P384}, TB_GROUP_X25519},
    {{.suite_id = 0xC02F, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_X448},
    {{.suite_id = 0x009E, .group = 0, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_FFDHE2048},
    {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_FFDHE3072},
    {{.suite_id = 0x00AA, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_FFDHE4096},
    /* the small curves constrained devices still use: TLS 1.2 */
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP192R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP224R1},
    {{.suite_id = 0xC02F, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_RSA2048},
     TB_GROUP_BRAINPOOLP256R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP384R1, .credential = TB_CREDENTIAL_ECDSA_P384},
     TB_GROUP_BRAINPOOLP384R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_SECP256R1},
#if TB_OSSL_PQ
    {{.suite_id = 0x1301, .group = TB_GROUP_BRAINPOOLP256R1TLS13, .credential = TB_CREDENTIAL_ECDSA_P256},
     TB_GROUP_BRAINPOOLP256R1TLS13},
    {{.suite_id = 0x1301, .group = TB_GROUP_MLKEM512, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_MLKEM512},
    {{.suite_id = 0x1301, .group = TB_GROUP_MLKEM768, .credential = TB_CREDENTIAL_MLDSA44}, TB_GROUP_MLKEM768},
    {{.suite_id = 0x1302, .group = TB_GROUP_MLKEM1024, .credential = TB_CREDENTIAL_MLDSA87}, TB_GROUP_MLKEM1024},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_RSA2048},
     TB_GROUP_X25519MLKEM768},
    {{.suite_id = 0x1303, .group = TB_GROUP_SECP256R1MLKEM768, .credential = TB_CREDENTIAL_MLDSA65},
     TB_GROUP_SECP256R1MLKEM768},
    {{.suite_id = 0x1302, .group = TB_GROUP_SECP384R1MLKEM1024, .credential = TB_CREDENTIAL_ECDSA_P384},
     TB_GROUP_SECP384R1MLKEM1024},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_X25519MLKEM768},
#endif
};

/* ---------------------------------------------------------------- the library's own tests */

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
    CHECK(tb_conformance_run(&cfg, NULL, &o, why, sizeof why) == 0);
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
    CHECK(tb_conformance_run(&cfg, NULL, &o, why, sizeof why) == 0);
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
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_ENCRYPT, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_DECRYPT, S), 1);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C) + tb_count(TB_L_KEY_GENERATE, S), 0);
    cfg = (tb_conn_config){.suite_id = 0x009E, .credential = TB_CREDENTIAL_RSA2048};
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
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
    CHECK(tb_conformance_run(&cfg, tb_force_hrr, &o, why, sizeof why) == 0);
    CHECK_EQ_U(o.group, TB_GROUP_SECP256R1);
    CHECK_EQ_U(tb_count(TB_L_HELLO_RETRY_REQUEST, S), 1);
    CHECK(tb_count(TB_L_HELLO_RETRY_REQUEST, C) >= 1);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C), 2); /* X25519 share, then the P-256 one */
    tb_shape sh = tb_trace_shape();
    CHECK(sh.io_outside_step == 0 && sh.crypto_outside_step == 0);
}

/* ---------------------------------------------------------------- post-quantum (3.5) */

/* Pure ML-KEM: the client's key share is a key generation, the server encapsulates to it
 * and the client decapsulates: no Diffie-Hellman anywhere. A hybrid does both, its ML-KEM
 * half nested in the hybrid's encapsulation. Key shares of kilobytes: far more bytes than
 * X25519's in the ClientHello and in the server's flight. */
static void test_ml_kem_groups(void) {
    if (!TB_OSSL_PQ)
        return;
    char why[256] = "";
    tb_outcome classic = {0}, pure = {0}, hybrid = {0};
    tb_conn_config cfg = {.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256};
    CHECK(tb_conformance_run(&cfg, NULL, &classic, why, sizeof why) == 0);
    CHECK_EQ_U(tb_count(TB_L_KEM_ENCAPSULATE, S) + tb_count(TB_L_KEM_DECAPSULATE, C), 0);

    cfg.group = TB_GROUP_MLKEM768;
    CHECK(tb_conformance_run(&cfg, NULL, &pure, why, sizeof why) == 0);
    CHECK_EQ_U(pure.group, TB_GROUP_MLKEM768);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_HELLO, TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_KEM_ENCAPSULATE, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_KEM_DECAPSULATE, C), 1);
    CHECK_EQ_U(tb_count(TB_L_KEM_ENCAPSULATE, C) + tb_count(TB_L_KEM_DECAPSULATE, S), 0);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, S) + tb_count(TB_L_SHARED_SECRET, S) + tb_count(TB_L_SHARED_SECRET, C), 0);
    /* ML-KEM-768: 1184-byte encapsulation key, 1088-byte ciphertext; X25519: 32 each. */
    CHECK(pure.wire[0] > classic.wire[0] + 1100);
    CHECK(pure.wire[1] > classic.wire[1] + 1000);

    cfg.group = TB_GROUP_X25519MLKEM768;
    CHECK(tb_conformance_run(&cfg, NULL, &hybrid, why, sizeof why) == 0);
    CHECK_EQ_U(hybrid.group, TB_GROUP_X25519MLKEM768);
    CHECK_EQ_U(tb_nested(TB_L_KEM_ENCAPSULATE, TB_L_KEM_ENCAPSULATE, S), 1); /* the ML-KEM half */
    CHECK_EQ_U(tb_nested(TB_L_KEM_ENCAPSULATE, TB_L_SHARED_SECRET, S), 1);   /* the X25519 half */
    CHECK_EQ_U(tb_nested(TB_L_KEM_DECAPSULATE, TB_L_KEM_DECAPSULATE, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_KEM_DECAPSULATE, TB_L_SHARED_SECRET, C), 1);
    CHECK(hybrid.wire[0] > pure.wire[0]); /* and the X25519 share on top */
    tb_shape sh = tb_trace_shape();
    CHECK(sh.nesting_ok && sh.io_outside_step == 0 && sh.crypto_outside_step == 0);
    if (pure.wire[0] <= classic.wire[0] + 1100 || hybrid.wire[0] <= pure.wire[0])
        fprintf(stderr, "  client bytes: x25519 %llu, MLKEM768 %llu, X25519MLKEM768 %llu\n",
                (unsigned long long)classic.wire[0], (unsigned long long)pure.wire[0],
                (unsigned long long)hybrid.wire[0]);
}

/* ML-DSA certificates: the server signs its CertificateVerify, the client verifies the chain
 * and the signature, as with any certificate; kilobytes of certificate and signature. */
static void test_ml_dsa_credentials(void) {
    if (!TB_OSSL_PQ)
        return;
    char why[256] = "";
    tb_outcome ecdsa = {0}, mldsa = {0};
    tb_conn_config cfg = {.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256};
    CHECK(tb_conformance_run(&cfg, NULL, &ecdsa, why, sizeof why) == 0);
    cfg.credential = TB_CREDENTIAL_MLDSA44;
    CHECK(tb_conformance_run(&cfg, NULL, &mldsa, why, sizeof why) == 0);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_SIGN, S), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_VERIFY, C), 1);
    /* A 3.9 KB leaf and a 2420-byte signature against ~0.5 KB and ~72 bytes. */
    CHECK(mldsa.wire[1] > ecdsa.wire[1] + 5000);
}

/* ---------------------------------------------------------------- state -> step label table */

/* SSL_get_state() when a step ends names the message just written or parsed. */
static const tb_state_label tb_ossl_states[] = {
    {TLS_ST_CW_CLNT_HELLO, TB_L_CLIENT_HELLO},
    {TLS_ST_SR_CLNT_HELLO, TB_L_CLIENT_HELLO},
    {TLS_ST_SW_SRVR_HELLO, TB_L_SERVER_HELLO},
    {TLS_ST_CR_SRVR_HELLO, TB_L_SERVER_HELLO},
    {TLS_ST_SW_CERT, TB_L_SERVER_CERTIFICATE},
    {TLS_ST_CR_CERT, TB_L_SERVER_CERTIFICATE},
    {TLS_ST_SW_KEY_EXCH, TB_L_SERVER_KEY_EXCHANGE},
    {TLS_ST_CR_KEY_EXCH, TB_L_SERVER_KEY_EXCHANGE},
    {TLS_ST_SW_SRVR_DONE, TB_L_SERVER_HELLO_DONE},
    {TLS_ST_CR_SRVR_DONE, TB_L_SERVER_HELLO_DONE},
    {TLS_ST_CW_KEY_EXCH, TB_L_CLIENT_KEY_EXCHANGE},
    {TLS_ST_SR_KEY_EXCH, TB_L_CLIENT_KEY_EXCHANGE},
    {TLS_ST_CW_CHANGE, TB_L_CLIENT_CHANGE_CIPHER_SPEC},
    {TLS_ST_SR_CHANGE, TB_L_CLIENT_CHANGE_CIPHER_SPEC},
    {TLS_ST_SW_CHANGE, TB_L_SERVER_CHANGE_CIPHER_SPEC},
    {TLS_ST_CR_CHANGE, TB_L_SERVER_CHANGE_CIPHER_SPEC},
    {TLS_ST_CW_FINISHED, TB_L_CLIENT_FINISHED},
    {TLS_ST_SR_FINISHED, TB_L_CLIENT_FINISHED},
    {TLS_ST_SW_FINISHED, TB_L_SERVER_FINISHED},
    {TLS_ST_CR_FINISHED, TB_L_SERVER_FINISHED},
    {TLS_ST_SW_ENCRYPTED_EXTENSIONS, TB_L_ENCRYPTED_EXTENSIONS},
    {TLS_ST_CR_ENCRYPTED_EXTENSIONS, TB_L_ENCRYPTED_EXTENSIONS},
    {TLS_ST_SW_CERT_VRFY, TB_L_SERVER_CERTIFICATE_VERIFY},
    {TLS_ST_CR_CERT_VRFY, TB_L_SERVER_CERTIFICATE_VERIFY},
    {TLS_ST_CW_CERT_VRFY, TB_L_CERTIFICATE_VERIFY},
    {TLS_ST_SR_CERT_VRFY, TB_L_CERTIFICATE_VERIFY},
    {TLS_ST_CW_CERT, TB_L_CLIENT_CERTIFICATE},
    {TLS_ST_SR_CERT, TB_L_CLIENT_CERTIFICATE},
    {TLS_ST_SW_CERT_REQ, TB_L_CERTIFICATE_REQUEST},
    {TLS_ST_SW_SESSION_TICKET, TB_L_NEW_SESSION_TICKET},
    {TLS_ST_SW_KEY_UPDATE, TB_L_KEY_UPDATE},
    {DTLS_ST_SW_HELLO_VERIFY_REQUEST, TB_L_HELLO_VERIFY_REQUEST},
    {TLS_ST_BEFORE, TB_L_HELLO_REQUEST},
    {TLS_ST_OK, TB_L_HANDSHAKE_DONE},
};

static const tb_library_test tb_ossl_tests[] = {
    TB_LIBRARY_TEST(test_tls13_trace),
    TB_LIBRARY_TEST(test_tls12_traces),
    TB_LIBRARY_TEST(test_hello_retry_request),
    TB_LIBRARY_TEST(test_ml_kem_groups),
    TB_LIBRARY_TEST(test_ml_dsa_credentials),
};

const tb_expected tb_expected_backend = {
    .library_name = "OpenSSL",
    .step_granularity = "state",
    .library_suite_count = tb_ossl_library_suites,
    .expected_suites = TB_OPENSSL_EXPECTED_SUITES,
    .min_suites = 101, /* Debian's 3.0: TLS 1.3 + 1.2 incl. PSK, ARIA, CAMELLIA, NULL */
    .min_runnable = 61,
    .min_tls13 = 3,
    .suite_prefix = "TLS_", /* the IANA name */
    .versions = (const char *const[]){"TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3", NULL},
    .key_exchanges = (const char *const[]){"ECDHE", "DHE", "RSA", "PSK", "any", "SRP", "GOST", NULL},
    .authentications = (const char *const[]){"ECDSA", "RSA", "PSK", "any", "DSS", "NONE", "SRP", "GOST", NULL},
    .unsupported_have_metadata = true,
    .check_suite = tb_ossl_check_suite,
    .known = TB_LIST(tb_ossl_known),
    .refusals = TB_LIST(tb_ossl_refusals),
    .groups = TB_LIST(tb_ossl_groups),
    .min_pairs = 101,
    .negotiated = tb_ossl_negotiated,
    .state_count = tb_openssl_state_count,
    .state_label = tb_openssl_state_label,
    .n_states = TLS_ST_SR_END_OF_EARLY_DATA + 1,
    .known_states = TB_LIST(tb_ossl_states),
    .extra = TB_LIST(tb_ossl_tests),
};
