/* worker.c - one worker thread: read its share of the stream and run the
 * whole pipeline on it, keeping its own partial window state.
 *
 * Per buffer: filter, (lookup join), then either project into output
 * batches, or evaluate event time, watermark, group keys and aggregate
 * arguments into a "tmp" row per record and fold each record into the
 * group table of its slice.  After each buffer the worker hands over every
 * window its own watermark has passed (late merge: the coordinator merges
 * the partials of all workers).
 *
 * Slices: a tumbling window is one slice; a hopping window of size S and
 * slide L is S/L slices of length L shared by the windows that overlap
 * them; a cumulating window of step T is made of slices of length T.  A
 * record updates exactly one slice, whatever the overlap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor_int.h"
#include "late_output.h"
#include "sluice/common/clock.h"
#include "sluice/state/session_store.h"
#include "sluice/state/window_assign.h"
#include "worker_int.h"

/* worker_state and slice: worker_int.h */

static int keep_late_record(worker_state *s, const sl_buffer *in, uint32_t i);
static int keep_late_tmp_record(worker_state *s, const uint8_t *tmp);
static void copy_record_into_tmp(worker_state *s, const uint8_t *record,
                                 uint8_t *tmp);

/* ---- slices ----------------------------------------------------------------
 */

static sl_group_table *slice_table(worker_state *s, int64_t start) {
  if (s->last < s->nslices && s->slices[s->last].start == start)
    return s->slices[s->last].table;
  int lo = 0, hi = s->nslices;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (s->slices[mid].start < start)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < s->nslices && s->slices[lo].start == start) {
    s->last = lo;
    return s->slices[lo].table;
  }
  if (s->nslices == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 8;
    s->slices = realloc(s->slices, sizeof(slice) * (size_t)s->cap);
    if (!s->slices)
      abort();
  }
  memmove(&s->slices[lo + 1], &s->slices[lo],
          sizeof(slice) * (size_t)(s->nslices - lo));
  sl_group_table *t = malloc(sizeof *t);
  if (!t)
    abort();
  sl_group_table_init_pooled(t, s->q->key_layout, &s->q->aggs, 64,
                             s->q->slot_pool);
  s->slices[lo].start = start;
  s->slices[lo].table = t;
  s->nslices++;
  s->last = lo;
  return t;
}

static void drop_slice(worker_state *s, int i, bool free_table) {
  if (free_table) {
    sl_group_table_free(s->slices[i].table);
    free(s->slices[i].table);
  }
  memmove(&s->slices[i], &s->slices[i + 1],
          sizeof(slice) * (size_t)(s->nslices - i - 1));
  s->nslices--;
  s->last = 0;
}

/* Whether dest should hear from this worker at the end of an input
 * buffer rather than when the slot for it is full: when the slot is half
 * full anyway, or when this worker's watermark has moved into another
 * slice since dest last heard from it (dest may be able to fire a window:
 * then even an empty slot goes, carrying the watermark, or an owner that
 * gets no rows from here would never fire), or when the watermark moved
 * at all for session windows (a session closes at any time).  Publishing
 * every buffer's few rows would send mostly empty slots. */
static bool exchange_due(worker_state *s, int dest) {
  bool active = s->out_active[dest];
  if (active) {
    const sl_buffer *b = &s->out_slots[dest];
    if ((uint64_t)b->nrows * b->layout->width + b->heap_used >= b->cap / 2)
      return true;
  }
  const sl_plan *plan = s->plan;
  if (!plan->windowed)
    return false; /* a global aggregate needs the rows only at the end */
  const sl_plan_window *pw = &plan->window;
  if (pw->proctime)
    return active;
  int64_t was = s->sent_wm[dest], now = s->local_wm;
  if (now == was || now == WM_MIN)
    return false;
  if (pw->kind == SL_WINDOW_SESSION || was == WM_MIN || now == WM_MAX)
    return true;
  return slice_of(pw, was + pw->unit_us) != slice_of(pw, now + pw->unit_us);
}

/* Whether the coordinator has news from this worker (see worker_state's
 * news): it is woken for that, or else finds the rest (progress, event
 * counts) on its own periodic wake-up. */
static bool worth_waking(worker_state *s) {
  bool news = s->news;
  s->news = false;
  int64_t was = s->signalled_wm, now = s->wm;
  if (now == was)
    return news;
  s->signalled_wm = now;
  const sl_plan_window *pw = &s->plan->window;
  if (s->plan->kind != SL_PLAN_AGGREGATE || !s->plan->windowed)
    return news; /* no window waits on the watermark */
  if (pw->kind == SL_WINDOW_SESSION || was == WM_MIN || now == WM_MAX)
    return true;
  return news ||
         slice_of(pw, was + pw->unit_us) != slice_of(pw, now + pw->unit_us);
}

static void publish_partial(worker_state *s, int64_t start, int64_t end,
                            sl_group_table *t) {
  worker *w = s->w;
  s->news = true;
  window_partial *p = malloc(sizeof *p);
  if (!p)
    abort();
  p->start = start;
  p->end = end;
  p->table = t;
  p->queued_bytes = sl_group_table_bytes(t);
  p->next = NULL;
  t->growth_held = false; /* handed over: it grows no more */
  pthread_mutex_lock(&w->lock);
  if (w->partials_tail)
    w->partials_tail->next = p;
  else
    w->partials = p;
  w->partials_tail = p;
  w->queued++;
  w->queued_bytes += p->queued_bytes;
  pthread_mutex_unlock(&w->lock);
}

typedef struct closing {
  worker_state *s;
  session_fragment *head, *tail;
} closing;

static bool session_closes(void *arg, const session *ss) {
  const worker_state *s = ((closing *)arg)->s;
  return s->wm == WM_MAX || ss->end - s->plan->window.unit_us <= s->wm;
}

static int session_fragment_out(void *arg, const uint8_t *key,
                                const session *ss) {
  closing *c = arg;
  const sl_agg_set *aggs = &c->s->q->aggs;
  uint32_t kw = c->s->q->key_layout->width;
  session_fragment *f = malloc(sizeof *f);
  uint8_t *k = malloc(kw ? kw : 1);
  uint8_t *st = malloc(aggs->state_width + 1);
  if (!f || !k || !st)
    abort();
  memcpy(k, key, kw); /* its long strings stay in the store's arena */
  /* The states are copied (the store reuses the session): their
   * out-of-line parts into the fragment's arena, which allocates nothing
   * for plain numeric states. */
  sl_arena_init(&f->arena, 1024);
  sl_agg_state_init(aggs, st);
  int rc = sl_agg_merge(aggs, st, ss->states, &f->arena, &c->s->w->err);
  f->start = ss->start;
  f->end = ss->end;
  f->key = k;
  f->states = st;
  f->queued_bytes = sizeof *f + kw + aggs->state_width + 1024;
  f->held_bytes = sizeof *f + kw + aggs->state_width + 1 + f->arena.total;
  f->next = NULL;
  if (rc != SL_OK) {
    session_fragment_free(f);
    return rc;
  }
  if (c->tail)
    c->tail->next = f;
  else
    c->head = f;
  c->tail = f;
  return SL_OK;
}

/* Session windows: hand over the sessions the watermark has closed, with
 * the earliest start of those still open (the coordinator must not fire a
 * merged session that an open one here could still join). */
static int hand_over_sessions(worker_state *s) {
  worker *w = s->w;
  closing c = {s, NULL, NULL};
  session_store *st = s->sessions;
  if (st &&
      (s->wm == WM_MAX || st->min_end - s->plan->window.unit_us <= s->wm)) {
    int rc = session_store_close(st, session_closes, session_fragment_out, &c,
                                 &w->err);
    if (rc != SL_OK) {
      while (c.head) {
        session_fragment *next = c.head->next;
        session_fragment_free(c.head);
        c.head = next;
      }
      return rc;
    }
  }
  pthread_mutex_lock(&w->lock);
  if (c.head) {
    s->news = true;
    if (w->fragments_tail)
      w->fragments_tail->next = c.head;
    else
      w->fragments = c.head;
    w->fragments_tail = c.tail;
    for (session_fragment *f = c.head; f; f = f->next) {
      w->queued++;
      w->queued_bytes += f->queued_bytes;
    }
  }
  w->min_open_start = st ? st->min_start : WM_MAX;
  w->published_wm = s->wm;
  pthread_mutex_unlock(&w->lock);
  return SL_OK;
}

/* Late merge at partition leaders: an epoch ends.  Hand over what changed
 * since the last epoch in every open window by swapping its slice's table
 * for a fresh one and publishing the old one as a delta: partial states
 * are CRDTs, so a leader merging deltas gets what merging whole windows
 * would, and nothing is scanned to find the changes.  A tumbling window
 * is one slice; a hopping or cumulating window's slice belongs to several
 * windows, so its delta goes to each of them that this worker has not
 * handed over yet (a copy per window: epochs are rare, 64 MiB of input by
 * default, and the leader then merges whole windows as for tumbling ones).
 * At the window's end only what arrived after the swap is left to send. */
static int hand_over_epoch(worker_state *s) {
  const sl_plan *plan = s->plan;
  const sl_plan_window *pw = &plan->window;
  for (int i = 0; i < s->nslices; i++) {
    sl_group_table *old = s->slices[i].table;
    if (old->count == 0)
      continue;
    sl_group_table *fresh = malloc(sizeof *fresh);
    if (!fresh)
      abort();
    /* Sized for as many groups as the last epoch had, when the memory
     * limit has room for that at once; else grown as groups come (each
     * doubling asks the limit first). */
    uint32_t cap = old->count;
    if (!sl_memory_room_for(s->q->memory, (uint64_t)cap * 2 * old->entry_width))
      cap = 1024;
    sl_group_table_init_pooled(fresh, s->q->key_layout, &s->q->aggs, cap,
                               s->q->slot_pool);
    s->slices[i].table = fresh;
    int64_t start = s->slices[i].start;
    if (!plan->windowed) {
      publish_partial(s, WM_MIN, WM_MAX, old);
      continue;
    }
    if (pw->kind == SL_WINDOW_TUMBLE) {
      publish_partial(s, start, first_end(pw, start), old);
      continue;
    }
    /* Every window of this slice not handed over yet (its end at or after
     * next_end); the last one takes `old` itself. */
    int64_t last = last_end(pw, start), first = first_end(pw, start);
    if (first < s->next_end)
      first +=
          sl_floor_div(s->next_end - first + pw->slide_us - 1, pw->slide_us) *
          pw->slide_us;
    for (int64_t end = first; end <= last; end += pw->slide_us) {
      sl_group_table *t = old;
      if (end + pw->slide_us <= last) {
        t = malloc(sizeof *t);
        if (!t)
          abort();
        sl_group_table_init_pooled(t, s->q->key_layout, &s->q->aggs, old->count,
                                   s->q->slot_pool);
        int rc = sl_group_table_merge(t, old, &s->w->err);
        if (rc != SL_OK) {
          sl_group_table_free(t);
          free(t);
          return rc;
        }
      }
      publish_partial(s, window_start(pw, end), end, t);
      if (t == old)
        old = NULL;
    }
    if (old) { /* (no window left: cannot happen for a held slice) */
      sl_group_table_free(old);
      free(old);
    }
  }
  return SL_OK;
}

/* Hand over every window that ends at or before the watermark. */
static int hand_over_windows(worker_state *s) {
  const sl_plan *plan = s->plan;
  worker *w = s->w;
  /* The partial state this worker holds now (before handing any over). */
  uint64_t bytes = s->sessions ? session_store_bytes(s->sessions) : 0;
  for (int i = 0; i < s->nslices; i++)
    bytes += sl_group_table_bytes(s->slices[i].table);
  if (bytes > w->state_bytes_peak)
    w->state_bytes_peak = bytes;
  /* With what it handed over that the coordinator has not taken yet (the
   * epochs' deltas of an updating GROUP BY pile up there when merging is
   * slower than the workers). */
  uint32_t queued = 0;
  bytes += sl_exec_partials_bytes(w, &queued);
  /* Every worker's state counts against the memory limit with the rest of
   * the query's on this host: more stops the query rather than the
   * machine. */
  uint64_t total;
  if (!sl_memory_grew_over(s->q->memory, &s->memory_charged, bytes, &total))
    ;
  else if (s->sessions)
    return sl_memory_over_error(
        &w->err, s->q->memory, bytes, total, "use a shorter gap or fewer keys",
        "the SESSION windows' state in worker %d (%llu open session%s, %u "
        "handed over and not merged yet) holds",
        w->index, (unsigned long long)s->sessions->open,
        s->sessions->open == 1 ? "" : "s", queued);
  else
    return sl_memory_over_error(
        &w->err, s->q->memory, bytes, total,
        "use shorter windows or fewer keys",
        "the %s's state in worker %d (%d open window slice%s, %u handed "
        "over and not merged yet) holds",
        plan->windowed ? "windowed GROUP BY" : "GROUP BY", w->index, s->nslices,
        s->nslices == 1 ? "" : "s", queued);
  if (plan->windowed && plan->window.kind == SL_WINDOW_SESSION)
    return hand_over_sessions(s);
  if (!plan->windowed) {
    /* A global aggregate: one "window" that closes at the end of input. */
    if (s->wm == WM_MAX && s->nslices > 0) {
      publish_partial(s, WM_MIN, WM_MAX, s->slices[0].table);
      drop_slice(s, 0, false);
    }
  } else {
    const sl_plan_window *pw = &plan->window;
    while (s->nslices > 0 && s->next_end != WM_MAX &&
           (s->wm == WM_MAX || s->next_end - pw->unit_us <= s->wm)) {
      int64_t end = s->next_end;
      int64_t start = window_start(pw, end);
      if (pw->kind == SL_WINDOW_TUMBLE) {
        /* The window is exactly one slice: hand over its table. */
        for (int i = 0; i < s->nslices; i++)
          if (s->slices[i].start == start) {
            publish_partial(s, start, end, s->slices[i].table);
            drop_slice(s, i, false);
            break;
          }
      } else {
        sl_group_table *merged = NULL;
        for (int i = 0; i < s->nslices; i++) {
          int64_t st = s->slices[i].start;
          if (st < start || st >= end)
            continue;
          if (!merged) {
            merged = malloc(sizeof *merged);
            if (!merged)
              abort();
            sl_group_table_init_pooled(merged, s->q->key_layout, &s->q->aggs,
                                       s->slices[i].table->count,
                                       s->q->slot_pool);
          }
          int rc = sl_group_table_merge(merged, s->slices[i].table, &w->err);
          if (rc != SL_OK)
            return rc;
        }
        if (merged)
          publish_partial(s, start, end, merged);
        /* Slices whose last window this was are no longer needed. */
        for (int i = 0; i < s->nslices;)
          if (last_end(pw, s->slices[i].start) <= end)
            drop_slice(s, i, true);
          else
            i++;
      }
      /* The next window end with data: the earliest end above `end` that
       * includes the oldest remaining slice. */
      if (s->nslices == 0) {
        s->next_end = WM_MAX;
      } else {
        int64_t s0 = s->slices[0].start;
        int64_t e = first_end(pw, s0);
        if (e <= end)
          e = end + window_step(pw);
        s->next_end = e;
      }
    }
  }
  pthread_mutex_lock(&w->lock);
  w->published_wm = s->wm;
  pthread_mutex_unlock(&w->lock);
  return SL_OK;
}

/* ---- per-buffer processing ---------------------------------------------- */

static int eval_rows(worker_state *s, sl_expr_prog *const *progs, int nprogs,
                     const sl_buffer *in, const uint32_t *sel, uint32_t n,
                     sl_buffer *out) {
  return sl_exec_eval_rows(progs, nprogs, in, sel, n, out, s->ctx, &s->w->err);
}

static out_batch *new_batch(worker_state *s) {
  return sl_exec_take_batch(s->w, s->q->buffer_size);
}

static void publish_batch(worker_state *s, out_batch *b) {
  s->news = true;
  sl_exec_publish_batch(s->w, b);
}

/* Window rows whose first windows had fired: where their windows begin,
 * in the leaf's hidden last column (NULL, as the plan writes it, for the
 * others). */
static void mark_live_windows(worker_state *s, sl_buffer *out,
                              uint32_t first_row, const uint32_t *sel,
                              uint32_t k) {
  const sl_row_layout *l = out->layout;
  int f = l->nfields - 1;
  for (uint32_t j = 0; j < k; j++) {
    uint32_t i = s->origin ? s->origin[sel[j]] : sel[j];
    if (s->live_from[i] == WM_MIN)
      continue;
    uint8_t *row = sl_buffer_row(out, first_row + j);
    sl_row_set_null(row, f, false);
    SL_FIELD(row, l, f, int64_t) = s->live_from[i];
  }
}

static int project(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                   uint32_t n) {
  exec_query *q = s->q;
  uint32_t done = 0;
  while (done < n) {
    out_batch *b = new_batch(s);
    uint32_t first_row = b->buf.nrows;
    int k = eval_rows(s, q->out_progs, q->plan->nout, in, sel + done, n - done,
                      &b->buf);
    if (k < 0) {
      publish_batch(s, b);
      return k;
    }
    if (s->partly_late)
      mark_live_windows(s, &b->buf, first_row, sel + done, (uint32_t)k);
    if (k == 0 && b->buf.nrows == 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "an output row is larger than a buffer (%u bytes); "
                          "raise SET 'sluice.buffer-size'",
                          q->buffer_size);
    done += (uint32_t)k;
    publish_batch(s, b);
  }
  return SL_OK;
}

/* Fold the watermark of input rows [wm_next, upto) into the worker's. */
void sl_worker_advance_watermark(worker_state *s, uint32_t upto) {
  if (!s->wm_values.data)
    return;
  const sl_row_layout *l = s->wm_values.layout;
  for (uint32_t i = s->wm_next; i < upto && i < s->wm_values.nrows; i++) {
    const uint8_t *row = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(row, 0) && SL_FIELD(row, l, 0, int64_t) > s->local_wm)
      s->local_wm = SL_FIELD(row, l, 0, int64_t);
  }
  if (upto > s->wm_next)
    s->wm_next = upto;
  if (!s->input_wm)
    s->wm = s->local_wm; /* late merge: the operator's is its own */
}

/* The group key of a tmp row: its key fields copied into s->keyrow (for
 * hashing, the state's group table and routing to the owner). */
static void key_row_of(worker_state *s, const uint8_t *row) {
  const exec_query *q = s->q;
  const sl_row_layout *tl = q->tmp_layout;
  const sl_row_layout *kl = q->key_layout;
  memset(s->keyrow, 0, kl->width);
  for (int i = 0; i < kl->nfields; i++) {
    int tf = q->tmp_keys + i;
    if (sl_row_is_null(row, tf))
      sl_row_set_null(s->keyrow, i, true);
    else
      memcpy(s->keyrow + kl->fields[i].offset, row + tl->fields[tf].offset,
             kl->fields[i].size);
  }
}

/* Fold one tmp row into state.  late_wm decides whether the record is late
 * (the watermark of the worker that read it, just before it: under late
 * merge this worker's, under repartition the sender's, so both strategies
 * drop the same records); wm is this worker's operator watermark, which
 * says which windows and sessions have already been handed over. */
int sl_worker_fold_row(worker_state *s, const uint8_t *row, int64_t late_wm,
                       int64_t proc_now) {
  const int64_t wm = s->wm;
  exec_query *q = s->q;
  const sl_plan *plan = q->plan;
  const sl_plan_window *pw = &plan->window;
  const sl_row_layout *tl = q->tmp_layout;
  const sl_row_layout *kl = q->key_layout;
  key_row_of(s, row);
  uint64_t hash = sl_key_hash(kl, s->keyrow);
  int64_t start = 0;
  uint8_t *st = NULL;
  sl_arena *arena = NULL;
  if (plan->windowed) {
    int64_t ts;
    if (pw->proctime) {
      ts = proc_now;
    } else {
      if (sl_row_is_null(row, q->tmp_time))
        return sl_error_set(&s->w->err, SL_EINVAL,
                            "a record has a NULL event time; the time "
                            "attribute of a window must not be NULL");
      ts = SL_FIELD(row, tl, q->tmp_time, int64_t);
    }
    if (pw->kind == SL_WINDOW_SESSION) {
      /* [ts, ts + gap) joins the key's sessions it touches; alone and
       * already behind the watermark, it is late. */
      int64_t end = ts + pw->gap_us;
      if (!s->sessions) {
        s->sessions = malloc(sizeof *s->sessions);
        if (!s->sessions)
          abort();
        session_store_init(s->sessions, kl, &q->aggs);
        /* Fragments copy the states they hand over. */
        s->sessions->reuse_closed = true;
      }
      /* Sessions the watermark has passed are closed, whichever of the two
       * watermarks passed them (under repartition the sender's may be
       * ahead of this worker's). */
      int64_t cw = late_wm > wm ? late_wm : wm;
      int64_t closed_end = cw == WM_MIN ? WM_MIN : cw + pw->unit_us;
      int64_t late_end = late_wm == WM_MIN ? WM_MIN : late_wm + pw->unit_us;
      if (end <= late_end &&
          !session_store_overlaps(s->sessions, hash, s->keyrow, ts, end,
                                  closed_end)) {
        /* to the late table, whole: from the tmp row under repartitioning
         * (the reading worker copied it there), else from the input */
        if (q->tmp_record >= 0 && q->channels)
          return keep_late_tmp_record(s, row);
        if (s->late_in)
          return keep_late_record(s, s->late_in, s->late_input_row);
        s->w->late++;
        return SL_OK;
      }
      session *ss = session_store_add(s->sessions, hash, s->keyrow, ts, end,
                                      NULL, closed_end, &s->w->err);
      if (!ss)
        return s->w->err.code ? s->w->err.code : SL_EINTERNAL;
      st = ss->states;
      arena = &s->sessions->keys.arena;
    } else {
      start = slice_of(pw, ts);
      if (last_end(pw, start) - pw->unit_us <= late_wm) {
        s->w->late++; /* every window of this record has fired */
        return SL_OK;
      }
      int64_t fe = first_end(pw, start);
      if (fe - pw->unit_us <= wm) {
        /* Partly late (hopping, cumulating): its first windows have
         * fired, the later ones still count it. */
        fe += (sl_floor_div(wm + pw->unit_us - fe, pw->slide_us) + 1) *
              pw->slide_us;
      }
      if (fe < s->next_end)
        s->next_end = fe;
    }
  }
  if (!st) {
    sl_group_table *t = slice_table(s, start);
    st = sl_group_table_upsert(t, hash, s->keyrow);
    arena = &t->arena;
  }
  int rc = sl_agg_update(&q->aggs, st, row, arena, &s->w->err);
  if (rc != SL_OK)
    return rc;
  s->w->rows_state++;
  return SL_OK;
}

/* Fold the evaluated tmp rows of s->tmp into state (or send them to their
 * owners); tmp row r comes from row sel[r] of the buffer being processed. */
int sl_worker_fold_tmp(worker_state *s, const uint32_t *sel) {
  exec_query *q = s->q;
  if (q->k_fold && !q->channels)
    return sl_worker_fold_tmp_compiled(s, sel);
  const sl_plan_window *pw = &q->plan->window;
  const sl_row_layout *tl = q->tmp_layout;
  const sl_row_layout *kl = q->key_layout;
  bool exchange = q->channels != NULL;
  int me = q->xbase + s->w->index; /* in the exchange */
  /* the owners of all rows in one compiled loop, else per row below */
  bool routed = exchange && q->k_route;
  if (routed)
    sl_jit_route_run(q->k_route, s->tmp.data, s->tmp.nrows, s->dest);
  {
    int64_t proc_now = pw->proctime ? sl_now_us() : 0;
    for (uint32_t r = 0; r < s->tmp.nrows; r++) {
      uint8_t *row = sl_buffer_row(&s->tmp, r);
      uint32_t at = sel[r];
      uint32_t input_row = s->origin ? s->origin[at] : at;
      sl_worker_advance_watermark(s, input_row); /* the rows before this one */
      s->late_input_row = input_row;
      int rc;
      if (!exchange) {
        rc = sl_worker_fold_row(s, row, s->wm, proc_now);
      } else {
        /* The owner of the key folds it, judging lateness by its own
         * watermark; the record carries ours. */
        SL_FIELD(row, tl, q->tmp_wm_tag, int64_t) = s->local_wm;
        if (q->tmp_record >= 0)
          copy_record_into_tmp(s, sl_buffer_row(s->late_in, input_row), row);
        int dest;
        if (routed) {
          dest = (int)s->dest[r];
        } else {
          key_row_of(s, row);
          /* The owner from the hash's high bits: group tables index by the
           * low bits, and an owner's keys must not all share them (the
           * compiled route computes the same). */
          dest = (int)((sl_key_hash(kl, s->keyrow) >> 32) % (uint64_t)q->xn);
        }
        if (dest == me) {
          rc = sl_worker_fold_row(s, row, s->local_wm, proc_now);
        } else {
          rc = sl_exchange_send(s, dest, row);
        }
      }
      if (rc != SL_OK)
        return rc;
      sl_worker_advance_watermark(s, input_row + 1); /* and this one */
    }
  }
  return SL_OK;
}

/* After a buffer's rows are folded: processing-time windows close by the
 * clock. */
void sl_worker_aggregate_done(worker_state *s) {
  const sl_plan *plan = s->q->plan;
  if (plan->windowed && plan->window.proctime) {
    s->local_wm = sl_now_us();
    if (!s->q->channels)
      s->wm = s->local_wm;
  }
}

static int aggregate(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                     uint32_t n) {
  exec_query *q = s->q;
  uint32_t done = 0;
  while (done < n) {
    sl_buffer_clear(&s->tmp);
    int k = eval_rows(s, q->tmp_progs, q->tmp_layout->nfields, in, sel + done,
                      n - done, &s->tmp);
    if (k < 0)
      return k;
    if (k == 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "a record's keys and arguments are larger than a "
                          "buffer; raise SET 'sluice.buffer-size'");
    int rc = sl_worker_fold_tmp(s, sel + done);
    if (rc != SL_OK)
      return rc;
    done += (uint32_t)k;
  }
  sl_worker_aggregate_done(s);
  return SL_OK;
}

/* Lookup join: for each stream row, find the table rows with equal keys
 * and build joined rows (stream fields, then table fields) in s->joined.
 * Returns the number of stream rows consumed (all, or fewer when joined is
 * full) and fills sel2 with the joined rows.  pre: the keys of the rows,
 * already computed (rows pre_first.. of pre), or NULL. */
static int probe(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                 uint32_t n, const sl_buffer *pre, uint32_t pre_first,
                 uint32_t *consumed, uint32_t *nout) {
  exec_query *q = s->q;
  const sl_row_layout *kl = q->join_key_layout;
  const sl_row_layout *jl = q->joined_layout;
  const sl_row_layout *sl = q->stream_layout;
  const sl_row_layout *tl = q->table_layout;
  sl_buffer_clear(&s->joined);
  sl_buffer_clear(&s->tmp);
  /* Keys of the stream rows, evaluated into the tmp buffer's front (the
   * key layout's fields in order). */
  sl_buffer keys;
  sl_buffer_wrap(&keys, kl, s->tmp.data, s->tmp.cap);
  keys.borrow_strings = true; /* stream keys: the input outlives them */
  int k = (int)n;
  if (!pre) {
    k = eval_rows(s, q->stream_key_progs, q->nkey_progs, in, sel, n, &keys);
    if (k < 0)
      return k;
  }
  uint32_t out = 0, i = 0;
  uint32_t mask = q->table_cap - 1;
  uint32_t mark_rows = 0, mark_out = 0;
  for (; i < (uint32_t)k; i++) {
    mark_rows = s->joined.nrows;
    mark_out = out;
    const uint8_t *key =
        pre ? sl_buffer_row(pre, pre_first + i) : sl_buffer_row(&keys, i);
    bool null_key = false;
    for (int f = 0; f < kl->nfields; f++)
      null_key |= sl_row_is_null(key, f);
    if (null_key)
      continue; /* NULL never equals anything */
    uint64_t h = sl_key_hash(kl, key);
    for (uint32_t j = (uint32_t)h & mask; q->table_hash[j];
         j = (j + 1) & mask) {
      if (q->table_hash[j] != h)
        continue;
      uint32_t tr = q->table_slot_row[j];
      const uint8_t *tkey = q->table_keys[tr];
      bool eq = true;
      for (int f = 0; f < kl->nfields && eq; f++) {
        const sl_field *fd = &kl->fields[f];
        if (fd->ptype == SL_P_STR)
          eq = sl_str_equal((const sl_str *)(key + fd->offset),
                            (const sl_str *)(tkey + fd->offset));
        else
          eq = memcmp(key + fd->offset, tkey + fd->offset, fd->size) == 0;
      }
      if (!eq)
        continue;
      uint8_t *jr = sl_buffer_append(&s->joined);
      if (!jr)
        goto full;
      const uint8_t *sr = sl_buffer_row(in, sel[i]);
      const uint8_t *trow = q->table_rows[tr];
      /* Strings keep pointing into the input buffer or the loaded table,
       * both of which outlive the joined rows. */
      for (int f = 0; f < sl->nfields; f++) {
        sl_row_set_null(jr, f, sl_row_is_null(sr, f));
        memcpy(jr + jl->fields[f].offset, sr + sl->fields[f].offset,
               sl->fields[f].size);
      }
      for (int f = 0; f < tl->nfields; f++) {
        int jf = sl->nfields + f;
        sl_row_set_null(jr, jf, sl_row_is_null(trow, f));
        memcpy(jr + jl->fields[jf].offset, trow + tl->fields[f].offset,
               tl->fields[f].size);
      }
      s->joined_origin[s->joined.nrows - 1] = sel[i];
      s->sel2[out++] = s->joined.nrows - 1;
    }
  }
  *consumed = i;
  *nout = out;
  return SL_OK;
full:
  /* A stream row whose matches did not all fit is done again next round:
   * drop the matches it has so far. */
  s->joined.nrows = mark_rows;
  out = mark_out;
  *consumed = i;
  *nout = out;
  return SL_OK;
}

/* ---- a buffer's path (the compiled steps: worker_compiled.c) ------------- */

static int process_rows(worker_state *s, const sl_buffer *buf,
                        const uint32_t *sel, uint32_t n) {
  return s->plan->kind == SL_PLAN_STATELESS ? project(s, buf, sel, n)
                                            : aggregate(s, buf, sel, n);
}

static int process_filtered(worker_state *s, const sl_buffer *in, uint32_t n);
/* What the JIT's functions did with one buffer (process_filtered). */
typedef struct jit_use {
  bool ran;  /* a compiled function did (its share of) the step */
  bool back; /* a compiled step was handed back to, or left to, the
              * interpreter */
} jit_use;
static int process_steps(worker_state *s, const sl_buffer *in, uint32_t n,
                         jit_use *use);

/* The WATERMARK expression of input rows 0..n (s->sel is 0..n-1 here). */
static int eval_watermark(worker_state *s, const sl_buffer *in, uint32_t n) {
  sl_buffer_clear(&s->wm_values);
  int k = sl_exec_eval_rows(&s->q->wm_prog, 1, in, s->sel, n, &s->wm_values,
                            s->ctx, &s->w->err);
  return k < 0 ? k : SL_OK;
}

/* Side-output of session windows under repartitioning: the record read
 * (a row of stream_layout) rides in its tmp row to the key's owner. */
static void copy_record_into_tmp(worker_state *s, const uint8_t *record,
                                 uint8_t *tmp) {
  const exec_query *q = s->q;
  const sl_row_layout *sl = q->stream_layout;
  for (int f = 0; f < sl->nfields; f++)
    sl_row_copy_field(sl, record, f, q->tmp_layout, tmp, q->tmp_record + f);
}

/* Late records to a table: append row (of stream_layout) to s->late_rows,
 * writing them out first when it is full. */
static int keep_late_row(worker_state *s, const uint8_t *row) {
  if (sl_buffer_append_copy(&s->late_rows, row))
    return SL_OK;
  if (s->late_rows.nrows > 0) {
    int rc = late_output_write(s->q->late, &s->late_rows, &s->w->err);
    sl_buffer_clear(&s->late_rows);
    if (rc != SL_OK)
      return rc;
    if (sl_buffer_append_copy(&s->late_rows, row))
      return SL_OK;
  }
  return sl_error_set(&s->w->err, SL_EINVAL,
                      "a late record is larger than a buffer (%u bytes); "
                      "raise SET 'sluice.buffer-size'",
                      s->q->buffer_size);
}

/* Write out the late records kept so far (keep_late_row). */
static int write_late_rows(worker_state *s) {
  if (!s->q->late || s->late_rows.nrows == 0)
    return SL_OK;
  int rc = late_output_write(s->q->late, &s->late_rows, &s->w->err);
  sl_buffer_clear(&s->late_rows);
  return rc;
}

/* Input row i of in, late, to the late table. */
static int keep_late_record(worker_state *s, const sl_buffer *in, uint32_t i) {
  return keep_late_row(s, sl_buffer_row(in, i));
}

/* The record a tmp row carries (q->tmp_record), late, to the late table. */
static int keep_late_tmp_record(worker_state *s, const uint8_t *tmp) {
  const exec_query *q = s->q;
  const sl_row_layout *sl = q->stream_layout;
  for (int f = 0; f < sl->nfields; f++)
    sl_row_copy_field(q->tmp_layout, tmp, q->tmp_record + f, sl, s->late_record,
                      f);
  return keep_late_row(s, s->late_record);
}

/* The late candidates late_sel[0..*ncand) (input rows, ascending): those
 * the filter keeps (a record the query would not have read is not its late
 * record) go to the late table; *ncand becomes how many, late_sel them. */
static int write_late_candidates(worker_state *s, const sl_buffer *in,
                                 uint32_t *ncand) {
  exec_query *q = s->q;
  if (q->filter) {
    int rc =
        sl_expr_filter(q->filter, in, s->late_sel, ncand, s->ctx, &s->w->err);
    if (rc != SL_OK)
      return rc;
  }
  for (uint32_t j = 0; j < *ncand; j++) {
    int rc = keep_late_record(s, in, s->late_sel[j]);
    if (rc != SL_OK)
      return rc;
  }
  return write_late_rows(s);
}

/* For the late-record scans below: the watermark (wm_values) and the
 * event time (*time_prog into rowtimes) of each of the first n rows. */
static int eval_times(worker_state *s, const sl_buffer *in, uint32_t n,
                      sl_expr_prog **time_prog) {
  int rc = eval_watermark(s, in, n);
  sl_buffer_clear(&s->rowtimes);
  int k = rc == SL_OK ? sl_exec_eval_rows(time_prog, 1, in, s->sel, n,
                                          &s->rowtimes, s->ctx, &s->w->err)
                      : rc;
  return k < 0 ? k : SL_OK;
}

/* q->late_fast: might a row of the buffer be late?  The same rule as
 * below, on the time and watermark columns read directly; most buffers
 * have no late record and go on untouched. */
static bool has_late_candidate(const worker_state *s, const sl_buffer *in,
                               uint32_t n) {
  const exec_query *q = s->q;
  const sl_row_layout *l = in->layout;
  const sl_plan_window *pw = &s->plan->window;
  int tf = q->late_time_field, wf = q->late_wm_field;
  int64_t wm = s->local_wm;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = sl_buffer_row(in, i);
    if (!sl_row_is_null(row, tf)) {
      int64_t v = SL_FIELD(row, l, tf, int64_t);
      if (all_windows_fired(pw, v, wm))
        return true;
    }
    if (!sl_row_is_null(row, wf)) {
      int64_t w = SL_FIELD(row, l, wf, int64_t) - q->late_wm_shift_us;
      if (w > wm)
        wm = w;
    }
  }
  return false;
}

/* SET 'sluice.late-records' = 'side-output', a windowed aggregate: before
 * the pipeline, find the records all of whose windows have fired by this
 * worker's watermark just before them (as sl_worker_fold_row judges them,
 * and as the owner does under repartitioning, which judges by the reading
 * worker's watermark), and take those the filter keeps out of the buffer
 * into the late table: the pipeline never sees them.  The watermark of
 * every row is evaluated here, where s->sel is still 0..n-1 (wm_values is
 * indexed by input row). */
static int route_late_records(worker_state *s, const sl_buffer *in,
                              uint32_t *n) {
  exec_query *q = s->q;
  if (q->late_fast && !has_late_candidate(s, in, *n))
    return SL_OK; /* the pipeline computes the watermark as usual */
  int rc = eval_times(s, in, *n, &q->late_time_prog);
  if (rc != SL_OK)
    return rc;
  s->wm_ready = true;
  const sl_plan_window *pw = &s->plan->window;
  const sl_row_layout *wl = s->wm_values.layout, *tl = s->rowtimes.layout;
  int64_t wm = s->local_wm;
  uint32_t ncand = 0;
  for (uint32_t i = 0; i < *n; i++) {
    const uint8_t *t = sl_buffer_row(&s->rowtimes, i);
    if (!sl_row_is_null(t, 0)) {
      int64_t v = SL_FIELD(t, tl, 0, int64_t);
      if (all_windows_fired(pw, v, wm))
        s->late_sel[ncand++] = i;
    }
    const uint8_t *w = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(w, 0) && SL_FIELD(w, wl, 0, int64_t) > wm)
      wm = SL_FIELD(w, wl, 0, int64_t);
  }
  if (ncand == 0)
    return SL_OK;
  rc = write_late_candidates(s, in, &ncand);
  if (rc != SL_OK)
    return rc;
  /* Out of s->sel (both ascending). */
  uint32_t kept = 0;
  for (uint32_t i = 0, j = 0; i < *n; i++) {
    if (j < ncand && s->late_sel[j] == s->sel[i])
      j++;
    else
      s->sel[kept++] = s->sel[i];
  }
  *n = kept;
  return SL_OK;
}

/* A stream feeding a staged plan's stages: drop the records whose event
 * time is at or before the watermark of the rows before them (late, decided
 * per record as for windows, so the stages never wait for them), and fold
 * every row into the watermark.  s->sel becomes the rows kept. */
static int drop_late_rows(worker_state *s, const sl_buffer *in, uint32_t *n) {
  int rc = eval_times(s, in, *n, &s->q->rowtime_prog);
  if (rc != SL_OK)
    return rc;
  const sl_row_layout *wl = s->wm_values.layout, *tl = s->rowtimes.layout;
  /* Window rows (window_rows) are late when their last window has
   * fired: its end - unit at or before the watermark.  Under HOP and
   * CUMULATE a row whose first windows have fired counts in the later
   * ones (as Flink's TVF assigns it): the stage store assigns the windows,
   * and only this worker knows the watermark that came before the row, so
   * it says where they begin (live_from). */
  const sl_plan_window *pw = s->plan->window_rows ? &s->plan->window : NULL;
  uint32_t kept = 0, ncand = 0;
  s->partly_late = false;
  for (uint32_t i = 0; i < *n; i++) {
    const uint8_t *t = sl_buffer_row(&s->rowtimes, i);
    int64_t v = sl_row_is_null(t, 0) ? 0 : SL_FIELD(t, tl, 0, int64_t);
    int64_t first = WM_MIN;
    if (pw && !sl_row_is_null(t, 0)) { /* the time its last window fires */
      first = first_end(pw, slice_of(pw, v));
      v = last_end(pw, slice_of(pw, v)) - pw->unit_us;
    }
    if (!sl_row_is_null(t, 0) && v <= s->local_wm) {
      if (s->q->late)
        s->late_sel[ncand++] = i; /* to the late table, if the filter
                                   * keeps it */
      else
        s->w->late++;
    } else {
      if (pw) {
        int64_t live = WM_MIN;
        if (first != WM_MIN && first - pw->unit_us <= s->local_wm) {
          int64_t step = window_step(pw);
          for (live = first; live - pw->unit_us <= s->local_wm; live += step)
            ;
          s->partly_late = true;
        }
        s->live_from[i] = live;
      }
      s->sel[kept++] = i;
    }
    const uint8_t *w = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(w, 0) && SL_FIELD(w, wl, 0, int64_t) > s->local_wm)
      s->local_wm = SL_FIELD(w, wl, 0, int64_t);
  }
  s->wm = s->local_wm;
  /* Folded already: what the rest of the step evaluates again (over the
   * rows kept) cannot raise it. */
  sl_buffer_clear(&s->wm_values);
  s->wm_next = 0;
  if (ncand == 0) {
    *n = kept;
    return SL_OK;
  }
  /* Late records to the late table (s->sel lacks them already). */
  *n = kept;
  return write_late_candidates(s, in, &ncand);
}

static int process_buffer(worker_state *s, const sl_buffer *in) {
  exec_query *q = s->q;
  uint32_t n = in->nrows;
  for (uint32_t i = 0; i < n; i++)
    s->sel[i] = i;
  int rc;
  if (q->rowtime_prog) {
    rc = drop_late_rows(s, in, &n);
    if (rc != SL_OK)
      return rc;
    return process_filtered(s, in, n);
  }
  s->wm_ready = false;
  /* Session windows under late merge: late records found by the fold go
   * to the late table (see late_in). */
  bool sessions_late = q->late && s->plan->kind == SL_PLAN_AGGREGATE &&
                       s->plan->window.kind == SL_WINDOW_SESSION;
  s->late_in = sessions_late ? in : NULL;
  if (q->wm_prog) {
    s->wm_next = 0;
    if (q->late_time_prog) { /* late records to their table, first */
      rc = route_late_records(s, in, &n);
      if (rc != SL_OK)
        return rc;
    } else if (!q->jit) {
      /* compiled: in the first kernel's loop (process_filtered) */
      rc = eval_watermark(s, in, n);
      if (rc != SL_OK)
        return rc;
    }
  }
  rc = process_filtered(s, in, n);
  /* Rows after the last one aggregated count for the watermark too. */
  sl_worker_advance_watermark(s, in->nrows);
  s->late_in = NULL;
  return rc == SL_OK ? write_late_rows(s) : rc;
}

/* The pipeline over a buffer's rows sel[0..n), counted for EXPLAIN ANALYZE
 * (worker.jit_*): with the JIT's functions, a buffer ran compiled when
 * compiled functions did every step of it; otherwise a step handed it back
 * to the interpreter (SL_JIT_RETRY: an error to report, rows that do not
 * fit) or left it there (window rows partly late). */
static int process_filtered(worker_state *s, const sl_buffer *in, uint32_t n) {
  jit_use use = {false, false};
  int rc = process_steps(s, in, n, &use);
  worker *w = s->w;
  if (s->q->jit && use.ran && !use.back) {
    w->jit_buffers++;
    w->jit_rows += n;
  } else if (s->q->jit) {
    w->jit_back_buffers++;
    w->jit_back_rows += n;
  }
  return rc;
}

static int process_steps(worker_state *s, const sl_buffer *in, uint32_t n,
                         jit_use *use) {
  exec_query *q = s->q;
  int rc;
  /* The kernels compute the watermark unless it was (into scratch then:
   * a kernel that computes it needs somewhere to put it). */
  sl_buffer *wm_out = !q->wm_prog   ? NULL
                      : s->wm_ready ? &s->wm_scratch
                                    : &s->wm_values;
  /* A buffer with partly late window rows goes the interpreted way. */
  bool compiled = !s->partly_late;
  if (q->k_lookup && compiled) {
    rc = sl_worker_jit_lookup(s, in, n, wm_out);
    use->ran = rc != SL_JIT_RETRY;
    if (use->ran)
      return rc;
  }
  if (q->k_main && !q->join && compiled) {
    /* the whole pipeline up to the state (or the output) in one loop */
    s->origin = NULL;
    rc = sl_worker_jit_main(s, in, s->sel, n, wm_out, &s->w->rows_filtered);
    use->ran = rc != SL_JIT_RETRY;
    if (use->ran)
      return rc;
  }
  /* Without a join, the interpreter does the whole step from here; with
   * one, each compiled loop below says what it did. */
  if (!q->join && q->jit)
    use->back = true;
  /* A join: the stream filter and the join keys in one compiled loop */
  const sl_buffer *pre = NULL;
  if (q->k_join) {
    uint32_t nf, next;
    sl_buffer_clear(&s->keys);
    if (sl_jit_run_pre(q->k_join, in, s->sel, n, s->jsel, &nf, &s->keys, wm_out,
                       &next, s->ctx) == SL_OK &&
        next == n) {
      if (q->filter)
        memcpy(s->sel, s->jsel, sizeof(uint32_t) * nf);
      n = nf;
      pre = &s->keys;
      use->ran = true;
    } else {
      sl_buffer_clear(&s->keys);
      use->back = true;
    }
  }
  /* Handed back (or not compiled): the interpreter, from the watermark on */
  if (!pre && q->jit && q->wm_prog && !s->wm_ready) {
    rc = eval_watermark(s, in, n);
    if (rc != SL_OK)
      return rc;
  }
  if (!pre && q->filter) {
    rc = sl_expr_filter(q->filter, in, s->sel, &n, s->ctx, &s->w->err);
    if (rc != SL_OK)
      return rc;
  }
  s->w->rows_filtered += n;
  if (!q->join) {
    s->origin = NULL;
    return process_rows(s, in, s->sel, n);
  }
  s->origin = s->joined_origin;
  uint32_t done = 0;
  while (done < n) {
    uint32_t consumed, nj;
    rc = probe(s, in, s->sel + done, n - done, pre, done, &consumed, &nj);
    if (rc != SL_OK)
      return rc;
    if (consumed == 0 && n - done > 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "a stream record matches more table rows than fit "
                          "in a buffer; raise SET 'sluice.buffer-size'");
    done += consumed;
    if (q->k_main && compiled) {
      rc = sl_worker_jit_main(s, &s->joined, s->sel2, nj, NULL,
                              &s->w->rows_joined);
      if (rc != SL_JIT_RETRY) {
        use->ran = true;
        if (rc != SL_OK)
          return rc;
        continue;
      }
    }
    if (q->jit)
      use->back = true; /* these joined rows: the interpreter */
    if (q->post_join_filter) {
      rc = sl_expr_filter(q->post_join_filter, &s->joined, s->sel2, &nj, s->ctx,
                          &s->w->err);
      if (rc != SL_OK)
        return rc;
    }
    s->w->rows_joined += nj;
    rc = process_rows(s, &s->joined, s->sel2, nj);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* Raise *max to v (the query's largest watermark, query_shared.wm_max). */
static void atomic_raise(_Atomic int64_t *max, int64_t v) {
  int64_t was = atomic_load_explicit(max, memory_order_relaxed);
  while (v > was &&
         !atomic_compare_exchange_weak_explicit(
             max, &was, v, memory_order_relaxed, memory_order_relaxed))
    ;
}

/* SET 'table.exec.source.idle-timeout': a worker whose source gave no row
 * for that long is idle.  An idle worker must not hold the others back
 * (Flink's meaning: it leaves the minimum), so its watermark moves up to
 * the largest that the query's other workers still reading have reached,
 * in this process (query_shared.wm_max: every leaf of a join) and, under
 * repartitioning, among the exchange's members on every node.  And when
 * every source is quiet (a followed file nobody appends to), it moves on
 * with the clock from where its last rows left it, as if event time kept
 * pace with the wall clock, so the windows after the last row fire.  A row
 * that comes later below it is late. */
static void advance_if_idle(worker_state *s, bool got_rows, double now) {
  exec_query *q = s->q;
  if (got_rows || s->rows_at == 0) {
    s->rows_at = now;
    s->wm_at_rows = s->local_wm;
  }
  if (s->local_wm != WM_MIN && s->local_wm != WM_MAX)
    atomic_raise(&q->shared->wm_max, s->local_wm);
  double quiet = now - s->rows_at;
  if (got_rows || quiet < q->idle_timeout)
    return;
  int64_t wm = atomic_load_explicit(&q->shared->wm_max, memory_order_relaxed);
  if (s->input_wm) /* the exchange's members, on every node */
    for (int p = 0; p < q->xn; p++)
      if (!s->input_done[p] && s->input_wm[p] > wm && s->input_wm[p] != WM_MAX)
        wm = s->input_wm[p];
  if (s->wm_at_rows != WM_MIN) {
    double moved = (double)s->wm_at_rows + quiet * 1e6;
    int64_t by_clock = moved >= 9.2e18 ? WM_MAX - 1 : (int64_t)moved;
    if (by_clock > wm)
      wm = by_clock;
  }
  if (wm != WM_MIN && wm > s->local_wm) {
    s->local_wm = wm;
    if (!s->input_wm)
      s->wm = s->local_wm;
  }
}

/* Backpressure: while this worker's output queue is over its bound (the
 * coordinator, writing to a slow consumer, has not taken it), read no more
 * input.  What other workers send here is still drained and its windows
 * handed over, as a worker waiting for a channel's credit does: they may
 * be waiting for this one, and the coordinator for their watermarks. */
static int wait_for_room(worker_state *s) {
  worker *w = s->w;
  int rc = SL_OK;
  while (rc == SL_OK && !atomic_load(w->cancel) &&
         sl_exec_wait_drained(w, s->q->channels ? 5 : 20)) {
    if (!s->q->channels)
      continue;
    bool got = false;
    rc = sl_exchange_drain(s, &got);
    if (rc == SL_OK)
      rc = write_late_rows(s);
    if (rc == SL_OK && got)
      rc = hand_over_windows(s);
    if (got)
      sl_exec_signal(w);
  }
  return rc;
}

void *sl_worker_main(void *arg) {
  worker *w = arg;
  exec_query *q = w->q;
  const sl_plan *plan = q->plan;
  worker_state s;
  memset(&s, 0, sizeof s);
  s.w = w;
  s.q = q;
  s.plan = plan;
  s.ctx = sl_expr_ctx_new();
  s.wm = WM_MIN;
  s.local_wm = WM_MIN;
  s.next_end = WM_MAX;
  s.signalled_wm = WM_MIN;
  int n = q->xn, me = q->xbase + w->index;
  if (q->channels) {
    s.input_wm = malloc(sizeof(int64_t) * (size_t)n);
    s.input_done = calloc((size_t)n, sizeof(bool));
    s.out_slots = calloc((size_t)n, sizeof(sl_buffer));
    s.out_active = calloc((size_t)n, sizeof(bool));
    s.sent_wm = malloc(sizeof(int64_t) * (size_t)n);
    if (!s.input_wm || !s.input_done || !s.out_slots || !s.out_active ||
        !s.sent_wm)
      abort();
    for (int p = 0; p < n; p++)
      s.input_wm[p] = s.sent_wm[p] = WM_MIN;
  }
  sl_buffer in;
  sl_buffer_init(&in, q->stream_layout, q->buffer_size);
  /* Rows as the buffers really hold them (their capacity is rounded up). */
  uint32_t max_rows = in.cap / q->stream_layout->width + 1;
  s.sel = malloc(sizeof(uint32_t) * max_rows);
  if (plan->window_rows) {
    s.live_from = malloc(sizeof(int64_t) * max_rows);
    if (!s.live_from)
      abort();
  }
  const sl_row_layout *jl = q->join ? q->joined_layout : q->stream_layout;
  uint32_t max_joined = q->buffer_size / jl->width + 1;
  if (q->join) {
    sl_buffer_init(&s.joined, q->joined_layout,
                   max_rows * q->joined_layout->width);
    if (s.joined.cap / jl->width + 1 > max_joined)
      max_joined = s.joined.cap / jl->width + 1;
    /* One per joined row. */
    s.joined_origin = malloc(sizeof(uint32_t) * (max_joined + 1));
    if (!s.joined_origin)
      abort();
  }
  s.sel2 = malloc(sizeof(uint32_t) *
                  (max_joined > max_rows ? max_joined : max_rows));
  if (q->k_join) {
    /* every stream row's key (strings borrowed from the input) */
    sl_buffer_init(&s.keys, q->join_key_layout,
                   max_rows * q->join_key_layout->width + q->buffer_size);
    s.keys.borrow_strings = true;
  }
  if (q->wm_prog)
    sl_buffer_init(&s.wm_values, q->wm_layout,
                   max_rows * q->wm_layout->width + 64);
  if (q->rowtime_prog || q->late_time_prog)
    sl_buffer_init(&s.rowtimes, q->rowtime_layout,
                   max_rows * q->rowtime_layout->width + 64);
  if (q->late) {
    sl_buffer_init(&s.late_rows, q->stream_layout, q->buffer_size);
    s.late_sel = malloc(sizeof(uint32_t) * max_rows);
    if (!s.late_sel)
      abort();
    if (q->tmp_record >= 0) {
      s.late_record = calloc(1, q->stream_layout->width);
      if (!s.late_record)
        abort();
    }
    if (q->wm_prog)
      sl_buffer_init(&s.wm_scratch, q->wm_layout,
                     max_rows * q->wm_layout->width + 64);
  }
  /* tmp holds one row per input row plus room for long strings. */
  const sl_row_layout *tl = q->tmp_layout ? q->tmp_layout : q->stream_layout;
  uint32_t tmp_rows = max_joined > max_rows ? max_joined : max_rows;
  uint32_t kw = q->join_key_layout ? q->join_key_layout->width : 0;
  uint32_t tw = tl->width > kw ? tl->width : kw;
  sl_buffer_init(&s.tmp, tl, tmp_rows * tw + q->buffer_size);
  /* jsel: the rows a kernel kept, one per row it wrote into tmp (a lookup
   * kernel writes one per match, as many as tmp holds) */
  s.jsel = malloc(sizeof(uint32_t) * (s.tmp.cap / tl->width + 1 > tmp_rows
                                          ? s.tmp.cap / tl->width + 1
                                          : tmp_rows));
  if (q->k_route) /* the owner of every tmp row */
    s.dest = malloc(sizeof(uint32_t) * (s.tmp.cap / tl->width + 1));
  /* tmp rows (keys, arguments, join keys) live only while the input buffer
   * they come from does. */
  s.tmp.borrow_strings = true;
  if (q->key_layout)
    s.keyrow = calloc(1, q->key_layout->width + 8);
  if (!s.sel || !s.sel2 || !s.jsel || (q->key_layout && !s.keyrow) ||
      (q->k_route && !s.dest))
    abort();

  sl_source *src = NULL;
  sl_source_spec spec = {plan->inputs[0].table,  q->stream_layout,
                         q->stream_leaf,         q->src_base + w->index,
                         q->src_total,           plan->inputs[0].nfilters,
                         plan->inputs[0].filters};
  int rc = plan->inputs[0].connector->open(&spec, &src, &w->err);
  sl_exec_wait_ready(w->shared);
  s.epoch_began = sl_clock_seconds();
  bool done = false;
  while (rc == SL_OK && !done) {
    if (atomic_load(w->cancel))
      break;
    sl_buffer_clear(&in);
    double t0 = sl_clock_seconds();
    /* rows the source lends (no copy), else rows it copies into in */
    const sl_source_connector *sc = plan->inputs[0].connector;
    const sl_buffer *lent = NULL;
    if (sc->lend)
      rc = sc->lend(src, max_rows - 1, &lent, &done, &w->err);
    if (rc == SL_OK && !lent)
      rc = sc->next(src, &in, &done, &w->err);
    double t1 = sl_clock_seconds();
    w->source_seconds += t1 - t0;
    if (rc != SL_OK)
      break;
    const sl_buffer *buf = lent ? lent : &in;
    atomic_fetch_add_explicit(&w->events, buf->nrows, memory_order_relaxed);
    if (buf->nrows > 0)
      rc = process_buffer(&s, buf);
    w->pipeline_seconds += sl_clock_seconds() - t1;
    if (rc != SL_OK)
      break;
    if (q->idle_timeout > 0 && !done)
      advance_if_idle(&s, buf->nrows > 0, t1);
    if (done) { /* the end of a bounded source fires every window */
      s.local_wm = WM_MAX;
      if (!q->channels)
        s.wm = WM_MAX;
    }
    if (q->channels) {
      /* Send what this buffer produced for other workers, then fold what
       * they sent here. */
      s.input_wm[me] = s.local_wm;
      for (int d = 0; d < n && rc == SL_OK; d++)
        if (d != me && exchange_due(&s, d))
          rc = sl_exchange_flush(&s, d, true);
      bool got = false;
      if (rc == SL_OK)
        rc = sl_exchange_drain(&s, &got);
      if (rc == SL_OK) /* late records the owner found among them */
        rc = write_late_rows(&s);
      if (rc != SL_OK)
        break;
    }
    if (q->epoch_bytes && plan->kind == SL_PLAN_AGGREGATE && rc == SL_OK) {
      s.epoch_in += (uint64_t)buf->nrows * buf->layout->width;
      s.epoch_rows_in += buf->nrows;
      double now = q->epoch_seconds > 0 ? sl_clock_seconds() : 0;
      if (s.epoch_in >= q->epoch_bytes ||
          (q->epoch_rows && s.epoch_rows_in >= q->epoch_rows) ||
          (q->epoch_seconds > 0 && now - s.epoch_began >= q->epoch_seconds)) {
        s.epoch_in = 0;
        s.epoch_rows_in = 0;
        s.epoch_began = now;
        rc = hand_over_epoch(&s);
      }
    }
    if (rc == SL_OK && plan->kind == SL_PLAN_AGGREGATE)
      rc = hand_over_windows(&s);
    else {
      pthread_mutex_lock(&w->lock);
      w->published_wm = s.wm;
      pthread_mutex_unlock(&w->lock);
    }
    if (rc != SL_OK || done || worth_waking(&s))
      sl_exec_signal(w);
    /* Backpressure (executor_int.h): the source waits while the output
     * queue is full. */
    if (rc == SL_OK && !done)
      rc = wait_for_room(&s);
  }
  if (q->channels) {
    /* This worker's input is done: tell the others, then keep folding what
     * they send until every one of them has finished too. */
    s.input_done[me] = true;
    for (int d = 0; d < n; d++)
      if (d != me) {
        if (rc == SL_OK)
          rc = sl_exchange_flush(&s, d, false);
        sl_channel_close(q->channels[me * n + d]);
      }
    while (rc == SL_OK && !atomic_load(w->cancel)) {
      bool got = false;
      rc = sl_exchange_drain(&s, &got);
      if (rc == SL_OK)
        rc = write_late_rows(&s);
      if (rc != SL_OK)
        break;
      rc = hand_over_windows(&s);
      sl_exec_signal(w);
      int waiting = -1;
      for (int p = 0; p < n; p++)
        if (!s.input_done[p])
          waiting = p;
      if (waiting < 0)
        break;
      if (!got)
        sl_channel_wait_slot(q->channels[waiting * n + me], 1000000);
    }
    /* The others must not wait for this one; what they then meet is a
     * consequence (SL_ECANCELLED), and this one's error the cause. */
    if (rc != SL_OK)
      for (int d = 0; d < n; d++)
        if (d != me) {
          sl_channel_abort(q->channels[me * n + d], SL_ECANCELLED);
          sl_channel_abort(q->channels[d * n + me], SL_ECANCELLED);
        }
  }
  if (src) {
    sl_source_stats st;
    memset(&st, 0, sizeof st);
    if (plan->inputs[0].connector->stats)
      plan->inputs[0].connector->stats(src, &st);
    w->skipped = st.skipped_rows;
    w->input_bytes = st.bytes;
    plan->inputs[0].connector->close(src);
  }
  for (int i = 0; i < s.nslices; i++) {
    sl_group_table_free(s.slices[i].table);
    free(s.slices[i].table);
  }
  free(s.slices);
  sl_memory_charge(q->memory, &s.memory_charged, 0);
  w->sessions = s.sessions; /* its states may still be merged */
  /* ... so it stays on the account until the coordinator frees it. */
  if (s.sessions)
    sl_memory_charge(q->memory, &w->sessions_charged,
                     session_store_bytes(s.sessions));
  free(s.sel);
  free(s.sel2);
  free(s.live_from);
  free(s.jsel);
  free(s.dest);
  free(s.keyrow);
  free(s.input_wm);
  free(s.input_done);
  free(s.out_slots);
  free(s.out_active);
  free(s.sent_wm);
  sl_buffer_free(&in);
  sl_buffer_free(&s.tmp);
  if (q->join)
    sl_buffer_free(&s.joined);
  if (q->k_join)
    sl_buffer_free(&s.keys);
  free(s.joined_origin);
  if (q->wm_prog)
    sl_buffer_free(&s.wm_values);
  if (q->rowtime_prog || q->late_time_prog)
    sl_buffer_free(&s.rowtimes);
  if (q->late) {
    sl_buffer_free(&s.late_rows);
    free(s.late_sel);
    free(s.late_record);
    if (q->wm_prog)
      sl_buffer_free(&s.wm_scratch);
  }
  sl_expr_ctx_free(s.ctx);
  pthread_mutex_lock(&w->lock);
  w->rc = rc;
  w->done = true;
  pthread_mutex_unlock(&w->lock);
  sl_exec_signal(w);
  return NULL;
}
