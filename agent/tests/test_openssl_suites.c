/* SPDX-License-Identifier: Apache-2.0 */
/* The OpenSSL suite table: every suite of the linked build with complete metadata, lookups
 * both ways, unsupported suites say why, and a few suites' metadata exactly. */
#include <string.h>

#include <openssl/ssl.h>

#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/spec_gen.h"

/* Set by openssl.cmake: 0 = any count. */
#ifndef TB_OPENSSL_EXPECTED_SUITES
#define TB_OPENSSL_EXPECTED_SUITES 0
#endif

static const tb_backend *b = &tb_linked_backend;

static int tb_in(const char *s, const char *const *set) {
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

/* The count OpenSSL itself reports for a context with every suite enabled. */
static void test_count_matches_the_library(void) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL_CTX_set_security_level(ctx, 0);
    CHECK(SSL_CTX_set_cipher_list(ctx, "ALL:COMPLEMENTOFALL") == 1);
    CHECK(SSL_CTX_set_ciphersuites(ctx, "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                                        "TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256") == 1);
    int n = sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(ctx));
    SSL_CTX_free(ctx);
    CHECK(n > 100); /* Debian's 3.0: TLS 1.3 + 1.2 incl. PSK, ARIA, CAMELLIA, NULL */
    CHECK_EQ_U(b->suite_count(), (size_t)n);
    if (TB_OPENSSL_EXPECTED_SUITES)
        CHECK_EQ_U(b->suite_count(), TB_OPENSSL_EXPECTED_SUITES);
    CHECK(b->suite_at(b->suite_count()) == NULL);
}

static void test_every_suite_is_complete(void) {
    static const char *const versions[] = {"TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3", NULL};
    static const char *const kex[] = {"ECDHE", "DHE", "RSA", "PSK", "any", "SRP", "GOST", NULL};
    static const char *const auth[] = {"ECDSA", "RSA", "PSK", "any", "DSS", "NONE", "SRP", "GOST", NULL};
    size_t runnable = 0, tls13 = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        int before = tb_test_failures;
        CHECK(s->id != 0);
        CHECK(s->name && strncmp(s->name, "TLS_", 4) == 0); /* the IANA name */
        CHECK(tb_in(s->min_version, versions));
        CHECK(tb_in(s->max_version, versions));
        CHECK(strcmp(s->min_version, s->max_version) <= 0); /* "TLS1.x" sorts by version */
        CHECK(tb_in(s->key_exchange, kex));
        CHECK(tb_in(s->authentication, auth));
        CHECK(s->cipher && *s->cipher && strcmp(s->cipher, "unknown") != 0);
        CHECK(s->mac && *s->mac && strcmp(s->mac, "unknown") != 0);
        CHECK(s->n_credentials <= TB_MAX_SUITE_CREDENTIALS);
        CHECK((s->n_credentials > 0) != (s->why_unsupported != NULL));
        for (size_t c = 0; c < s->n_credentials; c++)
            CHECK(s->credentials[c] != TB_CREDENTIAL_AUTO && tb_credential_name(s->credentials[c]) != NULL);
        for (size_t j = 0; j < i; j++)
            CHECK(b->suite_at(j)->id != s->id);
        /* TLS 1.3 suites: version, key exchange and authentication go together. */
        int is13 = strcmp(s->max_version, "TLS1.3") == 0;
        CHECK(is13 == (strcmp(s->key_exchange, "any") == 0));
        CHECK(is13 == (strcmp(s->authentication, "any") == 0));
        CHECK(!is13 || (strcmp(s->min_version, "TLS1.3") == 0 && !s->dtls && s->n_credentials == 5));
        /* Anonymous, SRP and DSS cannot run here: no credential. */
        if (tb_in(s->authentication, (const char *const[]){"NONE", "SRP", "DSS", NULL}))
            CHECK(s->n_credentials == 0);
        runnable += s->n_credentials > 0;
        tls13 += is13;
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X %s\n", s->id, s->name ? s->name : "?");
    }
    CHECK(tls13 >= 3);
    CHECK(runnable > 60);
    fprintf(stderr, "  %zu suites, %zu runnable, %zu TLS 1.3\n", b->suite_count(), runnable, tls13);
}

static void test_lookups_both_ways(void) {
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        CHECK(tb_suite_by_id(b, s->id) == s);
        CHECK(tb_suite_by_name(b, s->name) == s);
    }
    CHECK(tb_suite_by_name(b, "tls_ecdhe_ecdsa_with_aes_128_gcm_sha256") == tb_suite_by_id(b, 0xC02B));
    CHECK(tb_suite_by_id(b, 0xC0FF) == NULL);
    CHECK(tb_suite_by_name(b, "TLS_NOT_A_SUITE") == NULL);
}

typedef struct expected {
    uint16_t id;
    const char *name, *min, *max, *kex, *auth, *cipher, *mac;
    int dtls;
    uint8_t creds[5];
} expected;

#define C_EC TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384
#define C_RSA TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072
#define C_13 C_EC, C_RSA, TB_CREDENTIAL_ED25519

static void test_known_suites_exactly(void) {
    static const expected want[] = {
        {0x1301, "TLS_AES_128_GCM_SHA256", "TLS1.3", "TLS1.3", "any", "any", "AES-128-GCM", "SHA256", 0, {C_13}},
        {0x1302, "TLS_AES_256_GCM_SHA384", "TLS1.3", "TLS1.3", "any", "any", "AES-256-GCM", "SHA384", 0, {C_13}},
        {0x1303, "TLS_CHACHA20_POLY1305_SHA256", "TLS1.3", "TLS1.3", "any", "any", "CHACHA20-POLY1305",
         "SHA256", 0, {C_13}},
        {0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM",
         "SHA256", 1, {C_EC}},
        {0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "ECDHE", "RSA", "AES-128-GCM",
         "SHA256", 1, {C_RSA}},
        {0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS1.0", "TLS1.2", "RSA", "RSA", "AES-128-CBC", "SHA1", 1, {C_RSA}},
        {0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "RSA", "AES-128-GCM", "SHA256", 1,
         {C_RSA}},
        {0xC0AE, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-CCM-8",
         "SHA256", 1, {C_EC}},
        {0x00AC, "TLS_RSA_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "RSA", "PSK", "AES-128-GCM", "SHA256", 1,
         {C_RSA}},
        {0x00AA, "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "PSK", "AES-128-GCM", "SHA256", 1,
         {TB_CREDENTIAL_PSK}},
        {0xCCAB, "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305",
         "SHA256", 1, {TB_CREDENTIAL_PSK}},
        {0xC006, "TLS_ECDHE_ECDSA_WITH_NULL_SHA", "TLS1.0", "TLS1.2", "ECDHE", "ECDSA", "NULL", "SHA1", 1, {C_EC}},
        {0x00A6, "TLS_DH_anon_WITH_AES_128_GCM_SHA256", "TLS1.2", "TLS1.2", "DHE", "NONE", "AES-128-GCM", "SHA256",
         1, {0}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const expected *w = &want[i];
        const tb_suite_info *s = tb_suite_by_id(b, w->id);
        CHECK(s != NULL);
        if (!s) {
            fprintf(stderr, "  suite 0x%04X missing\n", w->id);
            continue;
        }
        int before = tb_test_failures;
        CHECK(strcmp(s->name, w->name) == 0);
        CHECK(strcmp(s->min_version, w->min) == 0);
        CHECK(strcmp(s->max_version, w->max) == 0);
        CHECK(strcmp(s->key_exchange, w->kex) == 0);
        CHECK(strcmp(s->authentication, w->auth) == 0);
        CHECK(strcmp(s->cipher, w->cipher) == 0);
        CHECK(strcmp(s->mac, w->mac) == 0);
        CHECK_EQ_U(s->dtls, w->dtls);
        size_t n = 0;
        while (n < 5 && w->creds[n])
            n++;
        CHECK_EQ_U(s->n_credentials, n);
        CHECK(memcmp(s->credentials, w->creds, n) == 0);
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X: got %s %s..%s %s/%s %s %s dtls=%d\n", w->id, s->name, s->min_version,
                    s->max_version, s->key_exchange, s->authentication, s->cipher, s->mac, s->dtls);
    }
}

int main(void) {
    RUN_TEST(test_count_matches_the_library);
    RUN_TEST(test_every_suite_is_complete);
    RUN_TEST(test_lookups_both_ways);
    RUN_TEST(test_known_suites_exactly);
    return tb_test_report();
}
