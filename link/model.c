/* SPDX-License-Identifier: Apache-2.0 */
/* The link model: per-packet seeded decisions, serialization behind a byte-limited queue,
 * delay, jitter, reordering; the parameter table and the presets. No clock, no I/O. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

/* ---------------------------------------------------------------- PRNG */
uint64_t tb_splitmix64_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t tb_splitmix64_next(uint64_t *state) {
    *state += TB_SPLITMIX_GAMMA;
    return tb_splitmix64_mix(*state);
}

/* Two mixing rounds so that neighbouring seeds and neighbouring sequence numbers give
 * unrelated streams; the direction takes the top bit (2^63 packets per direction). */
uint64_t tb_link_packet_key(uint64_t seed, uint32_t dir, uint64_t seq) {
    return tb_splitmix64_mix(tb_splitmix64_mix(seed) + (((uint64_t)(dir & 1u) << 63) | seq));
}

uint64_t tb_link_draw(uint64_t key, uint32_t slot) {
    return tb_splitmix64_mix(key + TB_SPLITMIX_GAMMA * ((uint64_t)slot + 1u));
}

uint64_t tb_link_threshold(double p) {
    if (!(p > 0.0))
        return 0;
    if (p >= 1.0)
        return UINT64_C(1) << 53;
    return (uint64_t)ldexp(p, 53);
}

int tb_link_hit(uint64_t draw, uint64_t threshold) { return (draw >> 11) < threshold; }

uint32_t tb_link_fragments(uint32_t bytes, uint32_t frame) {
    if (frame == 0 || bytes == 0)
        return 1;
    return (bytes + frame - 1u) / frame;
}

uint32_t tb_link_lost_fragments(uint64_t key, uint32_t fragments, uint64_t threshold) {
    uint32_t lost = 0;
    if (threshold == 0)
        return 0;
    for (uint32_t i = 0; i < fragments; i++)
        lost += (uint32_t)tb_link_hit(tb_link_draw(key, TB_DRAW_FRAGMENT0 + i), threshold);
    return lost;
}

uint64_t tb_link_serialize_ns(uint64_t bytes, uint64_t rate_bps) {
    if (rate_bps == 0)
        return 0;
    /* bytes <= 2^20 in practice: bytes * 8e9 stays far below 2^64. */
    return bytes * UINT64_C(8000000000) / rate_bps;
}

uint64_t tb_link_default_queue(uint64_t rate_bps) {
    uint64_t q = rate_bps / 8u / 5u; /* 200 ms */
    return q < 16384u ? 16384u : q;
}

/* ---------------------------------------------------------------- model */
const char *const tb_link_dir_names[TB_DIRS] = {"d2p", "p2d"};
const char *const tb_link_drop_names[TB_DROP_CAUSES] = {
    [TB_DROP_NONE] = "none",   [TB_DROP_MTU] = "mtu",   [TB_DROP_QUEUE] = "queue",
    [TB_DROP_LOSS] = "loss",   [TB_DROP_POOL] = "pool", [TB_DROP_WRITE] = "write",
};

void tb_link_dir_init(tb_link_dir *d, const tb_link_params *p, uint64_t seed, uint32_t dir) {
    memset(d, 0, sizeof(*d));
    d->p = *p;
    if (d->p.rate_bps && d->p.queue_bytes == 0)
        d->p.queue_bytes = tb_link_default_queue(d->p.rate_bps);
    d->seed = seed;
    d->dir = dir;
    d->queue_ns = tb_link_serialize_ns(d->p.queue_bytes, d->p.rate_bps);
    d->loss_thr = tb_link_threshold(d->p.loss);
    d->reorder_thr = tb_link_threshold(d->p.reorder);
}

void tb_link_count_add(tb_link_count *c, uint32_t bytes, uint32_t fragments) {
    c->packets++;
    c->bytes += bytes;
    c->fragments += fragments;
}

/* ---------------------------------------------------------------- packet log */
static uint16_t tb_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

tb_link_flow tb_link_flow_of(const uint8_t *pkt, size_t len, uint32_t dir) {
    tb_link_flow fl = {0};
    size_t l4;
    uint8_t proto;
    if (len >= 20 && pkt[0] >> 4 == 4) {
        l4 = (size_t)(pkt[0] & 0x0f) * 4u;
        proto = pkt[9];
        if ((tb_be16(pkt + 6) & 0x1fff) != 0) /* a later IP fragment: no transport header */
            return fl;
    } else if (len >= 40 && pkt[0] >> 4 == 6) {
        l4 = 40;
        proto = pkt[6];
    } else {
        return fl;
    }
    if ((proto != 6 && proto != 17) || len < l4 + 4)
        return fl;
    uint16_t src = tb_be16(pkt + l4), dst = tb_be16(pkt + l4 + 2);
    fl.proto = proto;
    fl.dev_port = dir == TB_DIR_D2P ? src : dst;
    fl.peer_port = dir == TB_DIR_D2P ? dst : src;
    return fl;
}

static void tb_put_le(uint8_t *out, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

void tb_link_packet_encode(uint8_t out[TB_LINK_PACKET_RECORD], const tb_link_packet *p) {
    memset(out, 0, TB_LINK_PACKET_RECORD);
    tb_put_le(out, p->arrival_ns, 8);
    tb_put_le(out + 8, p->done_ns, 8);
    tb_put_le(out + 16, p->bytes, 4);
    tb_put_le(out + 20, p->fragments > UINT16_MAX ? UINT16_MAX : p->fragments, 2);
    out[22] = (uint8_t)p->dir;
    out[23] = (uint8_t)p->fate;
    tb_put_le(out + 24, p->flow.dev_port, 2);
    tb_put_le(out + 26, p->flow.peer_port, 2);
    out[28] = p->flow.proto;
}

/* Order of the rules: MTU (the packet never fits), queue (tail drop: no air time), then
 * serialization (the packet occupies the transmitter), then loss (decided on the wire: a
 * lost packet has used its air time, as on a radio), then delay, jitter and reordering. */
tb_link_verdict tb_link_admit(tb_link_dir *d, uint64_t now_ns, uint32_t bytes) {
    const tb_link_params *p = &d->p;
    tb_link_verdict v = {.seq = d->next_seq++, .drop = TB_DROP_NONE};
    v.fragments = tb_link_fragments(bytes, p->frame_bytes);
    tb_link_count_add(&d->c.sent, bytes, v.fragments);
    uint64_t key = tb_link_packet_key(d->seed, d->dir, v.seq);

    if (p->mtu && bytes > p->mtu) {
        v.drop = TB_DROP_MTU;
    } else {
        uint64_t done = now_ns;
        if (p->rate_bps) {
            uint64_t wire = (uint64_t)bytes + (uint64_t)v.fragments * p->frame_overhead;
            uint64_t ser = tb_link_serialize_ns(wire, p->rate_bps);
            uint64_t backlog = d->tx_free_ns > now_ns ? d->tx_free_ns - now_ns : 0;
            if (backlog + ser > d->queue_ns) {
                v.drop = TB_DROP_QUEUE;
            } else {
                done = (d->tx_free_ns > now_ns ? d->tx_free_ns : now_ns) + ser;
                d->tx_free_ns = done;
            }
        }
        if (v.drop == TB_DROP_NONE) {
            uint32_t lost = tb_link_lost_fragments(key, v.fragments, d->loss_thr);
            d->c.lost_fragments += lost;
            if (lost)
                v.drop = TB_DROP_LOSS;
        }
        if (v.drop == TB_DROP_NONE) {
            int64_t delay = (int64_t)p->delay_ns;
            if (p->jitter_ns) {
                /* Uniform in [-jitter, +jitter]: 53 bits scaled, then centred. */
                double u = (double)(tb_link_draw(key, TB_DRAW_JITTER) >> 11) * 0x1.0p-53;
                delay += (int64_t)llround((2.0 * u - 1.0) * (double)p->jitter_ns);
                if (delay < 0)
                    delay = 0;
            }
            uint64_t at = done + (uint64_t)delay;
            if (tb_link_hit(tb_link_draw(key, TB_DRAW_REORDER), d->reorder_thr)) {
                /* Held back: later packets overtake it; the FIFO floor is not raised. */
                at += p->reorder_delay_ns;
                d->c.reordered++;
            } else {
                /* Jitter alone never reorders: a link keeps order. */
                if (at < d->last_at_ns)
                    at = d->last_at_ns;
                d->last_at_ns = at;
            }
            v.deliver_ns = at;
        }
    }
    if (v.drop != TB_DROP_NONE)
        tb_link_count_add(&d->c.dropped[v.drop], bytes, v.fragments);
    return v;
}

/* ---------------------------------------------------------------- parameter table */
typedef enum { TB_P_RATE, TB_P_BYTES, TB_P_MS, TB_P_PERCENT } tb_param_kind;

typedef struct tb_param {
    const char *key;
    tb_param_kind kind;
    size_t offset;
    size_t size; /* of the field: 4 or 8 for integers */
    const char *help;
} tb_param;

#define TB_FIELD(f) offsetof(tb_link_params, f), sizeof(((tb_link_params *)0)->f)
static const tb_param tb_params[] = {
    {"rate", TB_P_RATE, TB_FIELD(rate_bps), "bit/s (k, M, G suffixes; 0: unlimited)"},
    {"queue", TB_P_BYTES, TB_FIELD(queue_bytes), "tail-drop limit in bytes (default: 200 ms at the rate, >= 16384)"},
    {"delay", TB_P_MS, TB_FIELD(delay_ns), "one-way delay, ms"},
    {"jitter", TB_P_MS, TB_FIELD(jitter_ns), "uniform +- ms around the delay (order is kept)"},
    {"loss", TB_P_PERCENT, TB_FIELD(loss), "% per packet, or per frame when --frame is set"},
    {"frame", TB_P_BYTES, TB_FIELD(frame_bytes), "link-layer frame payload bytes (0: loss per packet)"},
    {"frame-overhead", TB_P_BYTES, TB_FIELD(frame_overhead), "bytes added per frame on the wire"},
    {"mtu", TB_P_BYTES, TB_FIELD(mtu), "drop (and count) packets larger than this (0: none)"},
    {"reorder", TB_P_PERCENT, TB_FIELD(reorder), "% of packets held back"},
    {"reorder-delay", TB_P_MS, TB_FIELD(reorder_delay_ns), "extra delay of a held-back packet, ms"},
};
#undef TB_FIELD

/* Integers with an optional decimal suffix; fractional values allowed ("2.5M"). */
static int tb_parse_scaled(const char *s, double *out) {
    static const struct {
        char suffix;
        double scale;
    } suffixes[] = {{'k', 1e3}, {'K', 1e3}, {'m', 1e6}, {'M', 1e6}, {'g', 1e9}, {'G', 1e9}};
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0.0) || !isfinite(v))
        return -1;
    for (size_t i = 0; *end && i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (*end == suffixes[i].suffix) {
            v *= suffixes[i].scale;
            end++;
            break;
        }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static int tb_param_store(tb_link_params *p, const tb_param *t, double v) {
    char *field = (char *)p + t->offset;
    switch (t->kind) {
    case TB_P_PERCENT: {
        if (v > 100.0)
            return -1;
        double prob = v / 100.0;
        memcpy(field, &prob, sizeof(prob));
        return 0;
    }
    case TB_P_MS:
        v *= 1e6;
        break;
    case TB_P_RATE:
    case TB_P_BYTES:
        break;
    default:
        return -1;
    }
    if (t->size == sizeof(uint32_t)) {
        if (v > 4294967295.0)
            return -1;
        uint32_t u = (uint32_t)llround(v);
        memcpy(field, &u, sizeof(u));
    } else {
        if (v > 1.8e19)
            return -1;
        uint64_t u = (uint64_t)llround(v);
        memcpy(field, &u, sizeof(u));
    }
    return 0;
}

int tb_link_param_set(tb_link_params p[TB_DIRS], const char *key, const char *value, char *err,
                      size_t errlen) {
    uint32_t first = 0, last = TB_DIRS - 1;
    for (uint32_t d = 0; d < TB_DIRS; d++) {
        size_t n = strlen(tb_link_dir_names[d]);
        if (strncmp(key, tb_link_dir_names[d], n) == 0 && key[n] == '-') {
            first = last = d;
            key += n + 1;
            break;
        }
    }
    for (size_t i = 0; i < sizeof(tb_params) / sizeof(tb_params[0]); i++) {
        if (strcmp(key, tb_params[i].key) != 0)
            continue;
        double v;
        if (value == NULL || tb_parse_scaled(value, &v) != 0) {
            snprintf(err, errlen, "--%s: bad value '%s'", key, value ? value : "");
            return -1;
        }
        for (uint32_t d = first; d <= last; d++)
            if (tb_param_store(&p[d], &tb_params[i], v) != 0) {
                snprintf(err, errlen, "--%s: '%s' is out of range", key, value);
                return -1;
            }
        return 1;
    }
    return 0;
}

void tb_link_param_help(void *file) {
    FILE *f = file;
    for (size_t i = 0; i < sizeof(tb_params) / sizeof(tb_params[0]); i++)
        fprintf(f, "  --[d2p-|p2d-]%-15s %s\n", tb_params[i].key, tb_params[i].help);
}

/* ---------------------------------------------------------------- presets */
/* The presets and the sources of their figures are declared once, in spec/links.toml (read
 * by the host's predictions too); link/tools/genpresets.py turns them into this table. */
#include "link_presets_gen.h"

const tb_link_preset tb_link_presets[] = {TB_LINK_PRESETS_GEN};
const size_t tb_link_preset_count = sizeof(tb_link_presets) / sizeof(tb_link_presets[0]);

const tb_link_preset *tb_link_preset_find(const char *name) {
    for (size_t i = 0; i < tb_link_preset_count; i++)
        if (strcmp(tb_link_presets[i].name, name) == 0)
            return &tb_link_presets[i];
    return NULL;
}
