/* explain.h - EXPLAIN output.
 *
 * Until the planner exists, EXPLAIN prints the bound tree (binder.h): an
 * indented tree, one node per line, in the style of Flink's and
 * RisingWave's plans, headed "== Bound tree ==" (TEXT); or the same tree as
 * one JSON object (JSON).
 *
 * Ownership: output is appended to the caller's strbuf.
 */
#ifndef SLUICE_EXPLAIN_H
#define SLUICE_EXPLAIN_H

#include "sluice/binder/binder.h"
#include "sluice/common/strbuf.h"
#include "sluice/parser/ast.h"

/* Append the explanation of s.  For an EXPLAIN statement, explains the
 * inner statement.  The TEXT form ends with a newline; JSON is one valid
 * JSON document followed by a newline. */
void sl_explain_bound(sl_strbuf *b, const sl_bound_stmt *s,
                      sl_explain_format fmt);

/* EXPLAIN of a query or INSERT: the bound tree, then the physical plan the
 * runtime would run (p), for `workers` worker threads and the distribution
 * strategy of its stateful operator; when there is no plan, no_plan says
 * why (e.g. "not supported yet: ...").  With st (EXPLAIN ANALYZE: the plan
 * was run), each operator also shows what was measured.  why (may be
 * NULL): how the strategy was chosen (estimates and costs).  TEXT: two headed
 * trees; JSON: one object {"bound_tree": ..., "physical_plan": ...}. */
struct sl_plan;
struct sl_query_stats;
void sl_explain_statement(sl_strbuf *b, const sl_bound_stmt *s,
                          const struct sl_plan *p, const char *no_plan,
                          int workers, const char *strategy, const char *why,
                          const struct sl_query_stats *st,
                          sl_explain_format fmt);

#endif
