/* SPDX-License-Identifier: Apache-2.0 */
/* The heap region the C library's malloc grows into: the linker script's __heap_start ..
 * __heap_limit. Past the limit malloc returns NULL (a TLS library then reports an allocation
 * failure) instead of growing into the stack. newlib's malloc (Arm) calls _sbrk, picolibc's
 * (RISC-V) sbrk: both are this one. */
#include <errno.h>

#include "baremetal.h"

static uint8_t *tb_brk = __heap_start;

void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr) {
    if (incr > __heap_limit - tb_brk || incr < __heap_start - tb_brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    uint8_t *old = tb_brk;
    tb_brk += incr;
    return old;
}

void *sbrk(ptrdiff_t incr);
void *sbrk(ptrdiff_t incr) { return _sbrk(incr); }
