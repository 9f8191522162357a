/* SPDX-License-Identifier: Apache-2.0 */
/* The controller channel on an Arm CMSDK APB UART (MPS2 and MPS3 boards; QEMU's -serial), polled
 * one byte at a time (it has no FIFO), and the marker on the FPGA IO block's LED register. The
 * counter is held for the whole of every channel call (arch/cortex-m/counter.c says why). */
#include "board.h"
#include "cortex_m.h"
#include "tlsbench/port.h"

#define TB_UART_DATA TB_REG(TB_BOARD_UART_BASE + 0x00u)
#define TB_UART_STATE TB_REG(TB_BOARD_UART_BASE + 0x04u)
#define TB_UART_CTRL TB_REG(TB_BOARD_UART_BASE + 0x08u)
#define TB_UART_BAUDDIV TB_REG(TB_BOARD_UART_BASE + 0x10u)
#define TB_UART_TX_FULL 0x1u /* STATE */
#define TB_UART_RX_FULL 0x2u
#define TB_UART_TX_RX_ON 0x3u /* CTRL: transmit and receive enabled */

void tb_bm_uart_start(void) {
    TB_UART_BAUDDIV = TB_BOARD_UART_CLOCK_HZ / TB_BOARD_BAUD;
    TB_UART_CTRL = TB_UART_TX_RX_ON;
}

/* One byte per call: the frame reader asks for what it needs and calls again. A UART has
 * no end of stream: the host ends a session with QUIT. */
static long tb_uart_read(void *ctx, void *buf, size_t len) {
    (void)ctx;
    if (len == 0)
        return 0;
    tb_bm_counter_hold();
    while (!(TB_UART_STATE & TB_UART_RX_FULL))
        ;
    *(uint8_t *)buf = (uint8_t)TB_UART_DATA;
    tb_bm_counter_resume();
    return 1;
}

static int tb_uart_write(void *ctx, const void *buf, size_t len) {
    (void)ctx;
    const uint8_t *p = buf;
    tb_bm_counter_hold();
    for (size_t i = 0; i < len; i++) {
        while (TB_UART_STATE & TB_UART_TX_FULL)
            ;
        TB_UART_DATA = p[i];
    }
    tb_bm_counter_resume();
    return 0;
}

tb_channel tb_port_controller_channel(void) { return (tb_channel){tb_uart_read, tb_uart_write, NULL}; }

void tb_port_marker(int level) { TB_REG(TB_BOARD_MARKER_REG) = level ? 1u : 0u; }
int tb_port_marker_enabled(void) { return 1; }
