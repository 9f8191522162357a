/* SPDX-License-Identifier: Apache-2.0 */
/* The transports of a device agent: memory only (both peers on the device). A later "one peer
 * on the device" mode adds its serial-tunnel transport here; the posix agent's table is
 * src/posix/transports/registry.c (memory, tcp, udp). */
#include "tlsbench/spec_gen.h"
#include "tlsbench/transport.h"

const tb_transport_ops *tb_transport_find(uint8_t transport) {
    return transport == TB_TRANSPORT_MEMORY ? &tb_memory_transport : NULL;
}
