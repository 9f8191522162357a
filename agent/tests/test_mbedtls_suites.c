/* SPDX-License-Identifier: Apache-2.0 */
/* The mbed TLS suite table: complete metadata for every suite of the linked build,
 * lookups both ways, and a few suites' metadata exactly. */
#include <string.h>

#include "mbedtls/ssl_ciphersuites.h"

#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/spec_gen.h"

/* Set by mbedtls.cmake: 127 for Debian's 2.28 build, 0 = any count. */
#ifndef TB_MBEDTLS_EXPECTED_SUITES
#define TB_MBEDTLS_EXPECTED_SUITES 0
#endif

static const tb_backend *b = &tb_linked_backend;

static int tb_in(const char *s, const char *const *set) {
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

static void test_count_matches_the_library(void) {
    size_t n = 0;
    for (const int *id = mbedtls_ssl_list_ciphersuites(); *id; id++)
        n++;
    CHECK(n > 0);
    CHECK_EQ_U(b->suite_count(), n);
    if (TB_MBEDTLS_EXPECTED_SUITES)
        CHECK_EQ_U(b->suite_count(), TB_MBEDTLS_EXPECTED_SUITES);
    CHECK(b->suite_at(b->suite_count()) == NULL);
}

static void test_every_suite_is_complete(void) {
    static const char *const versions[] = {"TLS1.0", "TLS1.1", "TLS1.2", NULL};
    static const char *const kex[] = {"ECDHE", "ECDH", "DHE", "RSA", "PSK", NULL};
    static const char *const auth[] = {"ECDSA", "RSA", "PSK", NULL};
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        int before = tb_test_failures;
        CHECK(s->id != 0);
        CHECK(s->name && strncmp(s->name, "TLS-", 4) == 0);
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
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X %s\n", s->id, s->name ? s->name : "?");
    }
}

static void test_lookups_both_ways(void) {
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        CHECK(tb_suite_by_id(b, s->id) == s);
        CHECK(tb_suite_by_name(b, s->name) == s);
    }
    CHECK(tb_suite_by_name(b, "tls-ecdhe-ecdsa-with-aes-128-gcm-sha256") == tb_suite_by_id(b, 0xC02B));
    CHECK(tb_suite_by_id(b, 0xC0FF) == NULL);
    CHECK(tb_suite_by_name(b, "TLS-NOT-A-SUITE") == NULL);
}

typedef struct expected {
    uint16_t id;
    const char *name, *min, *max, *kex, *auth, *cipher, *mac;
    int dtls;
    uint8_t creds[3];
} expected;

static void test_known_suites_exactly(void) {
    static const expected want[] = {
        {0xC02B, "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM",
         "SHA256", 1, {TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384}},
        {0x002F, "TLS-RSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "RSA", "RSA", "AES-128-CBC", "SHA1", 1,
         {TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072}},
        {0xCCAB, "TLS-PSK-WITH-CHACHA20-POLY1305-SHA256", "TLS1.2", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305",
         "SHA256", 1, {TB_CREDENTIAL_PSK}},
        {0xC0A8, "TLS-PSK-WITH-AES-128-CCM-8", "TLS1.2", "TLS1.2", "PSK", "PSK", "AES-128-CCM-8", "SHA256", 1,
         {TB_CREDENTIAL_PSK}},
        {0xC004, "TLS-ECDH-ECDSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "ECDH", "ECDSA", "AES-128-CBC", "SHA1", 1,
         {TB_CREDENTIAL_ECDSA_P256, TB_CREDENTIAL_ECDSA_P384}},
        {0xC00E, "TLS-ECDH-RSA-WITH-AES-128-CBC-SHA", "TLS1.0", "TLS1.2", "ECDH", "RSA", "AES-128-CBC", "SHA1", 1,
         {TB_CREDENTIAL_ECDH_RSA}},
        {0x00AC, "TLS-RSA-PSK-WITH-AES-128-GCM-SHA256", "TLS1.2", "TLS1.2", "RSA", "PSK", "AES-128-GCM", "SHA256", 1,
         {TB_CREDENTIAL_RSA2048, TB_CREDENTIAL_RSA3072}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const expected *w = &want[i];
        const tb_suite_info *s = tb_suite_by_id(b, w->id);
        CHECK(s != NULL);
        if (!s)
            continue;
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
        while (n < 3 && w->creds[n])
            n++;
        CHECK_EQ_U(s->n_credentials, n);
        CHECK(memcmp(s->credentials, w->creds, n) == 0);
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X: got %s %s..%s %s/%s %s %s\n", w->id, s->name, s->min_version,
                    s->max_version, s->key_exchange, s->authentication, s->cipher, s->mac);
    }
}

int main(void) {
    RUN_TEST(test_count_matches_the_library);
    RUN_TEST(test_every_suite_is_complete);
    RUN_TEST(test_lookups_both_ways);
    RUN_TEST(test_known_suites_exactly);
    return tb_test_report();
}
