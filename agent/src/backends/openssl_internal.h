/* SPDX-License-Identifier: Apache-2.0 */
/* Tables and handles of the OpenSSL backend exposed to its unit tests (not part of the contract). */
#ifndef TLSBENCH_OPENSSL_INTERNAL_H
#define TLSBENCH_OPENSSL_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "tlsbench/backend.h"

/* Number of OSSL_HANDSHAKE_STATE values the state table covers. */
size_t tb_openssl_state_count(void);

/* The step label (TB_L_*) of a state; 0 when state is out of range. */
uint16_t tb_openssl_state_label(int state);

/* The OpenSSL connection of a session, so tests can reconfigure one peer (e.g. to force a
 * HelloRetryRequest) before the handshake starts. */
SSL *tb_openssl_session_ssl(tb_session *s);

#endif
