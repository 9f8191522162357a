/* SPDX-License-Identifier: Apache-2.0 */
/* What the raw handshake loops share (bench/raw/raw_<library>.c): options, a clock, two
 * in-memory pipes between the peers, and the report line. No tracer, no tlsbench code: the
 * reference a controller sweep is compared with (bench/quiet_controller.py). */
#ifndef TLSBENCH_RAW_H
#define TLSBENCH_RAW_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct raw_options {
    const char *suite;  /* the library's own name of the suite */
    const char *group;  /* the library's own name of the group ("" = none: PSK) */
    const char *creds;  /* folder with server.crt, server.key, ca.crt ("" = PSK) */
    int tls13;
    long reps, warmup;
} raw_options;

static raw_options raw_parse(int argc, char **argv) {
    raw_options o = {"", "", "", 0, 1000, 10};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--suite")) o.suite = argv[i + 1];
        else if (!strcmp(argv[i], "--group")) o.group = argv[i + 1];
        else if (!strcmp(argv[i], "--creds")) o.creds = argv[i + 1];
        else if (!strcmp(argv[i], "--tls13")) o.tls13 = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) o.reps = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) o.warmup = atol(argv[i + 1]);
    }
    return o;
}

static uint64_t raw_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One direction between the peers: bytes written and not yet read. */
typedef struct raw_pipe {
    unsigned char buf[1 << 17];
    size_t head, tail;
} raw_pipe;

static int raw_pipe_write(raw_pipe *p, const unsigned char *b, size_t n) {
    if (p->head == p->tail)
        p->head = p->tail = 0;
    if (n > sizeof p->buf - p->tail)
        return -1;
    memcpy(p->buf + p->tail, b, n);
    p->tail += n;
    return (int)n;
}

static int raw_pipe_read(raw_pipe *p, unsigned char *b, size_t n) {
    size_t have = p->tail - p->head;
    if (have == 0)
        return 0; /* nothing: the caller says "would block" */
    if (n > have)
        n = have;
    memcpy(b, p->buf + p->head, n);
    p->head += n;
    return (int)n;
}

/* handshakes/s over the timed handshakes (each: new sessions, handshake, close_notify both
 * ways, sessions freed), and the median handshake, as one line of JSON. */
static void raw_report(long reps, uint64_t loop_ns, uint64_t *handshake_ns) {
    for (long i = 1; i < reps; i++) /* insertion sort: a few thousand values */
        for (long j = i; j > 0 && handshake_ns[j - 1] > handshake_ns[j]; j--) {
            uint64_t t = handshake_ns[j];
            handshake_ns[j] = handshake_ns[j - 1];
            handshake_ns[j - 1] = t;
        }
    printf("{\"handshakes\": %ld, \"seconds\": %.6f, \"per_s\": %.2f, \"median_handshake_ns\": %llu}\n", reps,
           loop_ns / 1e9, reps / (loop_ns / 1e9), (unsigned long long)handshake_ns[reps / 2]);
}

/* Times `reps` calls of `once` after `warmup` untimed ones and prints the report line. */
typedef uint64_t (*raw_once_fn)(void *ctx); /* one repetition; returns its handshake's ns */

static int raw_loop(const raw_options *o, raw_once_fn once, void *ctx) {
    uint64_t *hs = calloc((size_t)o->reps, sizeof *hs);
    for (long i = 0; i < o->warmup; i++)
        once(ctx);
    uint64_t t0 = raw_now_ns();
    for (long i = 0; i < o->reps; i++)
        hs[i] = once(ctx);
    raw_report(o->reps, raw_now_ns() - t0, hs);
    free(hs);
    return 0;
}

#endif
