/* SPDX-License-Identifier: Apache-2.0 */
/* `dump FILE`: every frame of a frame file (`run --out`), each repetition as a trace tree. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tlsbench/experiment_run.h"
#include "tlsbench/protocol.h"

/* ---------------------------------------------------------------- trace tree */
static void tb_value_text(uint64_t v, char *buf, size_t len) {
    if ((int64_t)v < 0) /* a library error code: bytes never have the top bit set */
        snprintf(buf, len, "ret=-0x%" PRIX64, (uint64_t)(-(int64_t)v));
    else if (v != 0)
        snprintf(buf, len, "value=%" PRIu64, v);
    else
        buf[0] = '\0';
}

/* The STOP matching the START at i (same nesting level), or n when it was dropped. */
static uint32_t tb_matching_stop(const tb_record *r, uint32_t n, uint32_t i) {
    uint32_t depth = 0;
    for (uint32_t k = i + 1; k < n; k++) {
        if (r[k].kind == TB_KIND_START)
            depth++;
        else if (r[k].kind == TB_KIND_STOP && depth-- == 0)
            return k;
    }
    return n;
}

/* A record's name in the tree: its label, and for a USER_GROUP the group's name when the
 * experiment is known (else its index). */
static void tb_record_name(const tb_record *r, const tb_experiment *e, char *buf, size_t len) {
    const char *label = tb_label_name(r->label);
    unsigned g = (unsigned)r->value;
    if (r->label != TB_L_USER_GROUP)
        snprintf(buf, len, "%s", label ? label : "?");
    else if (e && r->value < tb_experiment_group_count(e))
        snprintf(buf, len, "%s %s", label, e->groups[g]);
    else
        snprintf(buf, len, "%s #%" PRIu64, label, r->value);
}

void tb_print_tree(FILE *out, const tb_record *r, uint32_t n, const tb_experiment *e) {
    int depth = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].kind == TB_KIND_STOP) {
            depth -= depth > 0;
            continue;
        }
        char label[48], name[64], value[48], dur[32] = "         ?", cpu[40] = "";
        const char *peer = tb_peer_name(r[i].peer);
        uint32_t k = r[i].kind == TB_KIND_START ? tb_matching_stop(r, n, i) : n;
        tb_record_name(&r[i], e, label, sizeof label);
        snprintf(name, sizeof name, "%*s%s", depth * 2, "", label);
        tb_value_text(k < n ? r[k].value : r[i].value, value, sizeof value);
        if (r[i].label == TB_L_USER_GROUP) /* its value is the index, already in the name */
            value[0] = '\0';
        if (k < n)
            snprintf(dur, sizeof dur, "%10.3f", (double)(r[k].t_ns - r[i].t_ns) / 1000.0);
        if (k < n && r[i].cpu_ns && r[k].cpu_ns)
            snprintf(cpu, sizeof cpu, " cpu %.3f µs", (double)(r[k].cpu_ns - r[i].cpu_ns) / 1000.0);
        if (r[i].kind == TB_KIND_INSTANT)
            snprintf(dur, sizeof dur, "   instant");
        fprintf(out, "%-40s %-6s %s µs%s %s\n", name, peer ? peer : "?", dur, cpu, value);
        depth += r[i].kind == TB_KIND_START;
    }
}

/* ---------------------------------------------------------------- dump */
/* What dump knows about the REPs that follow: group names come from this binary's own
 * experiments, so only when the file's HELLO is this agent's and a RUN frame (written by
 * `run --experiment --out`) named the experiment. */
typedef struct tb_dump_ctx {
    bool same_agent;
    uint32_t config_id;
    const tb_experiment *e;
} tb_dump_ctx;

static void tb_dump_hello(tb_dump_ctx *d, const tb_frame *f) {
    static const char mine[] = "\"agent\":\"" TB_AGENT_NAME "\"";
    d->same_agent = false;
    for (uint32_t i = 0; i + sizeof mine - 1 <= f->length && !d->same_agent; i++)
        d->same_agent = memcmp(f->payload + i, mine, sizeof mine - 1) == 0;
}

static void tb_dump_run(tb_dump_ctx *d, const tb_frame *f) {
    tb_run_request req;
    char err[160];
    d->e = NULL;
    if (tb_run_request_decode(f->payload, f->length, &req, err, sizeof err) != 0)
        return;
    d->config_id = req.config_id;
    d->e = d->same_agent ? tb_experiment_get(req.experiment) : NULL;
    if (d->e)
        printf("# RUN config %u: experiment %s, size %u\n", (unsigned)req.config_id, d->e->name,
               (unsigned)req.total_bytes);
}

static int tb_dump_rep(const tb_dump_ctx *d, const tb_frame *f) {
    tb_rep_result r;
    uint32_t n, dropped;
    if (tb_rep_header_decode(f->payload, f->length, &r, &n, &dropped) != 0)
        return -1;
    const char *status = tb_status_name(r.status);
    printf("REP config %u index %u status %s peer %s error %d flags 0x%x records %u dropped %u\n"
           "    bytes c2s %" PRIu64 " s2c %" PRIu64 ", packets c2s %u s2c %u, retransmissions %u, role %s\n"
           "    handshake wall %.3f µs cpu %.3f µs, repetition wall %.3f µs, client port %u server port %u\n",
           (unsigned)r.config_id, (unsigned)r.index, status ? status : "?",
           tb_peer_name(r.failed_peer) ? tb_peer_name(r.failed_peer) : "?", (int)r.error_code, (unsigned)r.flags,
           (unsigned)n, (unsigned)dropped, r.bytes_c2s, r.bytes_s2c, (unsigned)r.packets_c2s,
           (unsigned)r.packets_s2c, (unsigned)r.retransmissions, tb_role_name(r.role) ? tb_role_name(r.role) : "?",
           (double)r.handshake_wall_ns / 1000.0, (double)r.handshake_cpu_ns / 1000.0,
           (double)r.repetition_wall_ns / 1000.0, (unsigned)r.client_port, (unsigned)r.server_port);
    if (r.reason[0])
        printf("    reason: %s\n", r.reason);
    tb_record *recs = n ? malloc((size_t)n * sizeof *recs) : NULL;
    if (n && !recs)
        return -1;
    if (n)
        memcpy(recs, f->payload + TB_REP_HEADER_SIZE, (size_t)n * sizeof *recs); /* payload may be unaligned */
    tb_print_tree(stdout, recs, n, d->e && d->config_id == r.config_id ? d->e : NULL);
    free(recs);
    return 0;
}

int tb_cmd_dump(int argc, char **argv) {
    if (argc != 1) {
        fprintf(stderr, "%s: usage: %s dump FILE\n", TB_AGENT_NAME, TB_AGENT_NAME);
        return TB_EXIT_USAGE;
    }
    FILE *in = fopen(argv[0], "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot read '%s': %s\n", TB_AGENT_NAME, argv[0], strerror(errno));
        return TB_EXIT_USAGE;
    }
    size_t cap = (size_t)TB_MAX_PAYLOAD + TB_FRAME_HEADER_SIZE + TB_FRAME_TRAILER_SIZE;
    uint8_t *buf = malloc(cap);
    tb_channel ch = tb_file_channel(in);
    tb_dump_ctx d = {0};
    int rc = buf ? TB_EXIT_OK : TB_EXIT_FAILED;
    for (uint64_t offset = 0; rc == TB_EXIT_OK;) {
        tb_frame f;
        tb_frame_status st = tb_frame_read(&ch, buf, cap, &f);
        if (st == TB_FRAME_END)
            break;
        if (st != TB_FRAME_OK || (f.type == TB_FRAME_REP && tb_dump_rep(&d, &f) != 0)) {
            fprintf(stderr, "%s: %s: %s in the frame at offset %" PRIu64 "\n", TB_AGENT_NAME, argv[0],
                    st != TB_FRAME_OK ? tb_frame_status_text(st) : "malformed REP payload", offset);
            rc = TB_EXIT_PROTOCOL;
            break;
        }
        if (f.type == TB_FRAME_HELLO)
            tb_dump_hello(&d, &f);
        if (f.type == TB_FRAME_RUN)
            tb_dump_run(&d, &f);
        if (f.type == TB_FRAME_SUITES)
            printf("# SUITES (%u bytes of JSON)\n", (unsigned)f.length);
        else if (f.type != TB_FRAME_REP && f.type != TB_FRAME_RUN && f.type != TB_FRAME_QUIT)
            printf("# %.*s\n", (int)f.length, (const char *)f.payload);
        offset += (uint64_t)TB_FRAME_HEADER_SIZE + f.length + TB_FRAME_TRAILER_SIZE;
    }
    free(buf);
    fclose(in);
    return rc;
}

