/* SPDX-License-Identifier: Apache-2.0 */
/* What is true of the mbed TLS 3.6 backend for the conformance suite, and its own tests:
 * the step labels of both protocol versions (CERTIFICATE_VERIFY is the server's message in
 * TLS 1.3 and the client's in TLS 1.2), the crypto operations nest in the steps where 3.6
 * does them (PSA for the TLS 1.3 key share, (EC)DHE and HKDF; the legacy modules for
 * TLS 1.2), the NewSessionTicket after the handshake, the heap counting hook. */
#include <string.h>

#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ciphersuites.h"

#include "conformance.h"
#include "mbedtls3_internal.h"
#include "mbedtls_checks.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"

/* Set by mbedtls3.cmake: 170 for the library cache's 3.6 build, 0 = any count. */
#ifndef TB_MBEDTLS36_EXPECTED_SUITES
#define TB_MBEDTLS36_EXPECTED_SUITES 0
#endif

static const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;

static size_t tb_mbed3_library_suites(void) {
    size_t n = 0;
    for (const int *id = mbedtls_ssl_list_ciphersuites(); *id; id++)
        n++;
    return n;
}

static void tb_mbed3_negotiated(tb_session *client, tb_outcome *o) {
    mbedtls_ssl_context *ssl = tb_mbedtls3_session_ssl(client);
    mbedtls_ssl_protocol_version v = mbedtls_ssl_get_version_number(ssl);
    o->version = v == MBEDTLS_SSL_VERSION_TLS1_3 ? "TLS1.3" : v == MBEDTLS_SSL_VERSION_TLS1_2 ? "TLS1.2" : "other";
    o->suite = (uint16_t)mbedtls_ssl_get_ciphersuite_id_from_ssl(ssl);
}

#define C_EC TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384
#define C_RSA TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072
#define C_13 C_EC, C_RSA, TB_CREDENTIAL_PSK

static const tb_expected_suite tb_mbed3_known[] = {
    {0x1301, "TLS1-3-AES-128-GCM-SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-GCM", "SHA256", false, {C_13}},
    /* 3.6 binds an external PSK to SHA-256: not on a SHA-384 suite */
    {0x1302, "TLS1-3-AES-256-GCM-SHA384", "TLS1.3", "TLS1.3", "any", "any", "AES-256-GCM", "SHA384", false,
     {C_EC, C_RSA}},
    {0x1303, "TLS1-3-CHACHA20-POLY1305-SHA256", "TLS1.3", "TLS1.3", "any", "any", "CHACHA20-POLY1305", "SHA256", false,
     {C_13}},
    {0x1305, "TLS1-3-AES-128-CCM-8-SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-CCM-8", "SHA256", false,
     {C_13}},
    {0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256",
     true, {C_EC}},
    {0x002F, "TLS-RSA-WITH-AES-128-CBC-SHA", "TLS1.2", "TLS1.2", "RSA", "RSA", "AES-128-CBC", "SHA1", true, {C_RSA}},
    {0xCCAB, "TLS-PSK-WITH-CHACHA20-POLY1305-SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305", "SHA256",
     true, {TB_CREDENTIAL_PSK}},
    {0xC0A8, "TLS-PSK-WITH-AES-128-CCM-8", "TLS1.2", "TLS1.2", "PSK", "PSK", "AES-128-CCM-8", "SHA256", true,
     {TB_CREDENTIAL_PSK}},
    {0xC004, "TLS-ECDH-ECDSA-WITH-AES-128-CBC-SHA", "TLS1.2", "TLS1.2", "ECDH", "ECDSA", "AES-128-CBC", "SHA1", true,
     {C_EC}},
    {0x00AC, "TLS-RSA-PSK-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "RSA", "PSK", "AES-128-GCM", "SHA256", true,
     {C_RSA}},
};

static const tb_refusal tb_mbed3_refusals[] = {
    {{.suite_id = 0x002F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "use group default"},
    /* static ECDH computes on the certificate's key: no other curve */
    {{.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "certificate's curve"},
    /* 3.6 has no TLS 1.3 code points for the small curves and brainpool */
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "a TLS 1.3 group"},
    {{.suite_id = 0x1301, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256},
     "a TLS 1.3 group"},
    {{.suite_id = 0x1301, .group = TB_GROUP_BRAINPOOLP256R1TLS13, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not supported"},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
    {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_ED25519}, "does not fit suite"},
    {{.suite_id = 0x1302, .credential = TB_CREDENTIAL_PSK}, "does not fit suite"},
};

/* mbed TLS does not say which group a handshake used: each must complete. */
static const tb_forced_group tb_mbed3_groups[] = {
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_RSA2048}, 0},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_ECDSA_P384}, 0},
    {{.suite_id = 0x1301, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0x1303, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_PSK}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P384}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP512R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA3072}, 0},
    {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA2048}, 0},
    /* static ECDH: naming the certificate's curve is the default */
    {{.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P384}, 0},
};

/* ---------------------------------------------------------------- the library's own tests */

/* TLS 1.3, X25519, ECDSA P-256: one key share each (KEY_GENERATE), PSA agrees on the
 * secret (SHARED_SECRET > ECDH_CALC_SECRET), the
 * server signs in its CertificateVerify, the client verifies the chain and that signature,
 * the key schedule is HKDF in the steps that derive keys. */
static void test_tls13_crypto_nests_in_steps(void) {
    tb_conn_config cfg = {.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK(tb_trace_buffer.dropped == 0);
    CHECK_EQ_U(tb_nested(TB_L_CLIENT_HELLO, TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_nested(TB_L_SERVER_HELLO, TB_L_KEY_GENERATE, S), 1);
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, S));
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_ECDH_CALC_SECRET, S));
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, C));
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_KDF, C));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_SIGN, S));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_FINISHED, TB_L_KDF, S));
    /* no client certificate asked: the client signs nothing, the server verifies no chain */
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C), 0);
    CHECK_EQ_U(tb_count(TB_L_CHAIN_VERIFY, S), 0);
    /* TLS 1.3 uses no TLS 1.2 key exchange calls (TLS 1.2: mbedtls_checks.h, as in 2.28) */
    CHECK_EQ_U(tb_count(TB_L_ECDH_MAKE_PUBLIC, C) + tb_count(TB_L_DERIVE_KEYS, C), 0);
    CHECK_EQ_U(tb_count(TB_L_CERTIFICATE_VERIFY, C) + tb_count(TB_L_CERTIFICATE_VERIFY, S), 0);
    /* no tickets without RESUME */
    CHECK_EQ_U(tb_count(TB_L_NEW_SESSION_TICKET, S) + tb_count(TB_L_NEW_SESSION_TICKET, C), 0);

    /* RSA-PSS CertificateVerify and an FFDHE key share. */
    cfg = (tb_conn_config){.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_RSA2048};
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE_VERIFY, TB_L_PK_SIGN, S));
    CHECK(tb_nested(TB_L_CLIENT_HELLO, TB_L_KEY_GENERATE, C));
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, S));
    CHECK_EQ_U(tb_count(TB_L_ECDH_CALC_SECRET, S), 0);
}

/* TLS 1.2 (MBEDTLS_USE_PSA_CRYPTO off) takes the legacy path: no PSA key share or agreement,
 * and its CertificateVerify state is the client's message. */
static void test_tls12_uses_the_legacy_modules(void) {
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    for (uint8_t p = C; p <= S; p++)
        CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, p) + tb_count(TB_L_SHARED_SECRET, p) +
                       tb_count(TB_L_SERVER_CERTIFICATE_VERIFY, p),
                   0);
    CHECK(tb_count(TB_L_CERTIFICATE_VERIFY, C) > 0);
}

/* With RESUME the TLS 1.3 server writes its NewSessionTicket after the handshake is over
 * (two steps: write, flush) and the client reads it as its last handshake step. */
static void test_tls13_ticket_steps(void) {
    tb_conn_config cfg = {.suite_id = 0x1301, .credential = TB_CREDENTIAL_ECDSA_P256, .options = TB_OPTION_RESUME,
                          .first_connection = true};
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_count(TB_L_NEW_SESSION_TICKET, S), 2);
    CHECK(tb_count(TB_L_NEW_SESSION_TICKET, C) >= 1);
    CHECK(tb_nested(TB_L_NEW_SESSION_TICKET, TB_L_SEND, S));
    CHECK(tb_nested(TB_L_NEW_SESSION_TICKET, TB_L_RECV, C));
    /* the resumed handshake gets a fresh ticket too, and resumes with psk_dhe_ke */
    cfg.first_connection = false;
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_count(TB_L_NEW_SESSION_TICKET, S), 2);
    CHECK(tb_nested(TB_L_CLIENT_HELLO, TB_L_KEY_GENERATE, C));
    CHECK(tb_nested(TB_L_SERVER_HELLO, TB_L_SHARED_SECRET, S));
}

/* The hook that will count heap bytes per step: mbed TLS's allocations go through it. */
static void test_heap_counting(void) {
    size_t now = 0, peak = 0;
    CHECK(tb_mbedtls3_heap_counting(true) == 0);
    tb_conn_config cfg = {.suite_id = 0x1301, .credential = TB_CREDENTIAL_ECDSA_P256};
    tb_pair p;
    int32_t e = 0;
    CHECK(tb_pair_open(&p, &cfg) == 0);
    CHECK(tb_pair_handshake(&p, &e) == 0);
    tb_mbedtls3_heap_stats(&now, &peak);
    CHECK(now > 16384 && peak >= now); /* at least the record buffers of both peers */
    tb_pair_close(&p);
    tb_mbedtls3_heap_stats(&now, &peak);
    CHECK_EQ_U(now, 0);
    CHECK(tb_mbedtls3_heap_counting(false) == 0);
}

/* Every state has a label in both versions; the conformance suite checks one column. */
static uint16_t tb_mbed3_both_labels(int state) {
    uint16_t tls12 = tb_mbedtls3_state_label(state, false);
    return tls12 ? tb_mbedtls3_state_label(state, true) : 0;
}

/* ssl->state at a step's entry names its message; TLS 1.3 labels (conformance: both columns set). */
static const tb_state_label tb_mbed3_states[] = {
    {MBEDTLS_SSL_HELLO_REQUEST, TB_L_HELLO_REQUEST},
    {MBEDTLS_SSL_CLIENT_HELLO, TB_L_CLIENT_HELLO},
    {MBEDTLS_SSL_SERVER_CERTIFICATE, TB_L_SERVER_CERTIFICATE},
    {MBEDTLS_SSL_CERTIFICATE_VERIFY, TB_L_SERVER_CERTIFICATE_VERIFY},
    {MBEDTLS_SSL_CLIENT_CERTIFICATE_VERIFY, TB_L_CERTIFICATE_VERIFY},
    {MBEDTLS_SSL_ENCRYPTED_EXTENSIONS, TB_L_ENCRYPTED_EXTENSIONS},
    {MBEDTLS_SSL_HELLO_RETRY_REQUEST, TB_L_HELLO_RETRY_REQUEST},
    {MBEDTLS_SSL_SERVER_CCS_AFTER_SERVER_HELLO, TB_L_SERVER_CHANGE_CIPHER_SPEC},
    {MBEDTLS_SSL_CLIENT_CCS_AFTER_SERVER_FINISHED, TB_L_CLIENT_CHANGE_CIPHER_SPEC},
    {MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET, TB_L_NEW_SESSION_TICKET},
    {MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET_FLUSH, TB_L_NEW_SESSION_TICKET},
};

/* The TLS 1.2 column where it differs. */
static void test_tls12_labels(void) {
    CHECK_EQ_U(tb_mbedtls3_state_label(MBEDTLS_SSL_CERTIFICATE_VERIFY, false), TB_L_CERTIFICATE_VERIFY);
    CHECK_EQ_U(tb_mbedtls3_state_label(MBEDTLS_SSL_NEW_SESSION_TICKET, false), TB_L_NEW_SESSION_TICKET);
    CHECK_EQ_U(tb_mbedtls3_state_label(MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT, false),
               TB_L_HELLO_VERIFY_REQUEST);
    CHECK_EQ_U(tb_mbedtls3_state_label(MBEDTLS_SSL_CLIENT_KEY_EXCHANGE, false), TB_L_CLIENT_KEY_EXCHANGE);
    CHECK_EQ_U(tb_mbedtls3_state_label(-1, false), 0);
}

static const tb_library_test tb_mbed3_tests[] = {
    TB_LIBRARY_TEST(test_tls13_crypto_nests_in_steps),
    TB_LIBRARY_TEST(test_tls12_crypto_nests_in_steps),
    TB_LIBRARY_TEST(test_tls12_uses_the_legacy_modules),
    TB_LIBRARY_TEST(test_tls13_ticket_steps),
    TB_LIBRARY_TEST(test_refused_resumption_fails),
    TB_LIBRARY_TEST(test_heap_counting),
    TB_LIBRARY_TEST(test_tls12_labels),
};

const tb_expected tb_expected_backend = {
    .library_name = "mbed TLS",
    .step_granularity = "state",
    .library_suite_count = tb_mbed3_library_suites,
    .expected_suites = TB_MBEDTLS36_EXPECTED_SUITES,
    .min_suites = 1,
    .min_tls13 = 5,
    .suite_prefix = "TLS",
    .versions = (const char *const[]){"TLS1.2", "TLS1.3", NULL},
    .key_exchanges = (const char *const[]){"ECDHE", "ECDH", "DHE", "RSA", "PSK", "any", NULL},
    .authentications = (const char *const[]){"ECDSA", "RSA", "PSK", "any", NULL},
    .unsupported_have_metadata = true,
    .known = TB_LIST(tb_mbed3_known),
    .refusals = TB_LIST(tb_mbed3_refusals),
    .groups = TB_LIST(tb_mbed3_groups),
    .min_pairs = 1,
    .min_tls13_pairs = 24, /* 4 SHA-256 suites x 5 credentials, the SHA-384 one x 4 */
    .negotiated = tb_mbed3_negotiated,
    .state_count = tb_mbedtls3_state_count,
    .state_label = tb_mbed3_both_labels,
    .n_states = MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET_FLUSH + 1,
    .known_states = TB_LIST(tb_mbed3_states),
    .extra = TB_LIST(tb_mbed3_tests),
};
