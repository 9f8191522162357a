/* SPDX-License-Identifier: Apache-2.0 */
/* The in-memory transport: two static byte queues (client->server, server->client) in one
 * thread. Static because one repetition runs at a time and the hot path must not allocate.
 * Datagram mode (DTLS): each send is one datagram and each receive returns at most one
 * whole datagram (the rest of a datagram larger than the buffer is dropped, as UDP does),
 * because DTLS relies on record boundaries that a byte stream would merge. */
#include <stdio.h>
#include <string.h>

#include "tlsbench/spec_gen.h"
#include "tlsbench/transport.h"

/* Bytes per direction: a whole flight (certificate chains included) or one record plus its
 * expansion. The host keeps 64 KiB; a device build sizes it to its library's largest record
 * (a 16 KiB record needs ~17 KiB), since both queues live in its RAM. */
#ifndef TB_MEMQ_SIZE
#define TB_MEMQ_SIZE (64u * 1024u)
#endif
/* Datagrams in flight per direction: a DTLS flight is a few dozen. */
#ifndef TB_MEMQ_DATAGRAMS
#define TB_MEMQ_DATAGRAMS 256u
#endif

typedef struct tb_memq {
    uint8_t data[TB_MEMQ_SIZE];
    size_t head; /* next byte to read */
    size_t tail; /* next free byte */
    uint64_t total; /* bytes ever accepted */
    uint32_t sends; /* send calls that moved bytes (datagrams in datagram mode) */
    uint32_t dg_len[TB_MEMQ_DATAGRAMS]; /* datagram mode: lengths, a ring */
    uint32_t dg_head, dg_count;
} tb_memq;

typedef struct tb_mem_end {
    tb_memq *out;
    tb_memq *in;
} tb_mem_end;

struct tb_transport {
    tb_memq q[2]; /* indexed by the sending peer */
    tb_mem_end ends[2];
    int in_use;
    int datagram; /* set by prepare() for a DTLS run */
};

static tb_transport tb_mem;

static int tb_mem_send_stream(tb_memq *q, const uint8_t *buf, size_t len);

/* A datagram is accepted whole or not at all. */
static int tb_mem_send_datagram(tb_memq *q, const uint8_t *buf, size_t len) {
    if (q->dg_count == TB_MEMQ_DATAGRAMS || len > TB_MEMQ_SIZE - (q->tail - q->head))
        return TB_IO_WOULD_BLOCK;
    int n = tb_mem_send_stream(q, buf, len);
    if (n > 0)
        q->dg_len[(q->dg_head + q->dg_count++) % TB_MEMQ_DATAGRAMS] = (uint32_t)n;
    return n;
}

static int tb_mem_send(void *ctx, const uint8_t *buf, size_t len) {
    tb_memq *q = ((tb_mem_end *)ctx)->out;
    return tb_mem.datagram ? tb_mem_send_datagram(q, buf, len) : tb_mem_send_stream(q, buf, len);
}

static int tb_mem_send_stream(tb_memq *q, const uint8_t *buf, size_t len) {
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
    q->sends++;
    return (int)n;
}

static int tb_mem_recv_datagram(tb_memq *q, uint8_t *buf, size_t len) {
    if (q->dg_count == 0)
        return TB_IO_WOULD_BLOCK;
    size_t d = q->dg_len[q->dg_head];
    size_t n = d < len ? d : len;
    memcpy(buf, q->data + q->head, n);
    q->head += d; /* a truncated datagram's rest is gone, as with UDP */
    q->dg_head = (q->dg_head + 1) % TB_MEMQ_DATAGRAMS;
    q->dg_count--;
    return (int)n;
}

static int tb_mem_recv(void *ctx, uint8_t *buf, size_t len) {
    tb_memq *q = ((tb_mem_end *)ctx)->in;
    if (tb_mem.datagram)
        return tb_mem_recv_datagram(q, buf, len);
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

static tb_transport *tb_mem_open(uint32_t conn, char *err, size_t errlen) {
    (void)conn; /* one process, no wire: nothing to name */
    if (tb_mem.in_use) {
        snprintf(err, errlen, "the memory transport is already open (one connection at a time)");
        return NULL;
    }
    for (int p = 0; p < 2; p++) {
        tb_mem.q[p].head = tb_mem.q[p].tail = 0;
        tb_mem.q[p].total = 0;
        tb_mem.q[p].sends = 0;
        tb_mem.q[p].dg_head = tb_mem.q[p].dg_count = 0;
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

static void tb_mem_stats(tb_transport *t, tb_link_counters *out) {
    *out = (tb_link_counters){
        .bytes = {t->q[TB_PEER_CLIENT].total, t->q[TB_PEER_SERVER].total},
        .packets = {t->q[TB_PEER_CLIENT].sends, t->q[TB_PEER_SERVER].sends},
    };
}

/* Both peers run in this thread: waiting cannot make bytes appear, only report them. */
static int tb_mem_wait(tb_transport *t, uint8_t peer, uint32_t timeout_ms) {
    (void)timeout_ms;
    return tb_mem_pending(t, peer) ? TB_WAIT_READY : TB_WAIT_TIMEOUT;
}

/* A fixed id: both peers share this process, a DTLS cookie only needs something stable. */
static size_t tb_mem_peer_id(tb_transport *t, uint8_t *buf, size_t cap) {
    (void)t;
    static const uint8_t id[] = {'m', 'e', 'm', 'o', 'r', 'y'};
    size_t n = cap < sizeof id ? cap : sizeof id;
    memcpy(buf, id, n);
    return n;
}

static int tb_mem_prepare(const tb_link_params *p, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    tb_mem.datagram = p->datagram != 0;
    return 0;
}

static void tb_mem_release(void) { tb_mem.datagram = 0; }

static const char *tb_mem_where(void) { return ""; }

static void tb_mem_close(tb_transport *t) { t->in_use = 0; }

const tb_transport_ops tb_memory_transport = {
    .name = "memory",
    .prepare = tb_mem_prepare,
    .release = tb_mem_release,
    .open = tb_mem_open,
    .endpoint = tb_mem_endpoint,
    .pending = tb_mem_pending,
    .counters = tb_mem_counters,
    .stats = tb_mem_stats,
    .wait = tb_mem_wait,
    .peer_id = tb_mem_peer_id,
    .where = tb_mem_where,
    .close = tb_mem_close,
};
