/* SPDX-License-Identifier: Apache-2.0 */
/* The backend conformance suite: what every backend must do (conformance.c), run against
 * each one with what is true of that library (tests/backend/<library>.c defines
 * tb_expected: its tables, a hook that reads what a handshake negotiated, and the checks
 * only it has). */
#ifndef TLSBENCH_TESTS_CONFORMANCE_H
#define TLSBENCH_TESTS_CONFORMANCE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pair.h"
#include "tlsbench/backend.h"

#define TB_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* One suite's metadata exactly (credentials: 0-terminated, in order). */
typedef struct tb_expected_suite {
    uint16_t id;
    const char *name, *min, *max, *kex, *auth, *cipher, *mac;
    bool dtls;
    uint8_t creds[TB_MAX_SUITE_CREDENTIALS];
} tb_expected_suite;

/* A connection a backend must refuse, with words of its message. */
typedef struct tb_refusal {
    tb_conn_config cfg;
    const char *message_part;
} tb_refusal;

/* A forced group and the group the handshake must negotiate (0: not checked). */
typedef struct tb_forced_group {
    tb_conn_config cfg;
    uint16_t negotiated;
} tb_forced_group;

/* An unsupported suite and words of its why_unsupported. */
typedef struct tb_unsupported {
    uint16_t id;
    const char *why_part;
} tb_unsupported;

/* A library state and the step label its step must carry. */
typedef struct tb_state_label {
    int state;
    uint16_t label;
} tb_state_label;

/* What a finished handshake negotiated, as the client sees it; what the library does not
 * say stays 0/NULL and is not checked. */
typedef struct tb_outcome {
    const char *version; /* "TLS1.2", "TLS1.3" */
    uint16_t suite;      /* IANA id */
    uint16_t group;      /* IANA group */
    uint64_t wire[2];    /* bytes the transport carried client->server, server->client */
} tb_outcome;

/* One of the library's own tests. */
typedef struct tb_library_test {
    const char *name;
    void (*run)(void);
} tb_library_test;
#define TB_LIBRARY_TEST(fn) {#fn, fn}

#define TB_LIST(array) array, TB_COUNT(array)

typedef struct tb_expected {
    const char *library_name;     /* as in the backend's messages: "not in this <library_name> build" */
    const char *step_granularity; /* "state" or "turn" */
    /* Suites: what the library itself lists (NULL: not asked), the distribution's count
     * (0: any), at least this many suites, runnable ones and TLS 1.3 ones. */
    size_t (*library_suite_count)(void);
    size_t expected_suites;
    size_t min_suites, min_runnable, min_tls13;
    /* Names every suite's metadata is drawn from (NULL-terminated); macs NULL: any known. */
    const char *suite_prefix;
    const char *const *versions, *const *key_exchanges, *const *authentications, *const *macs;
    bool unsupported_have_metadata; /* false: a suite nothing can run may name unknown parts */
    bool tls13_over_dtls;           /* TLS 1.3 suites may run over DTLS (1.3) */
    void (*check_suite)(const tb_suite_info *s); /* the library's own rules per suite, or NULL */
    const tb_expected_suite *known;
    size_t n_known;
    const tb_unsupported *unsupported;
    size_t n_unsupported;
    /* Sessions. */
    const tb_refusal *refusals; /* on top of those every backend refuses */
    size_t n_refusals;
    const tb_forced_group *groups;
    size_t n_groups;
    size_t min_pairs, min_tls13_pairs; /* suite/credential pairs that must handshake */
    void (*negotiated)(tb_session *client, tb_outcome *out); /* NULL: the library says nothing */
    /* Libraries traced per state: the state -> step label table covers all n_states values of
     * the library's state enum (NULL: steps are turns). */
    size_t (*state_count)(void);
    uint16_t (*state_label)(int state); /* 0 out of range */
    size_t n_states;
    const tb_state_label *known_states;
    size_t n_known_states;
    const tb_library_test *extra; /* the library's own tests */
    size_t n_extra;
} tb_expected;

extern const tb_expected tb_expected_backend; /* defined by tests/backend/<library>.c */

/* ---------------------------------------------------------------- shared helpers */

/* Optional hook run on a freshly opened pair (to reconfigure a peer). */
typedef void (*tb_pair_hook)(tb_pair *p);

/* A traced pair: handshake, one 100-byte record each way (traced as RECORD_WRITE/READ),
 * close_notify from both peers. 0, or -1 with why. out (may be NULL) gets what was
 * negotiated and the bytes on the wire. */
int tb_conformance_run(const tb_conn_config *cfg, tb_pair_hook hook, tb_outcome *out, char *why, size_t whylen);

/* How many `inner` spans of `peer` start inside an `outer` span of the same peer. */
int tb_nested(uint16_t outer, uint16_t inner, uint8_t peer);
/* How many spans of `label` the peer started. */
int tb_count(uint16_t label, uint8_t peer);

#endif
