/* SPDX-License-Identifier: Apache-2.0 */
/* A repetition's memory footprint per peer, from the port's memory probes (port.h), shipped
 * as INSTANT records of category "memory" (spec/labels.toml). The runner calls these at its
 * phase boundaries and whenever it hands control to a peer; without probes (posix, a
 * device's counting image) every call returns at once and nothing is recorded. */
#ifndef TLSBENCH_FOOTPRINT_H
#define TLSBENCH_FOOTPRINT_H
#include <stdint.h>

/* A repetition starts: HEAP_SHARED (peer none), peaks restart, no peer owns anything yet. */
void tb_footprint_begin(void);
/* The runner is about to call into `peer`: its allocations and stack depth are charged to it. */
void tb_footprint_enter(uint8_t peer);
/* HANDSHAKE ended (either way): HEAP_ALLOCATED_HANDSHAKE (where the port counts bytes
 * allocated), HEAP_PEAK_HANDSHAKE and HEAP_KEPT per peer that ran. */
void tb_footprint_handshake_end(void);
/* Around one step call of the peer whose turn it is: HEAP_STEP_PEAK, HEAP_STEP_ALLOCATED and
 * STACK_STEP after it, where the port's probes measure steps (posix; not the Cortex-M image). */
void tb_footprint_step_begin(void);
void tb_footprint_step_end(void);
/* CLOSE ended: HEAP_PEAK_CONNECTED per peer that ran. */
void tb_footprint_connected_end(void);
/* The repetition ends: STACK_HIGH_WATER per peer that ran; allocations belong to no peer. */
void tb_footprint_end(void);

#endif
