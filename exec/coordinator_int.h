/* coordinator_int.h - the coordinator's state while a query runs, and the
 * operators' coordinator sides that executor.c's round loop drives: the
 * window aggregate (op_window_aggregate.c), session windows
 * (op_session_windows.c), the result rows' way to the sink
 * (result_output.c) and the progress line (progress.c).  Private to those
 * files: the workers see executor_int.h only. */
#ifndef SLUICE_COORDINATOR_INT_H
#define SLUICE_COORDINATOR_INT_H

#include "distribution.h"
#include "executor_int.h"
#include "sluice/state/session_store.h"
#include "sluice/state/sorted_result.h"
#include "updating_result.h"

typedef struct coordinator {
  exec_query *q;
  session_store *sessions;              /* session windows: merged fragments */
  int64_t session_wm, session_min_open; /* fire rule for sessions */
  /* Sessions: every session ending at or before this plus one time unit
   * has been emitted (a watermark for a sink feeding another stage can
   * say no more: a session stays open, and a closed fragment waits, while
   * an open one elsewhere could still reach it). */
  int64_t session_cap;
  sl_sink *sink;
  const sl_sink_connector *sc;
  sl_expr_ctx *ctx;
  sl_buffer agg_rows, out_rows;
  uint32_t *sel;
  uint64_t rows_out;
  uint64_t windows;
  uint64_t groups;
  double merge_seconds, emit_seconds;
  bool limit_reached;
  uint64_t skipped;      /* rows dropped by OFFSET so far */
  sorted_result *sorted; /* ORDER BY: every result row, sorted at the end */
  /* What the ORDER BY rows, the window being merged and the updating
   * result last reported to the memory account (memory_account.h). */
  uint64_t sorted_charged, merged_charged, updates_charged;
  uint64_t sessions_charged; /* the merged sessions last reported */
  /* An updating result (sl_plan.changelog) where this process finalizes:
   * every group's merged state; deltas merge into it as they come. */
  update_result *updates;
  /* A node of a cluster: partials, watermarks and rows go to the
   * coordinator through this socket (node_frames.h); -1 otherwise. */
  sl_frame_out export;
  /* A node running a broadcast join's stages: rows go to the sink (the
   * stage sink) after all, and so does the watermark (executor.h). */
  bool rows_here;
  /* The sink hears the watermark after each window fired (not a node:
   * a node's rows and watermarks go to its coordinator). */
  bool wm_each_window;
  int64_t exported_wm;
  /* A node that sends rows (not partials): the watermark last sent with
   * them; every row of a window ending at or before it has been sent, so
   * a coordinator feeding another stage knows how far they are complete. */
  int64_t rows_wm;
  /* The coordinator of nodes: partials come from nodes, whose keys
   * overlap (nodes do not repartition between them yet). */
  bool of_nodes;
  /* A node whose groups are not complete (no repartitioning between
   * nodes): it sends partials; otherwise it finalizes its own groups and
   * sends result rows. */
  bool export_partials;
  /* A node of a cluster under late merge at partition leaders: it ships
   * its partials split by partition and fires its own partition's windows
   * (node_leaders.h); NULL otherwise. */
  sl_node_leaders *leaders;
  /* Where a node's work goes (distribution.h); NULL on one process. */
  const sl_distribution *dist;
  sl_error *err;
} coordinator;

/* ---- result rows to the sink (result_output.c) ---- */

/* Result rows: kept for sorting under ORDER BY, else written now (after
 * OFFSET, up to LIMIT; a node sends them to the coordinator).  May change
 * b. */
int sl_coord_emit_result(coordinator *c, sl_buffer *b);
/* sorted_result_emit's and update_result's callbacks (arg: coordinator). */
int sl_coord_write_sorted(void *arg, sl_buffer *b);
int sl_coord_emit_changes(void *arg, sl_buffer *b);
/* Hand c->out_rows on (see sl_coord_emit_result). */
int sl_coord_flush_out(coordinator *c);
/* HAVING and the select list over the aggregate rows collected so far. */
int sl_coord_finish_agg_rows(coordinator *c);
/* Stateless: write every batch the n workers ws finished so far. */
int sl_coord_drain_batches(coordinator *c, worker *ws, int n, bool *progress);

/* ---- the window aggregate (op_window_aggregate.c) ---- */

/* Fire every window that all n workers ws have passed (session windows:
 * sl_coord_fire_sessions); *progress := true if any did. */
int sl_coord_fire_windows(coordinator *c, worker *ws, int n, bool *progress);
/* A window's groups are all emitted: write the rest, commit the window. */
int sl_coord_finish_window(coordinator *c);
/* The minimum of the workers' published watermarks (a finished worker
 * counts as +infinity). */
int64_t sl_coord_workers_watermark(worker *ws, int n);
/* A node of a cluster: fire what it can, then tell the coordinator the
 * watermark below which every window's partial has been sent. */
int sl_coord_export_watermark(coordinator *c, worker *ws, int n);
/* Late merge at partition leaders: one round on a node's coordinator. */
int sl_coord_leaders_round(coordinator *c, worker *ws, int n, bool *progress);

/* ---- session windows (op_session_windows.c) ---- */

/* Merge the workers' closed fragments per key and emit every merged
 * session that no worker can still reach. */
int sl_coord_fire_sessions(coordinator *c, worker *ws, int n, bool *progress);

/* ---- the progress line (progress.c) ---- */

/* To the shell: events, their rate, the watermark, windows fired. */
void sl_coord_report_progress(sl_result_sink *shell, worker *ws, int n,
                              const coordinator *c, double start);
/* A node: its events and windows fired, to the coordinator (PROGRESS). */
int sl_coord_send_progress(const coordinator *c, worker *ws, int n,
                           sl_error *err);

#endif
