/* executor.c - compile a plan, start the workers, and act as coordinator:
 * fire windows when every worker's watermark has passed them, merge the
 * workers' partial states, finalize and write the results to the sink.
 * See executor.h for the model and worker.c for the per-record path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "distribution.h"
#include "executor_int.h"
#include "late_output.h"
#include "sluice/common/clock.h"
#include "sluice/common/interrupt.h"
#include "sluice/state/session_store.h"
#include "sluice/state/sorted_result.h"
#include "updating_result.h"

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
    for (int f = 0; f < nprogs && rc == SL_OK; f++)
      if (progs[f])
        rc = sl_expr_eval_into(progs[f], in, sel, k, out, first, f, ctx, err);
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

out_batch *sl_exec_take_batch(worker *w, uint32_t cap) {
  out_batch *b = NULL;
  pthread_mutex_lock(&w->lock);
  if (w->free_batches) {
    b = w->free_batches;
    w->free_batches = b->next;
  }
  pthread_mutex_unlock(&w->lock);
  if (!b) {
    b = malloc(sizeof *b);
    if (!b)
      abort();
    sl_buffer_init(&b->buf, w->q->out_layout, cap);
  } else if (b->buf.cap < cap) {
    sl_buffer_free(&b->buf);
    sl_buffer_init(&b->buf, w->q->out_layout, cap);
  }
  sl_buffer_clear(&b->buf);
  b->next = NULL;
  return b;
}

void sl_exec_queue_batch_locked(worker *w, out_batch *b) {
  if (w->batches_tail)
    w->batches_tail->next = b;
  else
    w->batches = b;
  w->batches_tail = b;
  if (w->node_fd < 0) /* a node link's: the frame's length */
    b->queued_bytes = b->buf.cap;
  w->queued++;
  w->queued_bytes += b->queued_bytes;
}

void sl_exec_publish_batch(worker *w, out_batch *b) {
  pthread_mutex_lock(&w->lock);
  sl_exec_queue_batch_locked(w, b);
  pthread_mutex_unlock(&w->lock);
}

void sl_exec_return_batch(worker *w, out_batch *b) {
  pthread_mutex_lock(&w->lock);
  b->next = w->free_batches;
  w->free_batches = b;
  pthread_mutex_unlock(&w->lock);
}

bool sl_exec_queue_full_locked(const worker *w) {
  return w->queued > SL_OUT_QUEUED_MAX ||
         (w->queued > 1 && w->queued_bytes > SL_OUT_QUEUED_BYTES);
}

void sl_exec_took_locked(worker *w, int n, uint64_t bytes) {
  if (n == 0)
    return;
  w->queued -= n;
  w->queued_bytes -= bytes;
  if (w->node_fd >= 0) {
    w->credit_frames += (uint64_t)n;
    w->credit_bytes += bytes;
  }
  pthread_cond_broadcast(&w->drained);
}

bool sl_exec_wait_drained(worker *w, int ms) {
  pthread_mutex_lock(&w->lock);
  bool full = sl_exec_queue_full_locked(w);
  pthread_mutex_unlock(&w->lock);
  if (!full)
    return false;
  sl_exec_signal(w);
  pthread_mutex_lock(&w->lock);
  struct timespec until = sl_clock_deadline_ms(ms);
  while ((full = sl_exec_queue_full_locked(w)) && !atomic_load(w->cancel))
    if (pthread_cond_timedwait(&w->drained, &w->lock, &until) != 0)
      break;
  full = sl_exec_queue_full_locked(w);
  pthread_mutex_unlock(&w->lock);
  return full;
}

void sl_exec_wait_ready(exec_shared *sh) {
  pthread_mutex_lock(&sh->lock);
  if (++sh->ready >= sh->expected) {
    sh->start_time = sl_clock_seconds();
    pthread_cond_broadcast(&sh->cond);
  }
  while (sh->ready < sh->expected)
    pthread_cond_wait(&sh->cond, &sh->lock);
  pthread_mutex_unlock(&sh->lock);
}

void sl_exec_signal(worker *w) {
  pthread_mutex_lock(&w->shared->lock);
  pthread_cond_broadcast(&w->shared->cond);
  pthread_mutex_unlock(&w->shared->lock);
}

uint64_t sl_exec_partials_bytes(worker *w, uint32_t *n) {
  uint64_t bytes = 0;
  *n = 0;
  pthread_mutex_lock(&w->lock);
  for (const window_partial *p = w->partials; p; p = p->next, ++*n)
    bytes += sl_group_table_bytes(p->table) + sizeof *p + sizeof *p->table;
  for (const session_fragment *f = w->fragments; f; f = f->next, ++*n)
    bytes += f->held_bytes; /* session windows' closed sessions */
  pthread_mutex_unlock(&w->lock);
  return bytes;
}

/* ---- the coordinator -------------------------------------------------------
 */

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
   * coordinator through this socket (node.h); -1 otherwise. */
  sl_frame_out export;
  /* A node running a broadcast join's stages: rows go to the sink (the
   * stage sink) after all, and so does the watermark (executor.h). */
  bool rows_here;
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

/* Write result rows to the sink, after OFFSET and up to LIMIT (in the
 * order they come: sorted already under ORDER BY).  May change b. */
static int write_result(coordinator *c, sl_buffer *b) {
  if (c->limit_reached)
    return SL_OK;
  const sl_plan *plan = c->q->plan;
  if (c->export.fd >= 0 && !c->rows_here) {
    /* A node: OFFSET, ORDER BY and the final LIMIT are the coordinator's;
     * without ORDER BY no more than LIMIT + OFFSET rows are needed. */
    int64_t need =
        plan->limit >= 0 && plan->norder == 0 ? plan->limit + plan->offset : -1;
    if (need >= 0 && c->rows_out + b->nrows >= (uint64_t)need) {
      b->nrows = (uint32_t)((uint64_t)need - c->rows_out);
      c->limit_reached = true;
    }
    c->rows_out += b->nrows;
    return b->nrows ? c->dist->send_rows(&c->export, b, c->err) : SL_OK;
  }
  if (c->skipped < (uint64_t)plan->offset && b->nrows) {
    uint64_t drop = (uint64_t)plan->offset - c->skipped;
    if (drop > b->nrows)
      drop = b->nrows;
    /* Rows move down; their long strings stay where they are. */
    memmove(b->data, b->data + drop * b->layout->width,
            (size_t)(b->nrows - drop) * b->layout->width);
    b->nrows -= (uint32_t)drop;
    c->skipped += drop;
  }
  int64_t limit = plan->limit;
  if (limit >= 0 && c->rows_out + b->nrows >= (uint64_t)limit) {
    b->nrows = (uint32_t)((uint64_t)limit - c->rows_out);
    c->limit_reached = true;
  }
  int rc = b->nrows ? c->sc->write(c->sink, b, c->err) : SL_OK;
  c->rows_out += b->nrows;
  return rc;
}

static int write_sorted(void *arg, sl_buffer *b) {
  return write_result(arg, b);
}

/* Result rows: kept for sorting under ORDER BY, else written now. */
static int emit_result(coordinator *c, sl_buffer *b) {
  if (!c->sorted)
    return write_result(c, b);
  int rc = sorted_result_add(c->sorted, b, c->err);
  uint64_t held = sorted_result_bytes(c->sorted);
  uint64_t total;
  if (sl_memory_grew_over(c->q->memory, &c->sorted_charged, held, &total) &&
      rc == SL_OK)
    rc = sl_memory_over_error(
        c->err, c->q->memory, held, total, "add a LIMIT",
        "ORDER BY's rows (kept until the input ends, to be sorted) hold");
  return rc;
}

/* The coordinator merges the partial states of one window from every
 * worker (or node): that table counts against the memory limit too, until
 * the window is emitted (release_merged_window). */
static int check_merged_window(coordinator *c, const sl_group_table *merged,
                               const sl_group_table *next) {
  /* With the partial about to be merged into it: taken from its worker,
   * it no longer counts there. */
  uint64_t held =
      sl_group_table_bytes(merged) + (next ? sl_group_table_bytes(next) : 0);
  uint64_t total;
  if (!sl_memory_grew_over(c->q->memory, &c->merged_charged, held, &total))
    return SL_OK;
  if (c->updates || c->q->plan->changelog)
    return sl_memory_over_error(
        c->err, c->q->memory, held, total, "add a window so that groups end",
        "the GROUP BY's state being merged (the changes of %u groups, from "
        "every worker%s) holds",
        merged->count, c->of_nodes ? " of every node" : "");
  return sl_memory_over_error(
      c->err, c->q->memory, held, total, "use shorter windows or fewer keys",
      "the windowed GROUP BY's window being merged (%u groups, from every "
      "worker%s) holds",
      merged->count, c->of_nodes ? " of every node" : "");
}

static void release_merged_window(coordinator *c) {
  sl_memory_charge(c->q->memory, &c->merged_charged, 0);
}

static int emit_changes(void *arg, sl_buffer *b) {
  return emit_result(arg, b);
}

/* An updating result: merge a delta (a worker's or node's changes) and
 * send what changed. */
static int merge_changes(coordinator *c, const sl_group_table *delta) {
  uint64_t before = c->updates->changes;
  int rc = update_result_merge(c->updates, delta, emit_changes, c, c->err);
  c->groups += c->updates->changes - before;
  uint64_t held = update_result_bytes(c->updates);
  uint64_t total;
  if (sl_memory_grew_over(c->q->memory, &c->updates_charged, held, &total) &&
      rc == SL_OK)
    rc = sl_memory_over_error(
        c->err, c->q->memory, held, total, "add a window so that groups end",
        "the GROUP BY's state (every group's merged state, %llu groups) holds",
        (unsigned long long)c->updates->table.count);
  return rc;
}

/* Hand out_rows on (see emit_result). */
static int flush_out(coordinator *c) {
  if (c->out_rows.nrows == 0)
    return SL_OK;
  int rc = emit_result(c, &c->out_rows);
  sl_buffer_clear(&c->out_rows);
  return rc;
}

/* HAVING and the select list over the aggregate rows collected so far. */
static int finish_agg_rows(coordinator *c) {
  exec_query *q = c->q;
  uint32_t n = c->agg_rows.nrows;
  for (uint32_t i = 0; i < n; i++)
    c->sel[i] = i;
  int rc;
  if (q->having) {
    rc = sl_expr_filter(q->having, &c->agg_rows, c->sel, &n, c->ctx, c->err);
    if (rc != SL_OK)
      return rc;
  }
  uint32_t done = 0;
  while (done < n && !c->limit_reached) {
    int k =
        sl_exec_eval_rows(q->final_progs, q->nout, &c->agg_rows, c->sel + done,
                          n - done, &c->out_rows, c->ctx, c->err);
    if (k < 0)
      return k;
    if (k == 0 && c->out_rows.nrows == 0)
      return sl_error_set(c->err, SL_EINVAL,
                          "a result row is larger than a buffer; raise SET "
                          "'sluice.buffer-size'");
    done += (uint32_t)k;
    if (done < n ||
        c->out_rows.nrows * q->out_layout->width * 2 > c->out_rows.cap) {
      rc = flush_out(c);
      if (rc != SL_OK)
        return rc;
    }
  }
  sl_buffer_clear(&c->agg_rows);
  return SL_OK;
}

/* Finalize every group of table t (a merged window, or under
 * repartitioning one owner's complete share of it) into aggregate rows. */
static int emit_groups(coordinator *c, int64_t start, int64_t end,
                       const sl_group_table *t) {
  exec_query *q = c->q;
  const sl_plan *plan = q->plan;
  const sl_row_layout *al = q->agg_layout, *kl = q->key_layout;
  int nk = plan->nkeys, na = plan->naggs;
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    uint8_t *row = sl_buffer_append(&c->agg_rows);
    if (!row) {
      int rc = finish_agg_rows(c);
      if (rc != SL_OK)
        return rc;
      row = sl_buffer_append(&c->agg_rows);
    }
    c->groups++;
    const uint8_t *key = sl_group_table_key(t, i);
    for (int k = 0; k < nk; k++) {
      sl_row_set_null(row, k, sl_row_is_null(key, k));
      memcpy(row + al->fields[k].offset, key + kl->fields[k].offset,
             kl->fields[k].size);
    }
    for (int g = 0; g < na; g++) {
      int rc = sl_agg_finalize(&q->aggs, g, sl_group_table_states(t, i),
                               &c->agg_rows, row, nk + g, c->err);
      if (rc == 1) { /* heap full: finish what we have, then redo this row */
        c->agg_rows.nrows--;
        rc = finish_agg_rows(c);
        if (rc != SL_OK)
          return rc;
        i--;
        goto next;
      }
      if (rc != SL_OK)
        return rc;
    }
    if (plan->windowed) {
      SL_FIELD(row, al, nk + na, int64_t) = start;
      SL_FIELD(row, al, nk + na + 1, int64_t) = end;
      SL_FIELD(row, al, nk + na + 2, int64_t) = end - plan->window.unit_us;
    } else {
      for (int k = 0; k < 3; k++)
        sl_row_set_null(row, nk + na + k, true);
    }
  next:;
  }
  return SL_OK;
}

/* A window's groups are all emitted: write the rest, commit the window. */
static int finish_window(coordinator *c) {
  int rc = finish_agg_rows(c);
  if (rc == SL_OK)
    rc = flush_out(c);
  if (rc == SL_OK && c->sc->commit)
    rc = c->sc->commit(c->sink, c->err);
  c->windows++;
  return rc;
}

static int fire_sessions(coordinator *c, worker *ws, int n, bool *progress);

/* A node about to send window `end`'s partial when its credits (node.h)
 * are used up: the coordinator holds partials it cannot fire until it
 * hears a watermark past them, so say first that every window before this
 * one has been sent (true: windows go in order of their end), and they
 * fire, and their credits come back. */
static int before_partial(coordinator *c, int64_t end) {
  const sl_plan *plan = c->q->plan;
  if (!plan->windowed || c->dist->can_send(&c->export))
    return SL_OK;
  int64_t wm = end - plan->window.unit_us - 1;
  if (wm <= c->exported_wm)
    return SL_OK;
  c->exported_wm = wm;
  return c->dist->send_wm(&c->export, wm, c->err);
}

/* Fire every window that all workers have passed. */
static int fire_windows(coordinator *c, worker *ws, int n, bool *progress) {
  if (c->sessions)
    return fire_sessions(c, ws, n, progress);
  int64_t unit = c->q->plan->windowed ? c->q->plan->window.unit_us : 0;
  for (;;) {
    int64_t global = WM_MAX, next = WM_MAX;
    for (int i = 0; i < n; i++) {
      pthread_mutex_lock(&ws[i].lock);
      int64_t wm = ws[i].done ? WM_MAX : ws[i].published_wm;
      if (ws[i].partials && ws[i].partials->end < next)
        next = ws[i].partials->end;
      pthread_mutex_unlock(&ws[i].lock);
      if (wm < global)
        global = wm;
    }
    if (next == WM_MAX) {
      /* Either nothing is waiting, or the global aggregate's one window,
       * which ends at +infinity: it fires when every worker is done.  An
       * updating result takes every delta as it comes. */
      bool any = false;
      for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&ws[i].lock);
        any |= ws[i].partials != NULL;
        pthread_mutex_unlock(&ws[i].lock);
      }
      if (!any || (global != WM_MAX && !c->q->plan->changelog))
        return SL_OK;
    } else if (global != WM_MAX && next - unit > global) {
      return SL_OK;
    }
    /* Take every worker's partial for this window.  Late merge: the
     * partials share keys, so they are merged into one table.
     * Repartitioning: each owner's partial holds all of its keys and no
     * other worker has them, so each is emitted as it is; merging them
     * would only rehash every group on this one thread. */
    bool disjoint =
        c->q->plan->strategy == SL_STRATEGY_REPARTITION && !c->of_nodes;
    double t0 = sl_clock_seconds();
    sl_group_table *merged = NULL;
    int64_t start = 0;
    int rc = SL_OK;
    bool any = false, limited = c->limit_reached;
    for (int i = 0; i < n; i++) {
      pthread_mutex_lock(&ws[i].lock);
      window_partial *p = ws[i].partials;
      if (p && p->end == next) {
        ws[i].partials = p->next;
        if (!ws[i].partials)
          ws[i].partials_tail = NULL;
        sl_exec_took_locked(&ws[i], 1, p->queued_bytes);
      } else {
        p = NULL;
      }
      pthread_mutex_unlock(&ws[i].lock);
      if (!p)
        continue;
      if (ws[i].node_fd >= 0)
        c->dist->link_credit(&ws[i]);
      start = p->start;
      any = true;
      if (disjoint && c->export_partials) {
        /* A node: the coordinator merges the nodes' partials. */
        if (rc == SL_OK)
          rc = before_partial(c, next);
        if (rc == SL_OK)
          rc = c->dist->send_partial(&c->export, start, next, p->table, c->err);
        sl_group_table_free(p->table);
        free(p->table);
      } else if (disjoint) {
        double e0 = sl_clock_seconds();
        if (rc == SL_OK && c->updates)
          rc = merge_changes(c, p->table);
        else if (rc == SL_OK && !c->limit_reached)
          rc = emit_groups(c, start, next, p->table);
        /* The aggregate rows point at the table's key strings: turn them
         * into result rows (which copy strings) before it is freed. */
        if (rc == SL_OK)
          rc = finish_agg_rows(c);
        c->emit_seconds += sl_clock_seconds() - e0;
        t0 += sl_clock_seconds() - e0; /* not merge time */
        sl_group_table_free(p->table);
        free(p->table);
      } else if (!merged) {
        merged = p->table;
        if (rc == SL_OK)
          rc = check_merged_window(c, merged, NULL);
      } else {
        if (rc == SL_OK)
          rc = check_merged_window(c, merged, p->table);
        if (rc == SL_OK)
          rc = sl_group_table_merge(merged, p->table, c->err);
        if (rc == SL_OK)
          rc = check_merged_window(c, merged, NULL);
        sl_group_table_free(p->table);
        free(p->table);
      }
      free(p);
    }
    double t1 = sl_clock_seconds();
    c->merge_seconds += t1 - t0;
    /* A node sends the merged partial in its wire form, a copy no larger
     * than the table: counted as a second table while it is made. */
    if (merged && rc == SL_OK && c->export_partials) {
      rc = check_merged_window(c, merged, merged);
      if (rc == SL_OK)
        rc = before_partial(c, next);
      if (rc == SL_OK)
        rc = c->dist->send_partial(&c->export, start, next, merged, c->err);
    } else if (merged && rc == SL_OK && c->updates)
      rc = merge_changes(c, merged);
    else if (merged && rc == SL_OK && !c->limit_reached)
      rc = emit_groups(c, start, next, merged);
    if (any && rc == SL_OK && !limited && !c->export_partials)
      rc = finish_window(c);
    c->emit_seconds += sl_clock_seconds() - t1;
    if (merged) {
      sl_group_table_free(merged);
      free(merged);
      release_merged_window(c);
    }
    *progress = true;
    if (rc != SL_OK)
      return rc;
  }
}

/* The minimum of the workers' published watermarks (a finished worker
 * counts as +infinity). */
static int64_t workers_watermark(worker *ws, int n) {
  int64_t global = WM_MAX;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&ws[i].lock);
    int64_t wm = ws[i].done ? WM_MAX : ws[i].published_wm;
    pthread_mutex_unlock(&ws[i].lock);
    if (wm < global)
      global = wm;
  }
  return global;
}

/* A node of a cluster: tell the coordinator the watermark below which
 * every window's partial has been sent.  The watermark is read first and
 * the windows fired after, so that no window it covers is still unsent. */
static int export_watermark(coordinator *c, worker *ws, int n) {
  int64_t global = workers_watermark(ws, n);
  if (global <= c->exported_wm || global == WM_MAX)
    return SL_OK; /* WM_MAX: the node's DONE says so */
  bool progress = false;
  int rc = fire_windows(c, ws, n, &progress);
  if (rc == SL_OK)
    rc = c->dist->send_wm(&c->export, global, c->err);
  c->exported_wm = global;
  return rc;
}

/* Late merge at partition leaders, one round on a node's coordinator.
 * As a helper: read the workers' watermark first, then take every partial
 * they published (epoch deltas and closed windows), merge them per window,
 * ship each split by partition, and then send the watermark (so no window
 * it covers has changes still unsent).  As a leader: fire every window
 * of this node's partition that the vector clock has passed, finalize its
 * groups and send the rows to the shell. */
static int leaders_round(coordinator *c, worker *ws, int n, bool *progress) {
  int64_t global = WM_MAX;
  window_partial *all = NULL, *tail = NULL;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&ws[i].lock);
    int64_t wm = ws[i].done ? WM_MAX : ws[i].published_wm;
    if (ws[i].partials) {
      int np = 0;
      uint64_t bytes = 0;
      for (window_partial *p = ws[i].partials; p; p = p->next, np++)
        bytes += p->queued_bytes;
      sl_exec_took_locked(&ws[i], np, bytes);
      if (tail)
        tail->next = ws[i].partials;
      else
        all = ws[i].partials;
      tail = ws[i].partials_tail;
      ws[i].partials = ws[i].partials_tail = NULL;
    }
    pthread_mutex_unlock(&ws[i].lock);
    if (wm < global)
      global = wm;
  }
  double t0 = sl_clock_seconds();
  int rc = SL_OK;
  /* One table per window: the workers' deltas merged (keys overlap). */
  while (all) {
    window_partial *p = all, **at = &all;
    all = p->next;
    p->next = NULL;
    while (*at) {
      window_partial *o = *at;
      if (o->end != p->end) {
        at = &o->next;
        continue;
      }
      *at = o->next;
      if (rc == SL_OK)
        rc = sl_group_table_merge(p->table, o->table, c->err);
      sl_group_table_free(o->table);
      free(o->table);
      free(o);
    }
    if (rc == SL_OK)
      rc =
          c->dist->leaders_ship(c->leaders, p->start, p->end, p->table, c->err);
    sl_group_table_free(p->table);
    free(p->table);
    free(p);
    *progress = true;
  }
  if (rc == SL_OK && global > c->exported_wm) {
    rc = c->dist->leaders_watermark(c->leaders, global, c->err);
    c->exported_wm = global;
  }
  c->dist->leaders_epoch_done(c->leaders);
  double t1 = sl_clock_seconds();
  c->merge_seconds += t1 - t0;
  if (rc == SL_OK)
    rc = c->dist->leaders_status(c->leaders, c->err);
  sl_leader_window *w;
  while (rc == SL_OK && (w = c->dist->leaders_take(c->leaders))) {
    if (!c->limit_reached)
      rc = emit_groups(c, w->start, w->end, w->table);
    if (rc == SL_OK)
      rc = finish_window(c); /* rows copy the table's strings */
    c->dist->window_free(w);
    *progress = true;
  }
  c->emit_seconds += sl_clock_seconds() - t1;
  return rc;
}

void session_fragment_free(session_fragment *f) {
  sl_arena_free(&f->arena);
  free(f->states);
  free(f->key);
  free(f);
}

/* Session windows: merge the workers' closed fragments per key; a merged
 * session fires when every worker's watermark has passed its end and no
 * worker still has an open session that could touch it. */
static bool merged_session_fires(void *arg, const session *ss) {
  const coordinator *c = arg;
  if (c->session_wm == WM_MAX)
    return true;
  return ss->end - c->q->plan->window.unit_us <= c->session_wm &&
         ss->end < c->session_min_open;
}

static int emit_session(void *arg, const uint8_t *key, const session *ss) {
  coordinator *c = arg;
  c->groups++;
  c->windows++; /* each session is a window */
  exec_query *q = c->q;
  const sl_plan *plan = q->plan;
  const sl_row_layout *al = q->agg_layout, *kl = q->key_layout;
  int nk = plan->nkeys, na = plan->naggs;
  for (int attempt = 0; attempt < 2; attempt++) {
    uint8_t *row = sl_buffer_append(&c->agg_rows);
    if (!row) {
      int rc = finish_agg_rows(c);
      if (rc != SL_OK)
        return rc;
      continue;
    }
    for (int k = 0; k < nk; k++) {
      sl_row_set_null(row, k, sl_row_is_null(key, k));
      memcpy(row + al->fields[k].offset, key + kl->fields[k].offset,
             kl->fields[k].size);
    }
    int rc = SL_OK;
    for (int g = 0; g < na && rc == SL_OK; g++)
      rc = sl_agg_finalize(&q->aggs, g, ss->states, &c->agg_rows, row, nk + g,
                           c->err);
    if (rc == 1) { /* heap full: finish the rows so far, then retry */
      c->agg_rows.nrows--;
      rc = finish_agg_rows(c);
      if (rc != SL_OK)
        return rc;
      continue;
    }
    if (rc != SL_OK)
      return rc;
    SL_FIELD(row, al, nk + na, int64_t) = ss->start;
    SL_FIELD(row, al, nk + na + 1, int64_t) = ss->end;
    SL_FIELD(row, al, nk + na + 2, int64_t) = ss->end - plan->window.unit_us;
    return SL_OK;
  }
  return sl_error_set(c->err, SL_EINVAL,
                      "a result row is larger than a buffer; raise SET "
                      "'sluice.buffer-size'");
}

/* Session windows: the sessions merged from every worker's (or node's)
 * closed fragments, held until no open session anywhere can still reach
 * them, count against the memory limit.  Reported after each round of
 * merging (the store's key table and arena grow by blocks, not per
 * session); a key's table slot stays while the query runs. */
static int check_merged_sessions(coordinator *c) {
  uint64_t held = session_store_bytes(c->sessions);
  uint64_t total;
  if (!sl_memory_grew_over(c->q->memory, &c->sessions_charged, held, &total))
    return SL_OK;
  return sl_memory_over_error(
      c->err, c->q->memory, held, total, "use a shorter gap or fewer keys",
      "the SESSION windows' sessions being merged (%llu open session%s of "
      "%u keys, from every worker%s) hold",
      (unsigned long long)c->sessions->open, c->sessions->open == 1 ? "" : "s",
      c->sessions->keys.count, c->of_nodes ? " of every node" : "");
}

static int fire_sessions(coordinator *c, worker *ws, int n, bool *progress) {
  int64_t global = WM_MAX, min_open = WM_MAX;
  session_fragment *all = NULL;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&ws[i].lock);
    if (!ws[i].done) {
      if (ws[i].published_wm < global)
        global = ws[i].published_wm;
      if (ws[i].min_open_start < min_open)
        min_open = ws[i].min_open_start;
    }
    if (ws[i].fragments) {
      session_fragment *next_all = all;
      ws[i].fragments_tail->next = all;
      all = ws[i].fragments;
      ws[i].fragments = ws[i].fragments_tail = NULL;
      int nf = 0;
      uint64_t bytes = 0;
      for (session_fragment *f = all; f != next_all; f = f->next, nf++)
        bytes += f->queued_bytes;
      sl_exec_took_locked(&ws[i], nf, bytes);
    }
    pthread_mutex_unlock(&ws[i].lock);
  }
  int rc = SL_OK;
  bool merged = all != NULL;
  double t0 = sl_clock_seconds();
  while (all) {
    session_fragment *f = all;
    all = f->next;
    if (rc == SL_OK &&
        !session_store_add(c->sessions, sl_key_hash(c->q->key_layout, f->key),
                           f->key, f->start, f->end, f->states, WM_MIN, c->err))
      rc = c->err->code ? c->err->code : SL_EINTERNAL;
    session_fragment_free(f);
    *progress = true;
  }
  double t1 = sl_clock_seconds();
  c->merge_seconds += t1 - t0;
  if (rc == SL_OK && merged)
    rc = check_merged_sessions(c);
  if (rc != SL_OK)
    return rc;
  c->session_wm = global;
  c->session_min_open = min_open;
  c->session_cap =
      min_open == WM_MAX ? WM_MAX : min_open - c->q->plan->window.unit_us - 1;
  if (c->sessions->min_end == WM_MAX ||
      (global != WM_MAX &&
       c->sessions->min_end - c->q->plan->window.unit_us > global))
    return SL_OK;
  rc = session_store_close(c->sessions, merged_session_fires, emit_session, c,
                           c->err);
  if (rc == SL_OK)
    rc = finish_agg_rows(c);
  if (rc == SL_OK)
    rc = flush_out(c);
  if (rc == SL_OK && c->sc->commit)
    rc = c->sc->commit(c->sink, c->err);
  c->emit_seconds += sl_clock_seconds() - t1;
  return rc;
}

/* Stateless: write every batch finished so far.  Each worker's list is
 * taken whole, so a round ends even while workers keep publishing (the
 * round's watermark must reach a sink feeding another stage). */
static int drain_batches(coordinator *c, worker *ws, int n, bool *progress) {
  int rc = SL_OK;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&ws[i].lock);
    out_batch *b = ws[i].batches;
    ws[i].batches = ws[i].batches_tail = NULL;
    uint64_t bytes = 0;
    int nb = 0;
    for (out_batch *o = b; o; o = o->next, nb++)
      bytes += o->queued_bytes;
    sl_exec_took_locked(&ws[i], nb, bytes);
    pthread_mutex_unlock(&ws[i].lock);
    if (ws[i].node_fd >= 0)
      c->dist->link_credit(&ws[i]);
    while (b) {
      out_batch *next = b->next;
      *progress = true;
      if (rc == SL_OK)
        rc = emit_result(c, &b->buf);
      pthread_mutex_lock(&ws[i].lock);
      b->next = ws[i].free_batches;
      ws[i].free_batches = b;
      pthread_mutex_unlock(&ws[i].lock);
      b = next;
    }
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* The progress line: events so far and their rate, the watermark every
 * worker has passed, windows fired.  On the coordinator of nodes the
 * workers are the node links, whose events and windows are what the nodes
 * last said (PROGRESS); nodes that fire their windows themselves each fire
 * every window (for their keys): the most any node fired. */
static void report_progress(sl_result_sink *shell, worker *ws, int n,
                            const coordinator *c, double start) {
  uint64_t events = 0, windows = c->windows;
  int64_t wm = WM_MAX;
  for (int i = 0; i < n; i++) {
    events += atomic_load_explicit(&ws[i].events, memory_order_relaxed);
    pthread_mutex_lock(&ws[i].lock);
    if (!ws[i].done && ws[i].published_wm < wm)
      wm = ws[i].published_wm;
    if (c->of_nodes && ws[i].windows_fired > windows)
      windows = ws[i].windows_fired;
    pthread_mutex_unlock(&ws[i].lock);
  }
  double secs = sl_clock_seconds() - start;
  char when[64] = "none yet";
  if (wm != WM_MIN && wm != WM_MAX) {
    time_t t = (time_t)(wm / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  }
  char line[256];
  snprintf(line, sizeof line,
           "%llu events in %.1f s (%.0f events/s), watermark %s, %llu "
           "windows fired, %llu rows (Ctrl-C cancels)",
           (unsigned long long)events, secs,
           secs > 0 ? (double)events / secs : 0.0, when,
           (unsigned long long)windows, (unsigned long long)c->rows_out);
  shell->progress(shell->ctx, line);
}

/* A node: its events and windows fired so far, for the coordinator's
 * progress line (node.h, PROGRESS). */
static int send_progress(const coordinator *c, worker *ws, int n,
                         sl_error *err) {
  uint64_t p[2] = {0, c->windows};
  for (int i = 0; i < n; i++)
    p[0] += atomic_load_explicit(&ws[i].events, memory_order_relaxed);
  return sl_frame_out_send(&c->export, SL_FRAME_PROGRESS, p, sizeof p, NULL, 0,
                           err);
}

/* Repartition: one channel from every worker to every other one. */
static void free_query(exec_query *q) {
  /* Called after every group table of the query is freed. */
  sl_slot_pool_free(q->slot_pool);
  sl_jit_free(q->jit);
  if (q->channels) {
    for (int i = 0; i < q->xn * q->xn; i++)
      if (q->channels[i])
        sl_channel_destroy(q->channels[i]);
    free(q->channels);
  }
  for (int i = 0; i < q->ntable_buffers; i++)
    sl_buffer_free(&q->table_buffers[i]);
  free(q->table_buffers);
  if (q->memory)
    sl_memory_charge(q->memory, &q->table_charged, 0);
  sl_memory_account_close(&q->own_shared.memory);
  sl_arena_free(&q->arena);
}

int sl_execute(const sl_plan *plan, const sl_settings *settings,
               sl_result_sink *shell, sl_query_stats *stats, sl_error *err) {
  return sl_execute_ex(plan, settings, NULL, shell, stats, err);
}

int sl_execute_ex(const sl_plan *plan, const sl_settings *settings,
                  const sl_exec_nodes *nodes, sl_result_sink *shell,
                  sl_query_stats *stats, sl_error *err) {
  return sl_exec_run(plan, settings, nodes, shell, NULL, stats, err);
}

void sl_query_shared_init(query_shared *sh, const sl_settings *settings) {
  sl_memory_account_init(&sh->memory, sl_exec_memory_limit(settings));
  atomic_init(&sh->wm_max, WM_MIN);
}

int sl_exec_run(const sl_plan *plan, const sl_settings *settings,
                const sl_exec_nodes *nodes, sl_result_sink *shell,
                query_shared *with_others, sl_query_stats *stats,
                sl_error *err) {
  if (plan->kind == SL_PLAN_CONSTANT)
    return sl_execute_constant(plan, shell, stats, err);
  bool coordinator_of_nodes = nodes && nodes->nnodes > 0;
  bool node = nodes && nodes->node_count > 0;
  if ((coordinator_of_nodes || node) && !nodes->dist)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: a query on nodes without the "
                        "cluster's distribution (sl_exec_nodes.dist)");
  if ((coordinator_of_nodes || node) && sl_plan_sessions_on_one_process(plan))
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "not supported yet: session windows on several "
                        "nodes (SET 'sluice.nodes' = '1')");
  memset(stats, 0, sizeof *stats);
  exec_query q;
  memset(&q, 0, sizeof q);
  q.plan = plan;
  sl_arena_init(&q.arena, 0);
  q.buffer_size =
      (uint32_t)sl_settings_get_int(settings, "sluice.buffer-size", 65536);
  if (q.buffer_size < 4096)
    q.buffer_size = 4096;
  q.nworkers = (int)sl_settings_get_int(settings, "parallelism.default", 1);
  if (q.nworkers < 1)
    q.nworkers = 1;
  q.src_base = node ? nodes->node_index * q.nworkers : 0;
  q.src_total = node ? nodes->node_count * q.nworkers : q.nworkers;
  bool across = node && nodes->exchange_between_nodes &&
                plan->kind == SL_PLAN_AGGREGATE &&
                plan->strategy == SL_STRATEGY_REPARTITION;
  /* Late merge with channels between nodes: partition leaders. */
  bool leaders = node && nodes->exchange_between_nodes &&
                 plan->kind == SL_PLAN_AGGREGATE &&
                 plan->strategy != SL_STRATEGY_REPARTITION && !plan->changelog;
  q.exchange_delay_us =
      sl_settings_get_int(settings, "sluice.debug.exchange-delay-us", 0);
  q.xbase = across ? q.src_base : 0;
  q.xn = across ? q.src_total : q.nworkers;
  if (leaders || plan->changelog) {
    /* sluice.epoch-size is per node: each worker ends its epochs after
     * its share of it. */
    int64_t e = sl_settings_get_int(settings, "sluice.epoch-size", 64 << 20);
    q.epoch_bytes = e > 0 ? (uint64_t)e / (uint64_t)q.nworkers : 0;
    if (e > 0 && q.epoch_bytes == 0)
      q.epoch_bytes = 1;
  }
  if (plan->changelog) {
    q.epoch_seconds = sl_settings_get_seconds(
        settings, "table.exec.mini-batch.allow-latency", 0.2);
    int64_t r = sl_settings_get_int(settings, "table.exec.mini-batch.size", 0);
    q.epoch_rows = r > 0 ? (uint64_t)r : 0;
    if (!q.epoch_bytes)
      q.epoch_bytes = UINT64_MAX;
  }
  sl_query_shared_init(&q.own_shared, settings);
  q.shared = with_others ? with_others : &q.own_shared;
  q.memory = &q.shared->memory;
  q.idle_timeout = (double)plan->idle_timeout_us / 1e6;
  /* Up to 256 MiB of freed group-table slots stay for the next windows. */
  q.slot_pool = sl_slot_pool_new((size_t)256 << 20);
  sl_slot_pool_set_budget(q.slot_pool, q.memory);
  int rc = sl_exec_prepare(&q, err);
  if (rc == SL_OK && plan->kind == SL_PLAN_AGGREGATE &&
      plan->strategy == SL_STRATEGY_REPARTITION && q.xn > 1 &&
      !coordinator_of_nodes)
    rc = sl_exec_open_exchange(&q, nodes, err);
  if (rc != SL_OK) {
    free_query(&q);
    return rc;
  }
  /* The coordinator of nodes runs no pipeline: the nodes compile theirs
   * (and report it), and compiling here would only take CPU from them. */
  if (!coordinator_of_nodes) {
    rc = sl_exec_prepare_jit(&q, settings, shell, err);
    if (rc != SL_OK) { /* 'sluice.jit' = 'require' and LLVM failed */
      free_query(&q);
      return rc;
    }
  }
  stats->jit_seconds = q.jit_seconds;
  snprintf(stats->jit_status, sizeof stats->jit_status, "%s",
           q.jit_status ? q.jit_status : "");

  /* The sink. */
  coordinator c;
  memset(&c, 0, sizeof c);
  c.q = &q;
  c.err = err;
  c.sc = plan->sink;
  c.dist = nodes ? nodes->dist : NULL;
  c.export.fd = node ? nodes->coordinator_fd : -1;
  c.export.lock = node ? nodes->coordinator_lock : NULL;
  c.export.credit = node ? nodes->coordinator_credit : NULL;
  c.rows_here = node && nodes->rows_to_sink;
  c.of_nodes = coordinator_of_nodes;
  c.export_partials = node && !across && !leaders;
  /* Nodes that repartition between them own disjoint, complete groups:
   * they finalize, and the coordinator only writes their rows. */
  bool rows_from_nodes = coordinator_of_nodes && nodes->exchange_between_nodes;
  bool fires = plan->kind == SL_PLAN_AGGREGATE && !rows_from_nodes;
  c.exported_wm = WM_MIN;
  c.rows_wm = WM_MIN;
  if (node && !c.rows_here) {
    /* A node writes nothing itself: the coordinator has the sink. */
    c.sc = sl_sink_connector_find("blackhole");
    shell = NULL;
  }
  sl_sink_spec spec = {c.sc != plan->sink ? NULL : plan->sink_table,
                       q.out_layout,
                       q.out_names,
                       shell,
                       plan->sink_arg,
                       plan->changelog,
                       plan->sink_overwrite,
                       plan->sink_unbounded};
  rc = c.sc->open(&spec, &c.sink, err);
  if (rc != SL_OK) {
    free_query(&q);
    return rc;
  }
  /* Late records to their table: a staged plan's leaves share the stage
   * runner's output, a plan on its own opens one. */
  late_output late_own;
  if (plan->late_table && plan->late_arg) {
    q.late = plan->late_arg;
  } else if (plan->late_table && node) {
    /* A node's late records go to the coordinator, which writes them. */
    late_output_open_export(&late_own, &c.export, c.dist,
                            plan->late_table->name);
    q.late = &late_own;
    q.late_owned = true;
  } else if (plan->late_table) {
    rc = late_output_open(&late_own, plan, &q.arena, err);
    if (rc != SL_OK) {
      sl_error ignored = {0};
      c.sc->close(c.sink, false, &ignored);
      sl_error_clear(&ignored);
      free_query(&q);
      return rc;
    }
    q.late = &late_own;
    q.late_owned = true;
  }
  c.ctx = sl_expr_ctx_new();
  if (plan->kind == SL_PLAN_AGGREGATE && plan->windowed &&
      plan->window.kind == SL_WINDOW_SESSION) {
    c.sessions = malloc(sizeof *c.sessions);
    if (!c.sessions)
      abort();
    session_store_init(c.sessions, q.key_layout, &q.aggs);
    c.sessions->reuse_closed = true; /* emit_session copies what it reads */
    c.session_cap = WM_MIN;
  }
  sl_buffer_init(&c.out_rows, q.out_layout, q.buffer_size);
  sorted_result sorted;
  if (plan->norder > 0 && !node) {
    sorted_result_init(&sorted, q.out_layout, q.buffer_size);
    c.sorted = &sorted;
  }
  update_result updates;
  if (plan->changelog && fires && !c.export_partials) {
    update_result_init(
        &updates, &q, q.buffer_size,
        sl_settings_get_seconds(settings, "table.exec.state.ttl", 0));
    c.updates = &updates;
  }
  if (q.agg_layout) {
    sl_buffer_init(&c.agg_rows, q.agg_layout, q.buffer_size);
    c.sel =
        malloc(sizeof(uint32_t) * (q.buffer_size / q.agg_layout->width + 1));
    if (!c.sel)
      abort();
  }

  /* The workers. */
  exec_shared shared;
  pthread_mutex_init(&shared.lock, NULL);
  pthread_cond_init(&shared.cond, NULL);
  /* On the coordinator of a cluster the nodes are the workers: a thread
   * per node turns its messages into what a worker publishes. */
  int nthreads = coordinator_of_nodes ? nodes->nnodes : q.nworkers;
  shared.ready = 0;
  shared.expected = nthreads; /* node links count their node's READY */
  shared.start_time = 0;      /* when every worker (node) is ready */
  atomic_bool cancel = false;
  worker *ws = calloc((size_t)nthreads, sizeof(worker));
  if (!ws)
    abort();
  double t0 = sl_clock_seconds();
  if (leaders)
    rc = c.dist->leaders_open(&q, nodes, &shared, &c.leaders, err);
  int started = 0;
  for (int i = 0; i < nthreads && rc == SL_OK; i++) {
    ws[i].index = i;
    ws[i].node_fd = coordinator_of_nodes ? nodes->fds[i] : -1;
    ws[i].q = &q;
    ws[i].shared = &shared;
    ws[i].cancel = &cancel;
    ws[i].published_wm = WM_MIN;
    ws[i].min_open_start = WM_MAX;
    pthread_mutex_init(&ws[i].lock, NULL);
    pthread_cond_init(&ws[i].drained, NULL);
    pthread_mutex_init(&ws[i].send_lock, NULL);
    if (pthread_create(&ws[i].thread, NULL,
                       coordinator_of_nodes ? c.dist->link_main
                                            : sl_worker_main,
                       &ws[i]) != 0) {
      rc = sl_error_set(err, SL_EINTERNAL, "cannot start worker thread %d", i);
      atomic_store(&cancel, true);
      break;
    }
    started++;
  }
  if (!coordinator_of_nodes && started < q.nworkers) {
    pthread_mutex_lock(&shared.lock);
    shared.expected = started;
    pthread_cond_broadcast(&shared.cond);
    pthread_mutex_unlock(&shared.lock);
  }

  /* Coordinate until every worker is done and everything is written. */
  double start_clock = sl_clock_seconds(), next_progress = start_clock + 0.5;
  /* Rows from nodes that fire their windows: committed once every node's
   * watermark passed (the windows they fired are whole), as fire_windows
   * commits each window here (a table shows it then). */
  int64_t committed_wm = WM_MIN;
  uint64_t committed_rows = 0;
  bool ready_sent = false;
  double cause_deadline = 0; /* a node failed as a consequence: see below */
  while (rc == SL_OK) {
    bool progress = false;
    /* A sink feeding another stage learns how far the rows are complete:
     * the watermark read before this round's windows and batches. */
    int64_t round_wm = c.sc->watermark ? workers_watermark(ws, started) : 0;
    /* A node sending rows tells the coordinator the same, after them: a
     * leader how far its vector clock had fired windows. */
    bool partials = c.export_partials && plan->kind == SL_PLAN_AGGREGATE;
    int64_t rows_wm = !node || partials ? WM_MIN
                      : c.leaders       ? c.dist->leaders_clock(c.leaders)
                                        : workers_watermark(ws, started);
    int64_t nodes_wm = rows_from_nodes ? workers_watermark(ws, started) : 0;
    rc = c.leaders ? leaders_round(&c, ws, started, &progress)
         : fires   ? fire_windows(&c, ws, started, &progress)
                   : drain_batches(&c, ws, started, &progress);
    if (rc == SL_OK && rows_from_nodes && nodes_wm > committed_wm &&
        c.rows_out > committed_rows && c.sc->commit) {
      rc = flush_out(&c);
      if (rc == SL_OK)
        rc = c.sc->commit(c.sink, err);
      committed_wm = nodes_wm;
      committed_rows = c.rows_out;
    }
    if (c.sessions) {
      round_wm = round_wm < c.session_cap ? round_wm : c.session_cap;
      rows_wm = rows_wm < c.session_cap ? rows_wm : c.session_cap;
    }
    if (rc == SL_OK && c.sc->watermark)
      rc = c.sc->watermark(c.sink, c.rows_here ? rows_wm : round_wm, err);
    if (rc == SL_OK && !c.rows_here && rows_wm > c.rows_wm &&
        rows_wm != WM_MAX) {
      rc = c.dist->send_wm(&c.export, rows_wm, err);
      c.rows_wm = rows_wm; /* WM_MAX: the node's DONE says so */
    }
    /* Late records written this round are committed with it. */
    if (rc == SL_OK && q.late)
      rc = late_output_commit(q.late, err);
    if (rc != SL_OK)
      break;
    /* A partition leader that has its LIMIT still reads on: its workers'
     * state for the other partitions is what their leaders' rows are made
     * of (the shell cancels every node once it has its rows). */
    if (c.limit_reached && !c.leaders)
      atomic_store(&cancel, true);
    bool all_done = true;
    int failed = -1, broken = -1;
    for (int i = 0; i < started; i++) {
      pthread_mutex_lock(&ws[i].lock);
      all_done &= ws[i].done;
      /* Once LIMIT has its rows the workers are cancelled: one stopped in
       * the exchange (waiting for a credit) says SL_ECANCELLED, and the
       * workers it aborted its channels for say so too.  That is the stop
       * we asked for, not an error (it failed the query now and then). */
      bool stopped = c.limit_reached && ws[i].rc == SL_ECANCELLED;
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
      /* Wait a little for the cause (every node ends once one fails). */
      double now = sl_clock_seconds();
      if (cause_deadline == 0)
        cause_deadline = now + 2.0;
      if (all_done || now >= cause_deadline)
        failed = broken;
    }
    if (failed >= 0 && rc == SL_OK) {
      pthread_mutex_lock(&ws[failed].lock);
      sl_error_move(err, &ws[failed].err);
      rc = ws[failed].rc;
      pthread_mutex_unlock(&ws[failed].lock);
      /* Every error says something, and keeps its code: a node's
       * SL_ECANCELLED must reach the coordinator as a consequence. */
      if (!err->message)
        sl_error_set(err, rc, "%s %d stopped",
                     coordinator_of_nodes ? "node" : "worker", failed);
    }
    if (rc != SL_OK)
      break;
    if (all_done && c.leaders) {
      /* A leader is done when every node (this one included, which the
       * round above told) has sent everything and every window of its
       * partition has fired; until then it waits for the others. */
      if (c.dist->leaders_finished(c.leaders))
        break;
    } else if (all_done) {
      /* One last pass: the workers' final windows and batches. */
      rc = fires ? fire_windows(&c, ws, started, &progress)
                 : drain_batches(&c, ws, started, &progress);
      /* The row of a GROUP BY without keys over no input: written by the
       * process that owns the empty key (the only one, or under a
       * repartition between nodes the node whose worker owns it, as
       * worker.c routes). */
      uint8_t none[8] = {0};
      int owner =
          q.key_layout && plan->nkeys == 0
              ? (int)((sl_key_hash(q.key_layout, none) >> 32) % (uint64_t)q.xn)
              : -1;
      bool mine = c.export.fd < 0 ||
                  (across && owner >= q.xbase && owner < q.xbase + q.nworkers);
      if (rc == SL_OK && c.updates && mine) {
        rc = update_result_finish(c.updates, emit_changes, &c, err);
        if (rc == SL_OK)
          rc = finish_window(&c);
      }
      if (rc == SL_OK && c.sc->watermark)
        rc = c.sc->watermark(c.sink, WM_MAX, err);
      break;
    }
    if (shell && shell->progress && sl_clock_seconds() >= next_progress) {
      report_progress(shell, ws, started, &c, start_clock);
      next_progress = sl_clock_seconds() + 0.25;
    } else if (node && !c.rows_here && sl_clock_seconds() >= next_progress) {
      rc = send_progress(&c, ws, started, err);
      next_progress = sl_clock_seconds() + 0.25;
      if (rc != SL_OK)
        break;
    }
    if (sl_interrupt_pending() ||
        (node && nodes->cancel && atomic_load(nodes->cancel))) {
      rc = sl_error_set(err, SL_ECANCELLED, "query cancelled");
      break;
    }
    /* (A leaf whose rows stay here runs beside this process's stages,
     * which own the coordinator connection: another thread's frames
     * there would cut into theirs.) */
    if (node && !ready_sent && !c.rows_here) {
      pthread_mutex_lock(&shared.lock);
      bool ready = shared.start_time > 0;
      pthread_mutex_unlock(&shared.lock);
      if (ready) {
        rc =
            sl_frame_out_send(&c.export, SL_FRAME_READY, NULL, 0, NULL, 0, err);
        ready_sent = true;
        if (rc != SL_OK)
          break;
      }
    }
    if (c.export_partials && plan->kind == SL_PLAN_AGGREGATE) {
      rc = export_watermark(&c, ws, started);
      if (rc != SL_OK)
        break;
    }
    if (!progress) {
      struct timespec until = sl_clock_deadline_ms(20);
      pthread_mutex_lock(&shared.lock);
      pthread_cond_timedwait(&shared.cond, &shared.lock, &until);
      pthread_mutex_unlock(&shared.lock);
    }
  }
  if (shell && shell->progress)
    shell->progress(shell->ctx, NULL);
  if (rc != SL_OK && c.leaders)
    c.dist->leaders_abort(c.leaders);
  if (rc != SL_OK || c.limit_reached) {
    atomic_store(&cancel, true);
    if (q.channels)
      for (int i = 0; i < q.xn * q.xn; i++)
        if (q.channels[i])
          sl_channel_abort(q.channels[i], SL_ECANCELLED);
  }
  for (int i = 0; i < started; i++)
    pthread_join(ws[i].thread, NULL);
  if (c.leaders) {
    c.dist->leaders_counts(c.leaders, &stats->epochs_sent, &stats->state_moved);
    c.dist->leaders_close(c.leaders);
    c.leaders = NULL;
  }

  if (rc == SL_OK)
    rc = flush_out(&c);
  if (c.sorted) {
    /* ORDER BY: now that the input has ended, the rows in order. */
    double s0 = sl_clock_seconds();
    if (rc == SL_OK)
      rc = sorted_result_emit(c.sorted, plan->order, plan->norder, write_sorted,
                              &c, &c.limit_reached, err);
    sorted_result_free(c.sorted);
    c.sorted = NULL;
    c.emit_seconds += sl_clock_seconds() - s0;
  }
  double t1 = sl_clock_seconds();
  if (rc == SL_OK && c.sc->commit)
    rc = c.sc->commit(c.sink, err);
  rc = sl_sink_close_after(c.sc, c.sink, rc, err);
  if (q.late_owned) {
    stats->late_written = q.late->written;
    rc = late_output_close(q.late, rc, err);
  }

  stats->workers = q.nworkers;
  /* From the moment every source was open (pre-generated input ready). */
  pthread_mutex_lock(&shared.lock);
  double start = shared.start_time > 0 ? shared.start_time : t0;
  pthread_mutex_unlock(&shared.lock);
  stats->seconds = t1 - start;
  stats->rows_out = c.rows_out;
  stats->windows_fired = c.windows;
  stats->groups_emitted = c.groups;
  stats->merge_seconds = c.merge_seconds;
  stats->emit_seconds = c.emit_seconds;
  stats->table_rows = q.table_nrows;
  for (int i = 0; i < started; i++) {
    stats->events += atomic_load(&ws[i].events);
    stats->rows_filtered += ws[i].rows_filtered;
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
    if (rows_from_nodes) { /* the nodes fired and finalized */
      if (ws[i].windows_fired > stats->windows_fired)
        stats->windows_fired = ws[i].windows_fired;
      stats->groups_emitted += ws[i].groups_emitted;
    }
    if (coordinator_of_nodes) { /* the slowest node's compile */
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
    window_partial *p = ws[i].partials;
    while (p) {
      window_partial *next = p->next;
      sl_group_table_free(p->table);
      free(p->table);
      free(p);
      p = next;
    }
    out_batch *lists[2] = {ws[i].batches, ws[i].free_batches};
    for (int l = 0; l < 2; l++)
      for (out_batch *b = lists[l]; b;) {
        out_batch *next = b->next;
        sl_buffer_free(&b->buf);
        free(b);
        b = next;
      }
    for (session_fragment *f = ws[i].fragments; f;) {
      session_fragment *next = f->next;
      session_fragment_free(f);
      f = next;
    }
    if (ws[i].sessions) {
      sl_memory_charge(q.memory, &ws[i].sessions_charged, 0);
      session_store_free(ws[i].sessions);
      free(ws[i].sessions);
    }
    sl_error_clear(&ws[i].err);
    pthread_mutex_destroy(&ws[i].lock);
    pthread_cond_destroy(&ws[i].drained);
    pthread_mutex_destroy(&ws[i].send_lock);
  }
  free(ws);
  pthread_mutex_destroy(&shared.lock);
  pthread_cond_destroy(&shared.cond);
  sl_buffer_free(&c.out_rows);
  if (q.agg_layout)
    sl_buffer_free(&c.agg_rows);
  free(c.sel);
  if (c.sessions) {
    sl_memory_charge(q.memory, &c.sessions_charged, 0);
    session_store_free(c.sessions);
    free(c.sessions);
  }
  if (c.updates)
    update_result_free(c.updates);
  sl_expr_ctx_free(c.ctx);
  free_query(&q);
  return rc;
}
