/* SPDX-License-Identifier: Apache-2.0 */
/* The platform layer: everything the agent needs from a board or an OS.
 * A device port implements these few functions in one file (src/port/<name>.c). */
#ifndef TLSBENCH_PORT_H
#define TLSBENCH_PORT_H
#include <stddef.h>
#include <stdint.h>

/* Monotonic time in ns. Called twice per traced span: must be cheap (vDSO on Linux). */
uint64_t tb_port_now_ns(void);

/* CPU time of the calling thread in ns; 0 where the platform has none.
 * Expensive on Linux (a system call): the tracer reads it only on phase spans. */
uint64_t tb_port_cpu_ns(void);

/* Names and resolution of the two clocks, reported in HELLO. */
const char *tb_port_clock_name(void);
const char *tb_port_cpu_clock_name(void);
uint64_t tb_port_clock_resolution_ns(void);

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
