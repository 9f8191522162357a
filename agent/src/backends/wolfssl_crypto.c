/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of wolfSSL traced by link-time wrapping (ld --wrap=X): the library's
 * calls to X reach __wrap_X, which times __real_X as one crypto span whose STOP value is
 * the return code. The list of functions is wolfssl_wrap.h (also read by wolfssl.cmake). */
#include <wolfssl/options.h> /* first: the build's configuration shapes every other header */
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/asn.h> /* ParseCertRelative, DecodedCert */
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/curve448.h>
#include <wolfssl/wolfcrypt/dh.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/kdf.h>
#include <wolfssl/wolfcrypt/rsa.h>

#include "common.h"
#include "tlsbench/trace.h"

#define TB_WRAP(sym, label, params, args) TB_TRACED_WRAP(sym, label, params, args, 1, )
#include "wolfssl_wrap.h"
#undef TB_WRAP
