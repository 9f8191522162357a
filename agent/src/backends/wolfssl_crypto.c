/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of wolfSSL traced by link-time wrapping (ld --wrap=X): the library's
 * calls to X reach __wrap_X, which times __real_X as one crypto span whose STOP value is
 * the return code. The list of functions is wolfssl_wrap.h (also read by wolfssl.cmake). */
#include <wolfssl/options.h> /* first: the build's configuration shapes every other header */
#include <wolfssl/ssl.h>
#include <wolfssl/version.h>
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

/* The functions whose prototypes changed, by the linked version (each agent's .cmake wraps
 * the same list: a mismatch does not link). */
#if LIBWOLFSSL_VERSION_HEX >= 0x05007000
#include <wolfssl/wolfcrypt/kyber.h>
#include <wolfssl/wolfcrypt/wc_kyber.h>
#define TB_WOLF_VERSION_WRAP "wolfssl_wrap_5_7.h"
#else
#define TB_WOLF_VERSION_WRAP "wolfssl_wrap_5_5.h"
#endif

#define TB_WRAP(sym, label, params, args) TB_TRACED_WRAP(sym, label, params, args, 1, )
#include "wolfssl_wrap.h"
#include TB_WOLF_VERSION_WRAP
#undef TB_WRAP
