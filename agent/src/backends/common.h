/* SPDX-License-Identifier: Apache-2.0 */
/* What every backend shares: the suite cache, the checks a connection's suite and
 * credential must pass, the group choice of spec/protocol.toml [key_exchange], and the
 * fixed test PSK. A backend supplies its tables and a few calls (tb_backend_rules); the
 * rules, their order and their messages are the same for every library. */
#ifndef TLSBENCH_BACKENDS_COMMON_H
#define TLSBENCH_BACKENDS_COMMON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlsbench/backend.h"

#define TB_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Per-credential tables are indexed by TB_CREDENTIAL_* values: more slots than values. */
#define TB_CREDENTIAL_SLOTS 16

/* A row's credential list: .credentials and .n_credentials of a table entry. */
#define TB_CREDS(...) .credentials = {__VA_ARGS__}, .n_credentials = sizeof((uint8_t[]){__VA_ARGS__})

/* Writes a message into err (snprintf's format) and returns -1: `return tb_fail(...)`. */
int tb_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The row whose first member, a uint16_t, is id (a suite's tb_suite_info, a group's IANA
 * value); NULL when none. stride: the size of one row. */
const void *tb_row_find(const void *rows, size_t n, size_t stride, uint16_t id);

/* ---------------------------------------------------------------- suite cache */

/* The linked build's suites, listed once (lazily: suite_count() may come before init()),
 * as rows of the backend's own type, each starting with its tb_suite_info. */
typedef struct tb_suite_cache {
    void *rows;
    size_t row_size, capacity, count;
    bool built;
    void (*build)(struct tb_suite_cache *c); /* lists the library's suites with tb_suite_cache_add */
} tb_suite_cache;

#define TB_SUITE_CACHE(rows, build) {(rows), sizeof (rows)[0], TB_COUNT(rows), 0, false, (build)}

/* The next row, zeroed, for build() to fill; NULL when the cache is full. */
void *tb_suite_cache_add(tb_suite_cache *c);
size_t tb_suite_cache_count(tb_suite_cache *c);
const tb_suite_info *tb_suite_cache_at(tb_suite_cache *c, size_t index);
/* The row of a suite id, NULL when the build has no such suite. */
const void *tb_suite_cache_find(tb_suite_cache *c, uint16_t id);

/* ---------------------------------------------------------------- checks and group choice */

typedef enum tb_group_support {
    TB_GROUP_UNKNOWN,   /* the backend has no such group */
    TB_GROUP_NOT_BUILT, /* the linked build lacks it */
    TB_GROUP_READY,
} tb_group_support;

typedef struct tb_backend_rules {
    const char *library_name; /* "mbed TLS": in the messages */
    tb_suite_cache *suites;
    const bool *initialized;  /* the backend's init() has run */
    /* Why a credential cannot be used here, NULL when it can. May be NULL: all can. */
    const char *(*credential_why)(uint8_t credential);
    tb_group_support (*group_support)(uint16_t group);
    /* Why the library has no such group, appended to the refusal of a group it does not
     * support (wolfSSL 5.7: ML-KEM only at pre-standard Kyber code points); NULL when there is
     * nothing to add. May be NULL. */
    const char *(*group_why)(uint16_t group);
    /* A library's own limit on top of the spec's: what the suite's key exchange takes
     * instead (the "takes ..." of the refusal), NULL when the group may be used. May be NULL. */
    const char *(*group_limit)(const void *suite_row, uint16_t group);
} tb_backend_rules;

/* The row of the connection's suite, and in *group the group it uses (cfg->group, or what
 * the default means for its key exchange; 0: none). NULL with the reason in err when the
 * backend is not initialized, the suite is not in the build or cannot run here, the
 * credential does not fit it or cannot be used, or the group does not fit the suite's key
 * exchange or is not in the build. */
const void *tb_backend_check(const tb_backend_rules *r, const tb_conn_config *cfg, uint16_t *group, char *err,
                             size_t errlen);

/* Copies the connection's peer id (a DTLS server binds its cookies to it) into dst of cap
 * bytes; returns the length copied. */
uint8_t tb_peer_id_copy(uint8_t *dst, size_t cap, const tb_conn_config *cfg);

/* ---------------------------------------------------------------- crypto wrappers */

/* One link-time wrapper (ld --wrap=sym): the library's calls to sym reach __wrap_sym, which
 * times __real_sym as one `label` span whose STOP value is the return code; when `traced`
 * is false (a size query that computes nothing) the call goes straight through. The static
 * assertion catches a parameter list that drifted from the library's prototype (the
 * wrapper would silently pass garbage otherwise). real_attrs: attributes of __real_sym
 * (mbed TLS: weak, for stripped builds that lack the function). TB_TRACED_WRAP_T names the
 * return type where it is not int (PSA's psa_status_t is int32_t: long on arm-none-eabi).
 * Needs tlsbench/trace.h. */
#define TB_TRACED_WRAP_T(ret_type, sym, label, params, args, traced, real_attrs)            \
    ret_type __real_##sym params real_attrs;                                                \
    ret_type __wrap_##sym params;                                                           \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sym), __typeof__(__real_##sym)), \
                   #sym ": the wrapper's parameters differ from the library's");           \
    ret_type __wrap_##sym params {                                                          \
        if (!(traced))                                                                      \
            return __real_##sym args;                                                       \
        tb_begin(TB_L_##label);                                                             \
        ret_type ret = __real_##sym args;                                                   \
        tb_end(TB_L_##label, (uint64_t)(int64_t)ret);                                       \
        return ret;                                                                         \
    }
#define TB_TRACED_WRAP(sym, label, params, args, traced, real_attrs) \
    TB_TRACED_WRAP_T(int, sym, label, params, args, traced, real_attrs)

/* ---------------------------------------------------------------- RESUME (spec [options])
 * The rules every backend follows; the library keeps the client's session and reports
 * whether a handshake resumed. */

/* lib_error of a connection that had to resume and ran a full handshake (far from any
 * library's own codes). */
#define TB_ERR_NOT_RESUMED (-1000000)

/* The text of an error code the common rules define, NULL for a library's own code (a
 * backend's error_text asks here first). */
const char *tb_common_error_text(int32_t code);

/* Before a connection: 0 when it may start (no RESUME, the server, the RUN's first
 * connection, or the previous connection left a session: have_session), else -1 with why. */
int tb_resume_ready(uint8_t peer, const tb_conn_config *cfg, bool have_session, char *err, size_t errlen);

/* After the handshake: TB_STEP_DONE, or TB_STEP_ERROR with TB_ERR_NOT_RESUMED when a
 * connection after the RUN's first (RESUME) did not resume: a full handshake is never
 * measured as a resumed one. */
tb_step_result tb_resume_verdict(uint8_t options, bool first_connection, bool resumed, int32_t *lib_error);

/* ---------------------------------------------------------------- pre-shared key */

/* The fixed test identity and key (tlsbench/credentials.h) for a library's PSK callbacks:
 * the key's length, or 0 when the buffers are too small or (server) the identity is not ours. */
unsigned tb_psk_client(char *identity, size_t identity_max, uint8_t *key, size_t key_max);
unsigned tb_psk_server(const char *identity, uint8_t *key, size_t key_max);

#endif
