/* channel_verbs.c - the verbs channel transport (rdma-core): a producer and
 * a consumer on two hosts with RDMA devices run the ring protocol
 * (channel_ring.c) over one Reliable Connected queue pair, with one-sided
 * RDMA WRITEs carrying exactly the protocol's remote stores.  Connection
 * set-up (librdmacm), listening and the device probe are in
 * channel_verbs_connect.c.
 *
 * MEMORY.  Each end registers one region (channel_verbs_int.h): a header
 * page with both control lines, then c slots of m bytes.  The consumer's
 * slots are the ring; the producer's are its private copy: acquire hands
 * out a pointer into it, publish lands the footer there (sl_ring_land), and
 * the kick hook below WRITEs the slot into the consumer's ring:
 *
 *   producer                                  consumer
 *   slot i (local copy) --WRITE [0,len)------> slot i
 *   footer i (local)    --WRITE 32 B, inline--> footer i, full flag last
 *   cs.closed_at        --WRITE 8 B, inline---> cs.closed_at
 *   ps.returned         <--WRITE 8 B, inline--- ps.returned (release)
 *
 * The two WRITEs of a slot are chained in one ibv_post_send; an RC queue
 * pair executes WRITEs in order, so the footer (and its last byte, the
 * full flag) lands after every payload byte, and closed_at after the last
 * footer.  Always two WRITEs, never one of the whole slot for a nearly
 * full payload: ordering BETWEEN WRITEs is the queue pair's, while WITHIN
 * one, rxe copies each packet with memcpy, whose string stores x86 may
 * make visible out of order, so the flag could show before the last
 * packet's payload; and under emulation the single WRITE measured no
 * faster (docs/BENCHMARKS.md, "verbs").  The consumer polls its own
 * memory exactly as in-process.  The 32-byte footer itself lands in one
 * piece in practice (half a cache line, one small copy); neither IB nor
 * x86 promises that, and every last-byte-polling RDMA design relies on it.
 *
 * WHY NO COMPLETION WAIT BEFORE REUSE.  The producer rewrites its copy of
 * slot i only after the credit for it came back, and the consumer returns
 * that credit only after it saw slot i full, i.e. after the WRITE landed,
 * which is after the HCA read the source bytes.  Completions are therefore
 * needed only to recycle send queue entries: one work request in
 * signal_every is signaled, the send queue holds 2c + 8 (two per slot,
 * closed_at, and reserved room for the abort word and the final flush),
 * and completions are reaped on each kick, so the queue never fills in
 * steady state; a full one is waited out by reaping.
 *
 * THREADS AND LOCKS.  The producer thread posts its own WRITEs at publish
 * time and the consumer thread its credit WRITEs at release: no I/O
 * thread, no lock on the data path.  Only the thread that owns an end's
 * data path touches its send-queue accounting and its completion queue;
 * the abort hook (any thread) posts one unsignaled, unaccounted WRITE into
 * the room reserved for it (ibv_post_send is thread-safe per QP).  Each
 * channel has its own completion queue and rdma_cm event channel: the
 * interface is per channel, so nothing is shared between channels.
 *
 * PEER DEATH.  When a process dies the kernel destroys its rdma_cm ids,
 * which sends a DREQ to the peer: this end's rdma_cm event channel gets
 * DISCONNECTED.  Calls that find nothing to do check that channel (and the
 * completion queue for error completions) at most once per millisecond,
 * and the waits sleep in poll() on it, so a death breaks the channel with
 * SL_EIO naming the peer.  A host that vanishes without a DREQ shows up as
 * an error completion (IBV_WC_RETRY_EXC_ERR) of the next WRITE: the queue
 * pair's ACK timeout is set to ~270 ms with 7 retries (~2 s), not the
 * minutes of the defaults.  A DISCONNECTED after the stream is complete
 * (the producer closed it and its WRITEs completed) is the normal end.
 *
 * FORK.  Ends are opened after the fork (as for shm and tcp).  Kernels
 * from 5.13 copy pinned pages into a child at fork, so a parent's
 * registered memory stays valid without ibv_fork_init(); it is not called.
 * But librdmacm keeps each device's verbs context open for the life of a
 * process, and the kernel refuses a forked child's write() commands on its
 * parent's contexts and rdma_cm descriptors (EACCES, "changed security
 * contexts after opening file descriptor").  Measured on rxe: a child
 * forked after its parent listened connects fine (set-up goes through
 * ioctl), then its first ibv_post_send fails (rxe rings its doorbell with
 * write()).  So a process that has listened or opened a verbs end must not
 * fork children that open verbs ends.  Fork first. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel_verbs_int.h"
#include "sluice/common/clock.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the verbs channel's hello and control words are little-endian"
#endif

/* What a work request carried, in the top byte of its wr_id (the rest is
 * the slot or credit number), so that an error completion can say. */
enum { K_SLOT = 1, K_FOOTER, K_CLOSE, K_CREDIT, K_ABORT, K_FLUSH };
#define WRID(kind, n) (((uint64_t)(kind) << 56) | ((uint64_t)(n)&WRID_MASK))
#define WRID_MASK ((1ULL << 56) - 1)

#define CHECK_EVERY_NS (1000 * 1000) /* liveness checks from idle calls */
#define SQ_RESERVED 2                /* the abort word and the final flush */
#define SQ_STUCK_NS (30LL * 1000000000)
#define FLUSH_MAX_NS (10LL * 1000000000)

static inline verbs_channel *V(sl_ring *r) {
  return (verbs_channel *)r;
}

static const char *peer_role(const sl_ring *r) {
  return r->sides == SL_RING_PRODUCER ? "consumer" : "producer";
}

/* The stream no longer needs the peer: a producer that closed it and got
 * every credit back, or a consumer whose producer closed it (its slots
 * are all in local memory). */
static int stream_over(verbs_channel *v) {
  sl_ring *r = &v->ring;
  if (r->sides == SL_RING_PRODUCER)
    return r->pp.closed &&
           atomic_load_explicit(&r->ps->returned, memory_order_acquire) ==
               r->pp.sent;
  return atomic_load_explicit(&r->cs->closed_at, memory_order_acquire) !=
         SL_RING_NOT_CLOSED;
}

/* --- send queue accounting (the data path's thread only) --- */

static void sig_push(verbs_channel *v, uint64_t posted) {
  v->sig[(v->sig_head + v->sig_count) % v->sq_depth] = posted;
  v->sig_count++;
}

static void sig_pop(verbs_channel *v) {
  if (v->sig_count == 0)
    return;
  v->done = v->sig[v->sig_head];
  v->sig_head = (v->sig_head + 1) % v->sq_depth;
  v->sig_count--;
}

/* Fill one RDMA WRITE of len bytes at src to offset roff of the peer's
 * region, and count it. */
static void prep(verbs_channel *v, struct ibv_send_wr *wr, struct ibv_sge *sge,
                 int kind, uint64_t n, const void *src, uint32_t len,
                 uint64_t roff, int force_signal) {
  memset(wr, 0, sizeof *wr);
  sge->addr = (uintptr_t)src;
  sge->length = len;
  sge->lkey = v->mr->lkey;
  wr->wr_id = WRID(kind, n);
  wr->sg_list = len ? sge : NULL;
  wr->num_sge = len ? 1 : 0;
  wr->opcode = IBV_WR_RDMA_WRITE;
  wr->wr.rdma.remote_addr = v->raddr + roff;
  wr->wr.rdma.rkey = v->rkey;
  if (len && len <= v->max_inline)
    wr->send_flags |= IBV_SEND_INLINE;
  v->posted++;
  if (force_signal || ++v->unsignaled >= v->signal_every) {
    wr->send_flags |= IBV_SEND_SIGNALED;
    v->unsignaled = 0;
    sig_push(v, v->posted);
  }
}

/* An error completion: the WRITE did not land (or was flushed after the
 * queue pair broke). */
static void wc_failed(verbs_channel *v, const struct ibv_wc *wc) {
  sl_ring *r = &v->ring;
  if (stream_over(v)) {
    /* The peer left after the end (our last credits or a late flush). */
    atomic_store(&v->peer_gone, 1);
    return;
  }
  unsigned long long n = (unsigned long long)(wc->wr_id & WRID_MASK);
  char what[96];
  switch ((int)(wc->wr_id >> 56)) {
  case K_SLOT:
  case K_FOOTER:
    snprintf(what, sizeof what, "the RDMA WRITE of slot %llu", n);
    break;
  case K_CLOSE:
    snprintf(what, sizeof what,
             "the RDMA WRITE of the end of the stream (after %llu slots)", n);
    break;
  case K_CREDIT:
    snprintf(what, sizeof what, "the RDMA WRITE of credit %llu", n);
    break;
  case K_ABORT:
    snprintf(what, sizeof what, "the RDMA WRITE of the abort word");
    break;
  default:
    snprintf(what, sizeof what, "the final RDMA WRITE");
    break;
  }
  sl_ring_fail(r, SL_EIO, 0,
               "verbs channel: %s to the %s at %s failed: %s (status %d, "
               "vendor error 0x%x): the %s process exited or died, or the "
               "network failed",
               what, peer_role(r), v->where, ibv_wc_status_str(wc->status),
               (int)wc->status, wc->vendor_err, peer_role(r));
}

/* Take the completions there are.  0, or -1 after an error completion. */
static int reap(verbs_channel *v) {
  struct ibv_wc wc[16];
  int rc = 0;
  for (;;) {
    int n = ibv_poll_cq(v->cq, 16, wc);
    if (n < 0) {
      sl_ring_fail(&v->ring, SL_EIO, 0,
                   "verbs channel: polling the completion queue of the "
                   "channel to %s failed: %s",
                   v->where, strerror(errno ? errno : EIO));
      return -1;
    }
    for (int i = 0; i < n; i++) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        wc_failed(v, &wc[i]);
        rc = -1;
      } else if ((int)(wc[i].wr_id >> 56) != K_ABORT)
        sig_pop(v);
    }
    if (n < 16)
      return rc;
  }
}

/* The peer's rdma_cm said goodbye, or the device went away. */
static void peer_left(verbs_channel *v, enum rdma_cm_event_type ev,
                      int status) {
  sl_ring *r = &v->ring;
  if (atomic_exchange(&v->peer_gone, 1))
    return;
  /* After the end: the producer has closed (the consumer has it all once
   * closed_at landed, and closed_at went before the producer's
   * disconnect). */
  if (r->sides == SL_RING_PRODUCER ? r->pp.closed : stream_over(v))
    return;
  char progress[96];
  if (r->sides == SL_RING_PRODUCER)
    snprintf(progress, sizeof progress, "%llu slots published, %llu released",
             (unsigned long long)r->pp.sent,
             (unsigned long long)atomic_load(&r->ps->returned));
  else
    snprintf(progress, sizeof progress, "after %llu slots were received",
             (unsigned long long)r->cp.head);
  sl_ring_fail(r, SL_EIO, 0,
               "verbs channel: lost %s: rdma_cm reports %s (status %d) "
               "while the stream was running (%s): the %s process exited "
               "or died, see its error",
               r->peer[0] ? r->peer : v->where, rdma_event_str(ev), status,
               progress, peer_role(r));
}

/* Read the rdma_cm events that have arrived (never blocks). */
static void check_events(verbs_channel *v) {
  struct rdma_cm_event *ev;
  while (!atomic_load(&v->peer_gone) && rdma_get_cm_event(v->ec, &ev) == 0) {
    enum rdma_cm_event_type t = ev->event;
    int status = ev->status;
    rdma_ack_cm_event(ev);
    switch (t) {
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
    case RDMA_CM_EVENT_ADDR_CHANGE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
      peer_left(v, t, status);
      break;
    default:
      break; /* ESTABLISHED repeated, etc. */
    }
  }
}

/* Room for n more work requests in the send queue: reap until there is.
 * 0, or -1 when the channel broke meanwhile. */
static int reserve(verbs_channel *v, uint32_t n) {
  int64_t start = 0;
  while (v->posted - v->done + n > v->sq_depth - SQ_RESERVED) {
    if (reap(v) < 0 || sl_ring_aborted(&v->ring))
      return -1;
    if (v->posted - v->done + n <= v->sq_depth - SQ_RESERVED)
      break;
    check_events(v);
    if (atomic_load(&v->peer_gone))
      return -1;
    int64_t now = sl_clock_ns();
    if (!start)
      start = now;
    else if (now - start > SQ_STUCK_NS) {
      sl_ring_fail(&v->ring, SL_EIO, 1,
                   "verbs channel: the send queue to the %s at %s did not "
                   "drain in %lld s (%llu work requests outstanding)",
                   peer_role(&v->ring), v->where, SQ_STUCK_NS / 1000000000,
                   (unsigned long long)(v->posted - v->done));
      return -1;
    }
    sched_yield();
  }
  return 0;
}

static int post(verbs_channel *v, struct ibv_send_wr *wr, int n,
                const char *what) {
  for (int i = 0; i + 1 < n; i++)
    wr[i].next = &wr[i + 1];
  struct ibv_send_wr *bad = NULL;
  int e = ibv_post_send(v->id->qp, wr, &bad);
  if (e == 0)
    return 0;
  sl_ring_fail(&v->ring, SL_EIO, 1,
               "verbs channel: ibv_post_send of %s to the %s at %s failed: "
               "%s%s",
               what, peer_role(&v->ring), v->where, strerror(e),
               e == EACCES ? " (this process was forked from one that had "
                             "used verbs: the kernel refuses it the parent's "
                             "device context; open verbs ends only in "
                             "processes forked before any verbs use)"
                           : "");
  return -1;
}

/* --- hooks --- */

/* Producer: post the WRITEs of the slots published since the last kick,
 * then closed_at once the stream is closed after them. */
static void verbs_kick(sl_ring *r) {
  verbs_channel *v = V(r);
  if (sl_ring_aborted(r) || atomic_load(&v->peer_gone))
    return;
  if (v->sig_count && reap(v) < 0)
    return;
  uint32_t m = r->base.slot_size, payload = r->base.payload_size;
  while (v->written < r->pp.sent) {
    if (reserve(v, 2) < 0)
      return;
    struct ibv_send_wr wr[2];
    struct ibv_sge sge[2];
    int n = 0;
    uint32_t i = v->widx;
    unsigned char *slot = sl_ring_slot(r, i);
    uint32_t len = sl_ring_footer(r, i)->len;
    uint64_t roff = VERBS_RING_OFFSET + (uint64_t)i * m;
    if (len) {
      prep(v, &wr[n], &sge[n], K_SLOT, v->written, slot, len, roff, 0);
      n++;
    }
    prep(v, &wr[n], &sge[n], K_FOOTER, v->written, slot + payload,
         SL_CHANNEL_FOOTER_SIZE, roff + payload, 0);
    n++;
    if (post(v, wr, n, "a slot") < 0)
      return;
    v->written++;
    v->widx = i + 1 == r->base.credits ? 0 : i + 1;
  }
  uint64_t closed =
      atomic_load_explicit(&r->cs->closed_at, memory_order_acquire);
  if (!v->close_posted && closed != SL_RING_NOT_CLOSED &&
      closed == v->written) {
    if (reserve(v, 1) < 0)
      return;
    struct ibv_send_wr wr;
    struct ibv_sge sge;
    prep(v, &wr, &sge, K_CLOSE, closed, (const void *)&r->cs->closed_at,
         sizeof(uint64_t), offsetof(verbs_header, cs.closed_at), 1);
    if (post(v, &wr, 1, "the end of the stream") == 0)
      v->close_posted = 1;
  }
}

/* Consumer: the credit counter to the producer at once, also after the
 * stream was closed (a producer end reports SL_CHANNEL_END once every
 * credit is back).  A WRITE costs no system call on most devices and one
 * on rxe; batching would hold back credits the producer may wait for. */
static void verbs_returned(sl_ring *r) {
  verbs_channel *v = V(r);
  if (sl_ring_aborted(r) || atomic_load(&v->peer_gone))
    return;
  if (reserve(v, 1) < 0)
    return;
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  prep(v, &wr, &sge, K_CREDIT, r->cp.head, (const void *)&r->ps->returned,
       sizeof(uint64_t), offsetof(verbs_header, ps.returned), 0);
  post(v, &wr, 1, "a credit");
}

/* This end aborted (any thread): WRITE the abort word into the peer's
 * control line, best effort (the peer may be the one that died).  Posted
 * outside the data path's accounting, into the room reserved for it; only
 * the first abort gets here. */
static void verbs_aborted(sl_ring *r) {
  verbs_channel *v = V(r);
  if (!v->established || atomic_load(&v->peer_gone))
    return;
  const void *src;
  uint64_t roff;
  if (r->sides == SL_RING_PRODUCER) {
    src = (const void *)&r->cs->abort_code;
    roff = offsetof(verbs_header, cs.abort_code);
  } else {
    src = (const void *)&r->ps->abort_code;
    roff = offsetof(verbs_header, ps.abort_code);
  }
  struct ibv_sge sge = {(uintptr_t)src, sizeof(int), v->mr->lkey};
  struct ibv_send_wr wr;
  memset(&wr, 0, sizeof wr);
  wr.wr_id = WRID(K_ABORT, 0);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = sizeof(int) <= v->max_inline ? IBV_SEND_INLINE : 0;
  wr.wr.rdma.remote_addr = v->raddr + roff;
  wr.wr.rdma.rkey = v->rkey;
  struct ibv_send_wr *bad;
  (void)ibv_post_send(v->id->qp, &wr, &bad);
}

/* A call found nothing to do: reap, and look for rdma_cm news at most
 * once per CHECK_EVERY_NS. */
static void verbs_idle(sl_ring *r) {
  verbs_channel *v = V(r);
  if (v->sig_count)
    reap(v);
  int64_t now = sl_clock_ns();
  if (now < v->next_check_ns)
    return;
  v->next_check_ns = now + CHECK_EVERY_NS;
  check_events(v);
}

/* Waits sleep in poll() on the rdma_cm event channel: a DISCONNECTED ends
 * the nap at once.  (Slots and credits arrive by one-sided WRITEs, which
 * wake nobody; the back-off's naps are at most 200 us.) */
static void verbs_nap(void *arg, int64_t ns) {
  verbs_channel *v = arg;
  struct timespec ts = {ns / 1000000000, ns % 1000000000};
  if (atomic_load(&v->peer_gone)) {
    nanosleep(&ts, NULL);
    return;
  }
  struct pollfd p = {v->ec->fd, POLLIN, 0};
  if (ppoll(&p, 1, &ts, NULL) > 0)
    check_events(v);
}

/* Before disconnecting: wait (bounded) until everything posted has
 * landed, so that closed_at, the last credits or the abort word reach the
 * peer before its rdma_cm hears of the disconnect.  One signaled empty
 * WRITE completes after every earlier one. */
static void flush_posted(verbs_channel *v) {
  if (atomic_load(&v->peer_gone) || v->posted - v->done >= v->sq_depth)
    return;
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  prep(v, &wr, &sge, K_FLUSH, 0, NULL, 0, 0, 1);
  struct ibv_send_wr *bad;
  if (ibv_post_send(v->id->qp, &wr, &bad) != 0)
    return;
  int64_t limit = v->timeout_ns < 0 || v->timeout_ns > FLUSH_MAX_NS
                      ? FLUSH_MAX_NS
                      : v->timeout_ns;
  int64_t deadline = sl_clock_ns() + limit;
  while (v->done < v->posted && !atomic_load(&v->peer_gone) &&
         sl_clock_ns() < deadline) {
    if (reap(v) < 0)
      break;
    if (v->done >= v->posted)
      break;
    check_events(v);
    sched_yield();
  }
}

static void verbs_free(verbs_channel *v) {
  sl_verbs_teardown_qp(v);
  if (v->ec)
    rdma_destroy_event_channel(v->ec);
  free(v->sig);
  free(v->mem);
  free(v);
}

static void verbs_destroy(sl_ring *r) {
  verbs_channel *v = V(r);
  if (v->established) {
    if (r->sides == SL_RING_PRODUCER && !r->pp.closed && !sl_ring_aborted(r))
      sl_ring_fail(r, SL_ECANCELLED, 1,
                   "verbs channel: the producer end was destroyed before "
                   "the stream was closed");
    flush_posted(v);
    rdma_disconnect(v->id);
  }
  verbs_free(v);
}

static const sl_ring_hooks verbs_producer_hooks = {
    .kick = verbs_kick,
    .aborted = verbs_aborted,
    .idle = verbs_idle,
    .nap = verbs_nap,
    .destroy = verbs_destroy,
};

static const sl_ring_hooks verbs_consumer_hooks = {
    .returned = verbs_returned,
    .aborted = verbs_aborted,
    .idle = verbs_idle,
    .nap = verbs_nap,
    .destroy = verbs_destroy,
};

static int verbs_open_end(const sl_channel_endpoint *ep,
                          const sl_channel_config *cfg, sl_channel **out,
                          sl_error *err) {
  if (ep->via == SL_CHANNEL_VIA_FD)
    return sl_endpoint_refuse(
        ep, sl_error_set(err, SL_EINVAL,
                         "verbs channel endpoint: a connected socket (via "
                         "fd) cannot carry a verbs channel; its ends meet "
                         "through rdma_cm: listen with sl_channel_listen("
                         "\"verbs\", \"ip:port\", ...) and accept on it, or "
                         "connect to \"ip:port\""));
  sl_channel_config c;
  int rc = sl_channel_check_shape(cfg, SL_CHANNEL_VERBS_DEFAULT_CREDITS,
                                  SL_CHANNEL_VERBS_DEFAULT_SLOT_SIZE, &c, err);
  if (rc != SL_OK)
    return rc;
  size_t size = (sizeof(verbs_channel) + SL_CACHE_LINE - 1) / SL_CACHE_LINE *
                SL_CACHE_LINE;
  size_t mem_size = VERBS_RING_OFFSET + (size_t)c.credits * c.slot_size;
  mem_size = (mem_size + 4095) / 4096 * 4096;
  verbs_channel *v = aligned_alloc(_Alignof(verbs_channel), size);
  unsigned char *mem = aligned_alloc(4096, mem_size);
  if (!v || !mem) {
    free(v);
    free(mem);
    return sl_error_set(err, SL_ENOMEM,
                        "out of memory for a verbs channel of %u x %u bytes",
                        c.credits, c.slot_size);
  }
  memset(v, 0, sizeof *v);
  memset(mem, 0, mem_size);
  v->mem = mem;
  v->mem_size = mem_size;
  v->timeout_ns = ep->timeout_ns == 0 ? 10LL * 1000000000 : ep->timeout_ns;
  atomic_init(&v->peer_gone, 0);
  int producer = ep->role == SL_CHANNEL_PRODUCER;
  sl_ring_init(&v->ring, &sl_channel_verbs, &c,
               producer ? SL_RING_PRODUCER : SL_RING_CONSUMER,
               producer ? &verbs_producer_hooks : &verbs_consumer_hooks);
  verbs_header *h = (verbs_header *)mem;
  sl_ring_init_shared(&h->ps, &h->cs);
  v->ring.slots = mem + VERBS_RING_OFFSET;
  v->ring.ps = &h->ps;
  v->ring.cs = &h->cs;
  snprintf(v->where, sizeof v->where, "%s",
           ep->via == SL_CHANNEL_VIA_CONNECT && ep->address ? ep->address
                                                            : "?");
  v->ec = rdma_create_event_channel();
  if (!v->ec) {
    int e = errno;
    verbs_free(v);
    return sl_error_set(err, SL_EIO,
                        "verbs channel: cannot open the RDMA connection "
                        "manager (/dev/infiniband/rdma_cm): %s (no RDMA "
                        "device, or the rdma_ucm module is not loaded)",
                        strerror(e));
  }
  int fl = fcntl(v->ec->fd, F_GETFL);
  if (fl < 0 || fcntl(v->ec->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
    int e = errno;
    verbs_free(v);
    return sl_error_set(err, SL_EIO,
                        "verbs channel: cannot make the rdma_cm event "
                        "channel non-blocking: %s",
                        strerror(e));
  }
  verbs_hello peer;
  memset(&peer, 0, sizeof peer);
  rc = sl_verbs_rendezvous(v, ep, &c, sl_endpoint_deadline(ep), &peer, err);
  if (rc != SL_OK) {
    verbs_free(v);
    return rc;
  }
  v->established = 1;
  snprintf(v->ring.peer, sizeof v->ring.peer, "the %s at %s (pid %d)",
           producer ? "consumer" : "producer", v->where, (int)peer.pid);
  *out = &v->ring.base;
  return SL_OK;
}

const sl_channel_transport sl_channel_verbs = {
    .name = "verbs",
    SL_RING_TRANSPORT_OPS,
    .open_end = verbs_open_end,
};
