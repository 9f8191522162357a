/* SPDX-License-Identifier: Apache-2.0 */
/* device-mps2.h with small-device sizes, for parts with little RAM (docs/porting.md "Does it
 * fit"): 4 KiB records, ECP window 2, no fixed-point comb table, AES tables in flash;
 * algorithms and suites as device-mps2.h. Costs instructions where elliptic curves dominate.
 * The firmware builder expands the include: the whole configuration is what is built, keyed
 * in the library cache and recorded with every result.
 *   python -m tlsbench.builder.firmware --config configs/mbedtls/device-mps2-small.h */
#define MBEDTLS_SSL_MAX_CONTENT_LEN 4096
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0
#define MBEDTLS_AES_ROM_TABLES

#include "device-mps2.h"
