/* SPDX-License-Identifier: Apache-2.0 */
/* The backend conformance suite, the same tests against every backend (conformance.h):
 * the suite table is complete and agrees with the library, lookups work both ways, bad
 * configurations are refused by name, every suite completes a handshake with each of its
 * credentials over the memory transport and negotiates what was forced, every library
 * state has a step label, the RUN options the backend implements do what spec [options]
 * says, then the library's own tests. */
#include "conformance.h"

#include <ctype.h>
#include <string.h>

#include "tb_test.h"
#include "tlsbench/runner.h"
#include "tlsbench/trace.h"
#include "tlsbench/transport.h"

int tb_test_failures;
int tb_test_checks;

static const tb_backend *b = &tb_linked_backend;
#define X (&tb_expected_backend)

static bool tb_in(const char *s, const char *const *set) {
    for (; s && set && *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

static bool tb_is_tls13(const tb_suite_info *s) { return strcmp(s->max_version, "TLS1.3") == 0; }

/* ---------------------------------------------------------------- shared helpers */

/* One 100-byte record each way, traced as the runner does, then close_notify from both. */
static int tb_pair_exchange(tb_pair *p) {
    uint8_t out[100], in[200];
    int32_t e = 0;
    memset(out, 0x5a, sizeof out);
    for (uint8_t w = 0; w < 2; w++) {
        out[0] = w;
        tb_trace_set_peer(w);
        tb_begin(TB_L_RECORD_WRITE);
        int n = b->write(p->peer[w], out, sizeof out, &e);
        tb_end(TB_L_RECORD_WRITE, n > 0 ? (uint64_t)n : 0);
        tb_trace_set_peer((uint8_t)(1 - w));
        tb_begin(TB_L_RECORD_READ);
        int m = b->read(p->peer[1 - w], in, sizeof in, &e);
        tb_end(TB_L_RECORD_READ, m > 0 ? (uint64_t)m : 0);
        if (n != (int)sizeof out || m != (int)sizeof out || memcmp(in, out, sizeof out) != 0)
            return -1;
    }
    int rc = 0;
    for (uint8_t w = 0; w < 2; w++) {
        tb_trace_set_peer(w);
        tb_begin(TB_L_CLOSE);
        rc |= b->close_notify(p->peer[w], &e);
        tb_end(TB_L_CLOSE, 0);
    }
    return rc;
}

int tb_conformance_run(const tb_conn_config *cfg, tb_pair_hook hook, tb_outcome *out, char *why, size_t whylen) {
    tb_pair p;
    int32_t e = 0;
    tb_trace_reset();
    int ok = tb_pair_open_traced(&p, cfg) == 0;
    if (!ok)
        snprintf(why, whylen, "setup: %.200s", p.err);
    if (ok && hook)
        hook(&p);
    if (ok && tb_pair_handshake(&p, &e) != 0) {
        char text[128];
        b->error_text(e, text, sizeof text);
        snprintf(why, whylen, "handshake: %d (-0x%04X) %s", (int)e, (unsigned)-e, text);
        ok = 0;
    }
    if (ok && out && X->negotiated)
        X->negotiated(p.peer[TB_PEER_CLIENT], out);
    if (ok && tb_pair_exchange(&p) != 0) {
        snprintf(why, whylen, "application data or close failed");
        ok = 0;
    }
    if (out && p.t)
        tb_memory_transport.counters(p.t, &out->wire[0], &out->wire[1]);
    tb_pair_close(&p);
    return ok ? 0 : -1;
}

int tb_nested(uint16_t outer, uint16_t inner, uint8_t peer) {
    const tb_trace *t = &tb_trace_buffer;
    int open = 0, n = 0; /* open: how many outer spans are open (a span may nest in its own label) */
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        if (r->peer != peer || r->kind == TB_KIND_INSTANT)
            continue;
        bool start = r->kind == TB_KIND_START;
        n += start && open > 0 && r->label == inner;
        if (r->label == outer)
            open += start ? 1 : open > 0 ? -1 : 0;
    }
    return n;
}

int tb_count(uint16_t label, uint8_t peer) {
    int n = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++) {
        const tb_record *r = &tb_trace_buffer.records[i];
        n += r->label == label && r->peer == peer && r->kind == TB_KIND_START;
    }
    return n;
}

/* ---------------------------------------------------------------- the suite table */

static void test_init(void) {
    char err[256] = "";
    CHECK(b->init(err, sizeof err) == 0);
    CHECK(b->init(err, sizeof err) == 0); /* idempotent */
    CHECK(strcmp(b->step_granularity, X->step_granularity) == 0);
}

static void test_count_matches_the_library(void) {
    size_t n = b->suite_count();
    fprintf(stderr, "  %zu suites\n", n);
    CHECK(n >= X->min_suites);
    if (X->library_suite_count)
        CHECK_EQ_U(n, X->library_suite_count());
    if (X->expected_suites)
        CHECK_EQ_U(n, X->expected_suites);
    CHECK(b->suite_at(n) == NULL);
}

/* Everything a suite of the table must say; the metadata of a suite nothing can run only
 * where the library names it (unsupported_have_metadata). */
static void tb_check_metadata(const tb_suite_info *s) {
    bool named = s->name && s->min_version && s->max_version && s->key_exchange && s->authentication && s->cipher &&
                 s->mac;
    CHECK(named);
    if (!named)
        return;
    CHECK(s->id != 0);
    CHECK(s->n_credentials <= TB_MAX_SUITE_CREDENTIALS);
    CHECK((s->n_credentials > 0) != (s->why_unsupported != NULL));
    CHECK(tb_in(s->max_version, X->versions));
    if (s->n_credentials == 0 && !X->unsupported_have_metadata)
        return;
    CHECK(s->name && strncmp(s->name, X->suite_prefix, strlen(X->suite_prefix)) == 0);
    CHECK(tb_in(s->min_version, X->versions));
    CHECK(strcmp(s->min_version, s->max_version) <= 0); /* "TLS1.x" sorts by version */
    CHECK(tb_in(s->key_exchange, X->key_exchanges));
    CHECK(tb_in(s->authentication, X->authentications));
    CHECK(s->cipher && *s->cipher && strcmp(s->cipher, "unknown") != 0);
    CHECK(s->mac && *s->mac && strcmp(s->mac, "unknown") != 0);
    CHECK(!X->macs || tb_in(s->mac, X->macs));
    for (size_t c = 0; c < s->n_credentials; c++)
        CHECK(s->credentials[c] != TB_CREDENTIAL_AUTO && tb_credential_name(s->credentials[c]) != NULL);
    /* A TLS 1.3 suite fixes neither the key exchange nor the authentication, nor runs over DTLS
     * (but DTLS 1.3, where the library has it). */
    CHECK(tb_is_tls13(s) == (strcmp(s->key_exchange, "any") == 0));
    CHECK(tb_is_tls13(s) == (strcmp(s->authentication, "any") == 0));
    CHECK(!tb_is_tls13(s) || (strcmp(s->min_version, "TLS1.3") == 0 && (!s->dtls || X->tls13_over_dtls)));
}

static void test_every_suite_is_complete(void) {
    size_t runnable = 0, tls13 = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        int before = tb_test_failures;
        tb_check_metadata(s);
        if (X->check_suite)
            X->check_suite(s);
        for (size_t j = 0; j < i; j++)
            CHECK(b->suite_at(j)->id != s->id); /* name aliases are listed once */
        runnable += s->n_credentials > 0;
        tls13 += tb_is_tls13(s);
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X %s: %s..%s %s/%s %s %s\n", s->id, s->name ? s->name : "?",
                    s->min_version, s->max_version, s->key_exchange, s->authentication, s->cipher, s->mac);
    }
    fprintf(stderr, "  %zu runnable, %zu TLS 1.3\n", runnable, tls13);
    CHECK(runnable >= X->min_runnable);
    CHECK(tls13 >= X->min_tls13);
}

static void test_lookups_both_ways(void) {
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        CHECK(tb_suite_by_id(b, s->id) == s);
        if (s->n_credentials > 0 || X->unsupported_have_metadata)
            CHECK(tb_suite_by_name(b, s->name) == s);
    }
    /* Users type names by hand: case does not matter. */
    const tb_suite_info *c02b = tb_suite_by_id(b, 0xC02B);
    char lower[96] = "";
    for (size_t i = 0; c02b && c02b->name[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)c02b->name[i]);
    CHECK(c02b && tb_suite_by_name(b, lower) == c02b);
    CHECK(tb_suite_by_id(b, 0xC0FF) == NULL);
    CHECK(tb_suite_by_name(b, "TLS-NOT-A-SUITE") == NULL);
    CHECK(tb_suite_by_name(b, "TLS_NOT_A_SUITE") == NULL);
}

static size_t tb_creds_len(const uint8_t *creds) {
    size_t n = 0;
    while (n < TB_MAX_SUITE_CREDENTIALS && creds[n])
        n++;
    return n;
}

static void test_known_suites_exactly(void) {
    for (size_t i = 0; i < X->n_known; i++) {
        const tb_expected_suite *w = &X->known[i];
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
        size_t n = tb_creds_len(w->creds);
        CHECK_EQ_U(s->n_credentials, n);
        CHECK(memcmp(s->credentials, w->creds, n) == 0);
        if (tb_test_failures != before)
            fprintf(stderr, "  in suite 0x%04X: got %s %s..%s %s/%s %s %s dtls=%d\n", w->id, s->name,
                    s->min_version, s->max_version, s->key_exchange, s->authentication, s->cipher, s->mac, s->dtls);
    }
}

static void test_unsupported_say_why(void) {
    for (size_t i = 0; i < X->n_unsupported; i++) {
        const tb_suite_info *s = tb_suite_by_id(b, X->unsupported[i].id);
        CHECK(s && s->n_credentials == 0 && strstr(s->why_unsupported, X->unsupported[i].why_part));
    }
}

/* ---------------------------------------------------------------- sessions */

/* What every backend refuses, with the same words (backends/common.c). */
static const tb_refusal tb_common_refusals[] = {
    {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_RSA2048}, "does not fit suite"},
    {{.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ED25519}, "does not fit suite"},
    {{.suite_id = 0xC02B, .group = TB_GROUP_FFDHE2048, .credential = TB_CREDENTIAL_ECDSA_P256}, "does not fit"},
    {{.suite_id = 0xC02B, .group = 0x1234, .credential = TB_CREDENTIAL_ECDSA_P256}, "not supported"},
    {{.suite_id = 0x009E, .group = TB_GROUP_SECP256R1, .credential = TB_CREDENTIAL_RSA2048}, "does not fit"},
};

/* Refused by session_new, and by check (the runner's once-per-RUN question) in the same words. */
static void tb_check_refused(const tb_conn_config *cfg, const char *message_part) {
    tb_pair p;
    char err[256] = "";
    CHECK(tb_pair_open_traced(&p, cfg) != 0);
    CHECK(strstr(p.err, message_part) != NULL);
    if (!strstr(p.err, message_part))
        fprintf(stderr, "  suite 0x%04X group %u: \"%s\" lacks \"%s\"\n", cfg->suite_id, cfg->group, p.err,
                message_part);
    tb_pair_close(&p);
    CHECK(!b->check || (b->check(cfg, err, sizeof err) != 0 && strstr(err, message_part) != NULL));
}

static void test_configuration_errors(void) {
    char missing[96];
    snprintf(missing, sizeof missing, "not in this %s build", X->library_name);
    tb_check_refused(&(tb_conn_config){.suite_id = 0xC0FF, .credential = TB_CREDENTIAL_ECDSA_P256}, missing);
    for (size_t i = 0; i < TB_COUNT(tb_common_refusals); i++)
        tb_check_refused(&tb_common_refusals[i].cfg, tb_common_refusals[i].message_part);
    for (size_t i = 0; i < X->n_refusals; i++)
        tb_check_refused(&X->refusals[i].cfg, X->refusals[i].message_part);
}

/* The forced suite is the one negotiated, at the suite's version (pinned per suite). */
static void test_every_suite_handshakes(void) {
    size_t ran = 0, tls13 = 0;
    for (size_t i = 0; i < b->suite_count(); i++) {
        const tb_suite_info *s = b->suite_at(i);
        const char *version = tb_is_tls13(s) ? "TLS1.3" : "TLS1.2";
        for (size_t c = 0; c < s->n_credentials; c++) {
            tb_conn_config cfg = {.suite_id = s->id, .credential = s->credentials[c]};
            char why[256] = "";
            CHECK(!b->check || b->check(&cfg, why, sizeof why) == 0);
            tb_outcome o = {0};
            int rc = tb_conformance_run(&cfg, NULL, &o, why, sizeof why);
            CHECK(rc == 0);
            CHECK(!o.suite || o.suite == s->id);
            CHECK(!o.version || strcmp(o.version, version) == 0);
            if (rc != 0 || (o.suite && o.suite != s->id) || (o.version && strcmp(o.version, version) != 0))
                fprintf(stderr, "  %s with %s: %s; negotiated 0x%04X %s\n", s->name,
                        tb_credential_name(cfg.credential), why, o.suite, o.version ? o.version : "?");
            tls13 += rc == 0 && tb_is_tls13(s);
            ran++;
        }
    }
    fprintf(stderr, "  %zu suite/credential pairs, %zu with TLS 1.3\n", ran, tls13);
    CHECK(ran >= X->min_pairs);
    CHECK(tls13 >= X->min_tls13_pairs);
}

static void test_forced_groups(void) {
    for (size_t i = 0; i < X->n_groups; i++) {
        const tb_forced_group *g = &X->groups[i];
        char why[256] = "";
        tb_outcome o = {0};
        int rc = tb_conformance_run(&g->cfg, NULL, &o, why, sizeof why);
        CHECK(rc == 0);
        if (g->negotiated)
            CHECK_EQ_U(o.group, g->negotiated);
        if (rc != 0 || (g->negotiated && o.group != g->negotiated))
            fprintf(stderr, "  case %zu (suite 0x%04X group %s): %s; negotiated %s\n", i, g->cfg.suite_id,
                    tb_group_name(g->cfg.group), why, tb_group_name(o.group) ? tb_group_name(o.group) : "?");
    }
}

/* ---------------------------------------------------------------- RUN options (spec [options])
 * Each option a backend implements (b->options), checked by what it must change in the
 * trace: crypto spans for every backend, message steps where steps are states. */

static const uint8_t C = TB_PEER_CLIENT, S = TB_PEER_SERVER;

static bool tb_suite_takes(uint16_t id, uint8_t credential) {
    const tb_suite_info *s = tb_suite_by_id(b, id);
    for (size_t i = 0; s && i < s->n_credentials; i++)
        if (s->credentials[i] == credential)
            return true;
    return false;
}

static bool tb_steps_are_states(void) { return strcmp(b->step_granularity, "state") == 0; }

static int tb_run_traced(const tb_conn_config *cfg, const char *what) {
    char why[256] = "";
    int rc = tb_conformance_run(cfg, NULL, NULL, why, sizeof why);
    if (rc != 0)
        fprintf(stderr, "  %s (suite 0x%04X, options 0x%02X): %s\n", what, cfg->suite_id, cfg->options, why);
    return rc;
}

/* The TLS 1.3 and TLS 1.2 ECDSA suites every library has (where it has TLS 1.3). */
static const uint16_t tb_option_suites[] = {0x1301, 0xC02B};

/* MUTUAL_AUTH: the client signs its CertificateVerify and the server verifies the client's
 * chain and signature; without it, the client signs nothing and the server verifies nothing. */
static void test_option_mutual_auth(void) {
    if (!(b->options & TB_OPTION_MUTUAL_AUTH))
        return;
    for (size_t i = 0; i < TB_COUNT(tb_option_suites); i++) {
        if (!tb_suite_takes(tb_option_suites[i], TB_CREDENTIAL_ECDSA_P256))
            continue;
        tb_conn_config cfg = {.suite_id = tb_option_suites[i], .credential = TB_CREDENTIAL_ECDSA_P256};
        CHECK(tb_run_traced(&cfg, "server authentication") == 0);
        CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C), 0);
        CHECK_EQ_U(tb_count(TB_L_CHAIN_VERIFY, S), 0);
        cfg.options = TB_OPTION_MUTUAL_AUTH;
        CHECK(tb_run_traced(&cfg, "mutual authentication") == 0);
        CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C), 1);
        CHECK_EQ_U(tb_count(TB_L_PK_SIGN, S), 1);
        CHECK(tb_count(TB_L_CHAIN_VERIFY, S) >= 1);
        CHECK(tb_count(TB_L_PK_VERIFY, S) >= 2); /* the client's chain, its CertificateVerify */
        if (!tb_steps_are_states())
            continue;
        CHECK_EQ_U(tb_count(TB_L_CERTIFICATE_REQUEST, S), 1);
        CHECK(tb_count(TB_L_CERTIFICATE_REQUEST, C) >= 1);
        CHECK(tb_count(TB_L_CLIENT_CERTIFICATE, C) >= 1);
        CHECK(tb_count(TB_L_CLIENT_CERTIFICATE, S) >= 1);
        CHECK_EQ_U(tb_nested(TB_L_CERTIFICATE_VERIFY, TB_L_PK_SIGN, C), 1);
        CHECK(tb_nested(TB_L_CLIENT_CERTIFICATE, TB_L_CHAIN_VERIFY, S) >= 1);
        CHECK(tb_nested(TB_L_CERTIFICATE_VERIFY, TB_L_PK_VERIFY, S) >= 1);
    }
}

/* RESUME: after the RUN's first connection (a full handshake), each connection resumes the
 * session the previous one left: no certificate, no signature, no chain verification. A
 * connection the server cannot resume fails instead of measuring a full handshake. */
static void tb_check_resumed(uint16_t suite, uint8_t options) {
    tb_conn_config cfg = {.suite_id = suite, .credential = TB_CREDENTIAL_ECDSA_P256, .options = options,
                          .first_connection = true};
    CHECK(tb_run_traced(&cfg, "the RUN's first connection") == 0);
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, S), 1); /* a full handshake */
    cfg.first_connection = false;
    for (int i = 0; i < 2; i++) { /* the second resumes the session the first resumption left */
        CHECK(tb_run_traced(&cfg, "a resumption") == 0);
        CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C) + tb_count(TB_L_PK_SIGN, S), 0);
        CHECK_EQ_U(tb_count(TB_L_CHAIN_VERIFY, C) + tb_count(TB_L_PK_VERIFY, C), 0);
        if (tb_steps_are_states())
            CHECK_EQ_U(tb_count(TB_L_SERVER_CERTIFICATE, C) + tb_count(TB_L_SERVER_CERTIFICATE, S), 0);
    }
}

static void test_option_resume(void) {
    if (!(b->options & TB_OPTION_RESUME))
        return;
    for (size_t i = 0; i < TB_COUNT(tb_option_suites); i++)
        if (tb_suite_takes(tb_option_suites[i], TB_CREDENTIAL_ECDSA_P256))
            tb_check_resumed(tb_option_suites[i], TB_OPTION_RESUME);
    if (!(b->options & TB_OPTION_RESUME_ID))
        return;
    tb_check_resumed(0xC02B, TB_OPTION_RESUME | TB_OPTION_RESUME_ID);
    /* A ticket's session offered to a server that resumes by session ID only: not resumed. */
    tb_conn_config cfg = {.suite_id = 0xC02B, .credential = TB_CREDENTIAL_ECDSA_P256, .options = TB_OPTION_RESUME,
                          .first_connection = true};
    CHECK(tb_run_traced(&cfg, "the RUN's first connection") == 0);
    cfg.first_connection = false;
    cfg.options |= TB_OPTION_RESUME_ID;
    char why[256] = "";
    CHECK(tb_conformance_run(&cfg, NULL, NULL, why, sizeof why) != 0);
}

/* The TLS 1.3 external PSK: no certificate work; psk_dhe_ke still exchanges key shares
 * (one shared secret per peer), psk_ke (PSK_ONLY) computes none and the server makes no key. */
static void test_option_psk_tls13(void) {
    if (!tb_suite_takes(0x1301, TB_CREDENTIAL_PSK))
        return;
    tb_conn_config cfg = {.suite_id = 0x1301, .credential = TB_CREDENTIAL_PSK};
    CHECK(tb_run_traced(&cfg, "psk_dhe_ke") == 0);
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C) + tb_count(TB_L_PK_SIGN, S), 0);
    CHECK_EQ_U(tb_count(TB_L_CHAIN_VERIFY, C) + tb_count(TB_L_PK_VERIFY, C), 0);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, C), 1);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, S), 1);
    if (!(b->options & TB_OPTION_PSK_ONLY))
        return;
    cfg.options = TB_OPTION_PSK_ONLY;
    CHECK(tb_run_traced(&cfg, "psk_ke") == 0);
    CHECK_EQ_U(tb_count(TB_L_SHARED_SECRET, C) + tb_count(TB_L_SHARED_SECRET, S), 0);
    CHECK_EQ_U(tb_count(TB_L_KEY_GENERATE, S), 0);
    CHECK_EQ_U(tb_count(TB_L_PK_SIGN, C) + tb_count(TB_L_PK_SIGN, S), 0);
}

/* ---------------------------------------------------------------- state -> step label */

static void test_every_state_has_a_step_label(void) {
    if (!X->state_label)
        return;
    CHECK_EQ_U(X->state_count(), X->n_states);
    for (int state = 0; (size_t)state < X->state_count(); state++) {
        uint16_t label = X->state_label(state);
        CHECK(tb_label_name(label) != NULL);
        CHECK(label >= 100 && label < 200); /* the step range of spec/labels.toml */
        if (!tb_label_name(label))
            fprintf(stderr, "  state %d has no label\n", state);
    }
    CHECK_EQ_U(X->state_label(-1), 0);
    CHECK_EQ_U(X->state_label((int)X->state_count()), 0);
    CHECK_EQ_U(X->state_label(1000), 0);
}

/* Both directions of each message map to the same label (the peer tells which side). */
static void test_known_states(void) {
    for (size_t i = 0; i < X->n_known_states; i++) {
        CHECK_EQ_U(X->state_label(X->known_states[i].state), X->known_states[i].label);
        if (X->state_label(X->known_states[i].state) != X->known_states[i].label)
            fprintf(stderr, "  state %d\n", X->known_states[i].state);
    }
}

int main(void) {
    RUN_TEST(test_init);
    RUN_TEST(test_count_matches_the_library);
    RUN_TEST(test_every_suite_is_complete);
    RUN_TEST(test_lookups_both_ways);
    RUN_TEST(test_known_suites_exactly);
    RUN_TEST(test_unsupported_say_why);
    RUN_TEST(test_configuration_errors);
    RUN_TEST(test_every_suite_handshakes);
    RUN_TEST(test_forced_groups);
    RUN_TEST(test_option_mutual_auth);
    RUN_TEST(test_option_resume);
    RUN_TEST(test_option_psk_tls13);
    RUN_TEST(test_every_state_has_a_step_label);
    RUN_TEST(test_known_states);
    for (size_t i = 0; i < X->n_extra; i++) {
        int before = tb_test_failures;
        X->extra[i].run();
        fprintf(stderr, "%-40s %s\n", X->extra[i].name, tb_test_failures == before ? "ok" : "FAILED");
    }
    b->deinit();
    return tb_test_report();
}
