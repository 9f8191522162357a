/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's JSON frames (docs/protocol.md): HELLO, SUITES, READY, DONE, ERROR. */
#include "tlsbench/messages.h"

#include <stdlib.h>
#include <string.h>

#include "tlsbench/experiment_run.h"
#include "tlsbench/json.h"
#include "tlsbench/protocol.h"
#include "tlsbench/transport.h"

/* SUITES of a full build is ~50 KiB; a device port with fewer suites may set it smaller. */
#ifndef TB_JSON_BUFFER_SIZE
#define TB_JSON_BUFFER_SIZE (512u * 1024u)
#endif
static char tb_json_buf[TB_JSON_BUFFER_SIZE];

typedef void (*tb_json_fn)(tb_json *j, const void *arg);

/* Builds a JSON message in the shared buffer; NULL when it does not fit. */
static const char *tb_build_json(tb_json_fn fn, const void *arg, size_t *len) {
    tb_json j;
    tb_json_init(&j, tb_json_buf, sizeof tb_json_buf);
    fn(&j, arg);
    *len = j.len;
    return j.overflow ? NULL : tb_json_buf;
}

static int tb_send_built(tb_channel *ch, uint8_t type, tb_json_fn fn, const void *arg) {
    size_t len;
    const char *json = tb_build_json(fn, arg, &len);
    return json ? tb_send_json(ch, type, json, len) : -1;
}

/* ---------------------------------------------------------------- HELLO */
static void tb_transport_names_json(tb_json *j) {
    tb_json_begin_array(j);
    for (unsigned v = 0; v < 256; v++)
        if (tb_transport_find((uint8_t)v))
            tb_json_string(j, tb_transport_find((uint8_t)v)->name);
    tb_json_end_array(j);
}

/* How the monotonic clock is made (port.h tb_port_clock_info): HELLO's and DONE's. */
static void tb_clock_calibration_json(tb_json *j) {
    tb_port_clock_info c = tb_port_clock_calibration();
    tb_json_kv_string(j, "counter", c.counter);
    tb_json_kv_double(j, "counter_hz", c.counter_hz);
    tb_json_kv_string(j, "calibrated_against", c.reference);
    tb_json_kv_uint(j, "calibration_window_ns", c.window_ns);
    tb_json_kv_double(j, "drift_ppm", c.drift_ppm);
    tb_json_kv_string(j, "fallback", c.fallback);
}

static void tb_hello_json(tb_json *j, const void *arg) {
    const tb_agent *a = arg;
    const tb_backend *b = a->backend;
    tb_json_begin_object(j);
    tb_json_kv_uint(j, "protocol", TB_PROTOCOL_VERSION);
    tb_json_kv_string(j, "agent", a->name);
    tb_json_kv_string(j, "library", b->name);
    tb_json_kv_string(j, "library_name", b->library_name);
    tb_json_kv_string(j, "library_version", b->version());
    tb_json_key(j, "build");
    tb_json_begin_object(j);
    b->describe_build(j);
    tb_json_end_object(j);
    tb_json_kv_uint(j, "labels_crc32", TB_LABELS_CRC32);
    tb_json_kv_uint(j, "protocol_crc32", TB_PROTOCOL_CRC32);
    tb_json_key(j, "clock");
    tb_json_begin_object(j);
    tb_json_kv_string(j, "source", tb_port_clock_name());
    tb_json_kv_uint(j, "resolution_ns", tb_port_clock_resolution_ns());
    tb_json_kv_string(j, "cpu", tb_port_cpu_clock_name());
    tb_json_kv_string(j, "unit", tb_port_clock_unit());
    tb_clock_calibration_json(j);
    tb_json_end_object(j);
    tb_json_key(j, "tracer");
    tb_json_begin_object(j);
    tb_json_kv_bool(j, "enabled", TB_TRACE_ENABLED != 0);
    tb_json_kv_uint(j, "capacity", TB_TRACE_CAPACITY);
    tb_json_kv_uint(j, "record_size", sizeof(tb_record));
    tb_json_kv_double(j, "event_cost_ns", a->calibration.event_cost_ns);
    tb_json_kv_double(j, "empty_span_ns", a->calibration.empty_span_ns);
    tb_json_kv_uint(j, "calibration_pairs", a->calibration.pairs);
    tb_json_end_object(j);
    tb_json_kv_string(j, "step_granularity", b->step_granularity);
    tb_json_kv_bool(j, "memory_probes", tb_port_memory_probes() != NULL); /* memory records per repetition */
    tb_json_key(j, "capabilities");
    tb_transport_names_json(j);
    tb_json_key(j, "experiments"); /* primitives, then user experiments: RUN offset 66 is 1-based here */
    tb_experiments_json(j);
    if (a->describe_device) {
        tb_json_key(j, "device");
        tb_json_begin_object(j);
        a->describe_device(j);
        tb_json_end_object(j);
    }
    tb_json_end_object(j);
}

int tb_send_hello(tb_channel *ch, const tb_agent *a) { return tb_send_built(ch, TB_FRAME_HELLO, tb_hello_json, a); }

/* ---------------------------------------------------------------- SUITES */
static void tb_suite_json(tb_json *j, const tb_suite_info *s) {
    tb_json_begin_object(j);
    tb_json_kv_uint(j, "id", s->id);
    tb_json_kv_string(j, "name", s->name);
    tb_json_kv_string(j, "min_version", s->min_version);
    tb_json_kv_string(j, "max_version", s->max_version);
    tb_json_kv_string(j, "key_exchange", s->key_exchange);
    tb_json_kv_string(j, "authentication", s->authentication);
    tb_json_kv_string(j, "cipher", s->cipher);
    tb_json_kv_string(j, "mac", s->mac);
    tb_json_kv_bool(j, "dtls", s->dtls);
    tb_json_key(j, "credentials");
    tb_json_begin_array(j);
    for (uint8_t i = 0; i < s->n_credentials && i < TB_MAX_SUITE_CREDENTIALS; i++)
        tb_json_string(j, tb_credential_name(s->credentials[i]));
    tb_json_end_array(j);
    if (s->n_credentials == 0)
        tb_json_kv_string(j, "why_unsupported", s->why_unsupported ? s->why_unsupported : "");
    tb_json_end_object(j);
}

static void tb_suites_json(tb_json *j, const void *arg) {
    const tb_backend *b = arg;
    tb_json_begin_object(j);
    tb_json_key(j, "suites");
    tb_json_begin_array(j);
    for (size_t i = 0; i < b->suite_count(); i++)
        tb_suite_json(j, b->suite_at(i));
    tb_json_end_array(j);
    tb_json_end_object(j);
}

int tb_send_suites(tb_channel *ch, const tb_backend *b) { return tb_send_built(ch, TB_FRAME_SUITES, tb_suites_json, b); }

const char *tb_suites_json_text(const tb_backend *b, size_t *len) { return tb_build_json(tb_suites_json, b, len); }

static void tb_experiments_doc_json(tb_json *j, const void *arg) {
    (void)arg;
    tb_json_begin_object(j);
    tb_json_key(j, "experiments");
    tb_experiments_json(j);
    tb_json_end_object(j);
}

const char *tb_experiments_json_text(size_t *len) { return tb_build_json(tb_experiments_doc_json, NULL, len); }

/* ---------------------------------------------------------------- READY, DONE, ERROR */
typedef struct tb_ready_args {
    const char *transport, *where;
} tb_ready_args;

static void tb_ready_json(tb_json *j, const void *arg) {
    const tb_ready_args *r = arg;
    const char *colon = strrchr(r->where, ':');
    tb_json_begin_object(j);
    tb_json_kv_string(j, "transport", r->transport);
    tb_json_kv_string(j, "where", r->where);
    tb_json_kv_uint(j, "port", colon ? (uint64_t)strtoul(colon + 1, NULL, 10) : 0);
    tb_json_end_object(j);
}

int tb_send_ready(tb_channel *ch, const char *transport, const char *where) {
    return tb_send_built(ch, TB_FRAME_READY, tb_ready_json, &(tb_ready_args){transport, where});
}

typedef struct tb_done_args {
    uint32_t config_id;
    const tb_run_summary *summary;
} tb_done_args;

static void tb_done_json(tb_json *j, const void *arg) {
    const tb_done_args *d = arg;
    tb_json_begin_object(j);
    tb_json_kv_uint(j, "config_id", d->config_id);
    tb_json_kv_uint(j, "shipped", d->summary->shipped);
    tb_json_kv_uint(j, "failed", d->summary->failed);
    tb_json_key(j, "clock"); /* checked after the RUN (serve.c): the source may have changed */
    tb_json_begin_object(j);
    tb_json_kv_string(j, "source", tb_port_clock_name());
    tb_clock_calibration_json(j);
    tb_json_end_object(j);
    tb_json_end_object(j);
}

int tb_send_done(tb_channel *ch, uint32_t config_id, const tb_run_summary *s) {
    return tb_send_built(ch, TB_FRAME_DONE, tb_done_json, &(tb_done_args){config_id, s});
}

typedef struct tb_error_args {
    const char *code, *message, *hint;
    bool fatal;
} tb_error_args;

static void tb_error_json(tb_json *j, const void *arg) {
    const tb_error_args *e = arg;
    tb_json_begin_object(j);
    tb_json_kv_string(j, "code", e->code);
    tb_json_kv_string(j, "message", e->message);
    tb_json_kv_string(j, "hint", e->hint);
    tb_json_kv_bool(j, "fatal", e->fatal);
    tb_json_end_object(j);
}

int tb_send_error(tb_channel *ch, const char *code, const char *message, const char *hint, bool fatal) {
    return tb_send_built(ch, TB_FRAME_ERROR, tb_error_json, &(tb_error_args){code, message, hint, fatal});
}
