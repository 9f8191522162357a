/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up and faults, for any Cortex-M with the linker symbols of baremetal.h. The C library's
 * own start-up (crt0) is not used (-nostartfiles). A fault is reported and ends the firmware
 * through the board's tb_bm_report/tb_bm_exit (semihosting.c under QEMU: a message on QEMU's
 * stderr and its exit status, so the host sees a crash with a reason instead of a silent hang). */
#include "board.h"
#include "cortex_m.h"

/* ---------------------------------------------------------------- reset */
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);

/* .data from its load address (a board's flash), .bss zeroed, the FPU on where the target has
 * one (spec/targets.toml fpu: its image is built for it; a core without one has no CPACR bits
 * to set), an M0's alignment rule on the core that runs it, the C library's constructors, then
 * the firmware. */
void tb_reset_handler(void) {
    for (uint8_t *src = __data_load, *dst = __data_start; dst < __data_end;)
        *dst++ = *src++;
    for (uint8_t *dst = __bss_start; dst < __bss_end;)
        *dst++ = 0;
    if (TB_BOARD_FPU) {
        TB_SCB_CPACR |= 0xFu << 20; /* CP10 and CP11: full access (the FPU; MVE on a Cortex-M55) */
        __asm volatile("dsb\n isb");
    }
    if (TB_CM_V6M) /* read-as-one on a real M0: the write changes nothing there */
        TB_SCB_CCR |= TB_SCB_CCR_UNALIGN_TRP;
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
        (*f)();
    tb_bm_exit(tb_firmware_main());
}

/* ---------------------------------------------------------------- the arch's calls */
uintptr_t tb_arch_semihost(uintptr_t op, const void *arg) {
    register uintptr_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

uint8_t *tb_arch_stack_pointer(void) {
    uint8_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* ---------------------------------------------------------------- faults */
/* `frame` is the stacked exception frame (pc at 6); ARMv6-M has no fault status registers. */
static void tb_fault_report(const uint32_t *frame) {
    const tb_bm_field fields[] = {
        {"pc=", frame[6]}, {"cfsr=", TB_CM_V6M ? 0 : TB_SCB_CFSR},
        {"hfsr=", TB_CM_V6M ? 0 : TB_SCB_HFSR}, {"bfar=", TB_CM_V6M ? 0 : TB_SCB_BFAR}};
    tb_bm_fault(fields, TB_CM_V6M ? 1 : sizeof fields / sizeof fields[0]);
}

/* Which stack the exception frame is on: bit 2 of the exception return value. Thumb-1 only
 * (no IT block, a jump of any length), so an ARMv6-M core runs it too. */
__attribute__((naked)) void tb_cm_fault_handler(void) {
    __asm volatile(".syntax unified\n"
                   "movs r0, #4\n"
                   "mov r1, lr\n"
                   "tst r0, r1\n"
                   "mrs r0, msp\n"
                   "beq 1f\n"
                   "mrs r0, psp\n"
                   "1: ldr r1, =%c0\n"
                   "bx r1\n" ::"i"(tb_fault_report));
}

void tb_cm_default_handler(void) {
    tb_bm_report("firmware fault: unexpected interrupt\n");
    tb_bm_exit(TB_BM_EXIT_FAULT);
}
