/* SPDX-License-Identifier: Apache-2.0 */
/* A validation program on QEMU's riscv32 `virt` machine (-bios none: the image's entry runs
 * first): the stack set, then startup.c's tb_reset; RISC-V semihosting (EBREAK between the two
 * marker instructions, uncompressed). */
#include "validate.h"

__attribute__((naked, section(".vectors"))) void _start(void) {
    __asm__ volatile("la sp, __stack_top\n j tb_reset\n");
}

int tb_semihost(int op, const void *arg) {
    register int a0 __asm__("a0") = op;
    register const void *a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n.option norvc\nslli zero, zero, 0x1f\nebreak\nsrai zero, zero, 0x7\n.option pop\n"
                     : "+r"(a0) : "r"(a1) : "memory");
    return a0;
}
