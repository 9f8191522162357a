/* SPDX-License-Identifier: Apache-2.0 */
/* tlsbench-link: a userspace link emulator between two network namespaces.
 *   up      creates the namespaces tbl-<name>-dev and tbl-<name>-peer with a TUN device each
 *   run     forwards packets between the two TUN devices through the link model
 *   down    removes both namespaces (idempotent)
 *   presets lists the presets
 *   check   says whether `run` would accept the same options here (parameters, privileges)
 * One thread: ppoll on both TUN descriptors with the timeout of the next delivery; signals
 * are blocked except inside ppoll, so a SIGUSR1 (counters) or SIGTERM (stop) is never lost.
 * Exit codes: 0 ok, 1 failure, 2 usage, 77 not root or no /dev/net/tun. */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "link.h"

#define TB_DEFAULT_SLOTS 4096u
#define TB_READ_BATCH 64 /* packets read from one TUN before looking at the other */

/* ---------------------------------------------------------------- options */
typedef struct tb_run_opts {
    const char *name;
    const char *preset;
    uint64_t seed;
    const char *stats_path;
    const char *drop_log_path;
    const char *packet_log_path;
    double duration_s; /* 0: until a signal or the TUN devices vanish */
    uint32_t slots;
    int realtime; /* SCHED_FIFO: delivery times survive a loaded machine */
    tb_link_params p[TB_DIRS];
} tb_run_opts;

static void tb_usage(FILE *f) {
    fprintf(f,
            "usage: tlsbench-link up --name N [--mtu BYTES] [--ipv6] [--sysctl net.KEY=VALUE]...\n"
            "       tlsbench-link run --name N [--preset P] [--seed S] [--stats FILE]\n"
            "                         [--drop-log FILE] [--packet-log FILE] [--duration SECONDS]\n"
            "                         [--slots N] [--realtime]\n"
            "                         [link options]\n"
            "       tlsbench-link check [--preset P] [link options]   (would run accept them?)\n"
            "       tlsbench-link down --name N\n"
            "       tlsbench-link presets\n"
            "Namespaces tbl-N-dev (10.77.0.1/30) and tbl-N-peer (10.77.0.2/30), TUN " TB_LINK_TUN_NAME
            " in each.\n"
            "Link options apply to both directions; prefix d2p- (device to peer) or p2d- for one:\n");
    tb_link_param_help(f);
    fprintf(f, "Counters: JSON on stdout at exit and on SIGUSR1 (and to --stats FILE).\n");
}

static double tb_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t tb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- packet pool + heap */
typedef struct tb_pending {
    uint64_t at_ns;
    uint64_t arrival_ns;
    tb_link_flow flow;
    uint64_t order; /* arrival order across both directions: stable ties */
    uint64_t seq;   /* arrival index within its direction */
    uint32_t slot;
    uint32_t len;
    uint32_t dir;
    uint32_t fragments;
} tb_pending;

typedef struct tb_fwd {
    uint8_t *pool;
    uint32_t slot_size, slots;
    uint32_t *free_list;
    uint32_t n_free;
    tb_pending *heap;
    uint32_t n_heap;
    uint64_t order;
    int fd[TB_DIRS]; /* fd[d] is where direction d's packets come from */
    uint32_t mtu[TB_DIRS];
    tb_link_dir dir[TB_DIRS];
    FILE *drop_log;
    FILE *packet_log;
} tb_fwd;

static int tb_before(const tb_pending *a, const tb_pending *b) {
    return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->order < b->order);
}

static void tb_heap_push(tb_fwd *f, tb_pending e) {
    uint32_t i = f->n_heap++;
    while (i > 0 && tb_before(&e, &f->heap[(i - 1) / 2])) {
        f->heap[i] = f->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    f->heap[i] = e;
}

static tb_pending tb_heap_pop(tb_fwd *f) {
    tb_pending top = f->heap[0], last = f->heap[--f->n_heap];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= f->n_heap)
            break;
        if (c + 1 < f->n_heap && tb_before(&f->heap[c + 1], &f->heap[c]))
            c++;
        if (!tb_before(&f->heap[c], &last))
            break;
        f->heap[i] = f->heap[c];
        i = c;
    }
    if (f->n_heap)
        f->heap[i] = last;
    return top;
}

/* ---------------------------------------------------------------- counters as JSON */
static void tb_count_json(FILE *out, const char *key, const tb_link_count *c) {
    fprintf(out, "\"%s\":{\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"fragments\":%" PRIu64 "}",
            key, c->packets, c->bytes, c->fragments);
}

static void tb_params_json(FILE *out, const tb_link_params *p) {
    fprintf(out,
            "{\"rate_bps\":%" PRIu64 ",\"queue_bytes\":%" PRIu64 ",\"delay_ms\":%.6g,\"jitter_ms\":%.6g,"
            "\"loss\":%.6g,\"frame_bytes\":%u,\"frame_overhead\":%u,\"mtu\":%u,\"reorder\":%.6g,"
            "\"reorder_delay_ms\":%.6g}",
            p->rate_bps, p->queue_bytes, (double)p->delay_ns / 1e6, (double)p->jitter_ns / 1e6, p->loss,
            p->frame_bytes, p->frame_overhead, p->mtu, p->reorder, (double)p->reorder_delay_ns / 1e6);
}

static void tb_stats_json(FILE *out, const tb_run_opts *o, const tb_fwd *f, double elapsed_s) {
    fprintf(out, "{\"link\":\"%s\",\"preset\":\"%s\",\"seed\":%" PRIu64 ",\"elapsed_s\":%.6f", o->name,
            o->preset ? o->preset : "", o->seed, elapsed_s);
    for (uint32_t d = 0; d < TB_DIRS; d++) {
        const tb_link_counters *c = &f->dir[d].c;
        fprintf(out, ",\"%s\":{\"params\":", tb_link_dir_names[d]);
        tb_params_json(out, &f->dir[d].p);
        fputc(',', out);
        tb_count_json(out, "sent", &c->sent);
        fprintf(out, ",\"dropped\":{");
        for (uint32_t k = TB_DROP_NONE + 1; k < TB_DROP_CAUSES; k++) {
            tb_count_json(out, tb_link_drop_names[k], &c->dropped[k]);
            fputc(k + 1 < TB_DROP_CAUSES ? ',' : '}', out);
        }
        fputc(',', out);
        tb_count_json(out, "delivered", &c->delivered);
        uint64_t in_flight = 0;
        for (uint32_t i = 0; i < f->n_heap; i++)
            in_flight += f->heap[i].dir == d;
        fprintf(out,
                ",\"lost_fragments\":%" PRIu64 ",\"reordered\":%" PRIu64 ",\"in_flight\":%" PRIu64
                ",\"late_us\":{\"mean\":%.3f,\"max\":%.3f}}",
                c->lost_fragments, c->reordered, in_flight,
                c->delivered.packets ? (double)c->late_sum_ns / (double)c->delivered.packets / 1e3 : 0.0,
                (double)c->late_max_ns / 1e3);
    }
    fprintf(out, "}\n");
    fflush(out);
}

/* Written to a temporary name and renamed: a reader never sees half a file. */
static void tb_stats_file(const tb_run_opts *o, const tb_fwd *f, double elapsed_s) {
    char tmp[4096];
    if (!o->stats_path || snprintf(tmp, sizeof(tmp), "%s.tmp", o->stats_path) >= (int)sizeof(tmp))
        return;
    FILE *out = fopen(tmp, "w");
    if (!out)
        return;
    tb_stats_json(out, o, f, elapsed_s);
    if (fclose(out) == 0)
        rename(tmp, o->stats_path);
}

/* ---------------------------------------------------------------- forwarding */
static volatile sig_atomic_t tb_stop_flag, tb_dump_flag;
static void tb_on_stop(int sig) { (void)sig; tb_stop_flag = 1; }
static void tb_on_dump(int sig) { (void)sig; tb_dump_flag = 1; }

/* One packet's record in the --packet-log (written once its fate is known). */
static void tb_log_packet(tb_fwd *f, uint32_t d, const tb_pending *e, uint32_t fate, uint64_t done_ns) {
    if (!f->packet_log)
        return;
    uint8_t rec[TB_LINK_PACKET_RECORD];
    tb_link_packet_encode(rec, &(tb_link_packet){.arrival_ns = e->arrival_ns, .done_ns = done_ns, .bytes = e->len,
                                                 .fragments = e->fragments, .dir = d, .fate = fate,
                                                 .flow = e->flow});
    fwrite(rec, sizeof rec, 1, f->packet_log);
}

static void tb_drop(tb_fwd *f, uint32_t d, uint64_t seq, uint32_t cause, uint32_t len) {
    if (f->drop_log)
        fprintf(f->drop_log, "%s %" PRIu64 " %s %u\n", tb_link_dir_names[d], seq, tb_link_drop_names[cause],
                len);
}

/* Reads up to a batch of packets of direction d. Returns -1 when the device is gone. */
static int tb_read_dir(tb_fwd *f, uint32_t d, uint8_t *scratch) {
    for (int n = 0; n < TB_READ_BATCH; n++) {
        uint32_t slot = f->n_free ? f->free_list[f->n_free - 1] : UINT32_MAX;
        uint8_t *buf = slot != UINT32_MAX ? f->pool + (size_t)slot * f->slot_size : scratch;
        ssize_t len = read(f->fd[d], buf, f->slot_size);
        if (len < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (len == 0)
            return 0;
        uint64_t arrival = tb_now_ns();
        tb_link_verdict v = tb_link_admit(&f->dir[d], arrival, (uint32_t)len);
        tb_pending e = {.at_ns = v.deliver_ns, .arrival_ns = arrival, .seq = v.seq, .slot = slot,
                        .len = (uint32_t)len, .dir = d, .fragments = v.fragments,
                        .flow = tb_link_flow_of(buf, (size_t)len, d)};
        if (v.drop == TB_DROP_NONE && slot == UINT32_MAX) {
            /* Accepted by the model but nowhere to keep it: counted as a pool drop. */
            v.drop = TB_DROP_POOL;
            tb_link_count_add(&f->dir[d].c.dropped[TB_DROP_POOL], (uint32_t)len, v.fragments);
        }
        if (v.drop != TB_DROP_NONE) {
            tb_drop(f, d, v.seq, v.drop, (uint32_t)len);
            tb_log_packet(f, d, &e, v.drop, 0);
            continue;
        }
        f->n_free--;
        e.order = f->order++;
        tb_heap_push(f, e);
    }
    return 0;
}

/* Writes every packet that is due into the other namespace. */
static void tb_deliver_due(tb_fwd *f) {
    uint64_t now = tb_now_ns();
    while (f->n_heap && f->heap[0].at_ns <= now) {
        tb_pending e = tb_heap_pop(f);
        tb_link_counters *c = &f->dir[e.dir].c;
        ssize_t w = write(f->fd[1 - e.dir], f->pool + (size_t)e.slot * f->slot_size, e.len);
        if (w == (ssize_t)e.len) {
            tb_link_count_add(&c->delivered, e.len, e.fragments);
            uint64_t late = now - e.at_ns;
            c->late_sum_ns += late;
            c->late_max_ns = late > c->late_max_ns ? late : c->late_max_ns;
            tb_log_packet(f, e.dir, &e, TB_DROP_NONE, now);
        } else {
            tb_link_count_add(&c->dropped[TB_DROP_WRITE], e.len, e.fragments);
            tb_drop(f, e.dir, e.seq, TB_DROP_WRITE, e.len);
            tb_log_packet(f, e.dir, &e, TB_DROP_WRITE, 0);
        }
        f->free_list[f->n_free++] = e.slot;
    }
}

static int tb_forward(const tb_run_opts *o) {
    char err[512];
    tb_fwd f;
    memset(&f, 0, sizeof(f));
    f.fd[0] = f.fd[1] = -1;
    for (uint32_t d = 0; d < TB_DIRS; d++) {
        char ns[64];
        tb_link_ns_name(ns, sizeof(ns), o->name, d);
        f.fd[d] = tb_link_attach(ns, &f.mtu[d], err, sizeof(err));
        if (f.fd[d] < 0) {
            fprintf(stderr, "tlsbench-link: %s\n", err);
            if (f.fd[0] >= 0)
                close(f.fd[0]);
            return TB_LINK_EXIT_FAIL;
        }
        tb_link_dir_init(&f.dir[d], &o->p[d], o->seed, d);
    }
    f.slot_size = (f.mtu[0] > f.mtu[1] ? f.mtu[0] : f.mtu[1]) + 64u;
    f.slots = o->slots;
    f.pool = malloc((size_t)f.slots * f.slot_size);
    f.free_list = malloc(sizeof(uint32_t) * f.slots);
    f.heap = malloc(sizeof(tb_pending) * f.slots);
    uint8_t *scratch = malloc(f.slot_size);
    if (!f.pool || !f.free_list || !f.heap || !scratch) {
        fprintf(stderr, "tlsbench-link: out of memory for %u slots of %u bytes\n", f.slots, f.slot_size);
        return TB_LINK_EXIT_FAIL;
    }
    for (uint32_t i = 0; i < f.slots; i++)
        f.free_list[i] = f.slots - 1u - i;
    f.n_free = f.slots;
    if (o->drop_log_path && !(f.drop_log = fopen(o->drop_log_path, "w"))) {
        fprintf(stderr, "tlsbench-link: cannot write %s\n", o->drop_log_path);
        return TB_LINK_EXIT_FAIL;
    }
    if (o->packet_log_path && !(f.packet_log = fopen(o->packet_log_path, "wb"))) {
        fprintf(stderr, "tlsbench-link: cannot write %s\n", o->packet_log_path);
        return TB_LINK_EXIT_FAIL;
    }

    /* Delivery times are hrtimer deadlines: the default 50 us timer slack would add its
     * own jitter to every packet. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (o->realtime) {
        /* The loop sleeps between packets, so a low FIFO priority costs the others little;
         * the kernel's RT throttling still bounds a flood. */
        struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            fprintf(stderr, "tlsbench-link: --realtime: %s (continuing)\n", strerror(errno));
    }
    sigset_t block, during_poll;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &during_poll);
    sigdelset(&during_poll, SIGINT);
    sigdelset(&during_poll, SIGTERM);
    sigdelset(&during_poll, SIGHUP);
    sigdelset(&during_poll, SIGUSR1);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = tb_on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = tb_on_dump;
    sigaction(SIGUSR1, &sa, NULL);

    fprintf(stderr, "tlsbench-link: forwarding %s (seed %" PRIu64 ", pid %ld)\n", o->name, o->seed,
            (long)getpid());
    double t0 = tb_now_s();
    uint64_t end_ns = o->duration_s > 0 ? tb_now_ns() + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
    int rc = TB_LINK_EXIT_OK;
    while (!tb_stop_flag) {
        if (tb_dump_flag) {
            tb_dump_flag = 0;
            if (f.packet_log) /* the stats file's rename tells a reader the log is complete up to now */
                fflush(f.packet_log);
            tb_stats_json(stdout, o, &f, tb_now_s() - t0);
            tb_stats_file(o, &f, tb_now_s() - t0);
        }
        uint64_t now = tb_now_ns();
        if (now >= end_ns)
            break;
        uint64_t wake = f.n_heap && f.heap[0].at_ns < end_ns ? f.heap[0].at_ns : end_ns;
        struct timespec ts, *timeout = NULL;
        if (wake != UINT64_MAX) {
            uint64_t wait = wake > now ? wake - now : 0;
            ts.tv_sec = (time_t)(wait / 1000000000u);
            ts.tv_nsec = (long)(wait % 1000000000u);
            timeout = &ts;
        }
        struct pollfd pfd[TB_DIRS] = {{.fd = f.fd[0], .events = POLLIN}, {.fd = f.fd[1], .events = POLLIN}};
        int n = ppoll(pfd, TB_DIRS, timeout, &during_poll);
        if (n < 0 && errno != EINTR) {
            perror("tlsbench-link: ppoll");
            rc = TB_LINK_EXIT_FAIL;
            break;
        }
        int gone = 0;
        for (uint32_t d = 0; n > 0 && d < TB_DIRS; d++) {
            if (pfd[d].revents & (POLLERR | POLLHUP | POLLNVAL))
                gone = 1;
            else if ((pfd[d].revents & POLLIN) && tb_read_dir(&f, d, scratch) != 0)
                gone = 1;
        }
        tb_deliver_due(&f);
        if (gone) {
            fprintf(stderr, "tlsbench-link: a TUN device is gone (link down): stopping\n");
            break;
        }
    }
    double elapsed = tb_now_s() - t0;
    if (f.packet_log)
        fflush(f.packet_log);
    tb_stats_json(stdout, o, &f, elapsed);
    tb_stats_file(o, &f, elapsed);
    if (f.drop_log)
        fclose(f.drop_log);
    if (f.packet_log)
        fclose(f.packet_log);
    close(f.fd[0]);
    close(f.fd[1]);
    free(f.pool);
    free(f.free_list);
    free(f.heap);
    free(scratch);
    return rc;
}

/* ---------------------------------------------------------------- command line */
static int tb_bad(const char *msg, const char *arg) {
    fprintf(stderr, "tlsbench-link: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return TB_LINK_EXIT_USAGE;
}

/* The options of `run` and `check` into o (the preset first, whatever its position:
 * options then override it); TB_LINK_EXIT_OK or the usage exit code after a message. */
static int tb_parse_run(int argc, char **argv, tb_run_opts *o) {
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], "--preset") == 0) {
            const tb_link_preset *p = tb_link_preset_find(argv[i + 1]);
            if (!p)
                return tb_bad("unknown preset (see `tlsbench-link presets`)", argv[i + 1]);
            o->preset = p->name;
            memcpy(o->p, p->dir, sizeof(o->p));
        }
    for (int i = 2; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char err[256];
        if (strcmp(a, "--realtime") == 0) {
            o->realtime = 1;
            i--; /* a flag: no value */
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || v == NULL)
            return tb_bad("expected --option value", a);
        a += 2;
        if (strcmp(a, "name") == 0)
            o->name = v;
        else if (strcmp(a, "preset") == 0)
            continue;
        else if (strcmp(a, "seed") == 0)
            o->seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "stats") == 0)
            o->stats_path = v;
        else if (strcmp(a, "drop-log") == 0)
            o->drop_log_path = v;
        else if (strcmp(a, "packet-log") == 0)
            o->packet_log_path = v;
        else if (strcmp(a, "duration") == 0)
            o->duration_s = strtod(v, NULL);
        else if (strcmp(a, "slots") == 0)
            o->slots = (uint32_t)strtoul(v, NULL, 0);
        else {
            int r = tb_link_param_set(o->p, a, v, err, sizeof(err));
            if (r < 0)
                return tb_bad(err, NULL);
            if (r == 0)
                return tb_bad("unknown option", argv[i]);
        }
    }
    if (o->slots < 16 || o->slots > (1u << 20))
        return tb_bad("--slots must be within 16..1048576", NULL);
    return TB_LINK_EXIT_OK;
}

/* Root and /dev/net/tun, or TB_LINK_EXIT_PRIV after a message. */
static int tb_privileged(void) {
    char err[512];
    if (tb_link_privileged(err, sizeof(err)))
        return TB_LINK_EXIT_OK;
    fprintf(stderr, "tlsbench-link: %s\n", err);
    return TB_LINK_EXIT_PRIV;
}

static int tb_cmd_run(int argc, char **argv) {
    tb_run_opts o = {.seed = 1, .slots = TB_DEFAULT_SLOTS};
    int rc = tb_parse_run(argc, argv, &o);
    if (rc != TB_LINK_EXIT_OK)
        return rc;
    if (!o.name || !tb_link_name_ok(o.name))
        return tb_bad("--name N is required (letters, digits, - and _, at most 32)", o.name);
    rc = tb_privileged();
    return rc != TB_LINK_EXIT_OK ? rc : tb_forward(&o);
}

/* `check [run options]`: would `run` accept these options here? The host asks before it
 * starts anything, so a plan's link mistakes are found before a run (--name optional). */
static int tb_cmd_check(int argc, char **argv) {
    tb_run_opts o = {.seed = 1, .slots = TB_DEFAULT_SLOTS};
    int rc = tb_parse_run(argc, argv, &o);
    if (rc != TB_LINK_EXIT_OK)
        return rc;
    if (o.name && !tb_link_name_ok(o.name))
        return tb_bad("--name: letters, digits, - and _, at most 32", o.name);
    return tb_privileged();
}

static int tb_cmd_up(int argc, char **argv) {
    tb_link_netns_opts o = {.tun_mtu = 1500};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--ipv6") == 0) {
            o.ipv6 = 1;
            continue;
        }
        if (v == NULL)
            return tb_bad("expected a value after", a);
        i++;
        if (strcmp(a, "--name") == 0) {
            o.name = v;
        } else if (strcmp(a, "--mtu") == 0) {
            o.tun_mtu = (uint32_t)strtoul(v, NULL, 0);
            if (o.tun_mtu < 68 || o.tun_mtu > 65535)
                return tb_bad("--mtu must be within 68..65535", v);
        } else if (strcmp(a, "--sysctl") == 0) {
            if (o.n_sysctls == sizeof(o.sysctls) / sizeof(o.sysctls[0]))
                return tb_bad("too many --sysctl", v);
            o.sysctls[o.n_sysctls++] = v;
        } else {
            return tb_bad("unknown option", a);
        }
    }
    if (!o.name || !tb_link_name_ok(o.name))
        return tb_bad("--name N is required (letters, digits, - and _, at most 32)", o.name);
    char err[512];
    int rc = tb_link_up(&o, err, sizeof(err));
    if (rc != TB_LINK_EXIT_OK)
        fprintf(stderr, "tlsbench-link: %s\n", err);
    return rc;
}

static int tb_cmd_down(int argc, char **argv) {
    if (argc != 4 || strcmp(argv[2], "--name") != 0 || !tb_link_name_ok(argv[3]))
        return tb_bad("usage: tlsbench-link down --name N", NULL);
    char err[512];
    if (!tb_link_privileged(err, sizeof(err))) {
        fprintf(stderr, "tlsbench-link: %s\n", err);
        return TB_LINK_EXIT_PRIV;
    }
    if (tb_link_down(argv[3], err, sizeof(err)) != 0) {
        fprintf(stderr, "tlsbench-link: %s\n", err);
        return TB_LINK_EXIT_FAIL;
    }
    return TB_LINK_EXIT_OK;
}

static int tb_cmd_presets(int argc, char **argv) {
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < tb_link_preset_count; i++)
        printf("%-12s %s\n", tb_link_presets[i].name, tb_link_presets[i].summary);
    return TB_LINK_EXIT_OK;
}

static int tb_cmd_help(int argc, char **argv) {
    (void)argc;
    (void)argv;
    tb_usage(stdout);
    return TB_LINK_EXIT_OK;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} tb_commands[] = {
    {"up", tb_cmd_up},           {"down", tb_cmd_down}, {"run", tb_cmd_run},   {"check", tb_cmd_check},
    {"presets", tb_cmd_presets}, {"help", tb_cmd_help}, {"--help", tb_cmd_help},
};

int main(int argc, char **argv) {
    for (size_t i = 0; argc > 1 && i < sizeof(tb_commands) / sizeof(tb_commands[0]); i++)
        if (strcmp(argv[1], tb_commands[i].name) == 0)
            return tb_commands[i].fn(argc, argv);
    tb_usage(stderr);
    return TB_LINK_EXIT_USAGE;
}
