/* SPDX-License-Identifier: Apache-2.0 */
/* device.h with mbed TLS's p256-m PSA driver (3rdparty/p256-m of the Debian 13 source): PSA
 * hands every P-256 key generation, ECDH and ECDSA sign and verify to p256-m, a small
 * constant-time P-256 for 32-bit cores, instead of the library's own ECP module. Everything
 * else as device.h (the built-in ECP stays for the other curves and for what p256-m lacks).
 * Deterministic ECDSA (RFC 6979) is off: p256-m signs with random nonces only, and PSA would
 * hand a deterministic signature to the built-in code (mbedtls_config.h's note on the driver).
 *   spec/libraries.toml [device."mbedtls@3.6+p256m"] */
#include "device.h"

#define MBEDTLS_PSA_P256M_DRIVER_ENABLED
#undef MBEDTLS_ECDSA_DETERMINISTIC
