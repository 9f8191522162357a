/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP transport (Linux): one TLS connection per repetition between two agent
 * processes. The server binds and listens once per RUN and accepts one connection per
 * repetition; the client connects per repetition (retrying while the server is not up)
 * from the repetition's source port (docs/networks.md "Identity"): the server takes the
 * connection it expects, closes stale ones and keeps a later one for its repetition.
 *
 * Sockets are non-blocking: a receive with nothing there returns TB_IO_WOULD_BLOCK, the
 * library returns WANT_READ, and the runner waits (poll) outside the library in a traced
 * WAIT span. So a step's span never contains network waiting, the trace has the same shape
 * as in memory mode, and the DTLS transport can share the runner's timer-driven wait.
 * Sends complete inside the callback (poll for POLLOUT when the socket buffer is full):
 * that wait is part of the SEND span.
 *
 * Counters: bytes through the callbacks (plus what the close drains), packets and
 * retransmissions from TCP_INFO (segments in/out, including pure ACKs, SYN and FIN;
 * tcpi_total_retrans). <linux/tcp.h>, not <netinet/tcp.h>: glibc's struct tcp_info lacks
 * tcpi_segs_in/out. */
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

#define TB_TCP_BACKLOG 4
#define TB_TCP_SEND_TIMEOUT_MS 10000u /* a peer that stops reading for this long is gone */
#define TB_TCP_DRAIN_TIMEOUT_MS 2000u /* how long the close waits for the peer's FIN */
#define TB_TCP_RETRY_MS 20u

struct tb_transport {
    int fd;
    uint8_t local;            /* TB_PEER_* this agent plays */
    int in_use;
    int shut;                 /* shutdown() done: counters final */
    tb_link_counters c;       /* bytes from the callbacks; packets/retrans from TCP_INFO */
    struct sockaddr_storage peer;
};

/* A connection accepted before its repetition (the client moved on): the next open takes it. */
typedef struct tb_tcp_early {
    int fd; /* -1: none */
    struct sockaddr_storage peer;
} tb_tcp_early;

static struct {
    tb_sock_run run;
    tb_transport link;
    tb_tcp_early early;
} tb_tcp = {.run = {.server_fd = -1}, .link = {.fd = -1}, .early = {.fd = -1}};

/* The RUN's socket options (spec [options]); MSS must be set before connect/listen. */
static int tb_tcp_set_options(int fd) {
    int one = 1, mss = tb_tcp.run.p.tcp_mss;
    if ((tb_tcp.run.p.options & TB_OPTION_NODELAY) && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        return -1;
    if ((tb_tcp.run.p.options & TB_OPTION_QUICKACK) && setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one) != 0)
        return -1;
    if (mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0)
        return -1;
    return 0;
}

static int tb_tcp_prepare(const tb_link_params *p, char *err, size_t errlen) {
    struct sockaddr_storage ss;
    socklen_t sl;
    if (tb_sock_prepare(&tb_tcp.run, p, &ss, &sl, err, errlen) != 0)
        return -1;
    if (p->role != TB_ROLE_SERVER)
        return 0;
    int one = 1;
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return tb_sock_fail(err, errlen, "socket");
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 || tb_tcp_set_options(fd) != 0 ||
        bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, TB_TCP_BACKLOG) != 0) {
        tb_sock_fail(err, errlen, "binding the server's TCP socket");
        close(fd);
        return -1;
    }
    tb_tcp.run.server_fd = fd;
    tb_sock_where(fd, tb_tcp.run.where, sizeof tb_tcp.run.where);
    return 0;
}

static void tb_tcp_release(void) {
    if (tb_tcp.early.fd >= 0)
        close(tb_tcp.early.fd);
    tb_tcp.early.fd = -1;
    tb_sock_release(&tb_tcp.run);
}

static const char *tb_tcp_where(void) { return tb_tcp.run.where; }

/* The next connection from the listen queue (or the one kept early), until `deadline`. */
static int tb_tcp_next(uint64_t deadline, struct sockaddr_storage *peer) {
    if (tb_tcp.early.fd >= 0) {
        int fd = tb_tcp.early.fd;
        *peer = tb_tcp.early.peer;
        tb_tcp.early.fd = -1;
        return fd;
    }
    while (tb_sock_poll_until(tb_tcp.run.server_fd, POLLIN, deadline) == TB_WAIT_READY) {
        socklen_t sl = sizeof *peer;
        int fd = accept(tb_tcp.run.server_fd, (struct sockaddr *)peer, &sl);
        if (fd >= 0 || (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED))
            return fd;
    }
    return -1;
}

/* Accepts connection `conn`: stale connections are closed, a later one is kept for its turn. */
static int tb_tcp_accept(uint32_t conn, char *err, size_t errlen) {
    uint64_t deadline = tb_port_now_ns() + (uint64_t)tb_tcp.run.p.accept_ms * 1000000u;
    for (;;) {
        struct sockaddr_storage peer;
        int fd = tb_tcp_next(deadline, &peer);
        if (fd < 0) {
            snprintf(err, errlen, "no client connected to %s for repetition %u within %u ms", tb_tcp.run.where,
                     (unsigned)conn, (unsigned)tb_tcp.run.p.accept_ms);
            return -1;
        }
        uint32_t other = conn;
        tb_conn_order order = tb_sock_conn_order(tb_sock_port(&peer), conn, &other);
        if (order == TB_CONN_EARLIER) {
            close(fd);
            continue;
        }
        if (order == TB_CONN_LATER) {
            tb_tcp.early = (tb_tcp_early){.fd = fd, .peer = peer};
            snprintf(err, errlen, "the client connected for repetition %u while the server waited for repetition "
                     "%u: that repetition's client gave up or never came", (unsigned)other, (unsigned)conn);
            return -1;
        }
        tb_tcp.link.peer = peer;
        return fd;
    }
}

/* Non-blocking connect from a bound port, waiting until `deadline`: 0, or -1 with errno. */
static int tb_tcp_connect_from(int fd, const struct sockaddr_storage *ss, socklen_t sl, uint64_t deadline) {
    if (tb_sock_nonblock(fd) != 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)ss, sl) == 0)
        return 0;
    if (errno != EINPROGRESS)
        return -1;
    int e = ETIMEDOUT;
    socklen_t el = sizeof e;
    if (tb_sock_poll_until(fd, POLLOUT, deadline) == TB_WAIT_READY && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
        e = errno;
    errno = e;
    return e == 0 ? 0 : -1;
}

/* Connects connection `conn` from its port (the next block when that port is taken or its
 * address pair is in TIME_WAIT; any port as the last resort), retrying while nobody listens
 * yet, for up to the RUN's give-up time. */
static int tb_tcp_connect(uint32_t conn, char *err, size_t errlen) {
    struct sockaddr_storage ss;
    socklen_t sl;
    tb_sock_addr(&tb_tcp.run.p, &ss, &sl);
    uint64_t deadline = tb_port_now_ns() + (uint64_t)tb_tcp.run.p.give_up_ms * 1000000u;
    for (uint32_t k = 0; k <= TB_NET_CLIENT_PORT_TRIES;) {
        int fd = socket(ss.ss_family, SOCK_STREAM, 0);
        if (fd < 0)
            return tb_sock_fail(err, errlen, "socket");
        if (tb_tcp_set_options(fd) != 0) {
            tb_sock_fail(err, errlen, "setting the RUN's TCP options");
            close(fd);
            return -1;
        }
        if (tb_sock_bind_client(fd, &ss, conn, k, 1) == 0 && tb_tcp_connect_from(fd, &ss, sl, deadline) == 0) {
            tb_tcp.link.peer = ss;
            return fd;
        }
        int e = errno;
        close(fd);
        errno = e;
        if (e == EADDRINUSE || e == EADDRNOTAVAIL) {
            k++;
            continue;
        }
        if (e != ECONNREFUSED || tb_port_now_ns() > deadline)
            return tb_sock_fail(err, errlen, "connect");
        tb_sock_sleep_ms(TB_TCP_RETRY_MS);
    }
    return tb_sock_fail(err, errlen, "connect");
}

static tb_transport *tb_tcp_open(uint32_t conn, char *err, size_t errlen) {
    tb_transport *t = &tb_tcp.link;
    if (!tb_tcp.run.prepared || t->in_use) {
        snprintf(err, errlen, t->in_use ? "the tcp transport is already open (one connection at a time)"
                                        : "the tcp transport needs an endpoint (a RUN with role and peer)");
        return NULL;
    }
    int server = tb_tcp.run.p.role == TB_ROLE_SERVER;
    int fd = server ? tb_tcp_accept(conn, err, errlen) : tb_tcp_connect(conn, err, errlen);
    if (fd < 0)
        return NULL;
    if (tb_sock_nonblock(fd) != 0 || (server && tb_tcp_set_options(fd) != 0)) {
        tb_sock_fail(err, errlen, "configuring the connection");
        close(fd);
        return NULL;
    }
    *t = (tb_transport){.fd = fd, .local = server ? TB_PEER_SERVER : TB_PEER_CLIENT, .in_use = 1, .peer = t->peer};
    return t;
}

static int tb_tcp_send(void *ctx, const uint8_t *buf, size_t len) {
    tb_transport *t = ctx;
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(t->fd, buf + done, len - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (n < 0 && errno != EINTR && tb_sock_poll(t->fd, POLLOUT, TB_TCP_SEND_TIMEOUT_MS) != TB_WAIT_READY)
            return -1;
    }
    t->c.bytes[t->local] += done;
    return done > INT32_MAX ? INT32_MAX : (int)done;
}

static void tb_tcp_quickack(const tb_transport *t) {
    int one = 1;
    if (tb_tcp.run.p.options & TB_OPTION_QUICKACK) /* not sticky in Linux: re-armed after each read */
        setsockopt(t->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

static int tb_tcp_recv(void *ctx, uint8_t *buf, size_t len) {
    tb_transport *t = ctx;
    ssize_t n;
    do
        n = recv(t->fd, buf, len > INT32_MAX ? INT32_MAX : len, 0);
    while (n < 0 && errno == EINTR);
    if (n > 0) {
        t->c.bytes[1 - t->local] += (uint64_t)n;
        tb_tcp_quickack(t);
        return (int)n;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return TB_IO_WOULD_BLOCK;
    return -1; /* 0: the peer closed; < 0: a socket error */
}

static tb_io tb_tcp_endpoint(tb_transport *t, uint8_t peer) {
    if (peer != t->local)
        return (tb_io){0};
    return (tb_io){.send = tb_tcp_send, .recv = tb_tcp_recv, .ctx = t};
}

static int tb_tcp_wait(tb_transport *t, uint8_t peer, uint32_t timeout_ms) {
    return tb_sock_wait(t->fd, t->local, peer, timeout_ms);
}

static int tb_tcp_pending(tb_transport *t, uint8_t peer) { return tb_tcp_wait(t, peer, 0) == TB_WAIT_READY; }

/* The local peer is done: half-close, then read (and count) what the peer still sends
 * (its close_notify) until its FIN, so both agents' byte counts cover the same bytes. */
static void tb_tcp_finish(tb_transport *t) {
    uint8_t buf[4096];
    if (t->shut)
        return;
    t->shut = 1;
    shutdown(t->fd, SHUT_WR);
    uint64_t deadline = tb_port_now_ns() + (uint64_t)TB_TCP_DRAIN_TIMEOUT_MS * 1000000u;
    while (tb_port_now_ns() < deadline && tb_sock_poll(t->fd, POLLIN, TB_TCP_DRAIN_TIMEOUT_MS) == TB_WAIT_READY) {
        ssize_t n = recv(t->fd, buf, sizeof buf, 0);
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR)))
            break;
        if (n > 0)
            t->c.bytes[1 - t->local] += (uint64_t)n;
    }
}

static void tb_tcp_stats(tb_transport *t, tb_link_counters *out) {
    struct tcp_info ti;
    socklen_t sl = sizeof ti;
    memset(&ti, 0, sizeof ti);
    *out = t->c;
    uint16_t here = tb_sock_local_port(t->fd), there = tb_sock_port(&t->peer);
    out->client_port = t->local == TB_PEER_CLIENT ? here : there;
    out->server_port = t->local == TB_PEER_CLIENT ? there : here;
    if (getsockopt(t->fd, IPPROTO_TCP, TCP_INFO, &ti, &sl) != 0)
        return;
    out->packets[t->local] = ti.tcpi_segs_out;
    out->packets[1 - t->local] = ti.tcpi_segs_in;
    out->retransmissions = ti.tcpi_total_retrans;
}

static void tb_tcp_counters(tb_transport *t, uint64_t *c2s, uint64_t *s2c) { tb_sock_counters(&t->c, c2s, s2c); }

static size_t tb_tcp_peer_id(tb_transport *t, uint8_t *buf, size_t cap) { return tb_sock_peer_id(&t->peer, buf, cap); }

static void tb_tcp_close(tb_transport *t) {
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->in_use = 0;
}

const tb_transport_ops tb_tcp_transport = {
    .name = "tcp",
    .prepare = tb_tcp_prepare,
    .release = tb_tcp_release,
    .open = tb_tcp_open,
    .endpoint = tb_tcp_endpoint,
    .pending = tb_tcp_pending,
    .counters = tb_tcp_counters,
    .stats = tb_tcp_stats,
    .wait = tb_tcp_wait,
    .peer_id = tb_tcp_peer_id,
    .where = tb_tcp_where,
    .finish = tb_tcp_finish,
    .close = tb_tcp_close,
};
