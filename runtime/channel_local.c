/* channel_local.c - the in-process channel transport: a producer thread and
 * a consumer thread of one process, following the slot/credit/footer
 * protocol of channel.h exactly, so that shm, tcp and verbs are the same
 * code with the stores replaced by copies, sends or RDMA WRITEs.
 *
 * Memory is split the way it will be split between two machines:
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
 * writer relaxed atomics, so another thread may read them at any time. */
#include <limits.h>
#include <stdlib.h>
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

#define CACHE_LINE 64
#define NOT_CLOSED UINT64_MAX

/* Written by the consumer, read by the producer (producer memory). */
typedef struct producer_shared {
  _Alignas(CACHE_LINE) _Atomic uint64_t returned; /* credits given back */
  _Atomic int abort_code;                         /* 0 or SL_E* */
} producer_shared;

/* The producer's own state. */
typedef struct producer_private {
  _Alignas(CACHE_LINE) uint64_t sent; /* slots published */
  uint64_t returned_cache;            /* last value read from `returned` */
  uint32_t next;                      /* ring index of the next slot */
  int acquired;                       /* a slot is taken, not published */
  int closed;
  int stalled; /* in a no-credit episode (counts stalls once) */
  _Atomic uint64_t buffers, bytes, stalls, stall_ns;
} producer_private;

/* Written by the producer, read by the consumer (consumer memory). */
typedef struct consumer_shared {
  _Alignas(CACHE_LINE) _Atomic uint64_t closed_at; /* NOT_CLOSED or N */
  _Atomic int abort_code;
} consumer_shared;

/* The consumer's own state. */
typedef struct consumer_private {
  _Alignas(CACHE_LINE) uint64_t head; /* slots taken so far */
  uint32_t next;                      /* ring index of the next slot */
  int polled;                         /* `view` is valid, not released */
  _Atomic int ended;                  /* saw SL_CHANNEL_END */
  _Atomic uint64_t received;
  sl_channel_slot view;
} consumer_private;

typedef struct local_channel {
  sl_channel base;
  unsigned char *ring; /* c * m bytes, cache-line aligned */
  producer_shared ps;
  producer_private pp;
  consumer_shared cs;
  consumer_private cp;
} local_channel;

static inline local_channel *L(sl_channel *ch) {
  return (local_channel *)ch;
}

static inline void bump(_Atomic uint64_t *c, uint64_t by) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                        memory_order_relaxed);
}

static inline unsigned char *slot_at(local_channel *l, uint32_t i) {
  return l->ring + (size_t)i * l->base.slot_size;
}

static inline sl_channel_footer *footer_at(local_channel *l, uint32_t i) {
  return (sl_channel_footer *)(slot_at(l, i) + l->base.payload_size);
}

/* The abort code as this side sees it: the peer's word or our own. */
static inline int aborted(const local_channel *l) {
  int a = atomic_load_explicit(&l->ps.abort_code, memory_order_acquire);
  if (a)
    return a;
  return atomic_load_explicit(&l->cs.abort_code, memory_order_acquire);
}

/* --- producer --- */

static inline int have_credit(local_channel *l) {
  producer_private *p = &l->pp;
  if (p->sent - p->returned_cache < l->base.credits)
    return 1;
  p->returned_cache =
      atomic_load_explicit(&l->ps.returned, memory_order_acquire);
  HB_AFTER(&l->ps.returned);
  return p->sent - p->returned_cache < l->base.credits;
}

static void *local_acquire(sl_channel *ch) {
  local_channel *l = L(ch);
  producer_private *p = &l->pp;
  if (aborted(l) || p->closed)
    return NULL;
  if (p->acquired)
    return slot_at(l, p->next);
  if (!have_credit(l)) {
    if (!p->stalled) {
      p->stalled = 1;
      bump(&p->stalls, 1);
    }
    return NULL;
  }
  p->stalled = 0;
  p->acquired = 1;
  return slot_at(l, p->next);
}

static int local_publish(sl_channel *ch, uint32_t len,
                         const sl_channel_header *hdr) {
  local_channel *l = L(ch);
  producer_private *p = &l->pp;
  int a = aborted(l);
  if (a)
    return a;
  if (!p->acquired || p->closed || len > l->base.payload_size)
    return SL_EINVAL;
  sl_channel_footer *f = footer_at(l, p->next);
  f->seq = p->sent;
  f->len = len;
  f->rows = hdr ? hdr->rows : 0;
  f->flags = hdr ? hdr->flags : 0;
  f->watermark = hdr ? hdr->watermark : 0;
  /* (1): everything above becomes visible with the flag. */
  HB_BEFORE(&f->full);
  atomic_store_explicit(&f->full, 1, memory_order_release);
  p->acquired = 0;
  p->sent++;
  p->next = p->next + 1 == l->base.credits ? 0 : p->next + 1;
  bump(&p->buffers, 1);
  bump(&p->bytes, len);
  if (f->flags & SL_CHANNEL_F_EOS) {
    p->closed = 1;
    HB_BEFORE(&l->cs.closed_at);
    atomic_store_explicit(&l->cs.closed_at, p->sent, memory_order_release);
  }
  return SL_OK;
}

static int local_wait_credit(sl_channel *ch, int64_t timeout_ns) {
  local_channel *l = L(ch);
  producer_private *p = &l->pp;
  sl_backoff b;
  sl_backoff_init(&b, timeout_ns);
  int rc;
  for (;;) {
    if ((rc = aborted(l)) != 0)
      break;
    if (p->closed) {
      rc = SL_EINVAL;
      break;
    }
    if (p->acquired || have_credit(l)) {
      rc = SL_OK;
      break;
    }
    if (!p->stalled) {
      p->stalled = 1;
      bump(&p->stalls, 1);
    }
    if (!sl_backoff_pause(&b)) {
      rc = SL_CHANNEL_TIMEOUT;
      break;
    }
  }
  bump(&p->stall_ns, (uint64_t)sl_backoff_elapsed_ns(&b));
  return rc;
}

static int local_close(sl_channel *ch) {
  local_channel *l = L(ch);
  producer_private *p = &l->pp;
  int a = aborted(l);
  if (a)
    return a;
  if (p->closed)
    return SL_OK;
  p->closed = 1;
  p->acquired = 0; /* an unpublished slot is dropped; its credit stays */
  /* (3): after every full flag of the slots before it. */
  HB_BEFORE(&l->cs.closed_at);
  atomic_store_explicit(&l->cs.closed_at, p->sent, memory_order_release);
  return SL_OK;
}

/* --- consumer --- */

/* 1 when the next slot is full, 0 when not (yet); sets `ended` when the
 * stream is over. */
static int next_ready(local_channel *l) {
  consumer_private *c = &l->cp;
  sl_channel_footer *f = footer_at(l, c->next);
  if (atomic_load_explicit(&f->full, memory_order_acquire)) {
    HB_AFTER(&f->full);
    return 1;
  }
  uint64_t closed =
      atomic_load_explicit(&l->cs.closed_at, memory_order_acquire);
  HB_AFTER(&l->cs.closed_at);
  if (closed == c->head)
    atomic_store_explicit(&c->ended, 1, memory_order_relaxed);
  else if (closed != NOT_CLOSED &&
           atomic_load_explicit(&f->full, memory_order_acquire)) {
    HB_AFTER(&f->full);
    return 1; /* published between our two loads */
  }
  return 0;
}

static const sl_channel_slot *local_poll(sl_channel *ch) {
  local_channel *l = L(ch);
  consumer_private *c = &l->cp;
  if (aborted(l))
    return NULL;
  if (c->polled)
    return &c->view;
  if (atomic_load_explicit(&c->ended, memory_order_relaxed) || !next_ready(l))
    return NULL;
  sl_channel_footer *f = footer_at(l, c->next);
  if (f->seq != c->head || f->len > l->base.payload_size) {
    /* Cannot happen in-process; with a remote peer it means a corrupted or
     * misbehaving producer, and the stream is no longer trustworthy. */
    sl_channel_abort(ch, SL_EIO);
    return NULL;
  }
  c->view.payload = slot_at(l, c->next);
  c->view.len = f->len;
  c->view.seq = f->seq;
  c->view.hdr.rows = f->rows;
  c->view.hdr.flags = f->flags;
  c->view.hdr.watermark = f->watermark;
  c->polled = 1;
  return &c->view;
}

static int local_wait_slot(sl_channel *ch, int64_t timeout_ns) {
  local_channel *l = L(ch);
  consumer_private *c = &l->cp;
  sl_backoff b;
  sl_backoff_init(&b, timeout_ns);
  for (;;) {
    int a = aborted(l);
    if (a)
      return a;
    if (c->polled || next_ready(l))
      return SL_OK;
    if (atomic_load_explicit(&c->ended, memory_order_relaxed))
      return SL_CHANNEL_END;
    if (!sl_backoff_pause(&b))
      return SL_CHANNEL_TIMEOUT;
  }
}

static int local_release(sl_channel *ch) {
  local_channel *l = L(ch);
  consumer_private *c = &l->cp;
  int a = aborted(l);
  if (a)
    return a;
  if (!c->polled)
    return SL_EINVAL;
  sl_channel_footer *f = footer_at(l, c->next);
  atomic_store_explicit(&f->full, 0, memory_order_relaxed);
  c->polled = 0;
  c->head++;
  c->next = c->next + 1 == l->base.credits ? 0 : c->next + 1;
  bump(&c->received, 1);
  /* (2): the reads and the clear above happen before the slot's reuse. */
  HB_BEFORE(&l->ps.returned);
  atomic_store_explicit(&l->ps.returned, c->head, memory_order_release);
  return SL_OK;
}

/* --- either side --- */

static void local_abort(sl_channel *ch, int code) {
  local_channel *l = L(ch);
  if (code >= 0)
    code = SL_EIO;
  /* First abort wins; both sides' words get the same code, as a remote
   * abort writes the peer's word and its own. */
  int expected = 0;
  if (atomic_compare_exchange_strong_explicit(&l->cs.abort_code, &expected,
                                              code, memory_order_acq_rel,
                                              memory_order_acquire))
    atomic_store_explicit(&l->ps.abort_code, code, memory_order_release);
}

static int local_status(const sl_channel *ch) {
  const local_channel *l = (const local_channel *)ch;
  int a = aborted(l);
  if (a)
    return a;
  return atomic_load_explicit(&l->cp.ended, memory_order_relaxed)
             ? SL_CHANNEL_END
             : SL_OK;
}

static void local_stats(const sl_channel *ch, sl_channel_stats *out) {
  const local_channel *l = (const local_channel *)ch;
  out->buffers = atomic_load_explicit(&l->pp.buffers, memory_order_relaxed);
  out->bytes = atomic_load_explicit(&l->pp.bytes, memory_order_relaxed);
  out->stalls = atomic_load_explicit(&l->pp.stalls, memory_order_relaxed);
  out->stall_ns = atomic_load_explicit(&l->pp.stall_ns, memory_order_relaxed);
  out->received = atomic_load_explicit(&l->cp.received, memory_order_relaxed);
}

static void local_destroy(sl_channel *ch) {
  local_channel *l = L(ch);
  free(l->ring);
  free(l);
}

static int local_open(const sl_channel_config *cfg, sl_channel **out,
                      sl_error *err) {
  sl_channel_config c;
  int rc = sl_channel_check_config(cfg, &c, err);
  if (rc != SL_OK)
    return rc;
  size_t ring_bytes = (size_t)c.credits * c.slot_size;
  local_channel *l =
      aligned_alloc(_Alignof(local_channel),
                    (sizeof *l + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE);
  unsigned char *ring = aligned_alloc(CACHE_LINE, ring_bytes);
  if (!l || !ring) {
    free(l);
    free(ring);
    return sl_error_set(err, SL_ENOMEM,
                        "out of memory for a channel of %u x %u bytes",
                        c.credits, c.slot_size);
  }
  memset(l, 0, sizeof *l);
  memset(ring, 0, ring_bytes); /* every full flag 0: all slots free */
  l->base.transport = &sl_channel_local;
  l->base.credits = c.credits;
  l->base.slot_size = c.slot_size;
  l->base.payload_size = sl_channel_payload_size_for(c.slot_size);
  l->ring = ring;
  atomic_init(&l->cs.closed_at, NOT_CLOSED);
  *out = &l->base;
  return SL_OK;
}

const sl_channel_transport sl_channel_local = {
    .name = "local",
    .open = local_open,
    .acquire = local_acquire,
    .publish = local_publish,
    .wait_credit = local_wait_credit,
    .poll = local_poll,
    .wait_slot = local_wait_slot,
    .release = local_release,
    .close = local_close,
    .abort = local_abort,
    .status = local_status,
    .stats = local_stats,
    .destroy = local_destroy,
};
