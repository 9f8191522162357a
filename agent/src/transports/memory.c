/* SPDX-License-Identifier: Apache-2.0 */
/* The in-memory transport: two static byte queues (client->server, server->client) in one
 * thread. Static because one repetition runs at a time and the hot path must not allocate. */
#include <stdio.h>
#include <string.h>

#include "tlsbench/spec_gen.h"
#include "tlsbench/transport.h"

/* A whole flight (certificate chains included) or one 16 KiB record plus its expansion. */
#define TB_MEMQ_SIZE (64u * 1024u)

typedef struct tb_memq {
    uint8_t data[TB_MEMQ_SIZE];
    size_t head; /* next byte to read */
    size_t tail; /* next free byte */
    uint64_t total; /* bytes ever accepted */
} tb_memq;

typedef struct tb_mem_end {
    tb_memq *out;
    tb_memq *in;
} tb_mem_end;

struct tb_transport {
    tb_memq q[2]; /* indexed by the sending peer */
    tb_mem_end ends[2];
    int in_use;
};

static tb_transport tb_mem;

static int tb_mem_send(void *ctx, const uint8_t *buf, size_t len) {
    tb_memq *q = ((tb_mem_end *)ctx)->out;
    if (q->head == q->tail)
        q->head = q->tail = 0;
    if (TB_MEMQ_SIZE - q->tail < len && q->head > 0) { /* compact before giving up space */
        memmove(q->data, q->data + q->head, q->tail - q->head);
        q->tail -= q->head;
        q->head = 0;
    }
    size_t n = TB_MEMQ_SIZE - q->tail < len ? TB_MEMQ_SIZE - q->tail : len;
    if (n == 0)
        return TB_IO_WOULD_BLOCK;
    if (n > INT32_MAX)
        n = INT32_MAX;
    memcpy(q->data + q->tail, buf, n);
    q->tail += n;
    q->total += n;
    return (int)n;
}

static int tb_mem_recv(void *ctx, uint8_t *buf, size_t len) {
    tb_memq *q = ((tb_mem_end *)ctx)->in;
    size_t avail = q->tail - q->head;
    if (avail == 0)
        return TB_IO_WOULD_BLOCK;
    size_t n = avail < len ? avail : len;
    if (n > INT32_MAX)
        n = INT32_MAX;
    memcpy(buf, q->data + q->head, n);
    q->head += n;
    return (int)n;
}

static tb_transport *tb_mem_open(char *err, size_t errlen) {
    if (tb_mem.in_use) {
        snprintf(err, errlen, "the memory transport is already open (one connection at a time)");
        return NULL;
    }
    for (int p = 0; p < 2; p++) {
        tb_mem.q[p].head = tb_mem.q[p].tail = 0;
        tb_mem.q[p].total = 0;
        tb_mem.ends[p] = (tb_mem_end){.out = &tb_mem.q[p], .in = &tb_mem.q[1 - p]};
    }
    tb_mem.in_use = 1;
    return &tb_mem;
}

/* Peers are TB_PEER_CLIENT (0) and TB_PEER_SERVER (1): anything else gets no I/O. */
static tb_io tb_mem_endpoint(tb_transport *t, uint8_t peer) {
    if (peer > TB_PEER_SERVER)
        return (tb_io){0};
    return (tb_io){.send = tb_mem_send, .recv = tb_mem_recv, .ctx = &t->ends[peer]};
}

static int tb_mem_pending(tb_transport *t, uint8_t peer) {
    if (peer > TB_PEER_SERVER)
        return 0;
    const tb_memq *in = t->ends[peer].in;
    return in->tail > in->head;
}

static void tb_mem_counters(tb_transport *t, uint64_t *c2s, uint64_t *s2c) {
    *c2s = t->q[TB_PEER_CLIENT].total;
    *s2c = t->q[TB_PEER_SERVER].total;
}

static void tb_mem_close(tb_transport *t) { t->in_use = 0; }

const tb_transport_ops tb_memory_transport = {
    .name = "memory",
    .open = tb_mem_open,
    .endpoint = tb_mem_endpoint,
    .pending = tb_mem_pending,
    .counters = tb_mem_counters,
    .close = tb_mem_close,
};
