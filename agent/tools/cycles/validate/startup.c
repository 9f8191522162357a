/* SPDX-License-Identifier: Apache-2.0 */
/* The smallest bare-metal start for a validation program under QEMU: .bss cleared, main, exit
 * through semihosting (QEMU runs with -semihosting); the entry and the semihosting call are
 * the architecture's (arm.c, riscv.c). QEMU loads .data in place, so nothing is copied. */
#include <stdint.h>
#include <string.h>

#include "validate.h"

extern uint32_t __bss_start, __bss_end;
int main(void);

void tb_print(const char *text) { tb_semihost(0x04, text); } /* SYS_WRITE0: QEMU's stderr */

/* SYS_EXIT_EXTENDED: QEMU exits with the code. */
void tb_exit(int code) {
    const uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)code};
    for (;;)
        tb_semihost(0x20, block);
}

void tb_reset(void) {
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
    tb_exit(main());
}

/* Where the plugin takes its snapshots: a call the compiler keeps. */
__attribute__((noinline)) void tb_mark(void) { __asm__ volatile("" ::: "memory"); }

/* A fixed stream (xorshift64*): the same keys and nonces in every run. NOT random. */
static uint64_t tb_state = 0x9E3779B97F4A7C15ull;
void tb_fill(uint8_t *out, unsigned len) {
    for (unsigned i = 0; i < len; i++) {
        tb_state ^= tb_state >> 12, tb_state ^= tb_state << 25, tb_state ^= tb_state >> 27;
        out[i] = (uint8_t)((tb_state * 0x2545F4914F6CDD1Dull) >> 56);
    }
}
