/* SPDX-License-Identifier: Apache-2.0 */
/* tbcount: a valgrind tool that counts the guest instructions a program executes, exactly,
 * and returns the running count to the program through a client request
 * (agent/src/posix/icount/posix_icount.c), so the agent stamps the count into its own trace records
 * (docs/metrics.md). Built by tlsbench.builder.tbcount against Debian's valgrind package.
 *
 * Counting: one 64-bit add per superblock exit of the instructions (IMarks) passed since the
 * previous add; before each side exit and before the final jump, so a client request (which
 * ends a superblock) sees every instruction before it. RDTSC returns the count too: code that
 * mixes the time stamp counter into entropy (mbed TLS) or a nonce (OpenSSL) then takes the
 * same path in every run. */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "valgrind.h"

/* The request posix_icount.c makes; the two must agree. */
#define TB_VG_ICOUNT (VG_USERREQ_TOOL_BASE('T', 'B') + 1)
#define TB_RDTSC_HELPER "amd64g_dirtyhelper_RDTSC"

static ULong tb_icount;

static ULong tb_virtual_rdtsc(void) { return tb_icount; }

static void tb_add_count(IRSB *sb, ULong n) {
    if (n == 0)
        return;
    IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
    IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
    IRExpr *addr = mkIRExpr_HWord((HWord)&tb_icount);
    addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, addr)));
    addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), IRExpr_Const(IRConst_U64(n)))));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, addr, IRExpr_RdTmp(sum)));
}

static Bool tb_is_rdtsc(const IRStmt *st) {
    return st->tag == Ist_Dirty && VG_(strcmp)(st->Ist.Dirty.details->cee->name, TB_RDTSC_HELPER) == 0;
}

static IRSB *tb_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *arch, IRType gw, IRType hw) {
    IRSB *out = deepCopyIRSBExceptStmts(in);
    ULong pending = 0;
    for (Int i = 0; i < in->stmts_used; i++) {
        IRStmt *st = in->stmts[i];
        if (!st || st->tag == Ist_NoOp)
            continue;
        if (st->tag == Ist_IMark)
            pending++;
        if (st->tag == Ist_Exit) { /* a side exit leaves after the instruction holding it */
            tb_add_count(out, pending);
            pending = 0;
        }
        if (tb_is_rdtsc(st))
            st->Ist.Dirty.details->cee = mkIRCallee(0, "tb_virtual_rdtsc", (void *)tb_virtual_rdtsc);
        addStmtToIRSB(out, st);
    }
    tb_add_count(out, pending);
    return out;
}

static Bool tb_client_request(ThreadId tid, UWord *args, UWord *ret) {
    if (args[0] != TB_VG_ICOUNT)
        return False;
    *ret = (UWord)tb_icount;
    return True;
}

static void tb_post_clo_init(void) {}

static void tb_fini(Int exitcode) {}

static void tb_pre_clo_init(void) {
    VG_(details_name)("tbcount");
    VG_(details_version)("1");
    VG_(details_description)("exact guest instruction counts for tlsbench trace records");
    VG_(details_copyright_author)("tlsbench, Apache-2.0");
    VG_(details_bug_reports_to)("the tlsbench repository");
    VG_(basic_tool_funcs)(tb_post_clo_init, tb_instrument, tb_fini);
    VG_(needs_client_requests)(tb_client_request);
}

VG_DETERMINE_INTERFACE_VERSION(tb_pre_clo_init)
