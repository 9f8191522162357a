/* SPDX-License-Identifier: Apache-2.0 */
/* A validation program on a Cortex-M machine: the vector table (the reset handler is
 * startup.c's tb_reset) and Arm semihosting (BKPT 0xAB). */
#include <stdint.h>

#include "validate.h"

extern uint32_t __stack_top;

int tb_semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void tb_fault(void) {
    tb_print("validation program: fault\n");
    tb_exit(2);
}

__attribute__((section(".vectors"), used)) static void (*const tb_vectors[16])(void) = {
    (void (*)(void))&__stack_top, tb_reset, tb_fault, tb_fault, tb_fault, tb_fault, tb_fault,
};
