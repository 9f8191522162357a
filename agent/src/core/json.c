/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny JSON writer. One `need_comma` flag suffices: opening a container or writing a key
 * clears it, finishing any value (scalar or container) sets it. */
#include "tlsbench/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void tb_json_init(tb_json *j, char *buf, size_t cap) {
    *j = (tb_json){.buf = buf, .cap = cap};
    if (cap > 0)
        buf[0] = '\0';
}

/* Appends n bytes, keeping the buffer NUL-terminated; on overflow writes nothing more. */
static void tb_json_put(tb_json *j, const char *s, size_t n) {
    if (j->overflow)
        return;
    if (j->cap == 0 || n > j->cap - 1 - j->len) {
        j->overflow = true;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void tb_json_puts(tb_json *j, const char *s) { tb_json_put(j, s, strlen(s)); }

static void tb_json_sep(tb_json *j) {
    if (j->need_comma)
        tb_json_put(j, ",", 1);
}

static void tb_json_quoted(tb_json *j, const char *s) {
    tb_json_put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': tb_json_put(j, "\\\"", 2); break;
        case '\\': tb_json_put(j, "\\\\", 2); break;
        case '\n': tb_json_put(j, "\\n", 2); break;
        case '\r': tb_json_put(j, "\\r", 2); break;
        case '\t': tb_json_put(j, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                tb_json_puts(j, esc);
            } else {
                tb_json_put(j, (const char *)p, 1);
            }
            break;
        }
    }
    tb_json_put(j, "\"", 1);
}

/* A scalar already formatted as JSON text. */
static void tb_json_raw_value(tb_json *j, const char *text) {
    tb_json_sep(j);
    tb_json_puts(j, text);
    j->need_comma = true;
}

void tb_json_begin_object(tb_json *j) {
    tb_json_sep(j);
    tb_json_put(j, "{", 1);
    j->need_comma = false;
}

void tb_json_end_object(tb_json *j) {
    tb_json_put(j, "}", 1);
    j->need_comma = true;
}

void tb_json_begin_array(tb_json *j) {
    tb_json_sep(j);
    tb_json_put(j, "[", 1);
    j->need_comma = false;
}

void tb_json_end_array(tb_json *j) {
    tb_json_put(j, "]", 1);
    j->need_comma = true;
}

void tb_json_key(tb_json *j, const char *key) {
    tb_json_sep(j);
    tb_json_quoted(j, key);
    tb_json_put(j, ":", 1);
    j->need_comma = false;
}

void tb_json_string(tb_json *j, const char *s) {
    if (!s) {
        tb_json_raw_value(j, "null");
        return;
    }
    tb_json_sep(j);
    tb_json_quoted(j, s);
    j->need_comma = true;
}

void tb_json_int(tb_json *j, int64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    tb_json_raw_value(j, text);
}

void tb_json_uint(tb_json *j, uint64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    tb_json_raw_value(j, text);
}

/* JSON has no NaN or infinity: those become null. %.15g round-trips the digits we print. */
void tb_json_double(tb_json *j, double v) {
    char text[32];
    if (!isfinite(v)) {
        tb_json_raw_value(j, "null");
        return;
    }
    snprintf(text, sizeof text, "%.15g", v);
    tb_json_raw_value(j, text);
}

void tb_json_bool(tb_json *j, bool v) { tb_json_raw_value(j, v ? "true" : "false"); }

void tb_json_kv_string(tb_json *j, const char *key, const char *s) { tb_json_key(j, key); tb_json_string(j, s); }
void tb_json_kv_int(tb_json *j, const char *key, int64_t v) { tb_json_key(j, key); tb_json_int(j, v); }
void tb_json_kv_uint(tb_json *j, const char *key, uint64_t v) { tb_json_key(j, key); tb_json_uint(j, v); }
void tb_json_kv_double(tb_json *j, const char *key, double v) { tb_json_key(j, key); tb_json_double(j, v); }
void tb_json_kv_bool(tb_json *j, const char *key, bool v) { tb_json_key(j, key); tb_json_bool(j, v); }
