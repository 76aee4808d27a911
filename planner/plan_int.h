/* plan_int.h - expression helpers shared by the planner's files
 * (physical_plan.c builds single pipelines, stage_plan.c staged plans).
 * Everything is allocated in the given arena. */
#ifndef SLUICE_PLAN_INT_H
#define SLUICE_PLAN_INT_H

#include "sluice/plan.h"

/* COLUMN(index) of the given type and name. */
sl_bexpr *sl_pl_column(sl_arena *a, int index, const sl_type *type,
                       const char *name);
/* x AND y (either may be NULL). */
sl_bexpr *sl_pl_and(sl_arena *a, sl_bexpr *x, sl_bexpr *y);
/* e with COLUMN(i) (depth 0) replaced by cols[i]. */
sl_bexpr *sl_pl_subst(sl_arena *a, const sl_bexpr *e, sl_bexpr *const *cols);
/* e with every node for which fn returns an expression replaced by it
 * (fn returns NULL to keep the node and map its arguments); shares what
 * does not change. */
sl_bexpr *sl_pl_map(sl_arena *a, const sl_bexpr *e,
                    sl_bexpr *(*fn)(sl_arena *a, const sl_bexpr *e, void *arg),
                    void *arg);
/* Do x and y compute the same thing (the same tree over the same
 * columns)?  Conservative: subqueries are never equal. */
bool sl_pl_equal(const sl_bexpr *x, const sl_bexpr *y);
/* Does e read only columns in [lo, hi)? */
bool sl_pl_columns_within(const sl_bexpr *e, int lo, int hi);
bool sl_pl_has_window_prop(const sl_bexpr *e);
/* The conjuncts of e, up to max. */
void sl_pl_conjuncts(sl_bexpr *e, sl_bexpr **out, int *n, int max);

/* A bound aggregate as the plan keeps it, its argument and filter over
 * cols (substituted; NULL: as bound).  false: not an aggregate the runtime
 * has. */
bool sl_pl_agg(sl_arena *a, const sl_bagg *ba, sl_bexpr *const *cols,
               sl_plan_agg *pa);
/* Recompute which source leaves a plan reads (after its expressions
 * changed). */
void sl_plan_prune_leaves(sl_arena *a, sl_plan *plan);

/* ORDER BY needs a result that ends: SL_EUNSUPPORTED, at q's first ORDER
 * BY item, naming the first unbounded input of p. */
int sl_pl_order_bounded(const sl_plan *p, const sl_bquery *q, sl_error *err);

#endif
