/* SPDX-License-Identifier: Apache-2.0 */
/* What mbed TLS needs from a device beyond the portable backend: its entropy source. A device
 * config sets MBEDTLS_NO_PLATFORM_ENTROPY and MBEDTLS_ENTROPY_HARDWARE_ALT (no /dev/urandom),
 * and the library then polls this function, which reads the port's source (port.h). Declared
 * here rather than taken from a header: mbed TLS 2.28 and 3.6 keep its prototype in
 * different (3.6: private) headers, and the firmware builds against either. */
#include <stddef.h>

#include "mbedtls/entropy.h"
#include "tlsbench/port.h"

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen) {
    (void)data;
    if (tb_port_entropy(output, len) != 0)
        return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
    *olen = len;
    return 0;
}
