/* SPDX-License-Identifier: Apache-2.0 */
/* The agent a device runs: the framed serve loop (docs/protocol.md) over one byte channel.
 * What it needs is all a device has to provide: a channel and two clocks (port.h), the
 * linked TLS backend (backend.h) and the runner (runner.h); no file system, no process, no
 * stdio. The posix command line (src/posix/cli/) is one caller; a firmware's main() is another. */
#ifndef TLSBENCH_SERVE_H
#define TLSBENCH_SERVE_H
#include <stddef.h>
#include "tlsbench/backend.h"
#include "tlsbench/port.h"
#include "tlsbench/trace.h"

/* Exit codes of the agent (the serve loop's return value, the command line's status). */
enum { TB_EXIT_OK = 0, TB_EXIT_FAILED = 1, TB_EXIT_USAGE = 2, TB_EXIT_PROTOCOL = 3 };

/* Empty START/STOP pairs timed at start-up (tb_trace_calibrate), reported in HELLO. */
#define TB_CALIBRATION_PAIRS 100000u

typedef struct tb_agent {
    const char *name;           /* HELLO `agent`: tlsbench-agent-<library>[-notrace] */
    const tb_backend *backend;  /* the one linked backend */
    tb_calibration calibration; /* set by tb_agent_calibrate */
    /* A firmware's target, image and options: the members of HELLO's "device" object
     * (docs/protocol.md). NULL on a host: no "device" object. */
    void (*describe_device)(tb_json *out);
} tb_agent;

/* Starts the backend once (RNG, credentials, suite table): 0, or -1 with why in err. */
int tb_agent_start(const tb_agent *a, char *err, size_t errlen);
/* Measures the tracer's own cost for HELLO (leaves the trace empty). */
void tb_agent_calibrate(tb_agent *a);

/* Serves a controller on ch: starts the agent, sends HELLO and SUITES, then answers RUN and
 * QUIT frames until QUIT or the end of the stream (TB_EXIT_OK). A frame that cannot be
 * decoded or a channel that fails ends it (TB_EXIT_PROTOCOL, after a fatal ERROR when the
 * channel still works). */
int tb_serve(tb_agent *a, tb_channel *ch);

#endif
