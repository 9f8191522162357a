/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL backend end to end without the runner: configuration errors are reported,
 * every listed suite completes a handshake with each of its credentials over the memory
 * transport, forced groups are the ones negotiated, versions are pinned per suite. */
#include <string.h>

#include <wolfssl/options.h>

#include "pair.h"
#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/trace.h"
#include "tlsbench/transport.h"
#include "wolfssl_internal.h"

/* Groups the Debian build lacks must be refused by name, not fail in the handshake. */
#ifdef HAVE_FFDHE_4096
static const int tb_have_ffdhe4096 = 1;
#else
static const int tb_have_ffdhe4096 = 0;
#endif

static const tb_backend *b = &tb_linked_backend;

/* One record each way, then close_notify from both. */
static int tb_pair_exchange(tb_pair *p) {
    uint8_t out[100];
    int32_t e = 0;
    memset(out, 0x5a, sizeof out);
    for (uint8_t w = 0; w < 2; w++) {
        out[0] = w;
        if (tb_pair_echo(p, w, out, sizeof out) != 0)
            return -1;
    }
    return b->close_notify(p->peer[TB_PEER_CLIENT], &e) == 0 && b->close_notify(p->peer[TB_PEER_SERVER], &e) == 0
               ? 0
               : -1;
}

/* What the finished handshake negotiated (client's view). */
typedef struct tb_outcome {
    char curve[32];
    char version[16];
    int suite;
    uint64_t bytes_c2s, bytes_s2c;
} tb_outcome;

static int tb_run_one(const tb_conn_config *cfg, tb_outcome *out, char *why, size_t whylen) {
    tb_pair p;
    int32_t e = 0;
    int ok = tb_pair_open(&p, cfg) == 0;
    if (!ok)
        snprintf(why, whylen, "setup: %.200s", p.err);
    if (ok && tb_pair_handshake(&p, &e) != 0) {
        char text[128];
        b->error_text(e, text, sizeof text);
        snprintf(why, whylen, "handshake: %d %s", (int)e, text);
        ok = 0;
    }
    if (ok && out) {
        const char *curve = tb_wolfssl_session_curve(p.peer[TB_PEER_CLIENT]);
        snprintf(out->curve, sizeof out->curve, "%s", curve ? curve : "");
        snprintf(out->version, sizeof out->version, "%s", tb_wolfssl_session_version(p.peer[TB_PEER_CLIENT]));
        out->suite = tb_wolfssl_session_suite(p.peer[TB_PEER_CLIENT]);
        tb_memory_transport.counters(p.t, &out->bytes_c2s, &out->bytes_s2c);
    }
    if (ok && tb_pair_exchange(&p) != 0) {
        snprintf(why, whylen, "application data or close failed");
        ok = 0;
    }
    tb_pair_close(&p);
    return ok ? 0 : -1;
}

static void test_init(void) {
    char err[256] = "";
    CHECK(b->init(err, sizeof err) == 0);
    CHECK(b->init(err, sizeof err) == 0); /* idempotent */
    CHECK(strcmp(b->step_granularity, "turn") == 0);
}

static void test_configuration_errors(void) {
    static const struct {
        tb_conn_config cfg;
        const char *message_part;
    } bad[] = {
        {{.suite_id = 0xC0FF, .credential = TB_CREDENTIAL_ECDSA_P256}, "not in this wolfSSL build"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_RSA2048}, "does not fit suite"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ED25519}, "does not fit suite"},
        {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_PSK}, "does not fit suite"},
        {{.suite_id = 0xC02B, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
        {{.suite_id = 0xC02B, .group = 0x1234, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
        {{.suite_id = 0x009E, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, "does not fit"},
        {{.suite_id = 0xCCAB, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_PSK}, "use group default"},
        {{.suite_id = 0x0034, .credential = TB_CREDENTIAL_RSA2048}, "anonymous"},
        {{.suite_id = 0x00FE, .credential = TB_CREDENTIAL_RSA2048}, "cannot run here"},
        /* wolfSSL < 5.7.0 fails ECDHE-PSK over X25519 in the handshake: refused up front */
        {{.suite_id = 0xD001, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_PSK}, "PR #7132"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_pair p;
        CHECK(tb_pair_open(&p, &bad[i].cfg) != 0);
        CHECK(strstr(p.err, bad[i].message_part) != NULL);
        if (!strstr(p.err, bad[i].message_part))
            fprintf(stderr, "  case %zu: \"%s\"\n", i, p.err);
        tb_pair_close(&p);
    }
    tb_pair p;
    tb_conn_config ffdhe4096 = {.suite_id = 0x1301, .group = TB_GROUP_FFDHE4096, .credential = TB_CREDENTIAL_ECDSA_P256};
    CHECK((tb_pair_open(&p, &ffdhe4096) == 0) == tb_have_ffdhe4096);
    CHECK(tb_have_ffdhe4096 || strstr(p.err, "not in this wolfSSL build") != NULL);
    tb_pair_close(&p);
}

static void test_every_suite_handshakes(void) {
    size_t ran = 0, tls13 = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        for (size_t c = 0; c < s->n_credentials; c++) {
            tb_conn_config cfg = {.suite_id = s->id, .credential = s->credentials[c]};
            char why[256] = "";
            tb_outcome o = {0};
            tb_trace_reset();
            int rc = tb_run_one(&cfg, &o, why, sizeof why);
            CHECK(rc == 0);
            if (rc != 0)
                fprintf(stderr, "  %s with %s: %s\n", s->name, tb_credential_name(cfg.credential), why);
            /* the version is pinned per suite and the forced suite is the one used */
            const char *want = strcmp(s->max_version, "TLS1.3") == 0 ? "TLSv1.3" : "TLSv1.2";
            CHECK(rc != 0 || (strcmp(o.version, want) == 0 && o.suite == s->id));
            tls13 += rc == 0 && strcmp(o.version, "TLSv1.3") == 0;
            ran++;
        }
    }
    fprintf(stderr, "  %zu suite/credential pairs, %zu with TLS 1.3\n", ran, tls13);
    CHECK(ran >= 100);
    CHECK(tls13 >= 7 * 4);
}

/* The forced group is the one negotiated (wolfSSL_get_curve_name), defaults as documented. */
static void test_forced_groups(void) {
    static const struct {
        tb_conn_config cfg;
        const char *curve; /* wolfSSL_get_curve_name */
    } ok[] = {
        {{.suite_id = 0x1301, .credential = TB_CREDENTIAL_ECDSA_P256}, "X25519"}, /* TLS 1.3 default */
        {{.suite_id = 0x1301, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_RSA2048}, "X25519"},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "SECP256R1"},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, "SECP256R1"},
        {{.suite_id = 0x1301, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "SECP384R1"},
        {{.suite_id = 0x1302, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_ECDSA_P384}, "SECP521R1"},
        {{.suite_id = 0x1303, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_ED25519}, "X448"},
        {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, "FFDHE_2048"},
        {{.suite_id = 0x1301, .group = TB_GROUP_FFDHE3072, .credential = TB_CREDENTIAL_RSA3072}, "FFDHE_3072"},
        {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P384}, "SECP256R1"}, /* TLS 1.2 default */
        {{.suite_id = 0xC02B, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_ECDSA_P256}, "SECP384R1"},
        {{.suite_id = 0xC02B, .group = TB_GROUP_X25519, .credential = TB_CREDENTIAL_ECDSA_P256}, "X25519"},
        {{.suite_id = 0xC02F, .group = TB_GROUP_X448, .credential = TB_CREDENTIAL_RSA2048}, "X448"},
        {{.suite_id = 0xC02F, .group = TB_GROUP_SECP521R1, .credential = TB_CREDENTIAL_RSA3072}, "SECP521R1"},
        {{.suite_id = 0xD001, .group = TB_GROUP_SECP384R1, .credential = TB_CREDENTIAL_PSK}, "SECP384R1"},
        {{.suite_id = 0xCCAC, .credential = TB_CREDENTIAL_PSK}, "SECP256R1"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char why[256] = "";
        tb_outcome o = {0};
        tb_trace_reset();
        int rc = tb_run_one(&ok[i].cfg, &o, why, sizeof why);
        CHECK(rc == 0);
        CHECK(strcmp(o.curve, ok[i].curve) == 0);
        if (rc != 0 || strcmp(o.curve, ok[i].curve) != 0)
            fprintf(stderr, "  case %zu (group %s): curve \"%s\" %s\n", i, tb_group_name(ok[i].cfg.group), o.curve, why);
    }
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
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_outcome o[2];
        memset(o, 0, sizeof o);
        char why[256] = "";
        for (int k = 0; k < 2; k++) {
            tb_conn_config cfg = {.suite_id = cases[i].suite, .credential = cases[i].cred,
                                  .group = k ? cases[i].large : cases[i].small};
            CHECK(tb_run_one(&cfg, &o[k], why, sizeof why) == 0);
        }
        uint64_t small = cases[i].c2s ? o[0].bytes_c2s : o[0].bytes_s2c;
        uint64_t large = cases[i].c2s ? o[1].bytes_c2s : o[1].bytes_s2c;
        CHECK(large > small + 32);
        if (!(large > small + 32))
            fprintf(stderr, "  case %zu: %llu vs %llu bytes\n", i, (unsigned long long)small, (unsigned long long)large);
    }
}

static void test_error_text(void) {
    char text[128] = "";
    b->error_text(-313, text, sizeof text); /* FATAL_ERROR received from the peer */
    CHECK(strlen(text) > 5);
    fprintf(stderr, "  -313: %s\n", text);
}

int main(void) {
    RUN_TEST(test_init);
    RUN_TEST(test_configuration_errors);
    RUN_TEST(test_every_suite_handshakes);
    RUN_TEST(test_forced_groups);
    RUN_TEST(test_group_sizes_on_the_wire);
    RUN_TEST(test_error_text);
    b->deinit();
    return tb_test_report();
}
