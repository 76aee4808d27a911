/* node_frames.c - the framing of the control connection between the
 * coordinator and its nodes (node_frames.h): [type][length][payload]. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sluice/net/node_frames.h"
#include "sluice/common/clock.h"

int sl_send_all(int fd, const void *p, size_t n, sl_error *err) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return sl_error_set(err, SL_EIO,
                          "the connection to the other side broke while "
                          "sending (%s)",
                          k < 0 ? strerror(errno) : "closed");
    c += k;
    n -= (size_t)k;
  }
  return SL_OK;
}

/* Read n bytes.  Once a frame has begun, its sender sends the rest at
 * once (sl_frame_send), so a sender that goes silent in the middle of one
 * for SL_SILENCE_MS hangs (heartbeats only come between frames): the
 * connection is shut down and the read fails, rather than waiting for
 * ever. */
static int read_all(int fd, void *p, size_t n, sl_error *err) {
  char *c = p;
  while (n > 0) {
    struct pollfd pf = {fd, POLLIN, 0};
    int ready = poll(&pf, 1, SL_SILENCE_MS);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      shutdown(fd, SHUT_RDWR);
      return sl_error_set(err, SL_EIO,
                          "the other side stopped in the middle of a "
                          "message and sent nothing for %d s: its process "
                          "hangs, or its host or the network to it is gone",
                          SL_SILENCE_MS / 1000);
    }
    ssize_t k = recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return sl_error_set(err, SL_EIO, "the other side %s",
                          k == 0 ? "closed the connection"
                                 : "broke the connection");
    c += k;
    n -= (size_t)k;
  }
  return SL_OK;
}

int sl_frame_send(int fd, uint32_t type, const void *a, size_t alen,
                  const void *b, size_t blen, sl_error *err) {
  if (alen + blen > SL_FRAME_MAX)
    return sl_error_set(err, SL_EINVAL,
                        "a message of %zu bytes is larger than the 1 GiB a "
                        "frame may carry",
                        alen + blen);
  uint32_t head[2] = {type, (uint32_t)(alen + blen)};
  int rc = sl_send_all(fd, head, sizeof head, err);
  if (rc == SL_OK && alen)
    rc = sl_send_all(fd, a, alen, err);
  if (rc == SL_OK && blen)
    rc = sl_send_all(fd, b, blen, err);
  return rc;
}

int sl_frame_out_send(const sl_frame_out *o, uint32_t type, const void *a,
                      size_t alen, const void *b, size_t blen, sl_error *err) {
  if (o->lock)
    pthread_mutex_lock(o->lock);
  int rc = sl_frame_send(o->fd, type, a, alen, b, blen, err);
  if (o->lock)
    pthread_mutex_unlock(o->lock);
  return rc;
}

int sl_node_check_silence(int fd, double heard, sl_error *err) {
  if (sl_clock_seconds() - heard <= SL_SILENCE_MS / 1000.0)
    return SL_OK;
  /* Silence counts only while this side listens: frames waiting unread
   * (the caller was busy with another node's frames, descheduled, or held
   * back this node's rows) say the node is there.  The caller reads them
   * next, which sets `heard` again. */
  struct pollfd p = {fd, POLLIN, 0};
  int k;
  do
    k = poll(&p, 1, 0);
  while (k < 0 && errno == EINTR);
  if (k == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
    return SL_OK;
  shutdown(fd, SHUT_RDWR);
  return sl_error_set(err, SL_EIO,
                      "sent nothing for %d s, not even a heartbeat: its "
                      "process hangs, or its host or the network to it is "
                      "gone",
                      SL_SILENCE_MS / 1000);
}

int sl_frame_recv(int fd, uint32_t *type, sl_strbuf *payload, int timeout_ms,
                  sl_error *err) {
  sl_strbuf_reset(payload);
  /* Between frames a peer may be silent as long as the caller allows (-1:
   * for ever); within one, read_all allows SL_SILENCE_MS. */
  struct pollfd p = {fd, POLLIN, 0};
  int k;
  do
    k = poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
  while (k < 0 && errno == EINTR);
  if (k == 0)
    return SL_FRAME_TIMEOUT;
  uint32_t head[2];
  int rc = read_all(fd, head, sizeof head, err);
  if (rc != SL_OK)
    return rc;
  if (head[1] > SL_FRAME_MAX)
    return sl_error_set(err, SL_EINVAL,
                        "the other side sent a frame of %u bytes: not a "
                        "Sluice node of this version",
                        head[1]);
  *type = head[0];
  char chunk[65536];
  uint32_t left = head[1];
  while (left > 0) {
    uint32_t n = left < sizeof chunk ? left : (uint32_t)sizeof chunk;
    rc = read_all(fd, chunk, n, err);
    if (rc != SL_OK)
      return rc;
    sl_strbuf_appendn(payload, chunk, n);
    left -= n;
  }
  return SL_OK;
}
