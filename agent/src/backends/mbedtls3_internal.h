/* SPDX-License-Identifier: Apache-2.0 */
/* Tables of the mbed TLS 3.6 backend exposed to its unit tests (not part of the contract). */
#ifndef TLSBENCH_MBEDTLS3_INTERNAL_H
#define TLSBENCH_MBEDTLS3_INTERNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ssl.h"
#include "tlsbench/backend.h"

/* Number of mbedtls_ssl_states values the state table covers. */
size_t tb_mbedtls3_state_count(void);

/* The step label (TB_L_*) traced for ssl->state == state in a TLS 1.3 (tls13) or TLS 1.2
 * handshake; 0 when state is out of range. */
uint16_t tb_mbedtls3_state_label(int state, bool tls13);

/* The mbed TLS connection of a session, so tests can read what a handshake negotiated. */
mbedtls_ssl_context *tb_mbedtls3_session_ssl(tb_session *s);

/* Heap counting through mbedtls_platform_set_calloc_free (MBEDTLS_PLATFORM_MEMORY): on
 * starts from zero and counts the bytes mbed TLS holds and its peak; off restores
 * calloc/free. 0, or the library's code (a build without MBEDTLS_PLATFORM_MEMORY). Not
 * used by the agent yet: every measurement runs with calloc/free. */
int tb_mbedtls3_heap_counting(bool on);
void tb_mbedtls3_heap_stats(size_t *now, size_t *peak);

#endif
