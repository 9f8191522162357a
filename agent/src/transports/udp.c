/* SPDX-License-Identifier: Apache-2.0 */
/* The UDP transport: one DTLS association per repetition between two agent processes.
 * The server binds once per RUN; per repetition it waits for a datagram that starts a
 * DTLS ClientHello (anything else, e.g. a late close_notify of the previous association,
 * is discarded) and then talks to that client only: sendto() its address, and datagrams
 * from any other sender are dropped. (It does not connect() the socket: dissolving that
 * association later with AF_UNSPEC would unbind a port the kernel chose.) The client
 * opens a fresh, connected socket (a fresh port) per repetition.
 *
 * Non-blocking, like tcp.c: the runner's WAIT span holds the network time and the DTLS
 * retransmission timer decides how long it may last. ECONNREFUSED (an ICMP port
 * unreachable because the server is not up yet) reads as "nothing arrived": the library's
 * retransmission resends, as it would after a loss.
 *
 * Counters: bytes and datagrams per direction as sent/received by this agent (UDP has no
 * acknowledgements; the DTLS library's flight retransmissions are counted by the backend). */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

#define TB_UDP_MAX_DATAGRAM 65535u

struct tb_transport {
    int fd;
    uint8_t local;
    int in_use;
    tb_link_counters c;
    struct sockaddr_storage peer;
    socklen_t peer_len;
};

static struct {
    tb_sock_run run;
    tb_transport link;
} tb_udp = {.run = {.server_fd = -1}, .link = {.fd = -1}};

static uint8_t tb_udp_scratch[TB_UDP_MAX_DATAGRAM]; /* discarded datagrams land here */

static int tb_udp_prepare(const tb_link_params *p, char *err, size_t errlen) {
    struct sockaddr_storage ss;
    socklen_t sl;
    if (tb_sock_prepare(&tb_udp.run, p, &ss, &sl, err, errlen) != 0)
        return -1;
    if (p->role != TB_ROLE_SERVER)
        return 0;
    int one = 1;
    int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return tb_sock_fail(err, errlen, "socket");
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 || bind(fd, (struct sockaddr *)&ss, sl) != 0 ||
        tb_sock_nonblock(fd) != 0) {
        tb_sock_fail(err, errlen, "binding the server's UDP socket");
        close(fd);
        return -1;
    }
    tb_udp.run.server_fd = fd;
    tb_sock_where(fd, tb_udp.run.where, sizeof tb_udp.run.where);
    return 0;
}

static void tb_udp_release(void) { tb_sock_release(&tb_udp.run); }

static const char *tb_udp_where(void) { return tb_udp.run.where; }

/* A DTLS 1.x handshake record (type 22) of epoch 0 carrying a ClientHello (type 1). */
static int tb_udp_is_client_hello(const uint8_t *d, ssize_t n) {
    return n >= 25 && d[0] == 22 && d[1] == 0xfe && d[3] == 0 && d[4] == 0 && d[13] == 1;
}

/* Waits for the next association's first ClientHello and connects the socket to its sender. */
static int tb_udp_accept(tb_transport *t, char *err, size_t errlen) {
    uint64_t deadline = tb_port_now_ns() + (uint64_t)TB_SOCK_CONNECT_TIMEOUT_MS * 1000000u;
    for (;;) {
        uint64_t now = tb_port_now_ns();
        if (now >= deadline || tb_sock_poll(tb_udp.run.server_fd, POLLIN, (uint32_t)((deadline - now) / 1000000u)) !=
                                   TB_WAIT_READY) {
            snprintf(err, errlen, "no DTLS ClientHello arrived at %s within %u ms", tb_udp.run.where,
                     (unsigned)TB_SOCK_CONNECT_TIMEOUT_MS);
            return -1;
        }
        t->peer_len = sizeof t->peer;
        ssize_t n = recvfrom(tb_udp.run.server_fd, tb_udp_scratch, sizeof tb_udp_scratch, MSG_PEEK,
                             (struct sockaddr *)&t->peer, &t->peer_len);
        if (n < 0 && errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED)
            return tb_sock_fail(err, errlen, "recvfrom");
        if (tb_udp_is_client_hello(tb_udp_scratch, n))
            break;
        if (n >= 0)
            recv(tb_udp.run.server_fd, tb_udp_scratch, sizeof tb_udp_scratch, 0); /* not ours: drop it */
    }
    t->fd = tb_udp.run.server_fd;
    return 0;
}

static int tb_udp_connect(tb_transport *t, char *err, size_t errlen) {
    tb_sock_addr(&tb_udp.run.p, &t->peer, &t->peer_len);
    int fd = socket(t->peer.ss_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return tb_sock_fail(err, errlen, "socket");
    if (connect(fd, (struct sockaddr *)&t->peer, t->peer_len) != 0 || tb_sock_nonblock(fd) != 0) {
        tb_sock_fail(err, errlen, "connecting the client's UDP socket");
        close(fd);
        return -1;
    }
    t->fd = fd;
    return 0;
}

static tb_transport *tb_udp_open(char *err, size_t errlen) {
    tb_transport *t = &tb_udp.link;
    if (!tb_udp.run.prepared || t->in_use) {
        snprintf(err, errlen, t->in_use ? "the udp transport is already open (one association at a time)"
                                        : "the udp transport needs an endpoint (a RUN with role and peer)");
        return NULL;
    }
    int server = tb_udp.run.p.role == TB_ROLE_SERVER;
    *t = (tb_transport){.fd = -1, .local = server ? TB_PEER_SERVER : TB_PEER_CLIENT};
    if ((server ? tb_udp_accept(t, err, errlen) : tb_udp_connect(t, err, errlen)) != 0)
        return NULL;
    t->in_use = 1;
    return t;
}

static int tb_udp_send(void *ctx, const uint8_t *buf, size_t len) {
    tb_transport *t = ctx;
    ssize_t n;
    do
        n = sendto(t->fd, buf, len, 0, (const struct sockaddr *)&t->peer, t->peer_len);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == ECONNREFUSED)
        n = (ssize_t)len; /* the peer is not up (yet): the datagram is lost, as on a network */
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? TB_IO_WOULD_BLOCK : -1;
    t->c.bytes[t->local] += (uint64_t)n;
    t->c.packets[t->local]++;
    return (int)n;
}

/* One datagram per call; stray senders (queued before the server's connect) are dropped. */
static int tb_udp_recv(void *ctx, uint8_t *buf, size_t len) {
    tb_transport *t = ctx;
    for (;;) {
        struct sockaddr_storage from;
        socklen_t sl = sizeof from;
        ssize_t n = recvfrom(t->fd, buf, len, 0, (struct sockaddr *)&from, &sl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED ? TB_IO_WOULD_BLOCK : -1;
        if (!tb_sock_same_addr(&from, &t->peer))
            continue;
        t->c.bytes[1 - t->local] += (uint64_t)n;
        t->c.packets[1 - t->local]++;
        return (int)n;
    }
}

static tb_io tb_udp_endpoint(tb_transport *t, uint8_t peer) {
    if (peer != t->local)
        return (tb_io){0};
    return (tb_io){.send = tb_udp_send, .recv = tb_udp_recv, .ctx = t};
}

static int tb_udp_wait(tb_transport *t, uint8_t peer, uint32_t timeout_ms) {
    return tb_sock_wait(t->fd, t->local, peer, timeout_ms);
}

static int tb_udp_pending(tb_transport *t, uint8_t peer) { return tb_udp_wait(t, peer, 0) == TB_WAIT_READY; }

static void tb_udp_stats(tb_transport *t, tb_link_counters *out) { *out = t->c; }

static void tb_udp_counters(tb_transport *t, uint64_t *c2s, uint64_t *s2c) { tb_sock_counters(&t->c, c2s, s2c); }

static size_t tb_udp_peer_id(tb_transport *t, uint8_t *buf, size_t cap) { return tb_sock_peer_id(&t->peer, buf, cap); }

static void tb_udp_close(tb_transport *t) {
    if (t->fd >= 0 && t->fd != tb_udp.run.server_fd)
        close(t->fd);
    t->fd = -1;
    t->in_use = 0;
}

const tb_transport_ops tb_udp_transport = {
    .name = "udp",
    .prepare = tb_udp_prepare,
    .release = tb_udp_release,
    .open = tb_udp_open,
    .endpoint = tb_udp_endpoint,
    .pending = tb_udp_pending,
    .counters = tb_udp_counters,
    .stats = tb_udp_stats,
    .wait = tb_udp_wait,
    .peer_id = tb_udp_peer_id,
    .where = tb_udp_where,
    .close = tb_udp_close,
};
