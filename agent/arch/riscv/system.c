/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up and traps for an RV32 hart in machine mode, with the linker symbols of baremetal.h.
 * The C library's own start-up (picolibc's crt0) is not used (-nostartfiles). A trap (an
 * illegal instruction, a misaligned or faulting access: the agent enables no interrupt) is
 * reported and ends the firmware through the board's tb_bm_report/tb_bm_exit (semihosting.c
 * under QEMU: a message on QEMU's stderr and its exit status). */
#include "board.h"
#include "riscv.h"

extern void (*__init_array_start[])(void), (*__init_array_end[])(void);
/* picolibc keeps errno in thread-local storage: its block (.tdata, .tbss) is set up and `tp`
 * pointed at it, as picolibc's crt0 would (the linker script lays the block out). */
extern uint8_t __tls_base[];
void _init_tls(void *tls);
void _set_tls(void *tls);

/* ---------------------------------------------------------------- traps */
/* mepc: the instruction that trapped; mcause: why (2 illegal instruction, 4/6 misaligned load/
 * store, 5/7 access fault); mtval: the address or instruction. A trap while reporting one (no
 * semihosting behind the ebreak) stops here: the host calls the silent target hung. */
__attribute__((aligned(4), noreturn)) static void tb_riscv_trap(void) {
    static volatile int reporting;
    if (reporting)
        for (;;)
            ;
    reporting = 1;
    const tb_bm_field fields[] = {
        {"pc=", TB_CSR_READ(mepc)}, {"mcause=", TB_CSR_READ(mcause)}, {"mtval=", TB_CSR_READ(mtval)}};
    tb_bm_fault(fields, sizeof fields / sizeof fields[0]);
}

/* ---------------------------------------------------------------- reset */
/* .data from its load address, .bss zeroed, the TLS block, traps to tb_riscv_trap (direct
 * mode), the C library's constructors, then the firmware. */
__attribute__((noreturn, used)) static void tb_riscv_start(void) {
    for (uint8_t *src = __data_load, *dst = __data_start; dst < __data_end;)
        *dst++ = *src++;
    for (uint8_t *dst = __bss_start; dst < __bss_end;)
        *dst++ = 0;
    _init_tls(__tls_base);
    _set_tls(__tls_base);
    TB_CSR_WRITE(mtvec, (uintptr_t)tb_riscv_trap);
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
        (*f)();
    tb_bm_exit(tb_firmware_main());
}

/* Where QEMU's virt jumps after its reset code (the start of RAM, the linker script's first
 * bytes): the stack, then C. No global pointer: the linker script defines no
 * __global_pointer$, so nothing is addressed relative to gp. */
__attribute__((naked, section(".text.reset"))) void tb_riscv_reset(void) {
    __asm volatile("la sp, __stack_top\n"
                   "tail tb_riscv_start\n");
}

/* ---------------------------------------------------------------- the arch's calls */
/* The RISC-V semihosting trap: an ebreak between two marker instructions, uncompressed and in
 * one page (the debugger, or QEMU, reads the words around it). */
uintptr_t tb_arch_semihost(uintptr_t op, const void *arg) {
    register uintptr_t a0 __asm("a0") = op;
    register const void *a1 __asm("a1") = arg;
    __asm volatile(".option push\n"
                   ".option norvc\n"
                   ".balign 16\n"
                   "slli x0, x0, 0x1f\n"
                   "ebreak\n"
                   "srai x0, x0, 7\n"
                   ".option pop\n"
                   : "+r"(a0)
                   : "r"(a1)
                   : "memory");
    return a0;
}

uint8_t *tb_arch_stack_pointer(void) {
    uint8_t *sp;
    __asm volatile("mv %0, sp" : "=r"(sp));
    return sp;
}
