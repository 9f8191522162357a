/* SPDX-License-Identifier: Apache-2.0 */
/* The posix command line of an agent binary (src/posix/cli/): `serve` on stdin/stdout, `run`
 * standalone, `suites`, `experiments`, `dump`. A host tool: a device needs none of it. */
#ifndef TLSBENCH_CLI_H
#define TLSBENCH_CLI_H
#include <stdint.h>
#include <stdio.h>

#include "tlsbench/experiment.h"
#include "tlsbench/serve.h"
#include "tlsbench/trace.h"

#ifndef TB_AGENT_NAME
#define TB_AGENT_NAME "tlsbench-agent"
#endif

extern tb_agent tb_cli_agent; /* this binary: TB_AGENT_NAME over the linked backend */

/* Starts the agent's backend; says why on stderr when it cannot: 0 or -1. */
int tb_cli_start(void);

/* A channel over a stdio file (`run --out`, `dump`). */
tb_channel tb_file_channel(FILE *f);

/* One repetition's records as an indented tree of spans; USER_GROUP spans named after the
 * experiment's groups when it is known. */
void tb_print_tree(FILE *out, const tb_record *r, uint32_t n, const tb_experiment *e);

int tb_cmd_run(int argc, char **argv);
void tb_run_help(FILE *out); /* the run options, for `help` */
int tb_cmd_dump(int argc, char **argv);

#endif
