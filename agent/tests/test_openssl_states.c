/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenSSL state -> step label table: every OSSL_HANDSHAKE_STATE has a step label, and
 * the states a TLS 1.2 / 1.3 handshake runs through map to their messages. */
#include <openssl/ssl.h>

#include "openssl_internal.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"

static void test_every_state_has_a_step_label(void) {
    CHECK_EQ_U(tb_openssl_state_count(), TLS_ST_SR_END_OF_EARLY_DATA + 1);
    for (int state = 0; (size_t)state < tb_openssl_state_count(); state++) {
        uint16_t label = tb_openssl_state_label(state);
        CHECK(tb_label_name(label) != NULL);
        CHECK(label >= 100 && label < 200); /* the step range of spec/labels.toml */
        if (!tb_label_name(label))
            fprintf(stderr, "  state %d has no label\n", state);
    }
}

/* Both directions of each message map to the same label (the peer tells which side). */
static void test_known_states(void) {
    static const struct {
        int state;
        uint16_t label;
    } want[] = {
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
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_EQ_U(tb_openssl_state_label(want[i].state), want[i].label);
        if (tb_openssl_state_label(want[i].state) != want[i].label)
            fprintf(stderr, "  state %d\n", want[i].state);
    }
}

static void test_out_of_range_states(void) {
    CHECK_EQ_U(tb_openssl_state_label(-1), 0);
    CHECK_EQ_U(tb_openssl_state_label((int)tb_openssl_state_count()), 0);
    CHECK_EQ_U(tb_openssl_state_label(1000), 0);
}

int main(void) {
    RUN_TEST(test_every_state_has_a_step_label);
    RUN_TEST(test_known_states);
    RUN_TEST(test_out_of_range_states);
    return tb_test_report();
}
