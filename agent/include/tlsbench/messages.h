/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON frames an agent sends (docs/protocol.md): HELLO, SUITES, READY, DONE, ERROR, and
 * the same JSON as text for the command line (`suites --json`, `experiments --json`). */
#ifndef TLSBENCH_MESSAGES_H
#define TLSBENCH_MESSAGES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tlsbench/port.h"
#include "tlsbench/runner.h"
#include "tlsbench/serve.h"

/* Each returns 0, or -1 when the JSON did not fit its buffer or the channel failed. */
int tb_send_hello(tb_channel *ch, const tb_agent *a);
int tb_send_suites(tb_channel *ch, const tb_backend *b);
int tb_send_ready(tb_channel *ch, const char *transport, const char *where);
int tb_send_done(tb_channel *ch, uint32_t config_id, const tb_run_summary *s);
int tb_send_error(tb_channel *ch, const char *code, const char *message, const char *hint, bool fatal);

/* `{"suites": [...]}` and `{"experiments": [...]}` as text in a shared buffer (valid until
 * the next call); NULL when it does not fit. */
const char *tb_suites_json_text(const tb_backend *b, size_t *len);
const char *tb_experiments_json_text(size_t *len);

#endif
