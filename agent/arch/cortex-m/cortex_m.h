/* SPDX-License-Identifier: Apache-2.0 */
/* The Cortex-M arch's internals: the architecture's registers (the same on every Cortex-M3,
 * M4 and M7), and what the arch's files, a board's files (vector table, UART) and the
 * firmware's main() share. Not part of port.h: the core never sees any of it. */
#ifndef TB_CORTEX_M_H
#define TB_CORTEX_M_H
#include <stddef.h>
#include <stdint.h>

#define TB_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* System Control Space. */
#define TB_SYST_CSR TB_REG(0xE000E010u) /* bit 0 enable, bit 1 interrupt on wrap, bit 2 processor clock */
#define TB_SYST_RVR TB_REG(0xE000E014u)
#define TB_SYST_CVR TB_REG(0xE000E018u)
#define TB_SCB_ICSR TB_REG(0xE000ED04u)
#define TB_SCB_ICSR_PENDSTSET (1u << 26)
#define TB_SCB_CPACR TB_REG(0xE000ED88u)
#define TB_SCB_CFSR TB_REG(0xE000ED28u)
#define TB_SCB_HFSR TB_REG(0xE000ED2Cu)
#define TB_SCB_BFAR TB_REG(0xE000ED38u)

/* How the firmware ends (QEMU's exit status through semihosting): tb_serve's codes (0 QUIT,
 * 3 the stream broke), and 2 for a fault (a host agent never exits 2 from serve). */
enum { TB_CM_EXIT_FAULT = 2 };

/* The linker script's symbols (boards/<board>/<board>.ld). */
extern uint8_t __flash_start[], __text_end[], __data_load[], __data_start[], __data_end[], __bss_start[],
    __bss_end[], __heap_start[], __heap_limit[], __stack_limit[], __stack_top[];

/* counter.c: SysTick started; held while the controller channel waits (uart_cmsdk.c). */
void tb_cm_counter_start(void);
void tb_cm_counter_hold(void);
void tb_cm_counter_resume(void);
void tb_cm_systick_handler(void);

/* uart_cmsdk.c: the controller channel's UART, enabled. */
void tb_cm_uart_start(void);

/* entropy_seeded.c: what tb_port_entropy() draws from, for HELLO. */
const char *tb_cm_entropy_source(void);

/* system.c: the reset handler and the fault handlers (the board's vector table names them). */
void tb_reset_handler(void);
void tb_cm_fault_handler(void);
void tb_cm_default_handler(void);

/* The board's: a fault's one-line text, and the end of the firmware with tb_serve's code.
 * semihosting.c under QEMU (stderr, exit status); a board without a debugger resets. */
void tb_cm_report(const char *text);
__attribute__((noreturn)) void tb_cm_exit(int code);

/* The firmware's entry point, called by the reset handler (agent/firmware/main.c). */
int tb_firmware_main(void);

#endif
