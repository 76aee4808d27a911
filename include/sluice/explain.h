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

#include "sluice/ast.h"
#include "sluice/binder.h"
#include "sluice/strbuf.h"

/* Append the explanation of s.  For an EXPLAIN statement, explains the
 * inner statement.  The TEXT form ends with a newline; JSON is one valid
 * JSON document followed by a newline. */
void sl_explain_bound(sl_strbuf *b, const sl_bound_stmt *s,
                      sl_explain_format fmt);

#endif
