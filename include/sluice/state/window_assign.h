/* window_assign.h - which windows a record or slice belongs to (TUMBLE,
 * HOP, CUMULATE; plan.h, sl_plan_window): shared by the workers' window
 * state (worker.c) and the stage store's window rows (stage_runner.c), so
 * both assign a time to the same windows.  Slices are slide (step) long
 * under HOP and CUMULATE, size long under TUMBLE. */
#ifndef SLUICE_RUNTIME_WINDOW_ASSIGN_H
#define SLUICE_RUNTIME_WINDOW_ASSIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/int_math.h"
#include "sluice/planner/plan.h"

/* The first window end that includes slice `start`. */
static inline int64_t first_end(const sl_plan_window *pw, int64_t start) {
  switch (pw->kind) {
  case SL_WINDOW_TUMBLE:
    return start + pw->size_us;
  default: /* HOP and CUMULATE: the window ending at the slice's end */
    return start + pw->slide_us;
  }
}

/* The start of the window that ends at `end`. */
static inline int64_t window_start(const sl_plan_window *pw, int64_t end) {
  if (pw->kind == SL_WINDOW_CUMULATE)
    return sl_floor_div(end - 1 - pw->offset_us, pw->size_us) * pw->size_us +
           pw->offset_us;
  return end - pw->size_us;
}

/* The last window end that includes slice `start`. */
static inline int64_t last_end(const sl_plan_window *pw, int64_t start) {
  if (pw->kind == SL_WINDOW_CUMULATE)
    return sl_floor_div(start - pw->offset_us, pw->size_us) * pw->size_us +
           pw->offset_us + pw->size_us;
  return start + pw->size_us;
}

/* The distance between consecutive window ends: the size under TUMBLE,
 * the slide (step) under HOP and CUMULATE. */
static inline int64_t window_step(const sl_plan_window *pw) {
  return pw->kind == SL_WINDOW_TUMBLE ? pw->size_us : pw->slide_us;
}

/* The slice of a record at time ts. */
static inline int64_t slice_of(const sl_plan_window *pw, int64_t ts) {
  if (pw->kind == SL_WINDOW_TUMBLE)
    return sl_floor_div(ts - pw->offset_us, pw->size_us) * pw->size_us +
           pw->offset_us;
  return sl_floor_div(ts - pw->offset_us, pw->slide_us) * pw->slide_us +
         pw->offset_us;
}

/* The first window of a record at time ts that it counts in: its first
 * window, or the later one live names when that is later (a window row
 * whose first windows had fired when it came: exec/worker.c). */
static inline int64_t first_live_end(const sl_plan_window *pw, int64_t ts,
                                     int64_t live) {
  int64_t end = first_end(pw, slice_of(pw, ts));
  return live > end ? live : end;
}

/* A record at time t is late by watermark wm when every window it belongs
 * to has fired: its last window's end - unit is at or before wm. */
static inline bool all_windows_fired(const sl_plan_window *pw, int64_t t,
                                     int64_t wm) {
  return last_end(pw, slice_of(pw, t)) - pw->unit_us <= wm;
}

#endif
