/* SPDX-License-Identifier: Apache-2.0 */
/* `run`: suites (one, or all once) or an experiment standalone, with a summary line per
 * configuration, an optional frame file (--out, what `dump` reads) and trace tree (--tree). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tlsbench/experiment_run.h"
#include "tlsbench/messages.h"
#include "tlsbench/protocol.h"
#include "tlsbench/runner.h"

static const tb_backend *const tb_b = &tb_linked_backend;

/* ---------------------------------------------------------------- name tables (from spec_gen.h) */
typedef const char *(*tb_name_fn)(unsigned v);

static int tb_lookup(tb_name_fn fn, unsigned max, const char *name, unsigned *out) {
    for (unsigned v = 0; v <= max; v++) {
        const char *known = fn(v);
        if (known && strcmp(known, name) == 0) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static void tb_print_names(FILE *out, tb_name_fn fn, unsigned max) {
    for (unsigned v = 0, first = 1; v <= max; v++) {
        const char *name = fn(v); /* once: gcc cannot tell that two calls agree */
        if (name) {
            fprintf(out, "%s%s", first ? "" : ", ", name);
            first = 0;
        }
    }
    fputc('\n', out);
}

/* ---------------------------------------------------------------- run: options */
typedef struct tb_cli {
    const char *suite;
    bool all;
    const char *experiment; /* --experiment NAME: an experiment run instead of suites */
    uint32_t size;
    bool size_set;
    tb_run_request req;
    const char *out;
    bool tree;
    bool transport_set, protocol_set;
    uint32_t seen; /* bit i: tb_run_options[i] was given */
} tb_cli;

static int tb_parse_u32(const char *opt, const char *arg, uint32_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 0);
    if (errno || *arg == '-' || *end || end == arg || v > UINT32_MAX) {
        fprintf(stderr, "%s: %s expects a number 0 .. 4294967295, got '%s'\n", TB_AGENT_NAME, opt, arg);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int tb_parse_name(const char *opt, tb_name_fn fn, unsigned max, const char *arg, unsigned *out) {
    if (tb_lookup(fn, max, arg, out) == 0)
        return 0;
    fprintf(stderr, "%s: unknown %s '%s'; allowed: ", TB_AGENT_NAME, opt + 2, arg);
    tb_print_names(stderr, fn, max);
    return -1;
}

static int tb_opt_suite(tb_cli *c, const char *a) { c->suite = a; c->all = strcmp(a, "all") == 0; return 0; }
static int tb_opt_experiment(tb_cli *c, const char *a) { c->experiment = a; return 0; }
static int tb_opt_size(tb_cli *c, const char *a) { c->size_set = true; return tb_parse_u32("--size", a, &c->size); }
static int tb_opt_reps(tb_cli *c, const char *a) { return tb_parse_u32("--reps", a, &c->req.repetitions); }
static int tb_opt_warmup(tb_cli *c, const char *a) { return tb_parse_u32("--warmup", a, &c->req.warmup); }
static int tb_opt_bytes(tb_cli *c, const char *a) { return tb_parse_u32("--bytes", a, &c->req.total_bytes); }
static int tb_opt_record(tb_cli *c, const char *a) { return tb_parse_u32("--record", a, &c->req.record_size); }
static int tb_opt_out(tb_cli *c, const char *a) { c->out = a; return 0; }
static int tb_opt_tree(tb_cli *c, const char *a) { (void)a; c->tree = true; return 0; }

/* A RUN byte field from one of its spec names. */
static int tb_parse_u8_name(const char *opt, tb_name_fn fn, const char *arg, uint8_t *field) {
    unsigned v = 0;
    int rc = tb_parse_name(opt, fn, 255, arg, &v);
    *field = (uint8_t)v;
    return rc;
}

static int tb_opt_group(tb_cli *c, const char *a) {
    unsigned v = 0;
    int rc = tb_parse_name("--group", tb_group_name, 65535, a, &v);
    c->req.group = (uint16_t)v;
    return rc;
}
static int tb_opt_credential(tb_cli *c, const char *a) {
    return tb_parse_u8_name("--credential", tb_credential_name, a, &c->req.credential);
}
static int tb_opt_transport(tb_cli *c, const char *a) {
    c->transport_set = true;
    return tb_parse_u8_name("--transport", tb_transport_name, a, &c->req.transport);
}
static int tb_opt_role(tb_cli *c, const char *a) { return tb_parse_u8_name("--role", tb_role_name, a, &c->req.role); }
static int tb_opt_protocol(tb_cli *c, const char *a) {
    c->protocol_set = true;
    return tb_parse_u8_name("--protocol", tb_protocol_kind_name, a, &c->req.protocol);
}

/* HOST:PORT with a numeric IPv4 host, or [IPv6]:PORT. */
static int tb_opt_peer(tb_cli *c, const char *a) {
    char host[64];
    const char *colon = strrchr(a, ':');
    size_t hlen = colon ? (size_t)(colon - a) : 0;
    uint32_t port = 0;
    if (colon && hlen > 2 && a[0] == '[' && a[hlen - 1] == ']') {
        a++;
        hlen -= 2;
    }
    if (!colon || hlen == 0 || hlen >= sizeof host || tb_parse_u32("--peer", colon + 1, &port) != 0 || port > 65535) {
        fprintf(stderr, "%s: --peer expects HOST:PORT (127.0.0.1:4433, [::1]:4433), got '%s'\n", TB_AGENT_NAME, a);
        return -1;
    }
    memcpy(host, a, hlen);
    host[hlen] = '\0';
    memset(c->req.addr, 0, sizeof c->req.addr);
    if (inet_pton(AF_INET, host, c->req.addr) == 1)
        c->req.family = 4;
    else if (inet_pton(AF_INET6, host, c->req.addr) == 1)
        c->req.family = 6;
    else {
        fprintf(stderr, "%s: --peer: '%s' is not a numeric IPv4 or IPv6 address\n", TB_AGENT_NAME, host);
        return -1;
    }
    c->req.port = (uint16_t)port;
    return 0;
}

static int tb_parse_u16(const char *opt, const char *arg, uint16_t *out) {
    uint32_t v = 0;
    if (tb_parse_u32(opt, arg, &v) != 0 || v > 65535) {
        fprintf(stderr, "%s: %s expects 0 .. 65535\n", TB_AGENT_NAME, opt);
        return -1;
    }
    *out = (uint16_t)v;
    return 0;
}
static int tb_opt_mss(tb_cli *c, const char *a) { return tb_parse_u16("--mss", a, &c->req.tcp_mss); }
static int tb_opt_mtu(tb_cli *c, const char *a) { return tb_parse_u16("--mtu", a, &c->req.dtls_mtu); }
static int tb_opt_tmin(tb_cli *c, const char *a) { return tb_parse_u16("--dtls-timeout-min", a, &c->req.dtls_timeout_min_ms); }
static int tb_opt_tmax(tb_cli *c, const char *a) { return tb_parse_u16("--dtls-timeout-max", a, &c->req.dtls_timeout_max_ms); }
static int tb_opt_mfl(tb_cli *c, const char *a) {
    static const uint32_t sizes[] = {0, 512, 1024, 2048, 4096}; /* RFC 6066 codes 0 (none) .. 4 */
    uint32_t v = 0;
    if (tb_parse_u32("--max-fragment", a, &v) != 0)
        return -1;
    for (uint8_t code = 0; code < sizeof sizes / sizeof sizes[0]; code++)
        if (sizes[code] == v) {
            c->req.max_fragment = code;
            return 0;
        }
    fprintf(stderr, "%s: --max-fragment expects 0 (none), 512, 1024, 2048 or 4096\n", TB_AGENT_NAME);
    return -1;
}
static int tb_opt_cookies(tb_cli *c, const char *a) { (void)a; c->req.options |= TB_OPTION_DTLS_COOKIES; return 0; }
static int tb_opt_nodelay(tb_cli *c, const char *a) { (void)a; c->req.options |= TB_OPTION_NODELAY; return 0; }
static int tb_opt_quickack(tb_cli *c, const char *a) { (void)a; c->req.options |= TB_OPTION_QUICKACK; return 0; }
static int tb_opt_cold(tb_cli *c, const char *a) { (void)a; c->req.options |= TB_OPTION_COLD_CACHES; return 0; }
/* Any RUN option by its spec name (MUTUAL_AUTH, RESUME, ...); repeat it for several. */
static int tb_opt_option(tb_cli *c, const char *a) {
    unsigned bit = 0;
    int rc = tb_parse_name("--option", tb_option_name, 0xFFFF, a, &bit);
    c->req.options |= (uint8_t)bit;
    c->req.options_high |= (uint8_t)(bit >> 8);
    return rc;
}

static int tb_opt_direction(tb_cli *c, const char *a) {
    return tb_parse_u8_name("--direction", tb_direction_name, a, &c->req.direction);
}

/* Which runs an option applies to. */
enum { TB_FOR_SUITE = 0, TB_FOR_EXPERIMENT = 1, TB_FOR_ANY = 2 };

typedef struct tb_option {
    const char *name;
    const char *metavar; /* NULL: a flag without argument */
    const char *help;
    int (*parse)(tb_cli *c, const char *arg);
    uint8_t scope;
} tb_option;

static const tb_option tb_run_options[] = {
    {"--suite", "NAME|0xID|all", "suite to run; 'all' runs every suite once", tb_opt_suite, TB_FOR_SUITE},
    {"--experiment", "NAME", "run an experiment instead (list them with 'experiments')", tb_opt_experiment,
     TB_FOR_EXPERIMENT},
    {"--size", "N", "experiment payload size (default: each size it lists)", tb_opt_size, TB_FOR_EXPERIMENT},
    {"--reps", "N", "shipped repetitions (default 10)", tb_opt_reps, TB_FOR_ANY},
    {"--warmup", "N", "warm-up repetitions, not shipped (default 1)", tb_opt_warmup, TB_FOR_ANY},
    {"--group", "NAME", "key-exchange group (default: the suite's default)", tb_opt_group, TB_FOR_SUITE},
    {"--credential", "NAME", "credential (default auto)", tb_opt_credential, TB_FOR_SUITE},
    {"--bytes", "N", "application bytes per direction (default 10000)", tb_opt_bytes, TB_FOR_SUITE},
    {"--record", "N", "record size, 1 .. 16384 (default 1000)", tb_opt_record, TB_FOR_SUITE},
    {"--direction", "NAME", "none, c2s, s2c or both (default both)", tb_opt_direction, TB_FOR_SUITE},
    {"--transport", "NAME", "memory (both peers here), tcp or udp (one peer; the other agent is another process)",
     tb_opt_transport, TB_FOR_SUITE},
    {"--role", "NAME", "client or server: the peer this agent plays over tcp/udp", tb_opt_role, TB_FOR_SUITE},
    {"--peer", "HOST:PORT", "the server's endpoint (server: where to bind; port 0 = any free port)",
     tb_opt_peer, TB_FOR_SUITE},
    {"--protocol", "NAME", "tls or dtls (default: dtls over udp, tls otherwise)", tb_opt_protocol, TB_FOR_SUITE},
    {"--cookies", NULL, "DTLS: the server demands a cookie (HelloVerifyRequest)", tb_opt_cookies, TB_FOR_SUITE},
    {"--dtls-timeout-min", "MS", "DTLS initial retransmission timeout (default: the library's)",
     tb_opt_tmin, TB_FOR_SUITE},
    {"--dtls-timeout-max", "MS", "DTLS maximum retransmission timeout (default: the library's)",
     tb_opt_tmax, TB_FOR_SUITE},
    {"--mtu", "BYTES", "DTLS handshake MTU (default: the library's)", tb_opt_mtu, TB_FOR_SUITE},
    {"--max-fragment", "BYTES", "max_fragment_length extension: 512, 1024, 2048 or 4096",
     tb_opt_mfl, TB_FOR_SUITE},
    {"--nodelay", NULL, "TCP_NODELAY: Nagle off", tb_opt_nodelay, TB_FOR_SUITE},
    {"--quickack", NULL, "TCP_QUICKACK: no delayed ACKs", tb_opt_quickack, TB_FOR_SUITE},
    {"--mss", "BYTES", "TCP_MAXSEG", tb_opt_mss, TB_FOR_SUITE},
    {"--cold-caches", NULL, "empty the library's precomputation caches before each connection",
     tb_opt_cold, TB_FOR_SUITE},
    {"--option", "NAME", "a RUN option by its spec name (MUTUAL_AUTH, RESUME, RESUME_ID, PSK_ONLY, ...); "
     "repeat for several", tb_opt_option, TB_FOR_SUITE},
    {"--out", "FILE", "also write the frame stream (HELLO, SUITES, REP..., DONE) to FILE", tb_opt_out, TB_FOR_ANY},
    {"--tree", NULL, "print the first repetition's trace as a tree", tb_opt_tree, TB_FOR_ANY},
};
#define TB_N_RUN_OPTIONS (sizeof tb_run_options / sizeof tb_run_options[0])

_Static_assert(TB_N_RUN_OPTIONS <= 32, "tb_cli.seen holds one bit per run option");

/* Every option given must apply to the kind of run asked for (suites or an experiment). */
static int tb_check_scope(const tb_cli *c) {
    uint8_t wrong = c->experiment ? TB_FOR_SUITE : TB_FOR_EXPERIMENT;
    for (size_t k = 0; k < TB_N_RUN_OPTIONS; k++)
        if ((c->seen >> k & 1u) && tb_run_options[k].scope == wrong) {
            fprintf(stderr, "%s: %s %s\n", TB_AGENT_NAME, tb_run_options[k].name,
                    c->experiment ? "does not apply to --experiment runs" : "needs --experiment NAME");
            return -1;
        }
    return 0;
}

static int tb_parse_run_args(int argc, char **argv, tb_cli *c) {
    for (int i = 0; i < argc; i++) {
        const tb_option *o = NULL;
        for (size_t k = 0; k < TB_N_RUN_OPTIONS && !o; k++)
            if (strcmp(argv[i], tb_run_options[k].name) == 0)
                o = &tb_run_options[k];
        if (!o) {
            fprintf(stderr, "%s: unknown option '%s' (see '%s help')\n", TB_AGENT_NAME, argv[i], TB_AGENT_NAME);
            return -1;
        }
        if (o->metavar && i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value (%s)\n", TB_AGENT_NAME, o->name, o->metavar);
            return -1;
        }
        if (o->parse(c, o->metavar ? argv[++i] : NULL) != 0)
            return -1;
        c->seen |= 1u << (o - tb_run_options);
    }
    if (tb_check_scope(c) != 0)
        return -1;
    if (c->experiment)
        return 0;
    if (!c->suite) {
        fprintf(stderr, "%s: run needs --suite NAME|0xID|all or --experiment NAME (list them with '%s suites' "
                "or '%s experiments')\n", TB_AGENT_NAME, TB_AGENT_NAME, TB_AGENT_NAME);
        return -1;
    }
    if (!c->protocol_set) /* DTLS is what runs over UDP */
        c->req.protocol = c->req.transport == TB_TRANSPORT_UDP ? TB_PROTOCOL_KIND_DTLS : TB_PROTOCOL_KIND_TLS;
    if (c->req.transport != TB_TRANSPORT_MEMORY && (c->req.role == TB_ROLE_BOTH || c->req.family == 0)) {
        fprintf(stderr, "%s: --transport %s needs --role client|server and --peer HOST:PORT\n", TB_AGENT_NAME,
                tb_transport_name(c->req.transport));
        return -1;
    }
    return 0;
}

/* A server agent says where it listens once it does: the other agent may start now. */
static void tb_ready_stderr(void *ctx, const char *transport, const char *where) {
    (void)ctx;
    fprintf(stderr, "%s: listening on %s %s\n", TB_AGENT_NAME, transport, where);
    fflush(stderr);
}

static const tb_suite_info *tb_find_suite(const char *arg) {
    char *end;
    unsigned long id = strtoul(arg, &end, 16);
    if ((arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) && *end == '\0' && end != arg + 2 && id <= 0xffff)
        return tb_suite_by_id(tb_b, (uint16_t)id);
    return tb_suite_by_name(tb_b, arg);
}

/* ---------------------------------------------------------------- run: execution */
typedef struct tb_run_ctx {
    tb_channel *file;   /* NULL without --out */
    bool tree;
    const tb_experiment *e; /* an experiment run: name its groups, time them */
    uint64_t *cpu_ns;   /* handshake (or measured block) CPU time of each OK repetition */
    uint64_t *wall_ns;
    uint64_t *group_ns; /* experiment: per OK repetition, TB_EXPERIMENT_MAX_GROUPS totals */
    uint32_t n_ok;
    int write_failed;
} tb_run_ctx;

/* Adds each USER_GROUP span's duration to its group's total (groups may repeat and nest). */
static void tb_group_totals(const tb_trace *t, uint64_t totals[TB_EXPERIMENT_MAX_GROUPS]) {
    uint32_t stack[64];
    uint32_t depth = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tb_record *r = &t->records[i];
        if (r->kind == TB_KIND_START && depth < sizeof stack / sizeof stack[0])
            stack[depth++] = i;
        if (r->kind != TB_KIND_STOP || depth == 0)
            continue;
        const tb_record *start = &t->records[stack[--depth]];
        if (start->label == TB_L_USER_GROUP && start->value < TB_EXPERIMENT_MAX_GROUPS)
            totals[start->value] += r->t_ns - start->t_ns;
    }
}

static int tb_sink_cli(void *ctx, const tb_rep_result *r, const tb_trace *t) {
    tb_run_ctx *c = ctx;
    if (c->tree) {
        tb_print_tree(stdout, t->records, t->count, c->e);
        c->tree = false;
    }
    if (r->status == TB_STATUS_OK) {
        if (c->e)
            tb_group_totals(t, &c->group_ns[(size_t)c->n_ok * TB_EXPERIMENT_MAX_GROUPS]);
        c->cpu_ns[c->n_ok] = r->handshake_cpu_ns;
        c->wall_ns[c->n_ok++] = r->handshake_wall_ns;
    }
    if (c->file && tb_send_rep(c->file, r, t) != 0)
        c->write_failed = 1;
    return c->write_failed;
}

static int tb_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double tb_median_us(uint64_t *v, uint32_t n) {
    qsort(v, n, sizeof *v, tb_cmp_u64);
    return n % 2 ? (double)v[n / 2] / 1000.0 : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2000.0;
}

/* "; groups: encode 1.2 µs, check 0.1 µs": each group's median total per OK repetition. */
static void tb_print_group_medians(const tb_run_ctx *c) {
    unsigned n = tb_experiment_group_count(c->e);
    if (n == 0 || c->n_ok == 0 || !TB_TRACE_ENABLED)
        return;
    uint64_t *v = malloc((size_t)c->n_ok * sizeof *v);
    if (!v)
        return;
    printf("; groups:");
    for (unsigned g = 0; g < n; g++) {
        for (uint32_t i = 0; i < c->n_ok; i++)
            v[i] = c->group_ns[(size_t)i * TB_EXPERIMENT_MAX_GROUPS + g];
        printf("%s %s %.2f µs", g ? "," : "", c->e->groups[g], tb_median_us(v, c->n_ok));
    }
    free(v);
}

static bool tb_run_ctx_alloc(tb_run_ctx *ctx, uint32_t reps) {
    ctx->cpu_ns = calloc(reps, sizeof *ctx->cpu_ns);
    ctx->wall_ns = calloc(reps, sizeof *ctx->wall_ns);
    ctx->group_ns = calloc((size_t)reps * TB_EXPERIMENT_MAX_GROUPS, sizeof *ctx->group_ns);
    return ctx->cpu_ns && ctx->wall_ns && ctx->group_ns;
}

static void tb_run_ctx_free(tb_run_ctx *ctx) {
    free(ctx->cpu_ns);
    free(ctx->wall_ns);
    free(ctx->group_ns);
}

static void tb_print_summary(const tb_run_ctx *ctx, const tb_run_summary *sum, const char *title) {
    const char *what = ctx->e ? "block" : "handshake";
    const char *failed = ctx->e ? "discarded" : "failed";
    printf("%-12s %-48s reps %u, ok %u, %s %u", sum->failed ? "FAILED" : "OK", title, (unsigned)sum->shipped,
           (unsigned)ctx->n_ok, failed, (unsigned)sum->failed);
    if (ctx->n_ok > 0)
        printf(", median %s CPU %.1f µs (wall %.1f µs)", what, tb_median_us(ctx->cpu_ns, ctx->n_ok),
               tb_median_us(ctx->wall_ns, ctx->n_ok));
    if (ctx->e)
        tb_print_group_medians(ctx);
    printf("\n");
    if (sum->failed)
        printf("%-12s %-48s first %s: %s\n", "", "", ctx->e ? "discard" : "failure", sum->first_error);
}

/* Runs one request (a suite, or an experiment at one size); prints the summary line; returns
 * the number of failed repetitions, or -1 when it could not run (check failed, refused,
 * out of memory, output file error). An experiment's RUN goes to the frame file too, so
 * `dump` can tell which experiment its REPs belong to. */
static int tb_run_one(const tb_cli *c, tb_run_request req, const char *title, const tb_experiment *e,
                      tb_channel *file) {
    const char *code;
    char err[256];
    char derr[160];
    uint8_t wire[TB_RUN_REQUEST_SIZE];
    tb_run_request_encode(&req, wire); /* the same checks as a controller's RUN */
    if (tb_run_request_decode(wire, sizeof wire, &req, derr, sizeof derr) != 0) {
        printf("%-12s %-48s bad_request: %s\n", "ERROR", title, derr);
        return -1;
    }
    if (tb_run_check(tb_b, &req, &code, err, sizeof err) != 0) {
        printf("%-12s %-48s %s: %s\n", strcmp(code, "unsupported") ? "ERROR" : "UNSUPPORTED", title, code, err);
        return -1;
    }
    if (e && file && tb_frame_write(file, TB_FRAME_RUN, &(tb_part){wire, sizeof wire}, 1) != 0)
        return -1;
    tb_run_ctx ctx = {.file = file, .tree = c->tree, .e = e};
    tb_run_summary sum;
    int rc = -1;
    if (!tb_run_ctx_alloc(&ctx, req.repetitions))
        fprintf(stderr, "%s: out of memory for %u repetitions\n", TB_AGENT_NAME, (unsigned)req.repetitions);
    else if (tb_run(tb_b, &req, tb_sink_cli, &ctx, &sum) != 0 && sum.refused)
        printf("%-12s %-48s %s: %s\n", "UNSUPPORTED", title, sum.refused, sum.first_error);
    else if (ctx.write_failed || (file && tb_send_done(file, req.config_id, &sum)))
        fprintf(stderr, "%s: writing the frame file failed\n", TB_AGENT_NAME);
    else
        rc = (int)sum.failed;
    if (rc >= 0)
        tb_print_summary(&ctx, &sum, title);
    tb_run_ctx_free(&ctx);
    return rc;
}

static int tb_run_suite(const tb_cli *c, const tb_suite_info *s, uint32_t config_id, tb_channel *file) {
    tb_run_request req = c->req;
    req.suite_id = s->id;
    req.config_id = config_id;
    return tb_run_one(c, req, s->name, NULL, file);
}

/* An experiment at one size: memory, both roles, no suite; record_size is ignored (1). */
static int tb_run_experiment_size(const tb_cli *c, unsigned id, uint32_t size, uint32_t config_id,
                                  tb_channel *file) {
    const tb_experiment *e = tb_experiment_get(id);
    tb_run_request req = {.config_id = config_id, .experiment = (uint16_t)id, .total_bytes = size,
                          .record_size = 1, .repetitions = c->req.repetitions, .warmup = c->req.warmup,
                          .direction = TB_DIRECTION_NONE, .transport = TB_TRANSPORT_MEMORY,
                          .role = TB_ROLE_BOTH, .protocol = TB_PROTOCOL_KIND_TLS};
    char title[64];
    snprintf(title, sizeof title, size ? "%s size %u" : "%s", e->name, (unsigned)size);
    return tb_run_one(c, req, title, e, file);
}

/* --size N, else every size the experiment lists, else size 0. */
static int tb_run_experiment_cli(tb_cli *c, unsigned id, tb_channel *file) {
    const tb_experiment *e = tb_experiment_get(id);
    static const uint32_t no_size[] = {0, 0};
    const uint32_t *sizes = c->size_set || tb_experiment_max_size(e) == 0 ? no_size : e->sizes;
    uint32_t config_id = 0;
    int failed = 0;
    for (const uint32_t *s = sizes; (s == sizes || *s != 0) && !failed; s++, config_id++) {
        int rc = tb_run_experiment_size(c, id, c->size_set ? c->size : *s, config_id, file);
        failed |= rc != 0;
        c->tree = false;
    }
    return failed;
}

static unsigned tb_find_experiment(const char *name) {
    unsigned id = tb_experiment_find(name);
    if (id == 0) {
        fprintf(stderr, "%s: unknown experiment '%s'; this agent has:", TB_AGENT_NAME, name);
        for (unsigned i = 1; i <= tb_experiment_count(); i++)
            fprintf(stderr, " %s", tb_experiment_get(i)->name);
        fprintf(stderr, "%s\n", tb_experiment_count() ? "" : " none");
    }
    return id;
}

int tb_cmd_run(int argc, char **argv) {
    tb_cli c = {.req = {.repetitions = 10, .warmup = 1, .total_bytes = 10000, .record_size = 1000,
                        .direction = TB_DIRECTION_BOTH, .transport = TB_TRANSPORT_MEMORY}};
    if (tb_parse_run_args(argc, argv, &c) != 0)
        return TB_EXIT_USAGE;
    unsigned experiment = c.experiment ? tb_find_experiment(c.experiment) : 0;
    if (c.experiment && experiment == 0)
        return TB_EXIT_USAGE;
    const tb_suite_info *one = c.all || c.experiment ? NULL : tb_find_suite(c.suite);
    if (!c.experiment && !c.all && !one) {
        fprintf(stderr, "%s: unknown suite '%s' in this %s build; list them with '%s suites'\n", TB_AGENT_NAME,
                c.suite, tb_b->library_name, TB_AGENT_NAME);
        return TB_EXIT_USAGE;
    }
    if (c.req.record_size < 1 || c.req.record_size > TB_MAX_RECORD_SIZE || c.req.repetitions == 0) {
        fprintf(stderr, "%s: --record must be 1 .. %u and --reps at least 1\n", TB_AGENT_NAME,
                (unsigned)TB_MAX_RECORD_SIZE);
        return TB_EXIT_USAGE;
    }
    tb_run_on_ready(tb_ready_stderr, NULL);
    if (c.all) { /* every suite once: a build's smoke test */
        c.req.repetitions = 1;
        c.req.warmup = 0;
    }
    FILE *out = c.out ? fopen(c.out, "wb") : NULL;
    if (c.out && !out) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", TB_AGENT_NAME, c.out, strerror(errno));
        return TB_EXIT_USAGE;
    }
    if (tb_cli_start() != 0) {
        if (out)
            fclose(out);
        return TB_EXIT_FAILED;
    }
    tb_channel file = tb_file_channel(out);
    tb_channel *fch = out ? &file : NULL;
    int failed = 0;
    if (fch) {
        tb_agent_calibrate(&tb_cli_agent);
        failed |= tb_send_hello(fch, &tb_cli_agent) || tb_send_suites(fch, tb_b);
    }
    if (experiment && !failed)
        failed = tb_run_experiment_cli(&c, experiment, fch);
    for (size_t i = 0, n = c.all ? tb_b->suite_count() : 1; !experiment && i < n && !failed; i++) {
        int rc = tb_run_suite(&c, c.all ? tb_b->suite_at(i) : one, (uint32_t)i, fch);
        failed |= rc > 0 || (rc < 0 && !c.all);
        c.tree = false;
    }
    if (out && fclose(out) != 0)
        failed = 1;
    tb_b->deinit();
    return failed ? TB_EXIT_FAILED : TB_EXIT_OK;
}


void tb_run_help(FILE *out) {
    for (size_t i = 0; i < TB_N_RUN_OPTIONS; i++)
        fprintf(out, "  %-13s %-15s %s\n", tb_run_options[i].name,
                tb_run_options[i].metavar ? tb_run_options[i].metavar : "", tb_run_options[i].help);
}
