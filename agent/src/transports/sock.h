/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the POSIX socket transports (tcp.c, udp.c): per-RUN state, errors,
 * addresses, polling, counters, the peer id for DTLS cookies. Internal to src/transports. */
#ifndef TLSBENCH_SOCK_H
#define TLSBENCH_SOCK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tlsbench/transport.h"

/* How long a socket transport waits for the other agent to connect, accept or send its
 * first datagram: the other agent may be started by hand a few seconds later. */
#define TB_SOCK_CONNECT_TIMEOUT_MS 15000u

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
int tb_sock_nonblock(int fd);
/* "addr:port" of a bound socket ("[addr]:port" for IPv6). */
void tb_sock_where(int fd, char *buf, size_t len);
/* family (1 byte), port (2 bytes, network order), address: what a DTLS cookie binds to. */
size_t tb_sock_peer_id(const struct sockaddr_storage *ss, uint8_t *buf, size_t cap);
int tb_sock_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
void tb_sock_sleep_ms(uint32_t ms);

#endif
