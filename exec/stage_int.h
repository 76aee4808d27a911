/* stage_int.h - what the staged-plan runner (stage_runner.c), its output
 * (stage_output.c) and the per-window operators (stage_eval.c) share.  Internal
 * to runtime/.
 *
 * Rows of one window's evaluation live in relations (`rel`): buffers of
 * one layout whose strings may point into the buffers of the relation they
 * came from (borrow_strings), so every relation of a window is kept until
 * that window's rows have been written, and freed together then. */
#ifndef SLUICE_STAGE_INT_H
#define SLUICE_STAGE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <pthread.h>

#include "executor_int.h"
#include "sluice/common/cancel.h"
#include "sluice/exec/run_config.h"
#include "sluice/expr/interpreter.h"
#include "sluice/jit/jit.h"
#include "sluice/planner/plan.h"
#include "sluice/state/aggregate.h"
#include "sluice/state/memory_account.h"
#include "sluice/state/running_extremes.h"
#include "sluice/state/sorted_result.h"

/* Rows of a relation. */
typedef struct rel {
  const sl_row_layout *layout;
  sl_buffer *bufs;
  int n, cap;
  bool borrowed;      /* bufs belong to someone else (a leaf's store) */
  int stage;          /* the stage_rt id whose evaluation made it, or -1 */
  uint32_t next_size; /* its next buffer's bytes (0: the first's) */
} rel;

/* Rows a leaf produced for one key: the window end (windowed leaf) or
 * the time bucket (a stream leaf: event time / bucket width). */
typedef struct keyed_rows {
  int64_t key;
  sorted_result rows;
  /* A stream leaf's: each buffer's smallest and largest event time, so a
   * window's probe skips the buffers outside its interval and checks the
   * rows of only those that straddle an end (room for span buffers). */
  int64_t *tmin, *tmax;
  int span;
} keyed_rows;

/* A leaf's rows, filled by its executor's coordinator thread through the
 * stage sink (under the runner's lock) and read by the runner. */
typedef struct leaf_store {
  const sl_plan *plan;
  const sl_row_layout *layout;    /* the rows kept: the leaf's output rows,
                                   * or for window rows those and the
                                   * window's start, end and time */
  const sl_row_layout *in_layout; /* the leaf executor's rows */
  bool stream;
  bool window_rows;      /* keyed by the window end of each row's time */
  sl_plan_window window; /* window_rows: the TVF's window (TUMBLE, HOP or
                          * CUMULATE; the plan's unit_us is the time's) */
  int time_field;        /* stream, window rows: the event-time field */
  int live_field;        /* window rows: the hidden $live_from (the last) */
  int64_t bucket_us;     /* stream: bucket width */
  int64_t drop_below;    /* stream: rows before this time are too late */
  int64_t hi_us;         /* stream: the interval's upper end after a window
                          * end (a window needs rows up to end + hi_us) */
  bool arrival;          /* updating stages: every row under key 0, in the
                          * order it came, however late */
  keyed_rows *keys;      /* sorted by key; room for capkeys from here */
  int nkeys, capkeys;
  int front;  /* entries freed before keys (the smallest keys go first: the
               * array is moved down only when full, not per window) */
  int64_t wm; /* every row up to here has arrived (see the sink hook) */
  bool done;
  uint64_t late, bytes;
  uint64_t peak; /* the most bytes held at once (EXPLAIN ANALYZE) */
  /* A stream leaf's rows that cannot equal their windows' MAX or MIN are
   * not kept (sl_staged_plan.extremes; extremes.x NULL: none), and how
   * many were not (its workers drop most before: op_keep_extremes.c). */
  sl_running_extremes extremes;
  uint64_t not_kept;
  struct stage_runner *run;
} leaf_store;

/* The runtime form of one stage: layouts and compiled expressions. */
typedef struct stage_rt stage_rt;
struct stage_rt {
  const sl_stage *st;
  const sl_row_layout *layout; /* its output rows */
  stage_rt *input, *left, *right;
  int leaf;
  /* Not a leaf: its number in pre-order over the stages that are not
   * leaves (top first, a join's left before its right), as EXPLAIN walks
   * them: its place in sl_query_stats.stage_peak; else -1. */
  int id;
  /* SELECT */
  sl_expr_prog *filter;
  sl_expr_prog **exprs;
  /* JOIN: key rows of key_layout from either side; the residual over the
   * output row; left/right fields' places in the output row */
  const sl_row_layout *key_layout;
  sl_expr_prog **lkeys, **rkeys;
  /* keys that are plain columns of their side's rows, of the key's type:
   * the column of each (read directly, not through the interpreter), or
   * NULL when any is not */
  const int *lcols, *rcols;
  /* keys read from columns on both sides into zeroed key rows with no
   * string field, a whole number of words wide: equal exactly when their
   * bytes are, so hashed and compared a word at a time */
  bool flat_keys;
  sl_expr_prog *residual;
  int stream_side; /* -1, 0 (left) or 1 (right) */
  /* AGGREGATE: "tmp" rows (groups, then per aggregate its argument and
   * filter), key rows of the groups */
  const sl_row_layout *tmp_layout, *group_layout;
  sl_expr_prog **tmp_progs;
  int ntmp; /* the groups are tmp fields 0 .. ngroups - 1 */
  sl_agg_set aggs;
  /* TOPN: sort rows (partition values, then order values); the input
   * columns they are when all are plain columns (read directly), or NULL;
   * the partition's sort fields that are not the window's bounds (the
   * same for every row of one evaluation) */
  const sl_row_layout *sort_layout;
  sl_expr_prog **sort_progs;
  int nsort;
  const int *sort_cols;
  int *part_fields;
  int npart_fields;
  sl_border *sort_order;
  /* Compiled (stage_jit.c), or NULL: SELECT's filter and exprs, or
   * AGGREGATE's tmp progs (k_exprs); JOIN's residual (k_residual). */
  sl_jit_kernel *k_exprs, *k_residual;
};

/* The kernels of every stage under top, compiled (NULL, with why in
 * status, when the JIT is off, nothing compiles or LLVM fails: the
 * interpreter then runs them all). */
sl_jit *stage_jit_build(stage_rt *top, const sl_run_config *config,
                        char *status, size_t status_len);

/* Threads that take parts of a window's work (stage_pool.c): workers - 1
 * of them (NULL below 2 workers), the caller taking a part too. */
typedef struct stage_pool stage_pool;
stage_pool *stage_pool_new(int workers, const sl_cancel *cancel);
/* How many parts a job should have: the threads and the caller. */
int stage_pool_parts(const stage_pool *p);
/* Run fn(arg, 0 .. nparts-1), each part once, on the pool and the calling
 * thread; returns when all are done (p NULL: in turn, here). */
void stage_pool_run(stage_pool *p, int nparts, void (*fn)(void *, int),
                    void *arg);
void stage_pool_free(stage_pool *p);

/* One window's evaluation. */
typedef struct stage_eval {
  leaf_store *leaves;
  stage_pool *pool; /* or NULL: one thread */
  uint32_t buffer_size;
  sl_expr_ctx *ctx;
  sl_error *err;
  /* What must live until the window's rows are written. */
  rel **rels;
  int nrels, caprels;
  sl_group_table *tables;
  int ntables, captables;
  /* rows the stages' compiled kernels did, and those the interpreter did
   * (no kernel, or handed back) */
  uint64_t rows_compiled, rows_interpreted;
  /* Per stage id (SL_STATS_STAGES first): the bytes this window's
   * evaluation holds there (its rows, hash table, groups), and the most
   * any window held (folded in at stage_eval_release). */
  uint64_t window_bytes[SL_STATS_STAGES], peak_bytes[SL_STATS_STAGES];
  /* What this window's evaluation holds (its relations' buffers, hash
   * tables, groups), reported to the query's memory account (NULL: not
   * counted) as it grows; over the limit, `over` is set with the error
   * in err, and the evaluation stops at its next check. */
  sl_memory_account *memory;
  uint64_t held, charged;
  bool over;
} stage_eval;

/* Layouts and compiled expressions of the tree under st. */
int stage_rt_build(sl_arena *a, const sl_stage *st, const sl_staged_plan *sp,
                   stage_rt **out, sl_error *err);

/* The rows of stage s for the window ending at end (into *out, owned by
 * ev until stage_eval_release). */
int stage_eval_window(stage_eval *ev, const stage_rt *s, int64_t end,
                      const rel **out);

/* A window Top-N's first `limit` rows of each partition of rows[0..n),
 * sort rows of layout kl whose field nsort is the row's input position:
 * moved to rows[0..k) in the order a stable sort by order[0..nsort) gives
 * them, partition by partition; returns k (stage_topn.c).  A
 * partition is the rows equal in part_fields[0..npart): the partition
 * columns leaving out those every row of the window holds alike (its
 * bounds), which the order's first columns are. */
size_t stage_topn_select(const sl_row_layout *kl, const sl_border *order,
                         const int *part_fields, int npart, int nsort,
                         const uint8_t **rows, size_t n, int64_t limit);

/* What the stages' evaluators share (stage_eval.c): a relation stage s's
 * evaluation makes (freed at release; its bytes count as s's), a buffer of
 * r with room for one more row, progs over rows sel of b into r, the
 * selection 0 .. n - 1 (malloc'd), a relation's row pointers in order
 * (malloc'd), and bytes more s holds for this window. */
rel *stage_rel_new(stage_eval *ev, const stage_rt *s,
                   const sl_row_layout *layout);
sl_buffer *stage_rel_room(stage_eval *ev, rel *r, uint32_t heap);
int stage_eval_into(stage_eval *ev, sl_expr_prog *const *progs, int nprogs,
                    const sl_buffer *b, const uint32_t *sel, uint32_t n,
                    rel *r);
uint32_t *stage_selection(uint32_t n);
const uint8_t **stage_rel_rows(const rel *r, size_t *n);
void stage_window_holds(stage_eval *ev, const stage_rt *s, uint64_t bytes);

/* A window Top-N stage over its input's rows (stage_topn.c). */
int stage_eval_topn(stage_eval *ev, const stage_rt *s, const rel *in,
                    const rel **out);

/* Free everything one window's evaluation made. */
void stage_eval_release(stage_eval *ev);

/* The rows of a leaf under key (NULL if none). */
keyed_rows *leaf_store_find(const leaf_store *ls, int64_t key);

/* Updating stages' rows for a stage_output: with their kind first when
 * the result is a changelog (an update_stages_out_fn; the rows buffer,
 * of the changelog layout, is the caller's). */
typedef struct update_output {
  struct stage_output *o;
  bool changelog;
  sl_buffer rows; /* the output layout: op, then the top stage's */
} update_output;
int stage_write_updates(void *arg, const sl_buffer *rows, const uint8_t *ops,
                        sl_error *err);

/* A staged query's output rows (stage_output.c; written by
 * stage_runner.c and stage_broadcast.c): OFFSET and LIMIT over everything
 * written so far. */
typedef struct stage_output {
  const sl_sink_connector *sc;
  sl_sink *sink;
  int64_t offset, limit; /* -1: no LIMIT */
  uint64_t skipped, written;
  bool limit_reached;
  /* ORDER BY (a bounded query): every row is kept here until the end. */
  const sl_border *order;
  int norder;
  sorted_result *sorted;
  sl_error *emit_err; /* stage_output_finish's, for the emit callback */
  /* SET 'sluice.memory-limit': ORDER BY's rows count there (what they
   * last reported: sorted_charged) until stage_output_free_sorted. */
  sl_memory_account *memory;
  uint64_t sorted_charged;
} stage_output;

/* Write b's rows past OFFSET, up to LIMIT, or keep them for ORDER BY; then
 * the window's commit (stage_output_window_end).  stage_output_finish:
 * at the end, ORDER BY's rows in order (and the last commit). */
int stage_output_write(stage_output *o, const sl_buffer *b, sl_error *err);
int stage_output_window_end(stage_output *o, sl_error *err);
int stage_output_finish(stage_output *o, sl_error *err);
/* ORDER BY's rows are freed and leave the memory account. */
void stage_output_free_sorted(stage_output *o);

/* Add the work of another executor (a leaf, a node) into t: counts and
 * times summed, peaks maxed, the first JIT status kept.  Events, workers
 * and the stages' own counters are the caller's (a leaf re-reads the
 * stream; nodes read disjoint shares). */
void stage_stats_add_work(sl_query_stats *t, const sl_query_stats *s);

/* The events a staged query read, from events[k], leaf k's: every source's
 * events count (a join of two tables read 6 and 8: 14), but leaves that
 * read the same table (a self-join; NEXMark's queries, whose leaves all
 * filter one generator's stream) each read a copy of one stream, whose
 * events count once (the largest leaf's count). */
uint64_t stage_events_of_leaves(const sl_staged_plan *sp,
                                const uint64_t *events);

/* ---- the runner's state, shared with the stage sink ---------------------- */

/* A stream leaf whose rows wait in its store for more than this, while
 * it runs ahead of the windows the stages can fire, is held back (its
 * coordinator waits, and then its workers: worker.c) until the others
 * catch up. */
#define STAGE_HOLD_MAX (64u << 20)

typedef struct stage_runner {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* news for the runner, and for held-back leaves */
  /* Counts the leaves' news (rows, a watermark, an end), each also
   * broadcast on cond: the runner evaluates a window with the lock
   * released, and news that came meanwhile (its broadcast heard by no
   * one) must not leave it waiting out its timeout (stage_runner_news). */
  uint64_t news;
  int64_t frontier; /* every window ending at or before it has fired */
  bool cancelled;   /* the query stopped: leaves stop at their next call */
  leaf_store *leaves;
  int nleaves;
  uint32_t buffer_size;
  uint64_t peak_bytes;
  /* Shared by the leaves' executors (query_shared): SET
   * 'sluice.memory-limit' (shared.memory) counts their state, the rows the
   * leaves hold here (what they last reported: leaves_charged) and the
   * updating stages' state (updates_charged); an idle leaf's watermark
   * moves up to the busy one's (shared.wm_max). */
  query_shared shared;
  uint64_t leaves_charged, updates_charged;
  const char *holder; /* who holds the leaves' rows, with its verb */
} stage_runner;

/* A leaf's news for the runner (run->lock held): counted and broadcast. */
void stage_runner_news(stage_runner *run);

/* The stage sink (stage_sink.c): a leaf's executor writes its rows into
 * its store (sl_sink_spec.arg is the leaf_store) through it; a leaf fed
 * over links (stage_runner.c, feed_leaf) writes through the same calls. */
extern const sl_sink_connector stage_sink;
int stage_sink_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err);
int stage_sink_write(sl_sink *s, const sl_buffer *rows, sl_error *err);
int stage_sink_watermark(sl_sink *s, int64_t wm, sl_error *err);
int stage_sink_close(sl_sink *s, bool ok, sl_error *err);
/* The allocation that holds a store's keys; a key's rows freed; the rows of
 * a store's first (smallest) key freed (run->lock held). */
keyed_rows *leaf_store_base(leaf_store *ls);
void keyed_rows_free(keyed_rows *k);
void drop_first_key(leaf_store *ls);

#endif
