/* SPDX-License-Identifier: Apache-2.0 */
/* The counting image: no memory probes. Counting allocations costs instructions inside the
 * measured spans, so the image whose counts are stored does not (memory_probes.c does, in
 * the separate memory image). */
#include <stddef.h>

#include "tlsbench/port.h"

const tb_memory_probes *tb_port_memory_probes(void) { return NULL; }
