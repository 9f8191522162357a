/* SPDX-License-Identifier: Apache-2.0 */
/* A fault's one line, the same on every arch: "firmware fault: pc=0x... <arch registers>",
 * reported through the board's tb_bm_report (semihosting under QEMU: QEMU's stderr) before the
 * firmware ends with TB_BM_EXIT_FAULT, so the host sees a crash with a reason instead of a
 * silent hang. No printf: the fault may be a stack overflow, so nothing deep. */
#include "baremetal.h"

static char *tb_put_text(char *p, char *end, const char *s) {
    while (*s && p < end)
        *p++ = *s++;
    return p;
}

static char *tb_put_hex(char *p, char *end, uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    p = tb_put_text(p, end, "0x");
    for (int shift = 28; shift >= 0 && p < end; shift -= 4)
        *p++ = digits[(v >> shift) & 0xFu];
    return p;
}

void tb_bm_fault(const tb_bm_field *fields, size_t count) {
    char msg[160], *p = msg, *end = msg + sizeof msg - 2;
    p = tb_put_text(p, end, "firmware fault:");
    for (size_t i = 0; i < count; i++)
        p = tb_put_hex(tb_put_text(tb_put_text(p, end, " "), end, fields[i].name), end, fields[i].value);
    *p++ = '\n';
    *p = '\0';
    tb_bm_report(msg);
    tb_bm_exit(TB_BM_EXIT_FAULT);
}
