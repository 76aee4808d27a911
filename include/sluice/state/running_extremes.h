/* running_extremes.h - the MAX (or MIN) so far of a value per window, and
 * whether a row can still equal its windows' extreme (plan.h,
 * sl_stage_extreme; planner/stage_extremes.c says when that holds).  Kept
 * by a stream leaf's workers over their own rows (exec/op_keep_extremes.c)
 * and by its stage store over all of them (exec/stage_sink.c): an
 * extreme over some of the rows is never above (below) the one over all,
 * so a row either drops could not match. */
#ifndef SLUICE_STATE_RUNNING_EXTREMES_H
#define SLUICE_STATE_RUNNING_EXTREMES_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/planner/plan.h"
#include "sluice/row/row.h"

#define SL_EXTREMES_SEEN 64 /* window ends remembered */
#define SL_EXTREMES_MEETS 4 /* windows of one time remembered */

/* The quick answer a compiled loop checks before it calls
 * sl_extremes_keep_value (jit.h, sl_jit_gate): a row whose time is t and
 * whose value is below bar (MAX; above it for MIN) is dropped, and counted
 * in dropped, with no call.  Kept by sl_extremes_keep_value after every
 * row: bar is the lowest (MAX; the highest for MIN) running extreme of the
 * windows time t meets and of its own window, so a row it drops could
 * match none of them and would change none.  valid = 0: every row asks. */
typedef struct sl_extremes_bar {
  int64_t t, bar;
  uint64_t dropped;
  int32_t valid, max;
} sl_extremes_bar;

/* What the compiled loop checks (for tests and C callers). */
static inline bool sl_extremes_bar_drops(const sl_extremes_bar *b, int64_t v,
                                         int64_t t) {
  return b->valid && b->t == t && (b->max ? v < b->bar : v > b->bar);
}

typedef struct sl_running_extremes {
  const sl_stage_extreme *x;
  struct sl_extreme_seen {
    int64_t end, value;
  } * seen; /* by end; the oldest forgotten (that only keeps more rows) */
  int nseen;
  uint64_t moved; /* times entries of seen moved (insertions) */
  /* The last event time's own window and the windows it meets, as
   * indexes into seen, valid while `moved` is unchanged. */
  struct {
    bool valid, unseen; /* unseen: it meets a window not seen yet */
    int64_t t;
    uint64_t moved;
    int own, nmeets;
    int meets[SL_EXTREMES_MEETS];
  } last;
  sl_extremes_bar bar;
} sl_running_extremes;

/* Whether row (of layout l, event time t) can still equal the MAX (MIN)
 * of a window it meets; its value counted into its own window's first.  A
 * NULL equals nothing. */
bool sl_extremes_keep(sl_running_extremes *e, const sl_row_layout *l,
                      const uint8_t *row, int64_t t);

/* The same for a row's value v (not NULL), as a compiled loop has it
 * before the row is written (exec/op_keep_extremes.c); sets e->bar for
 * the rows that follow. */
bool sl_extremes_keep_value(sl_running_extremes *e, int64_t v, int64_t t);

/* The rows of b that can, moved down in order (their long strings stay
 * where they are); returns how many were dropped.  The time is column
 * x->time_col. */
uint32_t sl_extremes_filter(sl_running_extremes *e, sl_buffer *b);

void sl_extremes_free(sl_running_extremes *e);

#endif
