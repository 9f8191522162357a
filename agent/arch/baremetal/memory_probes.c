/* SPDX-License-Identifier: Apache-2.0 */
/* The memory image's probes (port.h tb_memory_probes): every heap block charged to an owner,
 * and a painted stack. The image is linked with -Wl,--wrap=malloc,calloc,realloc,free, so
 * every allocation of the TLS library, the backend and the agent comes here whatever the
 * library (mbed TLS's default allocator is calloc/free). Each block carries an 8-byte header
 * naming its owner and size, so a free is charged to whoever allocated the block. Counts in
 * this image include this bookkeeping: the counting image has none of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baremetal.h"
#include "tlsbench/port.h"
#include "tlsbench/spec_gen.h"

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

/* Before the caller's bytes; 8 bytes keep the C library's 8-byte alignment. */
typedef struct tb_block {
    uint32_t size;
    uint32_t owner;
} tb_block;
_Static_assert(sizeof(tb_block) == 8, "a block header must keep 8-byte alignment");

/* Owners: the client, the server, and everything else (TB_PEER_NONE). */
enum { TB_OWNERS = 3, TB_OWNER_NONE = 2 };

static struct {
    uint32_t owner;
    uint32_t live[TB_OWNERS];
    uint32_t peak[TB_OWNERS];
} tb_heap = {.owner = TB_OWNER_NONE};

static uint32_t tb_owner_slot(uint8_t peer) { return peer <= TB_PEER_SERVER ? peer : TB_OWNER_NONE; }

/* A peer's heap cap: what a part's RAM leaves the TLS library (a device runs one side; the
 * host computes it from the part's RAM and the link map, docs/porting.md "Does it fit").
 * 0: no cap. A board that cannot say (no semihosting) keeps this default. */
__attribute__((weak)) uint32_t tb_bm_heap_cap(void) { return 0; }

static struct {
    int read;
    uint32_t cap;
    uint32_t refused_need; /* the most a refused peer would have held (0: none since the last note) */
} tb_cap;

/* Whether `owner` may hold `size` more bytes; a refusal is remembered for the failure's note. */
static int tb_within_cap(uint32_t owner, uint32_t size) {
    if (!tb_cap.read) {
        tb_cap.read = 1;
        tb_cap.cap = tb_bm_heap_cap();
    }
    uint64_t need = (uint64_t)tb_heap.live[owner] + size;
    if (!tb_cap.cap || owner == TB_OWNER_NONE || need <= tb_cap.cap)
        return 1;
    if (need > tb_cap.refused_need)
        tb_cap.refused_need = need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
    return 0;
}

static void tb_charge(uint32_t owner, uint32_t add, uint32_t remove) {
    tb_heap.live[owner] = tb_heap.live[owner] + add - remove;
    if (tb_heap.live[owner] > tb_heap.peak[owner])
        tb_heap.peak[owner] = tb_heap.live[owner];
}

void *__wrap_malloc(size_t size) {
    if (size > UINT32_MAX - sizeof(tb_block) || !tb_within_cap(tb_heap.owner, (uint32_t)size))
        return NULL;
    tb_block *b = __real_malloc(sizeof *b + size);
    if (!b)
        return NULL;
    *b = (tb_block){(uint32_t)size, tb_heap.owner};
    tb_charge(b->owner, b->size, 0);
    return b + 1;
}

void *__wrap_calloc(size_t n, size_t size) {
    if (size != 0 && n > (UINT32_MAX - sizeof(tb_block)) / size)
        return NULL;
    void *p = __wrap_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void __wrap_free(void *p) {
    if (!p)
        return;
    tb_block *b = (tb_block *)p - 1;
    tb_charge(b->owner, 0, b->size);
    __real_free(b);
}

/* The block stays its first owner's. */
void *__wrap_realloc(void *p, size_t size) {
    if (!p)
        return __wrap_malloc(size);
    if (size > UINT32_MAX - sizeof(tb_block)
        || (size > ((tb_block *)p - 1)->size && !tb_within_cap(((tb_block *)p - 1)->owner,
                                                                  (uint32_t)size - ((tb_block *)p - 1)->size)))
        return NULL;
    tb_block *b = __real_realloc((tb_block *)p - 1, sizeof *b + size);
    if (!b)
        return NULL;
    tb_charge(b->owner, (uint32_t)size, b->size);
    b->size = (uint32_t)size;
    return b + 1;
}

static void tb_heap_owner(uint8_t peer) { tb_heap.owner = tb_owner_slot(peer); }
static uint32_t tb_heap_live(uint8_t peer) { return tb_heap.live[tb_owner_slot(peer)]; }
static uint32_t tb_heap_peak(uint8_t peer) { return tb_heap.peak[tb_owner_slot(peer)]; }

static void tb_heap_peaks_restart(void) {
    for (uint32_t o = 0; o < TB_OWNERS; o++)
        tb_heap.peak[o] = tb_heap.live[o];
}

/* ---------------------------------------------------------------- stack */
/* Painted from the stack's limit up to a little below the caller's SP; the deepest word that
 * lost the pattern is the high-water mark. Interrupt handlers use the same stack (a Cortex-M's
 * MSP, a RISC-V trap's sp), so their depth counts, as it would on a board. */
#define TB_STACK_PAINT 0xA5C3A5C3u
#define TB_STACK_PAINT_MARGIN 64u /* bytes below SP left alone: this function's own frame */

static void tb_stack_paint(void) {
    uint8_t *sp = tb_arch_stack_pointer();
    for (uint32_t *w = (uint32_t *)__stack_limit; (uint8_t *)w < sp - TB_STACK_PAINT_MARGIN; w++)
        *w = TB_STACK_PAINT;
}

static uint32_t tb_stack_high_water(void) {
    const uint32_t *w = (const uint32_t *)__stack_limit;
    while ((const uint8_t *)w < __stack_top && *w == TB_STACK_PAINT)
        w++;
    return (uint32_t)(__stack_top - (const uint8_t *)w);
}

/* The failure's note (runner.c): the cap refused an allocation since the last note. */
static size_t tb_heap_refused(char *buf, size_t n) {
    if (!tb_cap.refused_need)
        return 0;
    int w = snprintf(buf, n, "heap cap: a peer needed at least %lu bytes, %lu available",
                     (unsigned long)tb_cap.refused_need, (unsigned long)tb_cap.cap);
    tb_cap.refused_need = 0;
    return w > 0 ? (size_t)w : 0;
}

static const tb_memory_probes tb_probes = {
    .heap_owner = tb_heap_owner,
    .heap_live = tb_heap_live,
    .heap_peak = tb_heap_peak,
    .heap_peaks_restart = tb_heap_peaks_restart,
    .stack_paint = tb_stack_paint,
    .stack_high_water = tb_stack_high_water,
    .heap_refused = tb_heap_refused,
};

const tb_memory_probes *tb_port_memory_probes(void) { return &tb_probes; }
