/* op_window_state.c - a worker's window state: the group tables of its
 * slices (a record updates exactly one slice, whatever the windows'
 * overlap) or its session store, the fold of one record into them, and
 * handing windows (closed sessions, an epoch's changes) to the
 * coordinator.  Separate from worker.c, which drives it per buffer.
 *
 * Slices: a tumbling window is one slice; a hopping window of size S and
 * slide L is S/L slices of length L shared by the windows that overlap
 * them; a cumulating window of step T is made of slices of length T. */
#include <stdlib.h>
#include <string.h>

#include "sluice/state/window_assign.h"
#include "worker_ops_int.h"

/* A new group table of this worker's state, with room for `groups`
 * groups when the memory limit has room for that at once (a table grown
 * from a few slots to thousands is allocated, cleared and rehashed at each
 * doubling); else with `fallback` slots, grown as groups come (each
 * doubling asks the limit first). */
static sl_group_table *new_table(worker_state *s, uint32_t groups,
                                 uint32_t fallback) {
  sl_group_table *t = malloc(sizeof *t);
  if (!t)
    abort();
  uint64_t entry = 8 + s->q->agg.key_layout->width + s->q->agg.aggs.state_width;
  uint32_t cap = groups + groups / 3 + 1; /* the table doubles past 3/4 */
  if (cap < fallback ||
      !sl_memory_room_for(s->q->memory, (uint64_t)cap * 2 * entry))
    cap = fallback;
  sl_group_table_init_pooled(t, s->q->agg.key_layout, &s->q->agg.aggs, cap,
                             s->q->agg.slot_pool);
  return t;
}

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
  /* Room for as many groups as its neighbours in time have (or the last
   * slice let go had): growing from 64 was a fifth of q5's workers' time.
   * (Only the neighbours: a worker far behind its inputs can hold tens of
   * thousands of slices.) */
  uint32_t groups = s->last_slice_groups;
  for (int i = lo > 0 ? lo - 1 : 0; i < s->nslices && i <= lo; i++)
    if (s->slices[i].table->count > groups)
      groups = s->slices[i].table->count;
  /* Before any slice has been let go, the planner's estimate: growing the
   * first tables by doubling from 64 wrote every larger array afresh
   * (fresh pages cost ten times a memset in this VM: a third of ro_64m's
   * CPU was the kernel zeroing them). */
  if (s->last_slice_groups == 0 && s->plan->expected_groups > groups)
    groups = s->plan->expected_groups;
  sl_group_table *t = new_table(s, groups, 64);
  s->slices[lo].start = start;
  s->slices[lo].table = t;
  s->nslices++;
  s->last = lo;
  return t;
}

/* (free_table false: the table was handed over, and the caller noted its
 * groups before: the coordinator may be merging or freeing it now) */
static void drop_slice(worker_state *s, int i, bool free_table) {
  if (free_table) {
    s->last_slice_groups = s->slices[i].table->count;
    sl_group_table_free(s->slices[i].table);
    free(s->slices[i].table);
  }
  memmove(&s->slices[i], &s->slices[i + 1],
          sizeof(slice) * (size_t)(s->nslices - i - 1));
  s->nslices--;
  s->last = 0;
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
  const sl_agg_set *aggs = &c->s->q->agg.aggs;
  uint32_t kw = c->s->q->agg.key_layout->width;
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
int sl_worker_hand_over_epoch(worker_state *s) {
  const sl_plan *plan = s->plan;
  const sl_plan_window *pw = &plan->window;
  for (int i = 0; i < s->nslices; i++) {
    sl_group_table *old = s->slices[i].table;
    if (old->count == 0)
      continue;
    /* as many groups as the last epoch had */
    sl_group_table *fresh = new_table(s, old->count, 1024);
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
        sl_group_table_init_pooled(t, s->q->agg.key_layout, &s->q->agg.aggs,
                                   old->count, s->q->agg.slot_pool);
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
int sl_worker_hand_over_windows(worker_state *s) {
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
      s->last_slice_groups = s->slices[0].table->count;
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
            s->last_slice_groups = s->slices[i].table->count;
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
            /* As many groups as the last window had, when more than this
             * slice has: consecutive windows share most slices. */
            uint32_t groups = s->slices[i].table->count;
            if (s->last_window_groups > groups)
              groups = s->last_window_groups;
            merged = new_table(s, groups, 64);
          }
          int rc = sl_group_table_merge(merged, s->slices[i].table, &w->err);
          if (rc != SL_OK)
            return rc;
        }
        if (merged) {
          s->last_window_groups = merged->count;
          publish_partial(s, start, end, merged);
        }
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

/* The group key of a tmp row: its key fields copied into s->keyrow (for
 * hashing, the state's group table and routing to the owner). */
void sl_worker_key_row_of(worker_state *s, const uint8_t *row) {
  const exec_query *q = s->q;
  const sl_row_layout *tl = q->partial.tmp_layout;
  const sl_row_layout *kl = q->agg.key_layout;
  memset(s->keyrow, 0, kl->width);
  for (int i = 0; i < kl->nfields; i++) {
    int tf = q->partial.tmp_keys + i;
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
static int fold_keyed(worker_state *s, const uint8_t *row, int64_t late_wm,
                      int64_t proc_now, uint64_t hash);

int sl_worker_fold_row(worker_state *s, const uint8_t *row, int64_t late_wm,
                       int64_t proc_now) {
  sl_worker_key_row_of(s, row);
  return fold_keyed(s, row, late_wm, proc_now,
                    sl_key_hash(s->q->agg.key_layout, s->keyrow));
}

int sl_worker_fold_row_hashed(worker_state *s, const uint8_t *row,
                              int64_t late_wm, int64_t proc_now,
                              uint64_t hash) {
  sl_worker_key_row_of(s, row);
  return fold_keyed(s, row, late_wm, proc_now, hash);
}

/* The group table rows are folded into now, where a look ahead can
 * prefetch into it (windows of event time kept in slices), or NULL. */
static const sl_group_table *table_in_use(const worker_state *s) {
  const sl_plan_window *pw = &s->q->plan->window;
  if (!s->q->plan->windowed || pw->proctime || pw->kind == SL_WINDOW_SESSION ||
      s->last >= s->nslices)
    return NULL;
  return s->slices[s->last].table;
}

bool sl_worker_fold_ahead_pays(const worker_state *s) {
  const sl_group_table *t = table_in_use(s);
  return t && (uint64_t)t->cap * t->entry_width > ((uint64_t)1 << 20);
}

uint64_t sl_worker_fold_ahead(worker_state *s, const uint8_t *row) {
  const exec_query *q = s->q;
  sl_worker_key_row_of(s, row);
  uint64_t hash = sl_key_hash(q->agg.key_layout, s->keyrow);
  const sl_group_table *t = table_in_use(s);
  if (!t || sl_row_is_null(row, q->partial.tmp_time))
    return hash;
  int64_t ts =
      SL_FIELD(row, q->partial.tmp_layout, q->partial.tmp_time, int64_t);
  if (slice_of(&q->plan->window, ts) == s->slices[s->last].start)
    __builtin_prefetch(
        t->slots + (size_t)((uint32_t)hash & (t->cap - 1)) * t->entry_width, 1);
  return hash;
}

/* sl_worker_fold_row with the key in s->keyrow and its hash. */
static int fold_keyed(worker_state *s, const uint8_t *row, int64_t late_wm,
                      int64_t proc_now, uint64_t hash) {
  const int64_t wm = s->wm;
  exec_query *q = s->q;
  const sl_plan *plan = q->plan;
  const sl_plan_window *pw = &plan->window;
  const sl_row_layout *tl = q->partial.tmp_layout;
  const sl_row_layout *kl = q->agg.key_layout;
  int64_t start = 0;
  uint8_t *st = NULL;
  sl_arena *arena = NULL;
  if (plan->windowed) {
    int64_t ts;
    if (pw->proctime) {
      ts = proc_now;
    } else {
      if (sl_row_is_null(row, q->partial.tmp_time))
        return sl_error_set(&s->w->err, SL_EINVAL,
                            "a record has a NULL event time; the time "
                            "attribute of a window must not be NULL");
      ts = SL_FIELD(row, tl, q->partial.tmp_time, int64_t);
    }
    if (pw->kind == SL_WINDOW_SESSION) {
      /* [ts, ts + gap) joins the key's sessions it touches; alone and
       * already behind the watermark, it is late. */
      int64_t end = ts + pw->gap_us;
      if (!s->sessions) {
        s->sessions = malloc(sizeof *s->sessions);
        if (!s->sessions)
          abort();
        session_store_init(s->sessions, kl, &q->agg.aggs);
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
        if (q->partial.tmp_record >= 0 && q->exchange.channels)
          return sl_worker_keep_late_tmp_record(s, row);
        if (s->late_in)
          return sl_worker_keep_late_record(s, s->late_in, s->late_input_row);
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
  int rc = sl_agg_update(&q->agg.aggs, st, row, arena, &s->w->err);
  if (rc != SL_OK)
    return rc;
  s->w->rows_state++;
  return SL_OK;
}
