/* SPDX-License-Identifier: Apache-2.0 */
/* What a TLS library's allocator hook reports to the posix port's memory probes
 * (src/posix/posix_memory.c): each backend installs its library's hook (mbed TLS: link-time
 * --wrap=calloc,free; OpenSSL: CRYPTO_set_mem_functions; wolfSSL: wolfSSL_SetAllocators) and
 * calls these. Only in an agent started with TLSBENCH_COLLECT=memory: otherwise the hooks are
 * not installed (or, for the link-time wrap, pass straight through). */
#ifndef TLSBENCH_HEAP_HOOKS_H
#define TLSBENCH_HEAP_HOOKS_H
#include <stddef.h>

/* 1 when this agent collects memory (read once; safe in a constructor). */
int tb_heap_hooks_on(void);
/* A block of n bytes was allocated at p (p NULL: nothing happened). */
void tb_heap_hooks_alloc(void *p, size_t n);
/* The block at p is being freed: returns its size, 0 for a block not seen allocated. */
size_t tb_heap_hooks_free(void *p);
#endif
