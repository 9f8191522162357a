/* SPDX-License-Identifier: Apache-2.0 */
/* What the mbed TLS 2.28 and 3.6 backends do alike, checked the same way for both (included
 * by tests/backend/mbedtls.c and mbedtls3.c, after conformance.h): where TLS 1.2's crypto
 * nests in the steps (both versions use the legacy modules for TLS 1.2), and that a session
 * the server does not resume fails the repetition. */
#ifndef TLSBENCH_TESTS_MBEDTLS_CHECKS_H
#define TLSBENCH_TESTS_MBEDTLS_CHECKS_H
#include <string.h>

#include "conformance.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"
#include "tlsbench/trace.h"

/* ECDHE-ECDSA, RSA key transport and a DHE-PSK premaster. */
static void test_tls12_crypto_nests_in_steps(void) {
    const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK(tb_trace_buffer.dropped == 0);
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_ECDH_MAKE_PARAMS, S));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_SIGN, S));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_PK_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_ECDH_READ_PARAMS, C));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_VERIFY, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_MAKE_PUBLIC, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_CALC_SECRET, C));
    /* the client derives its keys on entering CertificateVerify (2.28's ssl_cli.c, 3.6's ssl_tls12_client.c) */
    CHECK(tb_nested(TB_L_CERTIFICATE_VERIFY, TB_L_DERIVE_KEYS, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_READ_PUBLIC, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_CALC_SECRET, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_DERIVE_KEYS, S));

    /* RSA key transport and a PSK premaster. */
    cfg = (tb_conn_config){.suite_id = 0x009C, .credential = TB_CREDENTIAL_RSA2048}; /* RSA-AES128-GCM */
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_ENCRYPT, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_DECRYPT, S));
    cfg = (tb_conn_config){.suite_id = 0x00AA, .credential = TB_CREDENTIAL_PSK}; /* DHE-PSK-AES128-GCM */
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_DHM_MAKE_PARAMS, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PSK_PREMASTER, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_DHM_CALC_SECRET, S));
}

/* A session the server does not resume fails the repetition instead of being measured as a
 * resumption: a ticket session offered to a server that resumes from its session-ID cache. */
static void test_refused_resumption_fails(void) {
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256, .options = TB_OPTION_RESUME,
                          .first_connection = true};
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) == 0);
    cfg = (tb_conn_config){.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256,
                           .options = TB_OPTION_RESUME | TB_OPTION_RESUME_ID};
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) != 0);
    CHECK(strstr(why, "did not resume") != NULL);
}

#endif
