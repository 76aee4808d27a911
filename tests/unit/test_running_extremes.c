/* test_running_extremes.c - state/running_extremes.c against a reference
 * that keeps every window's MAX (MIN) and looks each row's windows up
 * afresh: the same rows kept, whatever the order of times, how many rows
 * share a time (the last time's windows are remembered) and the join's
 * interval.  As a compiled loop does, a row that the quick bar
 * (sl_extremes_bar) drops is not passed on: the reference must drop it
 * too, and what follows must still agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/common/int_math.h"
#include "sluice/state/running_extremes.h"

#define SIZE 10 /* window size (us) */
#define NWIN 50 /* window ends 10..500: fewer than SL_EXTREMES_SEEN */

/* window k ends at k * SIZE; entries for k in -PAD..NWIN + PAD */
#define PAD 8
typedef struct reference {
  bool has[NWIN + 2 * PAD + 1];
  int64_t value[NWIN + 2 * PAD + 1];
} reference;

static uint64_t g_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}

/* The reference's answer for value v at time t (0 <= t < NWIN * SIZE). */
static bool reference_keep(reference *r, const sl_stage_extreme *x, int64_t v,
                           int64_t t) {
  int64_t own = sl_floor_div(t, SIZE) + 1 + PAD; /* its window's end */
  if (!r->has[own] || (x->max ? v > r->value[own] : v < r->value[own]))
    r->value[own] = v;
  r->has[own] = true;
  for (int64_t k = 0; k <= NWIN + 2 * PAD; k++) {
    int64_t end = (k - PAD) * SIZE;
    if (end < t - x->hi_us || end > t - x->lo_us)
      continue;
    if (!r->has[k] || (x->max ? v >= r->value[k] : v <= r->value[k]))
      return true;
  }
  return false;
}

/* rows rows of one run: times mostly rising, many repeated, some going
 * back; values random. */
static void run(bool max, int64_t lo, int64_t hi, int rows, int *kept,
                int *quick) {
  sl_stage_extreme x = {0};
  x.max = max;
  x.window.kind = SL_WINDOW_TUMBLE;
  x.window.size_us = x.window.slide_us = SIZE;
  x.window.unit_us = 1;
  x.lo_us = lo;
  x.hi_us = hi;
  sl_running_extremes e = {0};
  e.x = &x;
  reference r = {0};
  int64_t t = 0;
  for (int i = 0; i < rows; i++) {
    uint64_t step = rnd() % 16;
    if (step < 10)
      ; /* the same time again */
    else if (step < 15)
      t += 1 + (int64_t)(rnd() % 3);
    else
      t -= (int64_t)(rnd() % 25); /* out of order */
    if (t < 0)
      t = 0;
    if (t >= NWIN * SIZE)
      t = NWIN * SIZE - 1;
    int64_t v = (int64_t)(rnd() % 1000);
    bool want = reference_keep(&r, &x, v, t);
    bool fast = sl_extremes_bar_drops(&e.bar, v, t);
    bool got = !fast && sl_extremes_keep_value(&e, v, t);
    *quick += fast;
    if (want != got)
      fail_msg("row %d (t %lld, v %lld, %s, lo %lld, hi %lld): reference "
               "%d, running_extremes %d%s",
               i, (long long)t, (long long)v, max ? "MAX" : "MIN",
               (long long)lo, (long long)hi, want, got,
               fast ? " (by the bar)" : "");
    *kept += got;
  }
  sl_extremes_free(&e);
}

static void test_same_as_reference(void **state) {
  (void)state;
  /* q7's interval (its own window: ends in [t + 1, t + SIZE + 1]), one
   * that meets several windows, one that meets only earlier ones, and one
   * that meets more than SL_EXTREMES_MEETS (each looked up every time) */
  const int64_t intervals[][2] = {{-(SIZE + 1), -1},
                                  {-3 * SIZE, 0},
                                  {2, 2 * SIZE},
                                  {-SIZE, SIZE},
                                  {-6 * SIZE, 0}};
  for (int m = 0; m < 2; m++)
    for (size_t k = 0; k < sizeof intervals / sizeof intervals[0]; k++) {
      int kept = 0, quick = 0;
      run(m == 0, intervals[k][0], intervals[k][1], 20000, &kept, &quick);
      /* something is dropped, something kept: the test tells them apart */
      assert_true(kept > 0);
      assert_true(kept < 20000);
      /* and the bar answers for many of the dropped rows (where every
       * window a time meets is remembered) */
      if (k < 4)
        assert_true(quick > (20000 - kept) / 4);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_as_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
