/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port's memory probes (port.h tb_memory_probes), for an agent started with
 * TLSBENCH_COLLECT=memory (docs/metrics.md). The heap: the TLS library's allocator hook
 * reports every block (heap_hooks.h); a block belongs to whoever owned the moment it was
 * allocated and is freed to it. The hooks see the library's own pointers (mbed TLS's
 * --wrap=calloc,free sees the whole program's), so ownership is looked up by pointer in an
 * open-addressing table, never in a header before the block. The stack: painted below the
 * caller, measured from the thread's stack top like the Cortex-M image's. */
#define _GNU_SOURCE /* pthread_getattr_np: where the thread's stack ends */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tlsbench/heap_hooks.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

/* ---------------------------------------------------------------- heap */
enum { TB_OWNERS = 3, TB_OWNER_NONE = 2 };

/* OpenSSL keeps over 10 000 library-wide blocks alive: 256 Ki slots keep probes short. */
#define TB_HEAP_SLOTS (1u << 18)
typedef struct tb_heap_block {
    uintptr_t p; /* 0: empty */
    uint32_t size;
    uint8_t owner;
} tb_heap_block;

static struct {
    volatile int on; /* -1 not read yet, 0 off, 1 collecting; volatile: a hook may ask while it is being set */
    uint8_t owner;
    uint64_t live[TB_OWNERS];
    uint64_t peak[TB_OWNERS];
    uint64_t step_peak[TB_OWNERS];
    uint64_t allocated[TB_OWNERS];
    uint64_t zero[TB_OWNERS]; /* live bytes when the repetition began (peers: library caches) */
    tb_heap_block *table;
} tb_heap = {.on = -1, .owner = TB_OWNER_NONE};

int tb_heap_hooks_on(void) {
    if (tb_heap.on < 0) {
        const char *collect = getenv("TLSBENCH_COLLECT");
        int wanted = collect && strcmp(collect, tb_collect_name(TB_COLLECT_MEMORY)) == 0;
        tb_heap.on = 0; /* the table's own calloc may come through a hook: not counted */
        tb_heap.table = wanted ? calloc(TB_HEAP_SLOTS, sizeof *tb_heap.table) : NULL;
        tb_heap.on = tb_heap.table != NULL;
    }
    return tb_heap.on;
}

static uint32_t tb_heap_home(uintptr_t p) { return (uint32_t)((p >> 4) * 2654435761u) & (TB_HEAP_SLOTS - 1); }
static uint32_t tb_heap_next(uint32_t slot) { return (slot + 1) & (TB_HEAP_SLOTS - 1); }

static void tb_heap_charge(uint8_t owner, uint64_t add, uint64_t remove) {
    tb_heap.live[owner] = tb_heap.live[owner] + add - remove;
    if (tb_heap.live[owner] > tb_heap.peak[owner])
        tb_heap.peak[owner] = tb_heap.live[owner];
    if (tb_heap.live[owner] > tb_heap.step_peak[owner])
        tb_heap.step_peak[owner] = tb_heap.live[owner];
}

void tb_heap_hooks_alloc(void *p, size_t n) {
    if (!p || !tb_heap_hooks_on())
        return;
    uint32_t slot = tb_heap_home((uintptr_t)p);
    for (uint32_t i = 0; i < TB_HEAP_SLOTS; i++, slot = tb_heap_next(slot))
        if (tb_heap.table[slot].p == 0) {
            tb_heap.table[slot] = (tb_heap_block){(uintptr_t)p, (uint32_t)n, tb_heap.owner};
            tb_heap.allocated[tb_heap.owner] += n;
            tb_heap_charge(tb_heap.owner, n, 0);
            return;
        }
}

/* Linear probing without tombstones: entries after the freed slot move back into the hole
 * when their home allows it, so lookups stay short however many blocks come and go. */
static void tb_heap_remove(uint32_t hole) {
    for (uint32_t j = tb_heap_next(hole); tb_heap.table[j].p != 0; j = tb_heap_next(j)) {
        uint32_t home = tb_heap_home(tb_heap.table[j].p);
        if (((j - home) & (TB_HEAP_SLOTS - 1)) >= ((j - hole) & (TB_HEAP_SLOTS - 1))) {
            tb_heap.table[hole] = tb_heap.table[j];
            hole = j;
        }
    }
    tb_heap.table[hole].p = 0;
}

size_t tb_heap_hooks_free(void *p) {
    if (!p || !tb_heap_hooks_on())
        return 0;
    uint32_t slot = tb_heap_home((uintptr_t)p);
    for (uint32_t i = 0; i < TB_HEAP_SLOTS && tb_heap.table[slot].p != 0; i++, slot = tb_heap_next(slot))
        if (tb_heap.table[slot].p == (uintptr_t)p) {
            size_t size = tb_heap.table[slot].size;
            tb_heap_charge(tb_heap.table[slot].owner, 0, size);
            tb_heap_remove(slot);
            return size;
        }
    return 0;
}

static uint8_t tb_owner_slot(uint8_t peer) { return peer <= TB_PEER_SERVER ? peer : TB_OWNER_NONE; }
static void tb_heap_owner(uint8_t peer) { tb_heap.owner = tb_owner_slot(peer); }
/* Above the repetition's zero; a peer that frees a cache block it held before goes below: 0. */
static uint32_t tb_heap_above_zero(uint8_t slot, uint64_t bytes) {
    return bytes > tb_heap.zero[slot] ? (uint32_t)(bytes - tb_heap.zero[slot]) : 0;
}
static uint32_t tb_heap_live(uint8_t peer) { return tb_heap_above_zero(tb_owner_slot(peer), tb_heap.live[tb_owner_slot(peer)]); }
static uint32_t tb_heap_peak(uint8_t peer) { return tb_heap_above_zero(tb_owner_slot(peer), tb_heap.peak[tb_owner_slot(peer)]); }
static uint64_t tb_heap_allocated(uint8_t peer) { return tb_heap.allocated[tb_owner_slot(peer)]; }
static uint32_t tb_heap_step_peak(uint8_t peer) {
    return tb_heap_above_zero(tb_owner_slot(peer), tb_heap.step_peak[tb_owner_slot(peer)]);
}

/* The peers' zero; peer none's stays 0: HEAP_SHARED is all the library holds. */
static void tb_heap_repetition_zero(void) {
    tb_heap.zero[TB_PEER_CLIENT] = tb_heap.live[TB_PEER_CLIENT];
    tb_heap.zero[TB_PEER_SERVER] = tb_heap.live[TB_PEER_SERVER];
}

static void tb_heap_peaks_restart(void) {
    memcpy(tb_heap.peak, tb_heap.live, sizeof tb_heap.peak);
}

static void tb_heap_step_restart(void) {
    memcpy(tb_heap.step_peak, tb_heap.live, sizeof tb_heap.step_peak);
}

/* ---------------------------------------------------------------- stack */
/* The region below the caller is painted; the lowest word that lost the pattern is the
 * high-water mark, in bytes from the thread's stack top. Only the dirtied part is painted
 * again. The region grows when a call reaches its lowest quarter (a large local array left
 * unwritten at its far end would otherwise hide callees below it). */
#define TB_STACK_PATTERN 0xA5C3A5C3A5C3A5C3ull
#define TB_STACK_MARGIN 1024u            /* below the painting function's frame: its own calls */
#define TB_STACK_REGION (128u * 1024u)   /* painted bytes at first */
#define TB_STACK_REGION_MAX (4u * 1024u * 1024u)

static struct {
    uintptr_t top;      /* the thread's stack top (highest address) */
    uint64_t *low, *hi; /* the painted region [low, hi): low stays, hi follows the caller */
    uint32_t region;
} tb_stack = {.region = TB_STACK_REGION};

static uintptr_t tb_stack_top(void) {
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    return (uintptr_t)addr + size;
}

__attribute__((noinline)) static void tb_stack_fill(uint64_t *from, uint64_t *to) {
    for (volatile uint64_t *w = from; w < to; w++)
        *w = TB_STACK_PATTERN;
}

static uint64_t *tb_stack_lowest_dirty(void) {
    uint64_t *w = tb_stack.low;
    while (w < tb_stack.hi && *w == TB_STACK_PATTERN)
        w++;
    return w;
}

/* Everything above this function's frame is live: the region ends below it. Its bottom
 * stays where the first paint put it, so only what was dirtied since is painted again. */
__attribute__((noinline)) static void tb_stack_paint(void) {
    uint64_t *hi = (uint64_t *)((uintptr_t)__builtin_frame_address(0) - TB_STACK_MARGIN);
    if (!tb_stack.top)
        tb_stack.top = tb_stack_top();
    if (tb_stack.low == NULL || hi <= tb_stack.low + tb_stack.region / 16) {
        tb_stack.hi = hi;
        tb_stack.low = hi - tb_stack.region / 8;
        tb_stack_fill(tb_stack.low, hi);
        return;
    }
    tb_stack.hi = hi;
    tb_stack_fill(tb_stack_lowest_dirty(), hi);
}

__attribute__((noinline)) static uint32_t tb_stack_high_water(void) {
    if (!tb_stack.low)
        return 0;
    uint64_t *w = tb_stack_lowest_dirty();
    if (w < tb_stack.low + tb_stack.region / 32 && tb_stack.region < TB_STACK_REGION_MAX) {
        tb_stack.region *= 2;
        tb_stack.low = NULL; /* painted deeper at the next paint */
    }
    return (uint32_t)(tb_stack.top - (uintptr_t)w);
}

static const tb_memory_probes tb_probes = {
    .heap_owner = tb_heap_owner,
    .heap_live = tb_heap_live,
    .heap_peak = tb_heap_peak,
    .heap_peaks_restart = tb_heap_peaks_restart,
    .stack_paint = tb_stack_paint,
    .stack_high_water = tb_stack_high_water,
    .heap_allocated = tb_heap_allocated,
    .heap_step_restart = tb_heap_step_restart,
    .heap_step_peak = tb_heap_step_peak,
    .heap_repetition_zero = tb_heap_repetition_zero,
};

const tb_memory_probes *tb_port_memory_probes(void) { return tb_heap_hooks_on() ? &tb_probes : NULL; }
