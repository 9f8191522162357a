/* SPDX-License-Identifier: Apache-2.0 */
/* Crypto operations of OpenSSL traced by link-time wrapping (ld --wrap=X): libssl's calls to
 * X reach __wrap_X, which times __real_X as one crypto span whose STOP value is the return
 * code. The list of functions is openssl_wrap.h (also read by openssl.cmake). */
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/x509.h>

#include "tlsbench/trace.h"

/* The static assertion catches a parameter list that drifted from the library's prototype
 * (the wrapper would silently pass garbage otherwise). Size queries (traced-when false) go
 * straight through: they compute nothing. */
#define TB_WRAP(sym, label, params, args, traced)                                           \
    int __real_##sym params;                                                                \
    int __wrap_##sym params;                                                                \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sym), __typeof__(__real_##sym)), \
                   #sym ": the wrapper's parameters differ from the library's");           \
    int __wrap_##sym params {                                                               \
        if (!(traced))                                                                      \
            return __real_##sym args;                                                       \
        tb_begin(TB_L_##label);                                                             \
        int ret = __real_##sym args;                                                        \
        tb_end(TB_L_##label, (uint64_t)(int64_t)ret);                                       \
        return ret;                                                                         \
    }
#include "openssl_wrap.h"
#undef TB_WRAP
