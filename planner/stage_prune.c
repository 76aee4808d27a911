/* stage_prune.c - which leaf columns a staged plan's stages read.  Run
 * once the stages are built (stage_plan.c): a leaf column no stage reads
 * becomes a NULL constant and the leaf's plan is pruned again, so its
 * source produces less.  Apart from the mapping of queries onto stages
 * because it is a pass over the finished tree, not part of building it. */
#include "plan_int.h"
#include "sluice/planner/plan.h"
#include "stage_int.h"

/* ---- which leaf columns the stages read ------------------------------ */

static void mark_columns(const sl_bexpr *e, bool *used, int lo, int n) {
  if (!e)
    return;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0 && e->index >= lo &&
      e->index < lo + n)
    used[e->index - lo] = true;
  for (int i = 0; i < e->nargs; i++)
    mark_columns(e->args[i], used, lo, n);
}

static void mark_all(sl_bexpr *const *es, int k, bool *used, int lo, int n) {
  for (int i = 0; i < k; i++)
    mark_columns(es[i], used, lo, n);
}

/* used[i]: output column i of st is read above.  Leaves' unread columns
 * become NULL constants and their plans are pruned again, so a leaf's
 * source produces (and the stage store keeps) only what the stages read:
 * q7's bids keep auction, price, bidder, dateTime and extra, not url. */
static void prune_stage(sl_arena *a, bool **leaf_used, sl_stage *st,
                        const bool *used) {
  int in_n = st->input ? st->input->ncols : 0;
  bool *u = SL_ANEW_N(a, bool, (in_n > 0 ? in_n : 0) + 1);
  switch (st->kind) {
  case SL_STAGE_LEAF:
    /* Several stages may read one (shared) leaf: gather, apply later. */
    for (int i = 0; i < st->ncols; i++)
      if (used[i] || i == st->time_col || st->wprop[i] >= 0)
        leaf_used[st->leaf][i] = true;
    return;
  case SL_STAGE_SELECT:
    mark_columns(st->filter, u, 0, in_n);
    for (int i = 0; i < st->nexprs; i++)
      if (used[i])
        mark_columns(st->exprs[i], u, 0, in_n);
    break;
  case SL_STAGE_AGGREGATE:
    mark_all(st->groups, st->ngroups, u, 0, in_n);
    for (int i = 0; i < st->naggs; i++) {
      mark_columns(st->aggs[i].arg, u, 0, in_n);
      mark_columns(st->aggs[i].filter, u, 0, in_n);
    }
    break;
  case SL_STAGE_TOPN:
    for (int i = 0; i < in_n; i++)
      u[i] = used[i];
    mark_all(st->partition, st->npartition, u, 0, in_n);
    mark_all(st->order, st->norder, u, 0, in_n);
    break;
  case SL_STAGE_JOIN: {
    int nl = st->left->ncols, nr = st->right->ncols;
    bool *ul = SL_ANEW_N(a, bool, nl + 1), *ur = SL_ANEW_N(a, bool, nr + 1);
    for (int i = 0; i < nl; i++)
      ul[i] = used[i];
    for (int i = 0; i < nr; i++)
      ur[i] = used[nl + i];
    mark_all(st->lkeys, st->nkeys, ul, 0, nl);
    mark_all(st->rkeys, st->nkeys, ur, 0, nr);
    mark_columns(st->residual, ul, 0, nl);
    mark_columns(st->residual, ur, nl, nr);
    prune_stage(a, leaf_used, st->left, ul);
    prune_stage(a, leaf_used, st->right, ur);
    return;
  }
  }
  prune_stage(a, leaf_used, st->input, u);
}

/* A leaf's columns no stage reads become NULL constants (the hidden
 * window_end stays); a stream leaf's source then reads less. */
static void prune_leaf(sl_arena *a, sl_plan *lp, const bool *used) {
  bool windowed = lp->kind == SL_PLAN_AGGREGATE && lp->windowed;
  /* The hidden last column stays (window_end; window rows' $live_from). */
  int n = windowed || lp->window_rows ? lp->nout - 1 : lp->nout;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    if (used[i])
      continue;
    lp->out[i] = sl_stg_null_column(a, lp->out_types[i], lp->out_names[i]);
    changed = true;
  }
  if (changed && lp->kind == SL_PLAN_STATELESS)
    sl_plan_prune_leaves(a, lp);
}

void sl_stg_prune_columns(sl_arena *a, sl_staged_plan *sp, sl_stage *top) {
  bool *all = SL_ANEW_N(a, bool, top->ncols + 1);
  for (int i = 0; i < top->ncols; i++)
    all[i] = true;
  bool **leaf_used = SL_ANEW_N(a, bool *, sp->nleaves);
  for (int j = 0; j < sp->nleaves; j++)
    leaf_used[j] = SL_ANEW_N(a, bool, sp->leaves[j]->nout + 3);
  prune_stage(a, leaf_used, top, all);
  for (int j = 0; j < sp->nleaves; j++)
    prune_leaf(a, sp->leaves[j], leaf_used[j]);
}
