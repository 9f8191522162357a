/* SPDX-License-Identifier: Apache-2.0 */
/* mbed TLS's allocations for a memory-collecting agent (docs/metrics.md). Debian's builds
 * leave MBEDTLS_PLATFORM_MEMORY off, so mbedtls_calloc is calloc: the agent links with
 * --wrap=calloc,free and every calloc/free of the program comes here. Otherwise they pass
 * straight through (a test and a call: +1-2% instructions in an ECDSA handshake, which makes
 * 36 000 allocations). */
#include <stddef.h>

#include "tlsbench/heap_hooks.h"

void *__real_calloc(size_t n, size_t size);
void __real_free(void *p);
void *__wrap_calloc(size_t n, size_t size);
void __wrap_free(void *p);

void *__wrap_calloc(size_t n, size_t size) {
    void *p = __real_calloc(n, size);
    if (tb_heap_hooks_on())
        tb_heap_hooks_alloc(p, n * size);
    return p;
}

void __wrap_free(void *p) {
    if (p && tb_heap_hooks_on())
        tb_heap_hooks_free(p);
    __real_free(p);
}
