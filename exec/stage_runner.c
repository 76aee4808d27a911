/* stage_runner.c - running a staged plan (plan.h, "multi-stage plans").
 *
 * Each leaf is a single-stage plan run by its own executor (sl_exec_run,
 * on its own thread, with its own workers and strategy, or coordinating
 * the nodes that run it) whose sink is a *stage sink* (stage_sink.c): it
 * puts the leaf's result rows into the leaf's store, keyed by window end
 * (or, for a stream leaf, by time bucket), and learns through the sink's
 * watermark hook how far they are complete.  This thread fires
 * a window once every leaf has passed it: every windowed leaf's watermark
 * has reached the window's end (less one time unit, as windows fire), and
 * every stream leaf's has reached the end of the interval the window
 * needs.  It evaluates the stage tree over that window's rows
 * (stage_eval.c; joins probe in parts on stage_pool.c's threads, the
 * expressions compiled by stage_jit.c) over a snapshot of the stores,
 * the leaves adding later rows meanwhile, writes the result rows to the
 * query's sink (OFFSET and LIMIT applied, one commit per window) and
 * frees the window's rows.
 * Stream rows are kept until no later window can need them; a stream row
 * that arrives after that is late: dropped and counted.
 *
 * Windows fire in order of their end.  The leaves re-read their sources
 * (a leaf is a whole pipeline); sharing one scan between leaves is not
 * done yet.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "distribution.h"
#include "executor_int.h"
#include "late_output.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/exec/executor.h"
#include "sluice/session/changelog.h"
#include "sluice/state/window_assign.h"
#include "stage_int.h"
#include "updating_stages.h"

typedef struct leaf_thread {
  stage_runner *run;
  int index;
  const sl_plan *plan;
  sl_run exec;         /* its nodes: the ones it runs on, or NULL: here */
  sl_stage_feed *feed; /* or where its rows come from */
  pthread_t thread;
  bool started, finished;
  int rc;
  sl_error err;
  sl_query_stats stats;
} leaf_thread;

/* Does the stage tree under st hold a stage of kind k? */
static bool has_stage(const sl_stage *st, sl_stage_kind k) {
  for (; st; st = st->input) {
    if (st->kind == k)
      return true;
    if (st->kind == SL_STAGE_JOIN)
      return has_stage(st->left, k) || has_stage(st->right, k);
  }
  return false;
}

/* Who the leaves' rows wait for, as the memory-limit error names them. */
static const char *rows_holder(const sl_stage *top) {
  if (has_stage(top, SL_STAGE_JOIN))
    return "the join's stages hold";
  if (has_stage(top, SL_STAGE_TOPN))
    return "the windowed Top-N holds";
  return "the windowed stages hold";
}

void stage_stats_add_work(sl_query_stats *t, const sl_query_stats *s) {
  t->rows_filtered += s->rows_filtered;
  t->rows_state += s->rows_state;
  t->late_dropped += s->late_dropped;
  t->late_written += s->late_written;
  t->windows_fired += s->windows_fired;
  t->groups_emitted += s->groups_emitted;
  t->source_seconds += s->source_seconds;
  if (s->open_seconds > t->open_seconds) /* the leaves open side by side */
    t->open_seconds = s->open_seconds;
  t->pipeline_seconds += s->pipeline_seconds;
  t->merge_seconds += s->merge_seconds;
  t->emit_seconds += s->emit_seconds;
  t->jit_seconds += s->jit_seconds;
  t->jit_buffers += s->jit_buffers;
  t->jit_rows += s->jit_rows;
  t->jit_back_buffers += s->jit_back_buffers;
  t->jit_back_rows += s->jit_back_rows;
  t->jit_fold_rows_c += s->jit_fold_rows_c;
  t->exchange_rows += s->exchange_rows;
  t->rows_not_kept += s->rows_not_kept;
  t->exchange_bytes += s->exchange_bytes;
  t->input_bytes += s->input_bytes; /* each leaf holds its own input */
  if (s->state_bytes_peak > t->state_bytes_peak)
    t->state_bytes_peak = s->state_bytes_peak;
  if (s->jit_status[0] && !t->jit_status[0])
    memcpy(t->jit_status, s->jit_status, sizeof t->jit_status);
}

/* The table leaf k reads its stream from, or NULL. */
static const sl_table_def *leaf_table(const sl_staged_plan *sp, int k) {
  const sl_plan *lp = sp->leaves[k];
  return lp && lp->ninputs > 0 ? lp->inputs[0].table : NULL;
}

static bool same_table(const sl_table_def *a, const sl_table_def *b) {
  return a && b && (a == b || strcmp(a->name, b->name) == 0);
}

uint64_t stage_events_of_leaves(const sl_staged_plan *sp,
                                const uint64_t *events) {
  uint64_t total = 0;
  for (int k = 0; k < sp->nleaves; k++) {
    const sl_table_def *t = leaf_table(sp, k);
    bool first = true; /* the first leaf over its table counts for all */
    uint64_t most = events[k];
    for (int j = 0; j < sp->nleaves; j++) {
      if (j == k || !same_table(t, leaf_table(sp, j)))
        continue;
      first &= j > k;
      if (events[j] > most)
        most = events[j];
    }
    if (first)
      total += most;
  }
  return total;
}

/* ---- leaves ----------------------------------------------------------------
 */

/* A leaf fed from outside (a join's side, over links): what the feed brings
 * into the leaf's stage sink, as an executor would write it. */
static int feed_leaf(leaf_thread *lt) {
  leaf_store *ls = &lt->run->leaves[lt->index];
  sl_sink_spec spec = {NULL, ls->in_layout, NULL,  NULL,
                       ls,   false,         false, false};
  sl_sink *sink;
  int rc = stage_sink_open(&spec, &sink, &lt->err);
  if (rc != SL_OK)
    return rc;
  sl_buffer rows;
  memset(&rows, 0, sizeof rows);
  for (;;) {
    int64_t wm = 0;
    int k =
        sl_stage_feed_take(lt->feed, 50, &rows, ls->in_layout, &wm, &lt->err);
    if (k == SL_FEED_ROWS)
      rc = stage_sink_write(sink, &rows, &lt->err);
    else if (k == SL_FEED_WATERMARK)
      rc = stage_sink_watermark(sink, wm, &lt->err);
    else if (k == SL_FEED_CLOSED)
      rc = sl_error_set(&lt->err, SL_ECANCELLED, "stopped");
    else if (k != SL_FEED_NOTHING)
      rc = k;
    if (rc != SL_OK || (k == SL_FEED_WATERMARK && wm == WM_MAX))
      break;
    pthread_mutex_lock(&lt->run->lock);
    bool stop = lt->run->cancelled;
    pthread_mutex_unlock(&lt->run->lock);
    if (stop) {
      rc = sl_error_set(&lt->err, SL_ECANCELLED, "stopped");
      break;
    }
  }
  sl_buffer_free(&rows);
  stage_sink_close(sink, rc == SL_OK, NULL);
  return rc;
}

static void *leaf_main(void *arg) {
  leaf_thread *lt = arg;
  sl_cancel_scope_enter(lt->exec.cancel); /* a thread of the statement's */
  lt->rc = lt->feed ? feed_leaf(lt)
                    : sl_exec_run(lt->plan, &lt->exec, NULL, &lt->run->shared,
                                  &lt->stats, &lt->err);
  stage_runner *run = lt->run;
  pthread_mutex_lock(&run->lock);
  lt->finished = true;
  if (lt->rc == SL_OK) {
    run->leaves[lt->index].wm = WM_MAX;
    run->leaves[lt->index].done = true;
  }
  stage_runner_news(run);
  pthread_mutex_unlock(&run->lock);
  return NULL;
}

void stage_runner_news(stage_runner *run) {
  run->news++;
  pthread_cond_broadcast(&run->cond);
}

/* ---- firing ----------------------------------------------------------- */

/* The interval joins' reach: stream leaf i needs rows up to end + hi and
 * from end + lo for the window ending at end. */
static void stream_reach(const sl_stage *st, int64_t *lo, int64_t *hi,
                         int leaf) {
  if (!st)
    return;
  if (st->kind == SL_STAGE_JOIN) {
    const sl_stage *sside = st->left->stream    ? st->left
                            : st->right->stream ? st->right
                                                : NULL;
    if (sside && sside->kind == SL_STAGE_LEAF && sside->leaf == leaf) {
      *lo = st->lo_us;
      *hi = st->hi_us;
    }
  }
  stream_reach(st->input, lo, hi, leaf);
  stream_reach(st->left, lo, hi, leaf);
  stream_reach(st->right, lo, hi, leaf);
}

/* The LEAF stage that reads leaf i. */
static const sl_stage *leaf_stage(const sl_stage *st, int leaf) {
  if (!st)
    return NULL;
  if (st->kind == SL_STAGE_LEAF && st->leaf == leaf)
    return st;
  const sl_stage *f = leaf_stage(st->input, leaf);
  if (!f)
    f = leaf_stage(st->left, leaf);
  if (!f)
    f = leaf_stage(st->right, leaf);
  return f;
}

static int write_window(stage_output *o, const rel *r, sl_error *err) {
  int rc = SL_OK;
  for (int i = 0; i < r->n && rc == SL_OK && !o->limit_reached; i++)
    rc = stage_output_write(o, &r->bufs[i], err);
  if (rc == SL_OK)
    rc = stage_output_window_end(o, err);
  return rc;
}

/* ---- the run: leaves, output, the loop that fires windows, the end ------ */

/* One sl_execute_staged: what its phases share. */
typedef struct staged_query {
  const sl_plan *plan;
  const sl_run *ctx; /* the run's configuration, the cancel token */
  const sl_staged_plan *sp;
  const sl_staged_run *where;
  bool node; /* stages on a node: results to the coordinator */
  sl_query_stats *stats;
  sl_error *err;
  sl_arena arena;
  stage_runner run;
  leaf_thread *lts;
  int started;
  int64_t *lo, *hi; /* per stream leaf: the reach of its rows */
  int64_t unit;
  stage_rt *top;
  const sl_stage *top_stage;
  bool changelog;
  stage_output o;
  sorted_result sorted;
  sl_sink_to_coordinator_arg tc;
  update_output uo;
  update_stages *updates;
  int64_t *leaf_wm;
  late_output late;
  bool late_open;
  stage_eval ev;
  sl_jit *jit;     /* the stages' compiled expressions, or NULL */
  int64_t sent_wm; /* a node: the last watermark sent */
  bool sent_ready; /* a node: READY sent (its leaves are ready) */
} staged_query;

/* The runner's state, the stages' runtime tree. */
static int sq_init(staged_query *x, const sl_run_config *config) {
  const sl_staged_plan *sp = x->sp;
  stage_runner *run = &x->run;
  sl_arena_init(&x->arena, 0);
  pthread_mutex_init(&run->lock, NULL);
  pthread_cond_init(&run->cond, NULL);
  run->frontier = WM_MIN;
  run->nleaves = sp->nleaves;
  run->holder = rows_holder(sp->top);
  run->buffer_size = config->buffer_size;
  run->leaves = calloc((size_t)sp->nleaves, sizeof *run->leaves);
  x->lts = calloc((size_t)sp->nleaves, sizeof *x->lts);
  x->lo = calloc((size_t)sp->nleaves, sizeof *x->lo);
  x->hi = calloc((size_t)sp->nleaves, sizeof *x->hi);
  if (!run->leaves || !x->lts || !x->lo || !x->hi)
    abort();
  /* A node runs updating stages up to the stage one key partitions; the
   * coordinator runs the rest over their changes, which therefore always
   * carry their kinds (sl_staged_plan.spread_top). */
  const sl_stage *spread = x->node && sp->updating ? sp->spread_top : NULL;
  x->top_stage = spread ? spread : sp->top;
  x->changelog = x->plan->changelog || x->top_stage != sp->top;
  x->unit = sp->window.unit_us > 0 ? sp->window.unit_us : 1;
  int rc = stage_rt_build(&x->arena, x->top_stage, sp, &x->top, x->err);
  /* The stages' expressions compiled (stage_jit.c); updating stages are
   * evaluated elsewhere (updating_stages.c) and stay interpreted. */
  if (rc == SL_OK && !sp->updating)
    x->jit = stage_jit_build(x->top, config, x->stats->stage_jit_status,
                             sizeof x->stats->stage_jit_status);
  return rc;
}

/* The leaves' stores: each leaf's sink (stage_sink) fills its own. */
static void sq_leaf_stores(staged_query *x) {
  const sl_staged_plan *sp = x->sp;
  /* A stream leaf's rows are bucketed by the windows' slide (sessions:
   * their gap), so a window finds its interval in few buckets. */
  int64_t slide = sp->window.slide_us > 0 ? sp->window.slide_us
                  : sp->window.gap_us > 0 ? sp->window.gap_us
                                          : x->unit;
  for (int i = 0; i < sp->nleaves; i++) {
    sl_plan *lp = sp->leaves[i];
    leaf_store *ls = &x->run.leaves[i];
    ls->plan = lp;
    ls->run = &x->run;
    ls->in_layout =
        sl_row_layout_new(&x->arena, lp->nout, lp->out_names, lp->out_types);
    ls->layout = ls->in_layout;
    ls->wm = WM_MIN;
    ls->drop_below = WM_MIN;
    ls->window_rows = lp->window_rows;
    ls->live_field = lp->window_rows ? lp->nout - 1 : -1;
    ls->stream =
        !(lp->kind == SL_PLAN_AGGREGATE && lp->windowed) && !lp->window_rows;
    ls->arrival = sp->updating;
    ls->time_field = -1;
    for (int c = 0; c < lp->nout && (ls->stream || ls->window_rows); c++)
      if (lp->out_types[c]->time_attr == SL_TIME_ROWTIME) {
        ls->time_field = c;
        break;
      }
    if (ls->stream) {
      ls->extremes.x = sp->extremes ? sp->extremes[i] : NULL;
      ls->bucket_us = slide;
      stream_reach(sp->top, &x->lo[i], &x->hi[i], i);
      ls->hi_us = x->hi[i];
    }
    if (ls->window_rows) {
      const sl_stage *st = leaf_stage(sp->top, i);
      ls->layout =
          sl_row_layout_new(&x->arena, st->ncols, st->names, st->types);
      ls->window = lp->window;
    }
    lp->sink = &stage_sink;
    lp->sink_arg = ls;
    lp->sink_table = NULL;
  }
}

/* The output (the query's sink, or on a node the coordinator), the
 * updating stages, the late records' output. */
static int sq_open_output(staged_query *x, const sl_run_config *config,
                          sl_result_sink *shell, int rc) {
  const sl_plan *plan = x->plan;
  const sl_staged_plan *sp = x->sp;
  const sl_staged_run *where = x->where;
  bool node = x->node;
  stage_rt *top = x->top;
  uint32_t buffer_size = x->run.buffer_size;
  x->o = (stage_output){plan->sink,
                        NULL,
                        node ? 0 : plan->offset,
                        node ? -1 : plan->limit,
                        0,
                        0,
                        false,
                        plan->order,
                        plan->norder,
                        NULL,
                        NULL,
                        NULL,
                        0};
  if (plan->norder > 0 && !node && top) {
    sorted_result_init(&x->sorted, top->layout, buffer_size);
    x->o.sorted = &x->sorted;
    x->o.memory = &x->run.shared.memory;
  }
  x->tc = (sl_sink_to_coordinator_arg){
      node ? where->export : (sl_frame_out){-1, NULL, NULL}, buffer_size};
  if (node)
    x->o.sc = where->dist->sink_to_coordinator;
  /* Updating stages: rows as they arrive, a changelog's with its kind. */
  x->uo = (update_output){&x->o, x->changelog, {0}};
  sl_query_shared_init(&x->run.shared, config);
  /* The leaves run here start together (executor_int.h, query_shared). */
  for (int i = 0; i < sp->nleaves; i++)
    x->run.shared.leaves_pending += !(where && where->feeds && where->feeds[i]);
  x->leaf_wm = calloc((size_t)sp->nleaves + 1, sizeof *x->leaf_wm);
  if (!x->leaf_wm)
    abort();
  const sl_row_layout *out_layout = top ? top->layout : NULL;
  const char *const *out_names = x->top_stage->names;
  if (rc == SL_OK && sp->updating) {
    x->updates = update_stages_new(top, buffer_size, config->state_ttl,
                                   stage_write_updates, &x->uo);
    if (x->changelog) {
      out_layout = sl_exec_changelog_layout(&x->arena, top->layout->nfields,
                                            x->top_stage->names,
                                            x->top_stage->types, &out_names);
      sl_buffer_init(&x->uo.rows, out_layout, buffer_size);
    }
  }
  if (rc == SL_OK) {
    sl_sink_spec spec = {node ? NULL : plan->sink_table,
                         out_layout,
                         out_names,
                         shell,
                         node ? &x->tc : NULL,
                         x->changelog,
                         plan->sink_overwrite,
                         plan->sink_unbounded};
    rc = x->o.sc->open(&spec, &x->o.sink, x->err);
  }
  /* Late records: every leaf that routes them shares one output. */
  /* (A node's go to the coordinator, which writes them.) */
  if (rc == SL_OK)
    rc = late_output_open_leaves(&x->late, sp, node ? &where->export : NULL,
                                 node ? where->dist : NULL, &x->arena,
                                 &x->late_open, x->err);
  return rc;
}

/* A thread per leaf, running the leaf's plan into its store. */
static int sq_start_leaves(staged_query *x, const sl_run_config *config,
                           int rc) {
  const sl_staged_run *where = x->where;
  const sl_exec_nodes *const *leaf_nodes = where ? where->leaf_nodes : NULL;
  for (int i = 0; i < x->sp->nleaves && rc == SL_OK; i++) {
    leaf_thread *lt = &x->lts[i];
    lt->run = &x->run;
    lt->index = i;
    lt->plan = x->sp->leaves[i];
    lt->exec =
        (sl_run){config, x->ctx->cancel, leaf_nodes ? leaf_nodes[i] : NULL};
    lt->feed = where && where->feeds ? where->feeds[i] : NULL;
    if (pthread_create(&lt->thread, NULL, leaf_main, lt) != 0) {
      rc = sl_error_set(x->err, SL_EINTERNAL, "cannot start stage thread");
      break;
    }
    lt->started = true;
    x->started++;
  }
  return rc;
}

/* A leaf that failed fails the query; *all_done: every leaf ended. */
static int sq_leaf_failed(staged_query *x, bool *all_done) {
  *all_done = true;
  for (int i = 0; i < x->started; i++) {
    if (x->lts[i].finished && x->lts[i].rc != SL_OK) {
      sl_error_move(x->err, &x->lts[i].err);
      return x->lts[i].rc;
    }
    *all_done &= x->run.leaves[i].done;
  }
  return SL_OK;
}

/* How far every window is complete: frontier F, the largest end such
 * that every window ending at or before F may fire. */
static int64_t sq_frontier(const staged_query *x) {
  int64_t frontier = WM_MAX;
  for (int i = 0; i < x->sp->nleaves; i++) {
    const leaf_store *ls = &x->run.leaves[i];
    int64_t f = ls->wm == WM_MAX ? WM_MAX
                : ls->stream ? (ls->wm == WM_MIN ? WM_MIN : ls->wm - x->hi[i])
                             : (ls->wm == WM_MIN ? WM_MIN : ls->wm + x->unit);
    if (f < frontier)
      frontier = f;
  }
  return frontier;
}

/* Updating stages: every row that came, through the stages; the joins
 * swept by the leaves' watermarks; a round's end. */
static int sq_push_updates(staged_query *x, int rc) {
  const sl_staged_plan *sp = x->sp;
  sl_error *err = x->err;
  bool pushed = false;
  for (int i = 0; i < sp->nleaves && rc == SL_OK; i++) {
    leaf_store *ls = &x->run.leaves[i];
    while (ls->nkeys > 0 && rc == SL_OK) {
      sorted_result *rows = &ls->keys[0].rows;
      for (int b = 0; b < rows->nbufs && rc == SL_OK; b++)
        rc = update_stages_push_leaf(x->updates, i, &rows->bufs[b], err);
      pushed = true;
      drop_first_key(ls);
    }
  }
  for (int i = 0; i < sp->nleaves; i++)
    x->leaf_wm[i] = x->run.leaves[i].wm;
  update_stages_sweep(x->updates, x->leaf_wm);
  uint64_t held = update_stages_bytes(x->updates);
  if (held > x->run.peak_bytes)
    x->run.peak_bytes = held;
  if (rc == SL_OK)
    rc = update_stages_check_limit(x->updates, &x->run.shared.memory,
                                   &x->run.updates_charged, err);
  if (rc == SL_OK && pushed)
    rc = stage_output_window_end(&x->o, err);
  /* A node: the changes sent since the last WM are one round's (the
   * coordinator passes them on and commits). */
  if (rc == SL_OK && pushed && x->node)
    rc = x->where->dist->send_wm(&x->where->export, x->leaf_wm[0], err);
  return rc;
}

/* The leaves' stores as they are now, for one window's evaluation while
 * the leaves go on adding rows: each store's keys copied (store_key may
 * move the array); the rows a complete window reads are never added to
 * nor freed meanwhile (a row that old is late, and only this thread
 * frees).  run->lock is held. */
static leaf_store *snapshot_leaves(const staged_query *x) {
  int n = x->sp->nleaves;
  leaf_store *snap = malloc(sizeof *snap * (size_t)n);
  if (!snap)
    abort();
  for (int i = 0; i < n; i++) {
    const leaf_store *ls = &x->run.leaves[i];
    snap[i] = *ls;
    snap[i].keys =
        malloc(sizeof *ls->keys * (size_t)(ls->nkeys ? ls->nkeys : 1));
    if (!snap[i].keys)
      abort();
    if (ls->nkeys > 0) /* (an empty store may have no array yet) */
      memcpy(snap[i].keys, ls->keys, sizeof *ls->keys * (size_t)ls->nkeys);
    snap[i].front = 0;
    snap[i].capkeys = ls->nkeys;
  }
  return snap;
}

/* Evaluate the window ending at end and write its rows.  unlocked: the
 * window is complete (every leaf has passed it), so it is evaluated over
 * a snapshot of the stores with run->lock released, and the leaves keep
 * adding later rows meanwhile; else (stages without state, firing rows as
 * they come) under the lock.  Its rows are written under the lock.
 * run->lock is held on entry and on return. */
static int eval_and_write(staged_query *x, int64_t end, bool unlocked) {
  leaf_store *snap = unlocked ? snapshot_leaves(x) : NULL;
  if (snap) {
    x->ev.leaves = snap;
    pthread_mutex_unlock(&x->run.lock);
  }
  const rel *result = NULL;
  int rc = stage_eval_window(&x->ev, x->top, end, &result);
  /* The rows are written under the lock: a slow consumer (a sink that
   * blocks, a node waiting for credits) then holds the leaves back at
   * their next write too, so their stores cannot grow meanwhile. */
  if (snap)
    pthread_mutex_lock(&x->run.lock);
  if (rc == SL_OK && !x->o.limit_reached)
    rc = write_window(&x->o, result, x->err);
  if (snap) {
    x->ev.leaves = x->run.leaves;
    stage_eval_release(&x->ev); /* it borrowed the snapshot's rows */
    for (int i = 0; i < x->sp->nleaves; i++)
      free(snap[i].keys);
    free(snap);
  }
  return rc;
}

/* Fire, in order of end, the windows some windowed leaf has rows for. */
static int sq_fire_windows(staged_query *x, int64_t frontier, int rc) {
  const sl_staged_plan *sp = x->sp;
  for (;;) {
    int64_t next = WM_MAX;
    for (int i = 0; i < sp->nleaves; i++) {
      const leaf_store *ls = &x->run.leaves[i];
      if (!ls->stream && ls->nkeys > 0 && ls->keys[0].key < next)
        next = ls->keys[0].key;
    }
    /* Stages without state take rows as they come (a window's may
     * then go out in several parts); a node keeps to window order,
     * which the coordinator merges by. */
    if (next == WM_MAX || (next > frontier && !(sp->at_once && !x->node)) ||
        rc != SL_OK)
      break;
    rc = eval_and_write(x, next, !sp->at_once);
    /* A node: the rows sent since the last watermark are this window's
     * (the coordinator puts the nodes' windows back in order). */
    if (rc == SL_OK && x->node)
      rc = x->where->dist->send_wm(&x->where->export, next, x->err);
    if (x->node)
      x->sent_wm = next;
    x->stats->stage_windows++;
    stage_eval_release(&x->ev);
    for (int i = 0; i < sp->nleaves; i++) {
      leaf_store *ls = &x->run.leaves[i];
      if (!ls->stream && ls->nkeys > 0 && ls->keys[0].key == next) {
        drop_first_key(ls);
      }
    }
  }
  return rc;
}

/* Stream rows no window after the frontier can need; the leaves' held
 * bytes charged. */
static void sq_drop_stream_rows(staged_query *x, int64_t frontier) {
  uint64_t held = 0;
  for (int i = 0; i < x->sp->nleaves; i++) {
    leaf_store *ls = &x->run.leaves[i];
    if (ls->stream && frontier != WM_MIN && frontier != WM_MAX) {
      ls->drop_below = frontier + x->lo[i];
      while (ls->nkeys > 0 &&
             (ls->keys[0].key + 1) * ls->bucket_us <= ls->drop_below) {
        drop_first_key(ls);
      }
    }
    held += ls->bytes;
  }
  sl_memory_charge(&x->run.shared.memory, &x->run.leaves_charged, held);
  if (held > x->run.peak_bytes)
    x->run.peak_bytes = held;
}

/* A node whose leaves here are all ready (pre-generated, compiled) says
 * so: the coordinator's clock starts at the last node's READY, as a
 * process's starts at its last leaf's (sl_query_leaf_ready).  Sent from
 * this thread, which owns the connection to the coordinator. */
static int sq_send_ready(staged_query *x) {
  query_shared *sh = &x->run.shared;
  pthread_mutex_lock(&sh->ready_lock);
  bool ready = sh->start_time > 0;
  pthread_mutex_unlock(&sh->ready_lock);
  if (!ready)
    return SL_OK;
  x->sent_ready = true;
  return sl_frame_out_send(&x->where->export, SL_FRAME_READY, NULL, 0, NULL, 0,
                           x->err);
}

/* Rounds until every leaf ended, a failure, LIMIT or a cancel: each fires
 * what the leaves' watermarks complete. */
static int sq_loop(staged_query *x, int rc) {
  stage_runner *run = &x->run;
  const sl_staged_run *where = x->where;
  /* A window's joins probe in parts, on as many threads as the query has
   * workers (stage_pool.c). */
  bool joins = !x->sp->updating && has_stage(x->top_stage, SL_STAGE_JOIN);
  x->ev =
      (stage_eval){.leaves = run->leaves,
                   .pool = joins ? stage_pool_new(x->ctx->config->parallelism,
                                                  x->ctx->cancel)
                                 : NULL,
                   .buffer_size = run->buffer_size,
                   .ctx = sl_expr_ctx_new(),
                   .memory = &run->shared.memory,
                   .err = x->err};
  x->sent_wm = WM_MIN;
  pthread_mutex_lock(&run->lock);
  while (rc == SL_OK) {
    uint64_t news = run->news; /* what this round sees */
    bool all_done;
    rc = sq_leaf_failed(x, &all_done);
    if (rc != SL_OK)
      break;
    int64_t frontier = sq_frontier(x);
    if (x->updates) {
      rc = sq_push_updates(x, rc);
      frontier = WM_MIN; /* nothing fires by windows */
    }
    rc = sq_fire_windows(x, frontier, rc);
    sq_drop_stream_rows(x, frontier);
    run->frontier = frontier;
    /* A node: every window to the frontier has been sent (the coordinator
     * need not wait for windows this node has no rows for). */
    if (rc == SL_OK && x->node && frontier > x->sent_wm && frontier != WM_MAX) {
      rc = where->dist->send_wm(&where->export, frontier, x->err);
      x->sent_wm = frontier;
    }
    pthread_cond_broadcast(&run->cond); /* held-back leaves look again */
    if (rc == SL_OK && x->node && !x->sent_ready)
      rc = sq_send_ready(x);

    if (rc != SL_OK || x->o.limit_reached || all_done)
      break;
    if (sl_cancel_pending(x->ctx->cancel) ||
        (where && sl_cancel_pending(where->cancel))) {
      rc = sl_error_set(x->err, SL_ECANCELLED, "query cancelled");
      break;
    }
    if (run->news != news) /* news came while the lock was released */
      continue;
    struct timespec until = sl_clock_deadline_ms(20);
    pthread_cond_timedwait(&run->cond, &run->lock, &until);
  }
  run->cancelled = true; /* leaves still running stop at their next call */
  pthread_cond_broadcast(&run->cond);
  pthread_mutex_unlock(&run->lock);
  sl_query_leaves_abandon(&run->shared); /* and none waits for another */
  for (int i = 0; i < x->started; i++)
    pthread_join(x->lts[i].thread, NULL);
  return rc;
}

/* The leaves' work and the stages' state into stats; the leaves' stores
 * freed. */
static void sq_leaf_stats(staged_query *x) {
  const sl_staged_plan *sp = x->sp;
  sl_query_stats *stats = x->stats;
  uint64_t *leaf_events = calloc((size_t)sp->nleaves, sizeof *leaf_events);
  if (!leaf_events)
    abort();
  for (int i = 0; i < x->started; i++) {
    const sl_query_stats *ls = &x->lts[i].stats;
    leaf_events[i] = ls->events;
    stage_stats_add_work(stats, ls);
    if (i < SL_STATS_LEAVES) {
      sl_leaf_stats *l = &stats->leaf[i];
      *l = (sl_leaf_stats){ls->events,
                           ls->jit_buffers,
                           ls->jit_back_buffers,
                           ls->jit_rows,
                           ls->jit_back_rows,
                           ls->jit_seconds,
                           "",
                           0,
                           ls->rows_not_kept};
      snprintf(l->jit_status, sizeof l->jit_status, "%s", ls->jit_status);
      stats->nleaves = i + 1;
    }
    stats->workers += ls->workers;
    sl_error_clear(&x->lts[i].err);
  }
  stats->events = stage_events_of_leaves(sp, leaf_events);
  free(leaf_events);
  for (int i = 0; i < sp->nleaves; i++) {
    if (i < SL_STATS_LEAVES && i < stats->nleaves) {
      stats->leaf[i].held_peak = x->run.leaves[i].peak;
      stats->leaf[i].not_kept += x->run.leaves[i].not_kept;
    }
    sl_extremes_free(&x->run.leaves[i].extremes);
    stats->stage_late += x->run.leaves[i].late;
    for (int k = 0; k < x->run.leaves[i].nkeys; k++)
      keyed_rows_free(&x->run.leaves[i].keys[k]);
    free(leaf_store_base(&x->run.leaves[i]));
  }
  stats->stage_state_peak = x->run.peak_bytes;
}

/* The output and the late records' output closed, the rest freed. */
static int sq_close(staged_query *x, int rc, double seconds) {
  sl_query_stats *stats = x->stats;
  sl_error *err = x->err;
  stage_output *o = &x->o;
  if (rc == SL_OK && o->sink)
    rc = stage_output_finish(o, err);
  stage_output_free_sorted(o);
  stats->rows_out = o->written;
  stats->seconds = seconds;
  if (o->sink)
    rc = sl_sink_close_after(o->sc, o->sink, rc, err);
  if (x->late_open) {
    stats->late_written = x->late.written;
    rc = late_output_close(&x->late, rc, err);
  }
  stage_eval_release(&x->ev);
  if (x->updates) {
    /* The leaves' last watermarks (an ended leaf's is the end of time):
     * what the joins still hold after them is what no bound ever drops. */
    for (int i = 0; i < x->sp->nleaves; i++)
      x->leaf_wm[i] = x->run.leaves[i].wm;
    update_stages_sweep_now(x->updates, x->leaf_wm);
    stats->state_evicted = update_stages_evicted(x->updates);
    stats->state_rows_end = update_stages_join_rows(x->updates);
    update_stages_join_stats(x->updates, stats);
  }
  update_stages_free(x->updates);
  free(x->leaf_wm);
  if (x->uo.rows.data)
    sl_buffer_free(&x->uo.rows);
  stage_pool_free(x->ev.pool);
  stats->stage_rows_compiled = x->ev.rows_compiled;
  stats->stage_rows_interpreted = x->ev.rows_interpreted;
  memcpy(stats->stage_peak, x->ev.peak_bytes, sizeof stats->stage_peak);
  sl_jit_free(x->jit);
  free(x->ev.rels);
  free(x->ev.tables);
  sl_expr_ctx_free(x->ev.ctx);
  free(x->run.leaves);
  free(x->lts);
  free(x->lo);
  free(x->hi);
  pthread_mutex_destroy(&x->run.lock);
  pthread_cond_destroy(&x->run.cond);
  sl_query_shared_close(&x->run.shared);
  sl_arena_free(&x->arena);
  return rc;
}

int sl_execute_staged(const sl_plan *plan, const sl_run *ctx,
                      const sl_staged_run *where, sl_result_sink *shell,
                      sl_query_stats *stats, sl_error *err) {
  const sl_run_config *config = ctx->config;
  bool node = where && where->export.fd >= 0;
  if (node && !where->dist)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: stages on a node without the "
                        "cluster's distribution (sl_staged_run.dist)");
  memset(stats, 0, sizeof *stats);
  staged_query *x = calloc(1, sizeof *x);
  if (!x)
    abort();
  x->plan = plan;
  x->ctx = ctx;
  x->sp = plan->staged;
  x->where = where;
  x->node = node;
  x->stats = stats;
  x->err = err;
  int rc = sq_init(x, config);
  if (rc == SL_OK)
    sq_leaf_stores(x);
  rc = sq_open_output(x, config, shell, rc);
  rc = sq_start_leaves(x, config, rc);
  double t0 = sl_clock_seconds();
  rc = sq_loop(x, rc);
  /* From when every leaf was ready (its input pre-generated, its code
   * compiled), here or on the nodes running it, as a single pipeline's
   * clock (executor.c). */
  pthread_mutex_lock(&x->run.shared.ready_lock);
  if (x->run.shared.start_time > t0)
    t0 = x->run.shared.start_time;
  if (x->run.shared.nodes_ready_time > t0)
    t0 = x->run.shared.nodes_ready_time;
  pthread_mutex_unlock(&x->run.shared.ready_lock);
  double seconds = sl_clock_seconds() - t0;
  stats->started_at = t0;
  sq_leaf_stats(x);
  rc = sq_close(x, rc, seconds);
  free(x);
  return rc;
}
