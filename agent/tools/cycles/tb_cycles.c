/* SPDX-License-Identifier: Apache-2.0 */
/* tb_cycles: a QEMU TCG plugin (API v1, QEMU 7.2) that counts what a cycle model needs of the
 * code a guest runs: executed instructions by class (docs/cycles.md), taken and not-taken
 * branches, and the flash fetches an instruction cache of the board's geometry would miss.
 * It writes cumulative counts at chosen instructions ("snapshots"); the host turns counts into
 * cycles with a core's timing table and a board's memory system (spec/cores.toml,
 * spec/boards.toml: analysis/models/cycles.py).
 *
 * Deterministic by construction: every count follows the guest's executed instructions, and
 * QEMU with -icount shift=0 executes the same instructions run after run. Classes are decided
 * once per translated block (from its disassembly), so a block's execution costs one callback.
 *
 *   -plugin libtb_cycles.so,out=FILE,snap=ADDR[,snap=ADDR...][,hold=ADDR,resume=ADDR][,flush=ADDR]
 *           [,flash=BASE:SIZE][,line=BYTES][,lines=N][,ways=N][,dlines=N]
 *
 *   out        binary file of snapshots (format below)
 *   snap       a snapshot each time the instruction at ADDR executes (a function's entry)
 *   hold/resume  counting stops at hold's entry and restarts at resume's (the firmware holds its
 *              counter while it talks to the host: the same work leaves the counts)
 *   flush      the rows written so far reach the file each time ADDR executes (after a snapshot
 *              there): the firmware is about to ship what they count, and the host reads them
 *              when the shipment arrives (QEMU runs the callback before the guest's next
 *              instruction, so before any byte of it leaves the UART)
 *   flash      where code and constants sit in flash (fetch misses are counted there only)
 *   line       flash line (fetch width) in bytes; lines/ways: the instruction cache (ART,
 *              I-cache) of the board, 0 lines: none; dlines: its data cache for literal loads
 *
 * File: "TBCY" u32 version, u32 n_features, then n_features NUL-terminated names; then rows of
 * u32 snap index (0xFFFFFFFF: the last row, written at exit), u32 holds so far, u64 counts[n]. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_v1.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define TB_VERSION 1u
#define TB_MAX_SNAPS 16
#define TB_EXIT_ROW 0xFFFFFFFFu

/* The features, in file order: their names are the host's keys (spec/cores.toml). */
#define FEATURES(X)                                                                          \
    X(INSNS, "instructions")          /* every executed instruction */                      \
    X(BYTES, "instruction_bytes")     /* their encodings' bytes (16- and 32-bit Thumb) */   \
    X(ALU, "alu")                     /* data processing, moves, compares, shifts */         \
    X(MUL, "mul")                     /* 32-bit result multiplies (MUL, MLA, SMULxy...) */   \
    X(MULL, "mull")                   /* 64-bit result multiplies (UMULL, UMAAL...) */       \
    X(DIV, "div")                     /* SDIV, UDIV, DIV, REM */                             \
    X(LOAD, "load")                   /* single loads, not PC-relative */                    \
    X(LOAD_LIT, "load_literal")       /* PC-relative loads (literal pools in flash) */       \
    X(STORE, "store")                 /* single stores */                                    \
    X(LOAD_DOUBLE, "load_double")     /* LDRD / STRD */                                      \
    X(LDM, "load_multiple")           /* LDM, POP */                                         \
    X(LDM_REGS, "load_multiple_regs") /* registers they load */                              \
    X(STM, "store_multiple")          /* STM, PUSH */                                        \
    X(STM_REGS, "store_multiple_regs")                                                        \
    X(PIPELINED, "mem_after_load")    /* a load/store right after a load it does not depend on */ \
    X(AFTER_STORE, "mem_after_store") /* a load/store right after a store */                 \
    X(ADDR_DEP, "addr_dependency")    /* address computed by the instruction just before */  \
    X(BRANCH, "branch")               /* branch instructions, taken or not */                \
    X(CALL, "call")                   /* BL, BLX, JAL with a link */                         \
    X(TABLE_BRANCH, "table_branch")   /* TBB, TBH */                                         \
    X(TAKEN, "taken")                 /* control left the straight line (branch taken) */    \
    X(NOT_TAKEN, "not_taken")         /* a conditional branch fell through */                \
    X(REDIRECT, "redirect")           /* a jump not at a branch (exception entry/return) */  \
    X(IT, "it")                       /* IT instructions (Thumb-2) */                        \
    X(SYSTEM, "system")               /* barriers, MRS/MSR, CPS, WFI, SVC, BKPT, CSR */      \
    X(FPU, "fpu")                     /* floating point data processing */                   \
    X(FETCH_MISS_TAKEN, "fetch_miss_taken") /* a taken branch's target line not cached */    \
    X(FETCH_MISS_SEQ, "fetch_miss_seq")     /* a sequential flash line not cached */         \
    X(FETCH_LINES, "fetch_lines")           /* flash lines entered, cached or not */         \
    X(LITERAL_MISS, "literal_miss")         /* a literal load's line not in the data cache */

#define AS_ENUM(id, name) F_##id,
#define AS_NAME(id, name) name,
enum { FEATURES(AS_ENUM) N_FEATURES };
static const char *const feature_names[N_FEATURES] = {FEATURES(AS_NAME)};

/* ------------------------------------------------------------------ configuration */
static FILE *out;
static uint64_t snap_addr[TB_MAX_SNAPS];
static unsigned n_snaps;
static uint64_t hold_addr = UINT64_MAX, resume_addr = UINT64_MAX, flush_addr = UINT64_MAX;
static uint64_t flash_base, flash_size;
static uint32_t line_bytes = 16, cache_lines, cache_ways = 1, dcache_lines;
static int fill_on_demand; /* the cache keeps only lines missed on a jump (ST's ART), not prefetched ones */

/* ------------------------------------------------------------------ counting state */
static uint64_t counts[N_FEATURES];
static uint64_t held_at[N_FEATURES]; /* counts when the hold began */
static uint64_t excluded[N_FEATURES]; /* counted while held */
static uint32_t holds;
static int holding;

/* ------------------------------------------------------------------ caches */
typedef struct {
    uint32_t sets, ways;
    uint64_t *tag; /* sets * ways; UINT64_MAX: empty */
    uint64_t *age;
    uint64_t clock;
} cache_t;

static cache_t icache, dcache;

static void cache_init(cache_t *c, uint32_t lines, uint32_t ways) {
    if (lines == 0)
        return;
    c->ways = ways && ways <= lines ? ways : lines;
    c->sets = lines / c->ways;
    c->tag = malloc(sizeof(uint64_t) * lines);
    c->age = calloc(lines, sizeof(uint64_t));
    for (uint32_t i = 0; i < lines; i++)
        c->tag[i] = UINT64_MAX;
}

/* Looks a line up and, when `fill`, fills it on a miss (least recently used way): 1 on a hit. */
static int cache_lookup(cache_t *c, uint64_t line, int fill) {
    if (c->tag == NULL)
        return 0;
    uint64_t *tag = c->tag + (line % c->sets) * c->ways, *age = c->age + (line % c->sets) * c->ways;
    uint32_t victim = 0;
    c->clock++;
    for (uint32_t w = 0; w < c->ways; w++) {
        if (tag[w] == line) {
            age[w] = c->clock;
            return 1;
        }
        if (age[w] < age[victim])
            victim = w;
    }
    if (fill) {
        tag[victim] = line;
        age[victim] = c->clock;
    }
    return 0;
}

static int cache_access(cache_t *c, uint64_t line) { return cache_lookup(c, line, 1); }

static int in_flash(uint64_t addr) { return addr - flash_base < flash_size; }

/* ------------------------------------------------------------------ translated blocks */
typedef struct {
    uint16_t feature;
    uint16_t n;
} tb_add;

typedef struct tb_info {
    uint64_t start, end; /* [start, end) of its code */
    uint8_t ends_branch; /* its last instruction may leave the straight line */
    uint8_t conditional; /* ... only sometimes (a conditional branch, CBZ, an IT-predicated one) */
    uint16_t n_adds, n_literals;
    tb_add adds[N_FEATURES];
    uint64_t *literals; /* addresses of its PC-relative loads */
    uint64_t pending; /* executions whose static counts are not in counts[] yet (flush) */
    struct tb_info *next; /* hash chain */
    struct tb_info *dirty_next; /* the pending list, for flush */
} tb_info;

#define TB_HASH 65536u
static tb_info *tb_table[TB_HASH];
static tb_info *pending_list; /* the blocks executed since the last flush */
static tb_info *last_tb;

/* A block's static counts (its classes) are added when read, not per execution: an execution
 * costs one increment, which keeps the plugin's cost near a plain run's. A read walks only the
 * blocks executed since the previous one (a snapshot per trace record stays cheap). */
static void flush(void) {
    for (tb_info *t = pending_list; t; t = t->dirty_next) {
        for (unsigned i = 0; i < t->n_adds; i++)
            counts[t->adds[i].feature] += t->pending * t->adds[i].n;
        t->pending = 0;
    }
    pending_list = NULL;
}

static int riscv;

/* The disassembly's mnemonic without width suffix (.w .n), lower case, and its operands.
 * QEMU's RISC-V disassembler prints the encoding's hex first: skipped. */
static void split(const char *disas, char *mn, size_t mn_len, const char **ops) {
    size_t i = 0;
    while (*disas == ' ')
        disas++;
    size_t hex = strspn(disas, "0123456789abcdef");
    if (riscv && hex >= 4 && (disas[hex] == ' ' || disas[hex] == '\t'))
        for (disas += hex; *disas == ' ' || *disas == '\t';)
            disas++;
    while (*disas && *disas != ' ' && *disas != '\t' && i + 1 < mn_len)
        mn[i++] = *disas++;
    mn[i] = 0;
    char *dot = strchr(mn, '.');
    if (dot && (!strcmp(dot, ".w") || !strcmp(dot, ".n")))
        *dot = 0;
    while (*disas == ' ' || *disas == '\t')
        disas++;
    *ops = disas;
}

static int is_cond(const char *s) {
    static const char *const cc[] = {"eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs",
                                     "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
    for (size_t i = 0; i < sizeof cc / sizeof *cc; i++)
        if (!strcmp(s, cc[i]))
            return 1;
    return 0;
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static int in_list(const char *s, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* Registers in a {list}: commas + 1, ranges r4-r7 counted whole. */
static int reg_list_count(const char *ops) {
    const char *open = strchr(ops, '{'), *close = open ? strchr(open, '}') : NULL;
    if (!open || !close)
        return 1;
    int n = 1;
    for (const char *p = open; p < close; p++) {
        if (*p == ',')
            n++;
        if (*p == '-' && p[-1] >= '0' && p[-1] <= '9') {
            int a = atoi(p - (p[-2] >= '0' && p[-2] <= '9' ? 2 : 1)), b = atoi(p + 2);
            n += b > a ? b - a : 0;
        }
    }
    return n;
}

/* A register name at s (r0-r15, sp, lr, pc, ip, fp, sb, sl; x0-x31 or ABI names on RISC-V):
 * a number for comparisons, -1 if none. */
static int reg_at(const char *s) {
    static const char *const named[] = {"sb", "sl", "fp", "ip", "sp", "lr", "pc", NULL};
    if (s[0] == 'r' && s[1] >= '0' && s[1] <= '9')
        return atoi(s + 1);
    for (int i = 0; named[i]; i++)
        if (starts(s, named[i]) && !(s[2] >= 'a' && s[2] <= 'z'))
            return 9 + i;
    return -1;
}

/* The destination register of a data-processing instruction (its first operand). */
static int dest_reg(const char *ops) { return reg_at(ops); }

/* Whether an address in [..] uses register r. */
static int address_uses(const char *ops, int r) {
    const char *open = strchr(ops, '['), *close = open ? strchr(open, ']') : NULL;
    if (r < 0 || !open || !close)
        return 0;
    for (const char *p = open + 1; p < close; p++)
        if ((p == open + 1 || p[-1] == ' ' || p[-1] == ',') && reg_at(p) == r)
            return 1;
    return 0;
}

enum kind { K_ALU, K_MUL, K_MULL, K_DIV, K_LOAD, K_LOAD_LIT, K_STORE, K_LOAD_DOUBLE, K_LDM, K_STM,
            K_BRANCH, K_IT, K_SYSTEM, K_FPU };

typedef struct {
    enum kind kind;
    int regs;         /* LDM/STM: registers */
    int writes_pc;    /* leaves the straight line */
    int conditional;  /* may fall through */
    int call, table;  /* BL/BLX; TBB/TBH */
    int dest;         /* data processing: its destination register (-1: none) */
} insn_class;

static const char *const mul32[] = {"mul", "muls", "mla", "mls", "smulbb", "smulbt", "smultb", "smultt",
                                    "smulwb", "smulwt", "smlabb", "smlabt", "smlatb", "smlatt", "smlawb",
                                    "smlawt", "smmul", "smmulr", "smmla", "smmlar", "smmls", "smmlsr", "smuad",
                                    "smuadx", "smusd", "smusdx", "smlad", "smladx", "smlsd", "smlsdx", "usad8",
                                    "usada8", NULL};
static const char *const mul64[] = {"umull", "umulls", "smull", "smulls", "umlal", "umlals", "smlal", "smlals",
                                    "umaal", "smlalbb", "smlalbt", "smlaltb", "smlaltt", "smlald", "smlaldx",
                                    "smlsld", "smlsldx", NULL};
static const char *const no_dest[] = {"cmp", "cmn", "tst", "teq", "nop", NULL};
static const char *const system_ops[] = {"dsb", "dmb", "isb", "msr", "mrs", "cpsid", "cpsie", "wfi", "wfe", "sev",
                                         "svc", "bkpt", "udf", "yield", "ecall", "ebreak", "wfi", "fence",
                                         "fence.i", "mret", NULL};
/* RISC-V (QEMU's own disassembler), compressed forms with their c. prefix dropped. */
static const char *const rv_loads[] = {"lw", "lh", "lb", "lhu", "lbu", "lwsp", "flw", "fld", "flwsp", "fldsp", NULL};
static const char *const rv_stores[] = {"sw", "sh", "sb", "swsp", "fsw", "fsd", "fswsp", "fsdsp", NULL};
static const char *const rv_mul[] = {"mul", NULL};
static const char *const rv_mull[] = {"mulh", "mulhu", "mulhsu", NULL};
static const char *const rv_div[] = {"div", "divu", "rem", "remu", NULL};
static const char *const rv_cond[] = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez",
                                      "bgez", "bltz", "bgtz", "bgt", "ble", "bgtu", "bleu", NULL};
static const char *const rv_jump[] = {"jal", "jalr", "j", "jr", "ret", "call", "tail", NULL};

static insn_class classify_riscv(const char *mn, const char *ops) {
    insn_class c = {K_ALU, 0, 0, 0, 0, 0, -1};
    if (starts(mn, "c."))
        mn += 2;
    if (in_list(mn, rv_loads))
        c.kind = K_LOAD;
    else if (in_list(mn, rv_stores))
        c.kind = K_STORE;
    else if (in_list(mn, rv_mul))
        c.kind = K_MUL;
    else if (in_list(mn, rv_mull))
        c.kind = K_MULL;
    else if (in_list(mn, rv_div))
        c.kind = K_DIV;
    else if (in_list(mn, rv_cond))
        c.kind = K_BRANCH, c.writes_pc = 1, c.conditional = 1;
    else if (in_list(mn, rv_jump))
        c.kind = K_BRANCH, c.writes_pc = 1, c.call = !strcmp(mn, "call") || ((!strcmp(mn, "jal") || !strcmp(mn, "jalr")) && starts(ops, "ra"));
    else if (in_list(mn, system_ops) || starts(mn, "csr"))
        c.kind = K_SYSTEM;
    else if (mn[0] == 'f')
        c.kind = K_FPU;
    return c;
}

static insn_class classify_thumb(const char *mn, const char *ops) {
    insn_class c = {K_ALU, 0, 0, 0, 0, 0, -1};
    size_t len = strlen(mn);
    int pc_first = starts(ops, "pc");
    if (!strcmp(mn, "b") || (len == 3 && mn[0] == 'b' && is_cond(mn + 1))) {
        c.kind = K_BRANCH, c.writes_pc = 1, c.conditional = len == 3;
    } else if (!strcmp(mn, "bl") || starts(mn, "blx") || starts(mn, "bx")) {
        c.kind = K_BRANCH, c.writes_pc = 1, c.call = mn[1] == 'l', c.conditional = len > (mn[1] == 'l' ? 3u : 2u);
    } else if (!strcmp(mn, "cbz") || !strcmp(mn, "cbnz")) {
        c.kind = K_BRANCH, c.writes_pc = 1, c.conditional = 1;
    } else if (!strcmp(mn, "tbb") || !strcmp(mn, "tbh")) {
        c.kind = K_BRANCH, c.writes_pc = 1, c.table = 1;
    } else if (starts(mn, "it") && (len == 2 || strspn(mn + 2, "te") == len - 2)) {
        c.kind = K_IT;
    } else if (starts(mn, "pop") || starts(mn, "ldm") || starts(mn, "vpop") || starts(mn, "vldm")) {
        c.kind = K_LDM, c.regs = reg_list_count(ops), c.writes_pc = strstr(ops, "pc") != NULL;
    } else if (starts(mn, "push") || starts(mn, "stm") || starts(mn, "vpush") || starts(mn, "vstm")) {
        c.kind = K_STM, c.regs = reg_list_count(ops);
    } else if (starts(mn, "ldrd") || starts(mn, "strd")) {
        c.kind = K_LOAD_DOUBLE;
    } else if (starts(mn, "ldr") || starts(mn, "vldr") || starts(mn, "lda")) {
        c.kind = strstr(ops, "[pc") ? K_LOAD_LIT : K_LOAD, c.writes_pc = pc_first;
    } else if (starts(mn, "str") || starts(mn, "vstr") || starts(mn, "stl")) {
        c.kind = K_STORE;
    } else if (in_list(mn, mul64)) {
        c.kind = K_MULL;
    } else if (in_list(mn, mul32)) {
        c.kind = K_MUL, c.dest = dest_reg(ops);
    } else if (!strcmp(mn, "sdiv") || !strcmp(mn, "udiv")) {
        c.kind = K_DIV, c.dest = dest_reg(ops);
    } else if (in_list(mn, system_ops)) {
        c.kind = K_SYSTEM;
    } else if (mn[0] == 'v') {
        c.kind = K_FPU;
    } else {
        c.writes_pc = pc_first; /* mov pc, add pc, ...: a jump */
        c.dest = in_list(mn, no_dest) ? -1 : dest_reg(ops);
    }
    if (c.writes_pc && c.kind != K_BRANCH && c.kind != K_LDM)
        c.conditional = 0;
    return c;
}

/* The address a PC-relative Thumb load reads: Align(PC, 4) + imm, PC = the instruction + 4. */
static uint64_t literal_address(uint64_t vaddr, const char *ops) {
    const char *imm = strstr(ops, "#");
    long off = imm ? strtol(imm + 1, NULL, 0) : 0;
    return ((vaddr + 4) & ~(uint64_t)3) + (uint64_t)off;
}

static void add(tb_info *t, int feature, int n) {
    for (unsigned i = 0; i < t->n_adds; i++)
        if (t->adds[i].feature == feature) {
            t->adds[i].n += (uint16_t)n;
            return;
        }
    t->adds[t->n_adds++] = (tb_add){(uint16_t)feature, (uint16_t)n};
}

static tb_info *describe(struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    tb_info *t = calloc(1, sizeof *t);
    t->literals = calloc(n ? n : 1, sizeof(uint64_t));
    t->start = qemu_plugin_tb_vaddr(tb);
    insn_class prev = {K_ALU, 0, 0, 0, 0, 0, -1};
    int prev_load_dest = -1, have_prev = 0;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
        char *disas = qemu_plugin_insn_disas(insn);
        char mn[24];
        const char *ops;
        split(disas ? disas : "", mn, sizeof mn, &ops);
        insn_class c = riscv ? classify_riscv(mn, ops) : classify_thumb(mn, ops);
        static const int kind_feature[] = {F_ALU, F_MUL, F_MULL, F_DIV, F_LOAD, F_LOAD_LIT, F_STORE, F_LOAD_DOUBLE,
                                           F_LDM, F_STM, F_BRANCH, F_IT, F_SYSTEM, F_FPU};
        add(t, F_INSNS, 1);
        add(t, F_BYTES, (int)qemu_plugin_insn_size(insn));
        add(t, kind_feature[c.kind], 1);
        if (c.kind == K_LDM)
            add(t, F_LDM_REGS, c.regs);
        if (c.kind == K_STM)
            add(t, F_STM_REGS, c.regs);
        if (c.call)
            add(t, F_CALL, 1);
        if (c.table)
            add(t, F_TABLE_BRANCH, 1);
        int mem = c.kind == K_LOAD || c.kind == K_LOAD_LIT || c.kind == K_STORE;
        if (mem && have_prev) {
            int after_load = prev.kind == K_LOAD || prev.kind == K_LOAD_LIT;
            if (after_load && !address_uses(ops, prev_load_dest))
                add(t, F_PIPELINED, 1);
            if (prev.kind == K_STORE)
                add(t, F_AFTER_STORE, 1);
            if (prev.dest >= 0 && address_uses(ops, prev.dest))
                add(t, F_ADDR_DEP, 1);
        }
        if (c.kind == K_LOAD_LIT && in_flash(literal_address(vaddr, ops)))
            t->literals[t->n_literals++] = literal_address(vaddr, ops) / line_bytes;
        prev_load_dest = (c.kind == K_LOAD || c.kind == K_LOAD_LIT) ? reg_at(ops) : -1;
        prev = c;
        have_prev = 1;
        t->end = vaddr + qemu_plugin_insn_size(insn);
        if (i == n - 1) {
            t->ends_branch = (uint8_t)c.writes_pc;
            t->conditional = (uint8_t)c.conditional;
        }
        free(disas);
    }
    return t;
}

/* One description per block of code, however often QEMU translates it again. */
static tb_info *lookup(struct qemu_plugin_tb *tb) {
    uint64_t start = qemu_plugin_tb_vaddr(tb);
    size_t n = qemu_plugin_tb_n_insns(tb);
    uint64_t end = n ? qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, n - 1)) : start;
    unsigned h = (unsigned)((start >> 1) ^ (start >> 17) ^ n) % TB_HASH;
    for (tb_info *t = tb_table[h]; t; t = t->next)
        if (t->start == start && t->end > end && t->adds[0].feature == F_INSNS && t->adds[0].n == n)
            return t;
    tb_info *t = describe(tb);
    t->next = tb_table[h];
    tb_table[h] = t;
    return t;
}

/* ------------------------------------------------------------------ execution */
static void fetch(const tb_info *t, int jumped) {
    uint64_t first = t->start / line_bytes, last = (t->end - 1) / line_bytes;
    if (!in_flash(t->start))
        return;
    /* Entering a block in the middle of a line that the previous block ended in costs no fetch. */
    uint64_t from = (!jumped && last_tb && (last_tb->end - 1) / line_bytes == first) ? first + 1 : first;
    for (uint64_t line = from; line <= last; line++) {
        int demand = line == first && jumped;
        counts[F_FETCH_LINES]++;
        if (!cache_lookup(&icache, line, demand || !fill_on_demand))
            counts[demand ? F_FETCH_MISS_TAKEN : F_FETCH_MISS_SEQ]++;
    }
}

static void tb_exec(unsigned int vcpu, void *udata) {
    (void)vcpu;
    tb_info *t = udata;
    int jumped = 0;
    if (last_tb) {
        if (t->start != last_tb->end) {
            jumped = 1;
            counts[last_tb->ends_branch ? F_TAKEN : F_REDIRECT]++;
        } else if (last_tb->ends_branch && last_tb->conditional) {
            counts[F_NOT_TAKEN]++;
        }
    }
    fetch(t, jumped);
    for (unsigned i = 0; i < t->n_literals; i++)
        if (!cache_access(&dcache, t->literals[i]))
            counts[F_LITERAL_MISS]++;
    if (t->pending++ == 0) {
        t->dirty_next = pending_list;
        pending_list = t;
    }
    last_tb = t;
}

static void write_row(uint32_t index) {
    uint64_t row[N_FEATURES];
    flush();
    for (int f = 0; f < N_FEATURES; f++)
        row[f] = counts[f] - excluded[f] - (holding ? counts[f] - held_at[f] : 0);
    uint32_t head[2] = {index, holds};
    fwrite(head, sizeof head, 1, out);
    fwrite(row, sizeof row, 1, out);
}

static void on_snap(unsigned int vcpu, void *udata) {
    (void)vcpu;
    write_row((uint32_t)(uintptr_t)udata);
}

static void on_hold(unsigned int vcpu, void *udata) {
    (void)vcpu, (void)udata;
    flush();
    if (!holding) {
        memcpy(held_at, counts, sizeof counts);
        holding = 1;
        holds++;
    }
    fflush(out); /* the host reads what came before, while the guest talks to it */
}

static void on_resume(unsigned int vcpu, void *udata) {
    (void)vcpu, (void)udata;
    flush();
    if (holding) {
        for (int f = 0; f < N_FEATURES; f++)
            excluded[f] += counts[f] - held_at[f];
        holding = 0;
    }
}

static void on_flush(unsigned int vcpu, void *udata) {
    (void)vcpu, (void)udata;
    fflush(out);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, lookup(tb));
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
        for (unsigned s = 0; s < n_snaps; s++)
            if (vaddr == snap_addr[s])
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_snap, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)s);
        if (vaddr == hold_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_hold, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (vaddr == resume_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_resume, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (vaddr == flush_addr) /* registered after the snapshots: their rows are flushed too */
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_flush, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

static void at_exit(qemu_plugin_id_t id, void *udata) {
    (void)id, (void)udata;
    write_row(TB_EXIT_ROW);
    fclose(out);
}

static int fail(const char *why, const char *arg) {
    char text[256];
    snprintf(text, sizeof text, "tb_cycles: %s: %s\n", why, arg);
    qemu_plugin_outs(text);
    return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            return fail("an argument needs NAME=VALUE", argv[i]);
        *eq = 0;
        const char *key = argv[i], *val = eq + 1;
        if (!strcmp(key, "out"))
            path = val;
        else if (!strcmp(key, "snap") && n_snaps < TB_MAX_SNAPS)
            snap_addr[n_snaps++] = strtoull(val, NULL, 0);
        else if (!strcmp(key, "hold"))
            hold_addr = strtoull(val, NULL, 0);
        else if (!strcmp(key, "resume"))
            resume_addr = strtoull(val, NULL, 0);
        else if (!strcmp(key, "flush"))
            flush_addr = strtoull(val, NULL, 0);
        else if (!strcmp(key, "flash")) {
            char *colon;
            flash_base = strtoull(val, &colon, 0);
            flash_size = *colon == ':' ? strtoull(colon + 1, NULL, 0) : 0;
        } else if (!strcmp(key, "line"))
            line_bytes = (uint32_t)strtoul(val, NULL, 0);
        else if (!strcmp(key, "lines"))
            cache_lines = (uint32_t)strtoul(val, NULL, 0);
        else if (!strcmp(key, "ways"))
            cache_ways = (uint32_t)strtoul(val, NULL, 0);
        else if (!strcmp(key, "dlines"))
            dcache_lines = (uint32_t)strtoul(val, NULL, 0);
        else if (!strcmp(key, "fill"))
            fill_on_demand = !strcmp(val, "demand");
        else if (!strcmp(key, "isa"))
            riscv = !strcmp(val, "riscv");
        else
            return fail("unknown argument", key);
    }
    if (!path)
        return fail("missing argument", "out=FILE");
    if (line_bytes == 0)
        return fail("line must be above 0", "line");
    out = fopen(path, "wb");
    if (!out)
        return fail("cannot write", path);
    cache_init(&icache, cache_lines, cache_ways);
    cache_init(&dcache, dcache_lines, dcache_lines);
    uint32_t head[2] = {TB_VERSION, N_FEATURES};
    fwrite("TBCY", 4, 1, out);
    fwrite(head, sizeof head, 1, out);
    for (int f = 0; f < N_FEATURES; f++)
        fwrite(feature_names[f], strlen(feature_names[f]) + 1, 1, out);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
