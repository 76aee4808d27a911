/* node_credit.c - the credits that hold a node's bulk frames back while
 * its coordinator's consumer is slow (node_frames.h, sl_node_credit).
 *
 * The node counts what it sends; the coordinator counts what its executor
 * has taken and sends the totals (CREDIT); a frame may go while the
 * difference is below the window.  Totals rather than increments: a
 * CREDIT the coordinator could not send at once is simply superseded by
 * the next one. */
#include <poll.h>
#include <string.h>

#include "sluice/common/clock.h"
#include "sluice/net/node_frames.h"

void sl_node_credit_init(sl_node_credit *c, const sl_cancel *cancel) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->cond, NULL);
  c->cancel = cancel;
}

void sl_node_credit_destroy(sl_node_credit *c) {
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->cond);
}

int sl_node_credit_grant(sl_node_credit *c, const void *payload, size_t len,
                         sl_error *err) {
  uint64_t t[2];
  if (len != sizeof t)
    return sl_error_set(err, SL_EIO,
                        "a CREDIT message of %zu bytes (not %zu): the "
                        "coordinator runs another build",
                        len, sizeof t);
  memcpy(t, payload, sizeof t);
  pthread_mutex_lock(&c->lock);
  if (t[0] > c->taken_frames)
    c->taken_frames = t[0];
  if (t[1] > c->taken_bytes)
    c->taken_bytes = t[1];
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
  return SL_OK;
}

static bool open_locked(const sl_node_credit *c) {
  return c->sent_frames - c->taken_frames < SL_NODE_CREDIT_FRAMES &&
         c->sent_bytes - c->taken_bytes < SL_NODE_CREDIT_BYTES;
}

bool sl_node_credit_open(sl_node_credit *c) {
  pthread_mutex_lock(&c->lock);
  bool open = open_locked(c);
  pthread_mutex_unlock(&c->lock);
  return open;
}

int sl_node_credit_take(sl_node_credit *c, size_t bytes, sl_error *err) {
  pthread_mutex_lock(&c->lock);
  /* The cancel token is requested by the watcher without this lock: look
   * at it every 10 ms, well within the 200 ms a stop may take. */
  while (!open_locked(c) && !sl_cancel_pending(c->cancel)) {
    struct timespec until = sl_clock_deadline_ms(10);
    pthread_cond_timedwait(&c->cond, &c->lock, &until);
  }
  bool go = open_locked(c);
  if (go) {
    c->sent_frames++;
    c->sent_bytes += bytes;
  }
  pthread_mutex_unlock(&c->lock);
  return go ? SL_OK : sl_error_set(err, SL_ECANCELLED, "query cancelled");
}

int sl_node_credit_send(int fd, uint64_t frames, uint64_t bytes,
                        sl_error *err) {
  uint64_t t[2] = {frames, bytes};
  return sl_frame_send(fd, SL_FRAME_CREDIT, t, sizeof t, NULL, 0, err);
}

void sl_node_credit_took(int fd, uint64_t taken[2], size_t bytes) {
  taken[0]++;
  taken[1] += bytes;
  struct pollfd pf = {fd, POLLOUT, 0};
  if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT))
    sl_node_credit_send(fd, taken[0], taken[1], NULL);
}
