/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port: clocks, stdio/fd channels, and a marker that appends to a file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tlsbench/port.h"

static uint64_t tb_clock_ns(clockid_t id) {
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tb_port_now_ns(void) { return tb_clock_ns(CLOCK_MONOTONIC); }
uint64_t tb_port_cpu_ns(void) { return tb_clock_ns(CLOCK_THREAD_CPUTIME_ID); }
const char *tb_port_clock_name(void) { return "CLOCK_MONOTONIC"; }
const char *tb_port_cpu_clock_name(void) { return "CLOCK_THREAD_CPUTIME_ID"; }

uint64_t tb_port_clock_resolution_ns(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Marker: the posix stand-in for a GPIO. With TLSBENCH_MARKER_FILE set, each toggle appends
 * "t_ns level" so tests (and an analyzer capture simulation) can see the edges. */
static FILE *tb_marker_file;
static int tb_marker_checked;

void tb_port_marker(int level) {
    if (!tb_marker_checked) {
        const char *path = getenv("TLSBENCH_MARKER_FILE");
        tb_marker_file = path && *path ? fopen(path, "a") : NULL;
        tb_marker_checked = 1;
    }
    if (!tb_marker_file)
        return;
    fprintf(tb_marker_file, "%llu %d\n", (unsigned long long)tb_port_now_ns(), level);
    fflush(tb_marker_file);
}

/* ---------------------------------------------------------------- channels */
typedef struct tb_fd_pair {
    int rfd, wfd;
} tb_fd_pair;

static long tb_fd_read(void *ctx, void *buf, size_t len) {
    const tb_fd_pair *p = ctx;
    for (;;) {
        ssize_t n = read(p->rfd, buf, len);
        if (n >= 0)
            return (long)n;
        if (errno != EINTR)
            return -1;
    }
}

static int tb_fd_write(void *ctx, const void *buf, size_t len) {
    const tb_fd_pair *p = ctx;
    const char *b = buf;
    while (len > 0) {
        ssize_t n = write(p->wfd, b, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A channel's ctx must outlive the call: a small static pool, reused per fd pair. */
#define TB_FD_SLOTS 8
static tb_fd_pair tb_fd_slots[TB_FD_SLOTS];
static int tb_fd_used;

tb_channel tb_port_fd_channel(int read_fd, int write_fd) {
    /* A vanished controller must give a write error, not kill the agent mid-repetition. */
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < tb_fd_used; i++)
        if (tb_fd_slots[i].rfd == read_fd && tb_fd_slots[i].wfd == write_fd)
            return (tb_channel){tb_fd_read, tb_fd_write, &tb_fd_slots[i]};
    int slot = tb_fd_used < TB_FD_SLOTS ? tb_fd_used++ : TB_FD_SLOTS - 1;
    tb_fd_slots[slot] = (tb_fd_pair){read_fd, write_fd};
    return (tb_channel){tb_fd_read, tb_fd_write, &tb_fd_slots[slot]};
}

tb_channel tb_port_stdio_channel(void) { return tb_port_fd_channel(STDIN_FILENO, STDOUT_FILENO); }
