/* exchange.c - repartitioning between worker threads: each record goes to
 * the worker that owns its key, over one channel per (sender, owner) pair
 * (channel.h: slots in the owner's memory, credits back to the sender).
 * A worker waiting for credit folds what others sent it meanwhile, so two
 * workers sending to each other never block each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker_int.h"

/* This worker's place among the exchange's members (executor_int.h). */
static int self(const worker_state *s) {
  return s->q->exchange.xbase + s->w->index;
}

/* A channel of the exchange broke: say which member, on which node when
 * the exchange spans nodes, and why (the transport's account, which
 * names the peer). */
static int broken(worker_state *s, const sl_channel *ch, int code,
                  const char *dir, int member) {
  sl_error why = {0};
  sl_channel_error(ch, &why);
  char where[48] = "";
  if (s->q->exchange.xn > s->q->nworkers)
    snprintf(where, sizeof where, " (node %d)", member / s->q->nworkers);
  sl_error_set(&s->w->err, code, "the exchange %s worker %d%s broke%s%s", dir,
               member, where, why.message ? ": " : "",
               why.message ? why.message : "");
  sl_error_clear(&why);
  return code;
}

/* Repartition: the operator's watermark, the minimum over its inputs. */
static int64_t operator_wm(const worker_state *s) {
  int64_t m = WM_MAX;
  for (int p = 0; p < s->q->exchange.xn; p++)
    if (!s->input_done[p] && s->input_wm[p] < m)
      m = s->input_wm[p];
  return m;
}

/* ---- repartition: the exchange between workers ----------------------------
 */

static int out_slot(worker_state *s, int dest, sl_buffer **out);

/* Publish the slot being filled for dest (if any; with even_empty, an
 * empty one that carries only this worker's watermark). */
int sl_exchange_flush(worker_state *s, int dest, bool even_empty) {
  if (!s->out_active[dest]) {
    sl_buffer *b;
    int rc = even_empty ? out_slot(s, dest, &b) : SL_OK;
    if (rc != SL_OK || !even_empty)
      return rc;
  }
  sl_channel *ch = s->q->exchange.channels[self(s) * s->q->exchange.xn + dest];
  sl_buffer *b = &s->out_slots[dest];
  if (ch->transport != &sl_channel_local) {
    /* Another process: string pointers become offsets (row.h). */
    int rc = sl_buffer_swizzle(b, &s->w->err);
    if (rc != SL_OK)
      return rc;
  }
  if (s->q->exchange.delay_us > 0) {
    /* Testing only: timing noise between workers must not change any
     * result (each worker its own sequence, seeded by its index). */
    if (!s->noise)
      s->noise = 0x9e3779b97f4a7c15ULL * (uint64_t)(self(s) + 1);
    s->noise = s->noise * 6364136223846793005ULL + 1442695040888963407ULL;
    usleep((useconds_t)((s->noise >> 33) %
                        (uint64_t)(s->q->exchange.delay_us + 1)));
  }
  sl_channel_header hdr = {b->nrows, 0, s->local_wm};
  s->out_active[dest] = false;
  s->sent_wm[dest] = s->local_wm;
  s->w->exchange_rows += b->nrows;
  s->w->exchange_bytes += (uint64_t)b->nrows * b->layout->width + b->heap_used;
  s->w->exchange_slots++;
  /* An aborted channel refuses the slot: a broken channel, said so (the
   * code alone would reach the coordinator as "worker N stopped"). */
  int rc = sl_channel_publish(ch, sl_channel_payload_size(ch), &hdr);
  return rc == SL_OK ? SL_OK : broken(s, ch, rc, "to", dest);
}

/* A slot to append rows for dest to; waits for credit while draining this
 * worker's own inputs, so two workers sending to each other never block
 * each other. */
static int out_slot(worker_state *s, int dest, sl_buffer **out) {
  if (s->out_active[dest]) {
    *out = &s->out_slots[dest];
    return SL_OK;
  }
  sl_channel *ch = s->q->exchange.channels[self(s) * s->q->exchange.xn + dest];
  for (;;) {
    void *p = sl_channel_acquire(ch);
    if (p) {
      sl_buffer_wrap(&s->out_slots[dest], s->q->partial.tmp_layout, p,
                     sl_channel_payload_size(ch));
      s->out_active[dest] = true;
      *out = &s->out_slots[dest];
      return SL_OK;
    }
    int st = sl_channel_status(ch);
    if (st < 0)
      return broken(s, ch, st, "to", dest);
    if (atomic_load(s->w->cancel))
      return sl_error_set(&s->w->err, SL_ECANCELLED,
                          "stopped while waiting to send to worker %d: the "
                          "query is stopping",
                          dest);
    bool got = false;
    int rc = sl_exchange_drain(s, &got);
    if (rc != SL_OK)
      return rc;
    if (!got)
      sl_channel_wait_credit(ch, 1000000); /* 1 ms, then drain again */
  }
}

/* Copy a tmp row into dest's slot, long strings included. */
int sl_exchange_send(worker_state *s, int dest, const uint8_t *row) {
  for (int attempt = 0; attempt < 2; attempt++) {
    sl_buffer *b = NULL;
    int rc = out_slot(s, dest, &b);
    if (rc != SL_OK)
      return rc;
    if (sl_buffer_append_copy(b, row))
      return SL_OK;
    if (b->nrows == 0)
      break; /* the row alone does not fit a slot */
    rc = sl_exchange_flush(s, dest, false);
    if (rc != SL_OK)
      return rc;
  }
  return sl_error_set(&s->w->err, SL_EINVAL,
                      "a record is larger than an exchange slot (%u bytes); "
                      "raise SET 'sluice.buffer-size'",
                      s->q->buffer_size);
}

/* Slots taken from one sender per call of sl_exchange_drain: a sender
 * that refills its channel as fast as this worker folds must not keep
 * the others waiting for ever.  (Draining each channel until it was empty
 * once starved two of eight senders on a loaded host: their watermarks
 * never came, no window fired, and the slices piled up by the ten
 * thousand.) */
#define DRAIN_SLOTS_PER_SENDER 8

/* The rows of one slot a sender brought (view), in C: each row's key
 * hashed SL_FOLD_AHEAD rows early (its slot prefetched) when the table
 * outgrows the caches; *sender_wm rises to the watermarks they carry. */
static int fold_received(worker_state *s, const sl_buffer *view,
                         int64_t *sender_wm) {
  exec_query *q = s->q;
  const sl_row_layout *tl = view->layout;
  int64_t proc_now = q->plan->window.proctime ? sl_now_us() : 0;
  bool look = sl_worker_fold_ahead_pays(s);
  uint64_t ahead[SL_FOLD_AHEAD] = {0};
  for (uint32_t r = 0; look && r < view->nrows && r < SL_FOLD_AHEAD; r++)
    ahead[r] = sl_worker_fold_ahead(s, sl_buffer_row(view, r));
  for (uint32_t r = 0; r < view->nrows; r++) {
    const uint8_t *row = sl_buffer_row(view, r);
    uint64_t hash = look ? ahead[r % SL_FOLD_AHEAD] : 0;
    if (look && r + SL_FOLD_AHEAD < view->nrows)
      ahead[r % SL_FOLD_AHEAD] =
          sl_worker_fold_ahead(s, sl_buffer_row(view, r + SL_FOLD_AHEAD));
    /* The sender's watermark just before this record. */
    int64_t tag = SL_FIELD(row, tl, q->partial.tmp_wm_tag, int64_t);
    if (tag > *sender_wm)
      *sender_wm = tag;
    int rc = look ? sl_worker_fold_row_hashed(s, row, tag, proc_now, hash)
                  : sl_worker_fold_row(s, row, tag, proc_now);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* Fold what other workers have sent here: every sender's channel in turn,
 * at most DRAIN_SLOTS_PER_SENDER slots of each. */
int sl_exchange_drain(worker_state *s, bool *got) {
  exec_query *q = s->q;
  int n = q->exchange.xn, me = self(s);
  const sl_row_layout *tl = q->partial.tmp_layout;
  for (int p = 0; p < n; p++) {
    if (p == me || s->input_done[p])
      continue;
    sl_channel *ch = q->exchange.channels[p * n + me];
    const sl_channel_slot *slot;
    for (int taken = 0;
         taken < DRAIN_SLOTS_PER_SENDER && (slot = sl_channel_poll(ch)) != NULL;
         taken++) {
      *got = true;
      sl_buffer view;
      sl_buffer_wrap(&view, tl, slot->payload, slot->len);
      view.nrows = slot->hdr.rows;
      if (ch->transport != &sl_channel_local) {
        /* From another process: offsets back to pointers, each checked to
         * lie past the rows and inside the slot. */
        if ((size_t)view.nrows * tl->width > view.cap)
          return sl_error_set(&s->w->err, SL_EIO,
                              "a slot from exchange member %d claims more "
                              "rows than it holds",
                              p);
        view.heap_used = view.cap - view.nrows * tl->width;
        int urc = sl_buffer_unswizzle(&view, &s->w->err);
        if (urc != SL_OK)
          return urc;
      }
      int rc = q->jit.k_fold
                   ? sl_worker_fold_received_compiled(s, &view, &s->input_wm[p])
                   : fold_received(s, &view, &s->input_wm[p]);
      if (rc != SL_OK)
        return rc;
      if (slot->hdr.watermark > s->input_wm[p])
        s->input_wm[p] = slot->hdr.watermark;
      rc = sl_channel_release(ch);
      if (rc != SL_OK) /* aborted while this worker folded the slot */
        return broken(s, ch, rc, "from", p);
    }
    int st = sl_channel_status(ch);
    if (st == SL_CHANNEL_END) {
      s->input_done[p] = true;
      *got = true;
    } else if (st < 0) {
      return broken(s, ch, st, "from", p);
    }
  }
  s->wm = operator_wm(s);
  return SL_OK;
}
