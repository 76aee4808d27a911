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
 * Ctrl-C: the coordinator polls the run's cancel token (sl_run.cancel,
 * common/cancel.h) and stops the query with SL_ECANCELLED; workers stop at
 * their next buffer.
 */
#ifndef SLUICE_EXECUTOR_H
#define SLUICE_EXECUTOR_H

#include <stdatomic.h>
#include <stdint.h>

#include "sluice/common/cancel.h"
#include "sluice/common/error.h"
#include "sluice/connectors/result_sink.h"
#include "sluice/exec/exec_nodes.h"
#include "sluice/exec/run_config.h"
#include "sluice/planner/plan.h"

/* sl_query_stats is defined in plan.h (EXPLAIN ANALYZE prints it). */

/* What a plan runs with: the run context, the caller's for the run.
 * config: the statement's settings, resolved once (run_config.h); cancel:
 * the token that stops it (NULL: nothing does); nodes (node_frames.h): NULL
 * runs the plan in this process alone; with nnodes > 0 this process coordinates
 * nodes that were sent the query; with node_count > 0 this process is node
 * node_index and sends its partials and rows to the coordinator (it writes no
 * sink).  Session windows are not supported across nodes yet (SL_EUNSUPPORTED).
 */
typedef struct sl_run {
  const sl_run_config *config;
  const sl_cancel *cancel;
  const sl_exec_nodes *nodes;
} sl_run;

/* Run plan to completion (a bounded source), cancellation or error.  The
 * calling thread's cancel scope (cancel.h) is run->cancel meanwhile.
 * shell: the result sink for SELECT (unused for INSERT). */
int sl_execute(const sl_plan *plan, const sl_run *run, sl_result_sink *shell,
               sl_query_stats *stats, sl_error *err);

/* SET 'sluice.memory-limit' bounds a query's memory summed over its
 * processes on this host: the shell that runs queries on nodes and each
 * node process serving it call this before a query with the shell's pid
 * (on a node: QUERY's query id >> 32) and the name the memory-limit error
 * gives this process ("the shell", "node 1"); the queries it runs after
 * count on that shell's counter on this host
 * (include/sluice/state/memory_account.h). */
void sl_memory_host_join(uint64_t shell_pid, const char *who);

/* Rows of a staged plan's leaf that arrive from outside the process: a
 * join's side, which its nodes send to every node running the stages
 * (exec/stage_feed.c).  Thread-safe: one thread pushes (the node's link
 * reader, below), one takes (the stage runner).  The feed copies what is
 * pushed; the caller frees the feed after the run. */
typedef struct sl_stage_feed sl_stage_feed;
sl_stage_feed *sl_stage_feed_new(void);
void sl_stage_feed_free(sl_stage_feed *f);
/* Rows in the ROWS wire form (node_frames.h), or a watermark (INT64_MAX: the
 * side has sent everything). */
void sl_stage_feed_rows(sl_stage_feed *f, const void *payload, size_t len);
void sl_stage_feed_watermark(sl_stage_feed *f, int64_t wm);
/* Nothing more comes (the query stops): the taker sees SL_FEED_CLOSED. */
void sl_stage_feed_close(sl_stage_feed *f);
/* Whether the pusher should wait (stop reading) before pushing more: this
 * many items or bytes wait for the taker (backpressure). */
#define SL_FEED_MAX_ITEMS 64
#define SL_FEED_MAX_BYTES ((size_t)16 << 20)
bool sl_stage_feed_full(sl_stage_feed *f);
enum {
  SL_FEED_ROWS = 1,      /* *rows holds them */
  SL_FEED_WATERMARK = 2, /* *wm holds it */
  SL_FEED_NOTHING = 3,   /* nothing within the timeout */
  SL_FEED_CLOSED = 4,
};
/* The next item, waiting up to timeout_ms: SL_FEED_*, or an error code. */
int sl_stage_feed_take(sl_stage_feed *f, int timeout_ms, sl_buffer *rows,
                       const sl_row_layout *layout, int64_t *wm, sl_error *err);

/* Links (cluster/stage_link.c): a join's side goes from every node of its
 * leaf straight to the nodes running the stages, over one TCP connection
 * per pair.  The sending end is a sink (the side's plan->sink, with an
 * sl_stage_link_spec as its arg): each row to the stage node leading its
 * join key's partition (nroute > 0: the hash of columns route, as
 * sl_fields_hash and sl_leader_partition compute it), else to every
 * stage node; watermarks to all, INT64_MAX at a successful close.  The
 * spec and its strings are the caller's, for the run. */
typedef struct sl_stage_link_spec {
  int leaf;                 /* whose rows (the STAGE_HELLO) */
  int n;                    /* stage nodes */
  const char *const *addrs; /* "host:port" of each one's link listener */
  int nroute;
  const int *route;
  uint32_t buffer_size;
  /* Late merge of rows (SL_JOIN_LATE_MERGE_ROWS): hold each row until the
   * watermark passes the first window of hold that needs it (by the time
   * in field time_field), then send that window's rows per partition in
   * one go, before the watermark.  A window TVF row: its first window (or
   * the later one in field live_field, when that is not NULL); an
   * interval join's stream row (stream): the first window whose interval
   * [end + lo, end + hi] reaches it, which fires when the watermark
   * passes end + hi_us.  hold NULL: every row as it comes. */
  const sl_plan_window *hold;
  int time_field;
  int live_field; /* or -1 */
  bool stream;
  int64_t hi_us;
  /* The cluster secret each link proves first (auth.h); NULL: none. */
  const struct sl_secret *secret;
} sl_stage_link_spec;
extern const sl_sink_connector sl_sink_to_stage_nodes;
/* The receiving end: a thread accepts links on listen_fd (the caller
 * keeps and closes it): nsenders[k] of them carry leaf k's rows (their
 * STAGE_HELLO says which), for k < nleaves.  It puts each leaf's rows on
 * feeds[k], and the smallest of its senders' watermarks whenever that
 * grows (none before every one of them has said hello); a link that ends
 * before its sender's final watermark closes every feed (the run stops;
 * the sender's own error is the cause).  With a secret, a connection
 * that does not prove it (auth.h) is closed and not counted.  Stop joins
 * the thread. */
typedef struct sl_stage_links sl_stage_links;
int sl_stage_links_start(int listen_fd, int nleaves, const int *nsenders,
                         sl_stage_feed *const *feeds,
                         const struct sl_secret *secret, sl_stage_links **out,
                         sl_error *err);
void sl_stage_links_stop(sl_stage_links *l);

/* Where a staged plan's leaves run and its rows go (NULL: everything in
 * this process, rows to the plan's sink). */
typedef struct sl_staged_run {
  /* Per leaf: the nodes that were sent it (sl_run.nodes), or
   * NULL for a leaf that runs here.  NULL: every leaf here. */
  const sl_exec_nodes *const *leaf_nodes;
  /* Per leaf: its rows come from this feed instead (NULL: not fed).
   * NULL: no leaf is fed. */
  sl_stage_feed *const *feeds;
  /* fd >= 0: this is a node running the stages of a broadcast join: result
   * rows go to the coordinator on this socket as ROWS frames (OFFSET and
   * LIMIT are the coordinator's), and the run stops when cancel (the
   * node's query token, cancel.h) is requested. */
  sl_frame_out export; /* fd -1: not such a node */
  const sl_cancel *cancel;
  /* The cluster's side (exec/distribution.h): required when export.fd >= 0. */
  const struct sl_distribution *dist;
} sl_staged_run;

/* Run a staged plan (plan.h, SL_PLAN_STAGED): every leaf with its own
 * executor (or its feed), the stages above them in this process once per
 * window (exec/stage_runner.c).  The leaves' strategies must be set. */
int sl_execute_staged(const sl_plan *plan, const sl_run *run,
                      const sl_staged_run *where, sl_result_sink *shell,
                      sl_query_stats *stats, sl_error *err);

/* The coordinator of a join whose stages run on the nodes (plan.h,
 * SL_JOIN_BROADCAST, _REPARTITION, _LATE_MERGE, _SHUFFLE;
 * cluster/stage_broadcast.c): each side, leaf side_leaf[j], runs on
 * sides[j] (sent it), whose nodes send its rows and watermarks over links
 * to the n nodes at stage_fds, which were sent the query to run the
 * stages over their own share of the local leaf; this process runs each
 * side's executor (its progress, and stopping it) and writes the stage
 * nodes' result rows to the plan's sink, window by window, OFFSET and
 * LIMIT applied.  One side, but under a repartition of more than two
 * leaves (q23) one per leaf other than the local one.  Updating stages
 * (sl_staged_plan.updating): the stage nodes' changes go out as each
 * node's round ends; over one stream there is no side (nsides 0) and the
 * stage nodes route their own rows.  run->nodes is not used (the sides
 * are). */
int sl_execute_broadcast(const sl_plan *plan, const sl_run *run,
                         const sl_exec_nodes *sides, const int *side_leaf,
                         int nsides, const int *stage_fds, int n,
                         sl_result_sink *shell, sl_query_stats *stats,
                         sl_error *err);

#endif
