/* SPDX-License-Identifier: Apache-2.0 */
/* What a validation program's main uses (startup.c): docs/cycles.md "Validation". */
#ifndef TB_VALIDATE_H
#define TB_VALIDATE_H
#include <stdint.h>

int tb_semihost(int op, const void *arg); /* the architecture's (arm.c, riscv.c) */
void tb_reset(void);                      /* .bss cleared, main, exit */
void tb_print(const char *text);
void tb_exit(int code);
void tb_mark(void); /* the plugin snapshots here: before and after every measured call */
void tb_fill(uint8_t *out, unsigned len); /* a fixed stream of bytes */

/* One measured operation: printed as "op NAME", then marked before and after. */
#define TB_MEASURE(name, call)   \
    do {                         \
        tb_print("op " name "\n"); \
        tb_mark();               \
        int tb_rc_ = (call);     \
        tb_mark();               \
        if (tb_rc_ != 0) {       \
            tb_print("failed: " name "\n"); \
            return 1;            \
        }                        \
    } while (0)
#endif
