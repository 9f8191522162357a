/* SPDX-License-Identifier: Apache-2.0 */
/* The platform layer: everything the agent needs from a board or an OS.
 * A device port implements these few functions in one file (src/port/<name>.c). */
#ifndef TLSBENCH_PORT_H
#define TLSBENCH_PORT_H
#include <stddef.h>
#include <stdint.h>

/* Monotonic time in ns. Called twice per traced span: must be cheap (the posix port converts
 * the invariant TSC, or reads the vDSO clock: src/port/posix_clock.c). */
uint64_t tb_port_now_ns(void);

/* CPU time of the calling thread in ns; 0 where the platform has none.
 * Expensive on Linux (a system call): the tracer reads it only on phase spans. */
uint64_t tb_port_cpu_ns(void);

/* Names and resolution of the two clocks, reported in HELLO. */
const char *tb_port_clock_name(void);
const char *tb_port_cpu_clock_name(void);
uint64_t tb_port_clock_resolution_ns(void);

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

/* A byte channel to the controller (stdin/stdout, a file, a UART...). */
typedef struct tb_channel {
    /* Reads up to len bytes; returns the count, 0 at end of stream, < 0 on error. Blocks. */
    long (*read)(void *ctx, void *buf, size_t len);
    /* Writes all len bytes; returns 0, or < 0 on error. */
    int (*write)(void *ctx, const void *buf, size_t len);
    void *ctx;
} tb_channel;

/* The posix port's channels: the process's stdin/stdout, or a file descriptor pair. */
tb_channel tb_port_stdio_channel(void);
tb_channel tb_port_fd_channel(int read_fd, int write_fd);

#endif
