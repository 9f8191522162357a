/* SPDX-License-Identifier: Apache-2.0 */
/* Tables and session facts of the wolfSSL backend exposed to its unit tests (not part of
 * the backend contract). */
#ifndef TLSBENCH_WOLFSSL_INTERNAL_H
#define TLSBENCH_WOLFSSL_INTERNAL_H
#include <stdint.h>

#include "tlsbench/backend.h"

/* The step label (TB_L_HANDSHAKE_TURN_*) of a peer's turn-th call, from 0; capped at TURN_4. */
uint16_t tb_wolfssl_turn_label(uint32_t turn);

/* What a finished handshake negotiated: wolfSSL_get_curve_name (NULL for none or FFDHE),
 * wolfSSL_get_version, and the suite as (byte0 << 8 | byte1). */
const char *tb_wolfssl_session_curve(tb_session *s);
const char *tb_wolfssl_session_version(tb_session *s);
int tb_wolfssl_session_suite(tb_session *s);

#endif
