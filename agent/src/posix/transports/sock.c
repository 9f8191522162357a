/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX socket helpers for the tcp and udp transports. */
#include "sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

int tb_sock_addr(const tb_link_params *p, struct sockaddr_storage *ss, socklen_t *len) {
    memset(ss, 0, sizeof *ss);
    if (p->family == 4) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(p->port);
        memcpy(&a->sin_addr, p->addr, 4);
        *len = sizeof *a;
        return 0;
    }
    if (p->family == 6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(p->port);
        memcpy(&a->sin6_addr, p->addr, 16);
        *len = sizeof *a;
        return 0;
    }
    return -1;
}

int tb_sock_prepare(tb_sock_run *run, const tb_link_params *p, struct sockaddr_storage *ss, socklen_t *len,
                    char *err, size_t errlen) {
    run->p = *p;
    run->prepared = 1;
    run->where[0] = '\0';
    if (tb_sock_addr(p, ss, len) != 0) {
        snprintf(err, errlen, "address family %u is not 4 or 6", (unsigned)p->family);
        return -1;
    }
    return 0;
}

void tb_sock_release(tb_sock_run *run) {
    if (run->server_fd >= 0)
        close(run->server_fd);
    run->server_fd = -1;
    run->prepared = 0;
    run->where[0] = '\0';
}

int tb_sock_fail(char *err, size_t errlen, const char *what) {
    snprintf(err, errlen, "%s: %s", what, strerror(errno));
    return -1;
}

int tb_sock_wait(int fd, uint8_t local, uint8_t peer, uint32_t timeout_ms) {
    return peer == local ? tb_sock_poll(fd, POLLIN, timeout_ms) : TB_WAIT_ERROR;
}

void tb_sock_counters(const tb_link_counters *c, uint64_t *bytes_c2s, uint64_t *bytes_s2c) {
    *bytes_c2s = c->bytes[TB_PEER_CLIENT];
    *bytes_s2c = c->bytes[TB_PEER_SERVER];
}

int tb_sock_poll(int fd, short events, uint32_t timeout_ms) {
    struct pollfd pfd = {.fd = fd, .events = events};
    int n;
    do
        n = poll(&pfd, 1, timeout_ms > INT32_MAX ? INT32_MAX : (int)timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return TB_WAIT_ERROR;
    if (n == 0)
        return TB_WAIT_TIMEOUT;
    /* POLLHUP/POLLERR with nothing to read: let the read report it (EOF, ECONNREFUSED). */
    return TB_WAIT_READY;
}

int tb_sock_poll_until(int fd, short events, uint64_t deadline_ns) {
    uint64_t now = tb_port_now_ns();
    return now >= deadline_ns ? TB_WAIT_TIMEOUT : tb_sock_poll(fd, events, (uint32_t)((deadline_ns - now) / 1000000u) + 1u);
}

int tb_sock_nonblock(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void tb_sock_where(int fd, char *buf, size_t len) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    buf[0] = '\0';
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return;
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        snprintf(buf, len, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        snprintf(buf, len, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    }
}

size_t tb_sock_peer_id(const struct sockaddr_storage *ss, uint8_t *buf, size_t cap) {
    uint8_t id[19];
    size_t n;
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        id[0] = 6;
        memcpy(id + 1, &a->sin6_port, 2);
        memcpy(id + 3, &a->sin6_addr, 16);
        n = 19;
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        id[0] = 4;
        memcpy(id + 1, &a->sin_port, 2);
        memcpy(id + 3, &a->sin_addr, 4);
        n = 7;
    }
    n = n < cap ? n : cap;
    memcpy(buf, id, n);
    return n;
}

int tb_sock_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
    uint8_t x[19], y[19];
    size_t nx = tb_sock_peer_id(a, x, sizeof x), ny = tb_sock_peer_id(b, y, sizeof y);
    return nx == ny && memcmp(x, y, nx) == 0;
}

void tb_sock_sleep_ms(uint32_t ms) {
    struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------- identity */

uint16_t tb_sock_client_port(uint32_t conn, uint32_t k) {
    return (uint16_t)(TB_NET_CLIENT_PORT_BASE + conn % TB_NET_CLIENT_PORT_SPAN + k * TB_NET_CLIENT_PORT_SPAN);
}

/* Slots are compared modulo the span: a distance under half the span is "later", the rest
 * "earlier" (a batch never holds half a span of connections). */
tb_conn_order tb_sock_conn_order(uint16_t port, uint32_t expected, uint32_t *conn) {
    const uint32_t span = TB_NET_CLIENT_PORT_SPAN;
    if (port < TB_NET_CLIENT_PORT_BASE || port >= TB_NET_CLIENT_PORT_BASE + span * TB_NET_CLIENT_PORT_TRIES)
        return TB_CONN_UNNAMED;
    uint32_t slot = (port - TB_NET_CLIENT_PORT_BASE) % span;
    uint32_t ahead = (slot + span - expected % span) % span;
    *conn = ahead < span / 2 ? expected + ahead : expected - (span - ahead);
    return ahead == 0 ? TB_CONN_EXPECTED : ahead < span / 2 ? TB_CONN_LATER : TB_CONN_EARLIER;
}

int tb_sock_bind_client(int fd, const struct sockaddr_storage *server, uint32_t conn, uint32_t k, int reuse) {
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1;
    uint16_t port = k < TB_NET_CLIENT_PORT_TRIES ? tb_sock_client_port(conn, k) : 0;
    memset(&ss, 0, sizeof ss);
    if (server->ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        len = sizeof *a;
    }
    /* SO_REUSEADDR on TCP: a port whose last connection is in TIME_WAIT binds again (connect
     * then fails only for the very same address pair, and the caller tries the next block). */
    if (reuse && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        return -1;
    return bind(fd, (struct sockaddr *)&ss, len);
}

uint16_t tb_sock_port(const struct sockaddr_storage *ss) {
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    return 0;
}

uint16_t tb_sock_local_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    memset(&ss, 0, sizeof ss);
    return fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 ? tb_sock_port(&ss) : 0;
}
