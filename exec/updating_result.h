/* updating_result.h - the coordinator's side of an updating GROUP BY (a
 * GROUP BY without a window, sl_plan.changelog): every group's merged
 * state for as long as the query runs, and the changelog of each merge.
 *
 * Workers (or nodes) hand over the partial states of what changed since
 * their last epoch (a delta: states are CRDTs, so merging deltas gives
 * what merging everything would).  Merging a delta finalizes each group
 * it touches before and after the merge, runs HAVING and the select list
 * over both, and sends the difference as changelog rows (changelog.h):
 * +I for a group that appears, -U/+U for one whose row changed, -D for one
 * that HAVING no longer passes; nothing for a row that did not change.
 *
 * Ownership: the result owns its table and buffers; update_result_free
 * frees them.  Internal to runtime/.
 */
#ifndef SLUICE_UPDATE_RESULT_H
#define SLUICE_UPDATE_RESULT_H

#include "executor_int.h"

/* Where changelog rows go (rows of q->out_layout, op first); may change
 * the buffer's rows (the caller clears it afterwards). */
typedef int (*update_out_fn)(void *arg, sl_buffer *rows);

typedef struct update_result {
  const exec_query *q;
  /* Every group's merged state: q->agg.aggs's states, then (set) the time the
   * group last changed, for 'table.exec.state.ttl'. */
  sl_agg_set set;
  sl_arena arena; /* set's */
  uint32_t touched_off;
  sl_group_table table;
  double ttl;         /* seconds; 0: groups never expire */
  double last_expiry; /* when expired groups were last dropped */
  sl_buffer rows;     /* aggregate rows of the changed groups, in pairs:
                       * [before, after] or [after] for a new group */
  uint8_t *before;    /* per row of `rows`: is it a group's old row? */
  uint32_t *sel;      /* scratch, one per row of `rows` */
  uint8_t *pass;      /* ... HAVING's verdict */
  uint8_t *ops;       /* ... the op of the rows that go out */
  sl_buffer out;      /* changelog rows being filled */
  sl_expr_ctx *ctx;
  uint64_t changes; /* changelog rows sent */
} update_result;

/* ttl: 'table.exec.state.ttl' in seconds (0: never).  A group unchanged
 * for that long is dropped; its next row starts it again and inserts (+I)
 * its row anew without taking the old one back, as Flink's state TTL
 * does. */
void update_result_init(update_result *u, const exec_query *q,
                        uint32_t buffer_size, double ttl);
void update_result_free(update_result *u);

/* Merge delta into the result and send the changes to out(arg).  The
 * delta is not changed (the result copies what it keeps).  Returns
 * UPDATE_RESULT_OVER_LIMIT, having merged only part of it, when the result
 * would have to double its table with no room left under the memory
 * limit: the caller ends the query with the memory-limit error. */
enum { UPDATE_RESULT_OVER_LIMIT = 2 };
int update_result_merge(update_result *u, const sl_group_table *delta,
                        update_out_fn out, void *arg, sl_error *err);

/* The input has ended: a GROUP BY without keys over no rows at all still
 * has its one row (COUNT(*) = 0), inserted now. */
int update_result_finish(update_result *u, update_out_fn out, void *arg,
                         sl_error *err);

/* Bytes the result holds (its groups' states), for the memory figures. */
size_t update_result_bytes(const update_result *u);

#endif
