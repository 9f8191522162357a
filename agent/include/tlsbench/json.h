/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny JSON writer into a caller-owned buffer (HELLO, SUITES, DONE, ERROR, `suites --json`).
 * The agent only writes JSON, never parses it. Overflow sets `overflow` and stops writing. */
#ifndef TLSBENCH_JSON_H
#define TLSBENCH_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tb_json {
    char *buf;
    size_t cap;
    size_t len;
    bool overflow;
    bool need_comma; /* a value was written at the current nesting level */
} tb_json;

void tb_json_init(tb_json *j, char *buf, size_t cap);
void tb_json_begin_object(tb_json *j);
void tb_json_end_object(tb_json *j);
void tb_json_begin_array(tb_json *j);
void tb_json_end_array(tb_json *j);
void tb_json_key(tb_json *j, const char *key);          /* then exactly one value */
void tb_json_string(tb_json *j, const char *s);          /* NULL writes null */
void tb_json_int(tb_json *j, int64_t v);
void tb_json_uint(tb_json *j, uint64_t v);
void tb_json_double(tb_json *j, double v);
void tb_json_bool(tb_json *j, bool v);
/* key + value shorthands */
void tb_json_kv_string(tb_json *j, const char *key, const char *s);
void tb_json_kv_int(tb_json *j, const char *key, int64_t v);
void tb_json_kv_uint(tb_json *j, const char *key, uint64_t v);
void tb_json_kv_double(tb_json *j, const char *key, double v);
void tb_json_kv_bool(tb_json *j, const char *key, bool v);

#endif
