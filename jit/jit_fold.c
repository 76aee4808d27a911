/* jit_fold.c - phase 2 of the JIT: the fold of a batch of tmp rows into
 * the window state (jit.h, sl_jit_add_fold), the compiled twin of
 * sl_worker_fold_row (exec/worker.c) for late-merge event-time TUMBLE
 * and HOP windows:
 *
 *   for r in pos..n:
 *     advance the watermark over the input rows before row r's
 *     ts = event time (NULL: stop, C reports it)
 *     start = slice of ts; all windows fired: late++, next row
 *     next_end = min(next_end, first window end still open)
 *     start is not the cached slice's: stop (C finds or makes the slice)
 *     key row (as C builds it), hash (sl_key_hash's, constant-folded per
 *     field), linear probe of the slice's table:
 *       empty slot: a new group, inserted by sl_group_table_upsert
 *                   (a direct call; it grows the table if it must)
 *       equal key, or the new group: every integer SUM/AVG checked for
 *                   overflow first (an
 *                   overflow stops before any state changed: C reports
 *                   it), then every update inline
 *     advance the watermark over row r's input row
 *
 * "Stop" stores the loop's state back into the call and returns with pos
 * at the row, which nothing has changed yet; the caller folds that row in
 * C and calls again.  So the hit path has no calls: string keys are
 * hashed and compared inline too (jit_hash.c), but for the bytes of long
 * strings equal in length and prefix (memcmp).
 */
#include <stddef.h>

#include "jit_int.h"
#include "sluice/state/aggregate.h"

/* Key fields and aggregate arguments the fold handles (keys: strings or
 * at most 8 bytes; arguments: no strings and no DECIMAL in a state). */
static bool key_ptype_ok(sl_ptype p) {
  return p != SL_P_DEC128;
}

static bool arg_ptype_ok(sl_ptype p) {
  return p != SL_P_STR && p != SL_P_DEC64 && p != SL_P_DEC128;
}

static bool is_float(sl_ptype p) {
  return p == SL_P_F32 || p == SL_P_F64;
}

const char *sl_jit_fold_status(const sl_plan *p) {
  if (p->kind != SL_PLAN_AGGREGATE || !p->windowed)
    return "not a window aggregate";
  if (p->window.proctime)
    return "processing-time window";
  if (p->window.kind != SL_WINDOW_TUMBLE && p->window.kind != SL_WINDOW_HOP)
    return "only TUMBLE and HOP windows";
  /* Under repartitioning the owner folds the rows it is sent, each late
   * by its sender's watermark: runs of one sender's watermark at a time
   * (exec/worker_compiled.c).  A HOP row's partly late windows are by the
   * owner's watermark instead, and late records to a table need C. */
  if (p->strategy == SL_STRATEGY_REPARTITION &&
      p->window.kind != SL_WINDOW_TUMBLE)
    return "repartition of HOP windows";
  if (p->strategy == SL_STRATEGY_REPARTITION && p->late_table)
    return "late records to a table under repartition";
  for (int i = 0; i < p->nkeys; i++)
    if (!key_ptype_ok(sl_ptype_of(p->keys[i]->type)))
      return "a DECIMAL(>18) group key";
  for (int i = 0; i < p->naggs; i++) {
    const sl_plan_agg *a = &p->aggs[i];
    if (a->distinct)
      return "DISTINCT";
    if (a->arg && !arg_ptype_ok(sl_ptype_of(a->arg->type)))
      return "an aggregate over strings or DECIMAL";
  }
  return NULL;
}

/* The loop's variables, kept in allocas (SROA makes them registers). */
typedef struct fold_vars {
  LLVMValueRef r, lwm, wn, ne, late, rs;
  LLVMValueRef wi, slot; /* the watermark loop's and the probe's index */
  LLVMValueRef one;      /* without group keys: the group's state, once found */
} fold_vars;

static LLVMValueRef c64(jit_cg *g, int64_t v) {
  return LLVMConstInt(g->i64, (uint64_t)v, 1);
}

static LLVMBasicBlockRef blk(jit_cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

static LLVMValueRef ld(jit_cg *g, LLVMTypeRef t, LLVMValueRef base,
                       uint64_t off, unsigned align) {
  return jit_load(g, t, jit_at(g, base, off, t), align);
}

/* A field of a tmp row or a watermark row: memory the fold only reads
 * (jit_load_input). */
static LLVMValueRef ldin(jit_cg *g, LLVMTypeRef t, LLVMValueRef base,
                         uint64_t off, unsigned align) {
  return jit_load_input(g, t, jit_at(g, base, off, t), align);
}

/* sl_floor_div(a, b) for a constant b > 0. */
static LLVMValueRef floor_div(jit_cg *g, LLVMValueRef a, int64_t b) {
  LLVMValueRef q = LLVMBuildSDiv(g->b, a, c64(g, b), "");
  LLVMValueRef rem = LLVMBuildSRem(g->b, a, c64(g, b), "");
  LLVMValueRef adj =
      LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntNE, rem, c64(g, 0), ""),
                   LLVMBuildICmp(g->b, LLVMIntSLT, a, c64(g, 0), ""), "");
  return LLVMBuildSub(g->b, q, LLVMBuildZExt(g->b, adj, g->i64, ""), "");
}

/* Is field f of row null (row.h: bit f&7 of byte f>>3)? */
static LLVMValueRef is_null(jit_cg *g, LLVMValueRef row, int f) {
  LLVMValueRef byte = ldin(g, g->i8, row, (uint64_t)f >> 3, 1);
  LLVMValueRef bit =
      LLVMBuildAnd(g->b, byte, LLVMConstInt(g->i8, 1u << (f & 7), 0), "");
  return LLVMBuildICmp(g->b, LLVMIntNE, bit, LLVMConstInt(g->i8, 0, 0), "");
}

/* The watermark over input rows [wn, upto): advance_watermark (worker.c). */
static void advance(jit_cg *g, fold_vars *v, LLVMValueRef upto,
                    LLVMValueRef wm_rows, LLVMValueRef wm_nrows,
                    const sl_row_layout *wl) {
  LLVMValueRef end =
      LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntULT, upto, wm_nrows, ""),
                      upto, wm_nrows, "");
  LLVMValueRef ivar = v->wi;
  jit_store(g, jit_load(g, g->i32, v->wn, 4), ivar, 4);
  LLVMBasicBlockRef head = blk(g, "wm.head"), body = blk(g, "wm.body"),
                    done = blk(g, "wm.done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef i = jit_load(g, g->i32, ivar, 4);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, i, end, ""), body,
                  done);
  LLVMPositionBuilderAtEnd(g->b, body);
  if (wl) {
    LLVMValueRef off = LLVMBuildMul(g->b, LLVMBuildZExt(g->b, i, g->i64, ""),
                                    c64(g, (int64_t)wl->width), "");
    LLVMValueRef wrow = LLVMBuildGEP2(g->b, g->i8, wm_rows, &off, 1, "");
    LLVMValueRef x = ldin(g, g->i64, wrow, wl->fields[0].offset, 8);
    LLVMValueRef cur = jit_load(g, g->i64, v->lwm, 8);
    LLVMValueRef up = LLVMBuildAnd(
        g->b,
        LLVMBuildXor(g->b, is_null(g, wrow, 0), LLVMConstInt(g->i1, 1, 0), ""),
        LLVMBuildICmp(g->b, LLVMIntSGT, x, cur, ""), "");
    jit_store(g, LLVMBuildSelect(g->b, up, x, cur, ""), v->lwm, 8);
  }
  jit_store(g, LLVMBuildAdd(g->b, i, LLVMConstInt(g->i32, 1, 0), ""), ivar, 4);
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef wn = jit_load(g, g->i32, v->wn, 4);
  jit_store(g,
            LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntUGT, upto, wn, ""),
                            upto, wn, ""),
            v->wn, 4);
}

/* An argument field as sl_agg_update reads it: int64 (sign-extended, as
 * sl_int_load) or double. */
static LLVMValueRef load_arg(jit_cg *g, LLVMValueRef p, sl_ptype t) {
  unsigned align;
  LLVMTypeRef ft = jit_field_type(g, t, &align);
  LLVMValueRef x = jit_load_input(g, ft, p, align);
  if (ft == g->f32)
    return LLVMBuildFPExt(g->b, x, g->f64, "");
  if (ft == g->f64 || ft == g->i64)
    return x;
  return LLVMBuildSExt(g->b, x, g->i64, "");
}

/* Whether aggregate d takes this row (FILTER and NULL argument). */
static LLVMValueRef takes(jit_cg *g, LLVMValueRef row, const sl_agg_desc *d,
                          const sl_row_layout *tl) {
  LLVMValueRef yes = LLVMConstInt(g->i1, 1, 0);
  LLVMValueRef no1 = LLVMConstInt(g->i1, 1, 0);
  if (d->filter_field >= 0) {
    LLVMValueRef b = ldin(g, g->i8, row, tl->fields[d->filter_field].offset, 1);
    yes = LLVMBuildAnd(
        g->b, LLVMBuildXor(g->b, is_null(g, row, d->filter_field), no1, ""),
        LLVMBuildICmp(g->b, LLVMIntNE, b, LLVMConstInt(g->i8, 0, 0), ""), "");
  }
  if (d->op != SL_AGG_COUNT_STAR)
    yes = LLVMBuildAnd(
        g->b, yes, LLVMBuildXor(g->b, is_null(g, row, d->in_field), no1, ""),
        "");
  return yes;
}

/* The aggregate updates of sl_agg_update for one row and its states st;
 * check: only compute whether an integer SUM/AVG overflows (i1). */
static LLVMValueRef updates(jit_cg *g, LLVMValueRef row, LLVMValueRef st,
                            const sl_agg_set *aggs, const sl_row_layout *tl,
                            bool check) {
  LLVMValueRef ovf = LLVMConstInt(g->i1, 0, 0);
  for (int i = 0; i < aggs->n; i++) {
    const sl_agg_desc *d = &aggs->aggs[i];
    uint64_t so = d->state_offset;
    bool sum = d->op == SL_AGG_SUM || d->op == SL_AGG_AVG;
    if (check && !(sum && !is_float(d->in_ptype)))
      continue;
    LLVMValueRef take = takes(g, row, d, tl);
    LLVMValueRef one = LLVMBuildZExt(g->b, take, g->i64, "");
    if (d->op == SL_AGG_COUNT_STAR || d->op == SL_AGG_COUNT) {
      LLVMValueRef c = ld(g, g->i64, st, so, 8);
      jit_store(g, LLVMBuildAdd(g->b, c, one, ""), jit_at(g, st, so, g->i64),
                8);
      continue;
    }
    LLVMValueRef argp = jit_at(g, row, tl->fields[d->in_field].offset, g->i8);
    if (sum) {
      LLVMValueRef x = load_arg(g, argp, d->in_ptype);
      if (is_float(d->in_ptype)) {
        LLVMValueRef s = ld(g, g->f64, st, so, 8);
        LLVMValueRef ns = LLVMBuildFAdd(g->b, s, x, "");
        jit_store(g, LLVMBuildSelect(g->b, take, ns, s, ""),
                  jit_at(g, st, so, g->f64), 8);
      } else {
        LLVMValueRef s = ld(g, g->i64, st, so, 8);
        LLVMTypeRef rt[2] = {g->i64, g->i1};
        LLVMTypeRef sty = LLVMStructTypeInContext(g->ctx, rt, 2, 0);
        LLVMTypeRef ps[2] = {g->i64, g->i64};
        LLVMTypeRef ft = LLVMFunctionType(sty, ps, 2, 0);
        LLVMValueRef f =
            LLVMGetNamedFunction(g->mod, "llvm.sadd.with.overflow.i64");
        if (!f)
          f = LLVMAddFunction(g->mod, "llvm.sadd.with.overflow.i64", ft);
        LLVMValueRef args[2] = {s, x};
        LLVMValueRef res = LLVMBuildCall2(g->b, ft, f, args, 2, "");
        if (check) {
          ovf = LLVMBuildOr(
              g->b, ovf,
              LLVMBuildAnd(g->b, take, LLVMBuildExtractValue(g->b, res, 1, ""),
                           ""),
              "");
          continue;
        }
        jit_store(g,
                  LLVMBuildSelect(g->b, take,
                                  LLVMBuildExtractValue(g->b, res, 0, ""), s,
                                  ""),
                  jit_at(g, st, so, g->i64), 8);
      }
      LLVMValueRef c = ld(g, g->i64, st, so + 8, 8);
      jit_store(g, LLVMBuildAdd(g->b, c, one, ""),
                jit_at(g, st, so + 8, g->i64), 8);
      continue;
    }
    /* MIN / MAX: [present i64][value as stored in a row] */
    unsigned align;
    LLVMTypeRef vt = jit_field_type(g, d->in_ptype, &align);
    LLVMValueRef x = jit_load_input(g, vt, argp, align);
    LLVMValueRef cur = ld(g, vt, st, so + 8, align);
    LLVMValueRef present =
        LLVMBuildICmp(g->b, LLVMIntNE, ld(g, g->i64, st, so, 8), c64(g, 0), "");
    LLVMValueRef better;
    bool min = d->op == SL_AGG_MIN;
    if (is_float(d->in_ptype)) /* compare_values: as doubles, NaN equal */
      better = LLVMBuildFCmp(
          g->b, min ? LLVMRealOLT : LLVMRealOGT,
          vt == g->f32 ? LLVMBuildFPExt(g->b, x, g->f64, "") : x,
          vt == g->f32 ? LLVMBuildFPExt(g->b, cur, g->f64, "") : cur, "");
    else
      better = LLVMBuildICmp(g->b, min ? LLVMIntSLT : LLVMIntSGT, x, cur, "");
    LLVMValueRef store = LLVMBuildAnd(
        g->b, take,
        LLVMBuildOr(g->b,
                    LLVMBuildXor(g->b, present, LLVMConstInt(g->i1, 1, 0), ""),
                    better, ""),
        "");
    jit_store(g, LLVMBuildSelect(g->b, store, x, cur, ""),
              jit_at(g, st, so + 8, vt), align);
    LLVMValueRef p = ld(g, g->i64, st, so, 8);
    jit_store(g, LLVMBuildSelect(g->b, store, c64(g, 1), p, ""),
              jit_at(g, st, so, g->i64), 8);
  }
  return ovf;
}

/* sl_mix64 (row.h). */
/* The key row of tmp row `row` into keybuf, as sl_worker_fold_row builds
 * it (null bits, NULL fields zero). */
static void build_key(jit_cg *g, LLVMValueRef keybuf, LLVMValueRef row,
                      const sl_jit_fold_spec *spec) {
  const sl_row_layout *kl = spec->key_layout, *tl = spec->tmp;
  LLVMBuildMemSet(g->b, keybuf, LLVMConstInt(g->i8, 0, 0),
                  LLVMConstInt(g->i64, kl->width, 0), 8);
  for (int i = 0; i < kl->nfields; i++) {
    int tf = spec->tmp_keys + i;
    const sl_field *kf = &kl->fields[i];
    LLVMTypeRef it =
        kf->ptype == SL_P_STR ? g->i128 : jit_int_of_size(g, kf->size);
    LLVMValueRef nul = is_null(g, row, tf);
    LLVMValueRef nbp = jit_at(g, keybuf, (uint64_t)i >> 3, g->i8);
    LLVMValueRef bit =
        LLVMBuildShl(g->b, LLVMBuildZExt(g->b, nul, g->i8, ""),
                     LLVMConstInt(g->i8, (uint64_t)i & 7, 0), "");
    jit_store(g, LLVMBuildOr(g->b, jit_load(g, g->i8, nbp, 1), bit, ""), nbp,
              1);
    LLVMValueRef x = ldin(g, it, row, tl->fields[tf].offset, 1);
    x = LLVMBuildSelect(g->b, nul, LLVMConstInt(it, 0, 0), x, "");
    jit_store(g, x, jit_at(g, keybuf, kf->offset, it), 1);
  }
}

static bool strings_in(const sl_row_layout *kl) {
  for (int i = 0; i < kl->nfields; i++)
    if (kl->fields[i].ptype == SL_P_STR)
      return true;
  return false;
}

/* Rows ahead of the current one whose group-table slot is prefetched, and
 * the table size from which that pays: below it the slots stay in the
 * cache anyway and the second hash per record would only cost. */
#define PREFETCH_AHEAD 8
#define PREFETCH_TABLE_BYTES (1u << 20)

/* Prefetch the slot where tmp row r + PREFETCH_AHEAD's key will be
 * looked up in table (when there is such a row and the table is large):
 * with millions of groups nearly every probe misses the cache, and the
 * misses of several records then overlap. */
static void prefetch_ahead(jit_cg *g, LLVMValueRef r, LLVMValueRef n,
                           LLVMValueRef tmp, LLVMValueRef table,
                           LLVMValueRef have_table, LLVMValueRef keybuf,
                           const sl_jit_fold_spec *spec, uint64_t ew) {
  LLVMBasicBlockRef check = blk(g, "pf.check"), pf = blk(g, "pf"),
                    done = blk(g, "pf.done");
  LLVMValueRef ahead =
      LLVMBuildAdd(g->b, r, LLVMConstInt(g->i32, PREFETCH_AHEAD, 0), "");
  LLVMBuildCondBr(g->b,
                  LLVMBuildAnd(g->b, have_table,
                               LLVMBuildICmp(g->b, LLVMIntULT, ahead, n, ""),
                               ""),
                  check, done);
  LLVMPositionBuilderAtEnd(g->b, check);
  LLVMValueRef cap = LLVMBuildZExt(
      g->b, ld(g, g->i32, table, offsetof(sl_group_table, cap), 4), g->i64, "");
  LLVMBuildCondBr(
      g->b,
      LLVMBuildICmp(g->b, LLVMIntUGT,
                    LLVMBuildMul(g->b, cap, c64(g, (int64_t)ew), ""),
                    c64(g, PREFETCH_TABLE_BYTES), ""),
      pf, done);
  LLVMPositionBuilderAtEnd(g->b, pf);
  LLVMValueRef off = LLVMBuildMul(g->b, LLVMBuildZExt(g->b, ahead, g->i64, ""),
                                  c64(g, (int64_t)spec->tmp->width), "");
  build_key(g, keybuf, LLVMBuildGEP2(g->b, g->i8, tmp, &off, 1, ""), spec);
  LLVMValueRef h = jit_key_hash(g, spec->key_layout, keybuf);
  LLVMValueRef slot =
      LLVMBuildAnd(g->b, h, LLVMBuildSub(g->b, cap, c64(g, 1), ""), "");
  LLVMValueRef soff = LLVMBuildMul(g->b, slot, c64(g, (int64_t)ew), "");
  LLVMValueRef at = LLVMBuildGEP2(
      g->b, g->i8, ld(g, g->ptr, table, offsetof(sl_group_table, slots), 8),
      &soff, 1, "");
  unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
  LLVMTypeRef pt[1] = {g->ptr};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, pt, 1);
  LLVMTypeRef ps[4] = {g->ptr, g->i32, g->i32, g->i32};
  /* a write (the update follows), high locality, data cache */
  LLVMValueRef args[4] = {at, LLVMConstInt(g->i32, 1, 0),
                          LLVMConstInt(g->i32, 3, 0),
                          LLVMConstInt(g->i32, 1, 0)};
  LLVMBuildCall2(g->b,
                 LLVMFunctionType(LLVMVoidTypeInContext(g->ctx), ps, 4, 0), fn,
                 args, 4, "");
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
}

#define CALL_FIELD(t, f, a) ld(g, t, call, offsetof(sl_jit_fold_call, f), a)

int jit_build_fold(jit_cg *g, const char *name, const sl_jit_fold_spec *spec,
                   sl_error *err) {
  const sl_plan_window *pw = spec->window;
  const sl_row_layout *tl = spec->tmp, *kl = spec->key_layout;
  const sl_row_layout *wl = spec->wm_layout;
  const sl_agg_set *aggs = spec->aggs;
  for (int i = 0; i < kl->nfields; i++)
    if (!key_ptype_ok(kl->fields[i].ptype) ||
        (kl->fields[i].size > 8 && kl->fields[i].ptype != SL_P_STR))
      return sl_error_set(err, SL_EINTERNAL,
                          "internal error: JIT fold over a key it cannot hash");
  if (wl && (wl->fields[0].ptype == SL_P_STR || wl->fields[0].size != 8))
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: JIT fold over a watermark that is not "
                        "a timestamp");
  const uint64_t kw = kl->width;
  const uint64_t ew = (8 + kl->width + aggs->state_width + 7u) & ~7u;
  const bool tumble = pw->kind == SL_WINDOW_TUMBLE;
  const int64_t unit = pw->unit_us, size = pw->size_us, slide = pw->slide_us;
  const int64_t len = tumble ? size : slide; /* a slice's length */

  LLVMTypeRef ps[1] = {g->ptr};
  g->fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->i32, ps, 1, 0));
  LLVMValueRef call = LLVMGetParam(g->fn, 0);
  LLVMPositionBuilderAtEnd(g->b, blk(g, "entry"));
  fold_vars v;
  v.r = LLVMBuildAlloca(g->b, g->i32, "r");
  v.wn = LLVMBuildAlloca(g->b, g->i32, "wn");
  v.lwm = LLVMBuildAlloca(g->b, g->i64, "lwm");
  v.ne = LLVMBuildAlloca(g->b, g->i64, "ne");
  v.late = LLVMBuildAlloca(g->b, g->i64, "late");
  v.rs = LLVMBuildAlloca(g->b, g->i64, "rs");
  v.wi = LLVMBuildAlloca(g->b, g->i32, "wi");
  v.slot = LLVMBuildAlloca(g->b, g->i32, "slot");
  v.one = NULL;
  if (kl->nfields == 0) {
    v.one = LLVMBuildAlloca(g->b, g->ptr, "one");
    jit_store(g, LLVMConstNull(g->ptr), v.one, 8);
  }
  LLVMValueRef keybuf =
      LLVMBuildAlloca(g->b, LLVMArrayType(g->i64, (unsigned)(kw / 8)), "key");
  keybuf = LLVMBuildBitCast(g->b, keybuf, g->ptr, "");
  LLVMValueRef keybuf2 =
      LLVMBuildAlloca(g->b, LLVMArrayType(g->i64, (unsigned)(kw / 8)), "key2");
  keybuf2 = LLVMBuildBitCast(g->b, keybuf2, g->ptr, "");
  jit_store(g, CALL_FIELD(g->i32, pos, 4), v.r, 4);
  jit_store(g, CALL_FIELD(g->i32, wm_next, 4), v.wn, 4);
  jit_store(g, CALL_FIELD(g->i64, local_wm, 8), v.lwm, 8);
  jit_store(g, CALL_FIELD(g->i64, next_end, 8), v.ne, 8);
  jit_store(g, CALL_FIELD(g->i64, late, 8), v.late, 8);
  jit_store(g, CALL_FIELD(g->i64, rows_state, 8), v.rs, 8);
  LLVMValueRef tmp = CALL_FIELD(g->ptr, tmp, 8);
  LLVMValueRef sel = CALL_FIELD(g->ptr, sel, 8);
  LLVMValueRef origin = CALL_FIELD(g->ptr, origin, 8);
  LLVMValueRef wm_rows = CALL_FIELD(g->ptr, wm_rows, 8);
  LLVMValueRef table = CALL_FIELD(g->ptr, table, 8);
  LLVMValueRef slice_start = CALL_FIELD(g->i64, slice_start, 8);
  LLVMValueRef n = CALL_FIELD(g->i32, n, 4);
  LLVMValueRef wm_nrows = CALL_FIELD(g->i32, wm_nrows, 4);
  LLVMValueRef have_table =
      LLVMBuildICmp(g->b, LLVMIntNE, table, LLVMConstNull(g->ptr), "");
  LLVMValueRef has_origin =
      LLVMBuildICmp(g->b, LLVMIntNE, origin, LLVMConstNull(g->ptr), "");
  LLVMTypeRef p32 = LLVMPointerType(g->i32, 0);
  sel = LLVMBuildBitCast(g->b, sel, p32, "");
  origin = LLVMBuildBitCast(g->b, origin, p32, "");

  LLVMBasicBlockRef head = blk(g, "loop"), body = blk(g, "row"),
                    next = blk(g, "next"), stop = blk(g, "stop"),
                    done = blk(g, "done");
  LLVMBuildBr(g->b, head);

  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef r = jit_load(g, g->i32, v.r, 4);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, r, n, ""), body, done);

  LLVMPositionBuilderAtEnd(g->b, body);
  if (!strings_in(kl)) /* a string key's hash is too dear to do twice */
    prefetch_ahead(g, r, n, tmp, table, have_table, keybuf2, spec, ew);
  LLVMValueRef r64 = LLVMBuildZExt(g->b, r, g->i64, "");
  LLVMValueRef at =
      jit_load(g, g->i32, LLVMBuildGEP2(g->b, g->i32, sel, &r64, 1, ""), 4);
  LLVMValueRef at64 = LLVMBuildZExt(g->b, at, g->i64, "");
  /* origin[at] only where there is an origin: a select of a load would
   * read through NULL */
  LLVMBasicBlockRef o_yes = blk(g, "origin"), o_done = blk(g, "origin.done");
  LLVMBasicBlockRef o_from = LLVMGetInsertBlock(g->b);
  LLVMBuildCondBr(g->b, has_origin, o_yes, o_done);
  LLVMPositionBuilderAtEnd(g->b, o_yes);
  LLVMValueRef oat =
      jit_load(g, g->i32, LLVMBuildGEP2(g->b, g->i32, origin, &at64, 1, ""), 4);
  LLVMBuildBr(g->b, o_done);
  LLVMPositionBuilderAtEnd(g->b, o_done);
  LLVMValueRef input_row =
      jit_phi2(g, g->i32, at, o_from, oat, o_yes, "input_row");
  advance(g, &v, input_row, wm_rows, wm_nrows, wl);

  LLVMValueRef roff = LLVMBuildMul(g->b, r64, c64(g, (int64_t)tl->width), "");
  LLVMValueRef row = LLVMBuildGEP2(g->b, g->i8, tmp, &roff, 1, "trow");
  /* the event time: NULL is C's error to report */
  LLVMBasicBlockRef has_ts = blk(g, "ts");
  LLVMBuildCondBr(g->b, is_null(g, row, spec->tmp_time), stop, has_ts);
  LLVMPositionBuilderAtEnd(g->b, has_ts);
  LLVMValueRef ts = ldin(g, g->i64, row, tl->fields[spec->tmp_time].offset, 8);
  LLVMValueRef start = LLVMBuildAdd(
      g->b,
      LLVMBuildMul(
          g->b,
          floor_div(g, LLVMBuildSub(g->b, ts, c64(g, pw->offset_us), ""), len),
          c64(g, len), ""),
      c64(g, pw->offset_us), "start");
  LLVMValueRef wm = jit_load(g, g->i64, v.lwm, 8);
  /* every window of this record has fired: late */
  LLVMValueRef late = LLVMBuildICmp(
      g->b, LLVMIntSLE,
      LLVMBuildSub(g->b, LLVMBuildAdd(g->b, start, c64(g, size), ""),
                   c64(g, unit), ""),
      wm, "");
  LLVMBasicBlockRef is_late = blk(g, "late"), on_time = blk(g, "on_time");
  LLVMBuildCondBr(g->b, late, is_late, on_time);
  LLVMPositionBuilderAtEnd(g->b, is_late);
  jit_add_to(g, v.late, c64(g, 1));
  LLVMBuildBr(g->b, next);

  LLVMPositionBuilderAtEnd(g->b, on_time);
  /* another slice than the cached one: C finds or makes it */
  LLVMBasicBlockRef same = blk(g, "slice");
  LLVMBuildCondBr(
      g->b,
      LLVMBuildAnd(g->b, have_table,
                   LLVMBuildICmp(g->b, LLVMIntEQ, start, slice_start, ""), ""),
      same, stop);
  LLVMPositionBuilderAtEnd(g->b, same);
  LLVMValueRef fe =
      LLVMBuildAdd(g->b, start, c64(g, tumble ? size : slide), "fe");
  if (!tumble) {
    /* partly late: its first windows have fired, the later ones count it
     * (a branch, not a select: rows are rarely partly late, and the
     * division was a fifth of q5's fold) */
    LLVMValueRef partly = LLVMBuildICmp(
        g->b, LLVMIntSLE, LLVMBuildSub(g->b, fe, c64(g, unit), ""), wm, "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef is_partly = blk(g, "partly"), fe_done = blk(g, "fe");
    LLVMBuildCondBr(g->b, partly, is_partly, fe_done);
    LLVMPositionBuilderAtEnd(g->b, is_partly);
    LLVMValueRef k = floor_div(
        g, LLVMBuildSub(g->b, LLVMBuildAdd(g->b, wm, c64(g, unit), ""), fe, ""),
        slide);
    LLVMValueRef fe2 =
        LLVMBuildAdd(g->b, fe,
                     LLVMBuildMul(g->b, LLVMBuildAdd(g->b, k, c64(g, 1), ""),
                                  c64(g, slide), ""),
                     "");
    LLVMBuildBr(g->b, fe_done);
    LLVMPositionBuilderAtEnd(g->b, fe_done);
    fe = jit_phi2(g, g->i64, fe, from, fe2, is_partly, "fe");
  }
  LLVMValueRef ne = jit_load(g, g->i64, v.ne, 8);
  jit_store(g,
            LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, fe, ne, ""),
                            fe, ne, ""),
            v.ne, 8);

  /* Without group keys (a window's COUNT(*) or MAX over all its rows)
   * every row of the call updates the one group of the call's slice: found
   * (or inserted) by the first, taken as it is by the rest.  Its state
   * stays where it is: the table never grows past its one group, and C
   * touches it only between calls. */
  LLVMBasicBlockRef update_at = blk(g, "states");
  LLVMBasicBlockRef known_from = NULL;
  LLVMValueRef known = NULL;
  if (v.one) {
    known = jit_load(g, g->ptr, v.one, 8);
    LLVMBasicBlockRef find = blk(g, "find");
    known_from = LLVMGetInsertBlock(g->b);
    LLVMBuildCondBr(
        g->b, LLVMBuildICmp(g->b, LLVMIntNE, known, LLVMConstNull(g->ptr), ""),
        update_at, find);
    LLVMPositionBuilderAtEnd(g->b, find);
  }
  /* the key row, as sl_worker_fold_row builds it, and sl_key_hash */
  build_key(g, keybuf, row, spec);
  bool strings = strings_in(kl);
  LLVMValueRef h = jit_key_hash(g, kl, keybuf);

  /* the probe: linear, from hash & mask */
  LLVMValueRef slots = ld(g, g->ptr, table, offsetof(sl_group_table, slots), 8);
  LLVMValueRef mask =
      LLVMBuildSub(g->b, ld(g, g->i32, table, offsetof(sl_group_table, cap), 4),
                   LLVMConstInt(g->i32, 1, 0), "mask");
  LLVMValueRef ivar = v.slot;
  jit_store(g,
            LLVMBuildAnd(g->b, LLVMBuildTrunc(g->b, h, g->i32, ""), mask, ""),
            ivar, 4);
  LLVMBasicBlockRef probe = blk(g, "probe"), cmp = blk(g, "cmp"),
                    other = blk(g, "other"), hit = blk(g, "hit");
  LLVMBuildBr(g->b, probe);
  LLVMPositionBuilderAtEnd(g->b, probe);
  LLVMValueRef si =
      LLVMBuildZExt(g->b, jit_load(g, g->i32, ivar, 4), g->i64, "");
  LLVMValueRef eoff = LLVMBuildMul(g->b, si, c64(g, (int64_t)ew), "");
  LLVMValueRef e = LLVMBuildGEP2(g->b, g->i8, slots, &eoff, 1, "entry");
  LLVMValueRef eh = ld(g, g->i64, e, 0, 8);
  LLVMBasicBlockRef not_eq = blk(g, "probe.ne");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, eh, h, ""), cmp, not_eq);
  LLVMPositionBuilderAtEnd(g->b, not_eq);
  /* an empty slot: a new group; sl_group_table_upsert inserts it (growing
   * the table first if it must: the slots are reloaded per record) by a
   * direct call, and the updates below run on its fresh state.  Redoing
   * the whole record in C instead made high-cardinality windows, where
   * most records are new groups, slower than phase 1. */
  LLVMBasicBlockRef insert = blk(g, "insert");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, eh, c64(g, 0), ""),
                  insert, other);
  LLVMPositionBuilderAtEnd(g->b, insert);
  LLVMTypeRef ps3[3] = {g->ptr, g->i64, g->ptr};
  LLVMValueRef iargs[3] = {table, h, keybuf};
  LLVMValueRef fresh =
      jit_call_c(g, LLVMFunctionType(g->ptr, ps3, 3, 0),
                 (void *)(uintptr_t)sl_group_table_upsert, iargs, 3);
  LLVMBuildBr(g->b, update_at);
  LLVMPositionBuilderAtEnd(g->b, cmp);
  /* keys_equal without strings: memcmp of the whole key row (8-byte
   * multiple, row.h) */
  LLVMValueRef eq = LLVMConstInt(g->i1, 1, 0);
  if (!strings) {
    for (uint64_t w = 0; w < kw; w += 8)
      eq = LLVMBuildAnd(g->b, eq,
                        LLVMBuildICmp(g->b, LLVMIntEQ,
                                      ld(g, g->i64, e, 8 + w, 8),
                                      ld(g, g->i64, keybuf, w, 8), ""),
                        "");
  } else {
    /* keys_equal with strings: the null bitmaps, then field by field
     * (NULL fields are zero in both, so comparing them is harmless) */
    for (uint32_t w = 0; w < kl->null_bytes; w++)
      eq =
          LLVMBuildAnd(g->b, eq,
                       LLVMBuildICmp(g->b, LLVMIntEQ, ld(g, g->i8, e, 8 + w, 1),
                                     ld(g, g->i8, keybuf, w, 1), ""),
                       "");
    for (int i = 0; i < kl->nfields; i++) {
      const sl_field *kf = &kl->fields[i];
      LLVMValueRef same;
      if (kf->ptype == SL_P_STR) {
        same = jit_str_eq(g, jit_at(g, e, 8 + kf->offset, g->i8),
                          jit_at(g, keybuf, kf->offset, g->i8));
      } else {
        LLVMTypeRef it = jit_int_of_size(g, kf->size);
        same = LLVMBuildICmp(g->b, LLVMIntEQ, ld(g, it, e, 8 + kf->offset, 1),
                             ld(g, it, keybuf, kf->offset, 1), "");
      }
      eq = LLVMBuildAnd(g->b, eq, same, "");
    }
  }
  LLVMBuildCondBr(g->b, eq, hit, other);
  LLVMPositionBuilderAtEnd(g->b, other);
  jit_store(g,
            LLVMBuildAnd(g->b,
                         LLVMBuildAdd(g->b, jit_load(g, g->i32, ivar, 4),
                                      LLVMConstInt(g->i32, 1, 0), ""),
                         mask, ""),
            ivar, 4);
  LLVMBuildBr(g->b, probe);

  LLVMPositionBuilderAtEnd(g->b, hit);
  LLVMValueRef hit_st = jit_at(g, e, 8 + kw, g->i8);
  LLVMBuildBr(g->b, update_at);
  LLVMPositionBuilderAtEnd(g->b, update_at);
  LLVMValueRef st = jit_phi2(g, g->ptr, hit_st, hit, fresh, insert, "st");
  if (known) {
    LLVMAddIncoming(st, &known, &known_from, 1);
    jit_store(g, st, v.one, 8);
  }
  LLVMValueRef ovf = updates(g, row, st, aggs, tl, true);
  LLVMBasicBlockRef upd = blk(g, "update");
  LLVMBuildCondBr(g->b, ovf, stop, upd);
  LLVMPositionBuilderAtEnd(g->b, upd);
  updates(g, row, st, aggs, tl, false);
  jit_add_to(g, v.rs, c64(g, 1));
  LLVMBuildBr(g->b, next);

  LLVMPositionBuilderAtEnd(g->b, next);
  advance(g, &v, LLVMBuildAdd(g->b, input_row, LLVMConstInt(g->i32, 1, 0), ""),
          wm_rows, wm_nrows, wl);
  jit_store(g, LLVMBuildAdd(g->b, r, LLVMConstInt(g->i32, 1, 0), ""), v.r, 4);
  LLVMBuildBr(g->b, head);

  /* done or stopped: the loop's state back into the call */
  LLVMBasicBlockRef out[2] = {done, stop};
  for (int i = 0; i < 2; i++) {
    LLVMPositionBuilderAtEnd(g->b, out[i]);
    struct {
      size_t off;
      LLVMValueRef var;
      LLVMTypeRef t;
    } back[6] = {
        {offsetof(sl_jit_fold_call, pos), v.r, g->i32},
        {offsetof(sl_jit_fold_call, wm_next), v.wn, g->i32},
        {offsetof(sl_jit_fold_call, local_wm), v.lwm, g->i64},
        {offsetof(sl_jit_fold_call, next_end), v.ne, g->i64},
        {offsetof(sl_jit_fold_call, late), v.late, g->i64},
        {offsetof(sl_jit_fold_call, rows_state), v.rs, g->i64},
    };
    for (int f = 0; f < 6; f++)
      jit_store(g, jit_load(g, back[f].t, back[f].var, 4),
                jit_at(g, call, back[f].off, back[f].t), 4);
    LLVMBuildRet(g->b, LLVMConstInt(g->i32, i == 0 ? JIT_OK : JIT_ERROR, 0));
  }
  return SL_OK;
}

const char *sl_jit_route_status(const sl_plan *p) {
  if (p->kind != SL_PLAN_AGGREGATE || p->strategy != SL_STRATEGY_REPARTITION)
    return "not repartitioned";
  if (p->windowed && p->window.kind == SL_WINDOW_SESSION)
    return "session windows";
  for (int i = 0; i < p->nkeys; i++)
    if (!key_ptype_ok(sl_ptype_of(p->keys[i]->type)))
      return "a DECIMAL(>18) group key";
  return NULL;
}

/* The repartition's routing: for each tmp row, the exchange member that
 * owns its key, (sl_key_hash >> 32) % owners as fold_tmp computes it
 * (the high bits: group tables index by the low ones).
 *
 *   for r in 0..n: key row of tmp row r; dest[r] = (hash >> 32) % owners
 */
int jit_build_route(jit_cg *g, const char *name, const sl_jit_fold_spec *spec,
                    int owners, sl_error *err) {
  const sl_row_layout *kl = spec->key_layout, *tl = spec->tmp;
  for (int i = 0; i < kl->nfields; i++)
    if (!key_ptype_ok(kl->fields[i].ptype) ||
        (kl->fields[i].size > 8 && kl->fields[i].ptype != SL_P_STR))
      return sl_error_set(err, SL_EINTERNAL,
                          "internal error: JIT routing of a key it cannot "
                          "hash");
  /* void route(const uint8_t *tmp, uint32_t n, uint32_t *dest) */
  LLVMTypeRef ps[3] = {g->ptr, g->i32, g->ptr};
  g->fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->i32, ps, 3, 0));
  LLVMValueRef tmp = LLVMGetParam(g->fn, 0), n = LLVMGetParam(g->fn, 1),
               dest = LLVMGetParam(g->fn, 2);
  LLVMBasicBlockRef entry = blk(g, "entry");
  LLVMPositionBuilderAtEnd(g->b, entry);
  LLVMValueRef keybuf = LLVMBuildAlloca(
      g->b, LLVMArrayType(g->i64, (unsigned)(kl->width / 8)), "key");
  keybuf = LLVMBuildBitCast(g->b, keybuf, g->ptr, "");
  LLVMBasicBlockRef head = blk(g, "loop"), body = blk(g, "row"),
                    done = blk(g, "done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef r = LLVMBuildPhi(g->b, g->i32, "r");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, r, n, ""), body, done);
  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef r64 = LLVMBuildZExt(g->b, r, g->i64, "");
  LLVMValueRef off = LLVMBuildMul(g->b, r64, c64(g, (int64_t)tl->width), "");
  build_key(g, keybuf, LLVMBuildGEP2(g->b, g->i8, tmp, &off, 1, ""), spec);
  LLVMValueRef h = jit_key_hash(g, kl, keybuf);
  LLVMValueRef d = LLVMBuildURem(g->b, LLVMBuildLShr(g->b, h, c64(g, 32), ""),
                                 c64(g, owners), "");
  jit_store(g, LLVMBuildTrunc(g->b, d, g->i32, ""),
            LLVMBuildGEP2(
                g->b, g->i32,
                LLVMBuildBitCast(g->b, dest, LLVMPointerType(g->i32, 0), ""),
                &r64, 1, ""),
            4);
  LLVMValueRef r1 = LLVMBuildAdd(g->b, r, LLVMConstInt(g->i32, 1, 0), "");
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef rin[2] = {LLVMConstInt(g->i32, 0, 0), r1};
  LLVMBasicBlockRef rfrom[2] = {entry, body_end};
  LLVMAddIncoming(r, rin, rfrom, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMBuildRet(g->b, LLVMConstInt(g->i32, JIT_OK, 0));
  return SL_OK;
}
