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

/* Whether v meets an extreme of any window it meets (the windows of time t
 * counted afresh: more than SL_EXTREMES_MEETS of them). */
static bool slow_meets(sl_running_extremes *e, int64_t v, int64_t t) {
  const sl_stage_extreme *x = e->x;
  const sl_plan_window *w = &x->window;
  int64_t size = w->size_us;
  int64_t from = t - x->hi_us - w->offset_us;
  for (int64_t end = sl_floor_div(from + size - 1, size) * size + w->offset_us;
       end <= t - x->lo_us; end += size) {
    const seen *s = seen_at(e, end, false, 0);
    if (!s || (x->max ? v >= s->value : v <= s->value))
      return true;
  }
  return false;
}

/* Is v at least (MAX; at most: MIN) the value of some window it meets,
 * or does it meet one not seen yet? */
static bool meets_extreme(const sl_running_extremes *e, int64_t v) {
  if (e->last.unseen)
    return true;
  for (int k = 0; k < e->last.nmeets; k++) {
    int64_t m = e->seen[e->last.meets[k]].value;
    if (e->x->max ? v >= m : v <= m)
      return true;
  }
  return false;
}

bool sl_extremes_keep_value(sl_running_extremes *e, int64_t v, int64_t t) {
  const sl_stage_extreme *x = e->x;
  bool max = x->max;
  /* Many rows share an event time (46 bids a millisecond per worker in
   * NEXMark): the windows of the last time are remembered by index, while
   * no entry has moved. */
  if (e->last.valid && e->last.t == t && e->last.moved == e->moved) {
    if (e->last.own >= 0) {
      seen *own = &e->seen[e->last.own];
      if (max ? v > own->value : v < own->value)
        own->value = v;
    }
    return meets_extreme(e, v);
  }
  const sl_plan_window *w = &x->window;
  seen *own = seen_at(e, slice_of(w, t) + w->size_us, true, v);
  if (own && (max ? v > own->value : v < own->value))
    own->value = v;
  e->last.valid = false;
  e->last.unseen = false;
  e->last.nmeets = 0;
  /* the window ends in [t - hi, t - lo]: on the grid offset + k * size */
  int64_t size = w->size_us;
  int64_t from = t - x->hi_us - w->offset_us;
  bool cacheable = true;
  for (int64_t end = sl_floor_div(from + size - 1, size) * size + w->offset_us;
       end <= t - x->lo_us; end += size) {
    const seen *s = seen_at(e, end, false, 0);
    if (!s)
      e->last.unseen = true;
    else if (e->last.nmeets < SL_EXTREMES_MEETS)
      e->last.meets[e->last.nmeets++] = (int)(s - e->seen);
    else
      cacheable = false;
  }
  if (cacheable) {
    e->last.valid = true;
    e->last.t = t;
    e->last.moved = e->moved;
    e->last.own = own ? (int)(own - e->seen) : -1;
  }
  if (e->last.unseen)
    return true;
  for (int k = 0; k < e->last.nmeets; k++) {
    int64_t m = e->seen[e->last.meets[k]].value;
    if (max ? v >= m : v <= m)
      return true;
  }
  return cacheable ? false : slow_meets(e, v, t);
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
  free(e->seen);
  e->seen = NULL;
  e->nseen = 0;
  e->last.valid = false;
}
