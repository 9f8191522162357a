/* SPDX-License-Identifier: Apache-2.0 */
/* The pure parts of tlsbench-link, no root needed: the PRNG against its reference vector,
 * the fragment rule (exact example and 1-(1-p)^k over many draws), serialization and the
 * tail-drop queue, delay/jitter/reorder, determinism, MTU, parameters and presets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "link.h"
#include "tb_test.h"

#define MS UINT64_C(1000000)

static void test_splitmix_reference(void) {
    /* Outputs of Vigna's splitmix64.c seeded with 1234567 (also checked with an
     * independent Python implementation). */
    static const uint64_t want[] = {UINT64_C(6457827717110365317), UINT64_C(3203168211198807973),
                                    UINT64_C(9817491932198370423), UINT64_C(4593380528125082431),
                                    UINT64_C(16408922859458223821)};
    uint64_t s = 1234567;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_EQ_U(tb_splitmix64_next(&s), want[i]);
    /* A packet's draws are the same stream: draw j = output j+1 seeded with the key. */
    uint64_t key = tb_link_packet_key(7, 1, 42), st = key;
    for (uint32_t j = 0; j < 4; j++)
        CHECK_EQ_U(tb_link_draw(key, j), tb_splitmix64_next(&st));
}

static void test_threshold_edges(void) {
    CHECK_EQ_U(tb_link_threshold(0.0), 0);
    CHECK_EQ_U(tb_link_threshold(-1.0), 0);
    CHECK_EQ_U(tb_link_threshold(0.5), UINT64_C(1) << 52);
    CHECK(!tb_link_hit(0, tb_link_threshold(0.0)));
    CHECK(tb_link_hit(UINT64_MAX, tb_link_threshold(1.0)));
    CHECK(tb_link_hit(0, tb_link_threshold(1e-15)));
}

static void test_fragment_count(void) {
    CHECK_EQ_U(tb_link_fragments(0, 127), 1);
    CHECK_EQ_U(tb_link_fragments(1, 127), 1);
    CHECK_EQ_U(tb_link_fragments(127, 127), 1);
    CHECK_EQ_U(tb_link_fragments(128, 127), 2);
    CHECK_EQ_U(tb_link_fragments(300, 127), 3);
    CHECK_EQ_U(tb_link_fragments(1280, 102), 13);
    CHECK_EQ_U(tb_link_fragments(1500, 0), 1);
}

static void test_fragment_exact_example(void) {
    /* Seed 7, device->peer, packets 0..9 of 300 bytes on 127-byte frames (3 fragments),
     * frame loss 20%: lost fragments per packet, computed independently in Python. */
    static const uint32_t want[10] = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
    uint64_t thr = tb_link_threshold(0.2);
    for (uint64_t n = 0; n < 10; n++)
        CHECK_EQ_U(tb_link_lost_fragments(tb_link_packet_key(7, TB_DIR_D2P, n), 3, thr), want[n]);
    /* The same through the model: the packets with a lost fragment are dropped. */
    tb_link_params p = {.loss = 0.2, .frame_bytes = 127};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 7, TB_DIR_D2P);
    for (uint64_t n = 0; n < 10; n++) {
        tb_link_verdict v = tb_link_admit(&d, n * MS, 300);
        CHECK_EQ_U(v.fragments, 3);
        CHECK_EQ_U(v.drop, want[n] ? TB_DROP_LOSS : TB_DROP_NONE);
    }
    CHECK_EQ_U(d.c.lost_fragments, 5);
    CHECK_EQ_U(d.c.dropped[TB_DROP_LOSS].packets, 5);
    CHECK_EQ_U(d.c.dropped[TB_DROP_LOSS].fragments, 15);
    CHECK_EQ_U(d.c.sent.fragments, 30);
}

static void test_fragment_rule_statistics(void) {
    /* Packet loss with k fragments of frame loss p is 1-(1-p)^k: within 4 standard errors
     * over 200000 packets (deterministic: fixed seed). */
    static const uint32_t ks[] = {1, 2, 5, 13};
    const double p = 0.03;
    const uint32_t n = 200000;
    uint64_t thr = tb_link_threshold(p);
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        uint32_t lost = 0, frag_lost = 0;
        for (uint32_t s = 0; s < n; s++) {
            uint32_t l = tb_link_lost_fragments(tb_link_packet_key(11, TB_DIR_P2D, s), ks[i], thr);
            lost += l > 0;
            frag_lost += l;
        }
        double want = 1.0 - pow(1.0 - p, ks[i]);
        double got = (double)lost / n, se = sqrt(want * (1 - want) / n);
        fprintf(stderr, "  k=%2u: packet loss %.4f, expected %.4f (frame loss %.4f)\n", ks[i], got, want,
                (double)frag_lost / ((double)n * ks[i]));
        CHECK(fabs(got - want) < 4 * se);
        double fse = sqrt(p * (1 - p) / ((double)n * ks[i]));
        CHECK(fabs((double)frag_lost / ((double)n * ks[i]) - p) < 4 * fse);
    }
}

static void test_serialization_math(void) {
    CHECK_EQ_U(tb_link_serialize_ns(1500, 2000000), 6 * MS);
    CHECK_EQ_U(tb_link_serialize_ns(127, 250000), 4064000);
    CHECK_EQ_U(tb_link_serialize_ns(1, 3), 2666666666); /* floor */
    CHECK_EQ_U(tb_link_serialize_ns(1500, 0), 0);
    CHECK_EQ_U(tb_link_default_queue(0), 16384);
    CHECK_EQ_U(tb_link_default_queue(20000000), 500000);
}

static void test_queue_tail_drop(void) {
    /* 1 Mbit/s, queue 3000 bytes (24 ms of serialization), 1000-byte packets (8 ms each). */
    tb_link_params p = {.rate_bps = 1000000, .queue_bytes = 3000, .delay_ns = 10 * MS};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 1, TB_DIR_D2P);
    for (int i = 0; i < 3; i++) {
        tb_link_verdict v = tb_link_admit(&d, 0, 1000);
        CHECK_EQ_U(v.drop, TB_DROP_NONE);
        CHECK_EQ_U(v.deliver_ns, (uint64_t)(i + 1) * 8 * MS + 10 * MS);
    }
    CHECK_EQ_U(tb_link_admit(&d, 0, 1000).drop, TB_DROP_QUEUE);
    CHECK_EQ_U(tb_link_admit(&d, 7 * MS, 1000).drop, TB_DROP_QUEUE); /* 17 + 8 > 24 ms */
    tb_link_verdict v = tb_link_admit(&d, 8 * MS, 1000);               /* one has left */
    CHECK_EQ_U(v.drop, TB_DROP_NONE);
    CHECK_EQ_U(v.deliver_ns, 32 * MS + 10 * MS);
    /* An idle link serializes from the arrival time. */
    v = tb_link_admit(&d, 100 * MS, 500);
    CHECK_EQ_U(v.deliver_ns, 104 * MS + 10 * MS);
    CHECK_EQ_U(d.c.dropped[TB_DROP_QUEUE].packets, 2);
    CHECK_EQ_U(d.c.sent.packets, 7);
    /* Frame overhead counts on the wire: 300 bytes -> 3 frames of 127 (+31 each) = 393. */
    tb_link_params q = {.rate_bps = 250000, .frame_bytes = 127, .frame_overhead = 31};
    tb_link_dir_init(&d, &q, 1, TB_DIR_D2P);
    CHECK_EQ_U(tb_link_admit(&d, 0, 300).deliver_ns, tb_link_serialize_ns(393, 250000));
}

static void test_rate_throughput(void) {
    /* A saturated 2 Mbit/s link delivers exactly 2 Mbit/s of packet bytes. */
    tb_link_params p = {.rate_bps = 2000000, .queue_bytes = 1 << 20};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 1, TB_DIR_D2P);
    uint64_t last = 0, bytes = 0;
    for (int i = 0; i < 350; i++) {
        tb_link_verdict v = tb_link_admit(&d, 0, 1428);
        CHECK_EQ_U(v.drop, TB_DROP_NONE);
        last = v.deliver_ns;
        bytes += 1428;
    }
    double bps = (double)bytes * 8.0 / ((double)last / 1e9);
    CHECK(fabs(bps - 2e6) < 1.0);
}

static void test_jitter_keeps_order(void) {
    tb_link_params p = {.delay_ns = 20 * MS, .jitter_ns = 5 * MS};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 3, TB_DIR_D2P);
    uint64_t prev = 0;
    int spaced_ok = 1, order_ok = 1;
    double sum = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t now = i * 1 * MS; /* 1 ms apart: jitter would reorder without the floor */
        tb_link_verdict v = tb_link_admit(&d, now, 100);
        order_ok &= v.deliver_ns >= prev;
        prev = v.deliver_ns;
        spaced_ok &= v.deliver_ns - now >= 15 * MS && v.deliver_ns - now <= 25 * MS + 5 * MS;
        sum += (double)(v.deliver_ns - now);
    }
    CHECK(order_ok);
    CHECK(spaced_ok);
    /* Widely spaced packets: the delay is uniform in [15, 25] ms, mean 20 ms. */
    tb_link_dir_init(&d, &p, 3, TB_DIR_D2P);
    double lo = 1e18, hi = 0;
    sum = 0;
    for (uint64_t i = 0; i < 2000; i++) {
        uint64_t now = i * 100 * MS;
        double dl = (double)(tb_link_admit(&d, now, 100).deliver_ns - now);
        sum += dl;
        lo = dl < lo ? dl : lo;
        hi = dl > hi ? dl : hi;
    }
    CHECK(lo >= 15e6 && hi <= 25e6);
    CHECK(lo < 15.2e6 && hi > 24.8e6);
    CHECK(fabs(sum / 2000 - 20e6) < 0.3e6);
}

static void test_reorder(void) {
    tb_link_params p = {.delay_ns = 10 * MS, .reorder = 0.25, .reorder_delay_ns = 5 * MS};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 5, TB_DIR_P2D);
    uint32_t held = 0;
    for (uint64_t i = 0; i < 4000; i++) {
        tb_link_verdict v = tb_link_admit(&d, i * MS, 100);
        uint64_t dl = v.deliver_ns - i * MS;
        CHECK(dl == 10 * MS || dl == 15 * MS);
        held += dl == 15 * MS;
    }
    CHECK_EQ_U(held, d.c.reordered);
    CHECK(fabs(held / 4000.0 - 0.25) < 4 * sqrt(0.25 * 0.75 / 4000));
}

static void test_mtu(void) {
    tb_link_params p = {.mtu = 576};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, 1, TB_DIR_D2P);
    CHECK_EQ_U(tb_link_admit(&d, 0, 576).drop, TB_DROP_NONE);
    CHECK_EQ_U(tb_link_admit(&d, 0, 577).drop, TB_DROP_MTU);
    CHECK_EQ_U(d.c.dropped[TB_DROP_MTU].bytes, 577);
    CHECK_EQ_U(d.c.sent.packets, 2);
}

/* The loss pattern of a direction as a bit string of `n` packets. */
static void tb_pattern(uint64_t seed, uint32_t dir, uint64_t spacing_ns, uint32_t size, char *out, int n) {
    tb_link_params p = {.loss = 0.1, .delay_ns = 3 * MS, .jitter_ns = 2 * MS};
    tb_link_dir d;
    tb_link_dir_init(&d, &p, seed, dir);
    for (int i = 0; i < n; i++)
        out[i] = tb_link_admit(&d, (uint64_t)i * spacing_ns, size).drop == TB_DROP_LOSS ? 'x' : '.';
    out[n] = '\0';
}

static void test_determinism(void) {
    char a[501], b[501], c[501], e[501], f[501];
    tb_pattern(42, TB_DIR_D2P, 1 * MS, 100, a, 500);
    tb_pattern(42, TB_DIR_D2P, 37 * MS, 100, b, 500); /* other timing, same decisions */
    tb_pattern(42, TB_DIR_D2P, 1 * MS, 1400, e, 500); /* other size: per-packet loss unchanged */
    tb_pattern(43, TB_DIR_D2P, 1 * MS, 100, c, 500);  /* other seed */
    tb_pattern(42, TB_DIR_P2D, 1 * MS, 100, f, 500);  /* other direction */
    CHECK(strcmp(a, b) == 0);
    CHECK(strcmp(a, e) == 0);
    CHECK(strcmp(a, c) != 0);
    CHECK(strcmp(a, f) != 0);
}

static void test_params(void) {
    tb_link_params p[TB_DIRS];
    char err[128];
    memset(p, 0, sizeof(p));
    CHECK(tb_link_param_set(p, "rate", "2M", err, sizeof(err)) == 1);
    CHECK_EQ_U(p[0].rate_bps, 2000000);
    CHECK_EQ_U(p[1].rate_bps, 2000000);
    CHECK(tb_link_param_set(p, "d2p-loss", "5", err, sizeof(err)) == 1);
    CHECK(p[0].loss == 0.05 && p[1].loss == 0.0);
    CHECK(tb_link_param_set(p, "p2d-delay", "2.5", err, sizeof(err)) == 1);
    CHECK_EQ_U(p[1].delay_ns, 2500000);
    CHECK_EQ_U(p[0].delay_ns, 0);
    CHECK(tb_link_param_set(p, "frame", "127", err, sizeof(err)) == 1);
    CHECK_EQ_U(p[0].frame_bytes, 127);
    CHECK(tb_link_param_set(p, "rate", "2X", err, sizeof(err)) == -1);
    CHECK(tb_link_param_set(p, "loss", "101", err, sizeof(err)) == -1);
    CHECK(tb_link_param_set(p, "loss", "-1", err, sizeof(err)) == -1);
    CHECK(tb_link_param_set(p, "mtu", "5e9", err, sizeof(err)) == -1);
    CHECK(tb_link_param_set(p, "colour", "1", err, sizeof(err)) == 0);
    CHECK(tb_link_param_set(p, "x2y-rate", "1", err, sizeof(err)) == 0);
}

static void test_presets(void) {
    const tb_link_preset *p = tb_link_preset_find("ieee802154");
    CHECK(p != NULL);
    CHECK(p && p->dir[0].rate_bps == 250000 && p->dir[1].rate_bps == 250000);
    CHECK(p && p->dir[0].delay_ns == 5 * MS && p->dir[0].frame_bytes == 102);
    p = tb_link_preset_find("lossy-wifi");
    CHECK(p && p->dir[0].rate_bps == 20000000 && p->dir[0].jitter_ns == 1 * MS && p->dir[0].loss == 0.02);
    p = tb_link_preset_find("nb-iot");
    CHECK(p && p->dir[TB_DIR_D2P].rate_bps > p->dir[TB_DIR_P2D].rate_bps);
    CHECK(p && p->dir[TB_DIR_D2P].mtu == 1280 && p->dir[TB_DIR_P2D].mtu == 1280);
    /* Generated from spec/links.toml: a direction without a figure keeps 0 (unshaped). */
    p = tb_link_preset_find("ble");
    CHECK(p && p->dir[0].frame_bytes == 247 && p->dir[1].frame_overhead == 66 && p->dir[0].loss == 0.0);
    p = tb_link_preset_find("none");
    CHECK(p && p->dir[0].rate_bps == 0 && p->dir[1].delay_ns == 0);
    CHECK(tb_link_preset_find("carrier-pigeon") == NULL);
    for (size_t i = 0; i < tb_link_preset_count; i++)
        CHECK(tb_link_presets[i].summary && tb_link_presets[i].summary[0]);
}

/* Ports come from the right header for IPv4 (with options), IPv6, TCP and UDP; the
 * device's port is the source going d2p and the destination coming back. */
static void test_flow_of(void) {
    uint8_t v4[40] = {0x46, 0, 0, 40, 0, 0, 0x40, 0, 64, 6}; /* IHL 6: 4 bytes of options */
    v4[24] = 0xC0, v4[25] = 0x01, v4[26] = 0x11, v4[27] = 0x51; /* 49153 -> 4433 */
    tb_link_flow fl = tb_link_flow_of(v4, sizeof v4, TB_DIR_D2P);
    CHECK(fl.proto == 6 && fl.dev_port == 49153 && fl.peer_port == 4433);
    fl = tb_link_flow_of(v4, sizeof v4, TB_DIR_P2D);
    CHECK(fl.dev_port == 4433 && fl.peer_port == 49153);
    v4[6] = 0x20, v4[7] = 0x10; /* a later fragment: no transport header to read */
    CHECK(tb_link_flow_of(v4, sizeof v4, TB_DIR_D2P).proto == 0);
    uint8_t v6[48] = {0x60};
    v6[6] = 17, v6[40] = 0x11, v6[41] = 0x51, v6[42] = 0xC0, v6[43] = 0x02;
    fl = tb_link_flow_of(v6, sizeof v6, TB_DIR_P2D);
    CHECK(fl.proto == 17 && fl.peer_port == 4433 && fl.dev_port == 49154);
    v6[6] = 58; /* ICMPv6 */
    CHECK(tb_link_flow_of(v6, sizeof v6, TB_DIR_D2P).proto == 0);
    CHECK(tb_link_flow_of(v4, 10, TB_DIR_D2P).proto == 0);
}

static void test_packet_record(void) {
    uint8_t rec[TB_LINK_PACKET_RECORD];
    tb_link_packet_encode(rec, &(tb_link_packet){.arrival_ns = 0x0102030405060708u, .done_ns = 9, .bytes = 1280,
                                                 .fragments = 13, .dir = TB_DIR_P2D, .fate = TB_DROP_LOSS,
                                                 .flow = {.proto = 17, .dev_port = 0xABCD, .peer_port = 4433}});
    CHECK(rec[0] == 0x08 && rec[7] == 0x01 && rec[8] == 9 && rec[16] == 0x00 && rec[17] == 0x05);
    CHECK(rec[20] == 13 && rec[22] == TB_DIR_P2D && rec[23] == TB_DROP_LOSS);
    CHECK(rec[24] == 0xCD && rec[25] == 0xAB && rec[26] == 0x51 && rec[27] == 0x11 && rec[28] == 17);
    CHECK(rec[29] == 0 && rec[31] == 0);
}

int main(void) {
    RUN_TEST(test_splitmix_reference);
    RUN_TEST(test_threshold_edges);
    RUN_TEST(test_fragment_count);
    RUN_TEST(test_fragment_exact_example);
    RUN_TEST(test_fragment_rule_statistics);
    RUN_TEST(test_serialization_math);
    RUN_TEST(test_queue_tail_drop);
    RUN_TEST(test_rate_throughput);
    RUN_TEST(test_jitter_keeps_order);
    RUN_TEST(test_reorder);
    RUN_TEST(test_mtu);
    RUN_TEST(test_determinism);
    RUN_TEST(test_params);
    RUN_TEST(test_presets);
    RUN_TEST(test_flow_of);
    RUN_TEST(test_packet_record);
    return tb_test_report();
}
