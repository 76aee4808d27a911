/* node_link.c - a node of a cluster as the coordinator's executor sees it,
 * and what a node sends back (node_frames.h).
 *
 * On the coordinator each node gets a thread that reads the node's frames
 * and turns them into exactly what a local worker would have published:
 * window partials (decoded group tables), its watermark, result batches,
 * its statistics and its end or error.  The coordinator's loop
 * (executor.c) then fires, merges and finalizes as it does for threads.
 *
 * On a node the executor's coordinator sends, instead of writing to a
 * sink: each window's merged partial, the watermark every sent window is
 * below, and result rows. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "../exec/late_output.h"
#include "node_link.h"
#include "sluice/common/clock.h"
#include "sluice/net/node_frames.h"
#include "sluice/net/node_messages.h"

/* ---- coordinator side ------------------------------------------------------
 */

static void link_fail(worker *w, int rc, sl_error *err) {
  sl_strbuf m = SL_STRBUF_INIT;
  sl_strbuf_printf(&m, "node %d: %s", w->index,
                   err->message ? err->message : "failed");
  pthread_mutex_lock(&w->lock);
  if (!w->done) {
    w->rc = rc;
    sl_error_set(&w->err, rc, "%s", sl_strbuf_cstr(&m));
    w->done = true;
  }
  pthread_mutex_unlock(&w->lock);
  sl_strbuf_free(&m);
  sl_error_clear(err);
  sl_exec_signal(w);
}

static int on_partial(worker *w, const sl_strbuf *p, sl_error *err) {
  exec_query *q = w->q;
  int64_t start, end;
  const uint8_t *bytes;
  size_t nbytes;
  int rc = sl_partial_msg_decode(p->data, p->len, &start, &end, &bytes, &nbytes,
                                 err);
  if (rc != SL_OK)
    return rc;
  sl_group_table *t = malloc(sizeof *t);
  window_partial *wp = malloc(sizeof *wp);
  if (!t || !wp)
    abort();
  sl_group_table_init_pooled(t, q->agg.key_layout, &q->agg.aggs, 64,
                             q->agg.slot_pool);
  rc = sl_group_table_decode_merge(t, bytes, nbytes, err);
  if (rc != SL_OK) {
    sl_group_table_free(t);
    free(t);
    free(wp);
    return rc;
  }
  wp->start = start;
  wp->end = end;
  wp->table = t;
  wp->queued_bytes = p->len; /* as the node counted it (credits) */
  wp->next = NULL;
  pthread_mutex_lock(&w->lock);
  if (w->partials_tail)
    w->partials_tail->next = wp;
  else
    w->partials = wp;
  w->partials_tail = wp;
  w->queued++;
  w->queued_bytes += wp->queued_bytes;
  pthread_mutex_unlock(&w->lock);
  /* What this node's partials hold until the coordinator merges them
   * counts against the memory limit (they pile up when merging is slower
   * than the node sends). */
  uint32_t n;
  uint64_t held = sl_exec_partials_bytes(w, &n) + p->cap, total;
  if (sl_memory_grew_over(q->memory, &w->partials_charged, held, &total))
    return sl_memory_over_error(
        err, q->memory, held, total, "use shorter windows or fewer keys",
        "the %s's state from node %d not merged yet (%u partial%s, and the "
        "buffer they arrive in) holds",
        q->plan->windowed ? "windowed GROUP BY" : "GROUP BY", w->index, n,
        n == 1 ? "" : "s");
  return SL_OK;
}

static int on_rows(worker *w, const sl_strbuf *p, sl_error *err) {
  exec_query *q = w->q;
  uint32_t h[3];
  int rc = sl_rows_msg_check(p->data, p->len, q->out_layout, h, err);
  if (rc != SL_OK)
    return rc;
  out_batch *b = sl_exec_take_batch(w, h[2]);
  if (b->buf.cap != h[2]) { /* see sl_rows_msg_decode */
    sl_buffer_free(&b->buf);
    sl_buffer_init(&b->buf, q->out_layout, h[2]);
  }
  rc = sl_rows_msg_fill(p->data, h, &b->buf, err);
  b->queued_bytes = p->len; /* as the node counted it (credits) */
  if (rc != SL_OK)
    sl_exec_return_batch(w, b);
  else
    sl_exec_publish_batch(w, b);
  return rc;
}

/* A node's late records: to this process's late table. */
static int on_late_rows(worker *w, const sl_strbuf *p, sl_error *err) {
  exec_query *q = w->q;
  if (!q->late.output)
    return sl_error_set(err, SL_EIO,
                        "a node sent late records, and this query writes "
                        "none: the node is out of step");
  sl_buffer b;
  memset(&b, 0, sizeof b);
  int rc =
      sl_rows_msg_decode(p->data, p->len, q->source.stream_layout, &b, err);
  if (rc == SL_OK)
    rc = late_output_write(q->late.output, &b, err);
  sl_buffer_free(&b);
  /* Written: taken at once. */
  pthread_mutex_lock(&w->lock);
  w->credit_frames++;
  w->credit_bytes += p->len;
  pthread_mutex_unlock(&w->lock);
  sl_node_link_credit(w);
  return rc;
}

void sl_node_link_credit(worker *w) {
  pthread_mutex_lock(&w->lock);
  uint64_t frames = w->credit_frames, bytes = w->credit_bytes;
  bool empty = w->queued == 0;
  pthread_mutex_unlock(&w->lock);
  pthread_mutex_lock(&w->send_lock);
  /* Told in steps of a quarter of the window, so that a fast consumer
   * costs a CREDIT per few frames; and whenever everything was taken, so
   * that a node holding fewer frames than a step is never left waiting. */
  uint64_t df = frames - w->told_frames, db = bytes - w->told_bytes;
  bool owed = df >= SL_NODE_CREDIT_FRAMES / 4 ||
              db >= SL_NODE_CREDIT_BYTES / 4 || (empty && (df || db));
  /* Never block here (this is the coordinator's thread): a node whose
   * socket is full reads nothing (hung, or stopping), and the link tells
   * it the totals later. */
  struct pollfd pf = {w->node_fd, POLLOUT, 0};
  if (owed && poll(&pf, 1, 0) == 1 && (pf.revents & POLLOUT)) {
    sl_error err = {0};
    if (sl_node_credit_send(w->node_fd, frames, bytes, &err) == SL_OK) {
      w->told_frames = frames;
      w->told_bytes = bytes;
    }
    sl_error_clear(&err); /* a broken connection: the link's read says */
  }
  pthread_mutex_unlock(&w->send_lock);
}

static int on_done(worker *w, const sl_strbuf *p, sl_error *err) {
  sl_query_stats st;
  int rc = sl_stats_msg_decode(p->data, p->len, &st, err);
  if (rc != SL_OK)
    return rc;
  pthread_mutex_lock(&w->lock);
  atomic_store(&w->events, st.events);
  w->late = st.late_dropped;
  w->skipped = st.skipped_rows;
  w->input_bytes = st.input_bytes;
  w->rows_filtered = st.rows_filtered;
  w->rows_joined = st.rows_joined;
  w->rows_state = st.rows_state;
  w->jit_buffers = st.jit_buffers;
  w->jit_rows = st.jit_rows;
  w->jit_back_buffers = st.jit_back_buffers;
  w->jit_back_rows = st.jit_back_rows;
  w->jit_fold_rows_c = st.jit_fold_rows_c;
  w->state_bytes_peak = st.state_bytes_peak;
  w->source_seconds = st.source_seconds;
  w->pipeline_seconds = st.pipeline_seconds;
  w->exchange_rows = st.exchange_rows;
  w->exchange_bytes = st.exchange_bytes;
  w->exchange_slots = st.exchange_slots;
  w->epochs_sent = st.epochs_sent;
  w->state_moved = st.state_moved;
  w->jit_seconds = st.jit_seconds;
  w->windows_fired = st.windows_fired;
  w->groups_emitted = st.groups_emitted;
  memcpy(w->jit_status, st.jit_status, sizeof w->jit_status);
  w->published_wm = WM_MAX;
  w->done = true;
  w->rc = SL_OK;
  pthread_mutex_unlock(&w->lock);
  sl_exec_signal(w);
  return SL_OK;
}

void *sl_node_link_main(void *arg) {
  worker *w = arg;
  int fd = w->node_fd;
  sl_strbuf p = SL_STRBUF_INIT;
  sl_error err = {0};
  bool cancel_sent = false;
  int rc;
  double heard =
      sl_clock_seconds(); /* its last frame (node_frames.h, HEARTBEAT) */
  for (;;) {
    if (!cancel_sent && atomic_load(w->cancel)) {
      /* The query stops (LIMIT, Ctrl-C, another node's error): tell the
       * node, then read on until it says it has stopped, so that the
       * connection is ready for the next query. */
      pthread_mutex_lock(&w->send_lock);
      rc = sl_frame_send(fd, SL_FRAME_CANCEL, NULL, 0, NULL, 0, &err);
      pthread_mutex_unlock(&w->send_lock);
      if (rc != SL_OK)
        break;
      cancel_sent = true;
    }
    uint32_t type;
    rc = sl_frame_recv(fd, &type, &p, 50, &err);
    if (rc == SL_FRAME_TIMEOUT) {
      /* Credits the coordinator's thread could not send at once. */
      if (!cancel_sent)
        sl_node_link_credit(w);
      if (sl_node_check_silence(fd, heard, &err) == SL_OK)
        continue;
      link_fail(w, SL_EIO, &err);
      break;
    }
    if (rc != SL_OK) {
      link_fail(w, SL_EIO, &err);
      break;
    }
    heard = sl_clock_seconds();
    if (type == SL_FRAME_HEARTBEAT) {
      continue;
    } else if (type == SL_FRAME_PARTIAL) {
      rc = on_partial(w, &p, &err);
    } else if (type == SL_FRAME_WM) {
      int64_t wm;
      rc = sl_wm_msg_decode(p.data, p.len, &wm, &err);
      pthread_mutex_lock(&w->lock);
      if (rc == SL_OK && wm > w->published_wm)
        w->published_wm = wm;
      pthread_mutex_unlock(&w->lock);
    } else if (type == SL_FRAME_READY) {
      /* The query's clock starts when the last node is ready, as it does
       * when the last worker thread is (sl_exec_wait_ready, without the
       * wait: a node link has nothing to hold back). */
      exec_shared *sh = w->shared;
      pthread_mutex_lock(&sh->lock);
      bool last = ++sh->ready >= sh->expected;
      double now = sl_clock_seconds();
      if (last)
        sh->start_time = now;
      pthread_mutex_unlock(&sh->lock);
      /* A staged run's leaf on nodes: the stages' clock starts no earlier
       * either (stage_runner.c). */
      query_shared *qs = sh->with_others;
      if (last && qs) {
        pthread_mutex_lock(&qs->ready_lock);
        if (now > qs->nodes_ready_time)
          qs->nodes_ready_time = now;
        pthread_mutex_unlock(&qs->ready_lock);
      }
    } else if (type == SL_FRAME_ROWS) {
      /* Queued for the coordinator; the node sends no more than its
       * credits allow (node_frames.h), so this thread never stops reading. */
      rc = on_rows(w, &p, &err);
    } else if (type == SL_FRAME_PROGRESS) {
      /* The node's counts so far (DONE brings the final ones). */
      uint64_t counts[2];
      if (p.len != sizeof counts) {
        rc = sl_error_set(&err, SL_EIO,
                          "a PROGRESS message of %zu bytes, "
                          "not 16",
                          p.len);
      } else {
        memcpy(counts, p.data, sizeof counts);
        atomic_store_explicit(&w->events, counts[0], memory_order_relaxed);
        pthread_mutex_lock(&w->lock);
        w->windows_fired = counts[1];
        pthread_mutex_unlock(&w->lock);
      }
    } else if (type == SL_FRAME_LATE_ROWS) {
      rc = on_late_rows(w, &p, &err);
      heard = sl_clock_seconds(); /* it could not be heard meanwhile */
    } else if (type == SL_FRAME_DONE) {
      rc = on_done(w, &p, &err);
      if (rc == SL_OK)
        break;
    } else if (type == SL_FRAME_ERROR) {
      int code, mlen;
      const char *msg;
      rc = sl_error_msg_decode(p.data, p.len, &code, &msg, &mlen, &err);
      if (rc == SL_OK && (cancel_sent || atomic_load(w->cancel))) {
        /* It stopped because we asked it to (LIMIT reached, or another
         * node failed): not an error of this node.  Whatever it met once
         * the query was stopping, even before our CANCEL reached it (a
         * partition leader channel broken by a node that stopped first),
         * is a consequence, not the cause. */
        pthread_mutex_lock(&w->lock);
        w->done = true;
        pthread_mutex_unlock(&w->lock);
        sl_exec_signal(w);
        break;
      }
      if (rc == SL_OK) {
        sl_error_set(&err, code, "%.*s", mlen, msg);
        link_fail(w, code, &err);
        break;
      }
    } else {
      rc = sl_error_set(&err, SL_EIO, "unexpected message %u during a query",
                        type);
    }
    if (rc != SL_OK) {
      link_fail(w, rc, &err);
      /* The stream is out of step: the node must be reconnected. */
      break;
    }
    sl_exec_signal(w);
  }
  sl_strbuf_free(&p);
  sl_error_clear(&err);
  sl_memory_charge(w->q->memory, &w->partials_charged, 0);
  return NULL;
}

/* ---- node side ---------------------------------------------------------- */

int sl_node_send_bulk(const sl_frame_out *o, uint32_t type, const void *a,
                      size_t alen, sl_error *err) {
  /* The credit is waited for before the frame lock: the heartbeat and
   * the query's other frames go meanwhile. */
  int rc = o->credit ? sl_node_credit_take(o->credit, alen, err) : SL_OK;
  if (rc == SL_OK)
    rc = sl_frame_out_send(o, type, a, alen, NULL, 0, err);
  return rc;
}

bool sl_node_can_send(const sl_frame_out *o) {
  return !o->credit || sl_node_credit_open(o->credit);
}

int sl_node_send_partial(const sl_frame_out *o, int64_t start, int64_t end,
                         const sl_group_table *t, sl_error *err) {
  sl_strbuf b = SL_STRBUF_INIT;
  int64_t se[2] = {start, end};
  sl_strbuf_appendn(&b, (const char *)se, sizeof se);
  sl_group_table_encode(t, &b);
  int rc = sl_node_send_bulk(o, SL_FRAME_PARTIAL, b.data, b.len, err);
  sl_strbuf_free(&b);
  return rc;
}

int sl_node_send_wm(const sl_frame_out *o, int64_t wm, sl_error *err) {
  return sl_frame_out_send(o, SL_FRAME_WM, &wm, sizeof wm, NULL, 0, err);
}

int sl_node_encode_rows(sl_buffer *b, sl_strbuf *out, sl_error *err) {
  int rc = sl_buffer_swizzle(b, err);
  if (rc != SL_OK)
    return rc;
  uint32_t h[3] = {b->nrows, b->heap_used, b->cap};
  size_t rows_bytes = (size_t)b->nrows * b->layout->width;
  sl_strbuf_appendn(out, (const char *)h, sizeof h);
  sl_strbuf_appendn(out, (const char *)b->data, rows_bytes);
  sl_strbuf_appendn(out, (const char *)b->data + b->cap - b->heap_used,
                    b->heap_used);
  return SL_OK;
}

int sl_node_send_rows(const sl_frame_out *o, sl_buffer *b, sl_error *err) {
  sl_strbuf s = SL_STRBUF_INIT;
  int rc = sl_node_encode_rows(b, &s, err);
  if (rc == SL_OK)
    rc = sl_node_send_bulk(o, SL_FRAME_ROWS, s.data, s.len, err);
  sl_strbuf_free(&s);
  return rc;
}
