/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port's instruction counter (posix_icount.c under valgrind's tbcount tool;
 * posix_icount_none.c where the agent was built without it). */
#ifndef TLSBENCH_POSIX_ICOUNT_H
#define TLSBENCH_POSIX_ICOUNT_H
#include <stdint.h>

/* 0 when instructions can be counted from now on (running under tbcount), else -1. */
int tb_posix_icount_start(void);
/* Guest instructions executed so far. */
uint64_t tb_posix_icount(void);
/* HELLO clock.unit while counting: "instructions (<ISA>, valgrind tbcount, <CPU model>)". */
const char *tb_posix_icount_unit(void);
#endif
