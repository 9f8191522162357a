/* SPDX-License-Identifier: Apache-2.0 */
/* What every bare-metal arch (arch/cortex-m/, arch/riscv/) gives the firmware's main(), its
 * boards and the files of this folder, which every arch shares (heap, memory probes, seeded
 * entropy, semihosting). Not part of port.h: the core never sees any of it. */
#ifndef TB_BAREMETAL_H
#define TB_BAREMETAL_H
#include <stddef.h>
#include <stdint.h>

#define TB_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* How the firmware ends (QEMU's exit status through semihosting): tb_serve's codes (0 QUIT,
 * 3 the stream broke), and 2 for a fault (a host agent never exits 2 from serve). */
enum { TB_BM_EXIT_FAULT = 2 };

/* The linker script's symbols (boards/<board>/<board>.ld). */
extern uint8_t __flash_start[], __text_end[], __data_load[], __data_start[], __data_end[], __bss_start[],
    __bss_end[], __heap_start[], __heap_limit[], __stack_limit[], __stack_top[];

/* The arch's counter (counter.c): started; held while the controller channel waits (the
 * board's UART driver holds it for the whole of every call). */
void tb_bm_counter_start(void);
void tb_bm_counter_hold(void);
void tb_bm_counter_resume(void);

/* The board's UART driver: the controller channel's UART, enabled. */
void tb_bm_uart_start(void);

/* entropy_seeded.c (or a board's TRNG driver): what tb_port_entropy() draws from, for HELLO. */
const char *tb_bm_entropy_source(void);

/* The board's: a fault's one-line text, and the end of the firmware with tb_serve's code.
 * semihosting.c under QEMU (stderr, exit status); a board without a debugger resets. */
void tb_bm_report(const char *text);
__attribute__((noreturn)) void tb_bm_exit(int code);
/* The memory image's per-peer heap cap in bytes the host asked for, 0: none (semihosting.c;
 * a board without semihosting keeps memory_probes.c's default, 0). */
uint32_t tb_bm_heap_cap(void);

/* The arch's: one semihosting call (the trap instruction differs per architecture), and the
 * stack pointer of the caller (the memory image paints the stack below it). */
uintptr_t tb_arch_semihost(uintptr_t op, const void *arg);
uint8_t *tb_arch_stack_pointer(void);

/* "firmware fault: <fields>" without printf (the fault may be a stack overflow, so nothing
 * deep): each name followed by its value in hex, reported, then the firmware ends (system.c
 * of each arch names its registers). */
typedef struct tb_bm_field {
    const char *name;
    uint32_t value;
} tb_bm_field;
__attribute__((noreturn)) void tb_bm_fault(const tb_bm_field *fields, size_t count);

/* The firmware's entry point, called by the arch's reset code (agent/firmware/main.c). */
int tb_firmware_main(void);

#endif
