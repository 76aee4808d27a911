/* stage_broadcast.c - the coordinator of a join whose stages run on the
 * nodes (plan.h: SL_JOIN_BROADCAST, _REPARTITION, _LATE_MERGE; executor.h,
 * sl_execute_broadcast).
 *
 * The nodes of the local leaf run the stages themselves (stage_runner.c
 * with a fed leaf), each over its own share of that leaf's rows, which
 * never move.  The other leaf (the side) runs on nodes of its own, whose
 * rows go straight to the stage nodes over links (stage_link.c): to each
 * (broadcast) or to the one leading their join key's partition.  Under a
 * repartition of more than two streams (q23) every leaf but the local one
 * is such a side, each on its own nodes.  This
 * process runs each side as it runs any leaf on nodes (an executor
 * coordinating them, on its own thread) with a sink that takes no rows:
 * it only learns the side's progress and stops it.  Meanwhile this thread
 * reads the stage nodes' result rows and writes them to the query's sink,
 * OFFSET and LIMIT applied, window after window in order of end as the
 * single strategy does: a node sends WM(e) after each window's rows (so
 * the rows since its last watermark are window e's) and WM(f) when every
 * window to f has fired there; a window is written (and committed) once
 * every node's watermark has reached it.
 *
 * Stopping: LIMIT reached, Ctrl-C, or an error on either side sets `stop`
 * (the side's sink then fails, which stops the side and its nodes) and
 * sends CANCEL to every stage node still running; each answers DONE or
 * ERROR, which is read before returning so the connections stay in step.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../exec/executor_int.h"
#include "../exec/late_output.h"
#include "../exec/stage_int.h"
#include "../exec/updating_stages.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/net/node_messages.h"
#include "sluice/state/sorted_result.h"

typedef struct broadcast {
  atomic_bool stop;
} broadcast;

/* ---- the side's sink here: its rows go over the links, not here ------- */

struct sl_sink {
  broadcast *b;
  bool complete; /* the side's final watermark came: it ran to its end */
};

static int side_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  (void)err;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->b = spec->arg;
  *out = s;
  return SL_OK;
}

static int side_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  (void)s, (void)rows;
  return sl_error_set(err, SL_EINTERNAL,
                      "rows of a join's side reached the coordinator (its "
                      "nodes send them to the stage nodes)");
}

/* Called every round of the side's executor: how a stop reaches it (its
 * nodes are then cancelled).  Once its final watermark came the side has
 * run to its end, and a stop after that is not its failure. */
static int side_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  if (wm == WM_MAX)
    s->complete = true;
  if (atomic_load(&s->b->stop) && !s->complete)
    return sl_error_set(err, SL_ECANCELLED, "stopped");
  return SL_OK;
}

static int side_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok, (void)err;
  free(s);
  return SL_OK;
}

static uint64_t side_rows(const sl_sink *s) {
  (void)s;
  return 0;
}

static const sl_sink_connector side_sink = {
    .name = "join-side",
    .description = "a join's side whose nodes send its rows over links",
    .open = side_open,
    .write = side_write,
    .close = side_close,
    .rows_written = side_rows,
    .watermark = side_watermark,
};

/* ---- a side's thread ---------------------------------------------------- */

typedef struct side {
  const sl_plan *leaf;
  sl_run run; /* its nodes: the side's */
  int rc;
  sl_error err;
  sl_query_stats stats;
  atomic_bool done;
  double ended; /* when sl_execute returned */
  pthread_t thread;
  bool started, checked;
} side;

static void *side_main(void *arg) {
  side *sd = arg;
  sd->rc = sl_execute(sd->leaf, &sd->run, NULL, &sd->stats, &sd->err);
  sd->ended = sl_clock_seconds();
  atomic_store(&sd->done, true);
  return NULL;
}

/* ---- the stage nodes' results ------------------------------------------- */

/* A window's rows from every node, until every node has passed it. */
typedef struct held_window {
  int64_t end;
  sorted_result rows;
} held_window;

typedef struct results {
  stage_output out;
  const sl_row_layout *layout;
  uint32_t buffer_size;
  sl_buffer rows;       /* a received buffer */
  sorted_result *since; /* per node: rows since its last watermark */
  int64_t *wm;          /* per node: its last watermark */
  held_window *held;    /* sorted by end */
  int nheld, capheld;
  bool updating; /* updating stages: rows by rounds, not windows */
  /* Updating stages split at `from` (sl_staged_plan.spread_top): the nodes
   * send from's changes (layout: op, then from's columns), which the
   * stages above it run here. */
  const sl_stage *from;
  update_stages *upper;
  update_output uo;
  sl_buffer from_rows; /* from's layout, strings borrowed from `rows` */
  uint8_t *ops;
  /* SET 'sluice.memory-limit': the upper stages' state (what they last
   * reported: charged). */
  sl_memory_account *memory;
  uint64_t charged;
} results;

/* A buffer of from's changes (op first) into the stages above it. */
static int push_upper(results *r, sl_error *err) {
  const sl_row_layout *wl = r->rows.layout, *fl = r->from_rows.layout;
  if (r->from_rows.cap < r->rows.cap) {
    sl_buffer_free(&r->from_rows);
    sl_buffer_init(&r->from_rows, fl, r->rows.cap);
    r->from_rows.borrow_strings = true;
    free(r->ops);
    r->ops = malloc(r->rows.cap / (wl->width ? wl->width : 1) + 1);
    if (!r->ops)
      abort();
  }
  sl_buffer_clear(&r->from_rows);
  for (uint32_t i = 0; i < r->rows.nrows; i++) {
    const uint8_t *src = sl_buffer_row(&r->rows, i);
    uint8_t *dst = sl_buffer_append(&r->from_rows);
    sl_changelog_op op;
    const sl_str *name = (const sl_str *)(src + wl->fields[0].offset);
    if (!dst || name->len != 2 ||
        !sl_changelog_op_parse(sl_str_data(name), &op))
      return sl_error_set(err, SL_EIO, "a node sent a change without its kind");
    r->ops[i] = (uint8_t)op;
    for (int f = 1; f < wl->nfields; f++)
      sl_row_copy_field(wl, src, f, fl, dst, f - 1);
  }
  int rc =
      update_stages_push_from(r->upper, r->from, &r->from_rows, r->ops, err);
  return rc == SL_OK
             ? update_stages_check_limit(r->upper, r->memory, &r->charged, err)
             : rc;
}

/* Updating stages: node i ended a round (it sends WM after each), whose
 * changes go out at once and are committed.  The nodes' keys are
 * disjoint, so each key's changes come in order from its one node. */
static int node_round(results *r, int i, sl_error *err) {
  if (r->upper) /* its changes went through the stages above already */
    return stage_output_window_end(&r->out, err);
  sorted_result *since = &r->since[i];
  int rc = SL_OK;
  for (int b = 0; b < since->nbufs && rc == SL_OK; b++)
    rc = stage_output_write(&r->out, &since->bufs[b], err);
  bool any = since->rows > 0;
  sorted_result_free(since);
  sorted_result_init(since, r->layout, r->buffer_size);
  return rc == SL_OK && any ? stage_output_window_end(&r->out, err) : rc;
}

/* Node i's watermark moved to wm: its rows since the last one are window
 * wm's; then every window all nodes have passed goes out, in order. */
static int node_watermark(results *r, int i, int n, int64_t wm, sl_error *err) {
  sorted_result *since = &r->since[i];
  if (since->rows > 0) {
    int k = 0;
    while (k < r->nheld && r->held[k].end < wm)
      k++;
    if (k == r->nheld || r->held[k].end != wm) {
      if (r->nheld == r->capheld) {
        r->capheld = r->capheld ? 2 * r->capheld : 8;
        r->held = realloc(r->held, sizeof *r->held * (size_t)r->capheld);
        if (!r->held)
          abort();
      }
      memmove(&r->held[k + 1], &r->held[k],
              sizeof *r->held * (size_t)(r->nheld - k));
      r->nheld++;
      r->held[k].end = wm;
      sorted_result_init(&r->held[k].rows, r->layout, r->buffer_size);
    }
    /* The node's buffers move over whole (no copy). */
    sorted_result *dst = &r->held[k].rows;
    for (int b = 0; b < since->nbufs; b++) {
      if (dst->nbufs == dst->cap) {
        dst->cap = dst->cap ? 2 * dst->cap : 4;
        dst->bufs = realloc(dst->bufs, sizeof *dst->bufs * (size_t)dst->cap);
        if (!dst->bufs)
          abort();
      }
      dst->bufs[dst->nbufs++] = since->bufs[b];
    }
    dst->rows += since->rows;
    free(since->bufs);
    sorted_result_init(since, r->layout, r->buffer_size);
  }
  if (wm > r->wm[i])
    r->wm[i] = wm;
  int64_t frontier = WM_MAX;
  for (int j = 0; j < n; j++)
    if (r->wm[j] < frontier)
      frontier = r->wm[j];
  int rc = SL_OK;
  while (r->nheld > 0 && r->held[0].end <= frontier) {
    held_window *h = &r->held[0];
    for (int b = 0; b < h->rows.nbufs && rc == SL_OK; b++)
      rc = stage_output_write(&r->out, &h->rows.bufs[b], err);
    if (rc == SL_OK)
      rc = stage_output_window_end(&r->out, err);
    sorted_result_free(&h->rows);
    memmove(&r->held[0], &r->held[1], sizeof *r->held * (size_t)(r->nheld - 1));
    r->nheld--;
    if (rc != SL_OK)
      break;
  }
  return rc;
}

static int add_node_stats(sl_query_stats *t, const sl_strbuf *p,
                          sl_error *err) {
  sl_query_stats st;
  int rc = sl_stats_msg_decode(p->data, p->len, &st, err);
  if (rc != SL_OK)
    return rc;
  t->events += st.events; /* each node reads its own share */
  stage_stats_add_work(t, &st);
  t->stage_late += st.stage_late;
  t->state_evicted += st.state_evicted;
  t->state_rows_end += st.state_rows_end;
  for (int i = 0; i < st.njoins && i < SL_STATS_JOINS; i++)
    update_stages_join_stats_add(t, &st.join[i]);
  if (st.stage_windows > t->stage_windows) /* every node sees each window */
    t->stage_windows = st.stage_windows;
  if (st.stage_state_peak > t->stage_state_peak)
    t->stage_state_peak = st.stage_state_peak;
  for (int i = 0; i < SL_STATS_STAGES; i++)
    t->stage_peak[i] += st.stage_peak[i];
  for (int i = 0; i < st.nleaves && i < SL_STATS_LEAVES; i++)
    t->leaf[i].held_peak += st.leaf[i].held_peak;
  for (int i = 0; i < st.nleaves && i < SL_STATS_LEAVES; i++)
    t->leaf[i].not_kept += st.leaf[i].not_kept;
  return SL_OK;
}

/* A stage node's message that does not decode: the first error unless
 * there is one already. */
static int malformed(int rc, int node, sl_error *why, sl_error *err) {
  if (rc == SL_OK)
    rc = sl_error_set(err, SL_EIO, "node %d: %s", node,
                      why->message ? why->message : "a malformed message");
  sl_error_clear(why);
  return rc;
}

/* ---- the run: start, read the stage nodes, stop, finish ---------------- */

/* One sl_execute_broadcast: what its phases share. */
typedef struct bcast_run {
  const sl_plan *plan;
  const sl_run *ctx; /* the run's configuration, the cancel token */
  const sl_staged_plan *sp;
  const int *stage_fds;
  int n, nsides;
  sl_query_stats *stats;
  sl_error *err;
  sl_arena arena;
  stage_rt *top;
  broadcast b;
  side *sd;
  bool *done, *cancel_sent;
  struct pollfd *pfd;
  /* Each stage node's last frame (node_frames.h, HEARTBEAT), and when
   * its READY came (0: not yet), nready of them. */
  double *heard, *ready_at;
  int nready;
  /* Each stage node's bulk frames taken (credits, node_frames.h): taken as they
   * are read, since the rows written go to the sink from this thread,
   * which reads no more meanwhile. */
  uint64_t (*taken)[2];
  sl_memory_account memory;
  results r;
  sorted_result sorted;
  late_output late;
  bool late_open;
  sl_buffer late_rows;
  double t0, stop_deadline;
  bool stopping;
  int ndone;
  sl_strbuf p;
  sl_error ferr, broken;
} bcast_run;

/* The per-node arrays and the sides (their leaves' sink is side_sink). */
static void run_alloc(bcast_run *x, const sl_run_config *config,
                      const sl_exec_nodes *sides, const int *side_leaf) {
  int n = x->n;
  x->done = calloc((size_t)n, sizeof *x->done);
  x->cancel_sent = calloc((size_t)n, sizeof *x->cancel_sent);
  x->pfd = calloc((size_t)n, sizeof *x->pfd);
  x->heard = malloc(sizeof *x->heard * (size_t)(n ? n : 1));
  x->ready_at = calloc((size_t)(n ? n : 1), sizeof *x->ready_at);
  x->taken = calloc((size_t)(n ? n : 1), sizeof *x->taken);
  if (!x->done || !x->cancel_sent || !x->pfd || !x->heard || !x->ready_at ||
      !x->taken)
    abort();
  for (int i = 0; i < n; i++)
    x->heard[i] = sl_clock_seconds();
  x->sd = calloc((size_t)x->nsides + 1, sizeof *x->sd);
  if (!x->sd)
    abort();
  for (int j = 0; j < x->nsides; j++) {
    sl_plan *leaf = x->sp->leaves[side_leaf[j]];
    leaf->sink = &side_sink;
    leaf->sink_arg = &x->b;
    leaf->sink_table = NULL;
    x->sd[j].leaf = leaf;
    x->sd[j].run = (sl_run){config, x->ctx->cancel, &sides[j]};
  }
}

/* The results the stage nodes send and the query's sink they go to; the
 * late records' output; then the sides' threads. */
static int run_open(bcast_run *x, const sl_run_config *config,
                    sl_result_sink *shell, uint32_t buffer_size, int rc) {
  const sl_plan *plan = x->plan;
  const sl_staged_plan *sp = x->sp;
  stage_rt *top = x->top;
  sl_error *err = x->err;
  /* An updating result is a changelog when its stages update rows: the
   * op column first, as the nodes send it (stage_runner.c). */
  const sl_row_layout *out_layout = top ? top->layout : NULL;
  const char *const *out_names = plan->out_names;
  if (top && sp->updating && plan->changelog)
    out_layout =
        sl_exec_changelog_layout(&x->arena, top->layout->nfields,
                                 plan->out_names, plan->out_types, &out_names);
  /* What the nodes send: the result's rows, or the changes of the stage
   * they run up to (op first), for the stages above it here. */
  const sl_stage *from = sp->updating ? sp->spread_top : NULL;
  if (from == sp->top)
    from = NULL;
  const sl_row_layout *wire_layout = out_layout;
  const char *const *wire_names;
  if (rc == SL_OK && from)
    wire_layout = sl_exec_changelog_layout(&x->arena, from->ncols, from->names,
                                           from->types, &wire_names);
  sl_memory_account_init(&x->memory, config->memory_limit);
  x->r = (results){{plan->sink, NULL, plan->offset, plan->limit, 0, 0, false,
                    plan->order, plan->norder, NULL, NULL, &x->memory, 0},
                   wire_layout,
                   buffer_size,
                   {0},
                   calloc((size_t)x->n, sizeof(sorted_result)),
                   calloc((size_t)x->n, sizeof(int64_t)),
                   NULL,
                   0,
                   0,
                   sp->updating,
                   from,
                   NULL,
                   {&x->r.out, plan->changelog, {0}},
                   {0},
                   NULL,
                   &x->memory,
                   0};
  results *r = &x->r;
  if (!r->since || !r->wm)
    abort();
  if (rc == SL_OK && from) {
    r->upper = update_stages_new(top, buffer_size, config->state_ttl,
                                 stage_write_updates, &r->uo);
    if (plan->changelog)
      sl_buffer_init(&r->uo.rows, out_layout, buffer_size);
    sl_buffer_init(&r->from_rows, update_stages_layout(r->upper, from), 64);
  }
  for (int i = 0; i < x->n; i++) {
    sorted_result_init(&r->since[i], r->layout, buffer_size);
    r->wm[i] = WM_MIN;
  }
  if (rc == SL_OK && plan->norder > 0) {
    sorted_result_init(&x->sorted, top->layout, buffer_size);
    r->out.sorted = &x->sorted;
  }
  if (rc == SL_OK) {
    sl_sink_spec spec = {plan->sink_table,
                         out_layout,
                         out_names,
                         shell,
                         NULL,
                         plan->changelog,
                         plan->sink_overwrite,
                         plan->sink_unbounded};
    rc = r->out.sc->open(&spec, &r->out.sink, err);
  }
  /* Late records (SET 'sluice.late-records' = 'side-output'): one output
   * here for the sides' nodes (through the sides' executors) and the stage
   * nodes (LATE_ROWS frames below), committed as the nodes' watermarks
   * come. */
  if (rc == SL_OK)
    rc = late_output_open_leaves(&x->late, sp, NULL, NULL, &x->arena,
                                 &x->late_open, err);
  memset(&x->late_rows, 0, sizeof x->late_rows);
  for (int j = 0; j < x->nsides && rc == SL_OK; j++) {
    side *sd = &x->sd[j];
    sd->started = pthread_create(&sd->thread, NULL, side_main, sd) == 0;
    if (!sd->started)
      rc = sl_error_set(err, SL_EINTERNAL, "cannot start a join's side");
  }
  return rc;
}

/* The sides that finished since the last look: a failure of their own
 * is the query's; a broken link a consequence, kept. */
static int check_sides(bcast_run *x, int rc) {
  for (int j = 0; j < x->nsides && !x->stopping; j++) {
    side *sd = &x->sd[j];
    if (sd->checked || !atomic_load(&sd->done))
      continue;
    sd->checked = true;
    if (sd->rc == SL_ECANCELLED) {
      /* Its link to a stage node broke: that node failed (its error,
       * the cause, is on its way to us) or was stopped.  Under load
       * the side can notice first, so this is kept as a consequence
       * and reported only if no cause comes. */
      if (!x->broken.code)
        sl_error_move(&x->broken, &sd->err);
      else
        sl_error_clear(&sd->err);
      x->stopping = true;
    } else if (sd->rc != SL_OK) { /* the side failed on its own */
      sl_error_move(x->err, &sd->err);
      rc = sd->rc;
      x->stopping = true;
    }
  }
  return rc;
}

/* Stopping: the sides told (unless the stop is only a consequence of
 * their failure), CANCEL to every stage node still running.  False once
 * the nodes had their time to answer. */
static bool stop_nodes(bcast_run *x, int rc) {
  /* A stage node that stopped because its links broke is a consequence
   * (a side node failed): the side is left to report the cause. */
  bool only_consequence =
      rc == SL_OK && !x->r.out.limit_reached && x->broken.code != 0;
  if (x->stopping && !only_consequence)
    atomic_store(&x->b.stop, true);
  if (!x->stopping)
    return true;
  if (x->stop_deadline == 0)
    x->stop_deadline = sl_clock_seconds() + 10;
  for (int i = 0; i < x->n; i++)
    if (!x->done[i] && !x->cancel_sent[i]) {
      sl_frame_send(x->stage_fds[i], SL_FRAME_CANCEL, NULL, 0, NULL, 0,
                    &x->ferr);
      sl_error_clear(&x->ferr);
      x->cancel_sent[i] = true;
    }
  return sl_clock_seconds() <= x->stop_deadline;
}

/* Stage node i is done (stopping with it when stop). */
static void node_done(bcast_run *x, int i, bool stop) {
  x->done[i] = true;
  x->ndone++;
  if (stop)
    x->stopping = true;
}

/* Wait up to 50 ms for frames; a node silent too long has failed.
 * Returns poll's count. */
static int poll_nodes(bcast_run *x, int *rc) {
  for (int i = 0; i < x->n; i++) {
    x->pfd[i].fd = x->done[i] ? -1 : x->stage_fds[i];
    x->pfd[i].events = POLLIN;
    x->pfd[i].revents = 0;
  }
  int ready = poll(x->pfd, (nfds_t)x->n, 50);
  for (int i = 0; i < x->n; i++)
    if (!x->done[i] && sl_node_check_silence(x->stage_fds[i], x->heard[i],
                                             &x->ferr) != SL_OK) {
      if (*rc == SL_OK)
        *rc = sl_error_set(x->err, SL_EIO, "node %d: %s", i, x->ferr.message);
      sl_error_clear(&x->ferr);
      node_done(x, i, true);
    }
  return ready;
}

/* An ERROR frame of node i. */
static int node_error(bcast_run *x, int i, int rc) {
  sl_error *err = x->err;
  int code, mlen;
  const char *msg;
  if (sl_error_msg_decode(x->p.data, x->p.len, &code, &msg, &mlen, &x->ferr) !=
      SL_OK) {
    rc = malformed(rc, i, &x->ferr, err);
    code = rc;
    msg = "";
    mlen = 0;
  }
  /* SL_ECANCELLED: stopped as asked, or in consequence of another
   * node's failure (a broken channel), whose error is the cause;
   * kept in case no cause comes. */
  sl_error *into = code == SL_ECANCELLED ? &x->broken : err;
  if (rc == SL_OK && !into->code)
    sl_error_set(into, code, "node %d: %.*s", i, mlen, msg);
  if (code != SL_ECANCELLED && rc == SL_OK)
    rc = err->code;
  node_done(x, i, true);
  return rc;
}

/* One frame of stage node i (of this type, in x->p). */
static int take_frame(bcast_run *x, int i, uint32_t type, int rc) {
  results *r = &x->r;
  sl_error *err = x->err;
  const sl_strbuf *p = &x->p;
  int n = x->n;
  if (type == SL_FRAME_ROWS || type == SL_FRAME_LATE_ROWS)
    sl_node_credit_took(x->stage_fds[i], x->taken[i], p->len);
  if (type == SL_FRAME_ROWS) {
    if (rc != SL_OK || r->out.limit_reached)
      return rc;
    rc = sl_rows_msg_decode(p->data, p->len, r->layout, &r->rows, err);
    if (rc == SL_OK)
      rc = r->upper ? push_upper(r, err)
                    : sorted_result_add(&r->since[i], &r->rows, err);
    if (rc != SL_OK)
      x->stopping = true;
  } else if (type == SL_FRAME_LATE_ROWS) {
    if (rc != SL_OK)
      return rc;
    if (!x->late_open)
      rc = sl_error_set(err, SL_EIO,
                        "node %d sent late records, and this query "
                        "writes none: the node is out of step",
                        i);
    else
      rc = sl_rows_msg_decode(p->data, p->len, x->late.layout, &x->late_rows,
                              err);
    if (rc == SL_OK)
      rc = late_output_write(&x->late, &x->late_rows, err);
    if (rc != SL_OK)
      x->stopping = true;
  } else if (type == SL_FRAME_WM) {
    int64_t wm;
    if (x->late_open && rc == SL_OK)
      rc = late_output_commit(&x->late, err);
    if (sl_wm_msg_decode(p->data, p->len, &wm, &x->ferr) != SL_OK)
      rc = malformed(rc, i, &x->ferr, err);
    else if (rc == SL_OK && !r->out.limit_reached)
      rc = r->updating ? node_round(r, i, err)
                       : node_watermark(r, i, n, wm, err);
    if (rc != SL_OK)
      x->stopping = true;
  } else if (type == SL_FRAME_DONE) {
    if (add_node_stats(x->stats, p, &x->ferr) != SL_OK) {
      rc = malformed(rc, i, &x->ferr, err);
      x->stopping = true;
    }
    node_done(x, i, false);
    if (rc == SL_OK && !r->out.limit_reached && !x->stopping)
      rc = r->updating ? node_round(r, i, err)
                       : node_watermark(r, i, n, WM_MAX, err);
  } else if (type == SL_FRAME_ERROR) {
    rc = node_error(x, i, rc);
  } else if (type == SL_FRAME_READY && x->ready_at[i] == 0) {
    x->ready_at[i] = sl_clock_seconds();
    x->nready++;
  }
  return rc;
}

/* The frames of the nodes poll found ready. */
static int read_nodes(bcast_run *x, int rc) {
  double began = sl_clock_seconds();
  for (int i = 0; i < x->n; i++) {
    if (x->done[i] || !(x->pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    uint32_t type;
    int frc = sl_frame_recv(x->stage_fds[i], &type, &x->p, 1000, &x->ferr);
    if (frc == SL_FRAME_TIMEOUT)
      continue;
    x->heard[i] = sl_clock_seconds();
    if (frc != SL_OK) {
      if (rc == SL_OK)
        rc = sl_error_set(x->err, SL_EIO, "node %d: %s", i,
                          x->ferr.message ? x->ferr.message : "failed");
      sl_error_clear(&x->ferr);
      node_done(x, i, true);
      continue;
    }
    rc = take_frame(x, i, type, rc);
  }
  /* Writing to a slow consumer is not the nodes' silence: the time this
   * thread did not read does not count against them. */
  double spent = sl_clock_seconds() - began;
  for (int i = 0; i < x->n; i++)
    x->heard[i] += spent;
  return rc;
}

/* Every stage node's frames until each is done (or stopped and given up
 * on). */
static int run_loop(bcast_run *x, int rc) {
  x->stopping = rc != SL_OK;
  while (x->ndone < x->n) {
    if (!x->stopping && x->r.out.limit_reached)
      x->stopping = true;
    if (!x->stopping && sl_cancel_pending(x->ctx->cancel)) {
      rc = sl_error_set(x->err, SL_ECANCELLED, "query cancelled");
      x->stopping = true;
    }
    rc = check_sides(x, rc);
    if (!stop_nodes(x, rc))
      break; /* the sync after the query sorts the nodes out */
    if (poll_nodes(x, &rc) <= 0)
      continue;
    rc = read_nodes(x, rc);
  }
  return rc;
}

/* The sides stopped and joined; the error that is the cause kept. */
static int run_stop_sides(bcast_run *x, int rc) {
  /* Every stage node finished without a stop: each had every side node's
   * final watermark, so the side is ending on its own; stopping it now
   * would fail it.  Stage nodes that stopped as a consequence: the side
   * has a little while to fail with the cause. */
  bool limit = x->r.out.limit_reached;
  if (rc == SL_OK && !limit && x->broken.code) {
    double until = sl_clock_seconds() + 2.0;
    for (int j = 0; j < x->nsides; j++)
      while (!atomic_load(&x->sd[j].done) && sl_clock_seconds() < until)
        poll(NULL, 0, 10);
  }
  if (x->stopping || x->ndone < x->n)
    atomic_store(&x->b.stop, true);
  for (int j = 0; j < x->nsides; j++) {
    side *sd = &x->sd[j];
    if (sd->started)
      pthread_join(sd->thread, NULL);
    /* A side's own failure, unless it only stopped because we did. */
    if (rc == SL_OK && sd->rc != SL_OK &&
        !(sd->rc == SL_ECANCELLED && (limit || x->broken.code))) {
      sl_error_move(x->err, &sd->err);
      rc = sd->rc;
    }
  }
  if (rc == SL_OK && x->ndone < x->n)
    rc = sl_error_set(x->err, SL_EIO, "a node running the stages did not stop");
  /* Stopped, not by LIMIT, with no cause but a consequence: that one. */
  if (rc == SL_OK && x->stopping && !limit && x->broken.code) {
    sl_error_move(x->err, &x->broken);
    rc = x->err->code;
  }
  sl_error_clear(&x->broken);
  sl_error_clear(&x->ferr);
  sl_strbuf_free(&x->p);
  return rc;
}

/* The sides' work, and the whole run's.  The stage nodes' events are
 * their local leaf's (each node its share), each side's its leaf's. */
static void run_stats(bcast_run *x, const int *side_leaf) {
  const sl_staged_plan *sp = x->sp;
  sl_query_stats *stats = x->stats;
  uint64_t *leaf_events = calloc((size_t)sp->nleaves, sizeof *leaf_events);
  if (!leaf_events)
    abort();
  leaf_events[sp->local_leaf] = stats->events;
  for (int j = 0; j < x->nsides; j++)
    leaf_events[side_leaf[j]] = x->sd[j].stats.events;
  stats->events = stage_events_of_leaves(sp, leaf_events);
  free(leaf_events);
  for (int j = 0; j < x->nsides; j++) {
    stage_stats_add_work(stats, &x->sd[j].stats);
    sl_error_clear(&x->sd[j].err);
  }
  stats->rows_out = x->r.out.written;
  /* The clock starts when every part is ready, as a process's does at its
   * last leaf (sl_query_leaf_ready): the last stage node's READY (its
   * leaves pre-generated and compiled), and each side's own start (its
   * nodes' READY, sl_execute's seconds count from there). */
  double t0 = x->t0;
  for (int i = 0; x->nready == x->n && i < x->n; i++)
    t0 = x->ready_at[i] > t0 ? x->ready_at[i] : t0;
  for (int j = 0; j < x->nsides; j++) {
    double began = x->sd[j].ended - x->sd[j].stats.seconds;
    if (x->sd[j].stats.seconds > 0 && began > t0)
      t0 = began;
  }
  stats->seconds = sl_clock_seconds() - t0;
}

/* The sink and the late records' output closed, everything freed. */
static int run_close(bcast_run *x, int rc) {
  results *r = &x->r;
  sl_error *err = x->err;
  if (r->out.sink) {
    if (rc == SL_OK && r->out.sorted)
      rc = stage_output_finish(&r->out, err);
    else if (rc == SL_OK && r->out.sc->commit)
      rc = r->out.sc->commit(r->out.sink, err);
    rc = sl_sink_close_after(r->out.sc, r->out.sink, rc, err);
  }
  if (x->late_open) {
    x->stats->late_written = x->late.written;
    rc = late_output_close(&x->late, rc, err);
  }
  if (x->late_rows.data)
    sl_buffer_free(&x->late_rows);
  stage_output_free_sorted(&r->out);
  sl_buffer_free(&r->rows);
  update_stages_free(r->upper);
  if (r->uo.rows.data)
    sl_buffer_free(&r->uo.rows);
  if (r->from_rows.data)
    sl_buffer_free(&r->from_rows);
  free(r->ops);
  for (int i = 0; i < x->n; i++)
    sorted_result_free(&r->since[i]);
  for (int k = 0; k < r->nheld; k++)
    sorted_result_free(&r->held[k].rows);
  free(r->since);
  free(r->wm);
  free(r->held);
  free(x->sd);
  free(x->done);
  free(x->cancel_sent);
  free(x->heard);
  free(x->ready_at);
  free(x->taken);
  free(x->pfd);
  sl_memory_account_close(&x->memory);
  sl_arena_free(&x->arena);
  return rc;
}

int sl_execute_broadcast(const sl_plan *plan, const sl_run *run,
                         const sl_exec_nodes *sides, const int *side_leaf,
                         int nsides, const int *stage_fds, int n,
                         sl_result_sink *shell, sl_query_stats *stats,
                         sl_error *err) {
  const sl_run_config *config = run->config;
  memset(stats, 0, sizeof *stats);
  /* No side: updating stages over one stream, whose nodes route their
   * own rows (nsides 0). */
  bcast_run x = {0};
  x.plan = plan;
  x.ctx = run;
  x.sp = plan->staged;
  x.stage_fds = stage_fds;
  x.n = n;
  x.nsides = nsides;
  x.stats = stats;
  x.err = err;
  x.p = (sl_strbuf)SL_STRBUF_INIT;
  sl_arena_init(&x.arena, 0);
  uint32_t buffer_size = config->buffer_size; /* at least 4 KiB */
  int rc = stage_rt_build(&x.arena, x.sp->top, x.sp, &x.top, err);
  run_alloc(&x, config, sides, side_leaf);
  rc = run_open(&x, config, shell, buffer_size, rc);
  x.t0 = sl_clock_seconds();
  rc = run_loop(&x, rc);
  rc = run_stop_sides(&x, rc);
  run_stats(&x, side_leaf);
  return run_close(&x, rc);
}
