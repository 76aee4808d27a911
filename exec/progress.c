/* progress.c - the progress line of a running query: to the shell, or on
 * a node to the coordinator (PROGRESS).  Separate: it only reads the
 * workers' counters and the coordinator's, and changes nothing. */
#include <stdio.h>
#include <time.h>

#include "coordinator_int.h"
#include "sluice/common/clock.h"

/* The progress line: events so far and their rate, the watermark every
 * worker has passed, windows fired.  On the coordinator of nodes the
 * workers are the node links, whose events and windows are what the nodes
 * last said (PROGRESS); nodes that fire their windows themselves each fire
 * every window (for their keys): the most any node fired. */
void sl_coord_report_progress(sl_result_sink *shell, worker *ws, int n,
                              const coordinator *c, double start) {
  uint64_t events = 0, windows = c->windows;
  int64_t wm = WM_MAX;
  for (int i = 0; i < n; i++) {
    events += atomic_load_explicit(&ws[i].events, memory_order_relaxed);
    pthread_mutex_lock(&ws[i].lock);
    if (!ws[i].done && ws[i].published_wm < wm)
      wm = ws[i].published_wm;
    if (c->of_nodes && ws[i].windows_fired > windows)
      windows = ws[i].windows_fired;
    pthread_mutex_unlock(&ws[i].lock);
  }
  double secs = sl_clock_seconds() - start;
  char when[64] = "none yet";
  if (wm != WM_MIN && wm != WM_MAX) {
    time_t t = (time_t)(wm / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  }
  char line[256];
  snprintf(line, sizeof line,
           "%llu events in %.1f s (%.0f events/s), watermark %s, %llu "
           "windows fired, %llu rows (Ctrl-C cancels)",
           (unsigned long long)events, secs,
           secs > 0 ? (double)events / secs : 0.0, when,
           (unsigned long long)windows, (unsigned long long)c->rows_out);
  shell->progress(shell->ctx, line);
}

/* A node: its events and windows fired so far, for the coordinator's
 * progress line (node_frames.h, PROGRESS). */
int sl_coord_send_progress(const coordinator *c, worker *ws, int n,
                           sl_error *err) {
  uint64_t p[2] = {0, c->windows};
  for (int i = 0; i < n; i++)
    p[0] += atomic_load_explicit(&ws[i].events, memory_order_relaxed);
  return sl_frame_out_send(&c->export, SL_FRAME_PROGRESS, p, sizeof p, NULL, 0,
                           err);
}
