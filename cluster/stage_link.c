/* stage_link.c - a join's side, sent straight from the nodes that run its
 * leaf to the nodes that run the stages (plan.h, sl_join_strategy;
 * node_frames.h, XLISTEN 3 and the link frames).
 *
 * When a join's stages run on the nodes (broadcast, repartition, late
 * merge), each stage node listens on one TCP socket for *links*: a
 * connection from every node of the other leaf's cluster.  A side node's
 * rows leave through the link sink below, which routes each row: to every
 * stage node (broadcast), or to the node leading its join key's partition
 * (repartition and late merge; the hash the stage nodes' partition leaders
 * split their own groups by).  Its watermark goes to every stage node.
 * Under a late merge of rows the sink holds each window's rows per
 * partition until its watermark passes the first window that needs them,
 * then sends them before the watermark.
 * On the stage node, a link reader thread takes every link's frames and
 * puts them on the fed leaf's queue (stage_feed.c): rows as they come, and
 * a watermark when the smallest of the links' watermarks grows, so the
 * stages see how far every sender is complete.
 *
 * A link's first frame names the leaf it carries (STAGE_HELLO): under a
 * repartition of both sides (SL_JOIN_SHUFFLE) the stage nodes' own leaf
 * is routed by its join key too, each stage node linking to every other
 * and to itself, and the reader keeps one feed and one watermark per
 * leaf.
 *
 * The rows never pass through the coordinator: it only starts both
 * clusters, hands the stage nodes' link addresses to the side's nodes, and
 * merges the stage nodes' results.  Links are TCP whatever the transport
 * between the workers (see docs/ARCHITECTURE.md).
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../net/auth_gate.h"
#include "node_link.h"
#include "partition_leader.h"
#include "sluice/common/clock.h"
#include "sluice/net/auth.h"
#include "sluice/net/channel.h"
#include "sluice/net/node_messages.h"
#include "sluice/state/sorted_result.h"
#include "sluice/state/window_assign.h"

/* ---- the sending end: a sink on each node of the side's leaf ---------- */

/* Late merge of window rows: the rows held for the window ending at end
 * (their first), split by the stage node they go to. */
typedef struct held_window {
  int64_t end;
  sorted_result *parts; /* per stage node */
} held_window;

struct sl_sink {
  const sl_row_layout *layout;
  uint32_t buffer_size;
  int n;
  int *fds; /* per stage node */
  int nroute;
  const int *route;
  uint64_t rows;
  int64_t wm_sent;
  const sl_plan_window *hold; /* or NULL: send as they come */
  int time_field, live_field;
  bool stream;
  int64_t hi_us;
  held_window *held; /* in order of end */
  int nheld, capheld;
};

static int link_broke(int i, sl_error *err) {
  /* A stage node that went away failed or was stopped; its own error (or
   * the coordinator's stop) is the cause, this the consequence. */
  char *why = err->message ? strdup(err->message) : NULL;
  sl_error_clear(err);
  sl_error_set(err, SL_ECANCELLED, "the link to stage node %d broke: %s", i,
               why ? why : "closed");
  free(why);
  return SL_ECANCELLED;
}

static int link_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  const sl_stage_link_spec *a = spec->arg;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->layout = spec->layout;
  s->buffer_size = a->buffer_size ? a->buffer_size : 65536;
  s->n = a->n;
  s->nroute = a->nroute;
  s->route = a->route;
  s->wm_sent = WM_MIN;
  s->hold = a->nroute > 0 ? a->hold : NULL;
  s->time_field = a->time_field;
  s->live_field = a->live_field;
  s->stream = a->stream;
  s->hi_us = a->hi_us;
  s->fds = malloc(sizeof(int) * (size_t)a->n);
  if (!s->fds)
    abort();
  int rc = SL_OK;
  for (int i = 0; i < a->n; i++)
    s->fds[i] = -1;
  uint32_t leaf = (uint32_t)a->leaf;
  for (int i = 0; i < a->n && rc == SL_OK; i++) {
    if (!a->addrs[i])
      rc = sl_error_set(err, SL_EINTERNAL, "no link address for stage node %d",
                        i);
    else
      rc = sl_channel_connect_stream(a->addrs[i], 10000, &s->fds[i], err);
    if (rc == SL_OK && a->secret)
      rc = sl_auth_connect(s->fds[i], a->secret, 10000, err);
    if (rc == SL_OK)
      rc = sl_frame_send(s->fds[i], SL_FRAME_STAGE_HELLO, &leaf, sizeof leaf,
                         NULL, 0, err);
    /* A stage node that is gone already stopped or failed: its own error
     * (or the coordinator's stop) is the cause, as for a link that breaks
     * later. */
    if (rc != SL_OK && rc != SL_EINTERNAL && rc != SL_EPERM)
      rc = link_broke(i, err);
  }
  if (rc != SL_OK) {
    for (int i = 0; i < a->n; i++)
      if (s->fds[i] >= 0)
        close(s->fds[i]);
    free(s->fds);
    free(s);
    return rc;
  }
  *out = s;
  return SL_OK;
}

static int send_to(sl_sink *s, int i, uint32_t type, const void *p, size_t len,
                   sl_error *err) {
  int rc = sl_frame_send(s->fds[i], type, p, len, NULL, 0, err);
  return rc == SL_OK ? SL_OK : link_broke(i, err);
}

/* The rows of copy (strings in its own buffers: they can be swizzled) to
 * node `to`, or to every node (to < 0). */
static int send_rows(sl_sink *s, sorted_result *copy, int to, sl_error *err) {
  int rc = SL_OK;
  sl_strbuf p = SL_STRBUF_INIT;
  for (int b = 0; b < copy->nbufs && rc == SL_OK; b++) {
    sl_strbuf_reset(&p);
    rc = sl_node_encode_rows(&copy->bufs[b], &p, err);
    for (int i = 0; i < s->n && rc == SL_OK; i++)
      if (to < 0 || i == to)
        rc = send_to(s, i, SL_FRAME_STAGE_ROWS, p.data, p.len, err);
  }
  sl_strbuf_free(&p);
  return rc;
}

/* Under which end a row waits: send_held sends it once the watermark
 * reaches that end less one time unit. */
static int64_t held_until(const sl_sink *s, const uint8_t *row, int64_t t) {
  const sl_plan_window *w = s->hold;
  if (s->stream) {
    /* The first window whose interval [end + lo, end + hi] reaches t ends
     * at the first window end at or after t - hi (after t - hi - 1 in
     * whole microseconds), and it fires when the watermark passes
     * end + hi. */
    return first_end(w, slice_of(w, t - s->hi_us - 1)) + s->hi_us + w->unit_us;
  }
  /* A window row waits with its first (live) window's rows; its later
   * windows (HOP, CUMULATE) fire after that one, at the stage node, which
   * puts it into each. */
  return first_live_end(w, t,
                        s->live_field < 0 || sl_row_is_null(row, s->live_field)
                            ? WM_MIN
                            : SL_FIELD(row, s->layout, s->live_field, int64_t));
}

/* The held rows of the window ending at end, made if new. */
static held_window *held_for(sl_sink *s, int64_t end) {
  int at = s->nheld;
  while (at > 0 && s->held[at - 1].end > end)
    at--;
  if (at > 0 && s->held[at - 1].end == end)
    return &s->held[at - 1];
  if (s->nheld == s->capheld) {
    s->capheld = s->capheld ? s->capheld * 2 : 8;
    s->held = realloc(s->held, sizeof *s->held * (size_t)s->capheld);
    if (!s->held)
      abort();
  }
  memmove(&s->held[at + 1], &s->held[at],
          sizeof *s->held * (size_t)(s->nheld - at));
  s->nheld++;
  held_window *h = &s->held[at];
  h->end = end;
  h->parts = calloc((size_t)s->n, sizeof *h->parts);
  if (!h->parts)
    abort();
  for (int p = 0; p < s->n; p++)
    sorted_result_init(&h->parts[p], s->layout, s->buffer_size);
  return h;
}

/* Send (or, after a failure, drop) the held windows ending at or before
 * wm + one time unit: the windows the watermark lets fire. */
static int send_held(sl_sink *s, int64_t wm, bool send, sl_error *err) {
  int rc = SL_OK, done = 0;
  while (done < s->nheld &&
         (wm == WM_MAX || s->held[done].end - s->hold->unit_us <= wm)) {
    held_window *h = &s->held[done++];
    for (int p = 0; p < s->n; p++) {
      if (send && rc == SL_OK && h->parts[p].rows > 0)
        rc = send_rows(s, &h->parts[p], p, err);
      sorted_result_free(&h->parts[p]);
    }
    free(h->parts);
  }
  if (done > 0) {
    memmove(s->held, s->held + done,
            sizeof *s->held * (size_t)(s->nheld - done));
    s->nheld -= done;
  }
  return rc;
}

static int link_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  s->rows += rows->nrows;
  int rc = SL_OK;
  if (s->hold) {
    const sl_row_layout *l = s->layout;
    for (uint32_t r = 0; r < rows->nrows && rc == SL_OK; r++) {
      const uint8_t *row = sl_buffer_row(rows, r);
      if (sl_row_is_null(row, s->time_field))
        continue; /* no event time: it meets no window */
      int64_t t = SL_FIELD(row, l, s->time_field, int64_t);
      held_window *h = held_for(s, held_until(s, row, t));
      uint64_t hash = sl_fields_hash(l, row, s->nroute, s->route);
      rc = sorted_result_add_row(&h->parts[sl_leader_partition(hash, s->n)],
                                 row, err);
    }
    return rc;
  }
  if (s->nroute == 0) { /* broadcast */
    sorted_result copy;
    sorted_result_init(&copy, s->layout, s->buffer_size);
    rc = sorted_result_add(&copy, rows, err);
    if (rc == SL_OK)
      rc = send_rows(s, &copy, -1, err);
    sorted_result_free(&copy);
    return rc;
  }
  sorted_result *parts = calloc((size_t)s->n, sizeof *parts);
  if (!parts)
    abort();
  for (int p = 0; p < s->n; p++)
    sorted_result_init(&parts[p], s->layout, s->buffer_size);
  for (uint32_t r = 0; r < rows->nrows && rc == SL_OK; r++) {
    const uint8_t *row = sl_buffer_row(rows, r);
    uint64_t h = sl_fields_hash(s->layout, row, s->nroute, s->route);
    rc = sorted_result_add_row(&parts[sl_leader_partition(h, s->n)], row, err);
  }
  for (int p = 0; p < s->n; p++) {
    if (rc == SL_OK && parts[p].rows > 0)
      rc = send_rows(s, &parts[p], p, err);
    sorted_result_free(&parts[p]);
  }
  free(parts);
  return rc;
}

static int link_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  if (wm <= s->wm_sent)
    return SL_OK;
  /* The windows the watermark fires go first: their rows must be there
   * before it is. */
  int rc = s->hold ? send_held(s, wm, true, err) : SL_OK;
  if (rc != SL_OK)
    return rc;
  s->wm_sent = wm;
  for (int i = 0; i < s->n && rc == SL_OK; i++)
    rc = send_to(s, i, SL_FRAME_STAGE_WM, &wm, sizeof wm, err);
  return rc;
}

static int link_close(sl_sink *s, bool ok, sl_error *err) {
  /* Everything was sent: the stage nodes' side is complete.  (Not after a
   * failure: the closed links without it tell them so.) */
  int rc = ok ? link_watermark(s, WM_MAX, err) : SL_OK;
  if (s->hold) /* what a failure left */
    send_held(s, WM_MAX, false, NULL);
  free(s->held);
  for (int i = 0; i < s->n; i++)
    close(s->fds[i]);
  free(s->fds);
  free(s);
  return rc;
}

static uint64_t link_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_to_stage_nodes = {
    .name = "stage-link",
    .description = "a join's side, to the nodes running its stages",
    .open = link_open,
    .write = link_write,
    .close = link_close,
    .rows_written = link_rows,
    .watermark = link_watermark,
    /* The stage nodes start on a window as soon as it is sent. */
    .watermark_each_window = true,
};

/* ---- the receiving end: a reader thread on each stage node ------------ */

struct sl_stage_links {
  int listen_fd;
  int nleaves;
  int *nsenders;         /* per leaf */
  sl_stage_feed **feeds; /* per leaf */
  const sl_secret *secret;
  atomic_bool stop;
  pthread_t thread;
  bool started;
};

/* One accepted link: whose rows it carries (-1 before its hello) and how
 * far its sender is complete. */
typedef struct link_in {
  int fd; /* -1 once ended */
  int leaf;
  int64_t wm;
} link_in;

/* The smallest watermark over leaf's senders (one that has not said hello
 * has sent none). */
static int64_t leaf_watermark(const sl_stage_links *l, const link_in *in, int n,
                              int leaf) {
  int64_t m = WM_MAX;
  int seen = 0;
  for (int i = 0; i < n; i++) {
    if (in[i].leaf != leaf)
      continue;
    seen++;
    if (in[i].wm < m)
      m = in[i].wm;
  }
  return seen == l->nsenders[leaf] ? m : WM_MIN;
}

static void *links_main(void *arg) {
  sl_stage_links *l = arg;
  int n = 0, accepted = 0, ended = 0;
  for (int k = 0; k < l->nleaves; k++)
    n += l->nsenders[k];
  link_in *in = malloc(sizeof *in * (size_t)(n + 1));
  int *at = malloc(sizeof(int) * (size_t)(n + 1)); /* poll slot -> link */
  int64_t *pushed = malloc(sizeof(int64_t) * (size_t)l->nleaves);
  struct pollfd *pfd = malloc(sizeof *pfd * (size_t)(n + 2));
  /* Links prove the secret in threads of their own: a silent connection
   * stalls only itself. */
  auth_gate *gate = l->secret ? auth_gate_new(l->secret, "a link") : NULL;
  if (!in || !at || !pushed || !pfd)
    abort();
  for (int k = 0; k < l->nleaves; k++)
    pushed[k] = WM_MIN;
  bool broken = false;
  sl_strbuf p = SL_STRBUF_INIT;
  sl_error err = {0};
  while (!atomic_load(&l->stop) && ended < n && !broken) {
    int np = 0;
    /* A leaf whose feed is full is not read until the stages take some
     * (stage_feed.c): its senders wait, the other leaves' links go on. */
    bool held = false;
    for (int i = 0; i < accepted; i++) {
      if (in[i].fd < 0)
        continue;
      if (in[i].leaf >= 0 && sl_stage_feed_full(l->feeds[in[i].leaf])) {
        held = true;
        continue;
      }
      at[np] = i;
      pfd[np].fd = in[i].fd;
      pfd[np].events = POLLIN;
      pfd[np++].revents = 0;
    }
    pfd[np].fd = accepted < n ? l->listen_fd : -1;
    pfd[np].events = POLLIN;
    pfd[np].revents = 0;
    pfd[np + 1].fd = gate ? auth_gate_fd(gate) : -1;
    pfd[np + 1].events = POLLIN;
    pfd[np + 1].revents = 0;
    if (poll(pfd, (nfds_t)(np + 2), held ? 2 : 50) <= 0)
      continue;
    if (pfd[np].revents & POLLIN) {
      int fd = accept(l->listen_fd, NULL, NULL);
      /* A connection that cannot prove the cluster secret is not a link:
       * closed (by the gate), not counted, and the query goes on. */
      if (fd >= 0 && gate)
        auth_gate_add(gate, fd);
      else if (fd >= 0)
        in[accepted++] = (link_in){fd, -1, WM_MIN};
    }
    if (pfd[np + 1].revents & POLLIN) {
      int fd;
      while ((fd = auth_gate_take(gate)) >= 0) {
        if (accepted < n)
          in[accepted++] = (link_in){fd, -1, WM_MIN};
        else
          close(fd); /* every sender is here: not this query's */
      }
    }
    for (int k = 0; k < np && !broken; k++) {
      link_in *li = &in[at[k]];
      if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      uint32_t type;
      int rc = sl_frame_recv(li->fd, &type, &p, 1000, &err);
      if (rc == SL_FRAME_TIMEOUT)
        continue;
      sl_error_clear(&err);
      if (rc != SL_OK) {
        /* The end of a link that had sent everything is its end; any
         * other end means the sender failed (its error, which the
         * coordinator reports, is the cause). */
        broken = li->wm != WM_MAX;
        close(li->fd);
        li->fd = -1;
        ended++;
        continue;
      }
      if (type == SL_FRAME_STAGE_HELLO && li->leaf < 0) {
        int leaf;
        sl_error why = {0};
        if (sl_stage_hello_decode(p.data, p.len, l->nleaves, &leaf, &why) !=
                SL_OK ||
            !l->feeds[leaf])
          broken = true; /* not a leaf fed here: not this query's link */
        else
          li->leaf = leaf;
        sl_error_clear(&why);
        continue;
      }
      if (li->leaf < 0) {
        broken = true; /* rows before the hello */
        continue;
      }
      if (type == SL_FRAME_STAGE_ROWS)
        sl_stage_feed_rows(l->feeds[li->leaf], p.data, p.len);
      else if (type == SL_FRAME_STAGE_WM) {
        int64_t w;
        sl_error why = {0};
        int wrc = sl_wm_msg_decode(p.data, p.len, &w, &why);
        sl_error_clear(&why);
        if (wrc != SL_OK) {
          broken = true; /* out of step: the sender is broken */
          continue;
        }
        if (w > li->wm)
          li->wm = w;
        int64_t m = leaf_watermark(l, in, accepted, li->leaf);
        if (m > pushed[li->leaf]) {
          sl_stage_feed_watermark(l->feeds[li->leaf], m);
          pushed[li->leaf] = m;
        }
      }
    }
  }
  if (broken)
    for (int k = 0; k < l->nleaves; k++)
      if (l->feeds[k])
        sl_stage_feed_close(l->feeds[k]);
  auth_gate_free(gate);
  for (int i = 0; i < accepted; i++)
    if (in[i].fd >= 0)
      close(in[i].fd);
  free(in);
  free(at);
  free(pushed);
  free(pfd);
  sl_strbuf_free(&p);
  sl_error_clear(&err);
  return NULL;
}

int sl_stage_links_start(int listen_fd, int nleaves, const int *nsenders,
                         sl_stage_feed *const *feeds, const sl_secret *secret,
                         sl_stage_links **out, sl_error *err) {
  sl_stage_links *l = calloc(1, sizeof *l);
  if (!l)
    abort();
  l->listen_fd = listen_fd;
  l->secret = secret;
  l->nleaves = nleaves;
  l->nsenders = malloc(sizeof(int) * (size_t)nleaves);
  l->feeds = malloc(sizeof *l->feeds * (size_t)nleaves);
  if (!l->nsenders || !l->feeds)
    abort();
  for (int k = 0; k < nleaves; k++) {
    l->nsenders[k] = feeds[k] ? nsenders[k] : 0;
    l->feeds[k] = feeds[k];
  }
  if (pthread_create(&l->thread, NULL, links_main, l) != 0) {
    free(l->nsenders);
    free(l->feeds);
    free(l);
    return sl_error_set(err, SL_EINTERNAL, "cannot start the link reader");
  }
  l->started = true;
  *out = l;
  return SL_OK;
}

void sl_stage_links_stop(sl_stage_links *l) {
  if (!l)
    return;
  atomic_store(&l->stop, true);
  if (l->started)
    pthread_join(l->thread, NULL);
  free(l->nsenders);
  free(l->feeds);
  free(l);
}
