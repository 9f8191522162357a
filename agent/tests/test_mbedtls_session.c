/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS backend end to end without the runner: configuration errors are reported,
 * every suite completes a handshake over the memory transport, forced groups work, and the
 * trace nests crypto operations inside the expected steps. */
#include <string.h>

#include "pair.h"
#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/trace.h"
#include "tlsbench/transport.h"

static const tb_backend *b = &tb_linked_backend;

/* One record each way, then close_notify. */
static int tb_pair_exchange(tb_pair *p) {
    uint8_t out[100];
    int32_t e = 0;
    memset(out, 0x5a, sizeof out);
    for (uint8_t w = 0; w < 2; w++)
        if (tb_pair_echo(p, w, out, sizeof out) != 0)
            return -1;
    return b->close_notify(p->peer[TB_PEER_CLIENT], &e);
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
        {{.suite_id = 0xC0FF, .credential = TB_CREDENTIAL_ECDSA_P256}, "not in this mbed TLS build"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_RSA2048}, "does not fit suite"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ED25519}, "does not fit suite"},
        {{.suite_id = 0xC02B, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
        {{.suite_id = 0xC02B, .group = 0x1234, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
        {{.suite_id = 0x009E, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, "does not fit"},
        {{.suite_id = 0x002F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "use group default"},
        {{.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "certificate's curve"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_pair p;
        CHECK(tb_pair_open(&p, &bad[i].cfg) != 0);
        CHECK(strstr(p.err, bad[i].message_part) != NULL);
        if (!strstr(p.err, bad[i].message_part))
            fprintf(stderr, "  case %zu: \"%s\"\n", i, p.err);
        tb_pair_close(&p);
    }
}

static int tb_run_one(const tb_conn_config *cfg, char *why, size_t whylen) {
    tb_pair p;
    int32_t e = 0;
    int ok = tb_pair_open(&p, cfg) == 0;
    if (!ok)
        snprintf(why, whylen, "setup: %.200s", p.err);
    if (ok && tb_pair_handshake(&p, &e) != 0) {
        char text[128];
        b->error_text(e, text, sizeof text);
        snprintf(why, whylen, "handshake: -0x%04X %s", (unsigned)-e, text);
        ok = 0;
    }
    if (ok && tb_pair_exchange(&p) != 0) {
        snprintf(why, whylen, "application data or close failed");
        ok = 0;
    }
    tb_pair_close(&p);
    return ok ? 0 : -1;
}

static void test_every_suite_handshakes(void) {
    size_t ran = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        for (size_t c = 0; c < s->n_credentials; c++) {
            tb_conn_config cfg = {.suite_id = s->id, .credential = s->credentials[c]};
            char why[256] = "";
            tb_trace_reset();
            int rc = tb_run_one(&cfg, why, sizeof why);
            CHECK(rc == 0);
            if (rc != 0)
                fprintf(stderr, "  %s with %s: %s\n", s->name, tb_credential_name(cfg.credential), why);
            ran++;
        }
    }
    fprintf(stderr, "  %zu suite/credential pairs\n", ran);
    CHECK(ran > 0);
}

static void test_forced_groups(void) {
    static const tb_conn_config ok[] = {
        {.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256},
        {.suite_id = 0xC02B, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_ECDSA_P256},
        {.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P384},
        {.suite_id = 0xC02B, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ECDSA_P256},
        {.suite_id = 0xC02F, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA3072},
        {.suite_id = 0x009E, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA2048},
        {.suite_id = 0x009E, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_RSA2048},
        {.suite_id = 0xC004, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P384},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char why[256] = "";
        tb_trace_reset();
        int rc = tb_run_one(&ok[i], why, sizeof why);
        CHECK(rc == 0);
        if (rc != 0)
            fprintf(stderr, "  case %zu (group %s): %s\n", i, tb_group_name(ok[i].group), why);
    }
}

/* True when a `crypto` START of `peer` lies inside a `step` span of the same peer. */
static int tb_nested(uint16_t step, uint16_t crypto, uint8_t peer) {
    const tb_trace *t = &tb_trace_buffer;
    int open = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        if (r->peer != peer)
            continue;
        if (r->label == step)
            open = r->kind == TB_KIND_START;
        else if (open && r->label == crypto && r->kind == TB_KIND_START)
            return 1;
    }
    return 0;
}

static void test_crypto_nests_in_steps(void) {
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256};
    char why[256] = "";
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, why, sizeof why) == 0);
    CHECK(tb_trace_buffer.dropped == 0);
    const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_ECDH_MAKE_PARAMS, S));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_SIGN, S));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_CHAIN_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_CERTIFICATE, TB_L_PK_VERIFY, C));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_ECDH_READ_PARAMS, C));
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_PK_VERIFY, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_MAKE_PUBLIC, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_CALC_SECRET, C));
    /* mbed TLS 2.28's client derives its keys on entering CertificateVerify (ssl_cli.c). */
    CHECK(tb_nested(TB_L_CERTIFICATE_VERIFY, TB_L_DERIVE_KEYS, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_READ_PUBLIC, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_ECDH_CALC_SECRET, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_DERIVE_KEYS, S));

    /* RSA key transport and a PSK premaster. */
    cfg = (tb_conn_config){.suite_id = 0x009C, .credential = TB_CREDENTIAL_RSA2048}; /* RSA-AES128-GCM */
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, why, sizeof why) == 0);
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_ENCRYPT, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PK_DECRYPT, S));
    cfg = (tb_conn_config){.suite_id = 0x00AA, .credential = TB_CREDENTIAL_PSK}; /* DHE-PSK-AES128-GCM */
    tb_trace_reset();
    CHECK(tb_run_one(&cfg, why, sizeof why) == 0);
    CHECK(tb_nested(TB_L_SERVER_KEY_EXCHANGE, TB_L_DHM_MAKE_PARAMS, S));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_PSK_PREMASTER, C));
    CHECK(tb_nested(TB_L_CLIENT_KEY_EXCHANGE, TB_L_DHM_CALC_SECRET, S));
}

int main(void) {
    RUN_TEST(test_init);
    RUN_TEST(test_configuration_errors);
    RUN_TEST(test_every_suite_handshakes);
    RUN_TEST(test_forced_groups);
    RUN_TEST(test_crypto_nests_in_steps);
    b->deinit();
    return tb_test_report();
}
