/* SPDX-License-Identifier: Apache-2.0 */
/* tlsbench-link: the pure link model (seeded per-packet decisions, serialization, queue,
 * delay), its presets and parameters, and the namespace plumbing. The model has no clock
 * and no I/O, so the unit tests drive it with synthetic arrival times. */
#ifndef TLSBENCH_LINK_H
#define TLSBENCH_LINK_H
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- PRNG (splitmix64) */
/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014; Vigna's reference splitmix64.c): state += golden gamma, output = mix(state). */
#define TB_SPLITMIX_GAMMA UINT64_C(0x9E3779B97F4A7C15)
uint64_t tb_splitmix64_mix(uint64_t z);
uint64_t tb_splitmix64_next(uint64_t *state);

/* The key of packet `seq` of direction `dir`: every random decision about that packet is
 * drawn from the splitmix64 stream seeded with this key, so a decision depends on (seed,
 * direction, arrival index) only and never on timing or on earlier packets' sizes. */
uint64_t tb_link_packet_key(uint64_t seed, uint32_t dir, uint64_t seq);
/* Draw `slot` of a packet: output slot+1 of the stream seeded with `key`. */
uint64_t tb_link_draw(uint64_t key, uint32_t slot);
/* A probability as a 53-bit threshold: an event happens when (draw >> 11) < threshold,
 * exact for p = 0 (never) and p = 1 (always), integer compare so identical everywhere. */
uint64_t tb_link_threshold(double p);
int tb_link_hit(uint64_t draw, uint64_t threshold);

/* Fixed draw slots of a packet: jitter and reordering first, then one slot per
 * link-layer fragment, so a packet's jitter does not depend on its size. */
enum { TB_DRAW_JITTER = 0, TB_DRAW_REORDER = 1, TB_DRAW_FRAGMENT0 = 2 };

/* Fragments of a packet of `bytes` on frames of `frame` payload bytes (0: the packet is
 * one frame): ceil(bytes / frame), at least 1. */
uint32_t tb_link_fragments(uint32_t bytes, uint32_t frame);
/* How many of the packet's fragments are lost (0: delivered). */
uint32_t tb_link_lost_fragments(uint64_t key, uint32_t fragments, uint64_t threshold);

/* Time to serialize `bytes` at `rate_bps` bit/s, in ns (floor; 0 when rate is 0). */
uint64_t tb_link_serialize_ns(uint64_t bytes, uint64_t rate_bps);

/* ---------------------------------------------------------------- parameters */
typedef struct tb_link_params {
    uint64_t rate_bps;        /* 0: unlimited */
    uint64_t queue_bytes;     /* tail-drop limit of the transmit queue (0: default from rate) */
    uint64_t delay_ns;        /* propagation delay */
    uint64_t jitter_ns;       /* uniform in [-jitter, +jitter], delay never below 0 */
    double loss;              /* probability 0..1 per packet, or per fragment when frame > 0 */
    uint32_t frame_bytes;     /* link-layer frame payload; 0: loss per packet */
    uint32_t frame_overhead;  /* bytes added per frame on the wire (serialization only) */
    uint32_t mtu;             /* packets above it are dropped and counted (0: none) */
    double reorder;           /* probability 0..1 that a packet is held back */
    uint64_t reorder_delay_ns; /* extra delay of a held-back packet */
} tb_link_params;

/* Direction 0: device -> peer ("d2p"); 1: peer -> device ("p2d"). */
enum { TB_DIR_D2P = 0, TB_DIR_P2D = 1, TB_DIRS = 2 };
extern const char *const tb_link_dir_names[TB_DIRS];

/* Default queue: what the rate sends in 200 ms, at least 16 KiB (a TLS flight fits). */
uint64_t tb_link_default_queue(uint64_t rate_bps);

typedef struct tb_link_preset {
    const char *name;
    const char *summary;
    tb_link_params dir[TB_DIRS];
} tb_link_preset;
extern const tb_link_preset tb_link_presets[];
extern const size_t tb_link_preset_count;
const tb_link_preset *tb_link_preset_find(const char *name);

/* Parses one `--[d2p-|p2d-]key value` option into params (both directions unless prefixed).
 * Returns 1 when the key is a link parameter, 0 when it is not, -1 on a bad value
 * (message in err). */
int tb_link_param_set(tb_link_params p[TB_DIRS], const char *key, const char *value, char *err,
                      size_t errlen);
/* Writes the parameter table as help text. */
void tb_link_param_help(void *file);

/* ---------------------------------------------------------------- model */
enum {
    TB_DROP_NONE = 0,
    TB_DROP_MTU,   /* over the emulated MTU */
    TB_DROP_QUEUE, /* transmit queue full (tail drop) */
    TB_DROP_LOSS,  /* random loss (a fragment or the packet) */
    TB_DROP_POOL,  /* no free packet buffer (too many packets in flight) */
    TB_DROP_WRITE, /* the receiving TUN refused the packet */
    TB_DROP_CAUSES
};
extern const char *const tb_link_drop_names[TB_DROP_CAUSES];

typedef struct tb_link_count {
    uint64_t packets;
    uint64_t bytes;
    uint64_t fragments;
} tb_link_count;

typedef struct tb_link_counters {
    tb_link_count sent;      /* arrived at the link from the sending namespace */
    tb_link_count dropped[TB_DROP_CAUSES];
    tb_link_count delivered; /* written into the receiving namespace */
    uint64_t lost_fragments; /* fragments lost (a lost packet may lose several) */
    uint64_t reordered;      /* packets held back by the reorder rule */
    uint64_t late_sum_ns;    /* delivery after the model's time: the emulator's own error */
    uint64_t late_max_ns;
} tb_link_counters;

typedef struct tb_link_dir {
    tb_link_params p;
    uint64_t seed;
    uint32_t dir;
    uint64_t next_seq;     /* arrival index of the next packet */
    uint64_t tx_free_ns;   /* when the transmitter finishes the packets accepted so far */
    uint64_t queue_ns;     /* queue limit expressed as serialization time */
    uint64_t last_at_ns;   /* latest in-order delivery time (keeps FIFO under jitter) */
    uint64_t loss_thr, reorder_thr;
    tb_link_counters c;
} tb_link_dir;

typedef struct tb_link_verdict {
    uint64_t seq;
    uint32_t drop;      /* TB_DROP_* */
    uint32_t fragments;
    uint64_t deliver_ns; /* when to write the packet out (drop == TB_DROP_NONE) */
} tb_link_verdict;

void tb_link_dir_init(tb_link_dir *d, const tb_link_params *p, uint64_t seed, uint32_t dir);
/* A packet of `bytes` arrives at `now_ns`: counts it and decides its fate. */
tb_link_verdict tb_link_admit(tb_link_dir *d, uint64_t now_ns, uint32_t bytes);
/* Counts a packet as delivered, or as dropped by `cause` after admission. */
void tb_link_count_add(tb_link_count *c, uint32_t bytes, uint32_t fragments);

/* ---------------------------------------------------------------- packet log */
/* The transport ports of a packet, so a reader can attribute packets to connections (every
 * repetition of a two-agent run uses a fresh client port). Zero for other protocols. */
typedef struct tb_link_flow {
    uint8_t proto;      /* IP protocol number: 6 TCP, 17 UDP (0: not parsed) */
    uint16_t dev_port;  /* the device namespace's port: source of d2p, destination of p2d */
    uint16_t peer_port;
} tb_link_flow;
/* Reads IPv4/IPv6 + TCP/UDP headers (no IPv6 extension headers, no IP fragments). */
tb_link_flow tb_link_flow_of(const uint8_t *pkt, size_t len, uint32_t dir);

/* One record of `run --packet-log FILE`, 32 bytes little-endian (docs/link-emulator.md):
 * u64 arrival_ns, u64 done_ns (delivery; 0 if dropped), u32 bytes, u16 fragments, u8 dir,
 * u8 fate (TB_DROP_*, 0 = delivered), u16 dev_port, u16 peer_port, u8 proto, 3 bytes 0.
 * Times are CLOCK_MONOTONIC, the agents' trace clock. */
#define TB_LINK_PACKET_RECORD 32
typedef struct tb_link_packet {
    uint64_t arrival_ns, done_ns;
    uint32_t bytes;
    uint32_t fragments;
    uint32_t dir;
    uint32_t fate;
    tb_link_flow flow;
} tb_link_packet;
void tb_link_packet_encode(uint8_t out[TB_LINK_PACKET_RECORD], const tb_link_packet *p);

/* ---------------------------------------------------------------- namespaces */
/* Exit status when the program lacks root or /dev/net/tun (the automake "skip" code). */
enum { TB_LINK_EXIT_OK = 0, TB_LINK_EXIT_FAIL = 1, TB_LINK_EXIT_USAGE = 2, TB_LINK_EXIT_PRIV = 77 };
#define TB_LINK_PRIV_MESSAGE "needs root and /dev/net/tun: memory mode keeps working"
#define TB_LINK_TUN_NAME "tblink0"
#define TB_LINK_NAME_MAX 32

typedef struct tb_link_netns_opts {
    const char *name;
    uint32_t tun_mtu;        /* MTU of both TUN devices */
    int ipv6;                /* keep IPv6 and add ULA addresses (else IPv6 is disabled) */
    const char *sysctls[32]; /* "key=value", applied inside both namespaces */
    size_t n_sysctls;
} tb_link_netns_opts;

/* 1 when root and /dev/net/tun opens; else writes why to err. */
int tb_link_privileged(char *err, size_t errlen);
int tb_link_name_ok(const char *name);
/* The namespace of an end: "tbl-<name>-dev" / "tbl-<name>-peer". */
void tb_link_ns_name(char *out, size_t outlen, const char *name, uint32_t end);
int tb_link_up(const tb_link_netns_opts *o, char *err, size_t errlen);
/* Removes both namespaces and their TUN devices; missing ones are fine. */
int tb_link_down(const char *name, char *err, size_t errlen);
/* Applies "key=value" (a net.* sysctl) inside namespace `ns`. */
int tb_link_sysctl(const char *ns, const char *kv, char *err, size_t errlen);
/* Opens the TUN device of namespace `ns` (non-blocking, no packet info) and reads its MTU. */
int tb_link_attach(const char *ns, uint32_t *mtu, char *err, size_t errlen);

#endif
