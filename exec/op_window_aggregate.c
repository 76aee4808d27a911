/* op_window_aggregate.c - the coordinator's side of a windowed (or
 * updating) GROUP BY: fire a window once every worker's watermark has
 * passed it, merge the workers' (or nodes') partial states, finalize the
 * groups; on a node, export partials or run a partition leader's round.
 * Session windows, which merge per key, are op_session_windows.c. */
#include <stdlib.h>
#include <string.h>

#include "coordinator_int.h"
#include "sluice/common/clock.h"

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

/* An updating result: merge a delta (a worker's or node's changes) and
 * send what changed. */
static int merge_changes(coordinator *c, const sl_group_table *delta) {
  uint64_t before = c->updates->changes;
  int rc =
      update_result_merge(c->updates, delta, sl_coord_emit_changes, c, c->err);
  c->groups += c->updates->changes - before;
  uint64_t held = update_result_bytes(c->updates);
  uint64_t total;
  bool over =
      sl_memory_grew_over(c->q->memory, &c->updates_charged, held, &total);
  if (rc == UPDATE_RESULT_OVER_LIMIT) /* stopped before the table doubled */
    over = true, rc = SL_OK;
  if (over && rc == SL_OK)
    rc = sl_memory_over_error(
        c->err, c->q->memory, held, total, "add a window so that groups end",
        "the GROUP BY's state (every group's merged state, %llu groups) holds",
        (unsigned long long)c->updates->table.count);
  return rc;
}

/* Finalize every group of table t (a merged window, or under
 * repartitioning one owner's complete share of it) into aggregate rows. */
static int emit_groups(coordinator *c, int64_t start, int64_t end,
                       const sl_group_table *t) {
  exec_query *q = c->q;
  const sl_plan *plan = q->plan;
  const sl_row_layout *al = q->agg.agg_layout, *kl = q->agg.key_layout;
  int nk = plan->nkeys, na = plan->naggs;
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    uint8_t *row = sl_buffer_append(&c->agg_rows);
    if (!row) {
      int rc = sl_coord_finish_agg_rows(c);
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
      int rc = sl_agg_finalize(&q->agg.aggs, g, sl_group_table_states(t, i),
                               &c->agg_rows, row, nk + g, c->err);
      if (rc == 1) { /* heap full: finish what we have, then redo this row */
        c->agg_rows.nrows--;
        rc = sl_coord_finish_agg_rows(c);
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
int sl_coord_finish_window(coordinator *c) {
  int rc = sl_coord_finish_agg_rows(c);
  if (rc == SL_OK)
    rc = sl_coord_flush_out(c);
  if (rc == SL_OK && c->sc->commit)
    rc = c->sc->commit(c->sink, c->err);
  c->windows++;
  return rc;
}

/* A node about to send window `end`'s partial when its credits (node_frames.h)
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
int sl_coord_fire_windows(coordinator *c, worker *ws, int n, bool *progress) {
  if (c->sessions)
    return sl_coord_fire_sessions(c, ws, n, progress);
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
          rc = sl_coord_finish_agg_rows(c);
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
      rc = sl_coord_finish_window(c);
    /* Every window ending at or before `next` is written (windows fire
     * in order of their end): a stage above may start on it now. */
    if (any && rc == SL_OK && c->wm_each_window && !c->sorted && unit > 0 &&
        next != WM_MAX)
      rc = c->sc->watermark(c->sink, next - unit, c->err);
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
int64_t sl_coord_workers_watermark(worker *ws, int n) {
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
int sl_coord_export_watermark(coordinator *c, worker *ws, int n) {
  int64_t global = sl_coord_workers_watermark(ws, n);
  if (global <= c->exported_wm || global == WM_MAX)
    return SL_OK; /* WM_MAX: the node's DONE says so */
  bool progress = false;
  int rc = sl_coord_fire_windows(c, ws, n, &progress);
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
int sl_coord_leaders_round(coordinator *c, worker *ws, int n, bool *progress) {
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
      rc = sl_coord_finish_window(c); /* rows copy the table's strings */
    c->dist->window_free(w);
    *progress = true;
  }
  c->emit_seconds += sl_clock_seconds() - t1;
  return rc;
}
