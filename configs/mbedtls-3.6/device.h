/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS 3.6 for the bare-metal agent (agent/firmware; docs/porting.md): the library's own
 * default configuration (mbedtls/mbedtls_config.h of the Debian 13 source, what the host's
 * mbedtls@3.6 starts from), minus what a device has not: no file system (FS_IO, the PSA key
 * store on files), no sockets (NET_C), no clock (HAVE_TIME, TIMING_C: certificate validity
 * dates are not checked), no platform entropy (the port's tb_port_entropy() through
 * MBEDTLS_ENTROPY_HARDWARE_ALT, agent/src/backends/mbedtls_device.c), no x86 or AArch64
 * code; minus what no TLS handshake calls (self tests, debug, certificate and key writing).
 * TLS 1.2 and TLS 1.3 (all three key exchange modes), DTLS 1.2, tickets; every curve and
 * suite of the default. Sizes are the defaults (16 KiB records, ECP window 6, fixed-point
 * comb), so device and host run the same algorithms.
 *
 * MBEDTLS_USE_PSA_CRYPTO is on (Debian leaves it off): TLS 1.2, X.509 and PK then go through
 * PSA as TLS 1.3 does, so a PSA driver (p256-m: device-p256m.h) serves every P-256 operation
 * of a handshake, and the two device builds differ by the driver alone.
 *   spec/libraries.toml [device."mbedtls@3.6"] (make firmware, tlsbench run) */
#ifndef TLSBENCH_MBEDTLS36_DEVICE_H
#define TLSBENCH_MBEDTLS36_DEVICE_H

#include "mbedtls/mbedtls_config.h"

/* What a bare-metal device has not */
#undef MBEDTLS_HAVE_TIME
#undef MBEDTLS_HAVE_TIME_DATE
#undef MBEDTLS_FS_IO
#undef MBEDTLS_NET_C
#undef MBEDTLS_TIMING_C
#undef MBEDTLS_PSA_CRYPTO_STORAGE_C
#undef MBEDTLS_PSA_ITS_FILE_C
#undef MBEDTLS_AESNI_C
#undef MBEDTLS_AESCE_C
#undef MBEDTLS_PADLOCK_C
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_ENTROPY_HARDWARE_ALT

/* What no handshake calls */
#undef MBEDTLS_SELF_TEST
#undef MBEDTLS_DEBUG_C
#undef MBEDTLS_PEM_WRITE_C
#undef MBEDTLS_X509_CREATE_C
#undef MBEDTLS_X509_CRT_WRITE_C
#undef MBEDTLS_X509_CSR_WRITE_C
#undef MBEDTLS_X509_CSR_PARSE_C
#undef MBEDTLS_PKCS7_C
#undef MBEDTLS_LMS_C

/* TLS through PSA (see above) */
#define MBEDTLS_USE_PSA_CRYPTO

#endif /* TLSBENCH_MBEDTLS36_DEVICE_H */
