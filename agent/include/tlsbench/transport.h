/* SPDX-License-Identifier: Apache-2.0 */
/* A transport joins the two peers of a connection. The in-memory transport keeps both
 * in one process and thread (ping-pong), so neither peer's processing is disturbed by
 * the other or by a network. The socket transports (tcp, udp) join two agent processes:
 * each carries one local peer. Counters feed the REP header.
 *
 * Lifecycle: prepare (once per RUN: the server binds and listens), then per repetition
 * open (a fresh link: connect / accept / the next DTLS association) ... close, then
 * release. One link at a time (plus, for a DTLS server, the previous association while it
 * lingers): transports keep static state, nothing is allocated per repetition.
 *
 * Identity (docs/networks.md): each connection is numbered (the repetition's wire index);
 * a socket client binds a source port derived from it and the server serves only the
 * connection it expects, so two agents can never run different repetitions as one. */
#ifndef TLSBENCH_TRANSPORT_H
#define TLSBENCH_TRANSPORT_H
#include <stdint.h>
#include "tlsbench/backend.h"

typedef struct tb_transport tb_transport;

/* What a RUN asks of the transport (docs/networks.md). */
typedef struct tb_link_params {
    uint8_t role;      /* TB_ROLE_*: both (memory) or the local peer */
    uint8_t family;    /* 4 or 6 (sockets) */
    uint8_t addr[16];  /* the server's address, network order */
    uint16_t port;     /* the server's port; a server may ask 0 (any free port) */
    uint16_t options;  /* RUN options bits: TB_OPTION_NODELAY, TB_OPTION_QUICKACK */
    uint16_t tcp_mss;  /* TCP_MAXSEG, 0 = the kernel's */
    uint8_t datagram;  /* memory: keep datagram boundaries (DTLS) */
    uint32_t give_up_ms; /* a client's connect gives up after this long (G) */
    uint32_t accept_ms;  /* a server waits this long for its next client (W > 2 G) */
} tb_link_params;

/* Per-repetition counters, indexed by the sending peer (TB_PEER_CLIENT = c2s). */
typedef struct tb_link_counters {
    uint64_t bytes[2];
    uint32_t packets[2];     /* datagrams (memory, udp) or TCP segments (TCP_INFO) */
    uint32_t retransmissions; /* TCP_INFO tcpi_total_retrans; 0 where the transport has none */
    uint16_t client_port;     /* the connection's identity: both ends' ports (0 in memory) */
    uint16_t server_port;
} tb_link_counters;

/* wait() results */
#define TB_WAIT_READY 1
#define TB_WAIT_TIMEOUT 0
#define TB_WAIT_ERROR (-1)

typedef struct tb_transport_ops {
    const char *name; /* spec [transport] name */
    /* Once per RUN, before the first open: binds/listens (server) or stores the endpoint.
     * 0, or -1 with a message in err. Without it, open() uses defaults (memory: stream). */
    int (*prepare)(const tb_link_params *p, char *err, size_t errlen);
    /* Once per RUN, after the last close (closes the listening socket). */
    void (*release)(void);
    /* A fresh, empty link for connection number `conn` (the repetition's wire index); NULL
     * with a message in err. */
    tb_transport *(*open)(uint32_t conn, char *err, size_t errlen);
    /* The raw (untraced) I/O of one peer; the runner wraps it with I/O tracing. */
    tb_io (*endpoint)(tb_transport *t, uint8_t peer);
    /* True when bytes are waiting for `peer` (decides whose turn it is). */
    int (*pending)(tb_transport *t, uint8_t peer);
    void (*counters)(tb_transport *t, uint64_t *bytes_c2s, uint64_t *bytes_s2c);
    /* Everything counted so far (bytes, packets, retransmissions); call before close. */
    void (*stats)(tb_transport *t, tb_link_counters *out);
    /* Blocks up to timeout_ms until bytes are waiting for `peer`: TB_WAIT_READY,
     * TB_WAIT_TIMEOUT, or TB_WAIT_ERROR (the peer closed, a socket error, or the client
     * already started a later connection: why() says which). */
    int (*wait)(tb_transport *t, uint8_t peer, uint32_t timeout_ms);
    /* Why the last wait failed, when the transport knows better than errno ("" otherwise).
     * May be NULL. */
    const char *(*why)(tb_transport *t);
    /* The remote peer's transport address as bytes (family, port, address): a DTLS
     * server binds its cookies to it. Returns the length (0 when there is none). */
    size_t (*peer_id)(tb_transport *t, uint8_t *buf, size_t cap);
    /* Where a prepared server listens ("127.0.0.1:4433"); "" when not listening. */
    const char *(*where)(void);
    /* The local peer has sent its last byte (close_notify): a stream half-closes and
     * drains the peer's last bytes, so the counters cover the whole connection. May be NULL. */
    void (*finish)(tb_transport *t);
    void (*close)(tb_transport *t);
    /* DTLS server (NULL elsewhere): instead of close(), keep the finished association t so
     * its session can answer the client's retransmissions of its last flight (RFC 6347
     * 4.2.4) while the server waits for the next client. Whenever open() or serve() meets a
     * datagram from t's client, it calls answer(ctx), which reads it through t's endpoint (the
     * session's own recv takes only t's datagrams) and returns 0 to go on lingering or -1
     * when the association is over. The caller ends it with close(t). */
    void (*linger)(tb_transport *t, int (*answer)(void *ctx), void *ctx);
    /* Answers a lingering association for up to timeout_ms, until answer() returns -1: the
     * end of a RUN, where no next client comes. May be NULL. */
    void (*serve)(uint32_t timeout_ms);
} tb_transport_ops;

extern const tb_transport_ops tb_memory_transport;
extern const tb_transport_ops tb_tcp_transport;
extern const tb_transport_ops tb_udp_transport;

/* The transport for a TB_TRANSPORT_* value, or NULL when this agent has none. */
const tb_transport_ops *tb_transport_find(uint8_t transport);

#endif
