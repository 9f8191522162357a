/* SPDX-License-Identifier: Apache-2.0 */
/* The platform layer: everything the agent needs from a board or an OS. A port implements
 * these few functions (src/posix/posix.c; arch/cortex-m/ and a board for a bare-metal Cortex-M);
 * docs/porting.md walks through them for a new board. */
#ifndef TLSBENCH_PORT_H
#define TLSBENCH_PORT_H
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- counter */
/* The counter every trace record carries. Called twice per traced span: must be cheap. On
 * posix it is monotonic ns (the invariant TSC converted, or the vDSO clock:
 * src/posix/posix_clock.c); a device returns its own count (QEMU icount instructions, DWT
 * cycles) and names the unit below: the functions keep their "ns" names, but the host reads
 * HELLO's clock.unit and never calls a count a time. */
uint64_t tb_port_now_ns(void);

/* CPU time of the calling thread in the counter's unit; 0 where the platform has none, the
 * counter itself on bare metal (one thread, nothing preempts it). Expensive on Linux (a
 * system call): the tracer reads it only on phase spans. */
uint64_t tb_port_cpu_ns(void);

/* Names and resolution (in the counter's unit) of the two clocks, reported in HELLO. */
const char *tb_port_clock_name(void);
const char *tb_port_cpu_clock_name(void);
uint64_t tb_port_clock_resolution_ns(void);

/* The counter's unit, HELLO clock.unit: "ns" (posix), "instructions (QEMU icount)",
 * "cycles (DWT CYCCNT)". Everything the agent reports in counter values is in this unit. */
const char *tb_port_clock_unit(void);

/* ---------------------------------------------------------------- marker */
/* How tb_port_now_ns is made, for HELLO's clock block: a port that converts a counter (the
 * posix port's TSC) reports it and its rate measured against a reference clock; a port that
 * reads a clock directly reports counter_hz 0 (and, when it has a counter it does not trust,
 * why in `fallback`). Strings are never NULL. */
typedef struct tb_port_clock_info {
    const char *counter;   /* the counter the port can read ("TSC", "CNTVCT_EL0"), "" when none */
    const char *reference; /* the clock its rate was measured against, "" when not counting */
    const char *fallback;  /* why the counter is not used, "" */
    double counter_hz;     /* ticks per second, 0 when not counting */
    uint64_t window_ns;    /* the reference time that rate was measured over */
    double drift_ppm;      /* counter minus reference over the last checked stretch, ppm */
} tb_port_clock_info;
tb_port_clock_info tb_port_clock_calibration(void);

/* Checks the counter against its reference since the previous check (the serve loop calls it
 * after every RUN, outside any measurement); returns the drift in ppm. Beyond the port's
 * tolerance the port stops using the counter. A port without a counter returns 0. */
double tb_port_clock_check(void);

/* Time the calling thread has spent ready to run but waiting for a CPU while other work ran
 * (ns, cumulative): 0 and *ns set, or -1 where the platform cannot tell. The runner reads
 * it around every repetition: the host's sign of descheduling in every transport. */
int tb_port_runqueue_wait_ns(uint64_t *ns);

/* Optional marker output (a GPIO on a board): raised just after each shipped repetition's
 * REPETITION START and lowered just before its STOP (warm-ups leave it low), so a power
 * analyzer's capture can be aligned to the stored repetitions (docs/energy.md). Called in
 * the measured span: keep it as cheap as a pin write. No-op where absent. */
void tb_port_marker(int level);

/* 1 where tb_port_marker drives an output (a GPIO, a marker file), 0 where it is a no-op: the
 * runner then keeps the marker low between repetitions long enough for a capture to see it. */
int tb_port_marker_enabled(void);

/* ---------------------------------------------------------------- controller channel */
/* A byte channel to the controller (stdin/stdout, a file, a UART...). */
typedef struct tb_channel {
    /* Reads up to len bytes; returns the count, 0 at end of stream, < 0 on error. Blocks. */
    long (*read)(void *ctx, void *buf, size_t len);
    /* Writes all len bytes; returns 0, or < 0 on error. */
    int (*write)(void *ctx, const void *buf, size_t len);
    void *ctx;
} tb_channel;

/* The channel the agent serves its controller on: stdin/stdout on posix, a UART on a
 * board. A device port holds its counter while a call waits for the host, so the host's
 * pace never shows in a count (docs/porting.md). */
tb_channel tb_port_controller_channel(void);

/* ---------------------------------------------------------------- entropy */
/* len bytes for a TLS library's entropy pool: 0, or -1 when the source failed. A board
 * without a TRNG (QEMU) returns a seeded generator's bytes: deterministic and NOT secure,
 * which its HELLO says. */
int tb_port_entropy(uint8_t *buf, size_t len);

/* ---------------------------------------------------------------- memory probes */
/* What a port can measure of memory (a device's "memory" firmware image; a posix agent started
 * with TLSBENCH_COLLECT=memory); NULL where it measures nothing (a device's counting image,
 * posix otherwise: counting allocations costs time and instructions). With probes, the runner ships each repetition's footprint per peer as
 * INSTANT records (spec/labels.toml category "memory"). An owner is TB_PEER_CLIENT,
 * TB_PEER_SERVER or TB_PEER_NONE (what is allocated outside a peer's calls: the library's
 * start-up, parsed credentials, the DRBG). */
typedef struct tb_memory_probes {
    /* Allocations from now on belong to `owner`; a block is freed to whoever allocated it. */
    void (*heap_owner)(uint8_t owner);
    /* Bytes `owner` holds now, and the most it held since the last heap_peaks_restart. */
    uint32_t (*heap_live)(uint8_t owner);
    uint32_t (*heap_peak)(uint8_t owner);
    /* Every owner's peak := what it holds now. */
    void (*heap_peaks_restart)(void);
    /* Paints the free stack below the caller; stack_high_water is then the deepest use
     * since, in bytes from the stack's top (every frame above the caller included). */
    void (*stack_paint)(void);
    uint32_t (*stack_high_water)(void);
    /* Optional (NULL: no per-step records, as on the Cortex-M image): the bytes `owner` has
     * allocated in all (cumulative), and a second peak for one step call: heap_step_restart
     * sets every owner's step peak to what it holds now. */
    uint64_t (*heap_allocated)(uint8_t owner);
    void (*heap_step_restart)(void);
    uint32_t (*heap_step_peak)(uint8_t owner);
    /* Optional: what each peer holds now becomes its zero for this repetition (blocks that
     * earlier repetitions left to a library-wide cache, e.g. wolfSSL's FP_ECC table, are no
     * connection's). NULL: live bytes are absolute (a device, where peers start from 0). */
    void (*heap_repetition_zero)(void);
    /* Optional: why allocations were refused since the last call (a device's per-peer heap
     * cap: the part's RAM), written into buf for a failure's message and forgotten; 0: none. */
    size_t (*heap_refused)(char *buf, size_t n);
} tb_memory_probes;

const tb_memory_probes *tb_port_memory_probes(void);

#endif
