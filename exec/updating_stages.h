/* updating_stages.h - updating stages: operators over streams without
 * windows (sl_staged_plan.updating) that keep state for as long as the
 * query runs and handle rows as they arrive.
 *
 * Rows flow up the stage tree in batches, each row with its kind
 * (changelog.h):
 *   SELECT     filters and projects; the kind passes through, except
 *              that a filter takes an update (-U then +U, adjacent) as
 *              one: -D of the old row when only it passes, +I of the new
 *              when only it does;
 *   JOIN       an inner equi-join: every row of either side is kept under
 *              its join key and probes the other side's rows (a symmetric
 *              hash join); a row added (+I/+U) inserts the joined rows
 *              that pass the residual (+I), a row taken back (-U/-D)
 *              leaves its side and deletes what it joined (-D);
 *   TOPN       ROW_NUMBER() per partition bounded by N (rownum <= N above
 *              it): the first N rows of each partition in order; a row
 *              that enters or leaves them shifts those after it, and each
 *              place whose row changed goes out as -U of the old row and
 *              +U of the new one (+I for a place that was empty, -D for
 *              one left empty), with its row number.  Over an insert-only
 *              input a row pushed past N never returns and only N rows
 *              per partition are kept (Flink's append-only Top-N); over
 *              an updating one (sl_stage.retracting) every row is kept,
 *              to move up when one before it is taken back;
 *   AGGREGATE  groups kept with a row count: each row added or taken
 *              back goes out as -U/+U of its group's row (+I for a new
 *              group, -D for one whose rows were all taken back); MIN,
 *              MAX and DISTINCT over an updating input keep their values
 *              with counts (agg_multiset.h).
 * The planner (planner/stage_plan.c) admits streams at the leaves only.
 *
 * Ownership: the stages own their state (rows are copied, long strings
 * included) and free it in update_stages_free.  Internal to runtime/.
 */
#ifndef SLUICE_UPDATE_STAGES_H
#define SLUICE_UPDATE_STAGES_H

#include "sluice/state/memory_account.h"
#include "stage_int.h"

typedef struct update_stages update_stages;

/* Rows of the top stage's layout with their kinds (ops[i] for row i of
 * rows), for the query's output. */
typedef int (*update_stages_out_fn)(void *arg, const sl_buffer *rows,
                                    const uint8_t *ops, sl_error *err);

/* The stages over top (built by stage_rt_build).  ttl: 'table.exec.
 * state.ttl' in seconds (0: never): a join's rows are dropped that long
 * after they came, a Top-N's partitions and an aggregate's groups that
 * long after their last row (later rows then meet, rank among, or add to
 * only what is left; a retraction of what expired is dropped), as
 * Flink's state TTL. */
update_stages *update_stages_new(const stage_rt *top, uint32_t buffer_size,
                                 double ttl, update_stages_out_fn out,
                                 void *arg);
void update_stages_free(update_stages *u);

/* Rows of leaf `leaf` (its executor's output layout) arrived: push them
 * up the tree; results go to out. */
int update_stages_push_leaf(update_stages *u, int leaf, const sl_buffer *rows,
                            sl_error *err);

/* Changes of stage st computed elsewhere (the nodes run the stages up to
 * st: sl_staged_plan.spread_top): rows of st's layout (update_stages_layout)
 * with their kinds, pushed into the stages above it. */
int update_stages_push_from(update_stages *u, const sl_stage *st,
                            const sl_buffer *rows, const uint8_t *ops,
                            sl_error *err);
const sl_row_layout *update_stages_layout(const update_stages *u,
                                          const sl_stage *st);

/* The leaves' watermarks (leaf_wm[i], INT64_MIN: none yet) moved: joins
 * with bounds drop the rows no later row can meet (sl_stage.bounds), at
 * every call; 'table.exec.state.ttl' expires state at most every 250 ms. */
void update_stages_sweep(update_stages *u, const int64_t *leaf_wm);
/* The same with the TTL's expiry at once too (the last sweep, when the
 * input has ended). */
void update_stages_sweep_now(update_stages *u, const int64_t *leaf_wm);
/* Rows dropped so far that way. */
uint64_t update_stages_evicted(const update_stages *u);
/* Each JOIN stage's peak state per side into stats->join (added to an
 * entry of the same join there, as over nodes). */
void update_stages_join_stats(const update_stages *u, sl_query_stats *stats);
void update_stages_join_stats_add(sl_query_stats *t, const sl_join_stats *j);
/* Rows the joins hold now (both sides of each). */
uint64_t update_stages_join_rows(const update_stages *u);

/* Rows held in state now (every stage's), for the stats. */
uint64_t update_stages_bytes(const update_stages *u);

/* Report every stage's state to the memory account (*charged: what was
 * last reported); SL_ENOMEM naming the stage holding most when that takes
 * the account over its limit, else SL_OK. */
int update_stages_check_limit(const update_stages *u, sl_memory_account *memory,
                              uint64_t *charged, sl_error *err);

#endif
