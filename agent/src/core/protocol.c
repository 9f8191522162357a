/* SPDX-License-Identifier: Apache-2.0 */
/* Frames, RUN requests and REP headers. Byte layouts come from the spec
 * (spec/protocol.toml [layout.*] -> layout_gen.h); this file adds what the layouts cannot
 * say: the CRC, the checks of every field's value, the channel I/O. The decoders are pure
 * and check every field before trusting it: they are fuzzed (fuzz/fuzz_frame.c). */
#include "tlsbench/protocol.h"

#include <stdio.h>
#include <string.h>

#include "tlsbench/layout_gen.h"

#define TB_AT(layout, field) TB_##layout##_OFFSET_##field /* a field's offset (spec_gen.h) */
#define TB_STR_(x) #x
#define TB_STR(x) TB_STR_(x)

/* ---------------------------------------------------------------- CRC-32 (IEEE, reflected) */
static const uint32_t tb_crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

/* Slicing by 8: eight bytes per step through eight tables, the first being tb_crc_table and
 * the others derived from it at the first call (7 KiB of RAM). A REP of ~6 KiB took 11 µs
 * byte by byte here, 2.5% of a 0.4 ms handshake and a fifth of a PSK one, paid between
 * repetitions for every one shipped. */
static uint32_t tb_crc_slices[8][256];
static int tb_crc_sliced;

static void tb_crc_slice_tables(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint32_t c = tb_crc_slices[0][i] = tb_crc_table[i];
        for (unsigned k = 1; k < 8; k++)
            tb_crc_slices[k][i] = c = tb_crc_table[c & 0xffu] ^ (c >> 8);
    }
    tb_crc_sliced = 1;
}

static uint32_t tb_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t tb_crc32(uint32_t crc, const void *buf, size_t len) {
    const uint8_t *p = buf;
    const uint32_t(*t)[256] = (const uint32_t(*)[256])tb_crc_slices;
    if (!tb_crc_sliced)
        tb_crc_slice_tables();
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t a = crc ^ tb_le32(p), b = tb_le32(p + 4);
        crc = t[7][a & 0xffu] ^ t[6][(a >> 8) & 0xffu] ^ t[5][(a >> 16) & 0xffu] ^ t[4][a >> 24] ^
              t[3][b & 0xffu] ^ t[2][(b >> 8) & 0xffu] ^ t[1][(b >> 16) & 0xffu] ^ t[0][b >> 24];
    }
    while (len--)
        crc = tb_crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

/* ---------------------------------------------------------------- frames */
const char *tb_frame_status_text(tb_frame_status s) {
    switch (s) {
    case TB_FRAME_OK: return "ok";
    case TB_FRAME_END: return "end of stream";
    case TB_FRAME_TRUNCATED: return "stream ends inside a frame";
    case TB_FRAME_BAD_MAGIC: return "bad magic (expected bytes 54 42)";
    case TB_FRAME_BAD_VERSION: return "unsupported protocol version";
    case TB_FRAME_BAD_TYPE: return "unknown frame type";
    case TB_FRAME_TOO_LONG: return "payload length over the limit";
    case TB_FRAME_BAD_CRC: return "CRC-32 mismatch";
    case TB_FRAME_IO_ERROR: return "I/O error";
    default: return "unknown frame status";
    }
}

static int tb_frame_type_known(uint8_t type) { return type >= TB_FRAME_HELLO && type <= TB_FRAME_QUIT; }

/* Checks as much of the header as buf holds, field by field in wire order, so a reader
 * can reject garbage after 2 bytes and report the first bad field. */
static tb_frame_status tb_header_check(const uint8_t *buf, size_t len, size_t limit) {
    const size_t magic = TB_AT(FRAME_HEADER, MAGIC), version = TB_AT(FRAME_HEADER, VERSION);
    const size_t type = TB_AT(FRAME_HEADER, TYPE), length = TB_AT(FRAME_HEADER, LENGTH);
    if (len > magic && buf[magic] != (TB_FRAME_MAGIC & 0xffu))
        return TB_FRAME_BAD_MAGIC;
    if (len >= magic + 2 && tb_wire_get(buf + magic, 2) != TB_FRAME_MAGIC)
        return TB_FRAME_BAD_MAGIC;
    if (len > version && buf[version] != TB_PROTOCOL_VERSION)
        return TB_FRAME_BAD_VERSION;
    if (len > type && !tb_frame_type_known(buf[type]))
        return TB_FRAME_BAD_TYPE;
    if (len >= TB_FRAME_HEADER_SIZE && tb_wire_get(buf + length, 4) > limit)
        return TB_FRAME_TOO_LONG;
    return len >= TB_FRAME_HEADER_SIZE ? TB_FRAME_OK : TB_FRAME_TRUNCATED;
}

static uint32_t tb_frame_length(const uint8_t *head) {
    return (uint32_t)tb_wire_get(head + TB_AT(FRAME_HEADER, LENGTH), 4);
}

tb_frame_status tb_frame_decode(const uint8_t *buf, size_t len, tb_frame *out, size_t *consumed) {
    if (len == 0)
        return TB_FRAME_END;
    tb_frame_status st = tb_header_check(buf, len, TB_MAX_PAYLOAD);
    if (st != TB_FRAME_OK)
        return st;
    uint32_t n = tb_frame_length(buf);
    size_t total = (size_t)TB_FRAME_HEADER_SIZE + n + TB_FRAME_TRAILER_SIZE;
    if (len < total)
        return TB_FRAME_TRUNCATED;
    if (tb_crc32(0, buf, TB_FRAME_HEADER_SIZE + (size_t)n) != tb_wire_get(buf + TB_FRAME_HEADER_SIZE + n, 4))
        return TB_FRAME_BAD_CRC;
    *out = (tb_frame){.type = buf[TB_AT(FRAME_HEADER, TYPE)], .length = n, .payload = buf + TB_FRAME_HEADER_SIZE};
    *consumed = total;
    return TB_FRAME_OK;
}

/* Reads exactly len bytes unless the stream ends: returns the count read, or -1 on error. */
static long tb_read_full(tb_channel *ch, uint8_t *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        long n = ch->read(ch->ctx, buf + got, len - got);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

tb_frame_status tb_frame_read(tb_channel *ch, uint8_t *buf, size_t cap, tb_frame *out) {
    if (cap < TB_FRAME_HEADER_SIZE + TB_FRAME_TRAILER_SIZE)
        return TB_FRAME_TOO_LONG;
    long n = tb_read_full(ch, buf, TB_FRAME_HEADER_SIZE);
    if (n < 0)
        return TB_FRAME_IO_ERROR;
    if (n == 0)
        return TB_FRAME_END;
    size_t limit = cap - TB_FRAME_HEADER_SIZE - TB_FRAME_TRAILER_SIZE;
    tb_frame_status st = tb_header_check(buf, (size_t)n, limit < TB_MAX_PAYLOAD ? limit : TB_MAX_PAYLOAD);
    if (st != TB_FRAME_OK)
        return st;
    size_t rest = (size_t)tb_frame_length(buf) + TB_FRAME_TRAILER_SIZE;
    long m = tb_read_full(ch, buf + TB_FRAME_HEADER_SIZE, rest);
    if (m < 0)
        return TB_FRAME_IO_ERROR;
    size_t consumed;
    return tb_frame_decode(buf, TB_FRAME_HEADER_SIZE + (size_t)m, out, &consumed);
}

/* A frame that fits is written with one call: one system call per REP on the posix port
 * instead of four. A device port may set it smaller (larger frames go part by part). */
#ifndef TB_FRAME_COALESCE_SIZE
#define TB_FRAME_COALESCE_SIZE (16u * 1024u)
#endif
static uint8_t tb_frame_out[TB_FRAME_COALESCE_SIZE];

/* The whole frame in tb_frame_out, written at once; -1 when the channel failed. */
static int tb_frame_write_whole(tb_channel *ch, const uint8_t *head, const tb_part *parts, size_t n, uint32_t *crc) {
    size_t at = TB_FRAME_HEADER_SIZE;
    memcpy(tb_frame_out, head, TB_FRAME_HEADER_SIZE);
    for (size_t i = 0; i < n; i++) {
        if (parts[i].len == 0)
            continue; /* its data may be NULL */
        memcpy(tb_frame_out + at, parts[i].data, parts[i].len);
        *crc = tb_crc32(*crc, parts[i].data, parts[i].len);
        at += parts[i].len;
    }
    tb_wire_put(tb_frame_out + at, *crc, TB_FRAME_TRAILER_SIZE);
    return ch->write(ch->ctx, tb_frame_out, at + TB_FRAME_TRAILER_SIZE) < 0 ? -1 : 0;
}

static int tb_frame_write_parts(tb_channel *ch, const uint8_t *head, const tb_part *parts, size_t n, uint32_t *crc) {
    uint8_t tail[TB_FRAME_TRAILER_SIZE];
    if (ch->write(ch->ctx, head, TB_FRAME_HEADER_SIZE) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (parts[i].len == 0)
            continue;
        *crc = tb_crc32(*crc, parts[i].data, parts[i].len);
        if (ch->write(ch->ctx, parts[i].data, parts[i].len) < 0)
            return -1;
    }
    tb_wire_put(tail, *crc, TB_FRAME_TRAILER_SIZE);
    return ch->write(ch->ctx, tail, sizeof tail) < 0 ? -1 : 0;
}

int tb_frame_write(tb_channel *ch, uint8_t type, const tb_part *parts, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += parts[i].len;
    if (total > TB_MAX_PAYLOAD)
        return -1;
    uint8_t head[TB_FRAME_HEADER_SIZE];
    tb_wire_put(head + TB_AT(FRAME_HEADER, MAGIC), TB_FRAME_MAGIC, 2);
    head[TB_AT(FRAME_HEADER, VERSION)] = TB_PROTOCOL_VERSION;
    head[TB_AT(FRAME_HEADER, TYPE)] = type;
    tb_wire_put(head + TB_AT(FRAME_HEADER, LENGTH), total, 4);
    uint32_t crc = tb_crc32(0, head, sizeof head);
    int whole = TB_FRAME_HEADER_SIZE + total + TB_FRAME_TRAILER_SIZE <= sizeof tb_frame_out;
    return whole ? tb_frame_write_whole(ch, head, parts, n, &crc) : tb_frame_write_parts(ch, head, parts, n, &crc);
}

int tb_send_json(tb_channel *ch, uint8_t type, const char *json, size_t len) {
    tb_part part = {json, len};
    return tb_frame_write(ch, type, &part, 1);
}

/* ---------------------------------------------------------------- RUN */
/* Each check names the field it rejects; the first failing one is reported. */
static int tb_run_fail(char *err, size_t errlen, const char *fmt, unsigned long v) {
    snprintf(err, errlen, fmt, v);
    return -1;
}

/* Which (role, protocol) each transport carries: memory both peers, sockets one. */
static const struct {
    uint8_t transport;
    uint8_t protocol;
    uint8_t one_peer; /* 1: role must be client or server, with an endpoint */
} tb_run_combos[] = {
    {TB_TRANSPORT_MEMORY, TB_PROTOCOL_KIND_TLS, 0},
    {TB_TRANSPORT_MEMORY, TB_PROTOCOL_KIND_DTLS, 0},
    {TB_TRANSPORT_TCP, TB_PROTOCOL_KIND_TLS, 1},
    {TB_TRANSPORT_UDP, TB_PROTOCOL_KIND_DTLS, 1},
};

/* -1: the protocol does not run over the transport; else whether it carries one peer. */
static int tb_run_combo(uint8_t transport, uint8_t protocol) {
    for (size_t i = 0; i < sizeof tb_run_combos / sizeof tb_run_combos[0]; i++)
        if (tb_run_combos[i].transport == transport && tb_run_combos[i].protocol == protocol)
            return tb_run_combos[i].one_peer;
    return -1;
}

/* The protocol-2 fields: role, protocol, endpoint, TCP and DTLS parameters. */
static int tb_run_tail_check(const tb_run_request *r, char *err, size_t errlen) {
    int one_peer = tb_run_combo(r->transport, r->protocol);
    if (!tb_role_name(r->role))
        return tb_run_fail(err, errlen, "role: unknown value %lu", r->role);
    if (!tb_protocol_kind_name(r->protocol))
        return tb_run_fail(err, errlen, "protocol: unknown value %lu", r->protocol);
    if (one_peer < 0)
        return tb_run_fail(err, errlen, "protocol: %lu does not run over this transport (tls: memory or tcp; "
                           "dtls: memory or udp)", r->protocol);
    if (one_peer != (r->role != TB_ROLE_BOTH))
        return tb_run_fail(err, errlen, "role: %lu does not fit the transport (memory: both; tcp/udp: client "
                           "or server)", r->role);
    if (one_peer ? (r->family != 4 && r->family != 6) : r->family != 0)
        return tb_run_fail(err, errlen, "family: %lu, must be 4 or 6 over a socket, 0 in memory", r->family);
    if (one_peer && r->role == TB_ROLE_CLIENT && r->port == 0)
        return tb_run_fail(err, errlen, "port: %lu, a client needs the server's port", r->port);
    if (r->max_fragment > 4)
        return tb_run_fail(err, errlen, "max_fragment: code %lu, must be 0 (none) or 1 .. 4 (RFC 6066)",
                           r->max_fragment);
    if (r->dtls_timeout_max_ms && r->dtls_timeout_min_ms > r->dtls_timeout_max_ms)
        return tb_run_fail(err, errlen, "dtls_timeout_min_ms: %lu is above the maximum",
                           r->dtls_timeout_min_ms);
    if (r->dtls_mtu != 0 && r->dtls_mtu < 256)
        return tb_run_fail(err, errlen, "dtls_mtu: %lu, must be 0 (default) or at least 256", r->dtls_mtu);
    return 0;
}

/* An experiment RUN (protocol 3) names no connection: these fields must hold the value
 * that means "none here"; record_size and options are ignored. */
static int tb_experiment_shape_check(const tb_run_request *r, char *err, size_t errlen) {
    const struct {
        const char *field;
        unsigned value;
        unsigned want;
    } fixed[] = {
        {"suite", r->suite_id, 0},
        {"group", r->group, 0},
        {"credential", r->credential, 0},
        {"direction", r->direction, TB_DIRECTION_NONE},
        {"transport", r->transport, TB_TRANSPORT_MEMORY},
        {"role", r->role, TB_ROLE_BOTH},
        {"protocol", r->protocol, TB_PROTOCOL_KIND_TLS},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i].value != fixed[i].want) {
            snprintf(err, errlen, "%s: %u in an experiment RUN, must be %u", fixed[i].field, fixed[i].value,
                     fixed[i].want);
            return -1;
        }
    return 0;
}

int tb_run_request_decode(const uint8_t *p, size_t len, tb_run_request *out, char *err, size_t errlen) {
    if (len != TB_RUN_REQUEST_SIZE)
        return tb_run_fail(err, errlen, "RUN payload is %lu bytes, expected " TB_STR(TB_RUN_REQUEST_SIZE),
                           (unsigned long)len);
    tb_run_request r;
    tb_run_request_unpack(p, &r);
    int reserved = tb_run_request_reserved_nonzero(p);
    if (!tb_credential_name(r.credential))
        return tb_run_fail(err, errlen, "credential: unknown value %lu", r.credential);
    if (!tb_direction_name(r.direction))
        return tb_run_fail(err, errlen, "direction: unknown value %lu", r.direction);
    if (!tb_transport_name(r.transport))
        return tb_run_fail(err, errlen, "transport: unknown value %lu", r.transport);
    if (tb_run_request_options(&r) & ~TB_OPTIONS_KNOWN) /* bits of spec [options] only */
        return tb_run_fail(err, errlen, "options: unknown bits 0x%04lx (spec/protocol.toml [options])",
                           tb_run_request_options(&r) & ~TB_OPTIONS_KNOWN);
    if (r.repetitions == 0)
        return tb_run_fail(err, errlen, "repetitions: %lu, must be at least 1", r.repetitions);
    if (r.experiment == 0 && (r.record_size < 1 || r.record_size > TB_MAX_RECORD_SIZE))
        return tb_run_fail(err, errlen, "record_size: %lu, must be 1 .. 16384", r.record_size);
    if (r.first_index > UINT32_MAX - (r.repetitions - 1))
        return tb_run_fail(err, errlen, "first_index: %lu + repetitions overflows 32 bits", r.first_index);
    if (reserved >= 0)
        return tb_run_fail(err, errlen, "reserved (offset %lu): not 0, must be 0", (unsigned long)reserved);
    if (r.experiment != 0 && tb_experiment_shape_check(&r, err, errlen) != 0)
        return -1;
    if (tb_run_tail_check(&r, err, errlen) != 0)
        return -1;
    *out = r;
    return 0;
}

void tb_run_request_encode(const tb_run_request *r, uint8_t out[TB_RUN_REQUEST_SIZE]) {
    tb_run_request_pack(r, out);
}

/* ---------------------------------------------------------------- REP */
/* The reason's bytes on the wire: up to its NUL, at most TB_REP_REASON_MAX. */
static size_t tb_rep_reason_len(const tb_rep_result *r) {
    size_t n = 0;
    while (n < TB_REP_REASON_MAX && r->reason[n])
        n++;
    return n;
}

void tb_rep_header_encode(const tb_rep_result *r, uint32_t n_records, uint32_t dropped,
                          uint8_t out[TB_REP_HEADER_SIZE]) {
    tb_rep_result h = *r;
    h.n_records = n_records;
    h.dropped = dropped;
    h.reason_len = (uint16_t)tb_rep_reason_len(r);
    tb_rep_header_pack(&h, out);
}

int tb_rep_header_decode(const uint8_t *p, size_t len, tb_rep_result *out, uint32_t *n_records,
                         uint32_t *dropped) {
    if (len < TB_REP_HEADER_SIZE)
        return -1;
    tb_rep_result h;
    tb_rep_header_unpack(p, &h);
    if (h.reason_len > TB_REP_REASON_MAX || len < TB_REP_HEADER_SIZE + (size_t)h.reason_len)
        return -1;
    size_t records = len - TB_REP_HEADER_SIZE - h.reason_len;
    if (records / TB_RECORD_SIZE != h.n_records || records % TB_RECORD_SIZE)
        return -1;
    if (memchr(p + len - h.reason_len, 0, h.reason_len)) /* text: a NUL would cut it short */
        return -1;
    memcpy(h.reason, p + len - h.reason_len, h.reason_len);
    h.reason[h.reason_len] = '\0';
    *out = h;
    *n_records = h.n_records;
    *dropped = h.dropped;
    return 0;
}

int tb_send_rep(tb_channel *ch, const tb_rep_result *r, const tb_trace *t) {
    uint8_t head[TB_REP_HEADER_SIZE];
    tb_rep_header_encode(r, t->count, t->dropped, head);
    tb_part parts[3] = {{head, sizeof head},
                        {t->records, (size_t)t->count * sizeof(tb_record)},
                        {r->reason, tb_rep_reason_len(r)}};
    return tb_frame_write(ch, TB_FRAME_REP, parts, 3);
}
