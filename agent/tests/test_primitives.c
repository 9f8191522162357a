/* SPDX-License-Identifier: Apache-2.0 */
/* The linked backend's primitive experiments (src/primitives/): every one runs setup,
 * three repetitions and teardown at every default size, marks exactly its groups, refuses
 * sizes it does not take, and a corrupted known answer discards the repetition. Generic:
 * built against every backend that lists "primitives" in tb_add_backend_tests. */
#include <string.h>

#include "../src/primitives/common.h" /* not src/backends/common.h */
#include "tb_test.h"
#include "tlsbench/experiment_run.h"
#include "tlsbench/trace.h"

#define ERRLEN 256

static size_t count_primitives(void) {
    size_t n = 0;
    while (tb_library_primitives[n] != NULL)
        n++;
    return n;
}

/* One repetition as the runner makes it: groups armed around the measured block. */
static int measure_once(const tb_experiment *e, void *state, int32_t *group_fault) {
    tb_trace_reset();
    tb_groups_arm(e);
    int rc = e->measure(state);
    *group_fault = tb_groups_disarm();
    return rc;
}

/* START and STOP of group 0, then of group 1..., each once, in time order; nothing else
 * (a primitive calls its library past the backend's crypto wrappers). */
static void check_group_spans(const tb_experiment *e) {
    unsigned n = tb_experiment_group_count(e), seen = 0;
    uint64_t last = 0;
    for (uint32_t i = 0; i < tb_trace_buffer.count; i++) {
        const tb_record *r = &tb_trace_buffer.records[i];
        CHECK_EQ_U(r->label, TB_L_USER_GROUP);
        CHECK(r->kind == (seen % 2 == 0 ? TB_KIND_START : TB_KIND_STOP));
        CHECK_EQ_U(r->value, seen / 2);
        CHECK(r->t_ns >= last);
        last = r->t_ns;
        seen++;
    }
    CHECK_EQ_U(seen, 2 * n);
    CHECK_EQ_U(tb_trace_buffer.dropped, 0);
}

static void run_experiment(const tb_experiment *e, uint32_t size) {
    char err[ERRLEN] = "";
    void *state = NULL;
    int before = tb_test_failures;
    int rc = e->setup(&state, size, err, sizeof err);
    CHECK_EQ_U(rc, 0);
    if (rc == 0) {
        for (int rep = 0; rep < 3; rep++) {
            int32_t fault;
            CHECK_EQ_U(measure_once(e, state, &fault), TB_PRIM_OK);
            CHECK_EQ_U(fault, 0);
            check_group_spans(e);
        }
        if (e->teardown)
            e->teardown(state);
    }
    if (tb_test_failures != before)
        fprintf(stderr, "  in %s, size %u: %s\n", e->name, (unsigned)size, err);
}

static void test_table_is_the_shared_declaration(void) {
    size_t n = count_primitives();
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        const tb_experiment *e = tb_library_primitives[i];
        /* every entry is one of common.c's experiments: same names in every library */
        CHECK(e >= &tb_prim_experiments[0] && e < &tb_prim_experiments[TB_PRIM_COUNT]);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(tb_library_primitives[j]->name, e->name) != 0);
        CHECK(tb_experiment_group_count(e) >= 1);
    }
}

static void test_every_default_size_has_a_known_answer(void) {
    static const tb_prim_id digests[] = {TB_PRIM_SHA256, TB_PRIM_SHA512, TB_PRIM_SHA3_256, TB_PRIM_HMAC_SHA256};
    for (const uint32_t *s = tb_prim_sizes; *s; s++)
        for (size_t d = 0; d < sizeof digests / sizeof digests[0]; d++)
            CHECK(tb_prim_known_digest(digests[d], *s) != NULL);
    CHECK(tb_prim_known_digest(TB_PRIM_SHA256, 1000) == NULL);
    CHECK(tb_prim_known_digest(TB_PRIM_AES128_GCM, 16) == NULL);
}

static void test_every_experiment_at_every_default_size(void) {
    for (size_t i = 0; i < count_primitives(); i++) {
        const tb_experiment *e = tb_library_primitives[i];
        if (e->sizes == NULL) {
            run_experiment(e, 0);
            continue;
        }
        for (const uint32_t *s = e->sizes; *s; s++)
            run_experiment(e, *s);
    }
}

/* Sizes off the default list: odd lengths (CBC pads them) and a digest computed in setup. */
static void test_other_sizes(void) {
    static const uint32_t sizes[] = {1, 17, 1000, TB_PRIM_MAX_SIZE - 1};
    for (size_t i = 0; i < count_primitives(); i++)
        if (tb_library_primitives[i]->sizes != NULL)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                run_experiment(tb_library_primitives[i], sizes[s]);
}

static void test_sizes_not_taken_are_refused(void) {
    for (size_t i = 0; i < count_primitives(); i++) {
        const tb_experiment *e = tb_library_primitives[i];
        const uint32_t bad[] = {e->sizes ? 0 : 16, e->sizes ? TB_PRIM_MAX_SIZE + 1 : 1};
        for (size_t b = 0; b < 2; b++) {
            char err[ERRLEN] = "";
            void *state = NULL;
            CHECK(e->setup(&state, bad[b], err, sizeof err) != 0);
            CHECK(state == NULL);
            CHECK(err[0] != '\0');
        }
    }
}

/* The check that the checks check: a wrong expected answer discards the repetition. */
static void test_corrupted_known_answer_discards(void) {
    for (size_t i = 0; i < count_primitives(); i++) {
        const tb_experiment *e = tb_library_primitives[i];
        char err[ERRLEN] = "";
        void *state = NULL;
        if (e->setup(&state, e->sizes ? e->sizes[0] : 0, err, sizeof err) != 0) {
            CHECK(!"setup failed");
            continue;
        }
        int32_t fault;
        CHECK_EQ_U(measure_once(e, state, &fault), TB_PRIM_OK);
        tb_prim_corrupt_expected(state);
        int rc = measure_once(e, state, &fault);
        CHECK_EQ_U(rc, TB_PRIM_ERR_KAT);
        CHECK_EQ_U(fault, 0); /* groups stay well formed on the failing path */
        if (rc != TB_PRIM_ERR_KAT)
            fprintf(stderr, "  in %s\n", e->name);
        e->teardown(state);
    }
}

int main(void) {
    RUN_TEST(test_table_is_the_shared_declaration);
    RUN_TEST(test_every_default_size_has_a_known_answer);
    RUN_TEST(test_every_experiment_at_every_default_size);
    RUN_TEST(test_other_sizes);
    RUN_TEST(test_sizes_not_taken_are_refused);
    RUN_TEST(test_corrupted_known_answer_discards);
    return tb_test_report();
}
