/* SPDX-License-Identifier: Apache-2.0 */
/* A backend without src/primitives/<library>.c lists no primitives. Alone in its object for
 * the same reason as none.c: a backend's own table wins, this one fills the gap. */
#include "tlsbench/experiment.h"

const tb_experiment *const tb_library_primitives[] = {NULL};
