/* op_session_windows.c - the coordinator's side of SESSION windows: merge
 * the workers' closed session fragments per key and emit a merged session
 * once no open session anywhere can still reach it.  Separate from
 * op_window_aggregate.c: sessions merge per key, not per window. */
#include <stdlib.h>
#include <string.h>

#include "coordinator_int.h"
#include "sluice/common/clock.h"

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
  const sl_row_layout *al = q->agg.agg_layout, *kl = q->agg.key_layout;
  int nk = plan->nkeys, na = plan->naggs;
  for (int attempt = 0; attempt < 2; attempt++) {
    uint8_t *row = sl_buffer_append(&c->agg_rows);
    if (!row) {
      int rc = sl_coord_finish_agg_rows(c);
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
      rc = sl_agg_finalize(&q->agg.aggs, g, ss->states, &c->agg_rows, row,
                           nk + g, c->err);
    if (rc == 1) { /* heap full: finish the rows so far, then retry */
      c->agg_rows.nrows--;
      rc = sl_coord_finish_agg_rows(c);
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

int sl_coord_fire_sessions(coordinator *c, worker *ws, int n, bool *progress) {
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
        !session_store_add(c->sessions,
                           sl_key_hash(c->q->agg.key_layout, f->key), f->key,
                           f->start, f->end, f->states, WM_MIN, c->err))
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
    rc = sl_coord_finish_agg_rows(c);
  if (rc == SL_OK)
    rc = sl_coord_flush_out(c);
  if (rc == SL_OK && c->sc->commit)
    rc = c->sc->commit(c->sink, c->err);
  c->emit_seconds += sl_clock_seconds() - t1;
  return rc;
}
