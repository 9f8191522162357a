/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port's clocks: the monotonic clock (a converted counter or CLOCK_MONOTONIC, as
 * HELLO says) stays on CLOCK_MONOTONIC's time line, never goes back, and its check after a
 * RUN agrees; the run-queue wait can be read and only grows. */
#include <string.h>
#include <time.h>

#include "tb_test.h"
#include "tlsbench/port.h"

static uint64_t tb_monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reads between two CLOCK_MONOTONIC reads lie between them, within the conversion's error
 * (a few ppm of the time since calibration: ns here), whatever the machine's load. */
static void test_on_the_monotonic_time_line(void) {
    const uint64_t slack_ns = 100000;
    for (int i = 0; i < 1000; i++) {
        uint64_t before = tb_monotonic(), now = tb_port_now_ns(), after = tb_monotonic();
        CHECK(now + slack_ns >= before);
        CHECK(now <= after + slack_ns);
    }
}

static void test_never_goes_back(void) {
    uint64_t last = tb_port_now_ns();
    int back = 0;
    for (int i = 0; i < 1000000; i++) {
        uint64_t now = tb_port_now_ns();
        back += now < last;
        last = now;
    }
    CHECK_EQ_U(back, 0);
}

static void test_calibration_says_what_is_read(void) {
    tb_port_clock_info c = tb_port_clock_calibration();
    CHECK(c.counter && c.reference && c.fallback);
    if (c.counter_hz > 0) { /* counting: the counter is the source, measured over the window */
        CHECK(strcmp(tb_port_clock_name(), c.counter) == 0);
        CHECK(strcmp(c.reference, "CLOCK_MONOTONIC") == 0);
        CHECK(c.window_ns >= 10000000u);
        CHECK(c.fallback[0] == '\0');
    } else {
        CHECK(strcmp(tb_port_clock_name(), "CLOCK_MONOTONIC") == 0);
        CHECK(c.counter[0] == '\0' || c.fallback[0] != '\0'); /* a counter not used says why */
    }
}

static void test_check_after_a_run_agrees(void) {
    struct timespec pause = {0, 150000000};
    nanosleep(&pause, NULL);
    double drift = tb_port_clock_check();
    CHECK(drift > -1000.0 && drift < 1000.0);
    CHECK(tb_port_clock_calibration().drift_ppm == drift);
    test_on_the_monotonic_time_line(); /* re-anchored, still on the time line */
}

static void test_runqueue_wait_only_grows(void) {
    uint64_t a = 0, b = 0;
    if (tb_port_runqueue_wait_ns(&a) != 0)
        return; /* a kernel without schedstat: the agent records no wait */
    for (volatile int i = 0; i < 1000000; i++)
        ;
    CHECK(tb_port_runqueue_wait_ns(&b) == 0);
    CHECK(b >= a);
}

int main(void) {
    RUN_TEST(test_on_the_monotonic_time_line);
    RUN_TEST(test_never_goes_back);
    RUN_TEST(test_calibration_says_what_is_read);
    RUN_TEST(test_check_after_a_run_agrees);
    RUN_TEST(test_runqueue_wait_only_grows);
    return tb_test_report();
}
