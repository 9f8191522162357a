/* SPDX-License-Identifier: Apache-2.0 */
/* The smallest bare-metal start for a validation program under QEMU (any Cortex-M machine whose
 * code is at the linker script's flash): a vector table, .bss cleared, main, exit through
 * semihosting (QEMU runs with -semihosting). QEMU loads .data in place, so nothing is copied. */
#include <stdint.h>
#include <string.h>

#include "validate.h"

extern uint32_t __stack_top, __bss_start, __bss_end;
int main(void);

static int tb_semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void tb_print(const char *text) { tb_semihost(0x04, text); } /* SYS_WRITE0: QEMU's stderr */

/* SYS_EXIT_EXTENDED: QEMU exits with the code. */
void tb_exit(int code) {
    const uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)code};
    for (;;)
        tb_semihost(0x20, block);
}

static void tb_fault(void) {
    tb_print("validation program: fault\n");
    tb_exit(2);
}

void tb_reset(void) {
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
    tb_exit(main());
}

__attribute__((section(".vectors"), used)) static void (*const tb_vectors[16])(void) = {
    (void (*)(void))&__stack_top, tb_reset, tb_fault, tb_fault, tb_fault, tb_fault, tb_fault,
};

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
