/* SPDX-License-Identifier: Apache-2.0 */
/* The connection names of the socket transports (docs/networks.md "Identity"): a
 * repetition's client port, and how a server places a port against the repetition it
 * expects, wrap-around of the warm-up numbers included. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../src/posix/transports/sock.h"
#include "tb_test.h"
#include "tlsbench/spec_gen.h"

static void test_client_ports_follow_the_repetition(void) {
    CHECK_EQ_U(tb_sock_client_port(0, 0), TB_NET_CLIENT_PORT_BASE);
    CHECK_EQ_U(tb_sock_client_port(4095, 0), TB_NET_CLIENT_PORT_BASE + 4095u);
    CHECK_EQ_U(tb_sock_client_port(4096, 0), TB_NET_CLIENT_PORT_BASE); /* the span wraps */
    CHECK_EQ_U(tb_sock_client_port(5, 1), TB_NET_CLIENT_PORT_BASE + TB_NET_CLIENT_PORT_SPAN + 5u);
    uint32_t last = TB_NET_CLIENT_PORT_BASE + TB_NET_CLIENT_PORT_SPAN * TB_NET_CLIENT_PORT_TRIES - 1u;
    CHECK(last < 32768u); /* below Linux's ephemeral ports */
}

static void test_a_server_places_ports_against_the_expected_repetition(void) {
    uint32_t conn = 0;
    CHECK(tb_sock_conn_order(tb_sock_client_port(5, 0), 5, &conn) == TB_CONN_EXPECTED);
    CHECK(tb_sock_conn_order(tb_sock_client_port(5, 3), 5, &conn) == TB_CONN_EXPECTED); /* any block */
    CHECK(tb_sock_conn_order(tb_sock_client_port(6, 0), 5, &conn) == TB_CONN_LATER && conn == 6);
    CHECK(tb_sock_conn_order(tb_sock_client_port(4, 2), 5, &conn) == TB_CONN_EARLIER && conn == 4);
    CHECK(tb_sock_conn_order(40000, 5, &conn) == TB_CONN_UNNAMED);
    CHECK(tb_sock_conn_order(TB_NET_CLIENT_PORT_BASE - 1u, 5, &conn) == TB_CONN_UNNAMED);
    /* A RUN from index 0 with one warm-up numbers it 2^32 - 1: it comes before 0. */
    CHECK(tb_sock_conn_order(tb_sock_client_port(UINT32_MAX, 0), 0, &conn) == TB_CONN_EARLIER &&
          conn == UINT32_MAX);
    CHECK(tb_sock_conn_order(tb_sock_client_port(0, 0), UINT32_MAX, &conn) == TB_CONN_LATER && conn == 0);
}

static void test_a_bound_client_port_is_taken_once(void) {
    struct sockaddr_storage server;
    memset(&server, 0, sizeof server);
    server.ss_family = AF_INET;
    int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(a >= 0 && b >= 0);
    uint32_t conn = 3000u; /* unlikely to be in use by a test running at the same time */
    uint32_t k = 0;
    while (k < TB_NET_CLIENT_PORT_TRIES && tb_sock_bind_client(a, &server, conn, k, 0) != 0)
        k++;
    CHECK(k < TB_NET_CLIENT_PORT_TRIES);
    CHECK_EQ_U(tb_sock_local_port(a), tb_sock_client_port(conn, k));
    errno = 0;
    CHECK(tb_sock_bind_client(b, &server, conn, k, 0) == -1 && errno == EADDRINUSE); /* UDP: no sharing */
    CHECK(tb_sock_bind_client(b, &server, conn, TB_NET_CLIENT_PORT_TRIES, 0) == 0); /* the last resort: any */
    CHECK(tb_sock_conn_order(tb_sock_local_port(b), conn, &conn) == TB_CONN_UNNAMED);
    close(a);
    close(b);
}

int main(void) {
    RUN_TEST(test_client_ports_follow_the_repetition);
    RUN_TEST(test_a_server_places_ports_against_the_expected_repetition);
    RUN_TEST(test_a_bound_client_port_is_taken_once);
    return tb_test_report();
}
