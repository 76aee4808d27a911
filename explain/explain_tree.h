/* explain_tree.h - the display tree EXPLAIN prints (internal to planner/).
 *
 * A plan or bound tree is first turned into display nodes (a name, a
 * one-line detail, key/value attributes, children), then printed either as
 * indented text, one node per line, or as JSON: building the display tree
 * once keeps both forms identical in content.  Nodes live in an arena.
 */
#ifndef SLUICE_EXPLAIN_TREE_H
#define SLUICE_EXPLAIN_TREE_H

#include <stdint.h>

#include "sluice/common/arena.h"
#include "sluice/common/strbuf.h"

typedef struct xattr {
  const char *key;
  const char *value;
} xattr;

typedef struct xnode xnode;
struct xnode {
  const char *name;   /* "Project", "Scan", ... */
  const char *detail; /* the rest of the TEXT line */
  int nattrs, attrs_cap;
  xattr *attrs;
  int nkids, kids_cap;
  xnode **kids;
};

xnode *sl_xnode(sl_arena *a, const char *name);
void sl_xnode_attr(sl_arena *a, xnode *n, const char *key, const char *value);
void sl_xnode_kid(sl_arena *a, xnode *n, xnode *kid); /* kid may be NULL */
void sl_xnode_print_text(sl_strbuf *b, const xnode *n, int depth);
void sl_xnode_print_json(sl_strbuf *b, const xnode *n, int depth);
/* s as a JSON string literal, escaped. */
void sl_json_string(sl_strbuf *b, const char *s);

/* The display trees of a bound statement (explain.c) and of a physical
 * plan (explain_plan.c). */
struct sl_bound_stmt;
struct sl_plan;
xnode *sl_explain_bound_tree(sl_arena *a, const struct sl_bound_stmt *s);
struct sl_query_stats;
xnode *sl_explain_plan_tree(sl_arena *a, const struct sl_plan *p, int workers,
                            const char *strategy,
                            const struct sl_query_stats *st);

/* A staged plan's tree (explain_stages.c). */
xnode *sl_explain_staged_tree(sl_arena *a, const struct sl_plan *p, int workers,
                              const struct sl_query_stats *st);
/* The Sink node of a plan (the INSERT target or the shell), with the
 * rows written, wall time and events/s when st is not NULL. */
xnode *sl_explain_sink_node(sl_arena *a, const struct sl_plan *p,
                            const struct sl_query_stats *st);
/* An updating plan: each operator's changelog mode, as Flink's EXPLAIN
 * CHANGELOG_MODE prints it: mode above the operator that updates (a
 * GroupAggregate or TopN, which is [I, UB, UA] itself), [I] below it. */
void sl_explain_mark_changelog(sl_arena *a, xnode *n, const char *mode);
/* The same for an updating staged plan, from its leaves up: [I] at the
 * leaves; an aggregate or Top-N [I, UB, UA], with D over an input that
 * takes rows back; a join [I], or [I, D] over such an input; a filter
 * over updates adds D (an update that stops passing deletes its old
 * row); the others pass their input's kinds.  Returns n's kinds (as
 * bits). */
int sl_explain_mark_changelog_staged(sl_arena *a, xnode *n);
/* A count as text. */
const char *sl_explain_count(sl_arena *a, uint64_t n);
/* EXPLAIN ANALYZE: a measured figure on a node, in the TEXT line
 * ("(actual: k=v, ...)") and as a JSON attribute. */
void sl_xnode_actual(sl_arena *a, xnode *n, const char *key, const char *value);

/* An expression as SQL text, and a duration in milliseconds as Flink
 * prints it ("10 s", "2 min"), both in arena a. */
struct sl_bexpr;
const char *sl_explain_expr(sl_arena *a, const struct sl_bexpr *e);
const char *sl_explain_duration(sl_arena *a, int64_t ms);

#endif
