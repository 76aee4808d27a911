/* jit_ir.c - the small IR helpers every code generator of the JIT uses
 * (jit_expr.c's expressions, jit_kernel.c's loops, jit_fold.c's state
 * update): the LLVM type of a value or a row field, constants that are
 * host pointers, loads and stores at an offset, and calls of C helpers by
 * address.  Apart from jit_expr.c because they are not about expressions.
 */
#include <stdint.h>

#include "jit_int.h"

LLVMTypeRef jit_type_of(jit_cg *g, irep r) {
  switch (r) {
  case R_I64:
    return g->i64;
  case R_F64:
    return g->f64;
  case R_DEC:
    return g->i128;
  default:
    return g->ptr;
  }
}

LLVMTypeRef jit_field_type(jit_cg *g, sl_ptype p, unsigned *align) {
  switch (p) {
  case SL_P_BOOL:
  case SL_P_I8:
    *align = 1;
    return g->i8;
  case SL_P_I16:
    *align = 2;
    return g->i16;
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    *align = 4;
    return g->i32;
  case SL_P_F32:
    *align = 4;
    return g->f32;
  case SL_P_F64:
    *align = 8;
    return g->f64;
  case SL_P_DEC128:
    *align = 8; /* rows align 16-byte fields to 8 */
    return g->i128;
  default: /* I64, TS, IV_DT, DEC64 */
    *align = 8;
    return g->i64;
  }
}

LLVMValueRef jit_const_ptr(jit_cg *g, const void *p) {
  return LLVMConstIntToPtr(LLVMConstInt(g->i64, (uint64_t)(uintptr_t)p, 0),
                           g->ptr);
}

LLVMValueRef jit_at(jit_cg *g, LLVMValueRef base, uint64_t off, LLVMTypeRef t) {
  LLVMValueRef idx = LLVMConstInt(g->i64, off, 0);
  LLVMValueRef p = off ? LLVMBuildGEP2(g->b, g->i8, base, &idx, 1, "") : base;
  return LLVMBuildBitCast(g->b, p, LLVMPointerType(t, 0), "");
}

LLVMValueRef jit_load(jit_cg *g, LLVMTypeRef t, LLVMValueRef p,
                      unsigned align) {
  LLVMValueRef l = LLVMBuildLoad2(g->b, t, p, "");
  LLVMSetAlignment(l, align);
  return l;
}

LLVMValueRef jit_load_input(jit_cg *g, LLVMTypeRef t, LLVMValueRef p,
                            unsigned align) {
  LLVMValueRef l = jit_load(g, t, p, align);
  unsigned kind = LLVMGetMDKindIDInContext(g->ctx, "invariant.load", 14);
  LLVMSetMetadata(l, kind, LLVMMDNodeInContext(g->ctx, NULL, 0));
  return l;
}

LLVMValueRef jit_phi2(jit_cg *g, LLVMTypeRef t, LLVMValueRef a,
                      LLVMBasicBlockRef ab, LLVMValueRef b,
                      LLVMBasicBlockRef bb, const char *name) {
  LLVMValueRef phi = LLVMBuildPhi(g->b, t, name);
  LLVMValueRef vals[2] = {a, b};
  LLVMBasicBlockRef blks[2] = {ab, bb};
  LLVMAddIncoming(phi, vals, blks, 2);
  return phi;
}

void jit_store(jit_cg *g, LLVMValueRef v, LLVMValueRef p, unsigned align) {
  LLVMValueRef s = LLVMBuildStore(g->b, v, p);
  LLVMSetAlignment(s, align);
}

void jit_add_to(jit_cg *g, LLVMValueRef p, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  unsigned align = LLVMGetIntTypeWidth(t) / 8;
  jit_store(g, LLVMBuildAdd(g->b, jit_load(g, t, p, align), v, ""), p, align);
}

LLVMValueRef jit_call_c(jit_cg *g, LLVMTypeRef ft, void *addr,
                        LLVMValueRef *args, unsigned nargs) {
  LLVMValueRef fp =
      LLVMConstIntToPtr(LLVMConstInt(g->i64, (uint64_t)(uintptr_t)addr, 0),
                        LLVMPointerType(ft, 0));
  return LLVMBuildCall2(g->b, ft, fp, args, nargs, "");
}
