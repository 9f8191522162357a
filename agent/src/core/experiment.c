/* SPDX-License-Identifier: Apache-2.0 */
/* Experiments: the registry (primitives, then user experiments) and group marks.
 *
 * Group marks are tracer events plus a small stack of open groups, so a wrong index, an end
 * without its begin or a block that returns inside a group never leaves a malformed span in
 * the trace: the faulty mark is not recorded, open groups are closed at the block's end, and
 * the repetition is discarded with a TB_DISCARD_GROUP_* code. The bookkeeping also runs with
 * tracing compiled out, so a repetition's status never depends on the build flavour. */
#include <string.h>

#include "tlsbench/experiment_run.h"
#include "tlsbench/trace.h"

/* ---------------------------------------------------------------- registry */
typedef struct tb_experiment_table {
    const tb_experiment *const *entries;
    const char *source;
} tb_experiment_table;

static const tb_experiment_table tb_tables[] = {
    {tb_library_primitives, "primitive"},
    {tb_user_experiments, "user"},
};
#define TB_N_TABLES (sizeof tb_tables / sizeof tb_tables[0])

static unsigned tb_table_len(const tb_experiment *const *t) {
    unsigned n = 0;
    while (t[n] != NULL)
        n++;
    return n;
}

/* Resolves a 1-based id to its table and position there; NULL when out of range. */
static const tb_experiment_table *tb_locate(unsigned id, unsigned *pos) {
    if (id == 0)
        return NULL;
    unsigned i = id - 1;
    for (size_t k = 0; k < TB_N_TABLES; k++) {
        unsigned n = tb_table_len(tb_tables[k].entries);
        if (i < n) {
            *pos = i;
            return &tb_tables[k];
        }
        i -= n;
    }
    return NULL;
}

unsigned tb_experiment_count(void) {
    unsigned n = 0;
    for (size_t k = 0; k < TB_N_TABLES; k++)
        n += tb_table_len(tb_tables[k].entries);
    return n;
}

const tb_experiment *tb_experiment_get(unsigned id) {
    unsigned pos;
    const tb_experiment_table *t = tb_locate(id, &pos);
    return t ? t->entries[pos] : NULL;
}

const char *tb_experiment_source(unsigned id) {
    unsigned pos;
    const tb_experiment_table *t = tb_locate(id, &pos);
    return t ? t->source : NULL;
}

unsigned tb_experiment_find(const char *name) {
    unsigned n = tb_experiment_count();
    for (unsigned id = 1; id <= n; id++)
        if (strcmp(tb_experiment_get(id)->name, name) == 0)
            return id;
    return 0;
}

unsigned tb_experiment_group_count(const tb_experiment *e) {
    unsigned n = 0;
    while (n < TB_EXPERIMENT_MAX_GROUPS && e->groups[n] != NULL)
        n++;
    return n;
}

uint32_t tb_experiment_max_size(const tb_experiment *e) {
    uint32_t max = 0;
    for (const uint32_t *s = e->sizes; s != NULL && *s != 0; s++)
        max = *s > max ? *s : max;
    return max;
}

static void tb_experiment_json(tb_json *j, unsigned id, const tb_experiment *e) {
    tb_json_begin_object(j);
    tb_json_kv_uint(j, "id", id);
    tb_json_kv_string(j, "name", e->name);
    tb_json_kv_string(j, "description", e->description ? e->description : "");
    tb_json_key(j, "groups");
    tb_json_begin_array(j);
    for (unsigned g = 0; g < tb_experiment_group_count(e); g++)
        tb_json_string(j, e->groups[g]);
    tb_json_end_array(j);
    tb_json_key(j, "sizes");
    tb_json_begin_array(j);
    for (const uint32_t *s = e->sizes; s != NULL && *s != 0; s++)
        tb_json_uint(j, *s);
    tb_json_end_array(j);
    tb_json_kv_string(j, "source", tb_experiment_source(id));
    tb_json_end_object(j);
}

void tb_experiments_json(tb_json *j) {
    tb_json_begin_array(j);
    unsigned n = tb_experiment_count();
    for (unsigned id = 1; id <= n; id++)
        tb_experiment_json(j, id, tb_experiment_get(id));
    tb_json_end_array(j);
}

/* ---------------------------------------------------------------- group marks */
typedef struct tb_group_marks {
    bool armed;
    unsigned n_groups; /* of the running experiment */
    unsigned depth;
    uint8_t open[TB_EXPERIMENT_MAX_GROUPS]; /* indices of the open groups, innermost last */
    int32_t fault;     /* the first TB_DISCARD_GROUP_* of this run of the block, 0 = none */
} tb_group_marks;

static tb_group_marks tb_marks;

static void tb_marks_fault(int32_t code) {
    if (tb_marks.fault == 0)
        tb_marks.fault = code;
}

void tb_group_begin(unsigned group) {
    if (!tb_marks.armed)
        return;
    if (group >= tb_marks.n_groups) {
        tb_marks_fault(TB_DISCARD_GROUP_INDEX);
        return;
    }
    if (tb_marks.depth == TB_EXPERIMENT_MAX_GROUPS) {
        tb_marks_fault(TB_DISCARD_GROUP_DEPTH);
        return;
    }
    tb_marks.open[tb_marks.depth++] = (uint8_t)group;
    tb_trace_emit(TB_L_USER_GROUP, TB_KIND_START, 0, group); /* START value = the index */
}

void tb_group_end(unsigned group) {
    if (!tb_marks.armed)
        return;
    if (group >= tb_marks.n_groups) {
        tb_marks_fault(TB_DISCARD_GROUP_INDEX);
        return;
    }
    if (tb_marks.depth == 0 || tb_marks.open[tb_marks.depth - 1] != group) {
        tb_marks_fault(TB_DISCARD_GROUP_ORDER);
        return;
    }
    tb_marks.depth--;
    tb_end(TB_L_USER_GROUP, group);
}

void tb_groups_arm(const tb_experiment *e) {
    tb_marks = (tb_group_marks){.armed = true, .n_groups = tb_experiment_group_count(e)};
    tb_trace_set_peer(TB_PEER_NONE);
}

int32_t tb_groups_disarm(void) {
    if (tb_marks.depth > 0)
        tb_marks_fault(TB_DISCARD_GROUP_OPEN);
    while (tb_marks.depth > 0)
        tb_end(TB_L_USER_GROUP, tb_marks.open[--tb_marks.depth]);
    tb_marks.armed = false;
    return tb_marks.fault;
}
