/* plan_int.h - expression helpers shared by the planner's files
 * (plan_exprs.c implements them; physical_plan.c builds single pipelines,
 * stage_plan.c staged plans).  Everything is allocated in the given arena. */
#ifndef SLUICE_PLAN_INT_H
#define SLUICE_PLAN_INT_H

#include "sluice/planner/plan.h"

/* A node of the given kind and type, every other field zero. */
sl_bexpr *sl_pl_new_expr(sl_arena *a, sl_bexpr_kind kind, sl_type *type);
/* COLUMN(index) of the given type and name. */
sl_bexpr *sl_pl_column(sl_arena *a, int index, const sl_type *type,
                       const char *name);
/* x AND y (either may be NULL); an operand that is an AND gives its
 * operands, so the result is one flat node. */
sl_bexpr *sl_pl_and(sl_arena *a, sl_bexpr *x, sl_bexpr *y);

/* A growable list of conjuncts (arena-backed). */
typedef struct sl_pl_parts {
  sl_bexpr **v;
  int n, cap;
} sl_pl_parts;
void sl_pl_parts_add(sl_arena *a, sl_pl_parts *p, sl_bexpr *e);
/* The AND of p's parts, flat (NULL for none, the part itself for one).
 * Loops that gather conditions collect them here and AND them once: ANDing
 * them one by one would copy the growing node each time. */
sl_bexpr *sl_pl_and_parts(sl_arena *a, const sl_pl_parts *p);
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
/* e as SQL text, in a (for EXPLAIN's notes). */
const char *sl_pl_sql(sl_arena *a, const sl_bexpr *e);
/* Does e read only columns in [lo, hi)? */
bool sl_pl_columns_within(const sl_bexpr *e, int lo, int hi);
bool sl_pl_has_window_prop(const sl_bexpr *e);
/* Append the conjuncts of e to out: the operands of its ANDs, nested ANDs
 * flattened (all of them, however many; without recursion). */
void sl_pl_conjuncts(sl_arena *a, sl_bexpr *e, sl_pl_parts *out);
/* Is e an AND (or OR) node? */
bool sl_pl_is_and(const sl_bexpr *e);
bool sl_pl_is_or(const sl_bexpr *e);

/* A bound aggregate as the plan keeps it, its argument and filter over
 * cols (substituted; NULL: as bound).  false: not an aggregate the runtime
 * has. */
bool sl_pl_agg(sl_arena *a, const sl_bagg *ba, sl_bexpr *const *cols,
               sl_plan_agg *pa);
/* Recompute which source leaves a plan reads (after its expressions
 * changed; leaf_prune.c). */
void sl_plan_prune_leaves(sl_arena *a, sl_plan *plan);

/* ORDER BY needs a result that ends: SL_EUNSUPPORTED, at q's first ORDER
 * BY item, naming the first unbounded input of p. */
int sl_pl_order_bounded(const sl_plan *p, const sl_bquery *q, sl_error *err);

/* No row of p's stream is late, whatever the rows before it (rewrite.c):
 * the connector guarantees that p's event time never decreases and the
 * watermark trails it by at least the window's time unit. */
bool sl_pl_no_late_rows(const sl_plan *p);
/* Conjunct e as `col = n` or `col IN (n, ...)` over an integer column of
 * the row (depth 0): the column, with f's values filled (its leaf left for
 * the caller), or NULL. */
const sl_bexpr *sl_pl_int_filter(const sl_bexpr *e, sl_source_filter *f);
/* f on the leaf `name` of lc (f->leaf), if the connector of t can apply
 * it there. */
bool sl_pl_filter_leaf(const sl_source_connector *conn, const sl_table_def *t,
                       const sl_leaf_columns *lc, const char *name,
                       sl_source_filter *f);

#endif
