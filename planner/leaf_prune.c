/* leaf_prune.c - which leaves of its inputs a single-pipeline plan reads
 * (projection pruning), so a source produces only those.  Apart from the
 * translation of the bound tree (physical_plan.c) because it runs over a
 * finished plan, and again after the staged planner nulls a leaf's unread
 * columns (stage_prune.c). */
#include "plan_int.h"
#include "sluice/planner/plan.h"

typedef struct leaf_need {
  const sl_plan *plan;
  bool *need[2]; /* per input, per leaf */
} leaf_need;

int sl_plan_input_of(const sl_plan *plan, int column) {
  for (int j = 0; j < plan->ninputs; j++) {
    const sl_plan_input *in = &plan->inputs[j];
    if (column >= in->first_column && column < in->first_column + in->ncolumns)
      return j;
    for (int k = 0; k < in->ncodes; k++)
      if (in->code_column[k] == column)
        return j;
  }
  return -1;
}

void sl_plan_source_leaves(sl_arena *a, const sl_plan_input *in,
                           const int **leaf_index, const bool **as_code) {
  *leaf_index = in->used_leaf;
  *as_code = NULL;
  if (in->ncodes == 0)
    return;
  int first_code = in->leaves.n - in->ncodes;
  int *li = SL_ANEW_N(a, int, in->nused + 1);
  bool *ac = SL_ANEW_N(a, bool, in->nused + 1);
  for (int k = 0; k < in->nused; k++) {
    int l = in->used_leaf[k];
    ac[k] = l >= first_code;
    li[k] = ac[k] ? in->code_leaf[l - first_code] : l;
  }
  *leaf_index = li;
  *as_code = ac;
}

/* Mark the leaf e reads if it is a column or field read (its name buffer
 * stays out of collect's recursive frame). */
static __attribute__((noinline)) bool mark_leaf(leaf_need *ln,
                                                const sl_bexpr *e) {
  char name[512];
  int c = sl_leaf_of(e, ln->plan->base_names, name, sizeof name);
  if (c < 0)
    return false;
  int j = sl_plan_input_of(ln->plan, c);
  if (j >= 0)
    sl_leaf_mark(&ln->plan->inputs[j].leaves, ln->need[j], name);
  return true;
}

static void collect(leaf_need *ln, const sl_bexpr *e) {
  if (!e || mark_leaf(ln, e))
    return;
  for (int i = 0; i < e->nargs; i++)
    collect(ln, e->args[i]);
}

/* Fill each input's used_leaf: the leaves the plan's expressions read, in
 * leaf order, so a source produces only those. */
void sl_plan_prune_leaves(sl_arena *a, sl_plan *plan) {
  leaf_need ln = {plan, {NULL, NULL}};
  for (int j = 0; j < plan->ninputs; j++)
    ln.need[j] = SL_ANEW_N(a, bool, plan->inputs[j].leaves.n + 1);
  collect(&ln, plan->filter);
  collect(&ln, plan->post_join_filter);
  for (int i = 0; i < plan->njoin_keys; i++) {
    collect(&ln, plan->join_stream_keys[i]);
    collect(&ln, plan->join_table_keys[i]);
  }
  if (plan->track_watermark)
    collect(&ln, plan->watermark);
  if (plan->kind == SL_PLAN_AGGREGATE) {
    if (plan->windowed)
      collect(&ln, plan->window.time);
    collect(&ln, plan->watermark);
    for (int i = 0; i < plan->nkeys; i++)
      collect(&ln, plan->keys[i]);
    for (int i = 0; i < plan->naggs; i++) {
      collect(&ln, plan->aggs[i].arg);
      collect(&ln, plan->aggs[i].filter);
    }
  } else {
    for (int i = 0; i < plan->nout; i++)
      collect(&ln, plan->out[i]);
  }
  for (int j = 0; j < plan->ninputs; j++) {
    sl_plan_input *in = &plan->inputs[j];
    in->used_leaf = SL_ANEW_N(a, int, in->leaves.n + 1);
    in->nused = 0;
    for (int i = 0; i < in->leaves.n; i++)
      if (ln.need[j][i])
        in->used_leaf[in->nused++] = i;
  }
}

/* Does a query need stages: a subquery or view with GROUP BY or OVER that
 * feeds something else, a join of two streams, or OVER in the query? */
