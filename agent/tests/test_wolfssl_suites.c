/* SPDX-License-Identifier: Apache-2.0 */
/* The wolfSSL suite table: complete metadata for every suite of the linked build, IANA
 * ids and names, the documented conventions (TLS 1.3 = any/any), credentials per key
 * exchange, why_unsupported exactly where nothing can run, and the turn label table. */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/backend.h"
#include "tlsbench/spec_gen.h"
#include "wolfssl_internal.h"

static const tb_backend *b = &tb_linked_backend;

static int one_of(const char *s, const char *const *list) {
    for (; s && *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static void test_count_and_unique_ids(void) {
    size_t n = b->suite_count();
    fprintf(stderr, "  %zu suites\n", n);
    CHECK(n > 0);
    if (TB_WOLFSSL_EXPECTED_SUITES)
        CHECK_EQ_U(n, TB_WOLFSSL_EXPECTED_SUITES);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            CHECK(b->suite_at(i)->id != b->suite_at(j)->id); /* name aliases (CCM8) are skipped */
    CHECK(b->suite_at(n) == NULL);
}

static void test_metadata_complete(void) {
    static const char *const versions[] = {"TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3", NULL};
    static const char *const kex[] = {"ECDHE", "DHE", "RSA", "PSK", "any", NULL};
    static const char *const auth[] = {"ECDSA", "RSA", "PSK", "any", NULL};
    static const char *const macs[] = {"SHA1", "SHA256", "SHA384", NULL};
    size_t runnable = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        int ok = s->name && s->min_version && s->max_version && s->key_exchange && s->authentication && s->cipher &&
                 s->mac;
        CHECK(ok);
        if (!ok)
            continue;
        CHECK((s->n_credentials == 0) == (s->why_unsupported != NULL));
        CHECK(s->n_credentials <= TB_MAX_SUITE_CREDENTIALS);
        CHECK(one_of(s->max_version, versions));
        if (s->n_credentials == 0)
            continue;
        runnable++;
        /* a runnable suite has complete, known metadata and its IANA name */
        int good = strncmp(s->name, "TLS_", 4) == 0 && one_of(s->min_version, versions) &&
                   one_of(s->key_exchange, kex) && one_of(s->authentication, auth) && one_of(s->mac, macs) &&
                   strcmp(s->cipher, "unknown") != 0;
        CHECK(good);
        if (!good)
            fprintf(stderr, "  %s: %s %s %s %s %s\n", s->name, s->min_version, s->key_exchange, s->authentication,
                    s->cipher, s->mac);
        CHECK(tb_suite_by_name(b, s->name) == s);
        int tls13 = strcmp(s->max_version, "TLS1.3") == 0;
        /* TLS 1.3: neither key exchange nor authentication is fixed by the suite */
        CHECK(tls13 == (strcmp(s->key_exchange, "any") == 0 && strcmp(s->authentication, "any") == 0));
        CHECK(!tls13 || (s->n_credentials >= 4 && !s->dtls && strcmp(s->min_version, "TLS1.3") == 0));
        for (uint8_t c = 0; c < s->n_credentials; c++)
            CHECK(tb_credential_name(s->credentials[c]) != NULL && s->credentials[c] != TB_CREDENTIAL_AUTO);
    }
    CHECK(runnable >= 50);
}

static void test_known_suites(void) {
    static const struct {
        uint16_t id;
        const char *name, *min, *kex, *auth, *cipher, *mac;
        uint8_t cred0, n_creds;
    } want[] = {
        {0x1301, "TLS_AES_128_GCM_SHA256", "TLS1.3", "any", "any", "AES-128-GCM", "SHA256", TB_CREDENTIAL_ECDSA_P256, 5},
        {0x1305, "TLS_AES_128_CCM_8_SHA256", "TLS1.3", "any", "any", "AES-128-CCM-8", "SHA256", TB_CREDENTIAL_ECDSA_P256, 5},
        {0xC0B4, "TLS_SHA256_SHA256", "TLS1.3", "any", "any", "NULL", "SHA256", TB_CREDENTIAL_ECDSA_P256, 5},
        {0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "ECDHE", "ECDSA", "AES-128-GCM", "SHA256",
         TB_CREDENTIAL_ECDSA_P256, 2},
        {0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS1.2", "ECDHE", "RSA", "AES-256-GCM", "SHA384",
         TB_CREDENTIAL_RSA2048, 2},
        {0xC0AE, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", "TLS1.2", "ECDHE", "ECDSA", "AES-128-CCM-8", "SHA256",
         TB_CREDENTIAL_ECDSA_P256, 2},
        {0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS1.1", "ECDHE", "RSA", "AES-128-CBC", "SHA1",
         TB_CREDENTIAL_RSA2048, 2},
        {0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "TLS1.2", "DHE", "RSA", "AES-128-GCM", "SHA256",
         TB_CREDENTIAL_RSA2048, 2},
        {0x00AA, "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256", "TLS1.2", "DHE", "PSK", "AES-128-GCM", "SHA256",
         TB_CREDENTIAL_PSK, 1},
        {0xCCAB, "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256", "TLS1.2", "PSK", "PSK", "CHACHA20-POLY1305", "SHA256",
         TB_CREDENTIAL_PSK, 1},
        {0xC012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "TLS1.1", "ECDHE", "RSA", "DES-EDE3-CBC", "SHA1",
         TB_CREDENTIAL_RSA2048, 2},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const tb_suite_info *s = tb_suite_by_id(b, want[i].id);
        CHECK(s != NULL);
        if (!s)
            continue;
        int ok = strcmp(s->name, want[i].name) == 0 && strcmp(s->min_version, want[i].min) == 0 &&
                 strcmp(s->key_exchange, want[i].kex) == 0 && strcmp(s->authentication, want[i].auth) == 0 &&
                 strcmp(s->cipher, want[i].cipher) == 0 && strcmp(s->mac, want[i].mac) == 0 &&
                 s->credentials[0] == want[i].cred0 && s->n_credentials == want[i].n_creds;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  0x%04X: %s %s %s %s %s %s (%u creds)\n", want[i].id, s->name, s->min_version,
                    s->key_exchange, s->authentication, s->cipher, s->mac, s->n_credentials);
    }
    /* TLS 1.3 runs every certificate type of the shared credentials, Ed25519 included */
    const tb_suite_info *t = tb_suite_by_id(b, 0x1301);
    CHECK(t && t->credentials[4] == TB_CREDENTIAL_ED25519);
    /* DHE-RSA suites run over DTLS 1.2; RC4 (a stream cipher) cannot */
    CHECK(tb_suite_by_id(b, 0x009E) && tb_suite_by_id(b, 0x009E)->dtls);
    CHECK(tb_suite_by_id(b, 0xC011) && !tb_suite_by_id(b, 0xC011)->dtls);
}

static void test_unsupported_say_why(void) {
    const tb_suite_info *anon = tb_suite_by_id(b, 0x0034); /* TLS_DH_anon_WITH_AES_128_CBC_SHA */
    CHECK(anon && anon->n_credentials == 0 && strstr(anon->why_unsupported, "anonymous"));
    const tb_suite_info *wdm = tb_suite_by_id(b, 0x00FE); /* wolfSSL-private, not IANA */
    CHECK(wdm && wdm->n_credentials == 0 && strstr(wdm->why_unsupported, "IANA"));
}

static void test_turn_labels(void) {
    CHECK_EQ_U(tb_wolfssl_turn_label(0), TB_L_HANDSHAKE_TURN_1);
    CHECK_EQ_U(tb_wolfssl_turn_label(1), TB_L_HANDSHAKE_TURN_2);
    CHECK_EQ_U(tb_wolfssl_turn_label(3), TB_L_HANDSHAKE_TURN_4);
    CHECK_EQ_U(tb_wolfssl_turn_label(4), TB_L_HANDSHAKE_TURN_4); /* capped */
    CHECK_EQ_U(tb_wolfssl_turn_label(1000000), TB_L_HANDSHAKE_TURN_4);
}

int main(void) {
    RUN_TEST(test_count_and_unique_ids);
    RUN_TEST(test_metadata_complete);
    RUN_TEST(test_known_suites);
    RUN_TEST(test_unsupported_say_why);
    RUN_TEST(test_turn_labels);
    return tb_test_report();
}
