/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port: the CPU clock and run-queue wait, the stdin/stdout channel, a marker that
 * appends to a file, the system's entropy. The monotonic clock: posix_clock.c; memory probes:
 * posix_memory.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tlsbench/port.h"

static uint64_t tb_clock_ns(clockid_t id) {
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* tb_port_now_ns, its unit and calibration: posix_clock.c. Counting instructions, the CPU
 * clock is the count too (one thread; under valgrind the thread's CPU time means nothing). */
int tb_posix_counting_instructions(void);
uint64_t tb_port_cpu_ns(void) {
    return tb_posix_counting_instructions() ? tb_port_now_ns() : tb_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
const char *tb_port_cpu_clock_name(void) {
    return tb_posix_counting_instructions() ? "tbcount" : "CLOCK_THREAD_CPUTIME_ID";
}

/* Run-queue wait: the second field of the thread's schedstat ("run wait timeslices", ns),
 * read with one pread of a file opened once (the agent measures on one thread). */
static int tb_schedstat_fd = -2; /* -2: not opened yet, -1: not available */

int tb_port_runqueue_wait_ns(uint64_t *ns) {
    if (tb_posix_counting_instructions())
        return -1; /* ns are not in the counter's unit, and under valgrind they mean nothing */
    if (tb_schedstat_fd == -2)
        tb_schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    char buf[96];
    ssize_t n = tb_schedstat_fd >= 0 ? pread(tb_schedstat_fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    unsigned long long run, wait;
    if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
        return -1;
    *ns = (uint64_t)wait;
    return 0;
}

/* Marker: the posix stand-in for a GPIO. With TLSBENCH_MARKER_FILE set, every edge is written
 * to that file as "t_ns level", so tests (and an analyzer capture simulation) can see them.
 * The marker is toggled inside the measured REPETITION span, so an edge costs what a pin write
 * would: a clock read into memory prepared at start-up (a constructor, so the first edge does
 * not pay for getenv or page faults). The file is written when the agent exits (or when the
 * buffer is full); an agent killed by a signal leaves its last edges unwritten. */
enum { TB_MARKER_EDGES = 1 << 16 };
static struct {
    uint64_t t_ns;
    int level;
} tb_marker_edges[TB_MARKER_EDGES];
static size_t tb_marker_count;
static const char *tb_marker_path;

static void tb_marker_flush(void) {
    FILE *f = tb_marker_count ? fopen(tb_marker_path, "a") : NULL;
    if (!f)
        return;
    for (size_t i = 0; i < tb_marker_count; i++)
        fprintf(f, "%llu %d\n", (unsigned long long)tb_marker_edges[i].t_ns, tb_marker_edges[i].level);
    fclose(f);
    tb_marker_count = 0;
}

__attribute__((constructor)) static void tb_marker_init(void) {
    const char *path = getenv("TLSBENCH_MARKER_FILE");
    if (!path || !*path)
        return;
    tb_marker_path = path;
    memset(tb_marker_edges, 0, sizeof tb_marker_edges); /* fault the pages in now, not in a span */
    atexit(tb_marker_flush);
}

int tb_port_marker_enabled(void) { return tb_marker_path != NULL; }

void tb_port_marker(int level) {
    if (!tb_marker_path)
        return;
    if (tb_marker_count == TB_MARKER_EDGES)
        tb_marker_flush();
    tb_marker_edges[tb_marker_count].t_ns = tb_port_now_ns();
    tb_marker_edges[tb_marker_count++].level = level;
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

/* The process's stdin/stdout. */
static const tb_fd_pair tb_stdio = {STDIN_FILENO, STDOUT_FILENO};

tb_channel tb_port_controller_channel(void) {
    /* A vanished controller must give a write error, not kill the agent mid-repetition. */
    signal(SIGPIPE, SIG_IGN);
    return (tb_channel){tb_fd_read, tb_fd_write, (void *)&tb_stdio};
}

/* ---------------------------------------------------------------- entropy, memory */
int tb_port_entropy(uint8_t *buf, size_t len) {
    for (size_t done = 0; done < len;) { /* getentropy() takes at most 256 bytes a call */
        size_t n = len - done < 256 ? len - done : 256;
        if (getentropy(buf + done, n) != 0)
            return -1;
        done += n;
    }
    return 0;
}

/* A process's heap is the C library's and the kernel's: nothing to count here. */
