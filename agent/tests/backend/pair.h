/* SPDX-License-Identifier: Apache-2.0 */
/* Two sessions of the linked backend joined by the memory transport, driven in this thread
 * without the runner: what the backend session tests share. Each test keeps its own
 * application-data exchange and checks; nothing here CHECKs (tb_test.h's counters are
 * per file). */
#ifndef TLSBENCH_TESTS_PAIR_H
#define TLSBENCH_TESTS_PAIR_H
#include <stddef.h>
#include <stdint.h>

#include "tlsbench/backend.h"
#include "tlsbench/transport.h"

typedef struct tb_pair {
    tb_transport *t;
    tb_io raw[2]; /* the transport's endpoints (wrapped when opened traced) */
    tb_session *peer[2];
    char err[256];
} tb_pair;

/* Fresh link and both sessions (client first); 0, or -1 with the reason in p->err.
 * Call tb_pair_close() either way. */
int tb_pair_open(tb_pair *p, const tb_conn_config *cfg);
/* The same with each peer's I/O traced as the runner does (SEND/RECV spans). */
int tb_pair_open_traced(tb_pair *p, const tb_conn_config *cfg);
void tb_pair_close(tb_pair *p);

/* Peers take turns (client first), each stepping until it waits; 0 when both are done. */
int tb_pair_handshake(tb_pair *p, int32_t *lib_error);

/* One record of len (at most 100) bytes from peer w, read whole by the other peer;
 * 0 when it arrived intact. */
int tb_pair_echo(tb_pair *p, uint8_t w, const uint8_t *out, size_t len);

#endif
