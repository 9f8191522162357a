/* SPDX-License-Identifier: Apache-2.0 */
/* OpenSSL's allocations for a memory-collecting agent (docs/metrics.md), through
 * CRYPTO_set_mem_functions: set in a constructor, since OpenSSL refuses it once it has
 * allocated anything. */
#include <stdlib.h>

#include <openssl/crypto.h>

#include "tlsbench/heap_hooks.h"

static void *tb_ossl_malloc(size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    void *p = malloc(n);
    tb_heap_hooks_alloc(p, n);
    return p;
}

/* The old block is forgotten before realloc (it is dead after); a failed realloc keeps it. */
static void *tb_ossl_realloc(void *old, size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    size_t had = tb_heap_hooks_free(old);
    void *p = realloc(old, n);
    tb_heap_hooks_alloc(p ? p : (n ? old : NULL), p ? n : had);
    return p;
}

static void tb_ossl_free(void *p, const char *file, int line) {
    (void)file;
    (void)line;
    tb_heap_hooks_free(p);
    free(p);
}

__attribute__((constructor)) static void tb_ossl_heap_hooks(void) {
    if (tb_heap_hooks_on())
        CRYPTO_set_mem_functions(tb_ossl_malloc, tb_ossl_realloc, tb_ossl_free);
}
