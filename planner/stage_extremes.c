/* stage_extremes.c - a stream joined with its own windows' MAX (or MIN)
 * on that value keeps only the rows that can still equal it.
 *
 * NEXMark q7 joins every bid with the highest price of its 10 s window:
 * B.price = B1.maxprice with B1 = MAX(price) per TUMBLE window of the same
 * bids.  A bid can meet only the windows whose interval holds its time
 * (the join's [e + lo, e + hi] around a window end e), and there only if
 * its price is that window's maximum, which is at least the highest price
 * of the bids in that window seen so far.  When the aggregate counts every
 * row the stream leaf sees (the same table, the same filter, and no row
 * late: sl_pl_no_late_rows), a bid below the highest so far of every
 * window it can meet never matches, and the stage store need not keep it
 * (exec/stage_sink.c).  Without this, the store holds every bid of a
 * window until the window fires: q7's 260 MB per window.  DuckDB gets the
 * same effect from its join filter pushdown (the build side's min/max
 * pushed into the probe side's scan).
 *
 * Apart from building the stages: a pass over the finished plan that
 * only adds sl_staged_plan.extremes and a note for EXPLAIN. */
#include "plan_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/planner/plan.h"
#include "stage_int.h"

/* How many LEAF stages read leaf k. */
static int readers(const sl_stage *st, int k) {
  if (!st)
    return 0;
  if (st->kind == SL_STAGE_LEAF)
    return st->leaf == k;
  return readers(st->input, k) + readers(st->left, k) + readers(st->right, k);
}

/* A type whose values compare as integers (sl_int_load). */
static bool integer_like(const sl_type *t) {
  switch (t->kind) {
  case SL_TYPE_TINYINT:
  case SL_TYPE_SMALLINT:
  case SL_TYPE_INT:
  case SL_TYPE_BIGINT:
  case SL_TYPE_DATE:
  case SL_TYPE_TIMESTAMP:
  case SL_TYPE_TIMESTAMP_LTZ:
    return true;
  default:
    return false;
  }
}

/* The aggregate a column of a windowed aggregate leaf's output is, if it
 * is MAX or MIN of a plain argument without FILTER; else NULL. */
static const sl_plan_agg *extreme_of(const sl_plan *ap, int col) {
  if (col < 0 || col >= ap->nout)
    return NULL;
  /* (over the aggregate row: group keys, then aggregates, then the
   * window's bounds) */
  const sl_bexpr *e = ap->out[col];
  int i = e->index - ap->nkeys;
  if (e->kind != SL_BEXPR_COLUMN || e->depth != 0 || i < 0 || i >= ap->naggs)
    return NULL;
  const sl_plan_agg *g = &ap->aggs[i];
  if ((g->op != SL_AGG_MAX && g->op != SL_AGG_MIN) || !g->arg || g->filter)
    return NULL;
  return g;
}

/* Do the aggregate leaf ap and the stream leaf sp read the same rows of
 * the same table, every one counting in ap's windows? */
static bool same_rows(const sl_plan *sp, const sl_plan *ap) {
  return ap->kind == SL_PLAN_AGGREGATE && ap->windowed &&
         ap->window.kind == SL_WINDOW_TUMBLE && !ap->window.proctime &&
         ap->nkeys == 0 && !ap->having && ap->ninputs == 1 &&
         sp->ninputs == 1 && ap->inputs[0].table == sp->inputs[0].table &&
         ap->inputs[0].connector && ap->base_ncols == sp->base_ncols &&
         !sp->join && !ap->join && sl_pl_equal(sp->filter, ap->filter) &&
         ap->idle_timeout_us == 0 && sl_pl_no_late_rows(ap);
}

/* The extreme for join st's stream side, or NULL. */
static sl_stage_extreme *extreme_for(sl_arena *a, const sl_staged_plan *sp,
                                     const sl_stage *st, const char **why) {
  bool left = st->left->stream;
  const sl_stage *s = left ? st->left : st->right;
  const sl_stage *w = left ? st->right : st->left;
  if (s->kind != SL_STAGE_LEAF || w->kind != SL_STAGE_LEAF ||
      readers(sp->top, s->leaf) != 1)
    return NULL;
  const sl_plan *lp = sp->leaves[s->leaf], *ap = sp->leaves[w->leaf];
  if (!same_rows(lp, ap) || s->time_col < 0 || s->time_col >= lp->nout ||
      !sl_pl_equal(lp->out[s->time_col], ap->window.time))
    return NULL;
  for (int k = 0; k < st->nkeys; k++) {
    const sl_bexpr *x = left ? st->lkeys[k] : st->rkeys[k];
    const sl_bexpr *y = left ? st->rkeys[k] : st->lkeys[k];
    if (x->kind != SL_BEXPR_COLUMN || x->depth != 0 || x->index >= lp->nout ||
        y->kind != SL_BEXPR_COLUMN || y->depth != 0)
      continue;
    const sl_plan_agg *g = extreme_of(ap, y->index);
    if (!g || !integer_like(x->type) ||
        !sl_type_equal(x->type, lp->out_types[x->index]) ||
        !sl_pl_equal(lp->out[x->index], g->arg))
      continue;
    sl_stage_extreme *e = SL_ANEW(a, sl_stage_extreme);
    e->col = x->index;
    e->time_col = s->time_col;
    e->max = g->op == SL_AGG_MAX;
    e->window = ap->window;
    e->lo_us = st->lo_us;
    e->hi_us = st->hi_us;
    *why = sl_arena_printf(
        a,
        "leaf %d keeps only rows whose %s is at %s the %s so far of a "
        "window it can meet: the join needs it to equal leaf %d's %s(%s) "
        "of that window, over the same rows of %s, none of them late (the "
        "source's event time never decreases and the watermark trails "
        "it), so a row %s every such window's %s so far never matches",
        s->leaf + 1, sl_pl_sql(a, lp->out[x->index]), e->max ? "least" : "most",
        e->max ? "highest" : "lowest", w->leaf + 1, e->max ? "MAX" : "MIN",
        sl_pl_sql(a, g->arg), ap->inputs[0].table->name,
        e->max ? "below" : "above", e->max ? "highest" : "lowest");
    return e;
  }
  return NULL;
}

static void visit(sl_arena *a, sl_plan *plan, sl_staged_plan *sp,
                  const sl_stage *st) {
  if (!st)
    return;
  if (st->kind == SL_STAGE_JOIN && (st->left->stream || st->right->stream)) {
    const char *why = NULL;
    sl_stage_extreme *e = extreme_for(a, sp, st, &why);
    int leaf = st->left->stream ? st->left->leaf : st->right->leaf;
    if (e && !sp->extremes[leaf]) {
      sp->extremes[leaf] = e;
      sp->leaves[leaf]->keep_extremes = e;
      sl_plan_note(a, plan, "%s", why);
    }
  }
  visit(a, plan, sp, st->input);
  visit(a, plan, sp, st->left);
  visit(a, plan, sp, st->right);
}

void sl_stg_keep_extremes(sl_arena *a, sl_plan *plan, sl_staged_plan *sp) {
  sp->extremes =
      SL_ANEW_N(a, sl_stage_extreme *, sp->nleaves > 0 ? sp->nleaves : 1);
  visit(a, plan, sp, sp->top);
}
