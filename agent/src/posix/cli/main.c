/* SPDX-License-Identifier: Apache-2.0 */
/* tlsbench-agent-<lib>: `serve` (the controller protocol on stdin/stdout, the default),
 * `suites`, `experiments`, `run` (standalone: suites or an experiment, optional frame file
 * and trace tree, cli/run.c) and `dump` (cli/dump.c). The serve loop itself is src/serve.c.
 * Exit codes: 0 ok, 1 some repetitions failed, 2 usage error, 3 protocol error. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tlsbench/pace.h"
#include "tlsbench/experiment_run.h"
#include "tlsbench/messages.h"

static const tb_backend *const tb_b = &tb_linked_backend;

tb_agent tb_cli_agent = {.name = TB_AGENT_NAME, .backend = &tb_linked_backend};

int tb_cli_start(void) {
    char err[256] = "";
    if (tb_agent_start(&tb_cli_agent, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "%s: %s backend failed to start: %s\n", TB_AGENT_NAME, tb_b->library_name, err);
    return -1;
}

/* ---------------------------------------------------------------- stdio file channels */
static long tb_file_read(void *ctx, void *buf, size_t len) {
    size_t n = fread(buf, 1, len, ctx);
    return n == 0 && ferror((FILE *)ctx) ? -1 : (long)n;
}

static int tb_file_write(void *ctx, const void *buf, size_t len) {
    return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

tb_channel tb_file_channel(FILE *f) { return (tb_channel){tb_file_read, tb_file_write, f}; }

/* ---------------------------------------------------------------- serve */
static int tb_cmd_serve(int argc, char **argv) {
    (void)argc;
    (void)argv;
    tb_channel ch = tb_port_controller_channel();
    tb_posix_pace_install();
    return tb_serve(&tb_cli_agent, &ch);
}

/* ---------------------------------------------------------------- experiments */
static void tb_sizes_text(const tb_experiment *e, char *buf, size_t len) {
    size_t used = 0;
    snprintf(buf, len, "-");
    for (const uint32_t *s = e->sizes; s && *s && used < len; s++) {
        int n = snprintf(buf + used, len - used, "%s%u", s == e->sizes ? "" : ",", (unsigned)*s);
        used += n > 0 ? (size_t)n : 0;
    }
}

static void tb_groups_text(const tb_experiment *e, char *buf, size_t len) {
    size_t used = 0;
    snprintf(buf, len, "-");
    for (unsigned g = 0; g < tb_experiment_group_count(e) && used < len; g++) {
        int n = snprintf(buf + used, len - used, "%s%s", g ? "," : "", e->groups[g]);
        used += n > 0 ? (size_t)n : 0;
    }
}

static int tb_cmd_experiments(int argc, char **argv) {
    bool json = argc == 1 && strcmp(argv[0], "--json") == 0;
    if (argc > 1 || (argc == 1 && !json)) {
        fprintf(stderr, "%s: usage: %s experiments [--json]\n", TB_AGENT_NAME, TB_AGENT_NAME);
        return TB_EXIT_USAGE;
    }
    if (json) {
        size_t len;
        const char *text = tb_experiments_json_text(&len);
        if (!text)
            return TB_EXIT_FAILED;
        printf("%s\n", text);
        return TB_EXIT_OK;
    }
    printf("%-3s  %-20s %-9s %-28s %-24s %s\n", "id", "name", "source", "sizes", "groups", "description");
    for (unsigned id = 1; id <= tb_experiment_count(); id++) {
        const tb_experiment *e = tb_experiment_get(id);
        char sizes[128], groups[160];
        tb_sizes_text(e, sizes, sizeof sizes);
        tb_groups_text(e, groups, sizeof groups);
        printf("%-3u  %-20s %-9s %-28s %-24s %s\n", id, e->name, tb_experiment_source(id), sizes, groups,
               e->description ? e->description : "");
    }
    printf("%u experiments in %s\n", tb_experiment_count(), TB_AGENT_NAME);
    return TB_EXIT_OK;
}

/* ---------------------------------------------------------------- suites */
static void tb_credentials_text(const tb_suite_info *s, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (uint8_t i = 0; i < s->n_credentials && i < TB_MAX_SUITE_CREDENTIALS && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "", tb_credential_name(s->credentials[i]));
        used += n > 0 ? (size_t)n : 0;
    }
    if (s->n_credentials == 0)
        snprintf(buf, len, "- (%s)", s->why_unsupported ? s->why_unsupported : "unsupported");
}

static int tb_cmd_suites(int argc, char **argv) {
    bool json = argc == 1 && strcmp(argv[0], "--json") == 0;
    if (argc > 1 || (argc == 1 && !json)) {
        fprintf(stderr, "%s: usage: %s suites [--json]\n", TB_AGENT_NAME, TB_AGENT_NAME);
        return TB_EXIT_USAGE;
    }
    if (tb_cli_start() != 0)
        return TB_EXIT_FAILED;
    if (json) {
        size_t len;
        const char *text = tb_suites_json_text(tb_b, &len);
        if (!text)
            return TB_EXIT_FAILED;
        printf("%s\n", text);
        return TB_EXIT_OK;
    }
    printf("%-6s  %-50s %-10s %-7s %-18s %-7s %-15s %s\n", "id", "name", "kex", "auth", "cipher", "mac",
           "versions", "credentials");
    for (size_t i = 0; i < tb_b->suite_count(); i++) {
        const tb_suite_info *s = tb_b->suite_at(i);
        char versions[32], creds[160];
        snprintf(versions, sizeof versions, "%s-%s", s->min_version, s->max_version);
        tb_credentials_text(s, creds, sizeof creds);
        printf("0x%04X  %-50s %-10s %-7s %-18s %-7s %-15s %s\n", s->id, s->name, s->key_exchange,
               s->authentication, s->cipher, s->mac, versions, creds);
    }
    printf("%zu suites in %s %s\n", tb_b->suite_count(), tb_b->library_name, tb_b->version());
    return TB_EXIT_OK;
}

/* ---------------------------------------------------------------- commands */
static int tb_cmd_help(int argc, char **argv);

static const struct {
    const char *name;
    const char *args;
    const char *help;
    int (*run)(int argc, char **argv);
} tb_commands[] = {
    {"serve", "", "speak the controller protocol on stdin/stdout (the default)", tb_cmd_serve},
    {"suites", "[--json]", "list the suites of this build", tb_cmd_suites},
    {"experiments", "[--json]", "list the experiments (primitives, user) of this agent", tb_cmd_experiments},
    {"run", "--suite NAME|0xID|all [options]", "run standalone and print a summary", tb_cmd_run},
    {"run", "--experiment NAME [--size N] [options]", "run an experiment standalone", tb_cmd_run},
    {"dump", "FILE", "print every repetition of a frame file as a trace tree", tb_cmd_dump},
    {"help", "", "this text", tb_cmd_help},
};
#define TB_N_COMMANDS (sizeof tb_commands / sizeof tb_commands[0])

static int tb_cmd_help(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("usage: %s [command]\n\ncommands:\n", TB_AGENT_NAME);
    for (size_t i = 0; i < TB_N_COMMANDS; i++)
        printf("  %-11s %-40s %s\n", tb_commands[i].name, tb_commands[i].args, tb_commands[i].help);
    printf("\nrun options:\n");
    tb_run_help(stdout);
    printf("\nexit codes: 0 ok, 1 some repetitions failed, 2 usage error, 3 protocol error\n");
    return TB_EXIT_OK;
}

/* `--help` or `-h` anywhere asks for help, as people type it after any command. */
static int tb_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return tb_cmd_serve(0, NULL);
    if (tb_wants_help(argc, argv))
        return tb_cmd_help(0, NULL);
    for (size_t i = 0; i < TB_N_COMMANDS; i++)
        if (strcmp(argv[1], tb_commands[i].name) == 0)
            return tb_commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "%s: unknown command '%s'; commands:", TB_AGENT_NAME, argv[1]);
    for (size_t i = 0; i < TB_N_COMMANDS; i++)
        if (i == 0 || strcmp(tb_commands[i].name, tb_commands[i - 1].name) != 0)
            fprintf(stderr, " %s", tb_commands[i].name);
    fprintf(stderr, "\n");
    return TB_EXIT_USAGE;
}
