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
/* Does e read only columns in [lo, hi)? */
bool sl_pl_columns_within(const sl_bexpr *e, int lo, int hi);
bool sl_pl_has_window_prop(const sl_bexpr *e);
/* The conjuncts of e, up to max. */
void sl_pl_conjuncts(sl_bexpr *e, sl_bexpr **out, int *n, int max);

/* Recompute which source leaves a plan reads (after its expressions
 * changed). */
void sl_plan_prune_leaves(sl_arena *a, sl_plan *plan);

#endif
