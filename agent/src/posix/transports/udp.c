/* SPDX-License-Identifier: Apache-2.0 */
/* The UDP transport: one DTLS association per repetition between two agent processes.
 * The server binds once per RUN; per repetition it waits for a datagram that starts a
 * DTLS ClientHello and then talks to that client only: sendto() its address, and datagrams
 * from any other sender are dropped. (It does not connect() the socket: dissolving that
 * association later with AF_UNSPEC would unbind a port the kernel chose.) The client
 * opens a fresh, connected socket per repetition, bound to the repetition's port.
 *
 * Identity (docs/networks.md): the client's source port names its repetition, so the
 * server takes the ClientHello of the repetition it expects, drops stale ones, and when a
 * later repetition's ClientHello arrives it knows its own client has moved on: the
 * repetition fails at once (with why()) and that ClientHello starts the next one.
 *
 * Linger: a server that sent the last flight keeps the finished association (a second link
 * slot) while it waits for the next ClientHello; the client's retransmissions of its last
 * flight are handed to that session, which resends its own (RFC 6347 4.2.4).
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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sock.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

#define TB_UDP_MAX_DATAGRAM 65535u
#define TB_UDP_LINKS 2 /* the current association and the lingering one */

struct tb_transport {
    int fd;
    uint8_t local;
    bool in_use;    /* opened and not closed (lingering included) */
    bool lingering; /* finished: only answers its client's retransmissions */
    uint32_t conn;  /* the connection number it was opened for */
    tb_link_counters c;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    int (*answer)(void *ctx); /* lingering: hands one datagram to the session; NULL = over */
    void *answer_ctx;
    char why[128]; /* set when a later connection ended this one */
};

/* A later connection's ClientHello that the current association's recv took off the socket:
 * the next open() starts from it. */
typedef struct tb_udp_held {
    bool present;
    uint8_t data[TB_UDP_MAX_DATAGRAM];
    size_t len;
    struct sockaddr_storage from;
    socklen_t from_len;
} tb_udp_held;

static struct {
    tb_sock_run run;
    uint16_t server_port;
    tb_transport links[TB_UDP_LINKS];
    tb_udp_held held;
} tb_udp = {.run = {.server_fd = -1}, .links = {{.fd = -1}, {.fd = -1}}};

static uint8_t tb_udp_scratch[TB_UDP_MAX_DATAGRAM]; /* peeked and discarded datagrams land here */

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
    tb_udp.server_port = tb_sock_local_port(fd);
    tb_sock_where(fd, tb_udp.run.where, sizeof tb_udp.run.where);
    return 0;
}

static void tb_udp_close(tb_transport *t) {
    if (t->fd >= 0 && t->fd != tb_udp.run.server_fd)
        close(t->fd);
    *t = (tb_transport){.fd = -1};
}

static void tb_udp_release(void) {
    for (int i = 0; i < TB_UDP_LINKS; i++)
        tb_udp_close(&tb_udp.links[i]);
    tb_udp.held.present = false;
    tb_sock_release(&tb_udp.run);
}

static const char *tb_udp_where(void) { return tb_udp.run.where; }

/* A DTLS 1.x handshake record (type 22) of epoch 0 carrying a ClientHello (type 1). */
static bool tb_udp_is_client_hello(const uint8_t *d, ssize_t n) {
    return n >= 25 && d[0] == 22 && d[1] == 0xfe && d[3] == 0 && d[4] == 0 && d[13] == 1;
}

/* ---------------------------------------------------------------- the server's socket */

/* The next datagram for the server (the held one first, else a peek at the socket queue),
 * waiting until `deadline`; its length, or -1 when none came. It stays where it is until
 * tb_udp_drop() or a recv takes it. */
static ssize_t tb_udp_next(uint64_t deadline, struct sockaddr_storage *from, const uint8_t **data) {
    if (tb_udp.held.present) {
        *from = tb_udp.held.from;
        *data = tb_udp.held.data;
        return (ssize_t)tb_udp.held.len;
    }
    while (tb_sock_poll_until(tb_udp.run.server_fd, POLLIN, deadline) == TB_WAIT_READY) {
        socklen_t sl = sizeof *from;
        ssize_t n = recvfrom(tb_udp.run.server_fd, tb_udp_scratch, sizeof tb_udp_scratch, MSG_PEEK,
                             (struct sockaddr *)from, &sl);
        if (n >= 0) {
            *data = tb_udp_scratch;
            return n;
        }
        if (errno != EAGAIN && errno != EINTR && errno != ECONNREFUSED)
            return -1;
    }
    return -1;
}

static void tb_udp_drop(void) {
    if (tb_udp.held.present)
        tb_udp.held.present = false;
    else
        recv(tb_udp.run.server_fd, tb_udp_scratch, sizeof tb_udp_scratch, 0);
}

/* The lingering association a datagram from `from` belongs to, if any still answers. */
static tb_transport *tb_udp_lingering(const struct sockaddr_storage *from) {
    for (int i = 0; i < TB_UDP_LINKS; i++) {
        tb_transport *t = &tb_udp.links[i];
        if (t->lingering && t->answer && tb_sock_same_addr(from, &t->peer))
            return t;
    }
    return NULL;
}

/* Hands the datagram at the head to its lingering session; one the session did not take is
 * dropped, so the loop always moves on. */
static void tb_udp_answer(tb_transport *t) {
    uint32_t before = t->c.packets[1 - t->local];
    if (t->answer(t->answer_ctx) != 0)
        t->answer = NULL;
    if (t->c.packets[1 - t->local] == before)
        tb_udp_drop();
}

/* Waits for connection `conn`'s ClientHello, answering lingering associations meanwhile. */
static int tb_udp_accept(tb_transport *t, uint32_t conn, char *err, size_t errlen) {
    uint64_t deadline = tb_port_now_ns() + (uint64_t)tb_udp.run.p.accept_ms * 1000000u;
    for (;;) {
        struct sockaddr_storage from;
        const uint8_t *d;
        ssize_t n = tb_udp_next(deadline, &from, &d);
        if (n < 0) {
            snprintf(err, errlen, "no DTLS ClientHello for repetition %u arrived at %s within %u ms", (unsigned)conn,
                     tb_udp.run.where, (unsigned)tb_udp.run.p.accept_ms);
            return -1;
        }
        bool hello = tb_udp_is_client_hello(d, n);
        tb_transport *old = hello ? NULL : tb_udp_lingering(&from);
        if (old) {
            tb_udp_answer(old);
            continue;
        }
        uint32_t other = conn;
        tb_conn_order order = hello ? tb_sock_conn_order(tb_sock_port(&from), conn, &other) : TB_CONN_EARLIER;
        if (order == TB_CONN_LATER) { /* left in place: it starts repetition `other` */
            snprintf(err, errlen, "the client's ClientHello for repetition %u arrived while the server waited for "
                     "repetition %u: that repetition's client gave up or never came", (unsigned)other, (unsigned)conn);
            return -1;
        }
        if (order == TB_CONN_EARLIER) { /* stale, or not a ClientHello: not ours */
            tb_udp_drop();
            continue;
        }
        t->peer = from;
        t->peer_len = from.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        t->fd = tb_udp.run.server_fd;
        return 0; /* the ClientHello stays queued (or held) for the session's first recv */
    }
}

static void tb_udp_serve(uint32_t timeout_ms) {
    uint64_t deadline = tb_port_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        bool any = false;
        for (int i = 0; i < TB_UDP_LINKS; i++)
            any = any || (tb_udp.links[i].lingering && tb_udp.links[i].answer);
        struct sockaddr_storage from;
        const uint8_t *d;
        ssize_t n = any ? tb_udp_next(deadline, &from, &d) : -1;
        if (n < 0)
            return;
        tb_transport *old = tb_udp_is_client_hello(d, n) ? NULL : tb_udp_lingering(&from);
        if (old)
            tb_udp_answer(old);
        else
            tb_udp_drop();
    }
}

/* ---------------------------------------------------------------- the client */

/* A fresh socket bound to connection `conn`'s port (the next block when one is taken; any
 * port as the last resort), connected to the server. */
static int tb_udp_connect(tb_transport *t, uint32_t conn, char *err, size_t errlen) {
    tb_sock_addr(&tb_udp.run.p, &t->peer, &t->peer_len);
    for (uint32_t k = 0; k <= TB_NET_CLIENT_PORT_TRIES; k++) {
        int fd = socket(t->peer.ss_family, SOCK_DGRAM, 0);
        if (fd < 0)
            return tb_sock_fail(err, errlen, "socket");
        if (tb_sock_bind_client(fd, &t->peer, conn, k, 0) == 0 &&
            connect(fd, (struct sockaddr *)&t->peer, t->peer_len) == 0 && tb_sock_nonblock(fd) == 0) {
            t->fd = fd;
            return 0;
        }
        int e = errno;
        close(fd);
        errno = e;
        if (e != EADDRINUSE && e != EADDRNOTAVAIL)
            break;
    }
    return tb_sock_fail(err, errlen, "connecting the client's UDP socket");
}

static tb_transport *tb_udp_free_link(void) {
    for (int i = 0; i < TB_UDP_LINKS; i++)
        if (!tb_udp.links[i].in_use)
            return &tb_udp.links[i];
    return NULL;
}

static tb_transport *tb_udp_open(uint32_t conn, char *err, size_t errlen) {
    tb_transport *t = tb_udp_free_link();
    if (!tb_udp.run.prepared || !t) {
        snprintf(err, errlen, !t ? "the udp transport is already open (one association at a time)"
                                 : "the udp transport needs an endpoint (a RUN with role and peer)");
        return NULL;
    }
    int server = tb_udp.run.p.role == TB_ROLE_SERVER;
    *t = (tb_transport){.fd = -1, .local = server ? TB_PEER_SERVER : TB_PEER_CLIENT, .conn = conn};
    if ((server ? tb_udp_accept(t, conn, err, errlen) : tb_udp_connect(t, conn, err, errlen)) != 0)
        return NULL;
    t->in_use = true;
    return t;
}

/* ---------------------------------------------------------------- I/O */

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

static int tb_udp_count_in(tb_transport *t, ssize_t n) {
    t->c.bytes[1 - t->local] += (uint64_t)n;
    t->c.packets[1 - t->local]++;
    return (int)n;
}

/* A lingering association takes only its own client's datagrams (never a ClientHello, which
 * starts a new association): everything else stays queued for the server's accept loop. */
static int tb_udp_recv_lingering(tb_transport *t, uint8_t *buf, size_t len) {
    struct sockaddr_storage from;
    socklen_t sl = sizeof from;
    ssize_t n = recvfrom(t->fd, tb_udp_scratch, sizeof tb_udp_scratch, MSG_PEEK, (struct sockaddr *)&from, &sl);
    if (n < 0 || tb_udp.held.present || !tb_sock_same_addr(&from, &t->peer) || tb_udp_is_client_hello(tb_udp_scratch, n))
        return TB_IO_WOULD_BLOCK;
    n = recv(t->fd, buf, len, 0);
    return n < 0 ? TB_IO_WOULD_BLOCK : tb_udp_count_in(t, n);
}

/* A server's datagram from another sender: a later repetition's ClientHello is held for the
 * next open() and ends this association; anything else (stale, a late close_notify) is dropped. */
static void tb_udp_stray(tb_transport *t, const uint8_t *buf, ssize_t n, const struct sockaddr_storage *from) {
    uint32_t other = t->conn;
    if (t->local != TB_PEER_SERVER || !tb_udp_is_client_hello(buf, n) ||
        tb_sock_conn_order(tb_sock_port(from), t->conn, &other) != TB_CONN_LATER)
        return;
    tb_udp_held *h = &tb_udp.held;
    h->present = true;
    h->len = (size_t)n;
    memcpy(h->data, buf, h->len);
    h->from = *from;
    snprintf(t->why, sizeof t->why, "the client started repetition %u before repetition %u ended", (unsigned)other,
             (unsigned)t->conn);
}

/* One datagram per call; stray senders are dropped (or held, see tb_udp_stray). */
static int tb_udp_recv(void *ctx, uint8_t *buf, size_t len) {
    tb_transport *t = ctx;
    if (t->lingering)
        return tb_udp_recv_lingering(t, buf, len);
    tb_udp_held *h = &tb_udp.held;
    if (h->present && tb_sock_same_addr(&h->from, &t->peer)) { /* the ClientHello this association began with */
        size_t n = h->len < len ? h->len : len;
        memcpy(buf, h->data, n);
        h->present = false;
        return tb_udp_count_in(t, (ssize_t)n);
    }
    while (!t->why[0]) {
        struct sockaddr_storage from;
        socklen_t sl = sizeof from;
        ssize_t n = recvfrom(t->fd, buf, len, 0, (struct sockaddr *)&from, &sl);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED ? TB_IO_WOULD_BLOCK : -1;
        if (tb_sock_same_addr(&from, &t->peer))
            return tb_udp_count_in(t, n);
        tb_udp_stray(t, buf, n, &from);
    }
    return TB_IO_WOULD_BLOCK;
}

static tb_io tb_udp_endpoint(tb_transport *t, uint8_t peer) {
    if (peer != t->local)
        return (tb_io){0};
    return (tb_io){.send = tb_udp_send, .recv = tb_udp_recv, .ctx = t};
}

/* A server whose client moved on waits no more. */
static int tb_udp_wait(tb_transport *t, uint8_t peer, uint32_t timeout_ms) {
    return t->why[0] ? TB_WAIT_ERROR : tb_sock_wait(t->fd, t->local, peer, timeout_ms);
}

static const char *tb_udp_why(tb_transport *t) { return t->why; }

static int tb_udp_pending(tb_transport *t, uint8_t peer) { return tb_udp_wait(t, peer, 0) == TB_WAIT_READY; }

static void tb_udp_stats(tb_transport *t, tb_link_counters *out) {
    *out = t->c;
    bool server = t->local == TB_PEER_SERVER;
    out->client_port = server ? tb_sock_port(&t->peer) : tb_sock_local_port(t->fd);
    out->server_port = server ? tb_udp.server_port : tb_sock_port(&t->peer);
}

static void tb_udp_counters(tb_transport *t, uint64_t *c2s, uint64_t *s2c) { tb_sock_counters(&t->c, c2s, s2c); }

static size_t tb_udp_peer_id(tb_transport *t, uint8_t *buf, size_t cap) { return tb_sock_peer_id(&t->peer, buf, cap); }

static void tb_udp_linger(tb_transport *t, int (*answer)(void *ctx), void *ctx) {
    t->lingering = true;
    t->answer = answer;
    t->answer_ctx = ctx;
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
    .why = tb_udp_why,
    .peer_id = tb_udp_peer_id,
    .where = tb_udp_where,
    .close = tb_udp_close,
    .linger = tb_udp_linger,
    .serve = tb_udp_serve,
};
