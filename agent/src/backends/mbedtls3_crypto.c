/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of mbed TLS 3.6 traced by link-time wrapping (ld --wrap=X): the
 * library's calls to X reach __wrap_X, which times __real_X as one crypto span whose STOP
 * value is the return code. The list of functions is mbedtls3_wrap.h (also read by
 * mbedtls3.cmake). Nothing 2.28-only is included: a 3.6 prefix lacks mbedtls/config.h and
 * ssl_internal.h, and the compiler would silently take the system's 2.28 headers. */
#include <stdint.h>

#include "mbedtls/dhm.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "psa/crypto.h"

#include "common.h"
#include "tlsbench/trace.h"

/* TLS 1.2 key derivation and the PSK premaster: library-internal (ssl_misc.h of 3.6, not
 * installed), so declared here. */
int mbedtls_ssl_derive_keys(mbedtls_ssl_context *ssl);
int mbedtls_ssl_psk_derive_premaster(mbedtls_ssl_context *ssl, mbedtls_key_exchange_type_t key_ex);

typedef int (*tb_rng_fn)(void *, unsigned char *, size_t);
typedef int (*tb_vrfy_fn)(void *, mbedtls_x509_crt *, int, uint32_t *);

/* __real_ is weak: a stripped build (`tlsbench build mbedtls@3.6`) may lack the function
 * (no DHM, no PSK, no TLS 1.2); then nothing calls the wrapper either, and the link still
 * succeeds. */
#define TB_WRAP(sym, label, params, args) TB_TRACED_WRAP(sym, label, params, args, 1, __attribute__((weak)))
#include "mbedtls3_wrap.h"
#undef TB_WRAP
