/* SPDX-License-Identifier: Apache-2.0 */
/* What is true of the mbed TLS 2.28 backend for the conformance suite, and its own tests:
 * the crypto operations nest in the steps where mbed TLS does them (mbedtls_checks.h, shared
 * with 3.6), a refused resumption fails. */
#include <string.h>

#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ciphersuites.h"

#include "conformance.h"
#include "mbedtls_checks.h"
#include "mbedtls_internal.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"

/* Set by mbedtls.cmake: 127 for Debian's 2.28 build, 0 = any count. */
#ifndef TB_MBEDTLS_EXPECTED_SUITES
#define TB_MBEDTLS_EXPECTED_SUITES 0
#endif


static size_t tb_mbed_library_suites(void) {
    size_t n = 0;
    for (const int *id = mbedtls_ssl_list_ciphersuites(); *id; id++)
        n++;
    return n;
}

static void tb_mbed_negotiated(tb_session *client, tb_outcome *o) {
    mbedtls_ssl_context *ssl = tb_mbedtls_session_ssl(client);
    o->version = strcmp(mbedtls_ssl_get_version(ssl), "TLSv1.2") == 0 ? "TLS1.2" : mbedtls_ssl_get_version(ssl);
    o->suite = (uint16_t)mbedtls_ssl_get_ciphersuite_id(mbedtls_ssl_get_ciphersuite(ssl));
}

#define C_EC TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384
#define C_RSA TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072

static const tb_expected_suite tb_mbed_known[] = {
    {0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256",
     true, {C_EC}},
    {0x002F, "TLS-RSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "RSA", "RSA", "AES-128-CBC", "SHA1", true, {C_RSA}},
    {0xCCAB, "TLS-PSK-WITH-CHACHA20-POLY1305-SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305", "SHA256",
     true, {TB_CREDENTIAL_PSK}},
    {0xC0A8, "TLS-PSK-WITH-AES-128-CCM-8", "TLS1.2", "TLS1.2", "PSK", "PSK", "AES-128-CCM-8", "SHA256", true,
     {TB_CREDENTIAL_PSK}},
    {0xC004, "TLS-ECDH-ECDSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "ECDH", "ECDSA", "AES-128-CBC", "SHA1", true,
     {C_EC}},
    {0xC00E, "TLS-ECDH-RSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "ECDH", "RSA", "AES-128-CBC", "SHA1", true,
     {TB_CREDENTIAL_ECDH_RSA}},
    {0x00AC, "TLS-RSA-PSK-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "RSA", "PSK", "AES-128-GCM", "SHA256", true,
     {C_RSA}},
};

static const tb_refusal tb_mbed_refusals[] = {
    /* 2.28 has no TLS 1.3, so no TLS 1.3 brainpool code points and no post-quantum groups */
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP256R1TLS13, .credential = TB_CREDENTIAL_ECDSA_P256},
     "not supported"},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519MLKEM768, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
    {{.suite_id = 0x002F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "use group default"},
    /* static ECDH computes on the certificate's key: no other curve */
    {{.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "certificate's curve"},
};

/* mbed TLS does not say which group a handshake used: each must complete. */
static const tb_forced_group tb_mbed_groups[] = {
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P384}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA3072}, 0},
    {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA2048}, 0},
    {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_RSA2048}, 0},
    /* static ECDH: naming the certificate's curve is the default */
    {{.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P384}, 0},
    /* the smaller curves constrained devices still use, and brainpool (TLS 1.2 code points) */
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP192R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02B, .group = TB_GROUP_BRAINPOOLP512R1, .credential = TB_CREDENTIAL_ECDSA_P256}, 0},
    {{.suite_id = 0xC02F, .group = TB_GROUP_SECP224R1, .credential = TB_CREDENTIAL_RSA2048}, 0},
    {{.suite_id = 0x009E, .group = TB_GROUP_FFDHE6144, .credential = TB_CREDENTIAL_RSA2048}, 0},
};

/* ---------------------------------------------------------------- the library's own tests */

/* ssl->state at a step's entry names its message. */
static const tb_state_label tb_mbed_states[] = {
    {MBEDTLS_SSL_HELLO_REQUEST, TB_L_HELLO_REQUEST},
    {MBEDTLS_SSL_CLIENT_HELLO, TB_L_CLIENT_HELLO},
    {MBEDTLS_SSL_SERVER_CERTIFICATE, TB_L_SERVER_CERTIFICATE},
    {MBEDTLS_SSL_SERVER_KEY_EXCHANGE, TB_L_SERVER_KEY_EXCHANGE},
    {MBEDTLS_SSL_CLIENT_KEY_EXCHANGE, TB_L_CLIENT_KEY_EXCHANGE},
    {MBEDTLS_SSL_CLIENT_CHANGE_CIPHER_SPEC, TB_L_CLIENT_CHANGE_CIPHER_SPEC},
    {MBEDTLS_SSL_SERVER_FINISHED, TB_L_SERVER_FINISHED},
    {MBEDTLS_SSL_HANDSHAKE_WRAPUP, TB_L_HANDSHAKE_WRAPUP},
    {MBEDTLS_SSL_SERVER_NEW_SESSION_TICKET, TB_L_NEW_SESSION_TICKET},
    {MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT, TB_L_HELLO_VERIFY_REQUEST},
};

static const tb_library_test tb_mbed_tests[] = {
    TB_LIBRARY_TEST(test_tls12_crypto_nests_in_steps),
    TB_LIBRARY_TEST(test_refused_resumption_fails),
};

const tb_expected tb_expected_backend = {
    .library_name = "mbed TLS",
    .step_granularity = "state",
    .library_suite_count = tb_mbed_library_suites,
    .expected_suites = TB_MBEDTLS_EXPECTED_SUITES,
    .min_suites = 1,
    .suite_prefix = "TLS-",
    .versions = (const char *const[]){"TLS1.0", "TLS1.1", "TLS1.2", NULL},
    .key_exchanges = (const char *const[]){"ECDHE", "ECDH", "DHE", "RSA", "PSK", NULL},
    .authentications = (const char *const[]){"ECDSA", "RSA", "PSK", NULL},
    .unsupported_have_metadata = true,
    .known = TB_LIST(tb_mbed_known),
    .refusals = TB_LIST(tb_mbed_refusals),
    .groups = TB_LIST(tb_mbed_groups),
    .min_pairs = 1,
    .negotiated = tb_mbed_negotiated,
    .state_count = tb_mbedtls_state_count,
    .state_label = tb_mbedtls_state_label,
    .n_states = MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT + 1,
    .known_states = TB_LIST(tb_mbed_states),
    .extra = TB_LIST(tb_mbed_tests),
};
