/* SPDX-License-Identifier: Apache-2.0 */
/* wolfSSL's allocations for a memory-collecting agent (docs/metrics.md), through
 * wolfSSL_SetAllocators (builds without WOLFSSL_STATIC_MEMORY or WOLFSSL_DEBUG_MEMORY, as
 * Debian's and tlsbench's own: the callbacks take plain sizes). */
#include <stdlib.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/settings.h>
#include <wolfssl/wolfcrypt/memory.h>

#include "tlsbench/heap_hooks.h"

static void *tb_wolf_malloc(size_t n) {
    void *p = malloc(n);
    tb_heap_hooks_alloc(p, n);
    return p;
}

static void tb_wolf_free(void *p) {
    tb_heap_hooks_free(p);
    free(p);
}

/* The old block is forgotten before realloc (it is dead after); a failed realloc keeps it. */
static void *tb_wolf_realloc(void *old, size_t n) {
    size_t had = tb_heap_hooks_free(old);
    void *p = realloc(old, n);
    tb_heap_hooks_alloc(p ? p : (n ? old : NULL), p ? n : had);
    return p;
}

__attribute__((constructor)) static void tb_wolf_heap_hooks(void) {
    if (tb_heap_hooks_on())
        wolfSSL_SetAllocators(tb_wolf_malloc, tb_wolf_free, tb_wolf_realloc);
}
