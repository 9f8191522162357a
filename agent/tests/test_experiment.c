/* SPDX-License-Identifier: Apache-2.0 */
/* Experiment RUNs against experiments defined here (this file is the user table): the
 * registry and HELLO JSON, the checks, the REP trace shape (REPETITION > MEASURED_BLOCK >
 * USER_GROUPs), discards (a nonzero return, wrong group marks), setup refusal, and that
 * setup/teardown run once. Built twice: traced, and against the compiled-out tracer, where
 * statuses must be the same and only the trace is empty. */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/experiment_run.h"
#include "tlsbench/runner.h"

/* ---------------------------------------------------------------- test experiments */
typedef struct call_log {
    int setups, teardowns, measures;
    uint32_t setup_size;
    int ret; /* what the two-group block returns */
} call_log;
static call_log calls;

static int counted_setup(void **state, uint32_t size, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    calls.setups++;
    calls.setup_size = size;
    *state = &calls;
    return 0;
}

static void counted_teardown(void *state) {
    CHECK(state == &calls);
    calls.teardowns++;
}

static int two_groups(void *state) {
    CHECK(state == &calls);
    calls.measures++;
    tb_group_begin(0);
    tb_group_end(0);
    tb_group_begin(1);
    tb_group_end(1);
    return calls.ret;
}

static int no_groups(void *state) {
    (void)state;
    calls.measures++;
    return 0;
}

static int bad_index(void *state) {
    (void)state;
    tb_group_begin(0);
    tb_group_begin(2); /* two groups: 0 and 1 */
    tb_group_end(2);
    tb_group_end(0);
    return 0;
}

static int left_open(void *state) {
    (void)state;
    tb_group_begin(0);
    tb_group_begin(1);
    return 0;
}

static int crossed(void *state) {
    (void)state;
    tb_group_begin(0);
    tb_group_begin(1);
    tb_group_end(0); /* overlaps instead of nesting */
    tb_group_end(1);
    return 0;
}

static int end_without_begin(void *state) {
    (void)state;
    tb_group_end(1);
    return 0;
}

static int too_deep(void *state) {
    (void)state;
    for (int i = 0; i <= TB_EXPERIMENT_MAX_GROUPS; i++)
        tb_group_begin(0);
    for (int i = 0; i <= TB_EXPERIMENT_MAX_GROUPS; i++)
        tb_group_end(0);
    return 0;
}

/* A failed check inside a group: the block bails out with its code, the group stays open. */
static int bail_inside(void *state) {
    (void)state;
    tb_group_begin(1);
    return -42;
}

static int refusing_setup(void **state, uint32_t size, char *err, size_t errlen) {
    (void)state;
    snprintf(err, errlen, "no accelerator for %u bytes", (unsigned)size);
    calls.setups++;
    return -1;
}

static int many_marks(void *state) {
    (void)state;
    for (int i = 0; i < TB_TRACE_CAPACITY; i++) {
        tb_group_begin(0);
        tb_group_end(0);
    }
    return 0;
}

static const uint32_t sizes[] = {16, 64, 0};

#define EXP(n, m) {.name = n, .description = "test", .groups = {"first", "second"}, .sizes = sizes, .measure = m}
static const tb_experiment e_groups = {.name = "two-groups", .description = "Two groups, \"quoted\"",
                                       .groups = {"first", "second"}, .sizes = sizes, .setup = counted_setup,
                                       .measure = two_groups, .teardown = counted_teardown};
static const tb_experiment e_nosize = {.name = "nosize", .measure = no_groups};
static const tb_experiment e_bad_index = EXP("bad-index", bad_index);
static const tb_experiment e_left_open = EXP("left-open", left_open);
static const tb_experiment e_crossed = EXP("crossed", crossed);
static const tb_experiment e_end_only = EXP("end-only", end_without_begin);
static const tb_experiment e_too_deep = EXP("too-deep", too_deep);
static const tb_experiment e_bail = EXP("bail-inside", bail_inside);
static const tb_experiment e_refuse = {.name = "refuse", .groups = {"g"}, .sizes = sizes,
                                       .setup = refusing_setup, .measure = no_groups,
                                       .teardown = counted_teardown};
static const tb_experiment e_no_block = {.name = "no-block"};
static const tb_experiment e_many = {.name = "many", .groups = {"g"}, .measure = many_marks};

/* Ids follow this order (this test links no primitives): two-groups is 1. */
const tb_experiment *const tb_user_experiments[] = {
    &e_groups, &e_nosize, &e_bad_index, &e_left_open, &e_crossed, &e_end_only,
    &e_too_deep, &e_bail, &e_refuse, &e_no_block, &e_many, NULL,
};
enum { ID_GROUPS = 1, ID_NOSIZE, ID_BAD_INDEX, ID_LEFT_OPEN, ID_CROSSED, ID_END_ONLY,
       ID_TOO_DEEP, ID_BAIL, ID_REFUSE, ID_NO_BLOCK, ID_MANY, N_EXPERIMENTS = ID_MANY };

/* ---------------------------------------------------------------- helpers */
#define MAX_SEEN 8
#define MAX_RECORDS 64

typedef struct seen {
    uint32_t n;
    tb_rep_result rep[MAX_SEEN];
    tb_record rec[MAX_SEEN][MAX_RECORDS];
    uint32_t count[MAX_SEEN];
    uint32_t waits; /* repetitions whose trace ended with a RUNQUEUE_WAIT instant (not in rec) */
} seen;

/* Keeps each repetition's records but the run-queue wait the runner records after the
 * REPETITION span where the port can tell (checked in test_runqueue_wait_recorded). */
static int sink(void *ctx, const tb_rep_result *r, const tb_trace *t) {
    seen *s = ctx;
    uint32_t count = t->count;
    if (count && t->records[count - 1].label == TB_L_RUNQUEUE_WAIT && t->records[count - 1].kind == TB_KIND_INSTANT) {
        count--;
        s->waits++;
    }
    if (s->n < MAX_SEEN) {
        s->rep[s->n] = *r;
        s->count[s->n] = count < MAX_RECORDS ? count : MAX_RECORDS;
        memcpy(s->rec[s->n], t->records, s->count[s->n] * sizeof(tb_record));
    }
    s->n++;
    return 0;
}

static tb_run_request request(unsigned id, uint32_t size) {
    return (tb_run_request){.config_id = 9, .experiment = (uint16_t)id, .direction = TB_DIRECTION_NONE,
                            .transport = TB_TRANSPORT_MEMORY, .repetitions = 3, .warmup = 2,
                            .total_bytes = size, .record_size = 1, .first_index = 50};
}

/* Runs one repetition of experiment `id` at `size` and returns what the sink saw. */
static seen run_one(unsigned id, uint32_t size) {
    seen got = {0};
    tb_run_request r = request(id, size);
    r.repetitions = 1;
    r.warmup = 0;
    tb_run_summary sum;
    CHECK(tb_run(NULL, &r, sink, &got, &sum) == 0);
    CHECK_EQ_U(got.n, 1);
    return got;
}

/* Every START has its STOP in order: the discarded repetitions' traces stay well formed. */
static int well_formed(const tb_record *rec, uint32_t n) {
    uint16_t stack[MAX_RECORDS];
    uint32_t depth = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (rec[i].kind == TB_KIND_START)
            stack[depth++] = rec[i].label;
        else if (rec[i].kind == TB_KIND_STOP && (depth == 0 || stack[--depth] != rec[i].label))
            return 0;
        if (rec[i].peer != TB_PEER_NONE)
            return 0;
    }
    return depth == 0;
}

/* ---------------------------------------------------------------- tests */
static void test_registry(void) {
    CHECK_EQ_U(tb_experiment_count(), N_EXPERIMENTS);
    CHECK(tb_experiment_get(0) == NULL);
    CHECK(tb_experiment_get(N_EXPERIMENTS + 1) == NULL);
    CHECK(tb_experiment_get(ID_GROUPS) == &e_groups);
    CHECK(strcmp(tb_experiment_source(ID_GROUPS), "user") == 0);
    CHECK(tb_experiment_source(0) == NULL);
    CHECK_EQ_U(tb_experiment_find("nosize"), ID_NOSIZE);
    CHECK_EQ_U(tb_experiment_find("nope"), 0);
    CHECK_EQ_U(tb_experiment_group_count(&e_groups), 2);
    CHECK_EQ_U(tb_experiment_group_count(&e_nosize), 0);
    CHECK_EQ_U(tb_experiment_max_size(&e_groups), 64);
    CHECK_EQ_U(tb_experiment_max_size(&e_nosize), 0);
}

static void test_hello_json(void) {
    char buf[4096];
    tb_json j;
    tb_json_init(&j, buf, sizeof buf);
    tb_experiments_json(&j);
    CHECK(!j.overflow);
    static const char first_two[] =
        "[{\"id\":1,\"name\":\"two-groups\",\"description\":\"Two groups, \\\"quoted\\\"\","
        "\"groups\":[\"first\",\"second\"],\"sizes\":[16,64],\"source\":\"user\"},"
        "{\"id\":2,\"name\":\"nosize\",\"description\":\"\",\"groups\":[],\"sizes\":[],\"source\":\"user\"},";
    CHECK(strncmp(buf, first_two, sizeof first_two - 1) == 0);
    if (strncmp(buf, first_two, sizeof first_two - 1) != 0)
        fprintf(stderr, "  got %.300s\n", buf);
    CHECK(strstr(buf, "\"id\":10,\"name\":\"no-block\"") != NULL);
    CHECK(buf[j.len - 1] == ']');
}

static void test_check_rejects(void) {
    const char *code = "";
    char err[256];
    static const struct {
        unsigned id;
        uint32_t size;
        const char *code;
        const char *says;
    } cases[] = {
        {N_EXPERIMENTS + 1, 16, "unsupported", "valid ids are 1 .. 11"},
        {999, 16, "unsupported", "experiment 999 is not in this agent"},
        {ID_GROUPS, 0, "unsupported", "size 0 is not in 1 .. 64"},
        {ID_GROUPS, 65, "unsupported", "size 65 is not in 1 .. 64"},
        {ID_NOSIZE, 1, "unsupported", "takes no size"},
        {ID_NO_BLOCK, 16, "unsupported", "no measured block"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_run_request r = request(cases[i].id, cases[i].size);
        err[0] = '\0';
        CHECK(tb_run_check(NULL, &r, &code, err, sizeof err) == -1);
        CHECK(strcmp(code, cases[i].code) == 0);
        CHECK(strstr(err, cases[i].says) != NULL);
        if (!strstr(err, cases[i].says))
            fprintf(stderr, "  case %zu: %s\n", i, err);
    }
    /* accepted: any size from 1 to the largest listed; no size for an experiment without sizes */
    static const struct {
        unsigned id;
        uint32_t size;
    } ok[] = {{ID_GROUPS, 1}, {ID_GROUPS, 17}, {ID_GROUPS, 64}, {ID_NOSIZE, 0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tb_run_request r = request(ok[i].id, ok[i].size);
        CHECK(tb_run_check(NULL, &r, &code, err, sizeof err) == 0);
    }
    /* tb_run refuses an unchecked request instead of running it */
    tb_run_request r = request(ID_GROUPS, 65);
    seen got = {0};
    tb_run_summary sum;
    CHECK(tb_run(NULL, &r, sink, &got, &sum) == -1);
    CHECK(sum.refused && strcmp(sum.refused, "unsupported") == 0 && got.n == 0);
}

/* Setup once (with the RUN's size), warm-up and shipped repetitions, teardown once. */
static void test_run_lifecycle(void) {
    calls = (call_log){0};
    tb_run_request r = request(ID_GROUPS, 17);
    seen got = {0};
    tb_run_summary sum;
    CHECK(tb_run(NULL, &r, sink, &got, &sum) == 0);
    CHECK_EQ_U(calls.setups, 1);
    CHECK_EQ_U(calls.setup_size, 17);
    CHECK_EQ_U(calls.teardowns, 1);
    CHECK_EQ_U(calls.measures, 5); /* 2 warm-up + 3 shipped */
    CHECK_EQ_U(sum.shipped, 3);
    CHECK_EQ_U(sum.failed, 0);
    CHECK(sum.refused == NULL);
    CHECK_EQ_U(got.n, 3);
    for (uint32_t i = 0; i < got.n && i < MAX_SEEN; i++) {
        const tb_rep_result *p = &got.rep[i];
        CHECK_EQ_U(p->index, 50 + i);
        CHECK_EQ_U(p->config_id, 9);
        CHECK_EQ_U(p->status, TB_STATUS_OK);
        CHECK_EQ_U(p->flags, 0);
        CHECK_EQ_U(p->error_code, 0);
        CHECK_EQ_U(p->failed_peer, TB_PEER_NONE);
        CHECK_EQ_U(p->role, TB_ROLE_BOTH);
        CHECK(p->bytes_c2s == 0 && p->bytes_s2c == 0 && p->packets_c2s == 0);
        CHECK(p->repetition_wall_ns >= p->handshake_wall_ns); /* the block's time: tracing or not */
    }
}

/* The shape: REPETITION > MEASURED_BLOCK > USER_GROUP 0, USER_GROUP 1, all peer NONE. */
static void test_trace_shape(void) {
    calls = (call_log){0};
    seen got = run_one(ID_GROUPS, 16);
    if (!TB_TRACE_ENABLED) {
        CHECK_EQ_U(got.count[0], 0);
        return;
    }
    static const struct {
        uint16_t label;
        uint8_t kind;
        uint64_t value;
    } want[] = {
        {TB_L_REPETITION, TB_KIND_START, 0},    {TB_L_MEASURED_BLOCK, TB_KIND_START, 0},
        {TB_L_USER_GROUP, TB_KIND_START, 0},    {TB_L_USER_GROUP, TB_KIND_STOP, 0},
        {TB_L_USER_GROUP, TB_KIND_START, 1},    {TB_L_USER_GROUP, TB_KIND_STOP, 1},
        {TB_L_MEASURED_BLOCK, TB_KIND_STOP, 0}, {TB_L_REPETITION, TB_KIND_STOP, TB_STATUS_OK},
    };
    CHECK_EQ_U(got.count[0], sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0] && i < got.count[0]; i++) {
        const tb_record *r = &got.rec[0][i];
        CHECK_EQ_U(r->label, want[i].label);
        CHECK_EQ_U(r->kind, want[i].kind);
        CHECK_EQ_U(r->value, want[i].value);
        CHECK_EQ_U(r->peer, TB_PEER_NONE);
        CHECK_EQ_U(r->seq, i);
        CHECK(i == 0 || r->t_ns >= got.rec[0][i - 1].t_ns);
        /* CPU time on the REPETITION phase only */
        CHECK((r->cpu_ns != 0) == (r->label == TB_L_REPETITION));
    }
}

/* A nonzero return discards the repetition: shipped, status DISCARDED, error = the code;
 * the MEASURED_BLOCK STOP carries it too. */
static void test_nonzero_return_discards(void) {
    calls = (call_log){.ret = 3};
    tb_run_request r = request(ID_GROUPS, 16);
    seen got = {0};
    tb_run_summary sum;
    CHECK(tb_run(NULL, &r, sink, &got, &sum) == 0);
    calls.ret = 0;
    CHECK_EQ_U(sum.shipped, 3);
    CHECK_EQ_U(sum.failed, 3);
    CHECK(strstr(sum.first_error, "two-groups: the measured block returned 3") != NULL);
    CHECK_EQ_U(got.rep[0].status, TB_STATUS_DISCARDED);
    CHECK_EQ_U(got.rep[0].error_code, 3);
    if (TB_TRACE_ENABLED && got.count[0] == 8) {
        CHECK_EQ_U(got.rec[0][6].label, TB_L_MEASURED_BLOCK);
        CHECK_EQ_U(got.rec[0][6].value, 3);
        CHECK_EQ_U(got.rec[0][7].value, TB_STATUS_DISCARDED);
    }
}

/* Wrong marks never crash and never leave a malformed span: discarded with a harness code;
 * a block's own nonzero code wins over the marks it left open. */
static void test_bad_group_marks(void) {
    static const struct {
        unsigned id;
        int32_t error;
        uint32_t group_spans; /* USER_GROUP STARTs in the trace */
    } cases[] = {
        {ID_BAD_INDEX, TB_DISCARD_GROUP_INDEX, 1}, {ID_LEFT_OPEN, TB_DISCARD_GROUP_OPEN, 2},
        {ID_CROSSED, TB_DISCARD_GROUP_ORDER, 2},   {ID_END_ONLY, TB_DISCARD_GROUP_ORDER, 0},
        {ID_TOO_DEEP, TB_DISCARD_GROUP_DEPTH, TB_EXPERIMENT_MAX_GROUPS},
        {ID_BAIL, -42, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        seen got = run_one(cases[i].id, 16);
        CHECK_EQ_U(got.rep[0].status, TB_STATUS_DISCARDED);
        CHECK_EQ_U((uint32_t)got.rep[0].error_code, (uint32_t)cases[i].error);
        if (!TB_TRACE_ENABLED)
            continue;
        CHECK(well_formed(got.rec[0], got.count[0]));
        uint32_t starts = 0;
        for (uint32_t k = 0; k < got.count[0]; k++)
            starts += got.rec[0][k].label == TB_L_USER_GROUP && got.rec[0][k].kind == TB_KIND_START;
        CHECK_EQ_U(starts, cases[i].group_spans);
        if (starts != cases[i].group_spans || (uint32_t)got.rep[0].error_code != (uint32_t)cases[i].error)
            fprintf(stderr, "  case %zu (%s)\n", i, tb_experiment_get(cases[i].id)->name);
    }
    /* the marks are re-armed per repetition: a good run right after is OK */
    seen after = run_one(ID_GROUPS, 16);
    CHECK_EQ_U(after.rep[0].status, TB_STATUS_OK);
}

/* Marks outside a measured block (setup, or no RUN at all) are ignored, never recorded. */
static void test_marks_outside_block(void) {
    tb_trace_reset();
    tb_group_begin(0);
    tb_group_end(0);
    CHECK_EQ_U(tb_trace_buffer.count, 0);
}

/* A failing setup refuses the RUN with its message; nothing is shipped, nothing torn down. */
static void test_setup_refused(void) {
    calls = (call_log){0};
    tb_run_request r = request(ID_REFUSE, 40);
    seen got = {0};
    tb_run_summary sum;
    const char *code;
    char err[128];
    CHECK(tb_run_check(NULL, &r, &code, err, sizeof err) == 0); /* the check does not run setup */
    CHECK(tb_run(NULL, &r, sink, &got, &sum) == -1);
    CHECK(sum.refused && strcmp(sum.refused, "unsupported") == 0);
    CHECK(strstr(sum.first_error, "refuse") && strstr(sum.first_error, "no accelerator for 40 bytes"));
    CHECK_EQ_U(got.n, 0);
    CHECK_EQ_U(sum.shipped, 0);
    CHECK_EQ_U(calls.setups, 1);
    CHECK_EQ_U(calls.teardowns, 0);
}

/* After each repetition's span, its run-queue wait: where the port can tell and tracing is on. */
static void test_runqueue_wait_recorded(void) {
    uint64_t ns;
    seen got = run_one(ID_GROUPS, 16);
    CHECK_EQ_U(got.waits, TB_TRACE_ENABLED && tb_port_runqueue_wait_ns(&ns) == 0 ? got.n : 0);
}

/* An experiment without setup or sizes runs with a NULL state and size 0. */
static void test_minimal_experiment(void) {
    seen got = run_one(ID_NOSIZE, 0);
    CHECK_EQ_U(got.rep[0].status, TB_STATUS_OK);
    if (TB_TRACE_ENABLED)
        CHECK_EQ_U(got.count[0], 4); /* REPETITION and MEASURED_BLOCK, START and STOP */
}

/* Marks beyond the trace's capacity: flagged TRACE_OVERFLOW as usual, status untouched. */
static void test_overflow_flagged(void) {
    seen got = run_one(ID_MANY, 0);
    CHECK_EQ_U(got.rep[0].status, TB_STATUS_OK);
    CHECK_EQ_U(!!(got.rep[0].flags & TB_FLAG_TRACE_OVERFLOW), TB_TRACE_ENABLED);
}

int main(void) {
    RUN_TEST(test_registry);
    RUN_TEST(test_hello_json);
    RUN_TEST(test_check_rejects);
    RUN_TEST(test_run_lifecycle);
    RUN_TEST(test_trace_shape);
    RUN_TEST(test_nonzero_return_discards);
    RUN_TEST(test_bad_group_marks);
    RUN_TEST(test_marks_outside_block);
    RUN_TEST(test_setup_refused);
    RUN_TEST(test_minimal_experiment);
    RUN_TEST(test_runqueue_wait_recorded);
    RUN_TEST(test_overflow_flagged);
    return tb_test_report();
}
