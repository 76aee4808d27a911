/* jit_expr.c - interpreter program nodes (interp_int.h) -> LLVM IR, one row
 * at a time.
 *
 * Every node becomes straight-line code on (null, value) pairs with the
 * interpreter's exact semantics:
 *   - strict operators evaluate all their operands (as the interpreter does
 *     over a whole vector), compute, and check for errors only where the
 *     result is not NULL;
 *   - AND/OR, CASE/IF and COALESCE branch, so later operands run only for
 *     the rows that need them (`CASE WHEN b <> 0 THEN a / b END`);
 *   - integer results are checked against the node's lo..hi range with
 *     llvm.s*.with.overflow; division by zero is checked before dividing;
 *   - anything that can fail jumps to the kernel's error block, which
 *     returns JIT_ERROR: the caller redoes the batch with the interpreter,
 *     which then reports the error with its usual message.
 * A node the code generator does not handle (jit_check names the first)
 * is evaluated, with its whole subtree, by the interpreter on the current
 * row through a call (gen_interp).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_int.h"

/* A helper's address as a data pointer (C forbids the direct cast). */
#define FN(f) ((void *)(uintptr_t)(f))

static LLVMBasicBlockRef block(jit_cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

static LLVMValueRef i64c(jit_cg *g, int64_t v) {
  return LLVMConstInt(g->i64, (uint64_t)v, 1);
}

static LLVMValueRef i1c(jit_cg *g, bool v) {
  return LLVMConstInt(g->i1, v, 0);
}

static LLVMValueRef i128c(jit_cg *g, i128 v) {
  uint64_t w[2] = {(uint64_t)v, (uint64_t)((unsigned __int128)v >> 64)};
  return LLVMConstIntOfArbitraryPrecision(g->i128, 2, w);
}

static const sl_str empty_str; /* the value of a NULL string */

static LLVMValueRef zero_of(jit_cg *g, irep r) {
  switch (r) {
  case R_I64:
    return i64c(g, 0);
  case R_F64:
    return LLVMConstReal(g->f64, 0.0);
  case R_DEC:
    return i128c(g, 0);
  default:
    return jit_const_ptr(g, &empty_str);
  }
}

/* Branch to the error block when cond (i1) holds. */
static void error_if(jit_cg *g, LLVMValueRef cond) {
  LLVMBasicBlockRef ok = block(g, "ok");
  LLVMBuildCondBr(g->b, cond, g->err_bb, ok);
  LLVMPositionBuilderAtEnd(g->b, ok);
}

static LLVMValueRef not1(jit_cg *g, LLVMValueRef x) {
  return LLVMBuildXor(g->b, x, i1c(g, 1), "");
}

static LLVMValueRef to_bool64(jit_cg *g, LLVMValueRef x) {
  return LLVMBuildZExt(g->b, x, g->i64, "");
}

static LLVMValueRef is_true64(jit_cg *g, LLVMValueRef v) {
  return LLVMBuildICmp(g->b, LLVMIntNE, v, i64c(g, 0), "");
}

/* Out-of-range test of an int64 against the node's range. */
static LLVMValueRef out_of_range(jit_cg *g, const inode *n, LLVMValueRef r) {
  return LLVMBuildOr(
      g->b, LLVMBuildICmp(g->b, LLVMIntSLT, r, i64c(g, n->lo), ""),
      LLVMBuildICmp(g->b, LLVMIntSGT, r, i64c(g, n->hi), ""), "");
}

/* Code that must run only for non-NULL operands (it may dereference a
 * string or fail): guard_begin branches around it, guard_end merges its
 * value (and null flag) with the NULL path's. */
typedef struct guard {
  LLVMBasicBlockRef from, merge;
} guard;

static void guard_begin(jit_cg *g, LLVMValueRef null, guard *gd) {
  gd->from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef body = block(g, "notnull");
  gd->merge = block(g, "merge");
  LLVMBuildCondBr(g->b, null, gd->merge, body);
  LLVMPositionBuilderAtEnd(g->b, body);
}

static LLVMValueRef phi2(jit_cg *g, LLVMTypeRef t, LLVMValueRef a,
                         LLVMBasicBlockRef ab, LLVMValueRef b,
                         LLVMBasicBlockRef bb) {
  LLVMValueRef p = LLVMBuildPhi(g->b, t, "");
  LLVMValueRef vals[2] = {a, b};
  LLVMBasicBlockRef blocks[2] = {ab, bb};
  LLVMAddIncoming(p, vals, blocks, 2);
  return p;
}

/* Ends the guarded code with value v (and, if vnull is not NULL, a null
 * flag computed inside); returns the merged value, *null_out the merged
 * null flag (NULL path: true). */
static LLVMValueRef guard_end(jit_cg *g, guard *gd, LLVMTypeRef t,
                              LLVMValueRef zero, LLVMValueRef v,
                              LLVMValueRef vnull, LLVMValueRef *null_out) {
  LLVMBasicBlockRef end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, gd->merge);
  LLVMPositionBuilderAtEnd(g->b, gd->merge);
  LLVMValueRef r = phi2(g, t, zero, gd->from, v, end);
  if (null_out)
    *null_out =
        phi2(g, g->i1, i1c(g, 1), gd->from, vnull ? vnull : i1c(g, 0), end);
  return r;
}

/* Merge n (value, block) pairs at the current block (already created and
 * positioned by the caller). */
static jit_val merge_vals(jit_cg *g, irep rep, int n, const jit_val *vals,
                          LLVMBasicBlockRef *from) {
  LLVMValueRef pn = LLVMBuildPhi(g->b, g->i1, "");
  LLVMValueRef pv = LLVMBuildPhi(g->b, jit_type_of(g, rep), "");
  for (int i = 0; i < n; i++) {
    LLVMAddIncoming(pn, (LLVMValueRef *)&vals[i].null, &from[i], 1);
    LLVMAddIncoming(pv, (LLVMValueRef *)&vals[i].v, &from[i], 1);
  }
  jit_val r = {pn, pv};
  return r;
}

static LLVMValueRef intrinsic(jit_cg *g, const char *name, LLVMTypeRef t,
                              LLVMTypeRef *ft) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  *ft = LLVMIntrinsicGetType(g->ctx, id, &t, 1);
  return LLVMGetIntrinsicDeclaration(g->mod, id, &t, 1);
}

/* x op y with overflow: the result, *ov the overflow flag. */
static LLVMValueRef arith_ov(jit_cg *g, const char *name, LLVMValueRef x,
                             LLVMValueRef y, LLVMValueRef *ov) {
  LLVMTypeRef ft;
  LLVMValueRef f = intrinsic(g, name, g->i64, &ft);
  LLVMValueRef args[2] = {x, y};
  LLVMValueRef s = LLVMBuildCall2(g->b, ft, f, args, 2, "");
  *ov = LLVMBuildExtractValue(g->b, s, 1, "");
  return LLVMBuildExtractValue(g->b, s, 0, "");
}

static LLVMValueRef round_float(jit_cg *g, const inode *n, LLVMValueRef d) {
  if (n->type->kind != SL_TYPE_FLOAT)
    return d;
  return LLVMBuildFPExt(g->b, LLVMBuildFPTrunc(g->b, d, g->f32, ""), g->f64,
                        "");
}

/* ---- what is supported -------------------------------------------------
 */

static const char *fn_name(const inode *n) {
  if (n->src && n->src->kind == SL_BEXPR_CALL && n->src->fn)
    return n->src->fn->name;
  return n->fn == F_SIMILAR ? "SIMILAR TO" : "this function";
}

static const char *nope(char *buf, size_t len, const char *what) {
  snprintf(buf, len, "JIT does not handle %s", what);
  return buf;
}

/* NULL if node n itself (its operands aside) compiles to native code. */
static const char *node_reason(const inode *n, char *buf, size_t len) {
  switch (n->kind) {
  case N_CONST:
  case N_LOAD:
  case N_AND:
  case N_OR:
  case N_NOT:
  case N_IS:
  case N_CASE:
  case N_COALESCE:
  case N_NULLIF:
  case N_IN:
  case N_CMP:
    return NULL;
  case N_CAST:
    if (n->rep == R_STR && ix_kind_class(n->args[0]->type) != K_NULL)
      return nope(buf, len, "CAST to a string");
    return NULL;
  case N_NEG:
    return n->rep == R_DEC ? nope(buf, len, "DECIMAL negation") : NULL;
  case N_ARITH:
    return n->rep == R_STR ? nope(buf, len, "string arithmetic") : NULL;
  case N_LIKE:
    return n->aux ? NULL : nope(buf, len, "LIKE with a non-constant pattern");
  case N_CONCAT:
    return nope(buf, len, "||");
  case N_TIME_ADD:
    if (n->args[1]->type->kind == SL_TYPE_INTERVAL_DAY_TIME &&
        (n->type->kind == SL_TYPE_TIMESTAMP ||
         n->type->kind == SL_TYPE_TIMESTAMP_LTZ))
      return NULL;
    return nope(buf, len, "this date/time arithmetic");
  case N_IV_SCALE:
    return nope(buf, len, "interval scaling");
  case N_DICTIONARY:
    return nope(buf, len, "a dictionary's strings");
  case N_CALL:
    switch (n->fn) {
    case F_ABS:
    case F_FLOOR:
    case F_CEIL:
      return n->rep == R_DEC ? nope(buf, len, fn_name(n)) : NULL;
    case F_SQRT:
    case F_LN:
    case F_LOG10:
    case F_EXP:
    case F_POWER:
    case F_CHAR_LENGTH:
      return NULL;
    case F_EXTRACT:
    case F_FLOOR_TIME:
      return n->args[0]->rep == R_I64 ? NULL : nope(buf, len, fn_name(n));
    default:
      return nope(buf, len, fn_name(n));
    }
  }
  return nope(buf, len, "this expression");
}

const char *jit_check(const inode *n, char *buf, size_t len) {
  const char *why = node_reason(n, buf, len);
  for (int i = 0; i < n->nargs && !why; i++)
    why = jit_check(n->args[i], buf, len);
  return why;
}

/* ---- code generation -----------------------------------------------------
 */

/* Field `field` (at offset, of physical type ptype) of the row at row,
 * widened to representation rep. */
static jit_val load_field(jit_cg *g, LLVMValueRef row, int field,
                          uint64_t offset, sl_ptype ptype, irep rep) {
  jit_val r;
  LLVMValueRef nb =
      jit_load_input(g, g->i8, jit_at(g, row, (uint64_t)field >> 3, g->i8), 1);
  nb = LLVMBuildLShr(g->b, nb, LLVMConstInt(g->i8, (uint64_t)field & 7, 0), "");
  r.null = LLVMBuildTrunc(g->b, nb, g->i1, "");
  if (ptype == SL_P_STR) {
    r.v = jit_at(g, row, offset, g->i8); /* the sl_str itself */
    return r;
  }
  unsigned align;
  LLVMTypeRef t = jit_field_type(g, ptype, &align);
  LLVMValueRef v = jit_load_input(g, t, jit_at(g, row, offset, t), align);
  /* widen to the representation: int64 (BOOLEAN zero-extended), double,
   * i128 */
  LLVMTypeRef want = jit_type_of(g, rep);
  if (t == g->f32)
    v = LLVMBuildFPExt(g->b, v, g->f64, "");
  else if (t != want)
    v = ptype == SL_P_BOOL ? LLVMBuildZExt(g->b, v, want, "")
                           : LLVMBuildSExt(g->b, v, want, "");
  r.v = v;
  return r;
}

static jit_val gen_load(jit_cg *g, const inode *n) {
  LLVMValueRef row = g->row;
  int field = n->field;
  uint64_t offset = n->offset;
  if (g->jsplit >= 0) {
    /* a joined row that is never built: the stream's or the table's */
    const sl_row_layout *l = g->jstream;
    if (field >= g->jsplit) {
      field -= g->jsplit;
      row = g->trow;
      l = g->jtable;
    }
    offset = l->fields[field].offset;
  }
  return load_field(g, row, field, offset, n->ptype, n->rep);
}

static jit_val gen_const(jit_cg *g, const inode *n) {
  jit_val r = {i1c(g, n->cnull), NULL};
  switch (n->rep) {
  case R_I64:
    r.v = i64c(g, n->ci);
    break;
  case R_F64:
    r.v = LLVMConstReal(g->f64, n->cf);
    break;
  case R_DEC:
    r.v = i128c(g, n->cd);
    break;
  case R_STR:
    r.v = n->cnull ? zero_of(g, R_STR) : jit_const_ptr(g, &n->cs);
    break;
  }
  return r;
}

/* Store v (of representation rep) into a 16-byte helper slot; strings are
 * passed as their own pointer. */
static LLVMValueRef to_slot(jit_cg *g, LLVMValueRef slot, irep rep,
                            LLVMValueRef v) {
  if (rep == R_STR)
    return v;
  jit_store(
      g, v,
      LLVMBuildBitCast(g->b, slot, LLVMPointerType(jit_type_of(g, rep), 0), ""),
      16);
  return slot;
}

static jit_val gen_cast(jit_cg *g, const inode *n) {
  const inode *x = n->args[0];
  jit_val a = jit_gen(g, x);
  int from = ix_kind_class(x->type), to = ix_kind_class(n->type);
  jit_val r = {a.null, NULL};
  if (from == K_NULL) {
    r.null = i1c(g, 1);
    r.v = zero_of(g, n->rep);
    return r;
  }
  bool try_ = n->negated;
  if ((from == K_INT || from == K_BOOL) && to == K_INT) {
    LLVMValueRef bad =
        LLVMBuildAnd(g->b, out_of_range(g, n, a.v), not1(g, a.null), "");
    if (try_)
      r.null = LLVMBuildOr(g->b, a.null, bad, "");
    else
      error_if(g, bad);
    r.v = a.v;
    return r;
  }
  if ((from == K_INT || from == K_BOOL) && to == K_BOOL) {
    r.v = to_bool64(g, is_true64(g, a.v));
    return r;
  }
  if ((from == K_INT || from == K_BOOL) && to == K_FLT) {
    /* int64 -> float rounds once, as the interpreter's (float)v does */
    if (n->type->kind == SL_TYPE_FLOAT)
      r.v = LLVMBuildFPExt(g->b, LLVMBuildSIToFP(g->b, a.v, g->f32, ""), g->f64,
                           "");
    else
      r.v = LLVMBuildSIToFP(g->b, a.v, g->f64, "");
    return r;
  }
  if (from == K_FLT && to == K_FLT) {
    r.v = round_float(g, n, a.v);
    return r;
  }
  if (from == K_INT && to == K_DEC && n->scale == 0 && n->prec >= 19) {
    r.v = LLVMBuildSExt(g->b, a.v, g->i128, "");
    return r;
  }
  /* Everything else: the interpreter's conversion of one value. */
  guard gd;
  guard_begin(g, a.null, &gd);
  LLVMValueRef arg = to_slot(g, g->slot_a, x->rep, a.v);
  LLVMTypeRef ps[3] = {g->ptr, g->ptr, g->ptr};
  LLVMTypeRef ft = LLVMFunctionType(g->i32, ps, 3, 0);
  LLVMValueRef args[3] = {jit_const_ptr(g, n), arg, g->slot_r};
  LLVMValueRef rc = jit_call_c(g, ft, FN(sl_jit_rt_cast), args, 3);
  LLVMValueRef bad =
      LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), "");
  LLVMValueRef vnull = i1c(g, 0);
  if (try_)
    vnull = bad;
  else
    error_if(g, bad);
  LLVMTypeRef t = jit_type_of(g, n->rep);
  LLVMValueRef v = jit_load(
      g, t, LLVMBuildBitCast(g->b, g->slot_r, LLVMPointerType(t, 0), ""), 16);
  r.v = guard_end(g, &gd, t, zero_of(g, n->rep), v, vnull, &r.null);
  return r;
}

static jit_val gen_neg(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  jit_val r = {a.null, NULL};
  if (n->rep == R_F64) {
    r.v = LLVMBuildFNeg(g->b, a.v, "");
    return r;
  }
  LLVMValueRef neg = LLVMBuildSub(g->b, i64c(g, 0), a.v, "");
  LLVMValueRef bad =
      LLVMBuildICmp(g->b, LLVMIntEQ, a.v, i64c(g, INT64_MIN), "");
  bad = LLVMBuildOr(g->b, bad, out_of_range(g, n, neg), "");
  error_if(g, LLVMBuildAnd(g->b, bad, not1(g, a.null), ""));
  r.v = neg;
  return r;
}

static jit_val gen_int_arith(jit_cg *g, const inode *n, jit_val a, jit_val b) {
  jit_val r = {LLVMBuildOr(g->b, a.null, b.null, ""), NULL};
  LLVMValueRef ok = not1(g, r.null);
  if (n->op == SL_OP_ADD || n->op == SL_OP_SUB || n->op == SL_OP_MUL) {
    const char *name = n->op == SL_OP_ADD   ? "llvm.sadd.with.overflow"
                       : n->op == SL_OP_SUB ? "llvm.ssub.with.overflow"
                                            : "llvm.smul.with.overflow";
    LLVMValueRef ov;
    r.v = arith_ov(g, name, a.v, b.v, &ov);
    LLVMValueRef bad = LLVMBuildOr(g->b, ov, out_of_range(g, n, r.v), "");
    error_if(g, LLVMBuildAnd(g->b, bad, ok, ""));
    return r;
  }
  /* DIV / MOD: never divide by 0 or INT64_MIN by -1 (both trap). */
  LLVMValueRef zero = LLVMBuildICmp(g->b, LLVMIntEQ, b.v, i64c(g, 0), "");
  error_if(g, LLVMBuildAnd(g->b, zero, ok, ""));
  LLVMValueRef m1 = LLVMBuildICmp(g->b, LLVMIntEQ, b.v, i64c(g, -1), "");
  LLVMValueRef safe = LLVMBuildSelect(g->b, LLVMBuildOr(g->b, m1, zero, ""),
                                      i64c(g, 1), b.v, "");
  if (n->op == SL_OP_MOD) {
    r.v = LLVMBuildSelect(g->b, m1, i64c(g, 0),
                          LLVMBuildSRem(g->b, a.v, safe, ""), "");
    return r;
  }
  LLVMValueRef neg = LLVMBuildSub(g->b, i64c(g, 0), a.v, "");
  LLVMValueRef bad = LLVMBuildOr(
      g->b, LLVMBuildICmp(g->b, LLVMIntEQ, a.v, i64c(g, INT64_MIN), ""),
      out_of_range(g, n, neg), "");
  error_if(g, LLVMBuildAnd(g->b, LLVMBuildAnd(g->b, bad, m1, ""), ok, ""));
  r.v = LLVMBuildSelect(g->b, m1, neg, LLVMBuildSDiv(g->b, a.v, safe, ""), "");
  return r;
}

static jit_val gen_arith(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  jit_val b = jit_gen(g, n->args[1]);
  if (n->rep == R_I64)
    return gen_int_arith(g, n, a, b);
  jit_val r = {LLVMBuildOr(g->b, a.null, b.null, ""), NULL};
  if (n->rep == R_F64) {
    switch (n->op) {
    case SL_OP_ADD:
      r.v = LLVMBuildFAdd(g->b, a.v, b.v, "");
      break;
    case SL_OP_SUB:
      r.v = LLVMBuildFSub(g->b, a.v, b.v, "");
      break;
    case SL_OP_MUL:
      r.v = LLVMBuildFMul(g->b, a.v, b.v, "");
      break;
    case SL_OP_DIV:
      r.v = LLVMBuildFDiv(g->b, a.v, b.v, "");
      break;
    default: {
      LLVMTypeRef ps[2] = {g->f64, g->f64};
      LLVMValueRef args[2] = {a.v, b.v};
      r.v = jit_call_c(g, LLVMFunctionType(g->f64, ps, 2, 0),
                       FN(sl_jit_rt_fmod), args, 2);
    }
    }
    r.v = round_float(g, n, r.v);
    return r;
  }
  /* DECIMAL: the interpreter's exact 128-bit arithmetic, per value. */
  guard gd;
  guard_begin(g, r.null, &gd);
  to_slot(g, g->slot_a, R_DEC, a.v);
  to_slot(g, g->slot_b, R_DEC, b.v);
  LLVMTypeRef ps[4] = {g->ptr, g->ptr, g->ptr, g->ptr};
  LLVMValueRef args[4] = {jit_const_ptr(g, n), g->slot_a, g->slot_b, g->slot_r};
  LLVMValueRef rc = jit_call_c(g, LLVMFunctionType(g->i32, ps, 4, 0),
                               FN(sl_jit_rt_dec_arith), args, 4);
  error_if(g,
           LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""));
  LLVMValueRef v = jit_load(
      g, g->i128,
      LLVMBuildBitCast(g->b, g->slot_r, LLVMPointerType(g->i128, 0), ""), 16);
  LLVMValueRef dummy;
  r.v = guard_end(g, &gd, g->i128, i128c(g, 0), v, NULL, &dummy);
  return r;
}

static LLVMIntPredicate int_pred(int op) {
  switch (op) {
  case SL_OP_EQ:
    return LLVMIntEQ;
  case SL_OP_NE:
    return LLVMIntNE;
  case SL_OP_LT:
    return LLVMIntSLT;
  case SL_OP_LE:
    return LLVMIntSLE;
  case SL_OP_GT:
    return LLVMIntSGT;
  default:
    return LLVMIntSGE;
  }
}

/* x op y (both non-NULL for strings) as an i1. */
static LLVMValueRef compare(jit_cg *g, irep rep, int op, LLVMValueRef x,
                            LLVMValueRef y) {
  switch (rep) {
  case R_I64:
  case R_DEC:
    return LLVMBuildICmp(g->b, int_pred(op), x, y, "");
  case R_F64: {
    /* NaN equals NaN and is above every number (Java's Double.compare) */
    LLVMValueRef xn = LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, "");
    LLVMValueRef yn = LLVMBuildFCmp(g->b, LLVMRealUNO, y, y, "");
    LLVMValueRef gt = LLVMBuildZExt(
        g->b, LLVMBuildFCmp(g->b, LLVMRealOGT, x, y, ""), g->i32, "");
    LLVMValueRef lt = LLVMBuildZExt(
        g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, x, y, ""), g->i32, "");
    LLVMValueRef c3 = LLVMBuildSub(g->b, gt, lt, "");
    LLVMValueRef n3 = LLVMBuildSub(g->b, LLVMBuildZExt(g->b, xn, g->i32, ""),
                                   LLVMBuildZExt(g->b, yn, g->i32, ""), "");
    c3 = LLVMBuildSelect(g->b, LLVMBuildOr(g->b, xn, yn, ""), n3, c3, "");
    return LLVMBuildICmp(g->b, int_pred(op), c3, LLVMConstInt(g->i32, 0, 0),
                         "");
  }
  default: {
    if (op == SL_OP_EQ)
      return jit_str_eq(g, x, y);
    if (op == SL_OP_NE)
      return not1(g, jit_str_eq(g, x, y));
    LLVMTypeRef ps[2] = {g->ptr, g->ptr};
    LLVMValueRef args[2] = {x, y};
    LLVMValueRef c3 = jit_call_c(g, LLVMFunctionType(g->i32, ps, 2, 0),
                                 FN(sl_jit_rt_str_cmp), args, 2);
    return LLVMBuildICmp(g->b, int_pred(op), c3, LLVMConstInt(g->i32, 0, 0),
                         "");
  }
  }
}

/* Comparison of two evaluated values: (null, i1 result). */
static jit_val compare_vals(jit_cg *g, irep rep, int op, jit_val a, jit_val b) {
  jit_val r = {LLVMBuildOr(g->b, a.null, b.null, ""), NULL};
  if (rep != R_STR) {
    r.v = compare(g, rep, op, a.v, b.v);
    return r;
  }
  guard gd;
  guard_begin(g, r.null, &gd);
  LLVMValueRef c = compare(g, rep, op, a.v, b.v);
  LLVMValueRef dummy;
  r.v = guard_end(g, &gd, g->i1, i1c(g, 0), c, NULL, &dummy);
  return r;
}

static jit_val gen_cmp(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  jit_val b = jit_gen(g, n->args[1]);
  jit_val r = compare_vals(g, n->args[0]->rep, n->op, a, b);
  r.v = to_bool64(g, r.v);
  return r;
}

/* AND / OR: operand k runs only while the result is undecided.  The first
 * decisive operand (FALSE for AND, TRUE for OR) jumps to one merge block;
 * past the last, the result is NULL if an operand was, else the other
 * value.  One phi with an edge per operand keeps a generated chain of
 * thousands of conditions linear for LLVM (a phi per operand was not). */
static jit_val gen_andor(jit_cg *g, const inode *n) {
  const bool decisive = n->kind == N_OR;
  /* the merge block and its two phis first; edges are added as the
   * operands are generated */
  LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef done = block(g, "andor.done");
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef pnull = LLVMBuildPhi(g->b, g->i1, "");
  LLVMValueRef pv = LLVMBuildPhi(g->b, g->i1, "");
  LLVMPositionBuilderAtEnd(g->b, here);
  LLVMValueRef anynull = i1c(g, 0);
  LLVMValueRef dec = i1c(g, decisive), no = i1c(g, 0);
  for (int k = 0; k < n->nargs; k++) {
    jit_val b = jit_gen(g, n->args[k]);
    LLVMValueRef bdec = LLVMBuildAnd(
        g->b, not1(g, b.null),
        LLVMBuildICmp(g->b, LLVMIntEQ, is_true64(g, b.v), dec, ""), "");
    anynull = LLVMBuildOr(g->b, anynull, b.null, "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMAddIncoming(pnull, &no, &from, 1);
    LLVMAddIncoming(pv, &dec, &from, 1);
    LLVMBasicBlockRef next = block(g, "andor.next");
    LLVMBuildCondBr(g->b, bdec, done, next);
    LLVMPositionBuilderAtEnd(g->b, next);
  }
  /* no operand decided: NULL if one was NULL (the value is then unused) */
  LLVMBasicBlockRef last = LLVMGetInsertBlock(g->b);
  LLVMValueRef other = i1c(g, !decisive);
  LLVMAddIncoming(pnull, &anynull, &last, 1);
  LLVMAddIncoming(pv, &other, &last, 1);
  LLVMBuildBr(g->b, done);
  /* done was created before the operands' blocks; keep the function's
   * blocks in order of execution */
  LLVMMoveBasicBlockAfter(done, last);
  LLVMPositionBuilderAtEnd(g->b, done);
  jit_val o = {pnull, to_bool64(g, pv)};
  return o;
}

static jit_val gen_is(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  LLVMValueRef r;
  switch (n->op) {
  case SL_IS_NULL:
  case SL_IS_UNKNOWN:
    r = a.null;
    break;
  case SL_IS_TRUE:
    r = LLVMBuildAnd(g->b, not1(g, a.null), is_true64(g, a.v), "");
    break;
  default:
    r = LLVMBuildAnd(g->b, not1(g, a.null), not1(g, is_true64(g, a.v)), "");
    break;
  }
  if (n->negated)
    r = not1(g, r);
  jit_val o = {i1c(g, 0), to_bool64(g, r)};
  return o;
}

/* CASE / IF: WHEN k runs where no earlier WHEN was TRUE; THEN k where it
 * was; the last argument where none was. */
static jit_val gen_case(jit_cg *g, const inode *n) {
  int nb = n->nargs / 2 + 1;
  jit_val vals[nb];
  LLVMBasicBlockRef from[nb];
  LLVMBasicBlockRef done = block(g, "case.done");
  int m = 0;
  for (int k = 0; k + 1 < n->nargs; k += 2) {
    jit_val w = jit_gen(g, n->args[k]);
    LLVMValueRef taken =
        LLVMBuildAnd(g->b, not1(g, w.null), is_true64(g, w.v), "");
    LLVMBasicBlockRef then = block(g, "case.then"),
                      next = block(g, "case.next");
    LLVMBuildCondBr(g->b, taken, then, next);
    LLVMPositionBuilderAtEnd(g->b, then);
    vals[m] = jit_gen(g, n->args[k + 1]);
    from[m++] = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, next);
  }
  vals[m] = jit_gen(g, n->args[n->nargs - 1]);
  from[m++] = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  return merge_vals(g, n->rep, m, vals, from);
}

static jit_val gen_coalesce(jit_cg *g, const inode *n) {
  jit_val vals[n->nargs];
  LLVMBasicBlockRef from[n->nargs];
  LLVMBasicBlockRef done = block(g, "coalesce.done");
  for (int k = 0; k < n->nargs; k++) {
    jit_val a = jit_gen(g, n->args[k]);
    vals[k] = a;
    from[k] = LLVMGetInsertBlock(g->b);
    if (k + 1 == n->nargs) {
      LLVMBuildBr(g->b, done);
    } else {
      LLVMBasicBlockRef next = block(g, "coalesce.next");
      LLVMBuildCondBr(g->b, a.null, next, done);
      LLVMPositionBuilderAtEnd(g->b, next);
    }
  }
  LLVMPositionBuilderAtEnd(g->b, done);
  return merge_vals(g, n->rep, n->nargs, vals, from);
}

static jit_val gen_nullif(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  jit_val eq = jit_gen(g, n->args[1]);
  LLVMValueRef hit =
      LLVMBuildAnd(g->b, not1(g, eq.null), is_true64(g, eq.v), "");
  jit_val r = {LLVMBuildOr(g->b, a.null, hit, ""), a.v};
  return r;
}

/* x IN (...): TRUE if some value equals x; else NULL if x or some value is
 * NULL; else FALSE.  Every value is evaluated, as in the interpreter. */
static jit_val gen_in(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  irep rep = n->args[0]->rep;
  LLVMValueRef found = i1c(g, 0), anynull = a.null;
  if (n->aux) { /* the constants' set (interp_inset.c): a helper probes it */
    guard gd;
    guard_begin(g, a.null, &gd);
    LLVMValueRef arg = a.v;
    if (rep != R_STR) { /* by address, in a 16-byte helper slot */
      jit_store(g, a.v,
                LLVMBuildBitCast(g->b, g->slot_a,
                                 LLVMPointerType(jit_type_of(g, rep), 0), ""),
                rep == R_DEC ? 16 : 8);
      arg = g->slot_a;
    }
    LLVMTypeRef ps[2] = {g->ptr, g->ptr};
    LLVMValueRef args[2] = {jit_const_ptr(g, n->aux), arg};
    LLVMValueRef hit = jit_call_c(g, LLVMFunctionType(g->i32, ps, 2, 0),
                                  FN(sl_jit_rt_in_set), args, 2);
    hit = LLVMBuildICmp(g->b, LLVMIntNE, hit, LLVMConstInt(g->i32, 0, 0), "");
    LLVMValueRef dummy;
    found = guard_end(g, &gd, g->i1, i1c(g, 0), hit, NULL, &dummy);
    if (ix_inset_has_null(n->aux))
      anynull = i1c(g, 1);
  }
  for (int k = 1; k < n->nargs; k++) {
    const inode *y = n->args[k];
    if (y->kind == N_CONST && y->cnull) {
      anynull = i1c(g, 1);
      continue;
    }
    jit_val b = jit_gen(g, y);
    jit_val eq = compare_vals(g, rep, SL_OP_EQ, a, b);
    anynull = LLVMBuildOr(g->b, anynull, eq.null, "");
    found = LLVMBuildOr(g->b, found,
                        LLVMBuildAnd(g->b, not1(g, eq.null), eq.v, ""), "");
  }
  jit_val r;
  r.null = LLVMBuildAnd(g->b, not1(g, found), anynull, "");
  r.v = to_bool64(g, n->negated ? not1(g, found) : found);
  return r;
}

static jit_val gen_like(jit_cg *g, const inode *n) {
  jit_val r = {i1c(g, 0), NULL};
  jit_val s = {NULL, NULL};
  for (int k = 0; k < n->nargs; k++) {
    jit_val a = jit_gen(g, n->args[k]);
    if (k == 0)
      s = a;
    r.null = LLVMBuildOr(g->b, r.null, a.null, "");
  }
  guard gd;
  guard_begin(g, r.null, &gd);
  LLVMTypeRef ps[2] = {g->ptr, g->ptr};
  LLVMValueRef args[2] = {jit_const_ptr(g, n->aux), s.v};
  LLVMValueRef rc = jit_call_c(g, LLVMFunctionType(g->i32, ps, 2, 0),
                               FN(sl_jit_rt_like), args, 2);
  LLVMValueRef v = LLVMBuildZExt(
      g->b, LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""),
      g->i64, "");
  LLVMValueRef dummy;
  r.v = guard_end(g, &gd, g->i64, i64c(g, 0), v, NULL, &dummy);
  return r;
}

/* TIMESTAMP +/- INTERVAL day-time (milliseconds). */
static jit_val gen_time_add(jit_cg *g, const inode *n) {
  jit_val t = jit_gen(g, n->args[0]);
  jit_val iv = jit_gen(g, n->args[1]);
  jit_val r = {LLVMBuildOr(g->b, t.null, iv.null, ""), NULL};
  LLVMValueRef v = iv.v;
  if (n->op == SL_OP_SUB)
    v = LLVMBuildMul(g->b, v, i64c(g, -1), "");
  LLVMValueRef ov1, ov2;
  LLVMValueRef d =
      arith_ov(g, "llvm.smul.with.overflow", v, i64c(g, 1000), &ov1);
  r.v = arith_ov(g, "llvm.sadd.with.overflow", t.v, d, &ov2);
  LLVMValueRef bad = LLVMBuildOr(g->b, LLVMBuildOr(g->b, ov1, ov2, ""),
                                 out_of_range(g, n, r.v), "");
  error_if(g, LLVMBuildAnd(g->b, bad, not1(g, r.null), ""));
  return r;
}

static jit_val gen_call(jit_cg *g, const inode *n) {
  jit_val a = jit_gen(g, n->args[0]);
  jit_val b = {NULL, NULL};
  jit_val r = {a.null, NULL};
  for (int k = 1; k < n->nargs; k++) {
    b = jit_gen(g, n->args[k]);
    r.null = LLVMBuildOr(g->b, r.null, b.null, "");
  }
  LLVMTypeRef ft;
  switch (n->fn) {
  case F_ABS:
    if (n->rep == R_F64) {
      LLVMValueRef f = intrinsic(g, "llvm.fabs", g->f64, &ft);
      r.v = LLVMBuildCall2(g->b, ft, f, &a.v, 1, "");
    } else {
      LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, a.v, i64c(g, 0), "");
      LLVMValueRef m = LLVMBuildSub(g->b, i64c(g, 0), a.v, "");
      LLVMValueRef bad = LLVMBuildOr(
          g->b, LLVMBuildICmp(g->b, LLVMIntEQ, a.v, i64c(g, INT64_MIN), ""),
          LLVMBuildAnd(g->b, neg,
                       LLVMBuildICmp(g->b, LLVMIntSGT, m, i64c(g, n->hi), ""),
                       ""),
          "");
      error_if(g, LLVMBuildAnd(g->b, bad, not1(g, r.null), ""));
      r.v = LLVMBuildSelect(g->b, neg, m, a.v, "");
    }
    return r;
  case F_FLOOR:
  case F_CEIL:
    if (n->rep == R_F64) {
      LLVMValueRef f = intrinsic(
          g, n->fn == F_FLOOR ? "llvm.floor" : "llvm.ceil", g->f64, &ft);
      r.v = LLVMBuildCall2(g->b, ft, f, &a.v, 1, "");
    } else {
      r.v = a.v;
    }
    return r;
  case F_POWER: {
    LLVMTypeRef ps[2] = {g->f64, g->f64};
    LLVMValueRef args[2] = {a.v, b.v};
    r.v = jit_call_c(g, LLVMFunctionType(g->f64, ps, 2, 0), FN(sl_jit_rt_pow),
                     args, 2);
    return r;
  }
  case F_EXTRACT:
  case F_FLOOR_TIME: {
    /* the interpreter's calendar code, per value */
    guard gd;
    guard_begin(g, r.null, &gd);
    LLVMTypeRef ps[3] = {g->ptr, g->i64, g->ptr};
    LLVMValueRef args[3] = {jit_const_ptr(g, n), a.v, g->slot_r};
    LLVMValueRef rc = jit_call_c(g, LLVMFunctionType(g->i32, ps, 3, 0),
                                 FN(sl_jit_rt_time_fn), args, 3);
    error_if(
        g, LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""));
    LLVMValueRef v = jit_load(
        g, g->i64,
        LLVMBuildBitCast(g->b, g->slot_r, LLVMPointerType(g->i64, 0), ""), 16);
    LLVMValueRef dummy;
    r.v = guard_end(g, &gd, g->i64, i64c(g, 0), v, NULL, &dummy);
    return r;
  }
  case F_CHAR_LENGTH: {
    guard gd;
    guard_begin(g, r.null, &gd);
    LLVMTypeRef ps[1] = {g->ptr};
    LLVMValueRef v = jit_call_c(g, LLVMFunctionType(g->i64, ps, 1, 0),
                                FN(sl_jit_rt_char_length), &a.v, 1);
    LLVMValueRef dummy;
    r.v = guard_end(g, &gd, g->i64, i64c(g, 0), v, NULL, &dummy);
    return r;
  }
  default: { /* SQRT, LN, LOG10, EXP */
    LLVMTypeRef ps[2] = {g->i32, g->f64};
    LLVMValueRef args[2] = {LLVMConstInt(g->i32, (uint64_t)n->fn, 0), a.v};
    r.v = jit_call_c(g, LLVMFunctionType(g->f64, ps, 2, 0), FN(sl_jit_rt_math1),
                     args, 2);
    return r;
  }
  }
}

/* A subtree the code generator does not handle: the interpreter has
 * evaluated it, vectorized, for every row of the call before the loop
 * (jit_engine.c), into field a of this row's aux row; load it from there.
 * (Regexes, DATE_FORMAT, string building: one row at a time through the
 * interpreter, the calls cost more than the vectorized interpreter.) */
static jit_val gen_interp(jit_cg *g, const inode *n) {
  for (int a = 0; a < g->naux; a++)
    if (g->aux_nodes[a] == n && g->aux_row && g->jsplit < 0) {
      const sl_field *f = &g->aux_layout->fields[a];
      return load_field(g, g->aux_row, a, f->offset, f->ptype, n->rep);
    }
  /* not prepared (a joined row that is never built): this batch goes back
   * to the interpreter whole */
  jit_val r;
  LLVMBuildBr(g->b, g->err_bb);
  LLVMPositionBuilderAtEnd(g->b, block(g, "unreachable"));
  r.null = i1c(g, 1);
  r.v = zero_of(g, n->rep);
  return r;
}

/* Operands after the first of CASE, AND, OR and COALESCE are evaluated
 * only for the rows that need them. */
static bool is_conditional(const inode *n) {
  return n->kind == N_CASE || n->kind == N_AND || n->kind == N_OR ||
         n->kind == N_COALESCE;
}

static int add_once(const inode *n, const inode **out, int cap, int k) {
  for (int i = 0; i < k && i < cap; i++)
    if (out[i] == n)
      return k;
  if (k < cap)
    out[k] = n;
  return k + 1;
}

int jit_collect_interp(const inode *n, const inode **out, int cap, int k) {
  char why[160];
  if (node_reason(n, why, sizeof why))
    return add_once(n, out, cap, k);
  if (is_conditional(n))
    for (int i = 1; i < n->nargs; i++)
      if (jit_check(n->args[i], why, sizeof why))
        /* evaluated before the loop, for every row, the operand would do
         * work (a regex) or fail (a cast) where the row never needs it:
         * the interpreter takes the whole CASE instead, and evaluates its
         * operands where they are needed, as always */
        return add_once(n, out, cap, k);
  for (int i = 0; i < n->nargs; i++)
    k = jit_collect_interp(n->args[i], out, cap, k);
  return k;
}

jit_val jit_gen_prog(jit_cg *g, const sl_expr_prog *p) {
  g->prog = p;
  return jit_gen(g, p->root);
}

/* Is n evaluated by the interpreter (its reason buffer stays out of
 * jit_gen's recursive frame)? */
static __attribute__((noinline)) bool interpreted(const jit_cg *g,
                                                  const inode *n) {
  char why[160];
  for (int a = 0; a < g->naux; a++)
    if (g->aux_nodes[a] == n)
      return true;
  return node_reason(n, why, sizeof why) != NULL;
}

jit_val jit_gen(jit_cg *g, const inode *n) {
  if (interpreted(g, n))
    return gen_interp(g, n);
  switch (n->kind) {
  case N_CONST:
    return gen_const(g, n);
  case N_LOAD:
    return gen_load(g, n);
  case N_CAST:
    return gen_cast(g, n);
  case N_NEG:
    return gen_neg(g, n);
  case N_ARITH:
    return gen_arith(g, n);
  case N_CMP:
    return gen_cmp(g, n);
  case N_AND:
  case N_OR:
    return gen_andor(g, n);
  case N_NOT: {
    jit_val a = jit_gen(g, n->args[0]);
    jit_val r = {a.null, to_bool64(g, not1(g, is_true64(g, a.v)))};
    return r;
  }
  case N_IS:
    return gen_is(g, n);
  case N_CASE:
    return gen_case(g, n);
  case N_COALESCE:
    return gen_coalesce(g, n);
  case N_NULLIF:
    return gen_nullif(g, n);
  case N_IN:
    return gen_in(g, n);
  case N_LIKE:
    return gen_like(g, n);
  case N_TIME_ADD:
    return gen_time_add(g, n);
  case N_CALL:
    return gen_call(g, n);
  default: /* jit_check refused it */
    break;
  }
  jit_val r = {i1c(g, 1), zero_of(g, n->rep)};
  return r;
}
