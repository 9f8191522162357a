/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's side of the experiment API (experiment.h): the registry HELLO and RUN number
 * experiments by, and the bookkeeping that keeps a measured block's group marks well formed. */
#ifndef TLSBENCH_EXPERIMENT_RUN_H
#define TLSBENCH_EXPERIMENT_RUN_H
#include <stdint.h>
#include "tlsbench/experiment.h"
#include "tlsbench/json.h"
#include "tlsbench/runner.h"

/* Codes a repetition is DISCARDED with when the block returned 0 but marked its groups
 * wrongly (docs/experiments.md). A nonzero return of the block always wins over these. */
#define TB_DISCARD_GROUP_INDEX (-1000001) /* begin/end with an index outside `groups` */
#define TB_DISCARD_GROUP_ORDER (-1000002) /* end of a group that is not the innermost open one */
#define TB_DISCARD_GROUP_OPEN  (-1000003) /* the block returned with groups still open */
#define TB_DISCARD_GROUP_DEPTH (-1000004) /* more than TB_EXPERIMENT_MAX_GROUPS nested groups */

/* Primitives, then user experiments; ids are 1-based positions in that order (RUN offset 66). */
unsigned tb_experiment_count(void);
const tb_experiment *tb_experiment_get(unsigned id); /* NULL when out of range */
const char *tb_experiment_source(unsigned id);       /* "primitive" or "user" */
unsigned tb_experiment_find(const char *name);       /* its id, 0 when unknown */
unsigned tb_experiment_group_count(const tb_experiment *e);
uint32_t tb_experiment_max_size(const tb_experiment *e); /* 0 without sizes */

/* Appends HELLO's `experiments` array (the value only: the caller writes the key). */
void tb_experiments_json(tb_json *j);

/* Around one run of a measured block: arm with the experiment, run it, then disarm, which
 * closes (in the trace) any group left open and returns 0 or a TB_DISCARD_GROUP_* code.
 * Outside an armed block, tb_group_begin/end do nothing. */
void tb_groups_arm(const tb_experiment *e);
int32_t tb_groups_disarm(void);

/* The experiment half of tb_run_check and tb_run (runner.h), for requests with experiment != 0.
 * tb_experiment_run refuses the RUN (summary->refused = "unsupported", -1) when setup fails. */
int tb_experiment_check(const tb_run_request *req, const char **code, char *err, size_t errlen);
int tb_experiment_run(const tb_run_request *req, tb_rep_sink sink, void *ctx, tb_run_summary *summary);

#endif
