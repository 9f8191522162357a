/* SPDX-License-Identifier: Apache-2.0 */
/* The transports this agent has, by spec [transport] value. Add a row per new transport. */
#include "tlsbench/spec_gen.h"
#include "tlsbench/transport.h"

static const struct {
    uint8_t id;
    const tb_transport_ops *ops;
} tb_transports[] = {
    {TB_TRANSPORT_MEMORY, &tb_memory_transport},
    {TB_TRANSPORT_TCP, &tb_tcp_transport},
    {TB_TRANSPORT_UDP, &tb_udp_transport},
};

const tb_transport_ops *tb_transport_find(uint8_t transport) {
    for (size_t i = 0; i < sizeof tb_transports / sizeof tb_transports[0]; i++)
        if (tb_transports[i].id == transport)
            return tb_transports[i].ops;
    return NULL;
}
