/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of mbed TLS 3.6 traced by link-time wrapping (ld --wrap=X): the
 * library's calls to X reach __wrap_X, which times __real_X as one crypto span whose STOP
 * value is the return code. The list of functions is mbedtls3_wrap.h (also read by
 * mbedtls3.cmake). Nothing 2.28-only is included: a 3.6 prefix lacks mbedtls/config.h and
 * ssl_internal.h, and the compiler would silently take the system's 2.28 headers. */
/* An HKDF operation's algorithm is private and has no getter (tb_kdf_input_computes). */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS
#include <stdbool.h>
#include <stdint.h>

#include "mbedtls/dhm.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "psa/crypto.h"

#include "common.h"
#include "tlsbench/trace.h"

/* Library-internal (ssl_misc.h of 3.6, not installed), so declared here: the static
 * assertion cannot check these against the library's prototype (ssl_misc.h of 3.6.6). */
int mbedtls_ssl_derive_keys(mbedtls_ssl_context *ssl);
int mbedtls_ssl_psk_derive_premaster(mbedtls_ssl_context *ssl, mbedtls_key_exchange_type_t key_ex);
int mbedtls_ssl_tls13_generate_and_write_xxdh_key_exchange(mbedtls_ssl_context *ssl, uint16_t named_group,
                                                           unsigned char *buf, unsigned char *end, size_t *out_len);

/* HKDF-Extract's HMAC runs as its salt and secret are input, HKDF-Expand's when its output
 * is read; an expand's secret input (the PRK), every info input and an extract's output
 * (the PRK computed before) are only copied. */
static bool tb_kdf_input_computes(const psa_key_derivation_operation_t *operation, psa_key_derivation_step_t step) {
    bool expand_only = PSA_ALG_IS_HKDF_EXPAND(operation->MBEDTLS_PRIVATE(alg));
    return step == PSA_KEY_DERIVATION_INPUT_SALT || (step == PSA_KEY_DERIVATION_INPUT_SECRET && !expand_only);
}

static bool tb_kdf_output_computes(const psa_key_derivation_operation_t *operation) {
    return !PSA_ALG_IS_HKDF_EXTRACT(operation->MBEDTLS_PRIVATE(alg));
}

typedef int (*tb_rng_fn)(void *, unsigned char *, size_t);
typedef int (*tb_vrfy_fn)(void *, mbedtls_x509_crt *, int, uint32_t *);

/* __real_ is weak: a stripped build (`tlsbench build mbedtls@3.6`) may lack the function
 * (no DHM, no PSK, no TLS 1.2); then nothing calls the wrapper either, and the link still
 * succeeds. */
#define TB_WRAP(sym, label, params, args, traced) TB_TRACED_WRAP(sym, label, params, args, traced, __attribute__((weak)))
#define TB_WRAP_PSA(sym, label, params, args, traced) \
    TB_TRACED_WRAP_T(psa_status_t, sym, label, params, args, traced, __attribute__((weak)))
#include "mbedtls3_wrap.h"
#undef TB_WRAP
#undef TB_WRAP_PSA
