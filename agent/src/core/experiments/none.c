/* SPDX-License-Identifier: Apache-2.0 */
/* The standard agents have no user experiments. It sits alone in its object so that a user
 * file defining tb_user_experiments replaces it: the linker takes this member of the core
 * archive only when nothing else defined the symbol. */
#include "tlsbench/experiment.h"

const tb_experiment *const tb_user_experiments[] = {NULL};
