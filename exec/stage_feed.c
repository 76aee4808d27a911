/* stage_feed.c - rows of a staged plan's leaf that arrive from outside the
 * process: a join's side, which its nodes send to every node running the
 * stages over links (executor.h, sl_stage_feed; stage_link.c).
 *
 * The node's link reader pushes frames (rows in the ROWS wire form,
 * watermarks) in arrival order; the stage runner's feeding thread takes
 * them and hands them to the leaf's stage sink as an executor would.  A
 * mutex-and-condition queue, bounded: once SL_FEED_MAX_ITEMS items or
 * SL_FEED_MAX_BYTES bytes wait, the link reader stops reading this leaf's
 * links (sl_stage_feed_full) and TCP holds their senders back, whose
 * sources then wait.  Only this leaf's links stop: the stages may be
 * waiting for another leaf's rows or watermark, and a leaf whose feed is
 * full is either held back by the stages because it runs ahead of the
 * windows they can fire (stage_runner.c), or waits for the runner, which
 * takes it again once it has written a window. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/net/node_messages.h"

typedef struct feed_item {
  struct feed_item *next;
  bool rows;  /* rows (payload), else a watermark */
  int64_t wm; /* a watermark */
  size_t len;
  char payload[]; /* ROWS wire form: [rows][heap][cap] rows heap */
} feed_item;

struct sl_stage_feed {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  feed_item *head, *tail;
  int items;    /* waiting */
  size_t bytes; /* their payload */
  bool closed;
};

sl_stage_feed *sl_stage_feed_new(void) {
  sl_stage_feed *f = calloc(1, sizeof *f);
  if (!f)
    abort();
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->cond, NULL);
  return f;
}

void sl_stage_feed_free(sl_stage_feed *f) {
  if (!f)
    return;
  for (feed_item *i = f->head, *n; i; i = n) {
    n = i->next;
    free(i);
  }
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->cond);
  free(f);
}

static void push(sl_stage_feed *f, feed_item *it) {
  pthread_mutex_lock(&f->lock);
  if (f->closed) {
    free(it);
  } else {
    if (f->tail)
      f->tail->next = it;
    else
      f->head = it;
    f->tail = it;
    f->items++;
    f->bytes += it->len;
    pthread_cond_broadcast(&f->cond);
  }
  pthread_mutex_unlock(&f->lock);
}

void sl_stage_feed_rows(sl_stage_feed *f, const void *payload, size_t len) {
  feed_item *it = malloc(sizeof *it + len);
  if (!it)
    abort();
  it->next = NULL;
  it->rows = true;
  it->wm = 0;
  it->len = len;
  memcpy(it->payload, payload, len);
  push(f, it);
}

void sl_stage_feed_watermark(sl_stage_feed *f, int64_t wm) {
  feed_item *it = malloc(sizeof *it);
  if (!it)
    abort();
  it->next = NULL;
  it->rows = false;
  it->wm = wm;
  it->len = 0;
  push(f, it);
}

bool sl_stage_feed_full(sl_stage_feed *f) {
  pthread_mutex_lock(&f->lock);
  /* A closed feed drops what comes: its links are read to their end. */
  bool full = !f->closed &&
              (f->items >= SL_FEED_MAX_ITEMS || f->bytes >= SL_FEED_MAX_BYTES);
  pthread_mutex_unlock(&f->lock);
  return full;
}

void sl_stage_feed_close(sl_stage_feed *f) {
  pthread_mutex_lock(&f->lock);
  f->closed = true;
  pthread_cond_broadcast(&f->cond);
  pthread_mutex_unlock(&f->lock);
}

int sl_stage_feed_take(sl_stage_feed *f, int timeout_ms, sl_buffer *rows,
                       const sl_row_layout *layout, int64_t *wm,
                       sl_error *err) {
  pthread_mutex_lock(&f->lock);
  if (!f->head && !f->closed) {
    struct timespec until = sl_clock_deadline_ms(timeout_ms);
    pthread_cond_timedwait(&f->cond, &f->lock, &until);
  }
  feed_item *it = f->head;
  if (it) {
    f->head = it->next;
    if (!f->head)
      f->tail = NULL;
    f->items--;
    f->bytes -= it->len;
  }
  bool closed = f->closed;
  pthread_mutex_unlock(&f->lock);
  if (!it)
    return closed ? SL_FEED_CLOSED : SL_FEED_NOTHING;
  if (!it->rows) {
    *wm = it->wm;
    free(it);
    return SL_FEED_WATERMARK;
  }
  int rc = sl_rows_msg_decode(it->payload, it->len, layout, rows, err);
  free(it);
  return rc == SL_OK ? SL_FEED_ROWS : rc;
}
