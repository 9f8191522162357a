/* SPDX-License-Identifier: Apache-2.0 */
/* What is true of the wolfSSL backend for the conformance suite, and its own tests: larger
 * forced groups move more bytes, a group the build lacks is refused by name, error codes have
 * texts, steps are turns (HANDSHAKE_TURN_n, capped at 4), and (5.7) the Kyber groups trace
 * their KEM operations. The same file runs against Debian 12's 5.5 and the cached 5.7
 * (wolfssl-5.7.c includes it): what differs is the tables below. The runner-level trace
 * tests are test_wolfssl_trace.c. */
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/version.h>

#include "conformance.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"
#include "wolfssl_internal.h"

/* Set by wolfssl.cmake: 61 for Debian's 5.5.4 build (name aliases skipped), 0 = any count. */
#ifndef TB_WOLFSSL_EXPECTED_SUITES
#define TB_WOLFSSL_EXPECTED_SUITES 0
#endif

/* Groups the Debian build lacks must be refused by name, not fail in the handshake. */
#ifdef HAVE_FFDHE_4096
static const int tb_have_ffdhe4096 = 1;
#else
static const int tb_have_ffdhe4096 = 0;
#endif

/* What 5.7 changed: Kyber groups, DTLS 1.3 (TLS 1.3 suites run over DTLS), secp192r1 (the
 * cached build's --with-eccminsz=192), ECDHE-PSK over X25519, the suites it lists but does
 * not run as forced. */
#if LIBWOLFSSL_VERSION_HEX >= 0x05007000
#define TB_WOLF_57 1
#else
#define TB_WOLF_57 0
#endif
#ifdef WOLFSSL_DTLS13
#define TB_TLS13_DTLS true
#else
#define TB_TLS13_DTLS false
#endif

static const tb_backend *b = &tb_linked_backend;

/* wolfSSL_get_curve_name's names as IANA values. */
static const struct {
    const char *name;
    uint16_t group;
} tb_wolf_curves[] = {
    {"SECP256R1", TB_GROUP_SECP256R1}, {"SECP384R1", TB_GROUP_SECP384R1}, {"SECP521R1", TB_GROUP_SECP521R1},
    {"X25519", TB_GROUP_X25519},       {"X448", TB_GROUP_X448},           {"FFDHE_2048", TB_GROUP_FFDHE2048},
    {"FFDHE_3072", TB_GROUP_FFDHE3072}, {"FFDHE_4096", TB_GROUP_FFDHE4096},
    {"SECP192R1", TB_GROUP_SECP192R1}, {"SECP224R1", TB_GROUP_SECP224R1},
    {"BRAINPOOLP256R1", TB_GROUP_BRAINPOOLP256R1}, {"BRAINPOOLP384R1", TB_GROUP_BRAINPOOLP384R1},
    {"KYBER_LEVEL1", TB_GROUP_KYBER_LEVEL1}, {"KYBER_LEVEL3", TB_GROUP_KYBER_LEVEL3},
    {"KYBER_LEVEL5", TB_GROUP_KYBER_LEVEL5}, {"P256_KYBER_LEVEL1", TB_GROUP_P256_KYBER_LEVEL1},
    {"P384_KYBER_LEVEL3", TB_GROUP_P384_KYBER_LEVEL3}, {"P521_KYBER_LEVEL5", TB_GROUP_P521_KYBER_LEVEL5},
};

static void tb_wolf_negotiated(tb_session *client, tb_outcome *o) {
    const char *curve = tb_wolfssl_session_curve(client);
    const char *version = tb_wolfssl_session_version(client);
    o->version = strcmp(version, "TLSv1.3") == 0 ? "TLS1.3" : strcmp(version, "TLSv1.2") == 0 ? "TLS1.2" : version;
    o->suite = (uint16_t)tb_wolfssl_session_suite(client);
    for (size_t i = 0; curve && i < TB_COUNT(tb_wolf_curves); i++)
        if (strcmp(curve, tb_wolf_curves[i].name) == 0)
            o->group = tb_wolf_curves[i].group;
}

/* A build with raw public keys (5.7's --enable-all) runs ECDSA suites with rpk-ecdsa too */
#ifdef HAVE_RPK
#define C_RPK , TB_CREDENTIAL_RPK_ECDSA
#else
#define C_RPK
#endif
#define C_ECDSA TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384
#define C_EC C_ECDSA C_RPK
#define C_RSA TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072
/* TLS 1.3 runs every certificate type, Ed25519 included, the external PSK and raw public keys */
#define C_13 C_ECDSA, C_RSA, TB_CREDENTIAL_ED25519, TB_CREDENTIAL_PSK C_RPK

static const tb_expected_suite tb_wolf_known[] = {
    {0x1301, "TLS_AES_128_GCM_SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-GCM", "SHA256", TB_TLS13_DTLS,
     {C_13}},
    {0x1305, "TLS_AES_128_CCM_8_SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-CCM-8", "SHA256", TB_TLS13_DTLS,
     {C_13}},
#if !TB_WOLF_57
    {0xC0B4, "TLS_SHA256_SHA256", "TLS1.3", "TLS1.3", "any", "any", "NULL", "SHA256", false, {C_13}},
    {0xC012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "TLS1.1", "TLS1.2", "ECDHE", "RSA", "DES-EDE3-CBC", "SHA1", true,
     {C_RSA}},
#endif
    {0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256",
     true, {C_EC}},
    {0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS1.2", "TLS1.2", "ECDHE", "RSA", "AES-256-GCM", "SHA384",
     true, {C_RSA}},
    {0xC0AE, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-CCM-8", "SHA256",
     true, {C_EC}},
    {0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS1.1", "TLS1.2", "ECDHE", "RSA", "AES-128-CBC", "SHA1", true,
     {C_RSA}},
    /* DHE-RSA suites run over DTLS 1.2 */
    {0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "RSA", "AES-128-GCM", "SHA256", true,
     {C_RSA}},
    {0x00AA, "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "PSK", "AES-128-GCM", "SHA256", true,
     {TB_CREDENTIAL_PSK}},
    {0xCCAB, "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305", "SHA256",
     true, {TB_CREDENTIAL_PSK}},
    /* RC4, a stream cipher, cannot run over DTLS */
    {0xC011, "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "TLS1.1", "TLS1.2", "ECDHE", "RSA", "ARC4-128", "SHA1", false, {C_RSA}},
};

static const tb_unsupported tb_wolf_unsupported[] = {
    {0x0034, "anonymous"}, /* TLS_DH_anon_WITH_AES_128_CBC_SHA */
    {0x00FE, "IANA"},      /* wolfSSL-private, not IANA */
#if TB_WOLF_57
    {0xC0B4, "CCM_8"}, /* listed, but 5.7.2 negotiates another suite */
    {0xC0A6, "can't match cipher suite"},
#endif
};

/* TLS 1.3: neither key exchange nor authentication is fixed by the suite; at least the
 * four certificate credentials (Ed25519 where the build has it). */
static void tb_wolf_check_suite(const tb_suite_info *s) {
    if (s->n_credentials > 0 && strcmp(s->max_version, "TLS1.3") == 0)
        CHECK(s->n_credentials >= 4);
}

static const tb_refusal tb_wolf_refusals[] = {
    {{.suite_id = 0xCCAB, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_PSK}, "use group default"},
    {{.suite_id = 0x0034, .credential = TB_CREDENTIAL_RSA2048}, "anonymous"},
    {{.suite_id = 0x00FE, .credential = TB_CREDENTIAL_RSA2048}, "cannot run here"},
    {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_MLDSA44}, "does not fit suite"},
    /* small curves and brainpool: TLS 1.2 only in wolfSSL */
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "TLS 1.2 only"},
    {{.suite_id = 0x1301, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "TLS 1.2 only"},
    /* ML-KEM's code points are not wolfSSL's: refused with the reason */
    {{.suite_id = 0x1301, .group = TB_GROUP_MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not supported by the wolfSSL agent: this wolfSSL"},
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not supported by the wolfSSL agent: this wolfSSL"},
#if TB_WOLF_57
    {{.suite_id = 0xC02B, .group = TB_GROUP_KYBER_LEVEL1, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
    /* DTLS 1.3 takes a fragmented ClientHello only after its cookie exchange */
    {{.suite_id = 0x1301, .group = TB_GROUP_KYBER_LEVEL3, .credential = TB_CREDENTIAL_ECDSA_P256,
      .protocol = TB_PROTOCOL_KIND_DTLS},
     "needs the DTLS_COOKIES option"},
#else
    /* wolfSSL < 5.7.0 fails ECDHE-PSK over X25519 in the handshake: refused up front */
    {{.suite_id = 0xD001, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_PSK}, "PR #7132"},
    {{.suite_id = 0x1301, .group = TB_GROUP_KYBER_LEVEL1, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not in this wolfSSL build"},
#endif
};

/* The forced group is the one negotiated (wolfSSL_get_curve_name), defaults as documented. */
static const tb_forced_group tb_wolf_groups[] = {
    {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_X25519}, /* TLS 1.3 default */
    {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP256R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_SECP256R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP384R1},
    {{.suite_id = 0x1302, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_ECDSA_P384}, TB_GROUP_SECP521R1},
    {{.suite_id = 0x1303, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ED25519}, TB_GROUP_X448},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_FFDHE2048},
    {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA3072}, TB_GROUP_FFDHE3072},
    {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P384}, TB_GROUP_SECP256R1}, /* TLS 1.2 default */
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP384R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_X25519},
    {{.suite_id = 0xC02F, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_X448},
    {{.suite_id = 0xC02F, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_RSA3072}, TB_GROUP_SECP521R1},
    {{.suite_id = 0xD001, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_SECP384R1},
    {{.suite_id = 0xCCAC, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_SECP256R1},
    /* the server takes the client's curve of the forced size (wolfSSL_SetTmpEC_DHE_Sz) */
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP224R1},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256},
     TB_GROUP_BRAINPOOLP256R1},
    {{.suite_id = 0xC02F, .group = TB_GROUP_BRAINPOOLP384R1, .credential = TB_CREDENTIAL_RSA2048},
     TB_GROUP_BRAINPOOLP384R1},
    {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_SECP256R1},
#if TB_WOLF_57
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, TB_GROUP_SECP192R1},
    {{.suite_id = 0xD001, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_PSK}, TB_GROUP_X25519},
    {{.suite_id = 0x1301, .group = TB_GROUP_KYBER_LEVEL1, .credential = TB_CREDENTIAL_ECDSA_P256},
     TB_GROUP_KYBER_LEVEL1},
    {{.suite_id = 0x1301, .group = TB_GROUP_KYBER_LEVEL3, .credential = TB_CREDENTIAL_RSA2048}, TB_GROUP_KYBER_LEVEL3},
    {{.suite_id = 0x1302, .group = TB_GROUP_KYBER_LEVEL5, .credential = TB_CREDENTIAL_ECDSA_P384},
     TB_GROUP_KYBER_LEVEL5},
    {{.suite_id = 0x1301, .group = TB_GROUP_P256_KYBER_LEVEL1, .credential = TB_CREDENTIAL_ECDSA_P256},
     TB_GROUP_P256_KYBER_LEVEL1},
    {{.suite_id = 0x1302, .group = TB_GROUP_P384_KYBER_LEVEL3, .credential = TB_CREDENTIAL_ED25519},
     TB_GROUP_P384_KYBER_LEVEL3},
    {{.suite_id = 0x1302, .group = TB_GROUP_P521_KYBER_LEVEL5, .credential = TB_CREDENTIAL_PSK},
     TB_GROUP_P521_KYBER_LEVEL5},
#endif
};

/* ---------------------------------------------------------------- the library's own tests */

static void test_ffdhe4096_only_where_built(void) {
    tb_pair p;
    tb_conn_config ffdhe4096 = {.suite_id = 0x1301, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_ECDSA_P256};
    CHECK((tb_pair_open(&p, &ffdhe4096) == 0) == tb_have_ffdhe4096);
    CHECK(tb_have_ffdhe4096 || strstr(p.err, "not in this wolfSSL build") != NULL);
    tb_pair_close(&p);
}

/* Larger groups move more bytes: the key share (TLS 1.3 ClientHello, c2s) and the DHE
 * ServerKeyExchange (s2c) grow with the forced group, so the group really changed. */
static void test_group_sizes_on_the_wire(void) {
    static const struct {
        uint16_t suite;
        uint8_t cred;
        uint16_t small, large;
        int c2s; /* compare client->server bytes (else server->client) */
    } cases[] = {
        {0x1301, TB_CREDENTIAL_ECDSA_P256, TB_GROUP_X25519, TB_GROUP_SECP384R1, 1},
        {0x1301, TB_CREDENTIAL_ECDSA_P256, TB_GROUP_FFDHE2048, TB_GROUP_FFDHE3072, 1},
        {0x009E, TB_CREDENTIAL_RSA2048, TB_GROUP_FFDHE2048, TB_GROUP_FFDHE3072, 0},
        {0xC02B, TB_CREDENTIAL_ECDSA_P256, TB_GROUP_SECP256R1, TB_GROUP_SECP521R1, 0},
    };
    for (size_t i = 0; i < TB_COUNT(cases); i++) {
        tb_outcome o[2];
        memset(o, 0, sizeof o);
        char why[256] = "";
        for (int k = 0; k < 2; k++) {
            tb_conn_config cfg = {.suite_id = cases[i].suite, .credential = cases[i].cred,
                                  .group = k ? cases[i].large : cases[i].small};
            CHECK(tb_conformance_run(&cfg, NULL, &o[k], why, sizeof why) == 0);
        }
        int dir = cases[i].c2s ? 0 : 1;
        CHECK(o[1].wire[dir] > o[0].wire[dir] + 32);
        if (!(o[1].wire[dir] > o[0].wire[dir] + 32))
            fprintf(stderr, "  case %zu: %llu vs %llu bytes\n", i, (unsigned long long)o[0].wire[dir],
                    (unsigned long long)o[1].wire[dir]);
    }
}

static void test_error_text(void) {
    char text[128] = "";
    b->error_text(-313, text, sizeof text); /* FATAL_ERROR received from the peer */
    CHECK(strlen(text) > 5);
    fprintf(stderr, "  -313: %s\n", text);
}

static void test_turn_labels(void) {
    CHECK_EQ_U(tb_wolfssl_turn_label(0), TB_L_HANDSHAKE_TURN_1);
    CHECK_EQ_U(tb_wolfssl_turn_label(1), TB_L_HANDSHAKE_TURN_2);
    CHECK_EQ_U(tb_wolfssl_turn_label(3), TB_L_HANDSHAKE_TURN_4);
    CHECK_EQ_U(tb_wolfssl_turn_label(4), TB_L_HANDSHAKE_TURN_4); /* capped */
    CHECK_EQ_U(tb_wolfssl_turn_label(1000000), TB_L_HANDSHAKE_TURN_4);
}

/* Kyber code points (5.7): the client's key share is a Kyber key pair, the server
 * encapsulates and the client decapsulates, no Diffie-Hellman; a hybrid adds its curve's
 * ECDH. Kilobytes of key share on the wire. */
static void test_kyber_groups(void) {
    if (!TB_WOLF_57)
        return;
    static const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;
    char why[256] = "";
    tb_outcome classic = {0}, pure = {0};
    tb_conn_config cfg = {.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256};
    CHECK(tb_conformance_run(&cfg, NULL, &classic, why, sizeof why) == 0);
    cfg.group = TB_GROUP_KYBER_LEVEL3;
    CHECK(tb_conformance_run(&cfg, NULL, &pure, why, sizeof why) == 0);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, C), 1);
    CHECK_EQ_U(tb_count(TB_L_KEM_ENCAPSULATE, S), 1);
    CHECK_EQ_U(tb_count(TB_L_KEM_DECAPSULATE, C), 1);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, C) + tb_count(TB_L_SHARED_SECRET, S) + tb_count(TB_L_KEY_GENERATE, S), 0);
    CHECK(pure.wire[0] > classic.wire[0] + 1100); /* a 1184-byte encapsulation key */
    CHECK(pure.wire[1] > classic.wire[1] + 1000); /* a 1088-byte ciphertext */
    cfg.group = TB_GROUP_P256_KYBER_LEVEL1;
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK_EQ_U(tb_count(TB_L_KEM_ENCAPSULATE, S), 1);
    CHECK_EQ_U(tb_count(TB_L_KEM_DECAPSULATE, C), 1);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, S), 1); /* the P-256 half */
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, C), 1);
}

static const tb_library_test tb_wolf_tests[] = {
    TB_LIBRARY_TEST(test_kyber_groups),
    TB_LIBRARY_TEST(test_ffdhe4096_only_where_built),
    TB_LIBRARY_TEST(test_group_sizes_on_the_wire),
    TB_LIBRARY_TEST(test_error_text),
    TB_LIBRARY_TEST(test_turn_labels),
};

const tb_expected tb_expected_backend = {
    .library_name = "wolfSSL",
    .step_granularity = "turn",
    .expected_suites = TB_WOLFSSL_EXPECTED_SUITES,
    .min_suites = 1,
    .min_runnable = 50,
    .suite_prefix = "TLS_", /* the IANA name */
    .versions = (const char *const[]){"TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3", NULL},
    .key_exchanges = (const char *const[]){"ECDHE", "DHE", "RSA", "PSK", "any", NULL},
    .authentications = (const char *const[]){"ECDSA", "RSA", "PSK", "any", NULL},
    .macs = (const char *const[]){"SHA1", "SHA256", "SHA384", NULL},
    .unsupported_have_metadata = false, /* non-IANA and anonymous suites: listed, not described */
    .tls13_over_dtls = TB_TLS13_DTLS,
    .check_suite = tb_wolf_check_suite,
    .known = TB_LIST(tb_wolf_known),
    .unsupported = TB_LIST(tb_wolf_unsupported),
    .refusals = TB_LIST(tb_wolf_refusals),
    .groups = TB_LIST(tb_wolf_groups),
    .min_pairs = 100,
    .min_tls13_pairs = 7 * 4,
    .negotiated = tb_wolf_negotiated,
    .extra = TB_LIST(tb_wolf_tests),
};
