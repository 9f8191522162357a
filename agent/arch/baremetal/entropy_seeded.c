/* SPDX-License-Identifier: Apache-2.0 */
/* Entropy for a board without a random number generator (QEMU's MPS2 and RISC-V virt have none): splitmix64
 * from a fixed seed. NOT SECURE: every boot draws the same bytes, which keeps a test
 * device's counts reproducible and makes its keys predictable. HELLO says so. A board with
 * a TRNG (nRF52840 RNG, STM32 RNG) reads it in tb_port_entropy() instead (docs/porting.md). */
#include <string.h>

#include "baremetal.h"
#include "tlsbench/port.h"

#define TB_ENTROPY_SEED 0x7462656e63680001ull /* "tbench" + 1 */
static uint64_t tb_entropy_state = TB_ENTROPY_SEED;

static uint64_t tb_splitmix64(void) {
    uint64_t z = (tb_entropy_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int tb_port_entropy(uint8_t *buf, size_t len) {
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = tb_splitmix64();
        memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
    }
    return 0;
}

const char *tb_bm_entropy_source(void) {
    return "NOT SECURE: splitmix64 from a fixed seed (no TRNG): deterministic, test use only";
}
