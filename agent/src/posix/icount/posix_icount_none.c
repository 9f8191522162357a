/* SPDX-License-Identifier: Apache-2.0 */
/* A build without valgrind's client-request header (or not on x86-64): the agent cannot count
 * instructions and says so when asked (posix_icount.h). */
#include "../posix_icount.h"

uint64_t tb_posix_icount(void) { return 0; }
int tb_posix_icount_start(void) { return -1; }
const char *tb_posix_icount_unit(void) { return ""; }
