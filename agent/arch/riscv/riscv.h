/* SPDX-License-Identifier: Apache-2.0 */
/* The RISC-V arch's internals (RV32, machine mode, bare metal), shared by its files and a RISC-V
 * board's. What every bare-metal arch gives the firmware is baremetal.h's. */
#ifndef TB_RISCV_H
#define TB_RISCV_H
#include "baremetal.h"

/* A CSR read: the Zicsr instructions named in the assembly itself, so the compiler's -march
 * stays the core's (rv32imac: the multilib of the C library) with GCC 12's ISA spec, which
 * counts Zicsr apart. */
#define TB_CSR_READ(csr)                                                                                    \
    ({                                                                                                      \
        uint32_t tb_csr_value;                                                                              \
        __asm volatile(".option push\n .option arch, +zicsr\n csrr %0, " #csr "\n .option pop"              \
                       : "=r"(tb_csr_value));                                                               \
        tb_csr_value;                                                                                       \
    })
#define TB_CSR_WRITE(csr, value)                                                                            \
    __asm volatile(".option push\n .option arch, +zicsr\n csrw " #csr ", %0\n .option pop" ::"r"(value))

/* system.c: the reset entry (the linker script places it first, where QEMU's virt jumps). */
void tb_riscv_reset(void);

#endif
