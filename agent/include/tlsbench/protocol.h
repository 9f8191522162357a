/* SPDX-License-Identifier: Apache-2.0 */
/* Framed messages between agent and controller. The byte layouts are declared in
 * spec/protocol.toml [layout.*]: sizes and offsets come from spec_gen.h, the pack/unpack of
 * the structs below from layout_gen.h (docs/protocol.md shows the same tables).
 * Decoding is pure (buffer in, result out) so it can be unit-tested and fuzzed. */
#ifndef TLSBENCH_PROTOCOL_H
#define TLSBENCH_PROTOCOL_H
#include <stddef.h>
#include <stdint.h>
#include "tlsbench/port.h"
#include "tlsbench/trace.h"

#define TB_FRAME_TRAILER_SIZE 4 /* the CRC-32 after the payload */
#define TB_REP_REASON_MAX 255 /* bytes of failure text after a REP's records */
#define TB_MAX_RECORD_SIZE 16384 /* TLS plaintext limit: the RUN record_size range is 1 .. this */

typedef enum tb_frame_status {
    TB_FRAME_OK = 0,
    TB_FRAME_END,         /* clean end of stream between frames */
    TB_FRAME_TRUNCATED,   /* stream/buffer ends inside a frame */
    TB_FRAME_BAD_MAGIC,
    TB_FRAME_BAD_VERSION,
    TB_FRAME_BAD_TYPE,
    TB_FRAME_TOO_LONG,    /* length over TB_MAX_PAYLOAD or over the reader's buffer */
    TB_FRAME_BAD_CRC,
    TB_FRAME_IO_ERROR
} tb_frame_status;

const char *tb_frame_status_text(tb_frame_status s);

typedef struct tb_frame {
    uint8_t type;
    uint32_t length;
    const uint8_t *payload; /* points into the caller's buffer */
} tb_frame;

uint32_t tb_crc32(uint32_t crc, const void *buf, size_t len); /* zlib-compatible; start with 0 */

/* Decodes one frame at the start of buf[0..len). On TB_FRAME_OK sets *out and *consumed. */
tb_frame_status tb_frame_decode(const uint8_t *buf, size_t len, tb_frame *out, size_t *consumed);

/* Reads one whole frame from a channel into buf (capacity cap). */
tb_frame_status tb_frame_read(tb_channel *ch, uint8_t *buf, size_t cap, tb_frame *out);

/* Writes one frame whose payload is the concatenation of n parts (REP = header + records). */
typedef struct tb_part { const void *data; size_t len; } tb_part;
int tb_frame_write(tb_channel *ch, uint8_t type, const tb_part *parts, size_t n);

/* RUN request: [layout.run_request], member for member (reserved fields aside). */
typedef struct tb_run_request {
    uint32_t config_id;
    uint16_t suite_id;
    uint16_t group;
    uint8_t credential;
    uint8_t direction;
    uint8_t transport;
    uint8_t options;
    uint32_t repetitions;
    uint32_t warmup;
    uint32_t total_bytes;
    uint32_t record_size;
    uint32_t first_index;
    /* Protocol 5: options bits 8-15 (tb_run_request_options() joins both bytes). */
    uint8_t options_high;
    /* Protocol 2: two-process mode and DTLS (docs/protocol.md, docs/networks.md). */
    uint8_t role;          /* TB_ROLE_*: both (memory) or the one peer this agent plays */
    uint8_t protocol;      /* TB_PROTOCOL_KIND_TLS or _DTLS */
    uint8_t family;        /* peer endpoint: 0 none (memory), 4 IPv4, 6 IPv6 */
    uint8_t max_fragment;  /* RFC 6066 max_fragment_length code: 0 none, 1 = 512 .. 4 = 4096 */
    uint8_t addr[16];      /* the server's address (network order; IPv4 in the first 4 bytes) */
    uint16_t port;         /* the server's port (server: 0 = any free port) */
    uint16_t tcp_mss;      /* TCP_MAXSEG, 0 = the kernel's */
    uint16_t dtls_timeout_min_ms; /* DTLS initial retransmission timeout, 0 = the library's */
    uint16_t dtls_timeout_max_ms; /* DTLS maximum retransmission timeout, 0 = the library's */
    uint16_t dtls_mtu;     /* DTLS handshake MTU (bytes per datagram), 0 = the library's */
    /* Protocol 3: 0 = a handshake RUN; n >= 1 = the n-th entry of HELLO's `experiments`,
     * with total_bytes as its payload size (docs/experiments.md). */
    uint16_t experiment;
} tb_run_request;

/* Returns 0, or -1 with a message naming the bad field in err. Checks sizes and ranges only
 * (and an experiment RUN's fixed fields); whether the suite, group or experiment exists is
 * the runner's business. */
/* Every RUN option bit (TB_OPTION_*): the `options` byte and, from protocol 5, `options_high`. */
static inline uint16_t tb_run_request_options(const tb_run_request *r) {
    return (uint16_t)(r->options | (unsigned)r->options_high << 8);
}

int tb_run_request_decode(const uint8_t *p, size_t len, tb_run_request *out, char *err, size_t errlen);
void tb_run_request_encode(const tb_run_request *r, uint8_t out[TB_RUN_REQUEST_SIZE]);

/* Outcome of one repetition: [layout.rep_header], member for member (reserved fields aside). */
typedef struct tb_rep_result {
    uint32_t config_id;
    uint32_t index;
    uint8_t status;      /* TB_STATUS_* */
    uint8_t failed_peer; /* TB_PEER_* */
    uint32_t flags;      /* TB_FLAG_* */
    int32_t error_code;  /* library code */
    uint32_t n_records;  /* trace records that follow: set when the REP is sent */
    uint32_t dropped;    /* records the trace buffer had no room for: set when the REP is sent */
    uint64_t bytes_c2s;
    uint64_t bytes_s2c;
    uint64_t start_ns;
    uint64_t handshake_wall_ns;
    uint64_t handshake_cpu_ns;
    /* Protocol 2 (appended): packets per direction (UDP datagrams; TCP segments from TCP_INFO),
     * the transport's retransmissions (TCP_INFO tcpi_total_retrans, DTLS flights resent) and
     * the repetition's wall time (setup start .. close end). */
    uint32_t packets_c2s;
    uint32_t packets_s2c;
    uint32_t retransmissions;
    uint8_t role;        /* TB_ROLE_* of the agent that measured it */
    uint64_t repetition_wall_ns;
    /* Protocol 4: the connection this repetition ran on (two-process mode; 0 = none, e.g. the
     * server never got its client), so the controller pairs the two agents' REPs by identity,
     * and why it failed ("" when OK), shipped after the records (reason_len: set when sent). */
    uint16_t client_port;
    uint16_t server_port;
    uint16_t reason_len;
    char reason[TB_REP_REASON_MAX + 1];
} tb_rep_result;

void tb_rep_header_encode(const tb_rep_result *r, uint32_t n_records, uint32_t dropped,
                          uint8_t out[TB_REP_HEADER_SIZE]);
/* Decodes a REP payload's header and reason (`dump`, tests); 0, or -1 when len does not hold
 * the header plus exactly n_records records and the reason's length. */
int tb_rep_header_decode(const uint8_t *p, size_t len, tb_rep_result *out, uint32_t *n_records,
                         uint32_t *dropped);
/* Sends a REP frame: header + the trace's records. */
int tb_send_rep(tb_channel *ch, const tb_rep_result *r, const tb_trace *t);
/* Sends a JSON frame (HELLO, SUITES, DONE, ERROR). */
int tb_send_json(tb_channel *ch, uint8_t type, const char *json, size_t len);

#endif
