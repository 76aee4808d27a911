/* stage_sink.c - a staged query's leaf stores and the stage sink that
 * fills them (stage_int.h): each leaf's executor writes its result rows
 * through the sink into the leaf's store, keyed by window end (or, for a
 * stream leaf, by time bucket, whole batches kept rather than copied),
 * and tells it through the sink's watermark hook how far they are
 * complete; a stream leaf running far ahead of the windows the stages can
 * fire is held back.  The runner (stage_runner.c) reads the stores and
 * frees what the fired windows no longer need.  Apart from the runner
 * because it runs on the leaves' threads, the runner on its own. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/state/window_assign.h"
#include "stage_int.h"

/* ---- the stage sink: a leaf's rows into its store ---------------------- */

struct sl_sink {
  leaf_store *store;
  uint64_t rows;
  uint8_t *scratch; /* window rows: one row of the store's layout */
};

int stage_sink_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  leaf_store *ls = spec->arg;
  if (!ls)
    return sl_error_set(err, SL_EINTERNAL, "stage sink without a store");
  if (spec->layout->width != ls->in_layout->width)
    return sl_error_set(err, SL_EINTERNAL, "stage sink: layouts differ");
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->store = ls;
  if (ls->window_rows) {
    s->scratch = malloc(ls->layout->width);
    if (!s->scratch)
      abort();
  }
  *out = s;
  return SL_OK;
}

/* The allocation that holds a store's keys. */
keyed_rows *leaf_store_base(leaf_store *ls) {
  return ls->front ? ls->keys - ls->front : ls->keys;
}

/* The rows of key, inserted in key order if new. */
static keyed_rows *store_key(leaf_store *ls, int64_t key) {
  keyed_rows *k = leaf_store_find(ls, key);
  if (k)
    return k;
  if (ls->nkeys == ls->capkeys) {
    /* Full: move down over the freed front, growing first unless that
     * frees half (so a store that fires as fast as it adds moves its
     * keys once per half its size, not per window). */
    keyed_rows *base = leaf_store_base(ls);
    int total = ls->front + ls->capkeys;
    if (ls->front == 0 || ls->front < total / 2) {
      total = total ? total * 2 : 16;
      base = realloc(base, sizeof *base * (size_t)total);
      if (!base)
        abort();
    }
    memmove(base, base + ls->front, sizeof *base * (size_t)ls->nkeys);
    ls->keys = base;
    ls->capkeys = total;
    ls->front = 0;
  }
  int at = ls->nkeys;
  while (at > 0 && ls->keys[at - 1].key > key)
    at--;
  memmove(&ls->keys[at + 1], &ls->keys[at],
          sizeof *ls->keys * (size_t)(ls->nkeys - at));
  ls->nkeys++;
  k = &ls->keys[at];
  memset(k, 0, sizeof *k);
  k->key = key;
  sorted_result_init_growing(&k->rows, ls->layout, ls->run->buffer_size);
  return k;
}

/* A window row: the leaf's row in the store's layout, with its window's
 * start, end and time after the leaf's columns. */
static const uint8_t *window_row(const leaf_store *ls, const uint8_t *row,
                                 int64_t end, uint8_t *scratch) {
  const sl_row_layout *in = ls->in_layout, *l = ls->layout;
  const sl_plan_window *w = &ls->window;
  memset(scratch, 0, l->width);
  for (int f = 0; f < ls->live_field; f++) {
    bool null = sl_row_is_null(row, f);
    sl_row_set_null(scratch, f, null);
    if (!null)
      memcpy(scratch + l->fields[f].offset, row + in->fields[f].offset,
             l->fields[f].size);
  }
  int n = ls->live_field;
  SL_FIELD(scratch, l, n, int64_t) = window_start(w, end);
  SL_FIELD(scratch, l, n + 1, int64_t) = end;
  SL_FIELD(scratch, l, n + 2, int64_t) = end - w->unit_us;
  return scratch;
}

/* The leaves' rows held for the stages are over the memory limit: the
 * error names the leaf holding most. */
static int leaf_rows_over_limit(const stage_runner *run, uint64_t held,
                                uint64_t total, sl_error *err) {
  int most = 0;
  for (int i = 1; i < run->nleaves; i++)
    if (run->leaves[i].bytes > run->leaves[most].bytes)
      most = i;
  char m[32];
  return sl_memory_over_error(
      err, &run->shared.memory, held, total, "use shorter windows",
      "the rows %s until their windows close (the most, %s, of leaf %d) hold",
      run->holder, sl_bytes_text(run->leaves[most].bytes, m, sizeof m),
      most + 1);
}

/* The store holds a new buffer of cap bytes: all the leaves' rows against
 * the limit (updating stages take their leaves' rows every round and check
 * their own state: update_stages_check_limit).  run->lock is held. */
static int store_charge(leaf_store *ls, uint32_t cap, sl_error *err) {
  ls->bytes += cap;
  if (ls->bytes > ls->peak)
    ls->peak = ls->bytes;
  stage_runner *run = ls->run;
  uint64_t held = 0;
  for (int i = 0; i < run->nleaves; i++)
    held += run->leaves[i].bytes;
  if (held > run->peak_bytes)
    run->peak_bytes = held;
  uint64_t total;
  if (sl_memory_grew_over(&run->shared.memory, &run->leaves_charged, held,
                          &total) &&
      !ls->arrival)
    return leaf_rows_over_limit(run, held, total, err);
  return SL_OK;
}

/* A stream store's key k: buffer b holds rows from lo to hi. */
static void widen_span(keyed_rows *k, int b, int64_t lo, int64_t hi) {
  if (b >= k->span) {
    int span = k->span ? k->span * 2 : 16;
    while (span <= b)
      span *= 2;
    k->tmin = realloc(k->tmin, sizeof *k->tmin * (size_t)span);
    k->tmax = realloc(k->tmax, sizeof *k->tmax * (size_t)span);
    if (!k->tmin || !k->tmax)
      abort();
    for (int i = k->span; i < span; i++) {
      k->tmin[i] = INT64_MAX;
      k->tmax[i] = INT64_MIN;
    }
    k->span = span;
  }
  if (lo < k->tmin[b])
    k->tmin[b] = lo;
  if (hi > k->tmax[b])
    k->tmax[b] = hi;
}

/* Add one row to the store under key (k: the last key used, or NULL);
 * a stream row's event time is t.  run->lock is held. */
static int store_add(leaf_store *ls, keyed_rows **k, int64_t key,
                     const uint8_t *row, int64_t t, sl_error *err) {
  if (!*k || (*k)->key != key)
    *k = store_key(ls, key);
  size_t before = (*k)->rows.nbufs;
  int rc = sorted_result_add_row(&(*k)->rows, row, err);
  if (rc == SL_OK && ls->stream)
    widen_span(*k, (*k)->rows.nbufs - 1, t, t);
  if ((size_t)(*k)->rows.nbufs != before) {
    int crc = store_charge(ls, (*k)->rows.bufs[(*k)->rows.nbufs - 1].cap, err);
    if (rc == SL_OK)
      rc = crc;
  }
  return rc;
}

/* Running ahead with much held: wait for the stages to catch up (the leaf
 * that holds the frontier back is never ahead of it).  run->lock is held;
 * an error once the query stopped. */
static int hold_back(leaf_store *ls, sl_error *err) {
  stage_runner *run = ls->run;
  while (ls->stream && !run->cancelled && ls->bytes > STAGE_HOLD_MAX &&
         ls->wm != WM_MIN && run->frontier != WM_MAX &&
         (run->frontier == WM_MIN || ls->wm - ls->hi_us > run->frontier)) {
    struct timespec until = sl_clock_deadline_ms(20);
    pthread_cond_timedwait(&run->cond, &run->lock, &until);
  }
  return run->cancelled ? sl_error_set(err, SL_ECANCELLED, "stopped") : SL_OK;
}

int stage_sink_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  leaf_store *ls = s->store;
  stage_runner *run = ls->run;
  const sl_row_layout *l = ls->in_layout;
  int key_field =
      ls->stream || ls->window_rows ? ls->time_field : l->nfields - 1;
  pthread_mutex_lock(&run->lock);
  int rc = hold_back(ls, err);
  keyed_rows *k = NULL;
  if (ls->arrival) { /* updating stages: all of them, as they come */
    for (uint32_t i = 0; i < rows->nrows && rc == SL_OK; i++)
      rc = store_add(ls, &k, 0, sl_buffer_row(rows, i), 0, err);
  }
  for (uint32_t i = 0; i < rows->nrows && rc == SL_OK && !ls->arrival; i++) {
    const uint8_t *row = sl_buffer_row(rows, i);
    if (sl_row_is_null(row, key_field))
      continue; /* no event time: it meets no window */
    int64_t v = SL_FIELD(row, l, key_field, int64_t);
    if (ls->stream && v < ls->drop_below) {
      ls->late++;
      continue;
    }
    if (ls->extremes.x && !sl_extremes_keep(&ls->extremes, l, row, v)) {
      ls->not_kept++;
      continue;
    }
    if (!ls->window_rows) {
      rc = store_add(ls, &k, ls->stream ? sl_floor_div(v, ls->bucket_us) : v,
                     row, v, err);
      continue;
    }
    /* Its windows from the first that had not fired when it came (the
     * leaf dropped the row if none was left: exec/worker.c,
     * drop_late_rows). */
    const sl_plan_window *w = &ls->window;
    int64_t live = sl_row_is_null(row, ls->live_field)
                       ? WM_MIN
                       : SL_FIELD(row, l, ls->live_field, int64_t);
    for (int64_t end = first_live_end(w, v, live),
                 last = last_end(w, slice_of(w, v));
         end <= last && rc == SL_OK; end += window_step(w))
      rc = store_add(ls, &k, end, window_row(ls, row, end, s->scratch), 0, err);
  }
  s->rows += rows->nrows;
  stage_runner_news(run);
  pthread_mutex_unlock(&run->lock);
  return rc;
}

/* Keep batch rows whole under key (run->lock held): returns the key's
 * rows, the batch their last buffer. */
static keyed_rows *keep_batch(sl_sink *s, sl_buffer *rows, int64_t key, int *rc,
                              sl_error *err) {
  leaf_store *ls = s->store;
  keyed_rows *k = store_key(ls, key);
  uint32_t cap = rows->cap, n = rows->nrows;
  sorted_result_adopt(&k->rows, rows);
  *rc = store_charge(ls, cap, err);
  s->rows += n;
  return k;
}

/* An aggregate leaf's batch of one window's rows (every batch its
 * coordinator writes: it finishes a window before the next): kept whole
 * under that window's key, not copied row by row under the lock the
 * stages and the other leaves wait on. */
static int adopt_window_rows(sl_sink *s, sl_buffer *rows, sl_error *err) {
  leaf_store *ls = s->store;
  const sl_row_layout *l = ls->in_layout;
  int kf = l->nfields - 1;
  int64_t key = 0;
  for (uint32_t i = 0; i < rows->nrows; i++) {
    const uint8_t *row = sl_buffer_row(rows, i);
    if (sl_row_is_null(row, kf) ||
        (i > 0 && SL_FIELD(row, l, kf, int64_t) != key))
      return stage_sink_write(s, rows, err);
    key = SL_FIELD(row, l, kf, int64_t);
  }
  stage_runner *run = ls->run;
  pthread_mutex_lock(&run->lock);
  int rc = hold_back(ls, err);
  if (rc == SL_OK)
    keep_batch(s, rows, key, &rc, err);
  stage_runner_news(run);
  pthread_mutex_unlock(&run->lock);
  return rc;
}

/* A stream leaf's batch whose rows all fall in one time bucket, none late
 * nor without an event time (almost every batch: buckets are the windows'
 * slide, a batch a few milliseconds of the stream): kept whole, not
 * copied row by row.  Any other batch is copied (stage_sink_write). */
static int stage_sink_write_owned(sl_sink *s, sl_buffer *rows, sl_error *err) {
  leaf_store *ls = s->store;
  const sl_row_layout *l = ls->in_layout;
  int tf = ls->time_field;
  if (!ls->stream && !ls->arrival && !ls->window_rows && !ls->extremes.x &&
      rows->nrows > 0)
    return adopt_window_rows(s, rows, err);
  /* (rows that cannot meet their MAX or MIN are left out: a copy) */
  if (!ls->stream || ls->arrival || rows->nrows == 0 || tf < 0 ||
      ls->extremes.x)
    return stage_sink_write(s, rows, err);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < rows->nrows; i++) {
    const uint8_t *row = sl_buffer_row(rows, i);
    if (sl_row_is_null(row, tf))
      return stage_sink_write(s, rows, err);
    int64_t v = SL_FIELD(row, l, tf, int64_t);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  int64_t key = sl_floor_div(lo, ls->bucket_us);
  stage_runner *run = ls->run;
  pthread_mutex_lock(&run->lock);
  int rc = hold_back(ls, err);
  /* (drop_below may rise while held back: read after) */
  if (rc == SL_OK &&
      (key != sl_floor_div(hi, ls->bucket_us) || lo < ls->drop_below)) {
    pthread_mutex_unlock(&run->lock);
    return stage_sink_write(s, rows, err);
  }
  if (rc == SL_OK) {
    keyed_rows *k = keep_batch(s, rows, key, &rc, err);
    widen_span(k, k->rows.nbufs - 1, lo, hi);
  }
  stage_runner_news(run);
  pthread_mutex_unlock(&run->lock);
  return rc;
}

int stage_sink_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  leaf_store *ls = s->store;
  stage_runner *run = ls->run;
  pthread_mutex_lock(&run->lock);
  bool stop = run->cancelled;
  if (wm > ls->wm) {
    ls->wm = wm;
    stage_runner_news(run);
  }
  pthread_mutex_unlock(&run->lock);
  return stop ? sl_error_set(err, SL_ECANCELLED, "stopped") : SL_OK;
}

static int stage_sink_commit(sl_sink *s, sl_error *err) {
  (void)s;
  (void)err;
  return SL_OK;
}

int stage_sink_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok;
  (void)err;
  free(s->scratch);
  free(s);
  return SL_OK;
}

static uint64_t stage_sink_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector stage_sink = {
    .name = "stage",
    .description = "rows of a leaf for the stages above it",
    .open = stage_sink_open,
    .write = stage_sink_write,
    .write_owned = stage_sink_write_owned,
    .commit = stage_sink_commit,
    .close = stage_sink_close,
    .rows_written = stage_sink_rows,
    .watermark = stage_sink_watermark,
    .watermark_each_window = true,
};

void keyed_rows_free(keyed_rows *k) {
  sorted_result_free(&k->rows);
  free(k->tmin);
  free(k->tmax);
}

/* Free the rows of a store's first (smallest) key. */
void drop_first_key(leaf_store *ls) {
  ls->bytes -= sorted_result_bytes(&ls->keys[0].rows);
  keyed_rows_free(&ls->keys[0]);
  ls->keys++;
  ls->front++;
  ls->capkeys--;
  if (--ls->nkeys == 0) { /* empty: all the room from the start again */
    ls->keys -= ls->front;
    ls->capkeys += ls->front;
    ls->front = 0;
  }
}
