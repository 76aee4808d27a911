/* channel_ring.c - the slot/credit/footer protocol of channel.h, once, for
 * every transport: local (both ends in one process), shm (one shared
 * mapping) and tcp (each end's copy, carried by the transport's I/O).
 *
 * Memory is split the way it is split between two machines:
 *
 *   consumer memory: the ring (c slots, footers at their ends) and a
 *                    control line the producer writes (closed_at, abort);
 *   producer memory: a control line the consumer writes (the credit
 *                    counter, abort).
 *
 * Each side's private counters sit on their own cache lines, so the only
 * lines that move between cores are the slots themselves and the two
 * control lines, as on a network only the WRITEs would.
 *
 * MEMORY ORDERING.  (1) The producer writes the payload and the footer with
 * plain stores and then stores full = 1 with release; the consumer loads
 * full with acquire, so when it reads 1 every payload and footer byte
 * written before it is visible: no partial buffer.  (2) The consumer reads
 * the slot, stores full = 0 (relaxed) and then stores the credit counter
 * `returned` with release; the producer loads `returned` with acquire
 * before reusing a slot, so the consumer's reads and its clearing of the
 * flag happen before the producer's next writes to that slot: no overwrite
 * of unread data, and the old 0 can never land after the new 1.  (3)
 * closed_at is stored with release after the last slot's full flag, so a
 * consumer that loads closed_at == N with acquire and has taken N slots has
 * really seen them all.  (4) abort words are only flags: a side that sees
 * one stops; nothing is read on their strength, so relaxed order would do,
 * but they use acquire/release for simplicity.  Stats counters are single-
 * writer relaxed atomics, so another thread may read them at any time.
 * C11 atomics on a MAP_SHARED mapping order the same way between processes
 * as between threads (they are plain lock-free instructions), which is why
 * shm runs this code unchanged. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "channel_int.h"

/* Helgrind and DRD do not model C11 atomics; building with
 * -DSLUICE_HELGRIND tells them about the protocol's happens-before edges
 * (the same edges as the release/acquire pairs below).  No-ops otherwise. */
#ifdef SLUICE_HELGRIND
#include <valgrind/helgrind.h>
#define HB_BEFORE(a) ANNOTATE_HAPPENS_BEFORE(a)
#define HB_AFTER(a) ANNOTATE_HAPPENS_AFTER(a)
#else
#define HB_BEFORE(a) ((void)0)
#define HB_AFTER(a) ((void)0)
#endif

static inline sl_ring *R(sl_channel *ch) {
  return (sl_ring *)ch;
}

static inline void bump(_Atomic uint64_t *c, uint64_t by) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                        memory_order_relaxed);
}

void sl_ring_init_shared(sl_ring_pshared *ps, sl_ring_cshared *cs) {
  atomic_init(&ps->returned, 0);
  atomic_init(&ps->abort_code, 0);
  atomic_init(&cs->closed_at, SL_RING_NOT_CLOSED);
  atomic_init(&cs->abort_code, 0);
}

void sl_ring_init(sl_ring *r, const sl_channel_transport *t,
                  const sl_channel_config *shape, int sides,
                  const sl_ring_hooks *hooks) {
  r->base.transport = t;
  r->base.credits = shape->credits;
  r->base.slot_size = shape->slot_size;
  r->base.payload_size = sl_channel_payload_size_for(shape->slot_size);
  r->sides = sides;
  r->hooks = hooks;
  atomic_init(&r->msg_state, 0);
}

void sl_ring_land(sl_channel_footer *dst, const sl_channel_footer *src) {
  dst->seq = src->seq;
  dst->watermark = src->watermark;
  dst->len = src->len;
  dst->rows = src->rows;
  dst->flags = src->flags;
  /* (1): everything above becomes visible with the flag. */
  HB_BEFORE(&dst->full);
  atomic_store_explicit(&dst->full, 1, memory_order_release);
}

int sl_ring_aborted(const sl_ring *r) {
  int a = atomic_load_explicit(&r->ps->abort_code, memory_order_acquire);
  if (a)
    return a;
  return atomic_load_explicit(&r->cs->abort_code, memory_order_acquire);
}

/* First abort wins; both words get the same code, as a remote abort writes
 * the peer's word and its own.  Returns 1 when this call won. */
static int ring_break(sl_ring *r, int code) {
  if (code >= 0)
    code = SL_EIO;
  int expected = 0;
  if (atomic_compare_exchange_strong_explicit(&r->cs->abort_code, &expected,
                                              code, memory_order_acq_rel,
                                              memory_order_acquire)) {
    atomic_store_explicit(&r->ps->abort_code, code, memory_order_release);
    return 1;
  }
  /* The peer may have set only its own word (shm shares both; tcp copies
   * carry one at a time): make ours agree. */
  int zero = 0;
  atomic_compare_exchange_strong_explicit(&r->ps->abort_code, &zero, expected,
                                          memory_order_acq_rel,
                                          memory_order_acquire);
  return 0;
}

int sl_ring_fail(sl_ring *r, int code, int notify, const char *fmt, ...) {
  /* The message explains the code in force, so only a first failure
   * writes one (a peer that dies after aborting keeps the abort's story). */
  int st = 0;
  if (fmt && !sl_ring_aborted(r) &&
      atomic_compare_exchange_strong(&r->msg_state, &st, 1)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    atomic_store_explicit(&r->msg_state, 2, memory_order_release);
  }
  if (ring_break(r, code) && notify && r->hooks && r->hooks->aborted)
    r->hooks->aborted(r);
  return sl_ring_aborted(r);
}

static inline void idle(sl_ring *r) {
  if (r->hooks && r->hooks->idle)
    r->hooks->idle(r);
}

static void backoff_init(sl_ring *r, sl_backoff *b, int64_t timeout_ns) {
  sl_backoff_init(b, timeout_ns);
  if (r->hooks && r->hooks->nap) {
    b->nap = r->hooks->nap;
    b->nap_arg = r;
  }
}

/* --- producer --- */

static inline int have_credit(sl_ring *r) {
  sl_ring_pprivate *p = &r->pp;
  if (p->sent - p->returned_cache < r->base.credits)
    return 1;
  if (r->hooks && r->hooks->refresh)
    r->hooks->refresh(r);
  p->returned_cache =
      atomic_load_explicit(&r->ps->returned, memory_order_acquire);
  HB_AFTER(&r->ps->returned);
  return p->sent - p->returned_cache < r->base.credits;
}

void *sl_ring_acquire(sl_channel *ch) {
  sl_ring *r = R(ch);
  sl_ring_pprivate *p = &r->pp;
  if (!(r->sides & SL_RING_PRODUCER) || sl_ring_aborted(r) || p->closed)
    return NULL;
  if (p->acquired)
    return sl_ring_slot(r, p->next);
  if (!have_credit(r)) {
    if (!p->stalled) {
      p->stalled = 1;
      bump(&p->stalls, 1);
    }
    idle(r);
    return NULL;
  }
  p->stalled = 0;
  p->acquired = 1;
  return sl_ring_slot(r, p->next);
}

int sl_ring_publish(sl_channel *ch, uint32_t len,
                    const sl_channel_header *hdr) {
  sl_ring *r = R(ch);
  sl_ring_pprivate *p = &r->pp;
  int a = sl_ring_aborted(r);
  if (a)
    return a;
  if (!(r->sides & SL_RING_PRODUCER) || !p->acquired || p->closed ||
      len > r->base.payload_size)
    return SL_EINVAL;
  sl_channel_footer f = {.seq = p->sent,
                         .len = len,
                         .rows = hdr ? hdr->rows : 0,
                         .flags = hdr ? hdr->flags : 0,
                         .watermark = hdr ? hdr->watermark : 0};
  sl_ring_land(sl_ring_footer(r, p->next), &f);
  p->acquired = 0;
  p->sent++;
  p->next = p->next + 1 == r->base.credits ? 0 : p->next + 1;
  bump(&p->buffers, 1);
  bump(&p->bytes, len);
  if (f.flags & SL_CHANNEL_F_EOS) {
    p->closed = 1;
    HB_BEFORE(&r->cs->closed_at);
    atomic_store_explicit(&r->cs->closed_at, p->sent, memory_order_release);
  }
  if (r->hooks && r->hooks->kick)
    r->hooks->kick(r);
  return SL_OK;
}

int sl_ring_wait_credit(sl_channel *ch, int64_t timeout_ns) {
  sl_ring *r = R(ch);
  sl_ring_pprivate *p = &r->pp;
  if (!(r->sides & SL_RING_PRODUCER))
    return SL_EINVAL;
  sl_backoff b;
  backoff_init(r, &b, timeout_ns);
  int rc;
  for (;;) {
    if ((rc = sl_ring_aborted(r)) != 0)
      break;
    if (p->closed) {
      rc = SL_EINVAL;
      break;
    }
    if (p->acquired || have_credit(r)) {
      rc = SL_OK;
      break;
    }
    if (!p->stalled) {
      p->stalled = 1;
      bump(&p->stalls, 1);
    }
    idle(r);
    if (sl_ring_aborted(r))
      continue;
    if (!sl_backoff_pause(&b)) {
      rc = SL_CHANNEL_TIMEOUT;
      break;
    }
  }
  bump(&p->stall_ns, (uint64_t)sl_backoff_elapsed_ns(&b));
  return rc;
}

int sl_ring_close(sl_channel *ch) {
  sl_ring *r = R(ch);
  sl_ring_pprivate *p = &r->pp;
  int a = sl_ring_aborted(r);
  if (a)
    return a;
  if (!(r->sides & SL_RING_PRODUCER))
    return SL_EINVAL;
  if (p->closed)
    return SL_OK;
  p->closed = 1;
  p->acquired = 0; /* an unpublished slot is dropped; its credit stays */
  /* (3): after every full flag of the slots before it. */
  HB_BEFORE(&r->cs->closed_at);
  atomic_store_explicit(&r->cs->closed_at, p->sent, memory_order_release);
  if (r->hooks && r->hooks->kick)
    r->hooks->kick(r);
  return SL_OK;
}

/* --- consumer --- */

/* 1 when the next slot is full, 0 when not (yet); sets `ended` when the
 * stream is over. */
static int next_ready(sl_ring *r) {
  sl_ring_cprivate *c = &r->cp;
  sl_channel_footer *f = sl_ring_footer(r, c->next);
  if (atomic_load_explicit(&f->full, memory_order_acquire)) {
    HB_AFTER(&f->full);
    return 1;
  }
  uint64_t closed =
      atomic_load_explicit(&r->cs->closed_at, memory_order_acquire);
  HB_AFTER(&r->cs->closed_at);
  if (closed == c->head)
    atomic_store_explicit(&c->ended, 1, memory_order_relaxed);
  else if (closed != SL_RING_NOT_CLOSED &&
           atomic_load_explicit(&f->full, memory_order_acquire)) {
    HB_AFTER(&f->full);
    return 1; /* published between our two loads */
  }
  return 0;
}

const sl_channel_slot *sl_ring_poll(sl_channel *ch) {
  sl_ring *r = R(ch);
  sl_ring_cprivate *c = &r->cp;
  if (!(r->sides & SL_RING_CONSUMER) || sl_ring_aborted(r))
    return NULL;
  if (c->polled)
    return &c->view;
  if (atomic_load_explicit(&c->ended, memory_order_relaxed))
    return NULL;
  if (!next_ready(r)) {
    if (!atomic_load_explicit(&c->ended, memory_order_relaxed))
      idle(r);
    return NULL;
  }
  sl_channel_footer *f = sl_ring_footer(r, c->next);
  if (f->seq != c->head || f->len > r->base.payload_size) {
    /* Cannot happen in-process; with a remote peer it means a corrupted or
     * misbehaving producer, and the stream is no longer trustworthy. */
    sl_ring_fail(r, SL_EIO, 1,
                 "%s channel: slot %llu from %s has sequence number %llu and "
                 "length %u (payload %u): the producer broke the protocol",
                 r->base.transport->name, (unsigned long long)c->head,
                 r->peer[0] ? r->peer : "the producer",
                 (unsigned long long)f->seq, f->len, r->base.payload_size);
    return NULL;
  }
  c->view.payload = sl_ring_slot(r, c->next);
  c->view.len = f->len;
  c->view.seq = f->seq;
  c->view.hdr.rows = f->rows;
  c->view.hdr.flags = f->flags;
  c->view.hdr.watermark = f->watermark;
  c->polled = 1;
  return &c->view;
}

int sl_ring_wait_slot(sl_channel *ch, int64_t timeout_ns) {
  sl_ring *r = R(ch);
  sl_ring_cprivate *c = &r->cp;
  if (!(r->sides & SL_RING_CONSUMER))
    return SL_EINVAL;
  sl_backoff b;
  backoff_init(r, &b, timeout_ns);
  for (;;) {
    int a = sl_ring_aborted(r);
    if (a)
      return a;
    if (c->polled || next_ready(r))
      return SL_OK;
    if (atomic_load_explicit(&c->ended, memory_order_relaxed))
      return SL_CHANNEL_END;
    idle(r);
    if (sl_ring_aborted(r))
      continue;
    if (!sl_backoff_pause(&b))
      return SL_CHANNEL_TIMEOUT;
  }
}

int sl_ring_release(sl_channel *ch) {
  sl_ring *r = R(ch);
  sl_ring_cprivate *c = &r->cp;
  int a = sl_ring_aborted(r);
  if (a)
    return a;
  if (!(r->sides & SL_RING_CONSUMER) || !c->polled)
    return SL_EINVAL;
  sl_channel_footer *f = sl_ring_footer(r, c->next);
  atomic_store_explicit(&f->full, 0, memory_order_relaxed);
  c->polled = 0;
  c->head++;
  c->next = c->next + 1 == r->base.credits ? 0 : c->next + 1;
  bump(&c->received, 1);
  bump(&c->received_bytes, c->view.len);
  /* (2): the reads and the clear above happen before the slot's reuse. */
  HB_BEFORE(&r->ps->returned);
  atomic_store_explicit(&r->ps->returned, c->head, memory_order_release);
  if (r->hooks && r->hooks->returned)
    r->hooks->returned(r);
  return SL_OK;
}

/* --- either side --- */

void sl_ring_abort(sl_channel *ch, int code) {
  sl_ring_fail(R(ch), code, 1, NULL);
}

int sl_ring_status(const sl_channel *ch) {
  const sl_ring *r = (const sl_ring *)ch;
  int a = sl_ring_aborted(r);
  if (a)
    return a;
  if (r->sides & SL_RING_CONSUMER)
    return atomic_load_explicit(&r->cp.ended, memory_order_relaxed)
               ? SL_CHANNEL_END
               : SL_OK;
  /* A producer end alone: the stream is over once it is closed and every
   * slot has come back as a credit (the consumer released them all).
   * closed_at, not the producer's private state: any thread may ask. */
  uint64_t closed =
      atomic_load_explicit(&r->cs->closed_at, memory_order_acquire);
  if (closed != SL_RING_NOT_CLOSED &&
      atomic_load_explicit(&r->ps->returned, memory_order_acquire) == closed)
    return SL_CHANNEL_END;
  return SL_OK;
}

void sl_ring_stats(const sl_channel *ch, sl_channel_stats *out) {
  const sl_ring *r = (const sl_ring *)ch;
  memset(out, 0, sizeof *out);
  if (r->sides & SL_RING_PRODUCER) {
    out->buffers = atomic_load_explicit(&r->pp.buffers, memory_order_relaxed);
    out->bytes = atomic_load_explicit(&r->pp.bytes, memory_order_relaxed);
    out->stalls = atomic_load_explicit(&r->pp.stalls, memory_order_relaxed);
    out->stall_ns = atomic_load_explicit(&r->pp.stall_ns, memory_order_relaxed);
    /* Without the consumer here, the credits it returned. */
    out->received =
        atomic_load_explicit(&r->ps->returned, memory_order_relaxed);
  }
  if (r->sides & SL_RING_CONSUMER) {
    out->received = atomic_load_explicit(&r->cp.received, memory_order_relaxed);
    if (!(r->sides & SL_RING_PRODUCER)) {
      /* A consumer end alone: what it took from the ring. */
      out->buffers = out->received;
      out->bytes =
          atomic_load_explicit(&r->cp.received_bytes, memory_order_relaxed);
    }
  }
}

void sl_ring_destroy(sl_channel *ch) {
  sl_ring *r = R(ch);
  r->hooks->destroy(r);
}

int sl_ring_error(const sl_channel *ch, sl_error *err) {
  const sl_ring *r = (const sl_ring *)ch;
  int a = sl_ring_aborted(r);
  if (!a)
    return SL_OK;
  if (atomic_load_explicit(&r->msg_state, memory_order_acquire) == 2)
    return sl_error_set(err, a, "%s", r->msg);
  return sl_error_set(err, a,
                      "%s channel aborted (%s)%s%s: the query that owns it "
                      "stopped; see its error",
                      ch->transport->name, sl_error_kind(a),
                      r->peer[0] ? "; peer: " : "", r->peer);
}
