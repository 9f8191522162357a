/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware: the agent's serve loop on the board's UART (docs/agent.md "The device room"),
 * called by the arch's reset code (arch/<arch>/system.c). Its HELLO adds a "device" object: the target,
 * the counter, the image and the options it was built with (docs/protocol.md). */
#include "board.h"
#include "baremetal.h"
#include "tlsbench/serve.h"
#include "tlsbench/trace.h"

/* Set by agent/firmware/CMakeLists.txt for each image. */
#ifndef TB_AGENT_NAME
#error "TB_AGENT_NAME (the image's name) is set by the firmware build"
#endif

static void tb_fw_counter(tb_json *j) {
    tb_json_key(j, "counter");
    tb_json_begin_object(j);
    tb_json_kv_string(j, "unit", tb_port_clock_unit());
    tb_json_kv_string(j, "source", tb_port_clock_name());
    tb_json_kv_uint(j, "board_clock_hz", TB_BOARD_CPU_HZ);
    tb_json_kv_double(j, "units_per_tick", (double)TB_BOARD_UNITS_PER_TICK_NUM / TB_BOARD_UNITS_PER_TICK_DEN);
    tb_json_kv_string(j, "held_during", "controller channel I/O");
    tb_json_end_object(j);
}

/* Sizes as the linker laid them out (text = code and constants in flash). */
static void tb_fw_image(tb_json *j) {
    tb_json_key(j, "image");
    tb_json_begin_object(j);
    tb_json_kv_string(j, "variant", TB_FW_VARIANT);
    tb_json_kv_uint(j, "text", (uint64_t)(__text_end - __flash_start));
    tb_json_kv_uint(j, "data", (uint64_t)(__data_end - __data_start));
    tb_json_kv_uint(j, "bss", (uint64_t)(__bss_end - __bss_start));
    tb_json_kv_uint(j, "heap_region", (uint64_t)(__heap_limit - __heap_start));
    tb_json_kv_uint(j, "stack_region", (uint64_t)(__stack_top - __stack_limit));
    tb_json_end_object(j);
}

static void tb_fw_options(tb_json *j) {
    tb_json_key(j, "options");
    tb_json_begin_object(j);
    tb_json_kv_uint(j, "trace_capacity", TB_TRACE_CAPACITY);
    tb_json_kv_uint(j, "memory_queue_bytes", TB_MEMQ_SIZE);
    tb_json_kv_uint(j, "json_buffer_bytes", TB_JSON_BUFFER_SIZE);
    tb_json_kv_uint(j, "frame_max_bytes", TB_SERVE_FRAME_MAX);
    tb_json_kv_bool(j, "memory_probes", tb_port_memory_probes() != NULL);
    tb_json_end_object(j);
}

static void tb_fw_describe(tb_json *j) {
    tb_json_kv_string(j, "target", TB_BOARD_NAME);
    tb_json_kv_string(j, "cpu", TB_BOARD_CPU);
    tb_json_kv_string(j, "board", TB_FW_BOARD);
    tb_fw_counter(j);
    tb_fw_image(j);
    tb_fw_options(j);
    tb_json_kv_string(j, "entropy", tb_bm_entropy_source());
}

int tb_firmware_main(void) {
    static tb_agent agent = {.name = TB_AGENT_NAME, .backend = &tb_linked_backend, .describe_device = tb_fw_describe};
    tb_bm_counter_start();
    tb_bm_uart_start();
    tb_port_marker(0); /* QEMU starts the LEDs lit */
    tb_channel uart = tb_port_controller_channel();
    return tb_serve(&agent, &uart);
}
