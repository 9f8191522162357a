/* SPDX-License-Identifier: Apache-2.0 */
/* Arm MPS2 AN386 (Cortex-M4) as QEMU 7.2 models it (`qemu-system-arm -M mps2-an386`): what
 * the Cortex-M port needs to know of the board. A board is this header, a linker script and
 * a start-up file (docs/porting.md); the port's files read only the names below.
 * Memory map (QEMU `info mtree`): SSRAM1 4 MiB at 0 (the image: "flash"), SSRAM2/3 4 MiB at
 * 0x20000000 (data, bss, heap, stack), PSRAM 16 MiB at 0x21000000 (unused). */
#ifndef TB_BOARD_H
#define TB_BOARD_H

#define TB_BOARD_NAME "qemu-mps2-an386" /* HELLO device.target */
#define TB_BOARD_CPU "cortex-m4"

/* The processor clock SysTick counts. QEMU runs every timer of this machine at 25 MHz of
 * virtual time, and `-icount shift=0` advances virtual time 1 ns per instruction: one tick
 * is 40 instructions, so the count is instructions at a resolution of 40. On a board whose
 * SysTick counts the core clock, one tick is one cycle: TB_BOARD_UNITS_PER_TICK 1, unit
 * "cycles (SysTick)". */
#define TB_BOARD_CPU_HZ 25000000u
#define TB_BOARD_UNITS_PER_TICK 40u
#define TB_BOARD_COUNTER_UNIT "instructions (QEMU icount)"
#define TB_BOARD_COUNTER_NAME "SysTick x 40 under QEMU -icount shift=0"

/* CMSDK APB UART0: QEMU's first -serial chardev. No FIFO: one byte each way. QEMU ignores
 * the baud rate; a board's divider is TB_BOARD_CPU_HZ / TB_BOARD_BAUD. */
#define TB_BOARD_UART_BASE 0x40004000u
#define TB_BOARD_BAUD 115200u

/* The marker: the FPGA IO block's LED0 register, bit 0 = user LED 0. QEMU logs each write
 * with `-trace mps2_fpgaio_write`; a board would drive a GPIO pin here. */
#define TB_BOARD_MARKER_REG 0x40028000u

#endif
