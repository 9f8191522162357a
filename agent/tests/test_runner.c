/* SPDX-License-Identifier: Apache-2.0 */
/* The runner against the backend this test is linked with (no mock TLS library):
 * request checks, a full run's trace structure and byte accounting, failures and cleanup. */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/runner.h"
#include "tlsbench/transport.h"

static const tb_backend *B = &tb_linked_backend;

/* The first suite that can run here (the backend's preference order). */
static const tb_suite_info *runnable_suite(void) {
    for (size_t i = 0; i < B->suite_count(); i++)
        if (B->suite_at(i)->n_credentials > 0)
            return B->suite_at(i);
    return NULL;
}

static tb_run_request request(const tb_suite_info *s) {
    return (tb_run_request){.config_id = 5, .suite_id = s->id, .credential = TB_CREDENTIAL_AUTO,
                            .direction = TB_DIRECTION_BOTH, .transport = TB_TRANSPORT_MEMORY,
                            .repetitions = 3, .warmup = 1, .total_bytes = 10000, .record_size = 1000,
                            .first_index = 100};
}

/* What the sink saw, checked after the run. */
typedef struct seen {
    uint32_t n;
    uint32_t next_index;
    int bad_index;
    int stop_after; /* 0: never stop */
    tb_rep_result last;
    tb_rep_result first; /* the repetition whose trace is inspected: byte counts vary per
                          * repetition (an ECDSA signature's DER length does) */
    /* from the first repetition's trace */
    int nesting_ok;
    int seq_ok;
    int io_outside_work;
    int unnamed_labels;
    uint32_t backend_spans; /* spans the runner does not emit itself: steps, crypto */
    uint64_t written[2], read[2], sent[2], received[2];
    uint32_t phases;
    uint32_t first_label, last_label;
    uint32_t signatures; /* PK_SIGN spans: a resumed handshake has none */
    int runqueue_wait, runqueue_wait_expected;
} seen;

static int is_runner_label(uint16_t l) {
    static const uint16_t own[] = {TB_L_REPETITION, TB_L_CONNECTION_SETUP, TB_L_HANDSHAKE, TB_L_APPLICATION_DATA,
                                   TB_L_CLOSE,      TB_L_PEER_TURN,        TB_L_SEND,      TB_L_RECV,
                                   TB_L_RECORD_WRITE, TB_L_RECORD_READ};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i] == l)
            return 1;
    return 0;
}

static void inspect_trace(seen *s, const tb_trace *t) {
    uint16_t stack[64];
    int depth = 0;
    s->nesting_ok = t->count > 0;
    s->seq_ok = 1;
    uint32_t count = t->count; /* the REPETITION span, then its run-queue wait where known */
    uint64_t ns;
    s->runqueue_wait = count && t->records[count - 1].label == TB_L_RUNQUEUE_WAIT &&
                       t->records[count - 1].kind == TB_KIND_INSTANT;
    s->runqueue_wait_expected = tb_port_runqueue_wait_ns(&ns) == 0;
    count -= s->runqueue_wait;
    s->first_label = count ? t->records[0].label : 0;
    s->last_label = count ? t->records[count - 1].label : 0;
    for (uint32_t i = 0; i < count; i++) {
        const tb_record *r = &t->records[i];
        s->seq_ok &= r->seq == i && (i == 0 || r->t_ns >= t->records[i - 1].t_ns);
        s->unnamed_labels += tb_label_name(r->label) == NULL;
        if (r->kind == TB_KIND_START) {
            /* I/O happens inside a step, a record call, setup or close: never directly in
             * HANDSHAKE/APPLICATION_DATA (that would be the runner's own I/O). */
            if ((r->label == TB_L_SEND || r->label == TB_L_RECV) && depth > 0 &&
                (stack[depth - 1] == TB_L_HANDSHAKE || stack[depth - 1] == TB_L_APPLICATION_DATA ||
                 stack[depth - 1] == TB_L_REPETITION))
                s->io_outside_work++;
            if (depth < 64)
                stack[depth++] = r->label;
            else
                s->nesting_ok = 0;
            continue;
        }
        if (r->kind != TB_KIND_STOP)
            continue;
        if (depth == 0 || stack[depth - 1] != r->label) {
            s->nesting_ok = 0;
            continue;
        }
        depth--;
        uint8_t p = r->peer <= TB_PEER_SERVER ? r->peer : 0;
        s->backend_spans += !is_runner_label(r->label);
        s->signatures += r->label == TB_L_PK_SIGN;
        s->phases += r->peer == TB_PEER_NONE;
        if (r->label == TB_L_RECORD_WRITE)
            s->written[p] += r->value;
        if (r->label == TB_L_RECORD_READ)
            s->read[p] += r->value;
        if (r->label == TB_L_SEND)
            s->sent[p] += r->value;
        if (r->label == TB_L_RECV)
            s->received[p] += r->value;
    }
    s->nesting_ok &= depth == 0;
}

static int sink(void *ctx, const tb_rep_result *r, const tb_trace *t) {
    seen *s = ctx;
    if (s->n == 0) {
        inspect_trace(s, t);
        s->first = *r;
    }
    s->bad_index |= r->index != s->next_index;
    s->next_index = r->index + 1;
    s->last = *r;
    s->n++;
    return s->stop_after && s->n >= (uint32_t)s->stop_after;
}

/* The first runnable suite whose version is (tls13) or is not TLS 1.3 and that lists
 * credential (0: any), NULL when none. */
static const tb_suite_info *suite_where(int tls13, uint8_t credential) {
    for (size_t i = 0; i < B->suite_count(); i++) {
        const tb_suite_info *u = B->suite_at(i);
        int listed = credential == 0 && u->n_credentials > 0;
        for (uint8_t c = 0; c < u->n_credentials; c++)
            listed |= u->credentials[c] == credential;
        if (listed && (strcmp(u->max_version, "TLS1.3") == 0) == tls13)
            return u;
    }
    return NULL;
}

/* One combination of options, suite and credential, refused with code and words. */
static void check_refused_options(const tb_suite_info *s, uint8_t options, uint8_t credential, const char *code_want,
                                  const char *words) {
    if (!s || (options & ~(TB_OPTIONS_BASE | B->options)))
        return; /* no such suite here, or an option the backend refuses anyway (checked above) */
    const char *code = NULL;
    char err[256] = "";
    tb_run_request r = request(s);
    r.options = options;
    r.credential = credential;
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1);
    CHECK(code && strcmp(code, code_want) == 0);
    CHECK(strstr(err, words) != NULL);
    if (!strstr(err, words))
        fprintf(stderr, "  options 0x%02X suite %s: \"%s\"\n", options, s->name, err);
}

static void tb_check_option_rules(void) {
    const tb_suite_info *tls12 = suite_where(0, 0), *tls13 = suite_where(1, 0);
    const tb_suite_info *psk12 = suite_where(0, TB_CREDENTIAL_PSK), *psk13 = suite_where(1, TB_CREDENTIAL_PSK);
    check_refused_options(tls12, TB_OPTION_RESUME_ID, TB_CREDENTIAL_AUTO, "bad_request", "needs RESUME");
    check_refused_options(tls13, TB_OPTION_RESUME | TB_OPTION_RESUME_ID, TB_CREDENTIAL_AUTO, "unsupported",
                          "no session IDs");
    check_refused_options(tls12, TB_OPTION_PSK_ONLY, TB_CREDENTIAL_AUTO, "bad_request", "TLS 1.3 suite");
    check_refused_options(psk12, TB_OPTION_MUTUAL_AUTH, TB_CREDENTIAL_PSK, "unsupported", "certificate credential");
    check_refused_options(psk13, TB_OPTION_RESUME, TB_CREDENTIAL_PSK, "unsupported", "psk credential on TLS 1.3");
}

static void test_check_rejects(void) {
    const tb_suite_info *s = runnable_suite();
    CHECK(s != NULL);
    if (!s)
        return;
    const char *code = NULL;
    char err[256];
    tb_run_request r = request(s);
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == 0);

    r.suite_id = 0xFFFF; /* reserved in the IANA registry: never a real suite */
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1);
    CHECK(code && strcmp(code, "unknown_suite") == 0);
    CHECK(strstr(err, "0xFFFF") != NULL);

    r = request(s);
    r.record_size = 16385;
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "bad_request") == 0);
    r.record_size = 0;
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "bad_request") == 0);

    r = request(s);
    r.transport = 200;
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "unsupported") == 0);

    r = request(s);
    r.group = 1234;
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "bad_request") == 0);

    /* an option the backend does not implement: "unsupported", naming it */
    for (unsigned bit = 1; bit < 256; bit <<= 1) {
        if ((TB_OPTIONS_BASE | B->options) & bit)
            continue;
        r = request(s);
        r.options = (uint8_t)bit;
        CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "unsupported") == 0);
        CHECK(strstr(err, tb_option_name(bit)) != NULL);
    }

    /* what options mean together (spec [options]) is refused before any repetition */
    tb_check_option_rules();

    /* a credential the suite does not list: "unsupported", naming the allowed ones */
    r = request(s);
    for (unsigned c = 1; c < 256; c++) {
        int listed = 0;
        for (uint8_t i = 0; i < s->n_credentials; i++)
            listed |= s->credentials[i] == c;
        if (tb_credential_name(c) && !listed) {
            r.credential = (uint8_t)c;
            break;
        }
    }
    CHECK(r.credential != TB_CREDENTIAL_AUTO);
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "unsupported") == 0);
    CHECK(strstr(err, tb_credential_name(s->credentials[0])) != NULL);
    r.credential = s->credentials[0];
    CHECK(tb_run_check(B, &r, &code, err, sizeof err) == 0);

    for (size_t i = 0; i < B->suite_count(); i++) {
        const tb_suite_info *u = B->suite_at(i);
        if (u->n_credentials)
            continue;
        r = request(u);
        CHECK(tb_run_check(B, &r, &code, err, sizeof err) == -1 && strcmp(code, "unsupported") == 0);
        break;
    }
    /* tb_run refuses an unchecked bad request instead of running it */
    r = request(s);
    r.suite_id = 0xFFFF;
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &(seen){0}, &sum) == -1);
    CHECK(sum.shipped == 0 && sum.first_error[0] != '\0');
}

/* The suite with this id when it takes this credential, else NULL. */
static const tb_suite_info *suite_taking(uint16_t id, uint8_t credential) {
    const tb_suite_info *s = tb_suite_by_id(B, id);
    for (uint8_t i = 0; s && i < s->n_credentials; i++)
        if (s->credentials[i] == credential)
            return s;
    return NULL;
}

/* A group of the spec the backend cannot use is refused once per RUN (unsupported, the
 * backend's reason), before any repetition. */
static void test_unusable_group_refused_once(void) {
    const tb_suite_info *s = runnable_suite();
    if (!s || !B->check)
        return;
    for (unsigned g = 1; g < 65536; g++) {
        tb_conn_config cfg = {.suite_id = s->id, .group = (uint16_t)g, .credential = s->credentials[0]};
        char why[sizeof ((tb_run_summary *)0)->first_error] = "";
        if (!tb_group_name(g) || B->check(&cfg, why, sizeof why) == 0)
            continue;
        tb_run_request r = request(s);
        r.group = (uint16_t)g;
        r.credential = s->credentials[0];
        seen got = {.next_index = r.first_index};
        tb_run_summary sum;
        CHECK(tb_run(B, &r, sink, &got, &sum) == -1);
        CHECK(sum.refused && strcmp(sum.refused, "unsupported") == 0);
        CHECK(strcmp(sum.first_error, why) == 0);
        if (strcmp(sum.first_error, why) != 0)
            fprintf(stderr, "  group %u: run said \"%s\", check \"%s\"\n", g, sum.first_error, why);
        CHECK_EQ_U(got.n, 0);
        return;
    }
}

/* RESUME: the untraced first connection is not shipped, nor numbered among the repetitions;
 * every shipped one resumed (no signature). */
static void test_resume_run(void) {
    const tb_suite_info *s = suite_taking(0x1301, TB_CREDENTIAL_ECDSA_P256);
    s = s ? s : suite_taking(0xC02B, TB_CREDENTIAL_ECDSA_P256);
    if (!s || !(B->options & TB_OPTION_RESUME))
        return;
    tb_run_request r = request(s);
    r.options = TB_OPTION_RESUME;
    seen got = {.next_index = r.first_index};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &got, &sum) == 0);
    CHECK_EQ_U(sum.shipped, 3);
    CHECK_EQ_U(sum.failed, 0);
    if (sum.failed)
        fprintf(stderr, "suite %s RESUME: %s\n", s->name, sum.first_error);
    CHECK(!got.bad_index && got.next_index == 103);
    if (TB_TRACE_ENABLED)
        CHECK_EQ_U(got.signatures, 0);
}

static void test_full_run(void) {
    const tb_suite_info *s = runnable_suite();
    if (!s)
        return;
    tb_run_request r = request(s);
    seen got = {.next_index = r.first_index};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &got, &sum) == 0);
    fprintf(stderr, "suite %s: %s\n", s->name, sum.first_error);
    CHECK_EQ_U(sum.shipped, 3);
    CHECK_EQ_U(sum.failed, 0);
    CHECK_EQ_U(got.n, 3); /* warm-up not shipped */
    CHECK(!got.bad_index && got.next_index == 103);
    CHECK_EQ_U(got.last.status, TB_STATUS_OK);
    CHECK_EQ_U(got.last.failed_peer, TB_PEER_NONE);
    CHECK_EQ_U(got.last.config_id, 5);
    CHECK(got.last.error_code == 0 && (got.last.flags & TB_FLAG_WARMUP) == 0);
    CHECK(got.last.handshake_cpu_ns > 0 && got.last.handshake_wall_ns > 0);
    CHECK(got.last.bytes_c2s > 10000 && got.last.bytes_s2c > 10000); /* records plus TLS overhead */
    if (!TB_TRACE_ENABLED)
        return;
    CHECK(got.nesting_ok);
    CHECK(got.seq_ok);
    CHECK_EQ_U(got.unnamed_labels, 0);
    CHECK_EQ_U(got.io_outside_work, 0);
    CHECK_EQ_U(got.first_label, TB_L_REPETITION);
    CHECK_EQ_U(got.last_label, TB_L_REPETITION);
    CHECK_EQ_U(got.runqueue_wait, got.runqueue_wait_expected);
    CHECK_EQ_U(got.phases, 5); /* repetition, setup, handshake, data, close */
    CHECK(got.backend_spans > 0); /* the backend's steps (and crypto) are in the trace */
    for (int p = 0; p < 2; p++) {
        CHECK_EQ_U(got.written[p], 10000);
        CHECK_EQ_U(got.read[p], 10000);
    }
    /* every byte on the link went through a traced send and was received by the peer */
    CHECK_EQ_U(got.sent[TB_PEER_CLIENT], got.first.bytes_c2s);
    CHECK_EQ_U(got.sent[TB_PEER_SERVER], got.first.bytes_s2c);
    CHECK(got.received[TB_PEER_SERVER] <= got.sent[TB_PEER_CLIENT]);
}

/* Uneven records: the last one is shorter; direction s2c only. */
static void test_short_last_record(void) {
    const tb_suite_info *s = runnable_suite();
    if (!s)
        return;
    tb_run_request r = request(s);
    r.direction = TB_DIRECTION_S2C;
    r.total_bytes = 2500;
    r.record_size = 1000;
    r.repetitions = 1;
    r.warmup = 0;
    seen got = {.next_index = r.first_index};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &got, &sum) == 0 && sum.failed == 0);
    if (TB_TRACE_ENABLED) {
        CHECK_EQ_U(got.written[TB_PEER_SERVER], 2500);
        CHECK_EQ_U(got.read[TB_PEER_CLIENT], 2500);
        CHECK_EQ_U(got.written[TB_PEER_CLIENT], 0);
    }
}

/* A suite with ECDHE key exchange, to pair with a finite-field group (never valid). */
static const tb_suite_info *ecdhe_suite(void) {
    for (size_t i = 0; i < B->suite_count(); i++) {
        const tb_suite_info *s = B->suite_at(i);
        if (s->n_credentials > 0 && strcmp(s->key_exchange, "ECDHE") == 0)
            return s;
    }
    return NULL;
}

/* A failing repetition (ECDHE over ffdhe2048 cannot be configured) must be reported with
 * its reason, keep the trace well-formed, and free everything: the static memory
 * transport opens again and the next run succeeds. */
static void test_failure_cleans_up(void) {
    const tb_suite_info *s = ecdhe_suite();
    CHECK(s != NULL);
    if (!s)
        return;
    tb_run_request r = request(s);
    r.group = TB_GROUP_FFDHE2048;
    r.repetitions = 2;
    r.warmup = 1;
    seen got = {.next_index = r.first_index};
    tb_run_summary sum;
    /* A backend with check() refuses the RUN up front; without it (the same backend asked
     * nothing) every repetition's setup fails, which is what is tested here. */
    if (B->check) {
        CHECK(tb_run(B, &r, sink, &got, &sum) == -1 && sum.refused && strcmp(sum.refused, "unsupported") == 0);
        CHECK_EQ_U(got.n, 0);
    }
    tb_backend unchecked = *B;
    unchecked.check = NULL;
    CHECK(tb_run(&unchecked, &r, sink, &got, &sum) == 0);
    fprintf(stderr, "ECDHE over ffdhe2048: %s\n", sum.first_error);
    CHECK_EQ_U(sum.shipped, 2);
    CHECK_EQ_U(sum.failed, 2);
    CHECK(got.last.status == TB_STATUS_SETUP_FAILED || got.last.status == TB_STATUS_HANDSHAKE_FAILED);
    CHECK(got.last.failed_peer != TB_PEER_NONE);
    CHECK(strncmp(sum.first_error, "setup: ", 7) == 0 || strncmp(sum.first_error, "handshake: ", 11) == 0);
    if (TB_TRACE_ENABLED) {
        CHECK(got.nesting_ok); /* phases are closed even on failure */
        CHECK(got.phases >= 2); /* repetition and the phase that failed */
    }
    char err[128];
    tb_transport *t = tb_memory_transport.open(0, err, sizeof err);
    CHECK(t != NULL);
    if (t)
        tb_memory_transport.close(t);
    r = request(s);
    r.repetitions = 1;
    CHECK(tb_run(B, &r, sink, &(seen){.next_index = r.first_index}, &sum) == 0 && sum.failed == 0);
}

/* Thousands of 1-byte records overflow the trace: flagged, counted, nothing breaks. */
static void test_trace_overflow_flagged(void) {
    const tb_suite_info *s = runnable_suite();
    if (!s)
        return;
    tb_run_request r = request(s);
    r.direction = TB_DIRECTION_C2S;
    r.total_bytes = TB_TRACE_CAPACITY;
    r.record_size = 1;
    r.repetitions = 1;
    r.warmup = 0;
    seen got = {.next_index = r.first_index};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &got, &sum) == 0 && sum.failed == 0);
    CHECK_EQ_U(got.last.status, TB_STATUS_OK);
    CHECK_EQ_U(!!(got.last.flags & TB_FLAG_TRACE_OVERFLOW), TB_TRACE_ENABLED);
}

static void test_sink_stops_run(void) {
    const tb_suite_info *s = runnable_suite();
    if (!s)
        return;
    tb_run_request r = request(s);
    r.repetitions = 5;
    seen got = {.next_index = r.first_index, .stop_after = 2};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, sink, &got, &sum) == -1);
    CHECK_EQ_U(got.n, 2);
    CHECK_EQ_U(sum.shipped, 1); /* the second was refused by the sink */
}

/* RESUME: what the shipped repetitions did - how many were OK and how many verified a chain
 * (a resumed handshake verifies none). */
typedef struct resumed {
    uint32_t ok, verified_chain;
} resumed;

static int resume_sink(void *ctx, const tb_rep_result *r, const tb_trace *t) {
    resumed *got = ctx;
    got->ok += r->status == TB_STATUS_OK;
    for (uint32_t i = 0; i < t->count; i++)
        if (t->records[i].label == TB_L_CHAIN_VERIFY && t->records[i].kind == TB_KIND_START) {
            got->verified_chain++;
            break;
        }
    return 0;
}

/* The runner's first connection (unshipped, before the warm-ups) makes the session: every
 * shipped repetition, the first included, resumes. */
static void test_resume_ships_only_resumed_handshakes(void) {
    const tb_suite_info *s = suite_where(0, TB_CREDENTIAL_ECDSA_P256);
    if (!(B->options & TB_OPTION_RESUME) || !s)
        return;
    tb_run_request r = request(s);
    r.options = TB_OPTION_RESUME;
    r.credential = TB_CREDENTIAL_ECDSA_P256;
    r.warmup = 0;
    resumed got = {0};
    tb_run_summary sum;
    CHECK(tb_run(B, &r, resume_sink, &got, &sum) == 0);
    CHECK_EQ_U(sum.shipped, 3);
    CHECK_EQ_U(got.ok, 3);
    CHECK_EQ_U(got.verified_chain, 0);
}

int main(void) {
    char err[256] = "";
    if (B->init(err, sizeof err) != 0) {
        fprintf(stderr, "backend %s failed to start: %s\n", B->name, err);
        return 1;
    }
    RUN_TEST(test_check_rejects);
    RUN_TEST(test_resume_run);
    RUN_TEST(test_unusable_group_refused_once);
    RUN_TEST(test_full_run);
    RUN_TEST(test_short_last_record);
    RUN_TEST(test_failure_cleans_up);
    RUN_TEST(test_trace_overflow_flagged);
    RUN_TEST(test_sink_stops_run);
    RUN_TEST(test_resume_ships_only_resumed_handshakes);
    B->deinit();
    return tb_test_report();
}
