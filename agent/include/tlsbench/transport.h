/* SPDX-License-Identifier: Apache-2.0 */
/* A transport joins the two peers of a connection. The in-memory transport keeps both
 * in one process and thread (ping-pong), so neither peer's processing is disturbed by
 * the other or by a network. Byte counters feed the REP header. */
#ifndef TLSBENCH_TRANSPORT_H
#define TLSBENCH_TRANSPORT_H
#include <stdint.h>
#include "tlsbench/backend.h"

typedef struct tb_transport tb_transport;

typedef struct tb_transport_ops {
    const char *name; /* spec [transport] name */
    /* A fresh, empty link for one repetition; NULL with a message in err. */
    tb_transport *(*open)(char *err, size_t errlen);
    /* The raw (untraced) I/O of one peer; the runner wraps it with I/O tracing. */
    tb_io (*endpoint)(tb_transport *t, uint8_t peer);
    /* True when bytes are waiting for `peer` (decides whose turn it is). */
    int (*pending)(tb_transport *t, uint8_t peer);
    void (*counters)(tb_transport *t, uint64_t *bytes_c2s, uint64_t *bytes_s2c);
    void (*close)(tb_transport *t);
} tb_transport_ops;

extern const tb_transport_ops tb_memory_transport;

/* The transport for a TB_TRANSPORT_* value, or NULL when this agent has none. */
const tb_transport_ops *tb_transport_find(uint8_t transport);

#endif
