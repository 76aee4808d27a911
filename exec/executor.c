/* executor.c - run a query: compile a plan, open its sink, start the
 * workers, and coordinate them in rounds until they are done (sl_exec_run
 * and its phases).  Each round calls the operators' coordinator sides:
 * op_window_aggregate.c, op_session_windows.c, result_output.c (the
 * coordinator's state: coordinator_int.h).  See executor.h for the model,
 * worker.c for the per-record path and worker_queue.c for what the
 * workers hand over. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coordinator_int.h"
#include "late_output.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"

/* ---- shared helpers ---------------------------------------------------- */

int sl_exec_eval_rows(sl_expr_prog *const *progs, int nprogs,
                      const sl_buffer *in, const uint32_t *sel, uint32_t n,
                      sl_buffer *out, sl_expr_ctx *ctx, sl_error *err) {
  uint32_t width = out->layout->width;
  uint32_t room = (out->cap - out->heap_used) / width;
  room = room > out->nrows ? room - out->nrows : 0;
  uint32_t k = n < room ? n : room;
  while (k > 0) {
    uint32_t first = out->nrows;
    memset(out->data + (size_t)first * width, 0, (size_t)k * width);
    out->nrows += k;
    uint32_t heap_before = out->heap_used;
    int rc = SL_OK;
    /* one instant for the whole select list (CURRENT_TIMESTAMP = NOW()) */
    sl_expr_ctx_pin_now(ctx);
    for (int f = 0; f < nprogs && rc == SL_OK; f++)
      if (progs[f])
        rc = sl_expr_eval_into(progs[f], in, sel, k, out, first, f, ctx, err);
    sl_expr_ctx_unpin_now(ctx);
    if (rc == SL_OK)
      return (int)k;
    out->nrows = first;
    out->heap_used = heap_before;
    if (rc != SL_EXPR_HEAP_FULL)
      return rc < 0 ? rc : SL_EINTERNAL;
    k /= 2; /* long strings did not fit: try fewer rows */
  }
  return 0;
}

/* Free what set_up_query made. */
static void free_query(exec_query *q) {
  /* Called after every group table of the query is freed. */
  sl_slot_pool_free(q->agg.slot_pool);
  sl_jit_free(q->jit.handle);
  sl_exec_close_exchange(&q->exchange);
  sl_exec_free_lookup_table(&q->lookup, q->memory);
  sl_query_shared_close(&q->own_shared);
  sl_arena_free(&q->arena);
}

int sl_execute(const sl_plan *plan, const sl_run *run, sl_result_sink *shell,
               sl_query_stats *stats, sl_error *err) {
  /* What this thread compiles for the plan (expressions, the JIT) stops on
   * the run's token, whoever called. */
  const sl_cancel *outer = sl_cancel_scope_enter(run->cancel);
  int rc = plan->kind == SL_PLAN_STAGED
               ? sl_execute_staged(plan, run, NULL, shell, stats, err)
               : sl_exec_run(plan, run, shell, NULL, stats, err);
  sl_cancel_scope_leave(outer);
  return rc;
}

void sl_query_shared_init(query_shared *sh, const sl_run_config *config) {
  sl_memory_account_init(&sh->memory, config->memory_limit);
  atomic_init(&sh->wm_max, WM_MIN);
  pthread_mutex_init(&sh->ready_lock, NULL);
  pthread_cond_init(&sh->ready_cond, NULL);
  sh->leaves_pending = 0;
  sh->abandoned = false;
  sh->start_time = 0;
  sh->nodes_ready_time = 0;
}

void sl_query_shared_close(query_shared *sh) {
  sl_memory_account_close(&sh->memory);
  pthread_mutex_destroy(&sh->ready_lock);
  pthread_cond_destroy(&sh->ready_cond);
}

/* ---- sl_exec_run's phases --------------------------------------------------
 */

/* One query's run in this process: what sl_exec_run's phases share. */
typedef struct exec_run {
  /* sl_exec_run's arguments; shell is NULL on a node that writes nothing
   * itself. */
  const sl_plan *plan;
  const sl_run_config *config;
  const sl_exec_nodes *nodes;
  const sl_cancel *token; /* stops the query (sl_run.cancel) */
  sl_result_sink *shell;
  query_shared *with_others;
  sl_query_stats *stats;
  sl_error *err;
  /* What this process is in the query (set_up_query). */
  bool coordinator_of_nodes, node;
  bool across;  /* a node repartitioning with the other nodes */
  bool leaders; /* a node under late merge at partition leaders */
  /* The coordinator of nodes that repartition between them: they own
   * disjoint, complete groups and finalize, and it only writes rows. */
  bool rows_from_nodes;
  bool fires; /* this process fires windows (else writes batches) */
  exec_query q;
  coordinator c;
  late_output late_own;
  sorted_result sorted;
  update_result updates;
  /* The workers (on the coordinator of a cluster the node links). */
  exec_shared shared;
  atomic_bool cancel;
  worker *ws;
  int started;
  double t0, t1; /* the workers started; the output finished */
  /* The round loop: rows from nodes that fire their windows are
   * committed once every node's watermark passed (the windows they fired
   * are whole), as sl_coord_fire_windows commits each window here (a
   * table shows it then). */
  int64_t committed_wm;
  uint64_t committed_rows;
  double cause_deadline; /* a node failed as a consequence: check_workers */
} exec_run;

/* The query's compiled parts (r->q), what this process is in it, and its
 * JIT; on an error nothing is left to free. */
static int set_up_query(exec_run *r) {
  const sl_plan *plan = r->plan;
  const sl_run_config *config = r->config;
  const sl_exec_nodes *nodes = r->nodes;
  bool node = r->node;
  exec_query *q = &r->q;
  memset(r->stats, 0, sizeof *r->stats);
  q->plan = plan;
  sl_arena_init(&q->arena, 0);
  q->buffer_size = config->buffer_size; /* at least 4 KiB (run_config.c) */
  q->nworkers = config->parallelism;
  if (q->nworkers < 1)
    q->nworkers = 1;
  q->source.base = node ? nodes->node_index * q->nworkers : 0;
  q->source.total = node ? nodes->node_count * q->nworkers : q->nworkers;
  r->across = node && nodes->exchange_between_nodes &&
              plan->kind == SL_PLAN_AGGREGATE &&
              plan->strategy == SL_STRATEGY_REPARTITION;
  /* Late merge with channels between nodes: partition leaders. */
  r->leaders = node && nodes->exchange_between_nodes &&
               plan->kind == SL_PLAN_AGGREGATE &&
               plan->strategy != SL_STRATEGY_REPARTITION && !plan->changelog;
  q->exchange.delay_us = config->exchange_delay_us;
  q->exchange.xbase = r->across ? q->source.base : 0;
  q->exchange.xn = r->across ? q->source.total : q->nworkers;
  if (r->leaders || plan->changelog) {
    /* sluice.epoch-size is per node: each worker ends its epochs after
     * its share of it. */
    int64_t e = config->epoch_size;
    q->epoch.bytes = e > 0 ? (uint64_t)e / (uint64_t)q->nworkers : 0;
    if (e > 0 && q->epoch.bytes == 0)
      q->epoch.bytes = 1;
  }
  if (plan->changelog) {
    q->epoch.seconds = config->mini_batch_latency;
    int64_t rows = config->mini_batch_rows;
    q->epoch.rows = rows > 0 ? (uint64_t)rows : 0;
    if (!q->epoch.bytes)
      q->epoch.bytes = UINT64_MAX;
  }
  sl_query_shared_init(&q->own_shared, config);
  q->shared = r->with_others ? r->with_others : &q->own_shared;
  q->memory = &q->shared->memory;
  q->source.idle_timeout = (double)plan->idle_timeout_us / 1e6;
  /* Up to 256 MiB of freed group-table slots stay for the next windows. */
  q->agg.slot_pool = sl_slot_pool_new((size_t)256 << 20);
  sl_slot_pool_set_budget(q->agg.slot_pool, q->memory);
  int rc = sl_exec_prepare(q, r->err);
  if (rc == SL_OK && plan->kind == SL_PLAN_AGGREGATE &&
      plan->strategy == SL_STRATEGY_REPARTITION && q->exchange.xn > 1 &&
      !r->coordinator_of_nodes)
    rc = sl_exec_open_exchange(q, nodes, r->err);
  /* The coordinator of nodes runs no pipeline: the nodes compile theirs
   * (and report it), and compiling here would only take CPU from them. */
  if (rc == SL_OK && !r->coordinator_of_nodes)
    /* An error: 'sluice.jit' = 'require' and LLVM failed. */
    rc = sl_exec_prepare_jit(q, config, r->shell, r->err);
  if (rc != SL_OK) {
    free_query(q);
    return rc;
  }
  r->stats->jit_seconds = q->jit.seconds;
  snprintf(r->stats->jit_status, sizeof r->stats->jit_status, "%s",
           q->jit.status ? q->jit.status : "");
  return SL_OK;
}

/* The coordinator (r->c) and the sink it writes to; on an error nothing
 * is left to free. */
static int open_sink(exec_run *r) {
  const sl_plan *plan = r->plan;
  const sl_exec_nodes *nodes = r->nodes;
  bool node = r->node;
  exec_query *q = &r->q;
  coordinator *c = &r->c;
  c->q = q;
  c->err = r->err;
  c->sc = plan->sink;
  c->dist = nodes ? nodes->dist : NULL;
  c->export.fd = node ? nodes->coordinator_fd : -1;
  c->export.lock = node ? nodes->coordinator_lock : NULL;
  c->export.credit = node ? nodes->coordinator_credit : NULL;
  c->rows_here = node && nodes->rows_to_sink;
  c->of_nodes = r->coordinator_of_nodes;
  c->export_partials = node && !r->across && !r->leaders;
  c->exported_wm = WM_MIN;
  c->rows_wm = WM_MIN;
  if (node && !c->rows_here) {
    /* A node writes nothing itself: the coordinator has the sink. */
    c->sc = sl_sink_connector_find("blackhole");
    r->shell = NULL;
  }
  /* After the sink is chosen: a node's blackhole asks for nothing. */
  c->wm_each_window = c->sc->watermark && c->sc->watermark_each_window;
  sl_sink_spec spec = {c->sc != plan->sink ? NULL : plan->sink_table,
                       q->out_layout,
                       q->out_names,
                       r->shell,
                       plan->sink_arg,
                       plan->changelog,
                       plan->sink_overwrite,
                       plan->sink_unbounded};
  int rc = c->sc->open(&spec, &c->sink, r->err);
  if (rc != SL_OK)
    free_query(q);
  return rc;
}

/* Late records to their table: a staged plan's leaves share the stage
 * runner's output, a plan on its own opens one.  On an error nothing is
 * left to free. */
static int open_late_output(exec_run *r) {
  const sl_plan *plan = r->plan;
  exec_query *q = &r->q;
  if (plan->late_table && plan->late_arg) {
    q->late.output = plan->late_arg;
  } else if (plan->late_table && r->node) {
    /* A node's late records go to the coordinator, which writes them. */
    late_output_open_export(&r->late_own, &r->c.export, r->c.dist,
                            plan->late_table->name);
    q->late.output = &r->late_own;
    q->late.owned = true;
  } else if (plan->late_table) {
    int rc = late_output_open(&r->late_own, plan, &q->arena, r->err);
    if (rc != SL_OK) {
      sl_error ignored = {0};
      r->c.sc->close(r->c.sink, false, &ignored);
      sl_error_clear(&ignored);
      free_query(q);
      return rc;
    }
    q->late.output = &r->late_own;
    q->late.owned = true;
  }
  return SL_OK;
}

/* What the coordinator's operators keep: merged sessions, result and
 * aggregate rows, ORDER BY's rows, an updating result's groups. */
static void set_up_coordinator(exec_run *r) {
  const sl_plan *plan = r->plan;
  exec_query *q = &r->q;
  coordinator *c = &r->c;
  c->ctx = sl_expr_ctx_new();
  if (plan->kind == SL_PLAN_AGGREGATE && plan->windowed &&
      plan->window.kind == SL_WINDOW_SESSION) {
    c->sessions = malloc(sizeof *c->sessions);
    if (!c->sessions)
      abort();
    session_store_init(c->sessions, q->agg.key_layout, &q->agg.aggs);
    c->sessions->reuse_closed = true; /* emit_session copies what it reads */
    c->session_cap = WM_MIN;
  }
  sl_buffer_init(&c->out_rows, q->out_layout, q->buffer_size);
  if (plan->norder > 0 && !r->node) {
    sorted_result_init(&r->sorted, q->out_layout, q->buffer_size);
    c->sorted = &r->sorted;
  }
  if (plan->changelog && r->fires && !c->export_partials) {
    update_result_init(&r->updates, q, q->buffer_size, r->config->state_ttl);
    c->updates = &r->updates;
  }
  if (q->agg.agg_layout) {
    sl_buffer_init(&c->agg_rows, q->agg.agg_layout, q->buffer_size);
    c->sel = malloc(sizeof(uint32_t) *
                    (q->buffer_size / q->agg.agg_layout->width + 1));
    if (!c->sel)
      abort();
  }
}

/* Start the worker threads (on the coordinator of a cluster the nodes are
 * the workers: a thread per node turns its messages into what a worker
 * publishes); r->started of them did. */
static int start_workers(exec_run *r) {
  const sl_exec_nodes *nodes = r->nodes;
  bool coordinator_of_nodes = r->coordinator_of_nodes;
  exec_shared *shared = &r->shared;
  pthread_mutex_init(&shared->lock, NULL);
  pthread_cond_init(&shared->cond, NULL);
  int nthreads = coordinator_of_nodes ? nodes->nnodes : r->q.nworkers;
  shared->ready = 0;
  shared->expected = nthreads; /* node links count their node's READY */
  shared->start_time = 0;      /* when every worker (node) is ready */
  atomic_init(&r->cancel, false);
  worker *ws = r->ws = calloc((size_t)nthreads, sizeof(worker));
  if (!ws)
    abort();
  r->t0 = sl_clock_seconds();
  int rc = SL_OK;
  if (r->leaders)
    rc = r->c.dist->leaders_open(&r->q, nodes, shared, &r->c.leaders, r->err);
  int started = 0;
  for (int i = 0; i < nthreads && rc == SL_OK; i++) {
    ws[i].index = i;
    ws[i].node_fd = coordinator_of_nodes ? nodes->fds[i] : -1;
    ws[i].q = &r->q;
    ws[i].shared = shared;
    ws[i].cancel = &r->cancel;
    ws[i].published_wm = WM_MIN;
    ws[i].min_open_start = WM_MAX;
    pthread_mutex_init(&ws[i].lock, NULL);
    pthread_cond_init(&ws[i].drained, NULL);
    pthread_mutex_init(&ws[i].send_lock, NULL);
    if (pthread_create(&ws[i].thread, NULL,
                       coordinator_of_nodes ? r->c.dist->link_main
                                            : sl_worker_main,
                       &ws[i]) != 0) {
      rc = sl_error_set(r->err, SL_EINTERNAL, "cannot start worker thread %d",
                        i);
      atomic_store(&r->cancel, true);
      break;
    }
    started++;
  }
  r->started = started;
  if (!coordinator_of_nodes && started < r->q.nworkers) {
    pthread_mutex_lock(&shared->lock);
    shared->expected = started;
    if (shared->ready >= started && shared->start_time == 0)
      shared->start_time = sl_clock_seconds(); /* nobody else will */
    pthread_cond_broadcast(&shared->cond);
    pthread_mutex_unlock(&shared->lock);
  }
  return rc;
}

/* One round of the operators: fire what the workers' watermarks allow (or
 * write their batches), then tell the sink, the coordinator and the late
 * records' table how far that got. */
static int run_operators(exec_run *r, bool *progress) {
  const sl_plan *plan = r->plan;
  coordinator *c = &r->c;
  worker *ws = r->ws;
  int started = r->started;
  sl_error *err = r->err;
  /* A sink feeding another stage learns how far the rows are complete:
   * the watermark read before this round's windows and batches. */
  int64_t round_wm =
      c->sc->watermark ? sl_coord_workers_watermark(ws, started) : 0;
  /* A node sending rows tells the coordinator the same, after them: a
   * leader how far its vector clock had fired windows. */
  bool partials = c->export_partials && plan->kind == SL_PLAN_AGGREGATE;
  int64_t rows_wm = !r->node || partials ? WM_MIN
                    : c->leaders         ? c->dist->leaders_clock(c->leaders)
                                 : sl_coord_workers_watermark(ws, started);
  int64_t nodes_wm =
      r->rows_from_nodes ? sl_coord_workers_watermark(ws, started) : 0;
  int rc = c->leaders ? sl_coord_leaders_round(c, ws, started, progress)
           : r->fires ? sl_coord_fire_windows(c, ws, started, progress)
                      : sl_coord_drain_batches(c, ws, started, progress);
  if (rc == SL_OK && r->rows_from_nodes && nodes_wm > r->committed_wm &&
      c->rows_out > r->committed_rows && c->sc->commit) {
    rc = sl_coord_flush_out(c);
    if (rc == SL_OK)
      rc = c->sc->commit(c->sink, err);
    r->committed_wm = nodes_wm;
    r->committed_rows = c->rows_out;
  }
  if (c->sessions) {
    round_wm = round_wm < c->session_cap ? round_wm : c->session_cap;
    rows_wm = rows_wm < c->session_cap ? rows_wm : c->session_cap;
  }
  if (rc == SL_OK && c->sc->watermark)
    rc = c->sc->watermark(c->sink, c->rows_here ? rows_wm : round_wm, err);
  if (rc == SL_OK && !c->rows_here && rows_wm > c->rows_wm &&
      rows_wm != WM_MAX) {
    rc = c->dist->send_wm(&c->export, rows_wm, err);
    c->rows_wm = rows_wm; /* WM_MAX: the node's DONE says so */
  }
  /* Late records written this round are committed with it. */
  if (rc == SL_OK && r->q.late.output)
    rc = late_output_commit(r->q.late.output, err);
  return rc;
}

/* Whether every worker is done (*all_done), and the error of one that
 * failed, into r->err. */
static int check_workers(exec_run *r, bool *all_done) {
  coordinator *c = &r->c;
  worker *ws = r->ws;
  int rc = SL_OK;
  *all_done = true;
  int failed = -1, broken = -1;
  for (int i = 0; i < r->started; i++) {
    pthread_mutex_lock(&ws[i].lock);
    *all_done &= ws[i].done;
    /* Once LIMIT has its rows the workers are cancelled: one stopped in
     * the exchange (waiting for a credit) says SL_ECANCELLED, and the
     * workers it aborted its channels for say so too.  That is the stop
     * we asked for, not an error (it failed the query now and then). */
    bool stopped = c->limit_reached && ws[i].rc == SL_ECANCELLED;
    if (ws[i].done && ws[i].rc != SL_OK && !stopped) {
      /* A worker or node whose channel from a failed one broke says
       * SL_ECANCELLED: a consequence, which may reach us first. */
      if (ws[i].rc == SL_ECANCELLED) {
        if (broken < 0)
          broken = i;
      } else if (failed < 0)
        failed = i;
    }
    pthread_mutex_unlock(&ws[i].lock);
  }
  if (failed < 0 && broken >= 0) {
    /* Wait for the cause: every node ends once one fails, and the one
     * that failed sends its error only once its workers have stopped and
     * its state is freed, which on a loaded host (or under a sanitizer)
     * took more than the 2 s once given, so the consequence was reported
     * instead.  A node not done after 30 s is itself stuck. */
    double now = sl_clock_seconds();
    if (r->cause_deadline == 0)
      r->cause_deadline = now + 30.0;
    if (*all_done || now >= r->cause_deadline)
      failed = broken;
  }
  if (failed >= 0) {
    pthread_mutex_lock(&ws[failed].lock);
    sl_error_move(r->err, &ws[failed].err);
    rc = ws[failed].rc;
    pthread_mutex_unlock(&ws[failed].lock);
    /* Every error says something, and keeps its code: a node's
     * SL_ECANCELLED must reach the coordinator as a consequence. */
    if (!r->err->message)
      sl_error_set(r->err, rc, "%s %d stopped",
                   r->coordinator_of_nodes ? "node" : "worker", failed);
  }
  return rc;
}

/* Every worker is done: one last pass over their final windows and
 * batches, an updating result's last changes, the final watermark. */
static int last_pass(exec_run *r, bool *progress) {
  const sl_plan *plan = r->plan;
  exec_query *q = &r->q;
  coordinator *c = &r->c;
  int rc = r->fires ? sl_coord_fire_windows(c, r->ws, r->started, progress)
                    : sl_coord_drain_batches(c, r->ws, r->started, progress);
  /* The row of a GROUP BY without keys over no input: written by the
   * process that owns the empty key (the only one, or under a
   * repartition between nodes the node whose worker owns it, as
   * worker.c routes). */
  uint8_t none[8] = {0};
  int owner = q->agg.key_layout && plan->nkeys == 0
                  ? (int)((sl_key_hash(q->agg.key_layout, none) >> 32) %
                          (uint64_t)q->exchange.xn)
                  : -1;
  bool mine = c->export.fd < 0 || (r->across && owner >= q->exchange.xbase &&
                                   owner < q->exchange.xbase + q->nworkers);
  if (rc == SL_OK && c->updates && mine) {
    rc = update_result_finish(c->updates, sl_coord_emit_changes, c, r->err);
    if (rc == SL_OK)
      rc = sl_coord_finish_window(c);
  }
  if (rc == SL_OK && c->sc->watermark)
    rc = c->sc->watermark(c->sink, WM_MAX, r->err);
  return rc;
}

/* Coordinate until every worker is done and everything is written (or
 * something failed, or the query is cancelled): the round loop. */
static int coordinate(exec_run *r, int rc) {
  const sl_plan *plan = r->plan;
  const sl_exec_nodes *nodes = r->nodes;
  bool node = r->node;
  sl_result_sink *shell = r->shell;
  sl_error *err = r->err;
  coordinator *c = &r->c;
  double start_clock = sl_clock_seconds(), next_progress = start_clock + 0.5;
  r->committed_wm = WM_MIN;
  bool ready_sent = false;
  while (rc == SL_OK) {
    pthread_mutex_lock(&r->shared.lock);
    uint64_t signals = r->shared.signals; /* what this round sees */
    pthread_mutex_unlock(&r->shared.lock);
    bool progress = false;
    rc = run_operators(r, &progress);
    if (rc != SL_OK)
      break;
    /* A partition leader that has its LIMIT still reads on: its workers'
     * state for the other partitions is what their leaders' rows are made
     * of (the shell cancels every node once it has its rows). */
    if (c->limit_reached && !c->leaders)
      atomic_store(&r->cancel, true);
    bool all_done;
    rc = check_workers(r, &all_done);
    if (rc != SL_OK)
      break;
    if (all_done && c->leaders) {
      /* A leader is done when every node (this one included, which the
       * round above told) has sent everything and every window of its
       * partition has fired; until then it waits for the others. */
      if (c->dist->leaders_finished(c->leaders))
        break;
    } else if (all_done) {
      rc = last_pass(r, &progress);
      break;
    }
    if (shell && shell->progress && sl_clock_seconds() >= next_progress) {
      sl_coord_report_progress(shell, r->ws, r->started, c, start_clock);
      next_progress = sl_clock_seconds() + 0.25;
    } else if (node && !c->rows_here && sl_clock_seconds() >= next_progress) {
      rc = sl_coord_send_progress(c, r->ws, r->started, err);
      next_progress = sl_clock_seconds() + 0.25;
      if (rc != SL_OK)
        break;
    }
    if (sl_cancel_pending(r->token) ||
        (node && sl_cancel_pending(nodes->cancel))) {
      rc = sl_error_set(err, SL_ECANCELLED, "query cancelled");
      break;
    }
    /* (A leaf whose rows stay here runs beside this process's stages,
     * which own the coordinator connection: another thread's frames
     * there would cut into theirs.) */
    if (node && !ready_sent && !c->rows_here) {
      pthread_mutex_lock(&r->shared.lock);
      bool ready = r->shared.start_time > 0;
      pthread_mutex_unlock(&r->shared.lock);
      if (ready) {
        rc = sl_frame_out_send(&c->export, SL_FRAME_READY, NULL, 0, NULL, 0,
                               err);
        ready_sent = true;
        if (rc != SL_OK)
          break;
      }
    }
    if (c->export_partials && plan->kind == SL_PLAN_AGGREGATE) {
      rc = sl_coord_export_watermark(c, r->ws, r->started);
      if (rc != SL_OK)
        break;
    }
    if (!progress) {
      struct timespec until = sl_clock_deadline_ms(20);
      pthread_mutex_lock(&r->shared.lock);
      if (r->shared.signals == signals)
        pthread_cond_timedwait(&r->shared.cond, &r->shared.lock, &until);
      pthread_mutex_unlock(&r->shared.lock);
    }
  }
  return rc;
}

/* Stop what still runs (on an error or once LIMIT has its rows) and wait
 * for every worker. */
static void stop_workers(exec_run *r, int rc) {
  coordinator *c = &r->c;
  exec_query *q = &r->q;
  if (r->shell && r->shell->progress)
    r->shell->progress(r->shell->ctx, NULL);
  if (rc != SL_OK && c->leaders)
    c->dist->leaders_abort(c->leaders);
  if (rc != SL_OK || c->limit_reached) {
    atomic_store(&r->cancel, true);
    if (q->exchange.channels)
      for (int i = 0; i < q->exchange.xn * q->exchange.xn; i++)
        if (q->exchange.channels[i])
          sl_channel_abort(q->exchange.channels[i], SL_ECANCELLED);
  }
  for (int i = 0; i < r->started; i++)
    pthread_join(r->ws[i].thread, NULL);
  if (c->leaders) {
    c->dist->leaders_counts(c->leaders, &r->stats->epochs_sent,
                            &r->stats->state_moved);
    c->dist->leaders_close(c->leaders);
    c->leaders = NULL;
  }
}

/* The last rows (ORDER BY's, sorted now that the input has ended), the
 * last commit, and the sink and late records' table closed. */
static int finish_output(exec_run *r, int rc) {
  coordinator *c = &r->c;
  exec_query *q = &r->q;
  sl_error *err = r->err;
  if (rc == SL_OK)
    rc = sl_coord_flush_out(c);
  if (c->sorted) {
    double s0 = sl_clock_seconds();
    if (rc == SL_OK)
      rc = sorted_result_emit(c->sorted, r->plan->order, r->plan->norder,
                              sl_coord_write_sorted, c, &c->limit_reached, err);
    sorted_result_free(c->sorted);
    c->sorted = NULL;
    c->emit_seconds += sl_clock_seconds() - s0;
  }
  r->t1 = sl_clock_seconds();
  if (rc == SL_OK && c->sc->commit)
    rc = c->sc->commit(c->sink, err);
  rc = sl_sink_close_after(c->sc, c->sink, rc, err);
  if (q->late.owned) {
    r->stats->late_written = q->late.output->written;
    rc = late_output_close(q->late.output, rc, err);
  }
  return rc;
}

/* The query's statistics: the coordinator's, then every worker's (or
 * node's). */
static void collect_stats(exec_run *r) {
  sl_query_stats *stats = r->stats;
  const coordinator *c = &r->c;
  worker *ws = r->ws;
  stats->workers = r->q.nworkers;
  /* From the moment every source was open (pre-generated input ready). */
  pthread_mutex_lock(&r->shared.lock);
  double start = r->shared.start_time > 0 ? r->shared.start_time : r->t0;
  pthread_mutex_unlock(&r->shared.lock);
  stats->seconds = r->t1 - start;
  stats->started_at = start;
  stats->rows_out = c->rows_out;
  stats->windows_fired = c->windows;
  stats->groups_emitted = c->groups;
  stats->merge_seconds = c->merge_seconds;
  stats->emit_seconds = c->emit_seconds;
  stats->table_rows = r->q.lookup.table_nrows;
  stats->table_probe = r->q.lookup.table_direct   ? 2
                       : r->q.lookup.table_unique ? 1
                                                  : 0;
  for (int i = 0; i < r->started; i++) {
    stats->events += atomic_load(&ws[i].events);
    if (ws[i].open_seconds > stats->open_seconds)
      stats->open_seconds = ws[i].open_seconds;
    stats->rows_filtered += ws[i].rows_filtered;
    stats->rows_not_kept += ws[i].rows_not_kept;
    stats->rows_joined += ws[i].rows_joined;
    stats->rows_state += ws[i].rows_state;
    stats->jit_buffers += ws[i].jit_buffers;
    stats->jit_rows += ws[i].jit_rows;
    stats->jit_back_buffers += ws[i].jit_back_buffers;
    stats->jit_back_rows += ws[i].jit_back_rows;
    stats->jit_fold_rows_c += ws[i].jit_fold_rows_c;
    if (ws[i].state_bytes_peak > stats->state_bytes_peak)
      stats->state_bytes_peak = ws[i].state_bytes_peak;
    stats->source_seconds += ws[i].source_seconds;
    stats->pipeline_seconds += ws[i].pipeline_seconds;
    stats->late_dropped += ws[i].late;
    stats->skipped_rows += ws[i].skipped;
    stats->input_bytes += ws[i].input_bytes;
    if (r->rows_from_nodes) { /* the nodes fired and finalized */
      if (ws[i].windows_fired > stats->windows_fired)
        stats->windows_fired = ws[i].windows_fired;
      stats->groups_emitted += ws[i].groups_emitted;
    }
    if (r->coordinator_of_nodes) { /* the slowest node's compile */
      if (ws[i].jit_seconds > stats->jit_seconds)
        stats->jit_seconds = ws[i].jit_seconds;
      if (!stats->jit_status[0]) /* any node that ran interpreted */
        snprintf(stats->jit_status, sizeof stats->jit_status, "%s",
                 ws[i].jit_status);
    }
    stats->exchange_rows += ws[i].exchange_rows;
    stats->exchange_bytes += ws[i].exchange_bytes;
    stats->exchange_slots += ws[i].exchange_slots;
    stats->epochs_sent += ws[i].epochs_sent;
    stats->state_moved += ws[i].state_moved;
  }
}

/* Free the workers, the coordinator's state and the query. */
static void tear_down(exec_run *r) {
  exec_query *q = &r->q;
  coordinator *c = &r->c;
  for (int i = 0; i < r->started; i++)
    sl_exec_worker_free(&r->ws[i]);
  free(r->ws);
  pthread_mutex_destroy(&r->shared.lock);
  pthread_cond_destroy(&r->shared.cond);
  sl_buffer_free(&c->out_rows);
  if (q->agg.agg_layout)
    sl_buffer_free(&c->agg_rows);
  free(c->sel);
  if (c->sessions) {
    sl_memory_charge(q->memory, &c->sessions_charged, 0);
    session_store_free(c->sessions);
    free(c->sessions);
  }
  if (c->updates)
    update_result_free(c->updates);
  sl_expr_ctx_free(c->ctx);
  free_query(q);
}

int sl_exec_run(const sl_plan *plan, const sl_run *run, sl_result_sink *shell,
                query_shared *with_others, sl_query_stats *stats,
                sl_error *err) {
  const sl_exec_nodes *nodes = run->nodes;
  bool coordinator_of_nodes = nodes && nodes->nnodes > 0;
  /* A staged run's leaf that waits for nothing here: ready at once. */
  if (with_others && (plan->kind == SL_PLAN_CONSTANT || coordinator_of_nodes))
    sl_query_leaf_ready(with_others, false);
  if (plan->kind == SL_PLAN_CONSTANT)
    return sl_execute_constant(plan, shell, stats, err);
  bool node = nodes && nodes->node_count > 0;
  if ((coordinator_of_nodes || node) && !nodes->dist)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: a query on nodes without the "
                        "cluster's distribution (sl_exec_nodes.dist)");
  if ((coordinator_of_nodes || node) && sl_plan_sessions_on_one_process(plan))
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "not supported yet: session windows on several "
                        "nodes (SET 'sluice.nodes' = '1')");
  exec_run r;
  memset(&r, 0, sizeof r);
  r.plan = plan;
  r.config = run->config;
  r.nodes = nodes;
  r.token = run->cancel;
  r.shell = shell;
  r.with_others = with_others;
  r.stats = stats;
  r.err = err;
  r.coordinator_of_nodes = coordinator_of_nodes;
  r.node = node;
  r.rows_from_nodes = coordinator_of_nodes && nodes->exchange_between_nodes;
  r.fires = plan->kind == SL_PLAN_AGGREGATE && !r.rows_from_nodes;
  /* Counted already (above), or by its last worker when ready; a leaf
   * that fails before that still counts, so no other waits for it. */
  r.shared.leaf_counted = coordinator_of_nodes;
  r.shared.with_others = with_others;
  int rc = set_up_query(&r);
  if (rc == SL_OK)
    rc = open_sink(&r);
  if (rc == SL_OK)
    rc = open_late_output(&r);
  if (rc != SL_OK) {
    if (with_others)
      sl_query_leaf_ready(with_others, false);
    return rc; /* each freed what it had to */
  }
  set_up_coordinator(&r);
  rc = start_workers(&r);
  rc = coordinate(&r, rc);
  stop_workers(&r, rc);
  if (with_others && !r.shared.leaf_counted)
    sl_query_leaf_ready(with_others, false);
  rc = finish_output(&r, rc);
  collect_stats(&r);
  tear_down(&r);
  return rc;
}
