/* SPDX-License-Identifier: Apache-2.0 */
/* Frames (good, corrupt, truncated), the channel reader/writer, RUN and REP layouts. */
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tlsbench/protocol.h"

/* An in-memory channel; `chunk` limits each read to exercise short reads. */
typedef struct mem_chan {
    uint8_t buf[4096];
    size_t len, pos, chunk;
    int fail_reads;
} mem_chan;

static long mem_read(void *ctx, void *buf, size_t len) {
    mem_chan *m = ctx;
    if (m->fail_reads)
        return -1;
    size_t n = m->len - m->pos < len ? m->len - m->pos : len;
    if (m->chunk && n > m->chunk)
        n = m->chunk;
    memcpy(buf, m->buf + m->pos, n);
    m->pos += n;
    return (long)n;
}

static int mem_write(void *ctx, const void *buf, size_t len) {
    mem_chan *m = ctx;
    if (len > sizeof m->buf - m->len)
        return -1;
    memcpy(m->buf + m->len, buf, len);
    m->len += len;
    return 0;
}

static mem_chan chan;
static tb_channel mem_channel(size_t chunk) {
    memset(&chan, 0, sizeof chan);
    chan.chunk = chunk;
    return (tb_channel){mem_read, mem_write, &chan};
}

static void test_crc32_known_values(void) {
    CHECK_EQ_U(tb_crc32(0, "123456789", 9), 0xCBF43926u);
    CHECK_EQ_U(tb_crc32(0, "", 0), 0);
    /* incremental == one shot, as zlib */
    CHECK_EQ_U(tb_crc32(tb_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

/* A valid frame with payload "hello" in chan.buf. */
static size_t make_frame(uint8_t type) {
    tb_channel ch = mem_channel(0);
    tb_part parts[2] = {{"hel", 3}, {"lo", 2}};
    CHECK(tb_frame_write(&ch, type, parts, 2) == 0);
    return chan.len;
}

static void test_frame_roundtrip(void) {
    size_t n = make_frame(TB_FRAME_HELLO);
    CHECK_EQ_U(n, 8 + 5 + 4);
    CHECK(chan.buf[0] == 0x54 && chan.buf[1] == 0x42 && chan.buf[2] == TB_PROTOCOL_VERSION && chan.buf[3] == TB_FRAME_HELLO);
    tb_frame f;
    size_t used = 0;
    CHECK(tb_frame_decode(chan.buf, n, &f, &used) == TB_FRAME_OK);
    CHECK_EQ_U(used, n);
    CHECK_EQ_U(f.type, TB_FRAME_HELLO);
    CHECK_EQ_U(f.length, 5);
    CHECK(memcmp(f.payload, "hello", 5) == 0);
    /* trailing bytes belong to the next frame */
    CHECK(tb_frame_decode(chan.buf, n + 3, &f, &used) == TB_FRAME_OK);
    CHECK_EQ_U(used, n);
}

static void test_frame_truncated_everywhere(void) {
    size_t n = make_frame(TB_FRAME_DONE);
    tb_frame f;
    size_t used;
    CHECK(tb_frame_decode(chan.buf, 0, &f, &used) == TB_FRAME_END);
    for (size_t cut = 1; cut < n; cut++)
        CHECK(tb_frame_decode(chan.buf, cut, &f, &used) == TB_FRAME_TRUNCATED);
}

static void test_frame_corruptions(void) {
    static const struct {
        size_t offset;
        uint8_t value;
        tb_frame_status want;
    } cases[] = {
        {0, 0x55, TB_FRAME_BAD_MAGIC},   {1, 0x00, TB_FRAME_BAD_MAGIC},
        {2, TB_PROTOCOL_VERSION + 1, TB_FRAME_BAD_VERSION}, {3, 0, TB_FRAME_BAD_TYPE},
        {3, 200, TB_FRAME_BAD_TYPE},     {7, 0x02, TB_FRAME_TOO_LONG}, /* length 32 MiB */
        {9, 'X', TB_FRAME_BAD_CRC},      {14, 0xff, TB_FRAME_BAD_CRC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = make_frame(TB_FRAME_ERROR);
        chan.buf[cases[i].offset] = cases[i].value;
        tb_frame f;
        size_t used = 0;
        tb_frame_status st = tb_frame_decode(chan.buf, n, &f, &used);
        if (st != cases[i].want)
            fprintf(stderr, "case %zu: got %s\n", i, tb_frame_status_text(st));
        CHECK(st == cases[i].want);
    }
    /* bad magic is reported as soon as the first byte is seen */
    uint8_t junk[1] = {'{'};
    tb_frame f;
    size_t used;
    CHECK(tb_frame_decode(junk, 1, &f, &used) == TB_FRAME_BAD_MAGIC);
    CHECK(strcmp(tb_frame_status_text(TB_FRAME_BAD_CRC), "CRC-32 mismatch") == 0);
    CHECK(tb_frame_status_text((tb_frame_status)99) != NULL);
}

static void test_frame_read_channel(void) {
    uint8_t buf[256];
    tb_frame f;
    make_frame(TB_FRAME_SUITES);
    size_t one = chan.len;
    tb_channel ch = {mem_read, mem_write, &chan};
    tb_part p = {"x", 1};
    CHECK(tb_frame_write(&ch, TB_FRAME_QUIT, &p, 1) == 0);
    chan.chunk = 3; /* short reads */
    CHECK(tb_frame_read(&ch, buf, sizeof buf, &f) == TB_FRAME_OK);
    CHECK(f.type == TB_FRAME_SUITES && f.length == 5);
    CHECK_EQ_U(chan.pos, one);
    CHECK(tb_frame_read(&ch, buf, sizeof buf, &f) == TB_FRAME_OK);
    CHECK(f.type == TB_FRAME_QUIT && f.length == 1 && f.payload[0] == 'x');
    CHECK(tb_frame_read(&ch, buf, sizeof buf, &f) == TB_FRAME_END);

    /* stream ends inside the header, inside the payload */
    size_t n = make_frame(TB_FRAME_RUN);
    for (size_t cut = 1; cut < n; cut += 4) {
        chan.len = cut;
        chan.pos = 0;
        CHECK(tb_frame_read(&ch, buf, sizeof buf, &f) == TB_FRAME_TRUNCATED);
    }
    /* a frame larger than the reader's buffer is rejected before its payload is read */
    make_frame(TB_FRAME_RUN);
    CHECK(tb_frame_read(&ch, buf, 8 + 4 + 4, &f) == TB_FRAME_TOO_LONG);
    CHECK_EQ_U(chan.pos, 8);
    chan.pos = 0;
    chan.fail_reads = 1;
    CHECK(tb_frame_read(&ch, buf, sizeof buf, &f) == TB_FRAME_IO_ERROR);
}

static void test_frame_write_errors(void) {
    tb_channel ch = mem_channel(0);
    tb_part big = {"", (size_t)TB_MAX_PAYLOAD + 1};
    CHECK(tb_frame_write(&ch, TB_FRAME_REP, &big, 1) == -1);
    CHECK_EQ_U(chan.len, 0); /* nothing written for a frame that cannot be valid */
    static uint8_t blob[5000];
    tb_part p = {blob, sizeof blob};
    CHECK(tb_frame_write(&ch, TB_FRAME_REP, &p, 1) == -1); /* channel full */
}

static tb_run_request good_run(void) {
    return (tb_run_request){.config_id = 7, .suite_id = 0xC02B, .group = TB_GROUP_SECP256R1,
                            .credential = TB_CREDENTIAL_ECDSA_P256, .direction = TB_DIRECTION_BOTH,
                            .transport = TB_TRANSPORT_MEMORY, .repetitions = 10, .warmup = 2,
                            .total_bytes = 10000, .record_size = 1000, .first_index = 40};
}

static void test_run_roundtrip(void) {
    tb_run_request r = good_run(), back;
    uint8_t wire[TB_RUN_REQUEST_SIZE];
    char err[128] = "";
    tb_run_request_encode(&r, wire);
    CHECK(wire[4] == 0x2B && wire[5] == 0xC0); /* little-endian suite id at offset 4 */
    CHECK(wire[24] == 0xE8 && wire[25] == 0x03);
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == 0);
    CHECK(memcmp(&r, &back, sizeof r) == 0);
}

static void test_run_validation(void) {
    static const struct {
        size_t offset;
        uint8_t value;
        const char *field;
    } cases[] = {
        /* options: all 8 bits are declared now; a backend refuses the ones it lacks (runner) */
        {8, 200, "credential"}, {9, 4, "direction"}, {10, 9, "transport"}, {34, 1, "reserved"},
    };
    uint8_t wire[TB_RUN_REQUEST_SIZE + 1];
    char err[128];
    tb_run_request out;
    tb_run_request r = good_run();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_run_request_encode(&r, wire);
        wire[cases[i].offset] = cases[i].value;
        err[0] = '\0';
        CHECK(tb_run_request_decode(wire, TB_RUN_REQUEST_SIZE, &out, err, sizeof err) == -1);
        CHECK(strncmp(err, cases[i].field, strlen(cases[i].field)) == 0);
    }
    static const struct {
        uint32_t reps, record, first;
        const char *field;
    } ranges[] = {
        {0, 1000, 0, "repetitions"},   {1, 0, 0, "record_size"},
        {1, 16385, 0, "record_size"},  {2, 100, UINT32_MAX, "first_index"},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        r = good_run();
        r.repetitions = ranges[i].reps;
        r.record_size = ranges[i].record;
        r.first_index = ranges[i].first;
        tb_run_request_encode(&r, wire);
        CHECK(tb_run_request_decode(wire, TB_RUN_REQUEST_SIZE, &out, err, sizeof err) == -1);
        CHECK(strncmp(err, ranges[i].field, strlen(ranges[i].field)) == 0);
    }
    r = good_run();
    r.record_size = 16384;
    r.repetitions = 1;
    r.first_index = UINT32_MAX; /* one repetition at the last index is fine */
    tb_run_request_encode(&r, wire);
    CHECK(tb_run_request_decode(wire, TB_RUN_REQUEST_SIZE, &out, err, sizeof err) == 0);
    CHECK(tb_run_request_decode(wire, TB_RUN_REQUEST_SIZE - 1, &out, err, sizeof err) == -1);
    CHECK(strstr(err, "71 bytes") != NULL);
    CHECK(tb_run_request_decode(wire, TB_RUN_REQUEST_SIZE + 1, &out, err, sizeof err) == -1);
}

static tb_run_request udp_client_run(void) {
    tb_run_request r = good_run();
    r.transport = TB_TRANSPORT_UDP;
    r.protocol = TB_PROTOCOL_KIND_DTLS;
    r.role = TB_ROLE_CLIENT;
    r.family = 4;
    r.addr[0] = 127;
    r.addr[3] = 1;
    r.port = 4433;
    r.options = TB_OPTION_DTLS_COOKIES;
    r.dtls_timeout_min_ms = 100;
    r.dtls_timeout_max_ms = 2000;
    r.dtls_mtu = 1280;
    r.max_fragment = 2;
    return r;
}

static void test_run_network_fields(void) {
    tb_run_request r = udp_client_run(), back;
    uint8_t wire[TB_RUN_REQUEST_SIZE];
    char err[160] = "";
    tb_run_request_encode(&r, wire);
    CHECK(wire[36] == TB_ROLE_CLIENT && wire[37] == TB_PROTOCOL_KIND_DTLS && wire[38] == 4 && wire[39] == 2);
    CHECK(wire[40] == 127 && wire[43] == 1 && wire[56] == (4433 & 0xff) && wire[57] == (4433 >> 8));
    CHECK(wire[60] == 100 && wire[64] == 0 && wire[65] == 5); /* 1280 = 0x500 */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == 0);
    CHECK(memcmp(&r, &back, sizeof r) == 0);
    /* Combinations a transport cannot carry, each rejected naming its field. */
    static const struct {
        uint8_t transport, protocol, role, family;
        uint16_t port, mtu;
        const char *field;
    } bad[] = {
        {TB_TRANSPORT_TCP, TB_PROTOCOL_KIND_DTLS, TB_ROLE_CLIENT, 4, 1, 0, "protocol"},
        {TB_TRANSPORT_UDP, TB_PROTOCOL_KIND_TLS, TB_ROLE_CLIENT, 4, 1, 0, "protocol"},
        {TB_TRANSPORT_UDP, TB_PROTOCOL_KIND_DTLS, TB_ROLE_BOTH, 4, 1, 0, "role"},
        {TB_TRANSPORT_MEMORY, TB_PROTOCOL_KIND_DTLS, TB_ROLE_SERVER, 0, 0, 0, "role"},
        {TB_TRANSPORT_TCP, TB_PROTOCOL_KIND_TLS, TB_ROLE_CLIENT, 5, 1, 0, "family"},
        {TB_TRANSPORT_MEMORY, TB_PROTOCOL_KIND_TLS, TB_ROLE_BOTH, 4, 0, 0, "family"},
        {TB_TRANSPORT_TCP, TB_PROTOCOL_KIND_TLS, TB_ROLE_CLIENT, 6, 0, 0, "port"},
        {TB_TRANSPORT_UDP, TB_PROTOCOL_KIND_DTLS, TB_ROLE_SERVER, 4, 0, 100, "dtls_mtu"},
        {TB_TRANSPORT_UDP, 7, TB_ROLE_SERVER, 4, 0, 0, "protocol"},
        {TB_TRANSPORT_UDP, TB_PROTOCOL_KIND_DTLS, 9, 4, 0, 0, "role"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = udp_client_run();
        r.transport = bad[i].transport;
        r.protocol = bad[i].protocol;
        r.role = bad[i].role;
        r.family = bad[i].family;
        r.port = bad[i].port;
        r.dtls_mtu = bad[i].mtu;
        tb_run_request_encode(&r, wire);
        err[0] = '\0';
        CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1);
        CHECK(strncmp(err, bad[i].field, strlen(bad[i].field)) == 0);
    }
    r = udp_client_run();
    tb_run_request_encode(&r, wire);
    wire[39] = 5; /* max_fragment code */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1 && strstr(err, "max_fragment"));
    tb_run_request_encode(&r, wire);
    wire[70] = 1; /* reserved tail */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1 && strstr(err, "reserved"));
    tb_run_request_encode(&r, wire);
    wire[60] = 0xff; /* min timeout 255 > ... still below max 2000: fine */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == 0);
    wire[61] = 0xff; /* min 65535 > max 2000 */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1 && strstr(err, "dtls_timeout"));
}

/* Protocol 3: offset 66 names an experiment; such a RUN names no connection. */
static tb_run_request experiment_run(void) {
    return (tb_run_request){.config_id = 3, .experiment = 0x0102, .direction = TB_DIRECTION_NONE,
                            .transport = TB_TRANSPORT_MEMORY, .repetitions = 5, .warmup = 1,
                            .total_bytes = 1024, .record_size = 1};
}

static void test_run_experiment_fields(void) {
    tb_run_request r = experiment_run(), back;
    uint8_t wire[TB_RUN_REQUEST_SIZE];
    char err[160] = "";
    tb_run_request_encode(&r, wire);
    CHECK(wire[66] == 0x02 && wire[67] == 0x01); /* u16 little-endian at offset 66 */
    CHECK(wire[20] == 0x00 && wire[21] == 0x04); /* the payload size is total_bytes */
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == 0);
    CHECK(memcmp(&r, &back, sizeof r) == 0);
    /* record_size is ignored in an experiment RUN (any value), checked in a handshake RUN */
    static const uint32_t records[] = {0, 1, 16385, UINT32_MAX};
    for (size_t i = 0; i < sizeof records / sizeof records[0]; i++) {
        r = experiment_run();
        r.record_size = records[i];
        tb_run_request_encode(&r, wire);
        CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == 0);
    }
    /* the connection fields must say "none", each rejected by name */
    static const struct {
        size_t offset;
        uint8_t value;
        const char *field;
    } bad[] = {
        {4, 0x2B, "suite"},     {7, 0x01, "group"},    {8, TB_CREDENTIAL_PSK, "credential"},
        {9, TB_DIRECTION_BOTH, "direction"},           {10, TB_TRANSPORT_TCP, "transport"},
        {36, TB_ROLE_CLIENT, "role"},                  {37, TB_PROTOCOL_KIND_DTLS, "protocol"},
        {38, 4, "family"},      {68, 1, "reserved"},   {12, 0, "repetitions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = experiment_run();
        tb_run_request_encode(&r, wire);
        wire[bad[i].offset] = bad[i].value;
        if (bad[i].offset == 12)
            memset(wire + 12, 0, 4);
        err[0] = '\0';
        CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1);
        CHECK(strncmp(err, bad[i].field, strlen(bad[i].field)) == 0);
        if (strncmp(err, bad[i].field, strlen(bad[i].field)) != 0)
            fprintf(stderr, "  offset %zu: %s\n", bad[i].offset, err);
    }
    /* a handshake RUN (experiment 0) keeps its record_size check */
    r = good_run();
    r.record_size = 0;
    tb_run_request_encode(&r, wire);
    CHECK(tb_run_request_decode(wire, sizeof wire, &back, err, sizeof err) == -1 && strstr(err, "record_size"));
}

static void test_rep_header_and_frame(void) {
    tb_rep_result r = {.config_id = 7, .index = 41, .status = TB_STATUS_HANDSHAKE_FAILED,
                       .failed_peer = TB_PEER_SERVER, .flags = TB_FLAG_TRACE_OVERFLOW, .error_code = -0x7780,
                       .bytes_c2s = 1ull << 40, .bytes_s2c = 5, .start_ns = 123456789012345ull,
                       .handshake_wall_ns = 6000000, .handshake_cpu_ns = 5900000,
                       .packets_c2s = 11, .packets_s2c = 0x10203, .retransmissions = 2,
                       .role = TB_ROLE_SERVER, .repetition_wall_ns = 1ull << 33,
                       .client_port = 0x4001, .server_port = 0xABCD, .reason = "handshake: server: boom"};
    const uint32_t reason_len = (uint32_t)strlen(r.reason);
    uint8_t h[TB_REP_HEADER_SIZE];
    tb_rep_header_encode(&r, 3, 9, h);
    CHECK(h[8] == TB_STATUS_HANDSHAKE_FAILED && h[9] == TB_PEER_SERVER);
    CHECK(h[16] == 0x80 && h[17] == 0x88 && h[18] == 0xff && h[19] == 0xff); /* i32 -0x7780 */
    CHECK(h[20] == 3 && h[24] == 9);
    CHECK(h[37] == 1); /* bit 40 of bytes_c2s */
    CHECK(h[72] == 11 && h[76] == 3 && h[77] == 2 && h[78] == 1 && h[80] == 2 && h[84] == TB_ROLE_SERVER);
    CHECK(h[92] == 2); /* bit 33 of the repetition's wall time */
    CHECK(h[10] == 0x01 && h[11] == 0x40 && h[28] == 0xCD && h[29] == 0xAB); /* the connection's ports */
    CHECK(h[30] == reason_len && h[31] == 0);

    tb_trace_reset();
    tb_trace_set_peer(TB_PEER_CLIENT);
    tb_begin(TB_L_CLIENT_HELLO);
    tb_end(TB_L_CLIENT_HELLO, 0);
    tb_channel ch = mem_channel(0);
    CHECK(tb_send_rep(&ch, &r, &tb_trace_buffer) == 0);
    tb_frame f;
    size_t used;
    CHECK(tb_frame_decode(chan.buf, chan.len, &f, &used) == TB_FRAME_OK);
    CHECK(f.type == TB_FRAME_REP);
    CHECK_EQ_U(f.length, TB_REP_HEADER_SIZE + 32u * tb_trace_buffer.count + reason_len);
    CHECK(memcmp(f.payload + f.length - reason_len, r.reason, reason_len) == 0); /* after the records */
    tb_rep_result back;
    uint32_t n = 99, dropped = 99;
    CHECK(tb_rep_header_decode(f.payload, f.length, &back, &n, &dropped) == 0);
    CHECK_EQ_U(n, tb_trace_buffer.count);
    CHECK_EQ_U(dropped, 0);
    CHECK(back.error_code == -0x7780 && back.bytes_c2s == r.bytes_c2s && back.start_ns == r.start_ns);
    CHECK(back.handshake_cpu_ns == r.handshake_cpu_ns && back.index == 41 && back.flags == r.flags);
    CHECK(back.packets_c2s == 11 && back.packets_s2c == 0x10203 && back.retransmissions == 2);
    CHECK(back.role == TB_ROLE_SERVER && back.repetition_wall_ns == r.repetition_wall_ns);
    CHECK(back.client_port == 0x4001 && back.server_port == 0xABCD && strcmp(back.reason, r.reason) == 0);
    if (n == 2) {
        /* the record image on the wire: label 101 LE at 0, kind STOP at 32+2 */
        CHECK(f.payload[96] == 101 && f.payload[97] == 0 && f.payload[96 + 32 + 2] == TB_KIND_STOP);
    }
    CHECK(tb_rep_header_decode(f.payload, f.length - 1, &back, &n, &dropped) == -1);
    CHECK(tb_rep_header_decode(f.payload, 10, &back, &n, &dropped) == -1);
    uint8_t *bad = malloc(f.length);
    memcpy(bad, f.payload, f.length);
    bad[30] = (uint8_t)(reason_len + 1); /* a reason longer than what follows the records */
    CHECK(tb_rep_header_decode(bad, f.length, &back, &n, &dropped) == -1);
    bad[30] = 0xFF; /* over TB_REP_REASON_MAX */
    bad[31] = 0x01;
    CHECK(tb_rep_header_decode(bad, f.length, &back, &n, &dropped) == -1);
    free(bad);
}

int main(void) {
    RUN_TEST(test_crc32_known_values);
    RUN_TEST(test_frame_roundtrip);
    RUN_TEST(test_frame_truncated_everywhere);
    RUN_TEST(test_frame_corruptions);
    RUN_TEST(test_frame_read_channel);
    RUN_TEST(test_frame_write_errors);
    RUN_TEST(test_run_roundtrip);
    RUN_TEST(test_run_validation);
    RUN_TEST(test_run_network_fields);
    RUN_TEST(test_run_experiment_fields);
    RUN_TEST(test_rep_header_and_frame);
    return tb_test_report();
}
