/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the POSIX socket transports (tcp.c, udp.c): addresses, polling,
 * the peer id for DTLS cookies. Internal to src/transports. */
#ifndef TLSBENCH_SOCK_H
#define TLSBENCH_SOCK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tlsbench/transport.h"

/* How long a socket transport waits for the other agent to connect, accept or send its
 * first datagram: the other agent may be started by hand a few seconds later. */
#define TB_SOCK_CONNECT_TIMEOUT_MS 15000u

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
