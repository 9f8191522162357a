/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of OpenSSL traced by link-time wrapping (ld --wrap=X): libssl's calls to
 * X reach __wrap_X, which times __real_X as one crypto span whose STOP value is the return
 * code. The list of functions is openssl_wrap.h (also read by openssl.cmake). */
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/x509.h>

#include "common.h"
#include "tlsbench/trace.h"

/* Size queries (traced false) go straight through: they compute nothing. */
#define TB_WRAP(sym, label, params, args, traced) TB_TRACED_WRAP(sym, label, params, args, traced, )
#include "openssl_wrap.h"
#undef TB_WRAP
