/* stage_int.h - what the staged planner's files share: the state of one
 * staged plan's construction and the helpers its parts call.  stage_plan.c
 * maps queries onto stages, stage_join.c the joins (keys, bounds of regular
 * joins, interval joins), stage_prune.c drops the leaf columns no stage
 * reads, stage_placement.c says where the built plan's parts can run. */
#ifndef SLUICE_STAGE_INT_H
#define SLUICE_STAGE_INT_H

#include "sluice/planner/plan.h"

typedef struct stager {
  sl_arena *a;
  sl_staged_plan *sp;
  sl_error *err;
  int nleaves, cap;
  bool have_window;
  bool updating; /* a stage over streams without windows (plan.h) */
} stager;

/* "not supported yet: what" at span; returns the status. */
int sl_stg_refuse(stager *g, sl_span span, const char *what);
/* A stage of ncols columns, none of them a window bound, no time column. */
sl_stage *sl_stg_new_stage(stager *g, sl_stage_kind kind, int ncols);
/* A NULL of type t named name (a leaf column nothing computes). */
sl_bexpr *sl_stg_null_column(sl_arena *a, const sl_type *t, const char *name);
/* Whether equal values of window bound p (SL_WPROP_*) mean the same
 * window. */
bool sl_stg_bound_names_window(const sl_plan_window *w, int p);
/* The window bound a column-reading expression of in's row is (or -1). */
int sl_stg_wprop_of(const sl_stage *in, const sl_bexpr *e);
/* A copy of e with every COLUMN index moved by delta. */
sl_bexpr *sl_stg_shift(sl_arena *a, const sl_bexpr *e, int delta);
/* Refuses what a stage cannot evaluate (window properties, subqueries,
 * aggregate references, correlated columns). */
int sl_stg_check_plain(stager *g, const sl_bexpr *e);
/* The stages of a FROM item, with extra (may be NULL) as a filter. */
int sl_stg_from(stager *g, const sl_bfrom *f, sl_bexpr *extra, sl_stage **out);
/* A SELECT keeping the rows of st where cond holds, every column as is. */
sl_stage *sl_stg_filter(stager *g, sl_stage *st, sl_bexpr *cond);

/* stage_join.c */
int sl_stg_join(stager *g, const sl_bfrom *f, sl_bexpr *extra, sl_stage **out);
/* A condition over a view (or subquery) whose body is a plain SELECT over
 * a join (no aggregate, window, DISTINCT, ORDER BY or LIMIT): its
 * conjuncts on plain columns of the select list move into the body's WHERE,
 * and so into the join (Flink pushes them down too), where a time bound
 * lets the join drop rows.  Returns the body to stage (q, or a copy with
 * that WHERE); *extra keeps the conjuncts that stay above. */
const sl_bquery *sl_stg_push_into_join_view(stager *g, const sl_bquery *q,
                                            sl_bexpr **extra);
/* The leaves under the side of each bounded join whose watermark drops
 * the other side's rows drop their own late rows. */
void sl_stg_drop_late_under_bounds(stager *g, const sl_stage *st);

/* stage_prune.c: leaf columns no stage above reads become NULL constants
 * and the leaves' plans are pruned again. */
void sl_stg_prune_columns(sl_arena *a, sl_staged_plan *sp, sl_stage *top);

/* stage_extremes.c: a stream leaf joined with its own windows' MAX (or
 * MIN) on that value keeps only rows that can still equal it
 * (sl_staged_plan.extremes); noted in the plan's rewrites. */
void sl_stg_keep_extremes(sl_arena *a, sl_plan *plan, sl_staged_plan *sp);

/* stage_placement.c: the built plan's placement (sl_staged_plan's
 * spread_top, join_stage, join_left/right, key routes), in a; its join
 * strategy SINGLE until choose_join.c or a node places it. */
void sl_stg_place(sl_arena *a, sl_staged_plan *sp);
/* Can the join be co-partitioned with leaf `local` kept where its
 * partition leaders finish it (SL_JOIN_REPARTITION)?  local is a windowed
 * aggregate whose every join key is one of its group keys, and the other
 * leaf's join keys are its columns of the same types.  If so, sets local's
 * partition_keys and sp->route_cols (in a) and returns true.  The
 * coordinator and every node compute the same answer from the same plan. */
bool sl_stg_copartition(sl_arena *a, sl_staged_plan *sp, int local);

#endif
