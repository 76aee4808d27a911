/* jit_kernel.c - the fused loop of a kernel (jit.h): one pass over the
 * selected rows of a buffer that evaluates the filter and, for the rows
 * that pass, writes every output field straight into the output row.
 *
 *   for k in 0..n:
 *     row = in + sel[k] * W_in
 *     if filter(row) is not TRUE: continue
 *     if the output row does not fit: stop (next = k)
 *     zero the output row; for each field: evaluate, store value/null bit
 *     sel_out[nout++] = sel[k]
 *
 * Widths, offsets and null-bit positions are constants.  Runtime errors
 * jump to one block that returns JIT_ERROR; nothing outside the output
 * rows has been touched by then (the caller restores the heap mark).
 * Input fields are read with jit_load_input, so a field the filter, the
 * watermark and an output all use is read once per row.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_int.h"
#include "sluice/state/running_extremes.h"

static LLVMValueRef call_field(jit_cg *g, LLVMValueRef call, size_t off,
                               LLVMTypeRef t, unsigned align) {
  return jit_load(g, t, jit_at(g, call, off, t), align);
}

/* A field of the lookup table, or the call's pointer to it: neither
 * changes while the kernel runs (jit_load_input), so each is read once
 * however many rows the loop writes in between. */
static LLVMValueRef table_field(jit_cg *g, LLVMValueRef base, size_t off,
                                LLVMTypeRef t, unsigned align) {
  return jit_load_input(g, t, jit_at(g, base, off, t), align);
}

static void set_call_field(jit_cg *g, LLVMValueRef call, size_t off,
                           LLVMValueRef v) {
  jit_store(g, v, jit_at(g, call, off, LLVMTypeOf(v)), 4);
}

/* Does the output field's physical type take the program's value as the
 * interpreter's store() would? */
static bool store_compatible(const sl_field *f, const inode *root) {
  switch (f->ptype) {
  case SL_P_F32:
  case SL_P_F64:
    return root->rep == R_F64;
  case SL_P_DEC64:
  case SL_P_DEC128:
    return root->rep == R_DEC && f->type->scale == root->scale;
  case SL_P_STR:
    return root->rep == R_STR;
  default:
    return root->rep == R_I64;
  }
}

/* Does storing the program's value into output field f copy a string
 * into the output's heap (rather than borrow the input's bytes)? */
static bool stores_into_heap(const sl_field *f, const inode *root,
                             bool borrow) {
  return f->ptype == SL_P_STR && !(borrow && root->kind == N_LOAD);
}

/* Store value v of output field f (index fi) into orow; a long string that
 * does not fit in the heap branches to `full`.  The null bit goes into
 * nulls[fi / 8], the row's null bytes gathered in registers and stored
 * once by store_nulls (a load and store of the byte per field made each
 * field wait for the last); without nulls it is ORed into the row. */
static void store_field(jit_cg *g, LLVMValueRef call, LLVMValueRef orow,
                        const sl_field *f, int fi, const inode *root, jit_val v,
                        bool borrow, LLVMValueRef *nulls,
                        LLVMBasicBlockRef full) {
  LLVMValueRef bit = LLVMBuildShl(g->b, LLVMBuildZExt(g->b, v.null, g->i8, ""),
                                  LLVMConstInt(g->i8, (uint64_t)fi & 7, 0), "");
  if (nulls) {
    LLVMValueRef *nb = &nulls[fi >> 3];
    *nb = *nb ? LLVMBuildOr(g->b, *nb, bit, "") : bit;
  } else { /* the row was zeroed, so OR it in */
    LLVMValueRef nbp = jit_at(g, orow, (uint64_t)fi >> 3, g->i8);
    jit_store(g, LLVMBuildOr(g->b, jit_load(g, g->i8, nbp, 1), bit, ""), nbp,
              1);
  }
  LLVMValueRef x = v.v;
  if (f->ptype != SL_P_STR) {
    /* narrow from the representation to the stored width */
    unsigned align;
    LLVMTypeRef t = jit_field_type(g, f->ptype, &align);
    if (t == g->f32)
      x = LLVMBuildFPTrunc(g->b, x, t, "");
    else if (t != LLVMTypeOf(x))
      x = LLVMBuildTrunc(g->b, x, t, "");
    jit_store(g, x, jit_at(g, orow, f->offset, t), align);
    return;
  }
  /* a string; NULL: the zeroed row already holds the empty string */
  {
    LLVMBasicBlockRef put =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "str.put");
    LLVMBasicBlockRef done =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "str.done");
    LLVMBuildCondBr(g->b, v.null, done, put);
    LLVMPositionBuilderAtEnd(g->b, put);
    LLVMValueRef dst = jit_at(g, orow, f->offset, g->i8);
    if (borrow && root->kind == N_LOAD) {
      /* a column copied unchanged into a borrowing buffer keeps pointing
       * at the input's bytes (row.h) */
      for (int h = 0; h < 2; h++)
        jit_store(g,
                  jit_load(g, g->i64, jit_at(g, x, 8 * (uint64_t)h, g->i64), 8),
                  jit_at(g, dst, 8 * (uint64_t)h, g->i64), 8);
      LLVMBuildBr(g->b, done);
    } else {
      LLVMTypeRef ps[4] = {g->ptr, g->ptr, g->ptr, g->ptr};
      LLVMValueRef args[4] = {call, orow, dst, x};
      LLVMValueRef rc =
          jit_call_c(g, LLVMFunctionType(g->i32, ps, 4, 0),
                     (void *)(uintptr_t)sl_jit_rt_put_str, args, 4);
      LLVMBuildCondBr(
          g->b,
          LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""),
          full, done);
    }
    LLVMPositionBuilderAtEnd(g->b, done);
  }
}

/* The null bytes store_field gathered, into the (zeroed) row. */
static void store_nulls(jit_cg *g, LLVMValueRef orow, LLVMValueRef *nulls,
                        uint32_t nbytes) {
  for (uint32_t b = 0; b < nbytes; b++)
    if (nulls[b])
      jit_store(g, nulls[b], jit_at(g, orow, b, g->i8), 1);
}

/* The join key row of a lookup kernel, as the interpreter's key rows are
 * stored (strings: the 16-byte sl_str, pointing at the input or a
 * constant, both alive for the call).  Returns "some key is NULL" (i1). */
static LLVMValueRef store_keys(jit_cg *g, LLVMValueRef call,
                               LLVMValueRef keyrow, const sl_jit_lookup *lk,
                               LLVMBasicBlockRef full) {
  const sl_row_layout *kl = lk->key_layout;
  LLVMBuildMemSet(g->b, keyrow, LLVMConstInt(g->i8, 0, 0),
                  LLVMConstInt(g->i64, kl->width, 0), 8);
  LLVMValueRef anynull = LLVMConstInt(g->i1, 0, 0);
  for (int f = 0; f < lk->nkeys; f++) {
    const inode *root = lk->key_progs[f]->root;
    jit_val v = jit_gen_prog(g, lk->key_progs[f]);
    anynull = LLVMBuildOr(g->b, anynull, v.null, "");
    const sl_field *kf = &kl->fields[f];
    if (kf->ptype != SL_P_STR) {
      store_field(g, call, keyrow, kf, f, root, v, true, NULL, full);
      continue;
    }
    LLVMValueRef dst = jit_at(g, keyrow, kf->offset, g->i8);
    for (int h = 0; h < 2; h++) {
      LLVMValueRef w =
          jit_load(g, g->i64, jit_at(g, v.v, 8 * (uint64_t)h, g->i64), 4);
      w = LLVMBuildSelect(g->b, v.null, LLVMConstInt(g->i64, 0, 0), w, "");
      jit_store(g, w, jit_at(g, dst, 8 * (uint64_t)h, g->i64), 8);
    }
  }
  return anynull;
}

/* Go on in a new block `name` where predicate p is TRUE, else to other
 * (NULL and FALSE alike, as WHERE treats them). */
static void keep_if_true(jit_cg *g, const sl_expr_prog *p,
                         LLVMBasicBlockRef other, const char *name) {
  jit_val v = jit_gen_prog(g, p);
  LLVMValueRef pass = LLVMBuildAnd(
      g->b, LLVMBuildXor(g->b, v.null, LLVMConstInt(g->i1, 1, 0), ""),
      LLVMBuildICmp(g->b, LLVMIntNE, v.v, LLVMConstInt(g->i64, 0, 0), ""), "");
  LLVMBasicBlockRef keep = LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
  LLVMBuildCondBr(g->b, pass, keep, other);
  LLVMPositionBuilderAtEnd(g->b, keep);
}

/* The gate's quick answer (sl_extremes_bar at bar): a row with both
 * values whose time is the bar's and whose value is past it goes to
 * other, counted in drops (flush_bar_drops adds them to the bar's
 * dropped); any other row on in a new block. */
static void drop_by_bar(jit_cg *g, LLVMValueRef bar, bool max,
                        LLVMValueRef drops, jit_val v, jit_val t,
                        LLVMBasicBlockRef other) {
#define BAR_FIELD(f, ty) jit_at(g, bar, offsetof(sl_extremes_bar, f), ty)
  LLVMValueRef known = LLVMBuildAnd(
      g->b, LLVMBuildNot(g->b, LLVMBuildOr(g->b, v.null, t.null, ""), ""),
      LLVMBuildICmp(g->b, LLVMIntNE,
                    jit_load(g, g->i32, BAR_FIELD(valid, g->i32), 4),
                    LLVMConstInt(g->i32, 0, 0), ""),
      "");
  LLVMValueRef same = LLVMBuildICmp(
      g->b, LLVMIntEQ, jit_load(g, g->i64, BAR_FIELD(t, g->i64), 8), t.v, "");
  LLVMValueRef b = jit_load(g, g->i64, BAR_FIELD(bar, g->i64), 8);
  /* the direction is the gate's, a constant (not the bar's max, read per
   * row) */
  LLVMValueRef past =
      LLVMBuildICmp(g->b, max ? LLVMIntSLT : LLVMIntSGT, v.v, b, "");
  LLVMValueRef drop =
      LLVMBuildAnd(g->b, known, LLVMBuildAnd(g->b, same, past, ""), "bar.drop");
  LLVMBasicBlockRef dropped =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "bar.dropped");
  LLVMBasicBlockRef ask =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "bar.ask");
  LLVMBuildCondBr(g->b, drop, dropped, ask);
  LLVMPositionBuilderAtEnd(g->b, dropped);
  /* Counted in a register (the kernel's exits add it to the bar's count):
   * a store into the bar each row would make every load of it above wait
   * for the last row's store. */
  jit_add_to(g, drops, LLVMConstInt(g->i64, 1, 0));
  LLVMBuildBr(g->b, other);
  LLVMPositionBuilderAtEnd(g->b, ask);
#undef BAR_FIELD
}

/* The bar of the gate's state, where it has one. */
static LLVMValueRef gate_bar(jit_cg *g, LLVMValueRef call,
                             const sl_jit_gate *gate) {
  LLVMValueRef state =
      call_field(g, call, offsetof(jit_call, gate_state), g->ptr, 8);
  return jit_at(g, state, (uint64_t)gate->bar_offset, g->i8);
}

/* At an exit of the kernel: the rows the bar dropped, into its count. */
static void flush_bar_drops(jit_cg *g, LLVMValueRef call,
                            const sl_jit_gate *gate, LLVMValueRef drops) {
  if (!drops)
    return;
  LLVMValueRef n = jit_at(g, gate_bar(g, call, gate),
                          offsetof(sl_extremes_bar, dropped), g->i64);
  jit_add_to(g, n, jit_load(g, g->i64, drops, 8));
}

/* Go on in a new block where the gate lets the row through, else to
 * other: gate->fn(state, value, value is NULL, time, time is NULL), after
 * its quick answer where it has one. */
static void keep_if_gate(jit_cg *g, LLVMValueRef call, const sl_jit_gate *gate,
                         LLVMValueRef drops, sl_expr_prog *const *progs,
                         LLVMBasicBlockRef other) {
  jit_val v = jit_gen_prog(g, progs[gate->value_prog]);
  jit_val t = jit_gen_prog(g, progs[gate->time_prog]);
  LLVMValueRef state =
      call_field(g, call, offsetof(jit_call, gate_state), g->ptr, 8);
  if (gate->bar_offset >= 0)
    drop_by_bar(g, gate_bar(g, call, gate), gate->bar_max, drops, v, t, other);
  LLVMTypeRef ps[5] = {g->ptr, g->i64, g->i32, g->i64, g->i32};
  LLVMValueRef args[5] = {state, v.v, LLVMBuildZExt(g->b, v.null, g->i32, ""),
                          t.v, LLVMBuildZExt(g->b, t.null, g->i32, "")};
  LLVMValueRef rc = jit_call_c(g, LLVMFunctionType(g->i32, ps, 5, 0),
                               (void *)(uintptr_t)gate->fn, args, 5);
  LLVMBasicBlockRef pass =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "gate.pass");
  LLVMBuildCondBr(
      g->b, LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""),
      pass, other);
  LLVMPositionBuilderAtEnd(g->b, pass);
}

/* The lookup table's fields, read once in the kernel's entry (the light
 * pipeline has no pass that hoists them out of the loop). */
typedef struct table_fields {
  LLVMValueRef unique, hash, slot_row, keys, rows, mask;
  LLVMValueRef direct, direct_lo, direct_n;
} table_fields;

static table_fields load_table_fields(jit_cg *g, LLVMValueRef call) {
  LLVMValueRef tab = table_field(g, call, offsetof(jit_call, table), g->ptr, 8);
#define TF(f, t, a) table_field(g, tab, offsetof(sl_jit_lookup_table, f), t, a)
  table_fields tf = {
      .unique = LLVMBuildICmp(g->b, LLVMIntNE, TF(unique, g->i32, 4),
                              LLVMConstInt(g->i32, 0, 0), "unique"),
      .hash = TF(hash, g->ptr, 8),
      .slot_row = TF(slot_row, g->ptr, 8),
      .keys = TF(keys, g->ptr, 8),
      .rows = TF(rows, g->ptr, 8),
      .mask = TF(mask, g->i32, 4),
      .direct = TF(direct, g->ptr, 8),
      .direct_lo = TF(direct_lo, g->i64, 8),
      .direct_n = TF(direct_n, g->i64, 8),
  };
#undef TF
  return tf;
}

/* base[idx] of one of the lookup table's arrays (table_field). */
static LLVMValueRef ldp_table(jit_cg *g, LLVMValueRef base, LLVMValueRef idx,
                              LLVMTypeRef t, unsigned align) {
  LLVMValueRef p = LLVMBuildGEP2(
      g->b, t, LLVMBuildBitCast(g->b, base, LLVMPointerType(t, 0), ""), &idx, 1,
      "");
  return jit_load_input(g, t, p, align);
}

/* Can the table be indexed by the key's value (sl_jit_lookup_table.
 * direct): one integer field. */
static bool direct_key(const sl_row_layout *kl) {
  if (kl->nfields != 1)
    return false;
  sl_ptype p = kl->fields[0].ptype;
  return p == SL_P_I8 || p == SL_P_I16 || p == SL_P_I32 || p == SL_P_I64;
}

/* When the table has a direct index: the key's row by value (a bounds
 * check and a load; no row: skip), going on at the match from *from with
 * the row in *row; else on to `hashed`. */
static void direct_probe(jit_cg *g, const table_fields *tf, LLVMValueRef keyrow,
                         const sl_row_layout *kl, LLVMBasicBlockRef hashed,
                         LLVMBasicBlockRef skip, LLVMBasicBlockRef *from,
                         LLVMValueRef *row) {
  LLVMValueRef direct = tf->direct;
  LLVMBasicBlockRef by_value =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "direct");
  LLVMBasicBlockRef found =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "direct.row");
  LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, direct, ""), hashed, by_value);
  LLVMPositionBuilderAtEnd(g->b, by_value);
  const sl_field *f = &kl->fields[0];
  LLVMTypeRef it = jit_int_of_size(g, f->size);
  LLVMValueRef v = jit_load(g, it, jit_at(g, keyrow, f->offset, it), 1);
  if (it != g->i64)
    v = LLVMBuildSExt(g->b, v, g->i64, "");
  LLVMValueRef at = LLVMBuildSub(g->b, v, tf->direct_lo, "at");
  LLVMValueRef inside = LLVMBuildICmp(g->b, LLVMIntULT, at, tf->direct_n, "");
  LLVMBasicBlockRef load =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "direct.load");
  LLVMBuildCondBr(g->b, inside, load, skip);
  LLVMPositionBuilderAtEnd(g->b, load);
  LLVMValueRef r = ldp_table(g, direct, at, g->i32, 4);
  LLVMBuildCondBr(
      g->b, LLVMBuildICmp(g->b, LLVMIntSLT, r, LLVMConstInt(g->i32, 0, 0), ""),
      skip, found);
  LLVMPositionBuilderAtEnd(g->b, found);
  *row = LLVMBuildZExt(g->b, r, g->i64, "");
  *from = found;
  /* the caller goes on in `hashed`; the match block takes *row from here */
  LLVMPositionBuilderAtEnd(g->b, hashed);
}

int jit_build_kernel(jit_cg *g, const char *name, const sl_expr_prog *pre,
                     const sl_row_layout *pre_layout,
                     const sl_expr_prog *filter, const sl_jit_lookup *lookup,
                     const sl_jit_gate *gate, sl_expr_prog *const *progs,
                     int nprogs, const sl_row_layout *in,
                     const sl_row_layout *out, bool borrow, sl_error *err) {
  if (pre &&
      (pre->root->rep == R_STR || !pre_layout || pre_layout->nfields < 1 ||
       !store_compatible(&pre_layout->fields[0], pre->root)))
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: the pre expression of a JIT kernel "
                        "does not fit its output");
  for (int f = 0; f < nprogs; f++)
    if (progs[f] && (!out || f >= out->nfields ||
                     !store_compatible(&out->fields[f], progs[f]->root)))
      return sl_error_set(err, SL_EINTERNAL,
                          "internal error: output field %d has another type "
                          "than the expression",
                          f);
  /* the output row's null bytes, as store_field gathers them */
  LLVMValueRef *nulls = NULL;
  if (nprogs > 0 && !(nulls = calloc(out->null_bytes, sizeof *nulls)))
    return sl_error_set(err, SL_ENOMEM, "out of memory compiling a kernel");
  LLVMTypeRef ps[1] = {g->ptr};
  g->fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->i32, ps, 1, 0));
  LLVMValueRef call = LLVMGetParam(g->fn, 0);
  LLVMBasicBlockRef entry =
      LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry");
  LLVMPositionBuilderAtEnd(g->b, entry);

  /* helper argument slots and the loop's counters (SROA makes the
   * counters registers) */
  LLVMValueRef slots[3];
  for (int i = 0; i < 3; i++) {
    LLVMValueRef s = LLVMBuildAlloca(g->b, LLVMArrayType(g->i8, 16), "slot");
    LLVMSetAlignment(s, 16);
    slots[i] = LLVMBuildBitCast(g->b, s, g->ptr, "");
  }
  g->slot_a = slots[0], g->slot_b = slots[1], g->slot_r = slots[2];
  LLVMValueRef kvar = LLVMBuildAlloca(g->b, g->i32, "k");
  LLVMValueRef nvar = LLVMBuildAlloca(g->b, g->i32, "nout");
  /* nout when the current row started: a row whose outputs do not all fit
   * is undone as a whole */
  LLVMValueRef rnvar = LLVMBuildAlloca(g->b, g->i32, "row_nout");
  LLVMValueRef jvar = NULL, hvar = NULL, keyrow = NULL;
  LLVMValueRef pvar = LLVMBuildAlloca(g->b, g->i32, "passed");
  jit_store(g, LLVMConstInt(g->i32, 0, 0), pvar, 4);
  if (lookup) {
    jvar = LLVMBuildAlloca(g->b, g->i32, "slot");
    /* the key's hash, in memory rather than a value: the probe loop is
     * also reached (never run) from a row found by value, without one */
    hvar = LLVMBuildAlloca(g->b, g->i64, "hash");
    jit_store(g, LLVMConstInt(g->i64, 0, 0), hvar, 8);
    keyrow = LLVMBuildAlloca(
        g->b, LLVMArrayType(g->i64, (lookup->key_layout->width + 7) / 8),
        "keyrow");
    keyrow = LLVMBuildBitCast(g->b, keyrow, g->ptr, "");
  }
  jit_store(g, LLVMConstInt(g->i32, 0, 0), kvar, 4);
  jit_store(g, LLVMConstInt(g->i32, 0, 0), nvar, 4);
  LLVMValueRef drops = NULL; /* rows the gate's bar dropped */
  if (gate && gate->bar_offset >= 0) {
    drops = LLVMBuildAlloca(g->b, g->i64, "bar_drops");
    jit_store(g, LLVMConstInt(g->i64, 0, 0), drops, 8);
  }

  LLVMValueRef inrows = call_field(g, call, offsetof(jit_call, in), g->ptr, 8);
  LLVMValueRef sel = call_field(g, call, offsetof(jit_call, sel), g->ptr, 8);
  LLVMValueRef sel_out =
      call_field(g, call, offsetof(jit_call, sel_out), g->ptr, 8);
  LLVMValueRef outrows =
      call_field(g, call, offsetof(jit_call, out), g->ptr, 8);
  LLVMValueRef heap =
      call_field(g, call, offsetof(jit_call, heap_used), g->ptr, 8);
  heap = LLVMBuildBitCast(g->b, heap, LLVMPointerType(g->i32, 0), "");
  /* Without strings copied into the output's heap the heap does not
   * change in the call: no row's mark is kept for undoing it (a store
   * into the call per row otherwise). */
  bool heap_strings = false;
  for (int f = 0; f < nprogs; f++)
    heap_strings |=
        progs[f] && stores_into_heap(&out->fields[f], progs[f]->root, borrow);
  LLVMValueRef pre_rows =
      call_field(g, call, offsetof(jit_call, pre_out), g->ptr, 8);
  LLVMValueRef n = call_field(g, call, offsetof(jit_call, n), g->i32, 4);
  LLVMValueRef base = call_field(g, call, offsetof(jit_call, base), g->i32, 4);
  LLVMValueRef cap = call_field(g, call, offsetof(jit_call, cap), g->i32, 4);
  base = LLVMBuildZExt(g->b, base, g->i64, "");
  cap = LLVMBuildZExt(g->b, cap, g->i64, "");

  table_fields tf = {0};
  if (lookup)
    tf = load_table_fields(g, call);

  g->err_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "error");
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "row");
  LLVMBasicBlockRef skip = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "done");
  LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "full");
  LLVMBuildBr(g->b, head);

  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef k = jit_load(g, g->i32, kvar, 4);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, k, n, ""), body, done);

  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef k64 = LLVMBuildZExt(g->b, k, g->i64, "");
  LLVMValueRef idx = jit_load(
      g, g->i32,
      LLVMBuildGEP2(g->b, g->i32,
                    LLVMBuildBitCast(g->b, sel, LLVMPointerType(g->i32, 0), ""),
                    &k64, 1, ""),
      4);
  LLVMValueRef off = LLVMBuildMul(g->b, LLVMBuildZExt(g->b, idx, g->i64, ""),
                                  LLVMConstInt(g->i64, in->width, 0), "");
  g->row = LLVMBuildGEP2(g->b, g->i8, inrows, &off, 1, "row");
  if (g->naux > 0) {
    /* the interpreted subtrees' values for sel position k */
    LLVMValueRef aoff = LLVMBuildMul(
        g->b, k64, LLVMConstInt(g->i64, g->aux_layout->width, 0), "");
    g->aux_row = LLVMBuildGEP2(
        g->b, g->i8, call_field(g, call, offsetof(jit_call, aux), g->ptr, 8),
        &aoff, 1, "aux");
  }
  if (pre) {
    /* every row, before the filter: row k of pre_out (never a string, so
     * the store cannot need the heap) */
    uint64_t pw = pre_layout->width;
    LLVMValueRef poff =
        LLVMBuildMul(g->b, k64, LLVMConstInt(g->i64, pw, 0), "");
    LLVMValueRef prow = LLVMBuildGEP2(g->b, g->i8, pre_rows, &poff, 1, "prow");
    LLVMBuildMemSet(g->b, prow, LLVMConstInt(g->i8, 0, 0),
                    LLVMConstInt(g->i64, pw, 0), 8);
    jit_val v = jit_gen_prog(g, pre);
    LLVMValueRef pnull = NULL;
    store_field(g, call, prow, &pre_layout->fields[0], 0, pre->root, v, false,
                &pnull, full);
    store_nulls(g, prow, &pnull, 1);
  }
  if (filter)
    keep_if_true(g, filter, skip, "keep");
  if (gate)
    keep_if_gate(g, call, gate, drops, progs, skip);
  LLVMValueRef nout = jit_load(g, g->i32, nvar, 4);
  jit_store(g, nout, rnvar, 4);
  if (heap_strings)
    set_call_field(g, call, offsetof(jit_call, heap_mark),
                   jit_load(g, g->i32, heap, 4));
  LLVMBasicBlockRef pnext = NULL, probe_bb = NULL, after = NULL, dfrom = NULL;
  LLVMValueRef unique = NULL, drow = NULL;
  if (lookup) {
    jit_add_to(g, pvar, LLVMConstInt(g->i32, 1, 0));
    /* the key row and its hash; a NULL key matches nothing */
    LLVMValueRef anynull = store_keys(g, call, keyrow, lookup, full);
    LLVMBasicBlockRef keyed =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "keyed");
    LLVMBuildCondBr(g->b, anynull, skip, keyed);
    LLVMPositionBuilderAtEnd(g->b, keyed);
    unique = tf.unique;
    LLVMValueRef thash = tf.hash, tslot = tf.slot_row, tkeys = tf.keys,
                 trows = tf.rows, mask = tf.mask;
    LLVMBasicBlockRef hashed =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "hashed");
    if (direct_key(lookup->key_layout))
      direct_probe(g, &tf, keyrow, lookup->key_layout, hashed, skip, &dfrom,
                   &drow);
    else
      LLVMBuildBr(g->b, hashed);
    LLVMPositionBuilderAtEnd(g->b, hashed);
    LLVMValueRef h = jit_key_hash(g, lookup->key_layout, keyrow);
    jit_store(g, h, hvar, 8);
    jit_store(g,
              LLVMBuildAnd(g->b, LLVMBuildTrunc(g->b, h, g->i32, ""), mask, ""),
              jvar, 4);
    /* linear probing, every equal key in slot order (as the C probe) */
    LLVMBasicBlockRef probe =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe");
    LLVMBasicBlockRef cand =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe.used");
    LLVMBasicBlockRef cmp =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe.cmp");
    LLVMBasicBlockRef match =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe.match");
    pnext = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe.next");
    probe_bb = probe;
    if (dfrom) { /* the row found by value goes to the match too */
      LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
      LLVMPositionBuilderAtEnd(g->b, dfrom);
      LLVMBuildBr(g->b, match);
      LLVMPositionBuilderAtEnd(g->b, here);
    }
    LLVMBuildBr(g->b, probe);
    LLVMPositionBuilderAtEnd(g->b, probe);
    LLVMValueRef j64 =
        LLVMBuildZExt(g->b, jit_load(g, g->i32, jvar, 4), g->i64, "");
    LLVMValueRef hj = ldp_table(g, thash, j64, g->i64, 8);
    LLVMBuildCondBr(
        g->b,
        LLVMBuildICmp(g->b, LLVMIntEQ, hj, LLVMConstInt(g->i64, 0, 0), ""),
        skip, cand);
    LLVMPositionBuilderAtEnd(g->b, cand);
    LLVMBuildCondBr(
        g->b,
        LLVMBuildICmp(g->b, LLVMIntEQ, hj, jit_load(g, g->i64, hvar, 8), ""),
        cmp, pnext);
    LLVMPositionBuilderAtEnd(g->b, cmp);
    LLVMValueRef tr =
        LLVMBuildZExt(g->b, ldp_table(g, tslot, j64, g->i32, 4), g->i64, "");
    LLVMValueRef tkey = ldp_table(g, tkeys, tr, g->ptr, 8);
    LLVMValueRef eq = jit_key_fields_equal(g, lookup->key_layout, keyrow, tkey);
    LLVMBasicBlockRef cmp_end = LLVMGetInsertBlock(g->b);
    LLVMBuildCondBr(g->b, eq, match, pnext);
    LLVMPositionBuilderAtEnd(g->b, match);
    if (dfrom) /* the row found by value, or by hash */
      tr = jit_phi2(g, g->i64, drow, dfrom, tr, cmp_end, "trow");
    /* from here on, loads read the joined row (stream row + table row) */
    g->trow = ldp_table(g, trows, tr, g->ptr, 8);
    g->jsplit = lookup->joined->nfields - lookup->table->nfields;
    g->jstream = in;
    g->jtable = lookup->table;
    after = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "probe.after");
    if (lookup->post_filter)
      keep_if_true(g, lookup->post_filter, after, "post.keep");
    nout = jit_load(g, g->i32, nvar, 4);
  }
  if (nprogs > 0) {
    uint64_t w = out->width;
    LLVMValueRef r =
        LLVMBuildAdd(g->b, base, LLVMBuildZExt(g->b, nout, g->i64, ""), "");
    LLVMValueRef mark = jit_load(g, g->i32, heap, 4);
    LLVMValueRef need = LLVMBuildAdd(
        g->b,
        LLVMBuildMul(g->b,
                     LLVMBuildAdd(g->b, r, LLVMConstInt(g->i64, 1, 0), ""),
                     LLVMConstInt(g->i64, w, 0), ""),
        LLVMBuildZExt(g->b, mark, g->i64, ""), "");
    LLVMBasicBlockRef write =
        LLVMAppendBasicBlockInContext(g->ctx, g->fn, "write");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULE, need, cap, ""), write,
                    full);
    LLVMPositionBuilderAtEnd(g->b, write);
    LLVMValueRef ooff = LLVMBuildMul(g->b, r, LLVMConstInt(g->i64, w, 0), "");
    LLVMValueRef orow = LLVMBuildGEP2(g->b, g->i8, outrows, &ooff, 1, "orow");
    LLVMBuildMemSet(g->b, orow, LLVMConstInt(g->i8, 0, 0),
                    LLVMConstInt(g->i64, w, 0), 8);
    memset(nulls, 0, sizeof *nulls * out->null_bytes);
    for (int f = 0; f < nprogs; f++) {
      if (!progs[f])
        continue;
      jit_val v = jit_gen_prog(g, progs[f]);
      store_field(g, call, orow, &out->fields[f], f, progs[f]->root, v, borrow,
                  nulls, full);
    }
    store_nulls(g, orow, nulls, out->null_bytes);
  }
  if (filter || lookup) {
    LLVMValueRef n64 = LLVMBuildZExt(g->b, nout, g->i64, "");
    jit_store(g, idx,
              LLVMBuildGEP2(g->b, g->i32,
                            LLVMBuildBitCast(g->b, sel_out,
                                             LLVMPointerType(g->i32, 0), ""),
                            &n64, 1, ""),
              4);
  }
  jit_store(g, LLVMBuildAdd(g->b, nout, LLVMConstInt(g->i32, 1, 0), ""), nvar,
            4);
  if (lookup) {
    /* the next slot: more table rows may have the same key, unless the
     * table's keys are unique (a row found by value always is) */
    LLVMBuildBr(g->b, after);
    LLVMPositionBuilderAtEnd(g->b, after);
    LLVMBuildCondBr(g->b, unique, skip, pnext);
    LLVMPositionBuilderAtEnd(g->b, pnext);
    jit_store(g,
              LLVMBuildAnd(g->b,
                           LLVMBuildAdd(g->b, jit_load(g, g->i32, jvar, 4),
                                        LLVMConstInt(g->i32, 1, 0), ""),
                           tf.mask, ""),
              jvar, 4);
    LLVMBuildBr(g->b, probe_bb);
    g->jsplit = -1;
    g->trow = NULL;
  } else {
    LLVMBuildBr(g->b, skip);
  }

  LLVMPositionBuilderAtEnd(g->b, skip);
  jit_add_to(g, kvar, LLVMConstInt(g->i32, 1, 0));
  LLVMBuildBr(g->b, head);

  /* all rows done */
  LLVMPositionBuilderAtEnd(g->b, done);
  set_call_field(g, call, offsetof(jit_call, nout),
                 jit_load(g, g->i32, nvar, 4));
  set_call_field(g, call, offsetof(jit_call, next), n);
  set_call_field(g, call, offsetof(jit_call, npassed),
                 jit_load(g, g->i32, pvar, 4));
  flush_bar_drops(g, call, gate, drops);
  LLVMBuildRet(g->b, LLVMConstInt(g->i32, JIT_OK, 0));

  /* the output is full at row k: undo that row's outputs and long
   * strings, stop */
  LLVMPositionBuilderAtEnd(g->b, full);
  if (heap_strings)
    jit_store(g, call_field(g, call, offsetof(jit_call, heap_mark), g->i32, 4),
              heap, 4);
  set_call_field(g, call, offsetof(jit_call, nout),
                 jit_load(g, g->i32, rnvar, 4));
  set_call_field(g, call, offsetof(jit_call, next),
                 jit_load(g, g->i32, kvar, 4));
  flush_bar_drops(g, call, gate, drops);
  LLVMBuildRet(g->b, LLVMConstInt(g->i32, JIT_OK, 0));

  LLVMPositionBuilderAtEnd(g->b, g->err_bb);
  flush_bar_drops(g, call, gate, drops);
  LLVMBuildRet(g->b, LLVMConstInt(g->i32, JIT_ERROR, 0));
  free(nulls);
  return SL_OK;
}
