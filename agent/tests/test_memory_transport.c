/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "tb_test.h"
#include "tlsbench/transport.h"
#include "tlsbench/spec_gen.h"

static void test_find(void) {
    CHECK(tb_transport_find(TB_TRANSPORT_MEMORY) == &tb_memory_transport);
    CHECK(tb_transport_find(99) == NULL);
    CHECK(strcmp(tb_memory_transport.name, tb_transport_name(TB_TRANSPORT_MEMORY)) == 0);
}

static void test_ping_pong(void) {
    const tb_transport_ops *ops = &tb_memory_transport;
    char err[128];
    tb_transport *t = ops->open(0, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        return;
    tb_io c = ops->endpoint(t, TB_PEER_CLIENT), s = ops->endpoint(t, TB_PEER_SERVER);
    uint8_t buf[64];
    CHECK(c.recv(c.ctx, buf, sizeof buf) == TB_IO_WOULD_BLOCK);
    CHECK(!ops->pending(t, TB_PEER_SERVER));
    CHECK(c.send(c.ctx, (const uint8_t *)"hello", 5) == 5);
    CHECK(ops->pending(t, TB_PEER_SERVER));
    CHECK(!ops->pending(t, TB_PEER_CLIENT)); /* a peer does not receive its own bytes */
    CHECK(c.recv(c.ctx, buf, sizeof buf) == TB_IO_WOULD_BLOCK);
    CHECK(s.recv(s.ctx, buf, 3) == 3 && memcmp(buf, "hel", 3) == 0);
    CHECK(s.recv(s.ctx, buf, sizeof buf) == 2 && memcmp(buf, "lo", 2) == 0);
    CHECK(s.recv(s.ctx, buf, sizeof buf) == TB_IO_WOULD_BLOCK);
    CHECK(s.send(s.ctx, (const uint8_t *)"abc", 3) == 3);
    CHECK(c.recv(c.ctx, buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0);
    uint64_t c2s = 0, s2c = 0;
    ops->counters(t, &c2s, &s2c);
    CHECK_EQ_U(c2s, 5);
    CHECK_EQ_U(s2c, 3);
    tb_io none = ops->endpoint(t, TB_PEER_NONE);
    CHECK(none.send == NULL && !ops->pending(t, TB_PEER_NONE));
    /* one connection at a time: the queues are static */
    CHECK(ops->open(0, err, sizeof err) == NULL);
    CHECK(strstr(err, "already open") != NULL);
    ops->close(t);
    t = ops->open(0, err, sizeof err);
    CHECK(t != NULL);
    if (!t)
        return;
    ops->counters(t, &c2s, &s2c);
    CHECK(c2s == 0 && s2c == 0); /* a fresh link per repetition */
    ops->close(t);
}

static void test_full_queue_and_compaction(void) {
    const tb_transport_ops *ops = &tb_memory_transport;
    char err[128];
    tb_transport *t = ops->open(0, err, sizeof err);
    if (!t) {
        CHECK(t != NULL);
        return;
    }
    tb_io c = ops->endpoint(t, TB_PEER_CLIENT), s = ops->endpoint(t, TB_PEER_SERVER);
    static uint8_t big[100000], out[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    int n = c.send(c.ctx, big, sizeof big);
    CHECK(n > 16384 + 2048 && n < (int)sizeof big); /* a 16 KiB record fits; the rest is refused */
    CHECK(c.send(c.ctx, big, 1) == TB_IO_WOULD_BLOCK);
    CHECK(s.recv(s.ctx, out, 1000) == 1000);
    /* freed space at the front becomes usable again, bytes stay in order */
    CHECK(c.send(c.ctx, big + n, 1000) == 1000);
    size_t got = 1000;
    for (int r; (r = s.recv(s.ctx, out + got, 4096)) > 0;)
        got += (size_t)r;
    CHECK_EQ_U(got, (size_t)n + 1000);
    CHECK(memcmp(out, big, got) == 0);
    ops->close(t);
}

int main(void) {
    RUN_TEST(test_find);
    RUN_TEST(test_ping_pong);
    RUN_TEST(test_full_queue_and_compaction);
    return tb_test_report();
}
