/* executor_int.h - what the coordinator (executor.c, coordinator_int.h)
 * and the workers (worker.c, worker_ops_int.h) share while a query runs,
 * and the workers' queues to the coordinator (worker_queue.c).  Internal
 * to exec/. */
#ifndef SLUICE_EXECUTOR_INT_H
#define SLUICE_EXECUTOR_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/int_math.h"
#include "sluice/exec/executor.h"
#include "sluice/expr/interpreter.h"
#include "sluice/jit/jit.h"
#include "sluice/net/channel.h"
#include "sluice/planner/plan.h"
#include "sluice/row/row.h"
#include "sluice/session/changelog.h"
#include "sluice/state/aggregate.h"
#include "sluice/state/memory_account.h"

#include "operator_state_int.h"

#define WM_MIN INT64_MIN
#define WM_MAX INT64_MAX

/* What the executors of one query in this process share (a staged run's
 * leaves run one each; otherwise an executor has its own): the account of
 * its state, and for idle sources the largest watermark any of its
 * workers still reading has reached (worker.c, advance_if_idle). */
typedef struct query_shared {
  sl_memory_account memory; /* SET 'sluice.memory-limit' */
  _Atomic int64_t wm_max;   /* WM_MIN until a worker has a watermark */
  /* A staged run's leaves start together: a leaf whose workers are ready
   * (input pre-generated, code compiled) waits for the other leaves
   * (sl_query_leaf_ready), so none runs ahead while another prepares and
   * the query's clock starts once, when the last is ready.  A leaf run
   * by nodes counts as ready at once (it holds nothing back here). */
  pthread_mutex_t ready_lock;
  pthread_cond_t ready_cond;
  int leaves_pending; /* leaves not yet ready (0 outside staged runs) */
  bool abandoned;     /* the staged run ended: nobody waits any more */
  double start_time;  /* when the last leaf was ready, or 0 */
  /* When the last node running one of the leaves said READY (input
   * pre-generated, code compiled there), or 0: the query's clock starts
   * no earlier, as it starts after the leaves run here are ready. */
  double nodes_ready_time;
} query_shared;

void sl_query_shared_init(query_shared *sh, const sl_run_config *config);
void sl_query_shared_close(query_shared *sh);
/* A leaf is ready, or ended without ever being: one fewer pending; with
 * wait, until none is (or the run is abandoned). */
void sl_query_leaf_ready(query_shared *sh, bool wait);
/* The staged run ended: wake every leaf still waiting. */
void sl_query_leaves_abandon(query_shared *sh);

/* The compiled, read-only parts of a query, shared by all threads: what
 * the whole query needs, then each operator's own state
 * (operator_state_int.h). */
typedef struct exec_query {
  const sl_plan *plan;
  sl_arena arena; /* everything below */
  uint32_t buffer_size;
  int nworkers;
  /* What this query's executors in this process share: own_shared unless
   * a staged run shares its own; memory is &shared->memory (all of the
   * query's state in this process, memory_account.h). */
  query_shared *shared;
  query_shared own_shared;
  sl_memory_account *memory;

  const sl_row_layout *row_layout; /* the layout the rest runs over */
  /* The result rows: nout fields named out_names (an updating result's
   * op, then the plan's columns; else the plan's columns), out_layout. */
  int nout;
  const char *const *out_names;
  const sl_row_layout *out_layout;

  exec_source_state source;
  exec_lookup_state lookup;
  exec_project_state project;
  exec_partial_state partial;
  exec_agg_state agg;
  exec_late_state late;
  exec_exchange_state exchange;
  exec_epoch_state epoch;
  exec_jit_state jit;
} exec_query;

/* A window's partial state from one worker, handed to the coordinator. */
typedef struct window_partial {
  int64_t start, end;
  sl_group_table *table;
  uint64_t queued_bytes; /* what it counts in its worker's queue */
  struct window_partial *next;
} window_partial;

/* A closed session from one worker (session windows). */
typedef struct session_fragment {
  int64_t start, end;
  uint8_t *key;    /* a copy of the key row (heap) */
  uint8_t *states; /* a copy of the session's states (heap), their long
                    * strings and DISTINCT sets in arena: the worker
                    * reuses the session once it is handed over */
  sl_arena arena;
  uint64_t queued_bytes; /* what it counts in its worker's queue */
  uint64_t held_bytes;   /* what it holds, for the memory limit */
  struct session_fragment *next;
} session_fragment;

/* Free a fragment and what it owns. */
void session_fragment_free(session_fragment *f);

/* A buffer of finished output rows (stateless queries). */
typedef struct out_batch {
  sl_buffer buf;
  uint64_t queued_bytes; /* what it counts in its worker's queue */
  struct out_batch *next;
} out_batch;

typedef struct exec_shared exec_shared;

/* Backpressure.  What a worker hands to the coordinator (result batches,
 * window partials, session fragments) waits in the worker's queue until
 * the coordinator takes it; the coordinator writes to the sink as it
 * takes, so a slow consumer (the shell's printer, a file sink on a slow
 * disk or pipe, a stage holding a leaf back) takes slowly.  Once more than
 * SL_OUT_QUEUED_MAX items, or more than one item of SL_OUT_QUEUED_BYTES
 * bytes in all, wait, the worker stops reading its source until the
 * coordinator has taken some (it still drains what other workers send it,
 * so the exchange cannot deadlock): the sources wait for the slowest
 * consumer and memory stays bounded whatever its speed.  A node link's
 * queue is the node's frames, bounded by the credits it grants the node
 * (sl_node_credit, node_frames.h). */
#define SL_OUT_QUEUED_MAX 16
#define SL_OUT_QUEUED_BYTES ((uint64_t)16 << 20)

typedef struct worker {
  int index;
  int node_fd; /* a cluster's coordinator: this "worker" is a node */
  exec_shared *shared;
  exec_query *q;
  pthread_t thread;
  atomic_bool *cancel;

  /* Published to the coordinator under lock. */
  pthread_mutex_t lock;
  window_partial *partials, *partials_tail;
  out_batch *batches, *batches_tail;
  /* The queue: batches, partials and fragments published, not yet taken
   * by the coordinator, and their bytes (see SL_OUT_QUEUED_MAX). */
  int queued;
  uint64_t queued_bytes;
  pthread_cond_t drained;  /* the coordinator took some of the queue */
  out_batch *free_batches; /* returned by the coordinator for reuse */
  /* A node's link: what its partials not merged yet last reported to the
   * memory account (node_link.c; the link thread's own). */
  uint64_t partials_charged;
  int64_t published_wm; /* every window ending at or before it is in
                         * partials */
  session_fragment *fragments, *fragments_tail;
  int64_t min_open_start;    /* no open session of this worker starts
                              * earlier (session windows) */
  void *sessions;            /* the worker's session store, freed by the
                              * coordinator after the query */
  uint64_t sessions_charged; /* ... and what it holds, on the account until
                              * then */
  bool done;
  int rc;
  sl_error err;

  /* Statistics (read by the coordinator at the end). */
  _Atomic uint64_t events; /* read by the coordinator for progress */
  uint64_t late, skipped;
  uint64_t input_bytes; /* the source's stats.bytes */
  uint64_t rows_filtered, rows_joined, rows_state, state_bytes_peak;
  uint64_t rows_not_kept; /* op_keep_extremes.c */
  /* With the JIT's functions (worker.c): buffers (and their rows) that ran
   * compiled whole, those a step handed back to the interpreter, and rows
   * the compiled fold handed to C (sl_query_stats says more). */
  uint64_t jit_buffers, jit_rows, jit_back_buffers, jit_back_rows;
  uint64_t jit_fold_rows_c;
  /* A node of a cluster (coordinator side): its JIT as it reported it. */
  double jit_seconds;
  char jit_status[160];
  uint64_t windows_fired, groups_emitted; /* when it finalized its groups */
  /* Repartition: what this worker published to other workers. */
  uint64_t exchange_rows, exchange_bytes, exchange_slots;
  /* A node of a cluster (coordinator side): late merge at leaders. */
  uint64_t epochs_sent, state_moved;
  /* A node link: what the coordinator has taken of the node's bulk
   * frames (cumulative, this query) and told it last with CREDIT; the
   * lock keeps the link's frames to the node whole (CREDIT from the
   * coordinator's thread, CANCEL from the link's). */
  uint64_t credit_frames, credit_bytes, told_frames, told_bytes;
  pthread_mutex_t send_lock;
  double source_seconds, pipeline_seconds;
  double open_seconds; /* opening the source (pre-generating input) */
} worker;

/* The bytes of the partials (or session windows' closed sessions) w
 * published that the coordinator has not taken yet (their tables; a taken
 * one is the coordinator's to count), and in *n how many.  Takes
 * w->lock. */
uint64_t sl_exec_partials_bytes(worker *w, uint32_t *n);

/* Whether w's queue is over its bound (SL_OUT_QUEUED_MAX); w->lock held. */
bool sl_exec_queue_full_locked(const worker *w);
/* Wait, as a worker whose queue is full, until the coordinator has taken
 * some of it, the query stops, or ms milliseconds have passed; returns
 * whether the queue is still full.  The coordinator is woken first. */
bool sl_exec_wait_drained(worker *w, int ms);
/* The coordinator took n items of `bytes` from w's queue (w->lock held):
 * wakes a worker waiting for room.  A node link's credits are granted by
 * sl_node_link_credit after the lock is released. */
void sl_exec_took_locked(worker *w, int n, uint64_t bytes);
/* Append b to w's batches (w->lock held). */
void sl_exec_queue_batch_locked(worker *w, out_batch *b);

struct exec_shared {
  pthread_mutex_t lock; /* with cond: workers signal progress */
  pthread_cond_t cond;
  /* Every worker opens its source (pre-generating its input if asked to)
   * and then waits here, so the clock starts when all are ready. */
  int ready, expected;       /* under lock; cond broadcasts when they meet */
  double start_time;         /* set when the last one is ready */
  bool leaf_counted;         /* this run told its query_shared it is ready */
  query_shared *with_others; /* a staged run's leaf: its query's, or NULL */
  /* Counts the workers' signals (sl_exec_signal, under lock): the
   * coordinator looks at the workers without the lock, and a signal sent
   * meanwhile must not leave it waiting out its timeout. */
  uint64_t signals;
};

extern void *sl_worker_main(void *arg);
/* op_keep_extremes.c: the gate (jit.h, sl_jit_gate) of a stream leaf's
 * compiled loop under plan->keep_extremes; its state is the worker's
 * worker_state. */
int32_t sl_worker_extremes_gate(void *worker, int64_t value, int32_t value_null,
                                int64_t time, int32_t time_null);
/* and the offset of its quick answer (sl_jit_gate.bar_offset) */
extern const ptrdiff_t sl_worker_extremes_bar;

/* Setting a query up (query_setup.c), before its workers start: the
 * lookup join's table, layouts and programs; then the JIT's functions
 * (without them the query runs interpreted, and q->jit.status says why;
 * an error only under 'sluice.jit' = 'require'; shell may be NULL). */
int sl_exec_prepare(exec_query *q, sl_error *err);
int sl_exec_prepare_jit(exec_query *q, const sl_run_config *config,
                        sl_result_sink *shell, sl_error *err);
/* The exchange's channels, q->exchange.channels (xn x xn; exchange_open.c). */
int sl_exec_open_exchange(exec_query *q, const sl_exec_nodes *nodes,
                          sl_error *err);
/* Destroy the exchange's channels (after the query; exchange_open.c). */
void sl_exec_close_exchange(exec_exchange_state *x);
/* Free the lookup join's table and take it off the memory account (NULL:
 * none); after the query (query_setup.c). */
void sl_exec_free_lookup_table(exec_lookup_state *lk,
                               sl_memory_account *memory);

/* A node's stage results to the coordinator (the distribution's
 * sink_to_coordinator, distribution.h): the sink's arg says where. */
typedef struct sl_sink_to_coordinator_arg {
  sl_frame_out out;
  uint32_t buffer_size;
} sl_sink_to_coordinator_arg;

/* Wake the coordinator (worker_queue.c). */
void sl_exec_signal(worker *w);

/* sl_execute with what it shares with the query's other executors in
 * this process (a staged run's, for all its leaves), or NULL: its own.
 * The caller enters run->cancel as the thread's cancel scope. */
int sl_exec_run(const sl_plan *plan, const sl_run *run, sl_result_sink *shell,
                query_shared *with_others, sl_query_stats *stats,
                sl_error *err);
/* An updating result's row layout (changelog.h): the op column, then the
 * n columns; its names, op first, into *names_out (all in a). */
const sl_row_layout *sl_exec_changelog_layout(sl_arena *a, int n,
                                              const char *const *names,
                                              const sl_type *const *types,
                                              const char *const **names_out);
/* Field 0 of a row of such a layout := op. */
void sl_exec_set_op(const sl_row_layout *l, uint8_t *row, sl_changelog_op op);

/* "1.5 GiB" into buf. */

/* Evaluate progs[f] into field f of `out` for rows sel[0..n) of `in`,
 * appending rows to out (NULL progs leave their field zero).  Returns the
 * number of rows done (fewer than n when out is full, 0 if not even one
 * row fits) or a negative SL_E* error. */
int sl_exec_eval_rows(sl_expr_prog *const *progs, int nprogs,
                      const sl_buffer *in, const uint32_t *sel, uint32_t n,
                      sl_buffer *out, sl_expr_ctx *ctx, sl_error *err);

/* Result batches of a worker (worker_queue.c): one from its free list (or a
 * new one) with room for cap bytes, cleared; a finished one handed to
 * the coordinator; one given back unused. */
out_batch *sl_exec_take_batch(worker *w, uint32_t cap);
void sl_exec_publish_batch(worker *w, out_batch *b);
void sl_exec_return_batch(worker *w, out_batch *b);

/* After the query: free what worker w left in its queue, its session
 * store (off the memory account), its error and its locks
 * (worker_queue.c). */
void sl_exec_worker_free(worker *w);

/* A worker whose source is open waits for the others (worker_queue.c). */
void sl_exec_wait_ready(exec_shared *sh, query_shared *qs);

/* Window arithmetic (worker.c), exposed for the coordinator. */

/* Accepting the consumer ends of channels from other nodes on a thread of
 * its own while the caller connects its producer ends: every node does
 * both at once, so neither may wait for the other's first (exchange_open.c,
 * used by the exchange and by the partition leaders).  ends[i] is accepted
 * on listen_fd[i] (skipped where -1) with slots of slot_size bytes; it is
 * the channel from member i / width to member i % width (of per_node
 * members on each node), or from node i when width is 0: a failure names
 * them. */
typedef struct sl_accepting {
  const char *transport; /* "shm", "tcp" or "verbs" */
  int n;
  int width, per_node;
  const int *listen_fd;
  sl_channel **ends;
  uint32_t slot_size;
  const struct sl_secret *secret; /* the endpoints' (channel.h) */
  const sl_cancel *cancel;        /* the endpoints' (channel.h) */
  int rc;
  sl_error err;
  pthread_t thread;
  bool started;
} sl_accepting;

/* Start accepting; SL_EINTERNAL if the thread cannot start. */
int sl_accepting_start(sl_accepting *a, const char *what, sl_error *err);
/* Wait for the accepts (each ends by itself at the endpoint's timeout if
 * its peer never comes); returns rc, or the accepts' error if rc is
 * SL_OK. */
int sl_accepting_join(sl_accepting *a, int rc, sl_error *err);
/* Say which channel failed: "the channel from worker 3 (node 3) to worker
 * 1 (node 1): <err's message>" (per_node workers on a node; the workers
 * are the nodes when per_node is 0).  Returns rc. */
int sl_channel_failed(sl_error *err, int rc, int from, int to, int per_node);

/* A plan of constant rows (exec/constant_rows.c). */
int sl_execute_constant(const sl_plan *plan, sl_result_sink *shell,
                        sl_query_stats *stats, sl_error *err);

#endif
