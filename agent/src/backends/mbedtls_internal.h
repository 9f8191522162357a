/* SPDX-License-Identifier: Apache-2.0 */
/* Tables of the mbed TLS backend exposed to its unit tests (not part of the contract). */
#ifndef TLSBENCH_MBEDTLS_INTERNAL_H
#define TLSBENCH_MBEDTLS_INTERNAL_H
#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ssl.h"
#include "tlsbench/backend.h"

/* Number of mbedtls_ssl_states values the state table covers. */
size_t tb_mbedtls_state_count(void);

/* The step label (TB_L_*) traced for ssl->state == state; 0 when state is out of range. */
uint16_t tb_mbedtls_state_label(int state);

/* The mbed TLS connection of a session, so tests can read what a handshake negotiated. */
mbedtls_ssl_context *tb_mbedtls_session_ssl(tb_session *s);

#endif
