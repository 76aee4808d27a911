/* operator_state_int.h - the compiled state of each of a query's
 * operators, one struct per operator, embedded in exec_query
 * (executor_int.h) as a named member: q->source, q->lookup, q->project,
 * q->partial, q->agg, q->late, q->exchange, q->epoch, q->jit.  Set up
 * before the workers start (query_setup.c, executor.c, exchange_open.c),
 * then read-only and shared by all threads.  Separate from executor_int.h
 * so that each operator's state is declared in one place, named after the
 * operator that reads it, and what the whole query needs stays at the top
 * of exec_query.  Internal to exec/ (and cluster/, through
 * executor_int.h). */
#ifndef SLUICE_OPERATOR_STATE_INT_H
#define SLUICE_OPERATOR_STATE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/expr/interpreter.h"
#include "sluice/jit/jit.h"
#include "sluice/net/channel.h"
#include "sluice/row/row.h"
#include "sluice/state/aggregate.h"

/* The source scan (worker.c, the driver): which sources this node reads,
 * their rows, the filter and the watermark over them. */
typedef struct exec_source_state {
  /* This node's workers are sources base .. base + nworkers - 1 of total
   * (one node: 0 of nworkers). */
  int base, total;
  const sl_row_layout *stream_layout; /* the leaves input 0 produces */
  const int *stream_leaf;             /* spec leaf_index for input 0 */
  const bool *stream_as_code;         /* ... and its as_code */
  sl_expr_prog *filter;               /* over stream_layout, or NULL */
  /* SET 'table.exec.source.idle-timeout' in seconds (sl_plan.idle_timeout_us;
   * 0: none): a worker whose source gives no row for this long is idle, and
   * its watermark moves on with the clock and up to the largest of the
   * query's other workers' (worker.c, advance_if_idle). */
  double idle_timeout;
  /* The table's WATERMARK expression, over every input row (before the
   * filter), into a one-field buffer; NULL when windows do not need it. */
  sl_expr_prog *wm_prog;
  const sl_row_layout *wm_layout;
} exec_source_state;

/* Lookup join (op_lookup_join.c): the bounded table, loaded once
 * (query_setup.c), probed by every worker. */
typedef struct exec_lookup_state {
  bool join;                          /* the query has a lookup join */
  const sl_row_layout *joined_layout; /* stream fields, then table fields */
  int nkey_progs;
  sl_expr_prog **stream_key_progs; /* over stream_layout */
  const sl_row_layout *join_key_layout;
  uint32_t table_nrows;
  uint8_t **table_rows; /* rows of the table's layout */
  const sl_row_layout *table_layout;
  uint64_t *table_hash; /* open addressing: hash, row + 1 */
  uint32_t *table_slot_row;
  uint32_t table_cap;
  uint8_t **table_keys; /* key row per table row */
  /* No two rows have equal keys: a probe stops at its first match. */
  bool table_unique;
  /* One integer key, unique and dense: table_direct[v - table_direct_lo]
   * is the row of key v (v - lo < table_direct_n), or -1; else NULL. */
  int32_t *table_direct;
  int64_t table_direct_lo;
  uint64_t table_direct_n;
  sl_buffer *table_buffers;
  int ntable_buffers;
  uint64_t table_charged;         /* the table's bytes reported to memory */
  sl_expr_prog *post_join_filter; /* over joined_layout, or NULL */
} exec_lookup_state;

/* Are two join key rows equal, field by field (NULL only to NULL)?
 * (op_lookup_join.c; the table's uniqueness check uses it too.) */
bool sl_lookup_keys_equal(const sl_row_layout *kl, const uint8_t *a,
                          const uint8_t *b);

/* Projection (op_project.c), a stateless query: output expressions over
 * row_layout into out_layout. */
typedef struct exec_project_state {
  sl_expr_prog **out_progs;
} exec_project_state;

/* Partial aggregate (op_partial_aggregate.c, op_window_state.c,
 * exchange.c): the per-record values, evaluated into one "tmp" row per
 * record: [time][watermark][keys...][agg args...][agg filters...]. */
typedef struct exec_partial_state {
  const sl_row_layout *tmp_layout;
  int tmp_time, tmp_wm_tag, tmp_keys, tmp_args, tmp_filters;
  /* Side-output of SESSION windows under repartitioning: the owner of a
   * key decides whether a record is late, so the tmp row carries the whole
   * record (stream_layout's fields from here on, copied by the reading
   * worker, not evaluated); -1 otherwise. */
  int tmp_record;
  sl_expr_prog **tmp_progs; /* one per tmp field (NULL: not evaluated) */
} exec_partial_state;

/* The groups' state and their results: folded into by the workers
 * (op_window_state.c), merged and finalized by the coordinator
 * (op_window_aggregate.c, op_session_windows.c, result_output.c,
 * updating_result.c) and by partition leaders (cluster/). */
typedef struct exec_agg_state {
  const sl_row_layout *key_layout;
  sl_agg_set aggs;                 /* over tmp_layout */
  const sl_row_layout *agg_layout; /* keys, aggs, window_start/end/time */
  sl_expr_prog *having;            /* over agg_layout */
  /* Group-table slot arrays recycled across windows (aggregate.h). */
  sl_slot_pool *slot_pool;
  sl_expr_prog **final_progs; /* over agg_layout -> out_layout */
} exec_agg_state;

/* Late records (op_late_records.c). */
typedef struct exec_late_state {
  /* A stream leaf of a staged plan (sl_plan.track_watermark, stateless):
   * its event time per input row, to drop records at or before the
   * watermark (late) before they reach the stages; NULL otherwise.
   * rowtime_layout is also time_prog's. */
  sl_expr_prog *rowtime_prog;
  const sl_row_layout *rowtime_layout;
  /* Late records to a table (sl_plan.late_table, late_output.h): where
   * they go (owned: opened by this executor), and for an aggregate the
   * event time of each input row, which decides before the pipeline which
   * records are late (sl_worker_route_late_records). */
  struct late_output *output;
  bool owned;
  sl_expr_prog *time_prog;
  /* The common case, event time a TIMESTAMP column and the watermark that
   * column less a constant (or itself): a buffer is first scanned by
   * reading the two fields, and only one with a late record evaluates
   * both programs (fast; fields of stream_layout, shift in us). */
  bool fast;
  int time_field, wm_field;
  int64_t wm_shift_us;
} exec_late_state;

/* Repartitioning between workers (exchange.c, exchange_open.c). */
typedef struct exec_exchange_state {
  /* This node's workers are exchange members xbase .. xbase + nworkers - 1
   * of xn (one node, or nodes that do not exchange with each other: 0 of
   * nworkers).  channels is xn x xn; only pairs with an end in this
   * process are open: channels[p * xn + c] carries tmp rows from member p
   * to the member c that owns their keys (NULL when p == c). */
  int xbase, xn;
  sl_channel **channels;
  int64_t delay_us; /* SET 'sluice.debug.exchange-delay-us' */
} exec_exchange_state;

/* Epochs of a worker (worker.c, sl_worker_hand_over_epoch). */
typedef struct exec_epoch_state {
  /* Late merge at partition leaders (node_leaders.h): after this much
   * input (bytes of source rows) a worker ends an epoch and hands over
   * its open windows' changes; 0: only at window ends. */
  uint64_t bytes;
  /* An updating result (sl_plan.changelog): a worker also ends an epoch
   * after this long or this many input rows (0: not by that). */
  double seconds;
  uint64_t rows;
} exec_epoch_state;

/* The JIT (jit.h; built by sl_exec_prepare_jit, run by worker.c and
 * worker_compiled.c): compiled kernels for the per-record steps, or NULL
 * (interpreted; status says why).  k_main: the filter (post-join filter
 * after a lookup join) fused with the tmp or output fields; k_join: a
 * join's stream filter fused with its stream keys.  The first of them to
 * see the source's rows (k_join, else k_main) also computes the WATERMARK
 * of every row.  A kernel that fails at run time hands its step back to
 * the interpreter (worker.c). */
typedef struct exec_jit_state {
  sl_jit *handle;
  const char *status; /* NULL: compiled */
  double seconds;
  sl_jit_kernel *k_main, *k_join;
  /* k_lookup: for a window aggregate over a lookup join, everything from
   * the source's rows to the tmp rows in one loop, the table's probe
   * included (jit.h); k_join + k_main remain for what it hands back. */
  sl_jit_kernel *k_lookup;
  sl_jit_lookup lookup;
  sl_jit_lookup_table lookup_table;
  /* k_fold: the fold of tmp rows into window state (phase 2, jit.h), or
   * NULL (sl_worker_fold_row per record); fold_spec is what it was built
   * from and must live as long. */
  sl_jit_kernel *k_fold;
  /* k_route: the exchange member owning each tmp row's key (repartition),
   * or NULL (C hashes each row) */
  sl_jit_kernel *k_route;
  /* k_times: a stream leaf's watermark (pre) and event time of every
   * source row, for the late rows it drops before its pipeline
   * (op_late_records.c); NULL: the interpreter computes them. */
  sl_jit_kernel *k_times;
  /* k_final: the select list over a window's finalized groups, run by the
   * coordinator (result_output.c); NULL: interpreted. */
  sl_jit_kernel *k_final;
  sl_jit_fold_spec fold_spec;
} exec_jit_state;

#endif
