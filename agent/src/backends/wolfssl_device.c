/* SPDX-License-Identifier: Apache-2.0 */
/* What wolfSSL needs from a device beyond the portable backend (a firmware build's settings:
 * configs/wolfssl-5.7/device.h): the Hash DRBG's seed (CUSTOM_RAND_GENERATE_SEED), from the
 * port's entropy source (port.h), and the clock its session code asks for (USER_TICKS with
 * NO_ASN_TIME: a device without a calendar). The clock is the port's counter, which under
 * QEMU counts instructions: a ticket's age is then in that unit's thousands and millions,
 * monotonic and the same run after run, which is all a lifetime check between two peers of
 * one device needs. Declared here rather than taken from wolfSSL's internal.h. */
#include <stdint.h>
#include <wolfssl/options.h> /* the build's settings: WOLFSSL_32BIT_MILLI_TIME */
#include <wolfssl/wolfcrypt/settings.h>

#include "tlsbench/port.h"

int tb_wolfssl_seed(unsigned char *output, unsigned int size);
uint32_t LowResTimer(void);
#ifdef WOLFSSL_32BIT_MILLI_TIME
uint32_t TimeNowInMilliseconds(void);
#else
int64_t TimeNowInMilliseconds(void);
#endif

int tb_wolfssl_seed(unsigned char *output, unsigned int size) { return tb_port_entropy(output, size) == 0 ? 0 : -1; }

/* Seconds and milliseconds of the port's counter (ns on a host, its unit on a device). */
uint32_t LowResTimer(void) { return (uint32_t)(tb_port_now_ns() / 1000000000u); }

#ifdef WOLFSSL_32BIT_MILLI_TIME
uint32_t TimeNowInMilliseconds(void) { return (uint32_t)(tb_port_now_ns() / 1000000u); }
#else
int64_t TimeNowInMilliseconds(void) { return (int64_t)(tb_port_now_ns() / 1000000u); }
#endif
