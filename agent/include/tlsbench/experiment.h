/* SPDX-License-Identifier: Apache-2.0 */
/* The public experiment API: trace your own device code through the same controller,
 * store and report as the handshakes (docs/experiments.md).
 *
 * An experiment is a setup block run once per RUN and not measured, a measured block the
 * agent repeats (warm-up, then one shipped REP per repetition), named groups marked inside
 * the measured block, and a teardown. The runner wraps each run of the measured block in a
 * MEASURED_BLOCK span inside the REPETITION phase (with the port's marker high, as for a
 * handshake); each group is a USER_GROUP span whose START value is the group's index.
 *
 * A measured block that returns nonzero discards its repetition: it is still shipped, with
 * status DISCARDED and the returned code, and excluded from statistics. Work done between
 * groups (e.g. a known-answer check after the group that produced the result) is inside
 * MEASURED_BLOCK but outside every group, so it never counts toward a group's time. */
#ifndef TLSBENCH_EXPERIMENT_H
#define TLSBENCH_EXPERIMENT_H
#include <stddef.h>
#include <stdint.h>

#define TB_EXPERIMENT_MAX_GROUPS 8

typedef struct tb_experiment {
    const char *name;        /* unique in the agent, [a-z0-9][a-z0-9-]*: "sha256", "ecdsa-p256" */
    const char *description; /* one line, shown in the report */
    /* Names of the groups the measured block marks, e.g. {"sign", "verify"}; unused slots NULL. */
    const char *groups[TB_EXPERIMENT_MAX_GROUPS];
    /* Payload sizes (bytes) run by default, ended by 0; any size from 1 to the largest listed
     * is accepted. NULL: the experiment takes no size (the RUN's size must be 0). */
    const uint32_t *sizes;
    /* Once per RUN, not measured. `size` is the RUN's payload size (0 without sizes).
     * Returns 0 and sets *state, or -1 with a message in err (the RUN is refused). */
    int (*setup)(void **state, uint32_t size, char *err, size_t errlen);
    /* One repetition: marks groups with tb_group_begin/tb_group_end. Returns 0, or a
     * nonzero code to discard the repetition (shipped in the REP's error field). */
    int (*measure)(void *state);
    /* Frees what setup made; may be NULL. Called once per RUN, not measured. */
    void (*teardown)(void *state);
} tb_experiment;

/* Marks group `group` (an index into the running experiment's `groups`). Groups nest and
 * never overlap; each mark is one tracer event (~25 ns, calibrated and subtracted). */
void tb_group_begin(unsigned group);
void tb_group_end(unsigned group);

/* The experiments of an agent binary, each table NULL-terminated. The library's primitives
 * come from its backend (src/primitives/<library>.c); user experiments from the one file a
 * user links in (src/experiments/none.c, an empty table, in the standard agents). HELLO lists
 * primitives first, then user experiments; a RUN names one by its 1-based position there. */
extern const tb_experiment *const tb_library_primitives[];
extern const tb_experiment *const tb_user_experiments[];

#endif
