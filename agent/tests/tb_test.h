/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal assert-style harness: CHECK records a failure and goes on, so one run shows
 * every broken expectation; main returns tb_test_report(). */
#ifndef TLSBENCH_TB_TEST_H
#define TLSBENCH_TB_TEST_H
#include <stdio.h>

#ifdef TB_TEST_SHARED /* a test program of several files (tests/backend/): one file defines them */
extern int tb_test_failures;
extern int tb_test_checks;
#else
static int tb_test_failures;
static int tb_test_checks;
#endif

#define CHECK(cond)                                                                \
    do {                                                                           \
        tb_test_checks++;                                                          \
        if (!(cond)) {                                                             \
            tb_test_failures++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                          \
    } while (0)

#define CHECK_EQ_U(a, b)                                                                    \
    do {                                                                                    \
        unsigned long long tb_a_ = (unsigned long long)(a), tb_b_ = (unsigned long long)(b); \
        tb_test_checks++;                                                                   \
        if (tb_a_ != tb_b_) {                                                               \
            tb_test_failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", __FILE__,     \
                    __LINE__, #a, #b, tb_a_, tb_b_);                                        \
        }                                                                                   \
    } while (0)

#define RUN_TEST(fn)                          \
    do {                                      \
        int tb_before_ = tb_test_failures;    \
        fn();                                 \
        fprintf(stderr, "%-40s %s\n", #fn,    \
                tb_test_failures == tb_before_ ? "ok" : "FAILED"); \
    } while (0)

static inline int tb_test_report(void) {
    fprintf(stderr, "%d checks, %d failed\n", tb_test_checks, tb_test_failures);
    return tb_test_failures ? 1 : 0;
}

#endif
