/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the POSIX socket transports (tcp.c, udp.c): per-RUN state, errors,
 * addresses, polling, counters, the peer id for DTLS cookies. Internal to src/posix/transports. */
#ifndef TLSBENCH_SOCK_H
#define TLSBENCH_SOCK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tlsbench/transport.h"

/* What a socket transport keeps for one RUN: its endpoint and a server's socket. */
typedef struct tb_sock_run {
    tb_link_params p;
    int prepared;
    int server_fd; /* the server's listening (tcp) or bound (udp) socket, kept for the RUN; -1 */
    char where[64];
} tb_sock_run;

/* The common start of prepare(): keeps the RUN's endpoint and fills its address; -1 with
 * a message for an unknown family. */
int tb_sock_prepare(tb_sock_run *run, const tb_link_params *p, struct sockaddr_storage *ss, socklen_t *len,
                    char *err, size_t errlen);
/* release(): closes the server's socket and forgets the endpoint. */
void tb_sock_release(tb_sock_run *run);
/* "what: strerror(errno)" into err; returns -1. */
int tb_sock_fail(char *err, size_t errlen, const char *what);
/* wait() for a transport with one local peer on fd: only that peer can wait. */
int tb_sock_wait(int fd, uint8_t local, uint8_t peer, uint32_t timeout_ms);
/* counters() from the per-direction byte counts. */
void tb_sock_counters(const tb_link_counters *c, uint64_t *bytes_c2s, uint64_t *bytes_s2c);

/* Fills a sockaddr from the RUN's endpoint; -1 for an unknown family. */
int tb_sock_addr(const tb_link_params *p, struct sockaddr_storage *ss, socklen_t *len);
/* poll() one descriptor for `events` up to timeout_ms: TB_WAIT_READY / _TIMEOUT / _ERROR. */
int tb_sock_poll(int fd, short events, uint32_t timeout_ms);
/* The same until an absolute deadline (tb_port_now_ns); TB_WAIT_TIMEOUT once it has passed. */
int tb_sock_poll_until(int fd, short events, uint64_t deadline_ns);
int tb_sock_nonblock(int fd);
/* "addr:port" of a bound socket ("[addr]:port" for IPv6). */
void tb_sock_where(int fd, char *buf, size_t len);
/* family (1 byte), port (2 bytes, network order), address: what a DTLS cookie binds to. */
size_t tb_sock_peer_id(const struct sockaddr_storage *ss, uint8_t *buf, size_t cap);
int tb_sock_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
void tb_sock_sleep_ms(uint32_t ms);

/* ---- identity (spec [network], docs/networks.md): connection number <-> client port */

/* Where a client's connection stands against the one a server expects. */
typedef enum tb_conn_order {
    TB_CONN_UNNAMED,  /* a port outside the scheme (a relay, NAT, an old client): served in order */
    TB_CONN_EXPECTED, /* the connection the server waits for */
    TB_CONN_EARLIER,  /* a repetition the server has finished or given up: stale */
    TB_CONN_LATER     /* the client has moved past the expected repetition */
} tb_conn_order;

/* The source port of connection `conn` in port block k (0 .. tries-1). */
uint16_t tb_sock_client_port(uint32_t conn, uint32_t k);
/* How a client port's connection relates to `expected`; *conn gets its number (LATER, EARLIER). */
tb_conn_order tb_sock_conn_order(uint16_t port, uint32_t expected, uint32_t *conn);
/* Binds a client socket to connection conn's port in block k (the server's family), or to any
 * port when k == TB_NET_CLIENT_PORT_TRIES (the unnamed fallback). `reuse`: SO_REUSEADDR (TCP:
 * a port whose last connection is in TIME_WAIT binds again). 0 or -1 with errno. */
int tb_sock_bind_client(int fd, const struct sockaddr_storage *server, uint32_t conn, uint32_t k, int reuse);
uint16_t tb_sock_port(const struct sockaddr_storage *ss);
uint16_t tb_sock_local_port(int fd);

#endif
