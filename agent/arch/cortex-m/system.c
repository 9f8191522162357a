/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up and faults, for any Cortex-M with the linker symbols of cortex_m.h. The C library's
 * own start-up (crt0) is not used (-nostartfiles). A fault is reported and ends the firmware
 * through the board's tb_cm_report/tb_cm_exit (semihosting.c under QEMU: a message on QEMU's
 * stderr and its exit status, so the host sees a crash with a reason instead of a silent hang). */
#include "board.h"
#include "cortex_m.h"

/* ---------------------------------------------------------------- reset */
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);

/* .data from its load address (a board's flash), .bss zeroed, the FPU on where the target has
 * one (spec/targets.toml fpu: its image is built for it; a core without one has no CPACR bits
 * to set), the C library's constructors, then the firmware. */
void tb_reset_handler(void) {
    for (uint8_t *src = __data_load, *dst = __data_start; dst < __data_end;)
        *dst++ = *src++;
    for (uint8_t *dst = __bss_start; dst < __bss_end;)
        *dst++ = 0;
    if (TB_BOARD_FPU) {
        TB_SCB_CPACR |= 0xFu << 20; /* CP10 and CP11: full access */
        __asm volatile("dsb\n isb");
    }
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
        (*f)();
    tb_cm_exit(tb_firmware_main());
}

/* ---------------------------------------------------------------- faults */
static char *tb_put_text(char *p, char *end, const char *s) {
    while (*s && p < end)
        *p++ = *s++;
    return p;
}

static char *tb_put_hex(char *p, char *end, uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    p = tb_put_text(p, end, "0x");
    for (int shift = 28; shift >= 0 && p < end; shift -= 4)
        *p++ = digits[(v >> shift) & 0xFu];
    return p;
}

/* "firmware fault: pc=0x... cfsr=0x... hfsr=0x... bfar=0x..." without printf: the fault may
 * be a stack overflow, so nothing deep. `frame` is the stacked exception frame (pc at 6). */
static void tb_fault_report(const uint32_t *frame) {
    const struct {
        const char *name;
        uint32_t value;
    } fields[] = {{"firmware fault: pc=", frame[6]},
                  {" cfsr=", TB_SCB_CFSR},
                  {" hfsr=", TB_SCB_HFSR},
                  {" bfar=", TB_SCB_BFAR}};
    char msg[128], *p = msg, *end = msg + sizeof msg - 2;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        p = tb_put_hex(tb_put_text(p, end, fields[i].name), end, fields[i].value);
    *p++ = '\n';
    *p = '\0';
    tb_cm_report(msg);
    tb_cm_exit(TB_CM_EXIT_FAULT);
}

/* Which stack the exception frame is on: bit 2 of the exception return value. */
__attribute__((naked)) void tb_cm_fault_handler(void) {
    __asm volatile("tst lr, #4\n"
                   "ite eq\n"
                   "mrseq r0, msp\n"
                   "mrsne r0, psp\n"
                   "b %0\n" ::"i"(tb_fault_report));
}

void tb_cm_default_handler(void) {
    tb_cm_report("firmware fault: unexpected interrupt\n");
    tb_cm_exit(TB_CM_EXIT_FAULT);
}
