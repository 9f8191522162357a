/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of mbed TLS traced by link-time wrapping (ld --wrap=X): the library's
 * calls to X reach __wrap_X, which times __real_X as one crypto span whose STOP value is
 * the return code. The list of functions is mbedtls_wrap.h (also read by mbedtls.cmake). */
#include <stdint.h>

#include "mbedtls/dhm.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl_internal.h" /* mbedtls_ssl_derive_keys, mbedtls_ssl_psk_derive_premaster */
#include "mbedtls/x509_crt.h"

#include "common.h"
#include "tlsbench/trace.h"

/* Declared by ssl_internal.h only when a PSK key exchange is built; a stripped build without
 * one still compiles the wrapper (never called, see the weak __real_ below). */
#if !defined(MBEDTLS_KEY_EXCHANGE_SOME_PSK_ENABLED)
int mbedtls_ssl_psk_derive_premaster(mbedtls_ssl_context *ssl, mbedtls_key_exchange_type_t key_ex);
#endif

typedef int (*tb_rng_fn)(void *, unsigned char *, size_t);
typedef int (*tb_vrfy_fn)(void *, mbedtls_x509_crt *, int, uint32_t *);

/* __real_ is weak: a stripped build (`tlsbench build mbedtls`) may lack the function (no
 * DHM, no PSK); then nothing calls the wrapper either, and the link still succeeds. */
#define TB_WRAP(sym, label, params, args) TB_TRACED_WRAP(sym, label, params, args, 1, __attribute__((weak)))
#include "mbedtls_wrap.h"
#undef TB_WRAP
