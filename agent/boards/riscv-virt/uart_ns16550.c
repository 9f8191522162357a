/* SPDX-License-Identifier: Apache-2.0 */
/* The controller channel on an NS16550A UART (QEMU virt's, its first -serial; the UART of most
 * RISC-V boards and SoCs is of this family), polled one byte at a time. The counter is held for
 * the whole of every channel call (arch/riscv/counter.c says why). virt has no GPIO: no marker. */
#include "board.h"
#include "baremetal.h"
#include "tlsbench/port.h"

#define TB_UART_REG(offset) (*(volatile uint8_t *)(uintptr_t)(TB_BOARD_UART_BASE + (offset)))
#define TB_UART_DATA TB_UART_REG(0) /* RBR / THR; DLL while LCR.DLAB */
#define TB_UART_IER TB_UART_REG(1)  /* DLM while LCR.DLAB */
#define TB_UART_FCR TB_UART_REG(2)
#define TB_UART_LCR TB_UART_REG(3)
#define TB_UART_LSR TB_UART_REG(5)
#define TB_LCR_DLAB 0x80u
#define TB_LCR_8N1 0x03u
#define TB_FCR_FIFO_ON_CLEARED 0x07u /* enable, clear both FIFOs */
#define TB_LSR_DATA_READY 0x01u
#define TB_LSR_THR_EMPTY 0x20u

/* 8N1 at the target's baud rate (the divisor is the UART clock / 16 / baud; QEMU ignores it),
 * FIFOs on, no interrupts. */
void tb_bm_uart_start(void) {
    const uint32_t divisor = TB_BOARD_UART_CLOCK_HZ / (16u * TB_BOARD_BAUD);
    TB_UART_IER = 0;
    TB_UART_LCR = TB_LCR_DLAB;
    TB_UART_DATA = (uint8_t)divisor;
    TB_UART_IER = (uint8_t)(divisor >> 8);
    TB_UART_LCR = TB_LCR_8N1;
    TB_UART_FCR = TB_FCR_FIFO_ON_CLEARED;
}

/* One byte per call: the frame reader asks for what it needs and calls again. A UART has
 * no end of stream: the host ends a session with QUIT. */
static long tb_uart_read(void *ctx, void *buf, size_t len) {
    (void)ctx;
    if (len == 0)
        return 0;
    tb_bm_counter_hold();
    while (!(TB_UART_LSR & TB_LSR_DATA_READY))
        ;
    *(uint8_t *)buf = TB_UART_DATA;
    tb_bm_counter_resume();
    return 1;
}

static int tb_uart_write(void *ctx, const void *buf, size_t len) {
    (void)ctx;
    const uint8_t *p = buf;
    tb_bm_counter_hold();
    for (size_t i = 0; i < len; i++) {
        while (!(TB_UART_LSR & TB_LSR_THR_EMPTY))
            ;
        TB_UART_DATA = p[i];
    }
    tb_bm_counter_resume();
    return 0;
}

tb_channel tb_port_controller_channel(void) { return (tb_channel){tb_uart_read, tb_uart_write, NULL}; }

void tb_port_marker(int level) { (void)level; }
int tb_port_marker_enabled(void) { return 0; }
