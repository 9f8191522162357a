/* SPDX-License-Identifier: Apache-2.0 */
/* A user experiment (docs/experiments.md): what it costs a sensor node to serialize a batch
 * of readings into a JSON message of a given size and checksum it with CRC-32.
 *
 * Built into tlsbench-agent-example (mbed TLS backend + this file), a complete agent: the
 * controller runs it like any library (`libraries = ["example"]`), and its standalone CLI
 * runs it by hand:
 *
 *     tlsbench-agent-example experiments
 *     tlsbench-agent-example run --experiment sensor-json --size 1024 --reps 100 --tree
 *
 * The measured block marks two groups, "encode" and "crc32". Between them it checks the
 * encoder's length, and after the CRC it compares with a known answer computed once in
 * setup by an independent (bitwise) CRC: a wrong result discards the repetition instead of
 * polluting the statistics. The checks sit outside every group, so they are never timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlsbench/experiment.h"

/* Group indices: positions in the experiment's `groups` below. */
enum { GROUP_ENCODE = 0, GROUP_CRC32 = 1 };

/* Nonzero codes the measured block returns; they land in the REP's error field. */
enum { ERR_LENGTH = 1, ERR_CRC = 2 };

/* The message's fixed parts: an empty message is the head and "]}". */
static const char HEAD[] = "{\"dev\":\"tb-example\",\"r\":[";
#define EMPTY_MESSAGE (sizeof HEAD - 1 + 2)

typedef struct reading {
    uint32_t t_ms;        /* time since boot */
    int32_t centi_deg;    /* temperature, 0.01 °C */
} reading;

typedef struct sensor_state {
    reading *readings;
    uint32_t n_readings;
    char *msg;            /* the encoder's output, `size` bytes */
    uint32_t size;
    uint32_t crc_table[256];
    size_t expected_len;  /* known answers, computed once in setup */
    uint32_t expected_crc;
} sensor_state;

/* ---------------------------------------------------------------- the code under test */
/* Appends the decimal text of v; returns the new end, or NULL when it does not fit. */
static char *put_int(char *p, const char *end, int32_t v) {
    char digits[12];
    int n = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do
        digits[n++] = (char)('0' + u % 10u);
    while ((u /= 10u) != 0);
    if (end - p < n + (v < 0))
        return NULL;
    if (v < 0)
        *p++ = '-';
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

static char *put_str(char *p, const char *end, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(end - p) < n)
        return NULL;
    memcpy(p, s, n);
    return p + n;
}

/* {"dev":"tb-example","r":[{"t":1000,"c":2150},...]} with as many readings as fit in `cap`
 * bytes; returns the message length, or 0 when not even an empty message fits. */
static size_t encode(const reading *r, uint32_t n, char *out, size_t cap) {
    if (cap < EMPTY_MESSAGE)
        return 0;
    const char *end = out + cap - 2; /* room for the closing "]}" */
    char *p = put_str(out, end, HEAD);
    for (uint32_t i = 0; i < n; i++) {
        char *q = put_str(p, end, i ? ",{\"t\":" : "{\"t\":");
        q = q ? put_int(q, end, (int32_t)r[i].t_ms) : NULL;
        q = q ? put_str(q, end, ",\"c\":") : NULL;
        q = q ? put_int(q, end, r[i].centi_deg) : NULL;
        q = q ? put_str(q, end, "}") : NULL;
        if (!q)
            break; /* the next reading does not fit: the message ends here */
        p = q;
    }
    memcpy(p, "]}", 2);
    return (size_t)(p + 2 - out);
}

/* CRC-32 (IEEE 802.3, as zlib's crc32), table-driven: what a device would ship. */
static uint32_t crc32_fast(const uint32_t table[256], const void *buf, size_t len) {
    const uint8_t *b = buf;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = table[(c ^ b[i]) & 0xFFu] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ---------------------------------------------------------------- known answers (setup only) */
/* Bit by bit: slow, but independent of the table, so it can check the fast version. */
static uint32_t crc32_bitwise(const void *buf, size_t len) {
    const uint8_t *b = buf;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

/* The table: the same bit loop run once per byte value (checked in setup by the check value). */
static void crc32_make_table(uint32_t table[256]) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[i] = c;
    }
}

/* ---------------------------------------------------------------- the experiment */
static void sensor_teardown(void *state) {
    sensor_state *s = state;
    if (!s)
        return;
    free(s->readings);
    free(s->msg);
    free(s);
}

/* Setup's way out: frees what was made, says why. */
static int setup_failed(sensor_state *s, char *err, size_t errlen, const char *why, unsigned v) {
    sensor_teardown(s);
    snprintf(err, errlen, why, v);
    return -1;
}

/* Once per RUN, not measured: buffers, readings, the CRC table and the known answers. A
 * setup failure refuses the RUN; the host shows the message and skips this size. */
static int sensor_setup(void **state, uint32_t size, char *err, size_t errlen) {
    if (size < EMPTY_MESSAGE)
        return setup_failed(NULL, err, errlen, "the smallest message is %u bytes", (unsigned)EMPTY_MESSAGE);
    sensor_state *s = calloc(1, sizeof *s);
    if (!s)
        return setup_failed(NULL, err, errlen, "out of memory (%u bytes)", (unsigned)sizeof *s);
    s->size = size;
    s->n_readings = size / 8u + 1u; /* more than fit: every reading takes at least 16 bytes */
    s->readings = calloc(s->n_readings, sizeof *s->readings);
    s->msg = malloc(size);
    if (!s->readings || !s->msg)
        return setup_failed(s, err, errlen, "out of memory for a %u-byte message", (unsigned)size);
    for (uint32_t i = 0; i < s->n_readings; i++) /* a slow, deterministic temperature drift */
        s->readings[i] = (reading){.t_ms = 1000u + 10u * i, .centi_deg = 2150 + (int32_t)(i * 37u % 200u) - 100};
    crc32_make_table(s->crc_table);
    /* The standard check value of CRC-32 ("123456789"), then this size's answers. */
    if (crc32_fast(s->crc_table, "123456789", 9) != 0xCBF43926u)
        return setup_failed(s, err, errlen, "CRC-32 misses its check value 0x%08X: the table is wrong",
                            0xCBF43926u);
    s->expected_len = encode(s->readings, s->n_readings, s->msg, size);
    s->expected_crc = crc32_bitwise(s->msg, s->expected_len);
    *state = s;
    return 0;
}

/* One repetition. Only the code between tb_group_begin and tb_group_end counts toward a
 * group; the checks in between are inside the measured block but outside every group. */
static int sensor_measure(void *state) {
    sensor_state *s = state;
    tb_group_begin(GROUP_ENCODE);
    size_t len = encode(s->readings, s->n_readings, s->msg, s->size);
    tb_group_end(GROUP_ENCODE);
    if (len != s->expected_len)
        return ERR_LENGTH; /* discarded: shipped with status DISCARDED and error 1 */
    tb_group_begin(GROUP_CRC32);
    uint32_t crc = crc32_fast(s->crc_table, s->msg, len);
    tb_group_end(GROUP_CRC32);
    return crc == s->expected_crc ? 0 : ERR_CRC;
}

static const uint32_t sensor_sizes[] = {64, 256, 1024, 4096, 0};

static const tb_experiment sensor_json = {
    .name = "sensor-json",
    .description = "Serialize temperature readings into a JSON message of the given size, then CRC-32 it",
    .groups = {"encode", "crc32"},
    .sizes = sensor_sizes,
    .setup = sensor_setup,
    .measure = sensor_measure,
    .teardown = sensor_teardown,
};

/* This agent's user experiments: the table replaces the empty default (src/experiments/none.c). */
const tb_experiment *const tb_user_experiments[] = {&sensor_json, NULL};
