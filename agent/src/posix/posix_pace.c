/* SPDX-License-Identifier: Apache-2.0 */
/* The posix side of pacing (tlsbench/pace.h): the table is the file TLSBENCH_PACE names, one
 * row a line, "config_id peer label ns" (peer 0 client, 1 server; label the trace label id),
 * written by the controller before each RUN it paces and read again at every RUN; the hold
 * sleeps on CLOCK_MONOTONIC (tb_port_now_ns's time line) and spins its last 50 µs, so a
 * hold ends within the clock's reading of its deadline rather than a wake-up's latency. */
#define _POSIX_C_SOURCE 200809L
#include "tlsbench/pace.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tlsbench/port.h"

#define TB_PACE_ENV "TLSBENCH_PACE"
#define TB_PACE_SPIN_NS 50000u

static uint32_t tb_pace_file_rows(uint32_t config_id, tb_pace_row *rows, uint32_t max) {
    const char *path = getenv(TB_PACE_ENV);
    FILE *f = path && path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    uint32_t n = 0;
    unsigned long cid, peer, label;
    unsigned long long ns;
    while (n < max && fscanf(f, "%lu %lu %lu %llu", &cid, &peer, &label, &ns) == 4)
        if (cid == config_id)
            rows[n++] = (tb_pace_row){(uint32_t)cid, (uint8_t)peer, (uint16_t)label, (uint64_t)ns};
    fclose(f);
    return n;
}

static void tb_pace_sleep_until(uint64_t deadline_ns) {
    uint64_t now = tb_port_now_ns();
    if (deadline_ns > now + TB_PACE_SPIN_NS) {
        uint64_t ns = deadline_ns - now - TB_PACE_SPIN_NS;
        struct timespec d = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        while (nanosleep(&d, &d) != 0) {
        }
    }
    while (tb_port_now_ns() < deadline_ns) {
    }
}

void tb_posix_pace_install(void) { tb_pace_install(tb_pace_file_rows, tb_pace_sleep_until); }
