/* query_setup.c - what a query needs before its workers start: the lookup
 * join's table loaded and hashed, the row layouts and the interpreter's
 * programs of every step (prepare), and the JIT's compiled functions for
 * them (prepare_jit).  The executor (executor.c) calls both, then runs the
 * workers (worker.c) and the coordinator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/session/changelog.h"
#include "sluice/state/host_memory.h"

static int compile(exec_query *q, const sl_bexpr *e, const sl_row_layout *l,
                   const int *map, sl_expr_prog **out, sl_error *err) {
  *out = NULL;
  if (!e)
    return SL_OK;
  return sl_expr_compile(&q->arena, e, l, map, out, err);
}

/* The stream field a bare TIMESTAMP column reads, or -1. */
static int timestamp_field(const exec_query *q, const sl_bexpr *e,
                           const int *map0) {
  if (!e || e->kind != SL_BEXPR_COLUMN || e->depth != 0 || e->index < 0 ||
      e->index >= q->plan->base_ncols)
    return -1;
  int f = map0[e->index];
  const sl_row_layout *l = q->source.stream_layout;
  return f >= 0 && f < l->nfields && l->fields[f].ptype == SL_P_TS ? f : -1;
}

/* Late records to a table: can a buffer be scanned for them by reading
 * fields (q->late.fast)?  Event time a TIMESTAMP column, the watermark
 * that column or that column less a day-time interval literal. */
static void late_fast_path(exec_query *q, const int *map0) {
  const sl_plan *plan = q->plan;
  const sl_bexpr *w = plan->watermark;
  int tf = timestamp_field(q, plan->window.time, map0);
  int wf = timestamp_field(q, w, map0);
  int64_t shift = 0;
  if (wf < 0 && w && w->kind == SL_BEXPR_BINARY && w->op == SL_OP_SUB &&
      w->args[1]->kind == SL_BEXPR_LITERAL &&
      w->args[1]->type->kind == SL_TYPE_INTERVAL_DAY_TIME) {
    wf = timestamp_field(q, w->args[0], map0);
    shift = w->args[1]->lit.i64 * 1000; /* ms to us */
  }
  if (tf < 0 || wf < 0 || w->type->kind != SL_TYPE_TIMESTAMP)
    return;
  q->late.fast = true;
  q->late.time_field = tf;
  q->late.wm_field = wf;
  q->late.wm_shift_us = shift;
}

/* ---- the lookup join's table -------------------------------------------- */

/* The table is loaded whole into each process that runs the query: its
 * rows, their key rows and the hash index count against the memory limit
 * with the query's state, as they grow. */
static int charge_table(exec_query *q, uint64_t bytes, uint32_t nrows,
                        sl_error *err) {
  uint64_t total;
  if (!sl_memory_grew_over(q->memory, &q->lookup.table_charged, bytes, &total))
    return SL_OK;
  return sl_memory_over_error(
      err, q->memory, bytes, total,
      "filter the table in a view, or look up in a smaller one",
      "the lookup join's table '%s' (%u rows so far, loaded whole) holds",
      q->plan->inputs[1].table->name, nrows);
}

/* The integer value of a one-field integer key row, or false when the key
 * is not one integer or is NULL. */
static bool int_key(const sl_row_layout *kl, const uint8_t *key, int64_t *v) {
  if (kl->nfields != 1 || sl_row_is_null(key, 0))
    return false;
  const sl_field *f = &kl->fields[0];
  switch (f->ptype) {
  case SL_P_I8:
  case SL_P_I16:
  case SL_P_I32:
  case SL_P_I64:
    *v = sl_int_load(key + f->offset, f->ptype);
    return true;
  default:
    return false;
  }
}

/* A table with one integer key whose values are unique and dense (at most
 * four slots per row, and at most 1 << 20) is indexed by value too: a
 * probe is a bounds check and a load (dictionary codes are such keys). */
static int index_directly(exec_query *q, uint64_t held, sl_error *err) {
  exec_lookup_state *lk = &q->lookup;
  const sl_row_layout *kl = lk->join_key_layout;
  if (!lk->table_unique || lk->table_nrows == 0 || kl->nfields != 1)
    return SL_OK;
  int64_t lo = INT64_MAX, hi = INT64_MIN, v;
  for (uint32_t r = 0; r < lk->table_nrows; r++) {
    if (!int_key(kl, lk->table_keys[r], &v))
      return SL_OK; /* NULL keys (matching nothing) or not an integer */
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  uint64_t span = (uint64_t)hi - (uint64_t)lo; /* no overflow: hi >= lo */
  if (span >= (1u << 20) || span >= 4 * (uint64_t)lk->table_nrows + 64)
    return SL_OK;
  uint64_t n = span + 1;
  int rc = charge_table(q, held + n * sizeof(int32_t), lk->table_nrows, err);
  if (rc != SL_OK)
    return rc;
  lk->table_direct = SL_ANEW_N(&q->arena, int32_t, n);
  memset(lk->table_direct, 0xff, n * sizeof(int32_t)); /* -1: no row */
  for (uint32_t r = 0; r < lk->table_nrows; r++) {
    int_key(kl, lk->table_keys[r], &v);
    lk->table_direct[(uint64_t)v - (uint64_t)lo] = (int32_t)r;
  }
  lk->table_direct_lo = lo;
  lk->table_direct_n = n;
  return SL_OK;
}

static int load_table(exec_query *q, int *table_map, sl_error *err) {
  const sl_plan *plan = q->plan;
  const sl_plan_input *in = &plan->inputs[1];
  const int *table_leaf;
  const bool *as_code;
  sl_plan_source_leaves(&q->arena, in, &table_leaf, &as_code);
  sl_source_spec spec = {
      in->table, q->lookup.table_layout, table_leaf, 0, 1, 0, NULL, false,
      as_code};
  sl_source *src;
  int rc = in->connector->open(&spec, &src, err);
  if (rc != SL_OK)
    return rc;
  sl_expr_prog **kp = SL_ANEW_N(&q->arena, sl_expr_prog *, plan->njoin_keys);
  for (int i = 0; i < plan->njoin_keys && rc == SL_OK; i++)
    rc = compile(q, plan->join_table_keys[i], q->lookup.table_layout, table_map,
                 &kp[i], err);
  int cap_bufs = 8;
  q->lookup.table_buffers = malloc(sizeof(sl_buffer) * 2 * (size_t)cap_bufs);
  sl_expr_ctx *ctx = sl_expr_ctx_new();
  bool done = false;
  uint32_t nrows = 0;
  uint64_t held = 0; /* bytes of table_buffers */
  while (rc == SL_OK && !done) {
    if (q->lookup.ntable_buffers + 2 > 2 * cap_bufs) {
      cap_bufs *= 2;
      q->lookup.table_buffers = realloc(
          q->lookup.table_buffers, sizeof(sl_buffer) * 2 * (size_t)cap_bufs);
    }
    if (!q->lookup.table_buffers)
      abort();
    sl_buffer *b = &q->lookup.table_buffers[q->lookup.ntable_buffers];
    sl_buffer_init(b, q->lookup.table_layout, q->buffer_size);
    rc = in->connector->next(src, b, &done, err);
    if (rc != SL_OK || b->nrows == 0) {
      sl_buffer_free(b);
      continue;
    }
    /* The key row of every table row, in a parallel buffer. */
    sl_buffer *kb = &q->lookup.table_buffers[q->lookup.ntable_buffers + 1];
    sl_buffer_init(kb, q->lookup.join_key_layout,
                   b->nrows * q->lookup.join_key_layout->width + b->cap);
    q->lookup.ntable_buffers += 2;
    uint32_t *sel = malloc(sizeof(uint32_t) * b->nrows);
    for (uint32_t i = 0; i < b->nrows; i++)
      sel[i] = i;
    int k =
        sl_exec_eval_rows(kp, plan->njoin_keys, b, sel, b->nrows, kb, ctx, err);
    free(sel);
    if (k < 0)
      rc = k;
    else if ((uint32_t)k != b->nrows)
      rc = sl_error_set(err, SL_EINTERNAL, "join keys did not fit");
    nrows += b->nrows;
    held += b->cap + kb->cap;
    if (rc == SL_OK)
      rc = charge_table(q, held, nrows, err);
  }
  in->connector->close(src);
  sl_expr_ctx_free(ctx);
  if (rc != SL_OK)
    return rc;

  q->lookup.table_nrows = nrows;
  q->lookup.table_rows = SL_ANEW_N(&q->arena, uint8_t *, nrows + 1);
  q->lookup.table_keys = SL_ANEW_N(&q->arena, uint8_t *, nrows + 1);
  uint32_t r = 0;
  for (int b = 0; b < q->lookup.ntable_buffers; b += 2)
    for (uint32_t i = 0; i < q->lookup.table_buffers[b].nrows; i++, r++) {
      q->lookup.table_rows[r] = sl_buffer_row(&q->lookup.table_buffers[b], i);
      q->lookup.table_keys[r] =
          sl_buffer_row(&q->lookup.table_buffers[b + 1], i);
    }
  uint32_t cap = 16;
  while (cap < 2 * nrows)
    cap *= 2;
  q->lookup.table_cap = cap;
  held += (uint64_t)(nrows + 1) * 2 * sizeof(uint8_t *) +
          (uint64_t)cap * (sizeof(uint64_t) + sizeof(uint32_t));
  int rc2 = charge_table(q, held, nrows, err);
  if (rc2 != SL_OK)
    return rc2;
  q->lookup.table_hash = SL_ANEW_N(&q->arena, uint64_t, cap);
  q->lookup.table_slot_row = SL_ANEW_N(&q->arena, uint32_t, cap);
  bool unique = true;
  for (r = 0; r < nrows; r++) {
    const uint8_t *key = q->lookup.table_keys[r];
    bool null_key = false;
    for (int f = 0; f < q->lookup.join_key_layout->nfields; f++)
      null_key |= sl_row_is_null(key, f);
    if (null_key)
      continue;
    uint64_t h = sl_key_hash(q->lookup.join_key_layout, key);
    uint32_t j = (uint32_t)h & (cap - 1);
    for (; q->lookup.table_hash[j]; j = (j + 1) & (cap - 1))
      if (q->lookup.table_hash[j] == h &&
          sl_lookup_keys_equal(
              q->lookup.join_key_layout, key,
              q->lookup.table_keys[q->lookup.table_slot_row[j]]))
        unique = false;
    q->lookup.table_hash[j] = h;
    q->lookup.table_slot_row[j] = r;
  }
  q->lookup.table_unique = unique;
  return index_directly(q, held, err);
}

/* ---- setting a query up ------------------------------------------------- */

static const sl_row_layout *layout_of(sl_arena *a, int n,
                                      const char *const *names,
                                      const sl_type *const *types) {
  return sl_row_layout_new(a, n, names, types);
}

/* A lookup join: the table's layout and the joined rows', the stream's
 * join keys and the filter after the join, the table loaded and hashed.
 * *row_map: the plan's columns in the joined row. */
static int prepare_join(exec_query *q, const sl_row_layout **ins,
                        const int *map0, int **row_map, sl_error *err) {
  const sl_plan *plan = q->plan;
  sl_arena *a = &q->arena;
  q->lookup.join = true;
  q->lookup.table_layout = sl_plan_input_layout(a, plan, 1);
  ins[1] = q->lookup.table_layout;
  int base1[2] = {-1, 0};
  int *map1 = sl_plan_column_map(a, plan, ins, base1);
  /* Joined rows: the stream's fields, then the table's. */
  q->lookup.joined_layout =
      sl_plan_joined_layout(a, q->source.stream_layout, q->lookup.table_layout);
  int basej[2] = {0, q->source.stream_layout->nfields};
  *row_map = sl_plan_column_map(a, plan, ins, basej);
  q->row_layout = q->lookup.joined_layout;
  /* Join keys. */
  q->lookup.nkey_progs = plan->njoin_keys;
  q->lookup.stream_key_progs = SL_ANEW_N(a, sl_expr_prog *, plan->njoin_keys);
  const sl_type **kt = SL_ANEW_N(a, const sl_type *, plan->njoin_keys);
  for (int i = 0; i < plan->njoin_keys; i++) {
    int rc = compile(q, plan->join_stream_keys[i], q->source.stream_layout,
                     map0, &q->lookup.stream_key_progs[i], err);
    if (rc != SL_OK)
      return rc;
    kt[i] = plan->join_stream_keys[i]->type;
  }
  q->lookup.join_key_layout = layout_of(a, plan->njoin_keys, NULL, kt);
  int rc = compile(q, plan->post_join_filter, q->lookup.joined_layout, *row_map,
                   &q->lookup.post_join_filter, err);
  if (rc == SL_OK)
    rc = load_table(q, map1, err);
  return rc;
}

void sl_exec_free_lookup_table(exec_lookup_state *lk,
                               sl_memory_account *memory) {
  for (int i = 0; i < lk->ntable_buffers; i++)
    sl_buffer_free(&lk->table_buffers[i]);
  free(lk->table_buffers);
  if (memory)
    sl_memory_charge(memory, &lk->table_charged, 0);
}

/* Event time over the source's rows: the watermark, a stream leaf's
 * rowtime, an aggregate's time for late records to a table. */
static int prepare_event_time(exec_query *q, const int *map0, sl_error *err) {
  const sl_plan *plan = q->plan;
  sl_arena *a = &q->arena;
  int rc;
  /* The watermark only matters to windows of event time (and to a stream
   * feeding a staged plan's stages); it is computed over the source's rows
   * before the filter (see worker.c). */
  if (plan->watermark &&
      ((plan->windowed && !plan->window.proctime) || plan->track_watermark)) {
    rc = compile(q, plan->watermark, q->source.stream_layout, map0,
                 &q->source.wm_prog, err);
    if (rc != SL_OK)
      return rc;
    const sl_type *wt[1] = {plan->watermark->type};
    q->source.wm_layout = layout_of(a, 1, NULL, wt);
  }
  if (q->source.wm_prog && plan->track_watermark &&
      plan->kind == SL_PLAN_STATELESS && plan->rowtime && !plan->keep_late) {
    rc = compile(q, plan->rowtime, q->source.stream_layout, map0,
                 &q->late.rowtime_prog, err);
    if (rc != SL_OK)
      return rc;
    const sl_type *rt[1] = {plan->rowtime->type};
    q->late.rowtime_layout = layout_of(a, 1, NULL, rt);
  }
  /* Late records to a table: an aggregate decides which records are late
   * by their event time before the pipeline (a stream leaf by rowtime_prog
   * above). */
  if (q->source.wm_prog && plan->late_table &&
      plan->kind == SL_PLAN_AGGREGATE &&
      plan->window.kind != SL_WINDOW_SESSION) {
    rc = compile(q, plan->window.time, q->source.stream_layout, map0,
                 &q->late.time_prog, err);
    if (rc != SL_OK)
      return rc;
    const sl_type *rt[1] = {plan->window.time->type};
    q->late.rowtime_layout = layout_of(a, 1, NULL, rt);
    late_fast_path(q, map0);
  }
  return SL_OK;
}

/* Aggregate: the tmp row per record (time, watermark tag, keys, the
 * aggregates' arguments and filters, under a session repartition with
 * late records to a table the record itself), its programs, the
 * aggregates over it.  ts: TIMESTAMP(3). */
static int prepare_tmp_row(exec_query *q, const int *row_map, sl_type *ts,
                           sl_error *err) {
  const sl_plan *plan = q->plan;
  sl_arena *a = &q->arena;
  int nf = 2 + plan->nkeys + 2 * plan->naggs;
  int nrecord = 0;
  if (plan->late_table && plan->windowed &&
      plan->window.kind == SL_WINDOW_SESSION &&
      plan->strategy == SL_STRATEGY_REPARTITION) {
    q->partial.tmp_record = nf;
    nrecord = q->source.stream_layout->nfields;
  }
  const sl_type **tt = SL_ANEW_N(a, const sl_type *, nf + nrecord);
  const sl_bexpr **te = SL_ANEW_N(a, const sl_bexpr *, nf + nrecord);
  sl_type *boolean = sl_type_new(a, SL_TYPE_BOOLEAN);
  q->partial.tmp_time = 0;
  q->partial.tmp_keys = 2;
  q->partial.tmp_args = 2 + plan->nkeys;
  q->partial.tmp_filters = 2 + plan->nkeys + plan->naggs;
  bool event_time = plan->windowed && !plan->window.proctime;
  tt[0] = event_time ? plan->window.time->type : ts;
  te[0] = event_time ? plan->window.time : NULL;
  tt[1] = plan->watermark ? plan->watermark->type : ts;
  /* Field 1 is not evaluated: under repartitioning the sending worker
   * stores its watermark there (the owner judges lateness by it). */
  te[1] = NULL;
  q->partial.tmp_wm_tag = 1;
  for (int i = 0; i < plan->nkeys; i++) {
    tt[2 + i] = plan->keys[i]->type;
    te[2 + i] = plan->keys[i];
  }
  sl_agg_desc *descs = SL_ANEW_N(a, sl_agg_desc, plan->naggs + 1);
  for (int i = 0; i < plan->naggs; i++) {
    const sl_plan_agg *pa = &plan->aggs[i];
    int af = q->partial.tmp_args + i, ff = q->partial.tmp_filters + i;
    tt[af] = pa->arg ? pa->arg->type : boolean;
    te[af] = pa->arg;
    tt[ff] = boolean;
    te[ff] = pa->filter;
    descs[i].op = pa->op;
    descs[i].distinct = pa->distinct;
    descs[i].in_field = pa->arg ? af : -1;
    descs[i].filter_field = pa->filter ? ff : -1;
    descs[i].out_type = pa->type;
  }
  for (int f = 0; f < nrecord; f++) { /* copied, not evaluated */
    tt[nf + f] = q->source.stream_layout->fields[f].type;
    te[nf + f] = NULL;
  }
  nf += nrecord;
  q->partial.tmp_layout = layout_of(a, nf, NULL, tt);
  q->partial.tmp_progs = SL_ANEW_N(a, sl_expr_prog *, nf);
  for (int f = 0; f < nf; f++) {
    int rc = compile(q, te[f], q->row_layout, row_map, &q->partial.tmp_progs[f],
                     err);
    if (rc != SL_OK)
      return rc;
  }
  q->agg.key_layout = layout_of(a, plan->nkeys, NULL, tt + 2);
  return sl_agg_set_init(a, &q->agg.aggs, plan->naggs, descs,
                         q->partial.tmp_layout, err);
}

/* The aggregate row (keys, aggregates, window_start, window_end,
 * window_time), HAVING and the output over it; shift: the output's op
 * field first. */
static int prepare_agg_row(exec_query *q, int shift, sl_type *ts,
                           sl_error *err) {
  const sl_plan *plan = q->plan;
  sl_arena *a = &q->arena;
  int na = plan->nkeys + plan->naggs + 3;
  const sl_type **at = SL_ANEW_N(a, const sl_type *, na);
  for (int i = 0; i < plan->nkeys; i++)
    at[i] = plan->keys[i]->type;
  for (int i = 0; i < plan->naggs; i++)
    at[plan->nkeys + i] = plan->aggs[i].type;
  sl_type *wt = sl_type_timestamp(a, 3);
  wt->time_attr = SL_TIME_ROWTIME;
  at[na - 3] = ts;
  at[na - 2] = ts;
  at[na - 1] = wt;
  q->agg.agg_layout = layout_of(a, na, NULL, at);
  int *ident = SL_ANEW_N(a, int, na);
  for (int i = 0; i < na; i++)
    ident[i] = i;
  int rc =
      compile(q, plan->having, q->agg.agg_layout, ident, &q->agg.having, err);
  if (rc != SL_OK)
    return rc;
  /* final_progs[f] fills output field f; an updating result's op field
   * (prog NULL) is the coordinator's. */
  q->agg.final_progs = SL_ANEW_N(a, sl_expr_prog *, q->nout + 1);
  for (int i = 0; i < plan->nout; i++) {
    rc = compile(q, plan->out[i], q->agg.agg_layout, ident,
                 &q->agg.final_progs[i + shift], err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

int sl_exec_prepare(exec_query *q, sl_error *err) {
  const sl_plan *plan = q->plan;
  sl_arena *a = &q->arena;
  int rc;

  q->partial.tmp_record = -1;
  q->source.stream_layout = sl_plan_input_layout(a, plan, 0);
  sl_plan_source_leaves(a, &plan->inputs[0], &q->source.stream_leaf,
                        &q->source.stream_as_code);
  const sl_row_layout *ins[2] = {q->source.stream_layout, NULL};
  int base0[2] = {0, -1};
  int *map0 = sl_plan_column_map(a, plan, ins, base0);
  rc = compile(q, plan->filter, q->source.stream_layout, map0,
               &q->source.filter, err);
  if (rc != SL_OK)
    return rc;
  q->row_layout = q->source.stream_layout;
  int *row_map = map0;
  if (plan->join) {
    rc = prepare_join(q, ins, map0, &row_map, err);
    if (rc != SL_OK)
      return rc;
  }
  rc = prepare_event_time(q, map0, err);
  if (rc != SL_OK)
    return rc;
  /* The output rows. */
  /* An updating result's rows carry the row kind first (changelog.h). */
  int shift = plan->changelog ? 1 : 0;
  q->nout = plan->nout + shift;
  q->out_names = plan->out_names;
  q->out_layout = shift
                      ? sl_exec_changelog_layout(a, plan->nout, plan->out_names,
                                                 plan->out_types, &q->out_names)
                      : layout_of(a, q->nout, q->out_names, plan->out_types);
  if (plan->kind == SL_PLAN_STATELESS) {
    q->project.out_progs = SL_ANEW_N(a, sl_expr_prog *, plan->nout + 1);
    for (int i = 0; i < plan->nout; i++) {
      rc = compile(q, plan->out[i], q->row_layout, row_map,
                   &q->project.out_progs[i], err);
      if (rc != SL_OK)
        return rc;
    }
    return SL_OK;
  }
  /* Aggregate: the tmp row per record, then the aggregate row. */
  sl_type *ts = sl_type_timestamp(a, 3);
  rc = prepare_tmp_row(q, row_map, ts, err);
  if (rc != SL_OK)
    return rc;
  return prepare_agg_row(q, shift, ts, err);
}

/* ---- the JIT ------------------------------------------------------------ */

/* Does every field of the select list over finalized groups compile (no
 * subtree left to the interpreter)? */
static bool final_compiles(const exec_query *q) {
  for (int f = 0; f < q->nout; f++)
    if (!q->agg.final_progs[f] ||
        !sl_jit_supports(q->agg.final_progs[f], NULL, 0))
      return false;
  return q->nout > 0;
}

/* Compile the pipeline's per-record steps (jit.h) when SET 'sluice.jit' is
 * on and every expression is supported; otherwise (or if LLVM fails) the
 * query runs interpreted and q->jit.status says why.  Fails the query only
 * under 'sluice.jit' = 'require' when LLVM failed on a pipeline the
 * planner marked compilable: otherwise the interpreter is always there. */
int sl_exec_prepare_jit(exec_query *q, const sl_run_config *config,
                        sl_result_sink *shell, sl_error *qerr) {
  const sl_plan *plan = q->plan;
  q->jit.status = sl_jit_plan_status(&q->arena, plan, config->jit);
  if (q->jit.status)
    return SL_OK;
  double t0 = sl_clock_seconds();
  sl_error err = {0};
  /* SET 'sluice.debug.jit-fail' = 'on' (tests): LLVM's optimizer is given
   * a pass it does not know, so compiling fails in LLVM itself. */
  const char *passes = config->jit_fail        ? SL_JIT_BROKEN_PASSES
                       : config->jit_passes[0] ? config->jit_passes
                                               : NULL;
  int rc = sl_jit_new(&q->jit.handle, passes, &err);
  bool stateless = plan->kind == SL_PLAN_STATELESS;
  /* A window aggregate over a lookup join: everything up to the tmp rows
   * in one loop, the table's probe included (a buffer it hands back runs
   * interpreted up to the fold).  Otherwise the WATERMARK goes into the
   * first loop over the source's rows (it counts every row, so it runs
   * before the filter there). */
  bool fused = !sl_jit_lookup_status(plan) && config->jit_join_probe &&
               sl_jit_lookup_supported(q->lookup.join_key_layout);
  if (rc == SL_OK && fused) {
    q->jit.lookup =
        (sl_jit_lookup){q->lookup.stream_key_progs, q->lookup.nkey_progs,
                        q->lookup.join_key_layout,  q->lookup.post_join_filter,
                        q->lookup.joined_layout,    q->lookup.table_layout};
    q->jit.lookup_table = (sl_jit_lookup_table){
        q->lookup.table_hash,    q->lookup.table_slot_row,
        q->lookup.table_keys,    q->lookup.table_rows,
        q->lookup.table_cap - 1, q->lookup.table_unique,
        q->lookup.table_direct,  q->lookup.table_direct_lo,
        q->lookup.table_direct_n};
    rc = sl_jit_add_lookup_kernel(
        q->jit.handle, q->source.wm_prog, q->source.wm_layout, q->source.filter,
        &q->jit.lookup, q->partial.tmp_progs, q->partial.tmp_layout->nfields,
        q->source.stream_layout, q->partial.tmp_layout, true, &q->jit.k_lookup,
        &err);
  }
  /* A stream leaf under MAX/MIN pruning drops in the loop the rows that
   * cannot match, before writing them (op_keep_extremes.c). */
  const sl_stage_extreme *x = stateless ? plan->keep_extremes : NULL;
  sl_jit_gate gate = {sl_worker_extremes_gate, x ? x->col : 0,
                      x ? x->time_col : 0, sl_worker_extremes_bar, x && x->max};
  for (int gated = x && !q->lookup.join; rc == SL_OK && !fused; gated = 0) {
    rc = sl_jit_add_kernel_gated(
        q->jit.handle, q->lookup.join ? NULL : q->source.wm_prog,
        q->source.wm_layout,
        q->lookup.join ? q->lookup.post_join_filter : q->source.filter,
        gated ? &gate : NULL,
        stateless ? q->project.out_progs : q->partial.tmp_progs,
        stateless ? plan->nout : q->partial.tmp_layout->nfields, q->row_layout,
        stateless ? q->out_layout : q->partial.tmp_layout, !stateless,
        &q->jit.k_main, &err);
    if (rc != SL_EUNSUPPORTED || !gated)
      break;
    /* the gate's columns are not compiled integers: the check after the
     * loop does it alone */
    sl_error_clear(&err);
    rc = SL_OK;
  }
  if (rc == SL_OK && q->lookup.join && !fused)
    rc = sl_jit_add_kernel_pre(
        q->jit.handle, q->source.wm_prog, q->source.wm_layout, q->source.filter,
        q->lookup.stream_key_progs, q->lookup.nkey_progs,
        q->source.stream_layout, q->lookup.join_key_layout, true,
        &q->jit.k_join, &err);
  /* A stream leaf's watermark and event times, for dropping late rows:
   * the watermark is k_main's pre already (so supported); the event time
   * is a column or a small expression over one. */
  if (rc == SL_OK && q->late.rowtime_prog && q->source.wm_prog &&
      sl_jit_supports(q->late.rowtime_prog, NULL, 0))
    rc = sl_jit_add_kernel_pre(
        q->jit.handle, q->source.wm_prog, q->source.wm_layout, NULL,
        &q->late.rowtime_prog, 1, q->source.stream_layout,
        q->late.rowtime_layout, false, &q->jit.k_times, &err);
  /* Phase 2: the state update of the window aggregates it handles. */
  if (rc == SL_OK && !stateless && config->jit_state_update &&
      !sl_jit_fold_status(plan)) {
    q->jit.fold_spec = (sl_jit_fold_spec){
        &plan->window,       q->partial.tmp_layout, q->partial.tmp_time,
        q->partial.tmp_keys, q->agg.key_layout,     &q->agg.aggs,
        q->source.wm_layout};
    rc =
        sl_jit_add_fold(q->jit.handle, &q->jit.fold_spec, &q->jit.k_fold, &err);
  }
  /* Repartition: the owner of each record's key, computed in one loop. */
  if (rc == SL_OK && !stateless && q->exchange.channels &&
      !sl_jit_route_status(plan)) {
    q->jit.fold_spec = (sl_jit_fold_spec){
        &plan->window,       q->partial.tmp_layout, q->partial.tmp_time,
        q->partial.tmp_keys, q->agg.key_layout,     &q->agg.aggs,
        q->source.wm_layout};
    rc = sl_jit_add_route(q->jit.handle, &q->jit.fold_spec, q->exchange.xn,
                          &q->jit.k_route, &err);
  }
  /* The select list over finalized groups, when it compiles whole (a
   * window of a million groups goes through it on one thread). */
  if (rc == SL_OK && !stateless && plan->kind == SL_PLAN_AGGREGATE &&
      !plan->changelog && final_compiles(q))
    rc = sl_jit_add_kernel(q->jit.handle, NULL, q->agg.final_progs, q->nout,
                           q->agg.agg_layout, q->out_layout, false,
                           &q->jit.k_final, &err);
  char *ir = NULL;
  if (rc == SL_OK)
    rc = sl_jit_compile(q->jit.handle, config->jit_dump_ir ? &ir : NULL, &err);
  if (ir) {
    /* SET 'sluice.jit.dump' = 'ir': the optimized IR, as a notice */
    if (shell && shell->notice)
      shell->notice(shell->ctx, ir);
    else
      fprintf(stderr, "%s\n", ir);
    free(ir);
  }
  q->jit.seconds = sl_clock_seconds() - t0;
  int out = SL_OK;
  if (rc != SL_OK) {
    q->jit.status = sl_arena_printf(
        &q->arena, "%s%s", rc == SL_ECANCELLED ? "" : "LLVM set-up failed: ",
        err.message ? err.message : "no message");
    sl_jit_free(q->jit.handle);
    q->jit.handle = NULL;
    q->jit.k_main = q->jit.k_join = q->jit.k_fold = q->jit.k_lookup =
        q->jit.k_route = q->jit.k_times = q->jit.k_final = NULL;
    /* Under 'require' a stopped compile (Ctrl-C) ends the query as
     * stopped, not as a pipeline that failed to compile. */
    if (config->jit_required && rc == SL_ECANCELLED)
      out = sl_error_set(qerr, SL_ECANCELLED, "query cancelled");
    else if (config->jit_required)
      out = sl_error_set(
          qerr, SL_EINTERNAL,
          "the pipeline reading '%s' should run compiled but did not (%s); "
          "SET 'sluice.jit' = 'on' lets it run interpreted",
          plan->inputs[0].table ? plan->inputs[0].table->name : "?",
          q->jit.status);
  }
  sl_error_clear(&err);
  return out;
}

/* ---- changelog rows ----------------------------------------------------- */

const sl_row_layout *sl_exec_changelog_layout(sl_arena *a, int n,
                                              const char *const *names,
                                              const sl_type *const *types,
                                              const char *const **names_out) {
  const char **nm = SL_ANEW_N(a, const char *, n + 1);
  const sl_type **ty = SL_ANEW_N(a, const sl_type *, n + 1);
  sl_type *op = sl_type_new(a, SL_TYPE_VARCHAR); /* STRING NOT NULL */
  op->not_null = true;
  nm[0] = SL_CHANGELOG_COLUMN;
  ty[0] = op;
  for (int i = 0; i < n; i++) {
    nm[i + 1] = names[i];
    ty[i + 1] = types[i];
  }
  *names_out = nm;
  return sl_row_layout_new(a, n + 1, nm, ty);
}

void sl_exec_set_op(const sl_row_layout *l, uint8_t *row, sl_changelog_op op) {
  sl_row_set_null(row, 0, false);
  *(sl_str *)(row + l->fields[0].offset) =
      sl_str_make(sl_changelog_op_name(op), 2);
}
