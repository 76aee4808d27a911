/* executor.h - running a plan (plan.h) on one node with worker threads.
 *
 * Each worker thread opens its own instance of the source (its share of
 * the stream) and runs the whole pipeline on it: filter, lookup join,
 * projection, or window assignment and partial aggregation into its own
 * group tables.  Nothing is shared per record.  When a worker's watermark
 * passes a window's end it hands its partial state for that window to the
 * coordinator (the calling thread), which fires the window once every
 * worker has passed it (the minimum of the workers' watermarks: the vector
 * clock of the brief, over threads), merges the partials, finalizes the
 * aggregates and writes the rows to the sink, window after window in order.
 *
 * Late records (older than the worker's watermark for every window they
 * belong to) are dropped and counted.  At the end of a bounded source the
 * watermark jumps to +infinity, which fires every open window, so a
 * bounded run ends with complete results.
 *
 * Ctrl-C: the coordinator polls sl_interrupt_pending() and stops the query
 * with SL_ECANCELLED; workers stop at their next buffer.
 */
#ifndef SLUICE_EXECUTOR_H
#define SLUICE_EXECUTOR_H

#include <stdint.h>

#include "sluice/error.h"
#include "sluice/node.h"
#include "sluice/plan.h"
#include "sluice/session.h"
#include "sluice/settings.h"

/* sl_query_stats is defined in plan.h (EXPLAIN ANALYZE prints it). */

/* Run plan to completion (a bounded source), cancellation or error.
 * shell: the result sink for SELECT (unused for INSERT). */
int sl_execute(const sl_plan *plan, const sl_settings *settings,
               sl_result_sink *shell, sl_query_stats *stats, sl_error *err);

/* The same in a cluster (node.h): nodes == NULL is sl_execute; with
 * nnodes > 0 this process coordinates nodes that were sent the query; with
 * node_count > 0 this process is node node_index and sends its partials and
 * rows to the coordinator (it writes no sink).  Session windows are not
 * supported across nodes yet (SL_EUNSUPPORTED). */
int sl_execute_ex(const sl_plan *plan, const sl_settings *settings,
                  const sl_exec_nodes *nodes, sl_result_sink *shell,
                  sl_query_stats *stats, sl_error *err);

/* Run a staged plan (plan.h, SL_PLAN_STAGED): every leaf with its own
 * executor, the stages above them in this process once per window
 * (runtime/stage_runner.c).  The leaves' strategies must be set.
 * leaf_nodes: NULL (every leaf runs here), or per leaf the nodes that were
 * sent it (sl_execute_ex's nodes; NULL for a leaf that runs here). */
int sl_execute_staged(const sl_plan *plan, const sl_settings *settings,
                      const sl_exec_nodes *const *leaf_nodes,
                      sl_result_sink *shell, sl_query_stats *stats,
                      sl_error *err);

#endif
