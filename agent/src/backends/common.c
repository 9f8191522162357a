/* SPDX-License-Identifier: Apache-2.0 */
/* What every backend shares (common.h): the suite cache, the checks of a connection and
 * the group choice, one set of rules and messages for every library. */
#include "common.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tlsbench/credentials.h"
#include "tlsbench/spec_gen.h"

const void *tb_row_find(const void *rows, size_t n, size_t stride, uint16_t id) {
    const uint8_t *row = rows;
    for (size_t i = 0; i < n; i++, row += stride) {
        uint16_t first;
        memcpy(&first, row, sizeof first);
        if (first == id)
            return row;
    }
    return NULL;
}

/* ---------------------------------------------------------------- suite cache */
_Static_assert(offsetof(tb_suite_info, id) == 0, "tb_row_find reads a suite row's id first");

static void tb_suite_cache_build(tb_suite_cache *c) {
    if (c->built)
        return;
    c->built = true; /* first: build() adds rows through tb_suite_cache_add */
    c->build(c);
}

void *tb_suite_cache_add(tb_suite_cache *c) {
    if (c->count == c->capacity)
        return NULL;
    void *row = (uint8_t *)c->rows + c->count++ * c->row_size;
    memset(row, 0, c->row_size);
    return row;
}

size_t tb_suite_cache_count(tb_suite_cache *c) {
    tb_suite_cache_build(c);
    return c->count;
}

const tb_suite_info *tb_suite_cache_at(tb_suite_cache *c, size_t index) {
    tb_suite_cache_build(c);
    return index < c->count ? (const tb_suite_info *)((const uint8_t *)c->rows + index * c->row_size) : NULL;
}

const void *tb_suite_cache_find(tb_suite_cache *c, uint16_t id) {
    tb_suite_cache_build(c);
    return tb_row_find(c->rows, c->count, c->row_size, id);
}

/* ---------------------------------------------------------------- checks */
int tb_fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *tb_group_text(uint16_t group) {
    const char *name = tb_group_name(group);
    return name ? name : "unknown";
}

/* Users and libraries spell key exchanges in either case ("any", "ANY"). */
static bool tb_same_word(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/* The spec's [key_exchange] entry of a suite, NULL when its key exchange takes no group. */
static const tb_key_exchange_groups *tb_key_exchange_find(const char *key_exchange) {
    unsigned n = 0;
    const tb_key_exchange_groups *table = tb_key_exchange_table(&n);
    for (unsigned i = 0; key_exchange && i < n; i++)
        if (tb_same_word(table[i].key_exchange, key_exchange))
            return &table[i];
    return NULL;
}

/* The group of a connection: what it asks for, else what the default means for the suite's
 * key exchange; checked against the spec's families, the library's limit and its build. */
static int tb_group_choose(const tb_backend_rules *r, const void *row, const tb_conn_config *cfg, uint16_t *out,
                           char *err, size_t errlen) {
    const tb_suite_info *s = row;
    const tb_key_exchange_groups *k = tb_key_exchange_find(s->key_exchange);
    uint16_t own = k && k->by_credential ? tb_credential_group(cfg->credential) : 0;
    uint16_t by_default = !k ? 0 : k->by_credential ? own : k->default_group;
    uint16_t group = cfg->group ? cfg->group : by_default;
    *out = group;
    if (group == 0)
        return 0;
    tb_group_support support = r->group_support(group);
    const char *why = support == TB_GROUP_UNKNOWN && r->group_why ? r->group_why(group) : NULL;
    if (support == TB_GROUP_UNKNOWN)
        return tb_fail(err, errlen, "group %u (%s) is not supported by the %s agent%s%s", group, tb_group_text(group),
                       r->library_name, why ? ": " : "", why ? why : "");
    const char *limit = r->group_limit ? r->group_limit(row, group) : NULL;
    bool fits = (k && (k->families & tb_group_family(group))) || (own && group == own);
    if (!fits || limit)
        return tb_fail(err, errlen, "group %s does not fit suite %s: its %s key exchange takes %s; use group default",
                       tb_group_text(group), s->name, s->key_exchange, limit ? limit : k ? k->takes : "no group");
    if (support == TB_GROUP_NOT_BUILT)
        return tb_fail(err, errlen, "group %s is not in this %s build", tb_group_text(group), r->library_name);
    return 0;
}

static bool tb_credential_listed(const tb_suite_info *s, uint8_t credential) {
    for (size_t i = 0; i < s->n_credentials && i < TB_MAX_SUITE_CREDENTIALS; i++)
        if (s->credentials[i] == credential)
            return true;
    return false;
}

const void *tb_backend_check(const tb_backend_rules *r, const tb_conn_config *cfg, uint16_t *group, char *err,
                             size_t errlen) {
    if (!*r->initialized) {
        tb_fail(err, errlen, "the %s backend is not initialized", r->library_name);
        return NULL;
    }
    const void *row = tb_suite_cache_find(r->suites, cfg->suite_id);
    const tb_suite_info *s = row;
    const char *cred = tb_credential_name(cfg->credential);
    const char *why = NULL;
    if (!s)
        tb_fail(err, errlen, "suite 0x%04X is not in this %s build", cfg->suite_id, r->library_name);
    else if (s->n_credentials == 0)
        tb_fail(err, errlen, "suite %s cannot run here: %s", s->name, s->why_unsupported);
    else if (!tb_credential_listed(s, cfg->credential))
        tb_fail(err, errlen, "credential %u (%s) does not fit suite %s", cfg->credential, cred ? cred : "unknown",
                s->name);
    else if (r->credential_why && (why = r->credential_why(cfg->credential)) != NULL)
        tb_fail(err, errlen, "credential %s: %s", cred, why);
    else if (tb_group_choose(r, row, cfg, group, err, errlen) == 0)
        return row;
    return NULL;
}

uint8_t tb_peer_id_copy(uint8_t *dst, size_t cap, const tb_conn_config *cfg) {
    size_t n = cfg->peer_id_len < cap ? cfg->peer_id_len : cap;
    memcpy(dst, cfg->peer_id, n);
    return (uint8_t)n;
}

/* ---------------------------------------------------------------- RESUME */
const char *tb_common_error_text(int32_t code) {
    return code == TB_ERR_NOT_RESUMED ? "RESUME: a full handshake, the offered session was not resumed" : NULL;
}

int tb_resume_ready(uint8_t peer, const tb_conn_config *cfg, bool have_session, char *err, size_t errlen) {
    if (!(cfg->options & TB_OPTION_RESUME) || peer != TB_PEER_CLIENT || cfg->first_connection || have_session)
        return 0;
    return tb_fail(err, errlen, "RESUME: the previous connection of this RUN left no session to resume (it failed, "
                                "or the server sent no ticket or session ID)");
}

tb_step_result tb_resume_verdict(uint8_t options, bool first_connection, bool resumed, int32_t *lib_error) {
    if (!(options & TB_OPTION_RESUME) || first_connection || resumed)
        return TB_STEP_DONE;
    *lib_error = TB_ERR_NOT_RESUMED;
    return TB_STEP_ERROR;
}

/* ---------------------------------------------------------------- pre-shared key */
unsigned tb_psk_client(char *identity, size_t identity_max, uint8_t *key, size_t key_max) {
    size_t n = strlen(tb_psk_identity);
    if (n + 1 > identity_max || key_max < TB_PSK_LEN)
        return 0;
    memcpy(identity, tb_psk_identity, n + 1);
    memcpy(key, tb_psk_key, TB_PSK_LEN);
    return TB_PSK_LEN;
}

unsigned tb_psk_server(const char *identity, uint8_t *key, size_t key_max) {
    if (!identity || strcmp(identity, tb_psk_identity) != 0 || key_max < TB_PSK_LEN)
        return 0;
    memcpy(key, tb_psk_key, TB_PSK_LEN);
    return TB_PSK_LEN;
}
