/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS state -> step label table: every mbedtls_ssl_states value has a step label. */
#include "mbedtls/ssl.h"

#include "mbedtls_internal.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"

static void test_every_state_has_a_step_label(void) {
    CHECK_EQ_U(tb_mbedtls_state_count(), MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT + 1);
    for (int state = 0; (size_t)state < tb_mbedtls_state_count(); state++) {
        uint16_t label = tb_mbedtls_state_label(state);
        CHECK(tb_label_name(label) != NULL);
        CHECK(label >= 100 && label < 200); /* the step range of spec/labels.toml */
        if (!tb_label_name(label))
            fprintf(stderr, "  state %d has no label\n", state);
    }
}

static void test_known_states(void) {
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_HELLO_REQUEST), TB_L_HELLO_REQUEST);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_CLIENT_HELLO), TB_L_CLIENT_HELLO);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_SERVER_CERTIFICATE), TB_L_SERVER_CERTIFICATE);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_SERVER_KEY_EXCHANGE), TB_L_SERVER_KEY_EXCHANGE);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_CLIENT_KEY_EXCHANGE), TB_L_CLIENT_KEY_EXCHANGE);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_CLIENT_CHANGE_CIPHER_SPEC), TB_L_CLIENT_CHANGE_CIPHER_SPEC);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_SERVER_FINISHED), TB_L_SERVER_FINISHED);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_HANDSHAKE_WRAPUP), TB_L_HANDSHAKE_WRAPUP);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_SERVER_NEW_SESSION_TICKET), TB_L_NEW_SESSION_TICKET);
    CHECK_EQ_U(tb_mbedtls_state_label(MBEDTLS_SSL_SERVER_HELLO_VERIFY_REQUEST_SENT), TB_L_HELLO_VERIFY_REQUEST);
}

static void test_out_of_range_states(void) {
    CHECK_EQ_U(tb_mbedtls_state_label(-1), 0);
    CHECK_EQ_U(tb_mbedtls_state_label((int)tb_mbedtls_state_count()), 0);
    CHECK_EQ_U(tb_mbedtls_state_label(1000), 0);
}

int main(void) {
    RUN_TEST(test_every_state_has_a_step_label);
    RUN_TEST(test_known_states);
    RUN_TEST(test_out_of_range_states);
    return tb_test_report();
}
