/* running_extremes.c - the MAX or MIN so far per window end, and the rows
 * that can still equal it (running_extremes.h). */
#include <stdlib.h>
#include <string.h>

#include "sluice/common/int_math.h"
#include "sluice/state/running_extremes.h"
#include "sluice/state/window_assign.h"

typedef struct sl_extreme_seen seen;

/* The entry of window end `end` (made, with value v, if `make`; the
 * oldest forgotten when SL_EXTREMES_SEEN are remembered), or NULL. */
static seen *seen_at(sl_running_extremes *e, int64_t end, bool make,
                     int64_t v) {
  int i = e->nseen;
  while (i > 0 && e->seen[i - 1].end > end) /* rows come mostly in order */
    i--;
  if (i > 0 && e->seen[i - 1].end == end)
    return &e->seen[i - 1];
  if (!make)
    return NULL;
  if (!e->seen) {
    e->seen = malloc(sizeof *e->seen * SL_EXTREMES_SEEN);
    if (!e->seen)
      abort();
  }
  if (e->nseen == SL_EXTREMES_SEEN) {
    if (i == 0)
      return NULL; /* older than all: not remembered */
    memmove(&e->seen[0], &e->seen[1], sizeof *e->seen * (size_t)(--i));
    e->nseen--;
  }
  e->moved++; /* entries move: the last time's pointers are stale */
  memmove(&e->seen[i + 1], &e->seen[i],
          sizeof *e->seen * (size_t)(e->nseen - i));
  e->seen[i] = (seen){end, v};
  e->nseen++;
  return &e->seen[i];
}

bool sl_extremes_keep(sl_running_extremes *e, const sl_row_layout *l,
                      const uint8_t *row, int64_t t) {
  const sl_stage_extreme *x = e->x;
  if (sl_row_is_null(row, x->col))
    return false;
  return sl_extremes_keep_value(
      e, sl_int_load(row + l->fields[x->col].offset, l->fields[x->col].ptype),
      t);
}

/* The first window end a row at time t meets: the ends in [t - hi,
 * t - lo], on the grid offset + k * size. */
static int64_t first_met_end(const sl_stage_extreme *x, int64_t t) {
  const sl_plan_window *w = &x->window;
  int64_t from = t - x->hi_us - w->offset_us;
  return sl_floor_div(from + w->size_us - 1, w->size_us) * w->size_us +
         w->offset_us;
}

static bool at_extreme(const sl_stage_extreme *x, int64_t v, int64_t m) {
  return x->max ? v >= m : v <= m;
}

/* Remember the windows time t meets (by index into seen), unless there
 * are more than SL_EXTREMES_MEETS of them; own: t's own window, or NULL. */
static void remember_windows(sl_running_extremes *e, int64_t t,
                             const seen *own) {
  const sl_stage_extreme *x = e->x;
  e->last.valid = true;
  e->last.unseen = false;
  e->last.nmeets = 0;
  for (int64_t end = first_met_end(x, t); end <= t - x->lo_us;
       end += x->window.size_us) {
    const seen *s = seen_at(e, end, false, 0);
    if (!s)
      e->last.unseen = true;
    else if (e->last.nmeets < SL_EXTREMES_MEETS)
      e->last.meets[e->last.nmeets++] = (int)(s - e->seen);
    else
      e->last.valid = false;
  }
  e->last.t = t;
  e->last.moved = e->moved;
  e->last.own = own ? (int)(own - e->seen) : -1;
}

/* e->bar after a row at time t: valid while the windows t meets are all
 * remembered and known (the last time's). */
static void set_bar(sl_running_extremes *e, int64_t t) {
  const sl_stage_extreme *x = e->x;
  sl_extremes_bar *b = &e->bar;
  b->max = x->max;
  b->valid = e->last.valid && !e->last.unseen && e->last.t == t &&
             e->last.moved == e->moved;
  if (!b->valid)
    return;
  /* a row meeting no window is dropped whatever its value: only its own
   * window's extreme can take it */
  int64_t bar = x->max ? INT64_MAX : INT64_MIN;
  for (int k = -1; k < e->last.nmeets; k++) {
    int i = k < 0 ? e->last.own : e->last.meets[k];
    if (i < 0)
      continue;
    int64_t m = e->seen[i].value;
    if (x->max ? m < bar : m > bar)
      bar = m;
  }
  b->t = t;
  b->bar = bar;
}

static bool keep_value(sl_running_extremes *e, int64_t v, int64_t t);

bool sl_extremes_keep_value(sl_running_extremes *e, int64_t v, int64_t t) {
  bool keep = keep_value(e, v, t);
  set_bar(e, t);
  return keep;
}

static bool keep_value(sl_running_extremes *e, int64_t v, int64_t t) {
  const sl_stage_extreme *x = e->x;
  /* Many rows share an event time (46 bids a millisecond per worker in
   * NEXMark): the windows of the last time are remembered by index, while
   * no entry has moved. */
  bool same = e->last.valid && e->last.t == t && e->last.moved == e->moved;
  seen *own =
      same ? (e->last.own >= 0 ? &e->seen[e->last.own] : NULL)
           : seen_at(e, slice_of(&x->window, t) + x->window.size_us, true, v);
  if (own && (x->max ? v > own->value : v < own->value))
    own->value = v;
  if (!same)
    remember_windows(e, t, own);
  if (!e->last.valid) { /* too many to remember: each one looked up */
    for (int64_t end = first_met_end(x, t); end <= t - x->lo_us;
         end += x->window.size_us) {
      const seen *s = seen_at(e, end, false, 0);
      if (!s || at_extreme(x, v, s->value))
        return true;
    }
    return false;
  }
  if (e->last.unseen)
    return true;
  for (int k = 0; k < e->last.nmeets; k++)
    if (at_extreme(x, v, e->seen[e->last.meets[k]].value))
      return true;
  return false;
}

uint32_t sl_extremes_filter(sl_running_extremes *e, sl_buffer *b) {
  const sl_row_layout *l = b->layout;
  int tf = e->x->time_col;
  uint32_t width = l->width, kept = 0;
  for (uint32_t i = 0; i < b->nrows; i++) {
    uint8_t *row = sl_buffer_row(b, i);
    /* (no event time: it meets no window) */
    if (sl_row_is_null(row, tf) ||
        !sl_extremes_keep(e, l, row, SL_FIELD(row, l, tf, int64_t)))
      continue;
    if (kept != i)
      memmove(sl_buffer_row(b, kept), row, width);
    kept++;
  }
  uint32_t dropped = b->nrows - kept;
  b->nrows = kept;
  return dropped;
}

void sl_extremes_free(sl_running_extremes *e) {
  e->bar.valid = 0;
  free(e->seen);
  e->seen = NULL;
  e->nseen = 0;
  e->last.valid = false;
}
