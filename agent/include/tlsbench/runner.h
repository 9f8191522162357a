/* SPDX-License-Identifier: Apache-2.0 */
/* Executes one RUN request: warm-up, then repetitions, each a fresh connection:
 * setup, handshake (peers take turns), application data, close. */
#ifndef TLSBENCH_RUNNER_H
#define TLSBENCH_RUNNER_H
#include <stddef.h>
#include "tlsbench/backend.h"
#include "tlsbench/protocol.h"

/* Called once per shipped repetition with its result and trace; non-zero stops the run. */
typedef int (*tb_rep_sink)(void *ctx, const tb_rep_result *r, const tb_trace *t);

typedef struct tb_run_summary {
    uint32_t shipped;
    uint32_t failed;
    /* Why the first failed shipped repetition failed ("" when none failed), e.g.
     * "handshake: server: -0x7780 SSL - ...": the REP header carries only the code. */
    char first_error[TB_REP_REASON_MAX + 1];
    /* Set when the RUN was refused before any repetition (tb_run returned -1): the ERROR
     * code to answer ("unsupported": e.g. an experiment's setup failed), first_error the
     * message. NULL otherwise. */
    const char *refused;
} tb_run_summary;

/* Validates the request against the backend (suite exists and can run, credential fits,
 * record size in range...) or, for an experiment RUN, against the agent's experiments (id
 * in range, size accepted). Returns 0, or -1 with an ERROR code name in *code and a
 * message in err ("unknown_suite", "unsupported", "bad_request"). */
int tb_run_check(const tb_backend *b, const tb_run_request *req, const char **code, char *err, size_t errlen);

/* Called when a RUN's transport is ready for the other agent (a server listens):
 * transport name and where ("127.0.0.1:4433"), so a person or a test can start the client. */
typedef void (*tb_ready_fn)(void *ctx, const char *transport, const char *where);
void tb_run_on_ready(tb_ready_fn fn, void *ctx);

/* `raw` wrapped the way the runner traces a session's I/O: SEND/RECV spans carrying the
 * bytes moved. `raw` must outlive the result. Public so tests that drive sessions without
 * the runner trace exactly what it does. */
tb_io tb_traced_io(tb_io *raw);

/* Runs a request: a handshake RUN, or an experiment RUN (docs/experiments.md). Returns 0,
 * or -1 when the sink asked to stop or the RUN was refused (summary->refused says which). */
int tb_run(const tb_backend *b, const tb_run_request *req, tb_rep_sink sink, void *ctx,
           tb_run_summary *summary);

/* Between two marked repetitions the marker stays low for at least TB_MARKER_MIN_LOW counter
 * units, so a power analyzer sampling at 100 kHz sees two pulses, not one: call
 * tb_marker_wait_low before a marked repetition's START and tb_marker_note_low after its STOP
 * (both outside the repetition's span; no-ops where no marker is driven). */
void tb_marker_wait_low(void);
void tb_marker_note_low(void);

#endif
