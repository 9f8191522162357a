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

#include "tlsbench/trace.h"

/* The static assertion catches a parameter list that drifted from the library's prototype
 * (the wrapper would silently pass garbage otherwise). */
#define TB_WRAP(sym, label, params, args)                                                   \
    int __real_##sym params;                                                                \
    int __wrap_##sym params;                                                                \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sym), __typeof__(__real_##sym)), \
                   #sym ": the wrapper's parameters differ from the library's");           \
    int __wrap_##sym params {                                                               \
        tb_begin(TB_L_##label);                                                             \
        int ret = __real_##sym args;                                                        \
        tb_end(TB_L_##label, (uint64_t)(int64_t)ret);                                       \
        return ret;                                                                         \
    }
#include "wolfssl_wrap.h"
#undef TB_WRAP
