/* clock.h - the monotonic clock, for measuring durations (query times,
 * benchmarks, sampling budgets, channel waits).  Header-only. */
#ifndef SLUICE_CLOCK_H
#define SLUICE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Seconds since an arbitrary fixed point. */
static inline double sl_clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Nanoseconds since an arbitrary fixed point. */
static inline int64_t sl_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The CLOCK_REALTIME time ms milliseconds from now, for
 * pthread_cond_timedwait (whose condition variables use that clock). */
static inline struct timespec sl_clock_deadline_ms(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += ms * 1000000;
  while (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  return ts;
}

/* Sleep until sl_clock_seconds() reaches `until`, but at most `at_most`
 * seconds (so that a polling caller looks at its cancel flag meanwhile);
 * whether `until` has been reached. */
static inline bool sl_clock_nap_until(double until, double at_most) {
  double wait = until - sl_clock_seconds();
  if (wait <= 0)
    return true;
  if (wait > at_most)
    wait = at_most;
  struct timespec ts = {(time_t)wait,
                        (long)((wait - (double)(time_t)wait) * 1e9)};
  nanosleep(&ts, NULL);
  return sl_clock_seconds() >= until;
}

#endif
