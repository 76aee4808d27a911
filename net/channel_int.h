/* channel_int.h - what the channel transports (runtime/channel*.c) share:
 * shape validation, the back-off used by the waits, the rendezvous helpers
 * of cross-process ends, and the ring protocol itself (sl_ring), which
 * local, shm and tcp all run: they differ only in where the ring and the
 * two control lines live and in a few hooks (how credits and the end of the
 * stream travel, how a dead peer is noticed). */
#ifndef SLUICE_CHANNEL_INT_H
#define SLUICE_CHANNEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sluice/net/channel.h"

#define SL_CACHE_LINE 64
#define SL_RING_NOT_CLOSED UINT64_MAX

/* Fill in defaults and check a channel shape.  SL_OK or SL_EINVAL. */
int sl_channel_check_config(const sl_channel_config *in, sl_channel_config *out,
                            sl_error *err);
/* Same with a transport's own defaults for 0 fields. */
int sl_channel_check_shape(const sl_channel_config *in, uint32_t def_credits,
                           uint32_t def_slot_size, sl_channel_config *out,
                           sl_error *err);

/* A wait that spins briefly, then yields, then sleeps with growing naps:
 * a short wait stays cheap and a long one does not burn a shared core.
 * A transport may replace the sleep by a wait on its peer (`nap`), so that
 * a credit message or a hang-up ends the nap at once. */
typedef struct sl_backoff {
  uint32_t round;
  int64_t deadline_ns; /* CLOCK_MONOTONIC; < 0 = none */
  int64_t start_ns;    /* 0 until the first clock read */
  int64_t timeout_ns;
  void (*nap)(void *arg, int64_t ns); /* NULL = nanosleep */
  void *nap_arg;
} sl_backoff;

void sl_backoff_init(sl_backoff *b, int64_t timeout_ns);

/* Pause once.  Returns 0 when the deadline has passed, else 1. */
int sl_backoff_pause(sl_backoff *b);

/* Nanoseconds since the first pause (0 if it never slept). */
int64_t sl_backoff_elapsed_ns(const sl_backoff *b);

/* --- the ring protocol (channel_ring.c) --- */

/* Written by the consumer, read by the producer (producer memory). */
typedef struct sl_ring_pshared {
  _Alignas(SL_CACHE_LINE) _Atomic uint64_t returned; /* credits given back */
  _Atomic int abort_code;                            /* 0 or SL_E* */
} sl_ring_pshared;

/* Written by the producer, read by the consumer (consumer memory). */
typedef struct sl_ring_cshared {
  _Alignas(SL_CACHE_LINE) _Atomic uint64_t closed_at; /* NOT_CLOSED or N */
  _Atomic int abort_code;
} sl_ring_cshared;

/* The producer's own state. */
typedef struct sl_ring_pprivate {
  _Alignas(SL_CACHE_LINE) uint64_t sent; /* slots published */
  uint64_t returned_cache;               /* last value read from `returned` */
  uint32_t next;                         /* ring index of the next slot */
  int acquired;                          /* a slot is taken, not published */
  int closed;
  int stalled; /* in a no-credit episode (counts stalls once) */
  _Atomic uint64_t buffers, bytes, stalls, stall_ns;
} sl_ring_pprivate;

/* The consumer's own state. */
typedef struct sl_ring_cprivate {
  _Alignas(SL_CACHE_LINE) uint64_t head; /* slots taken so far */
  uint32_t next;                         /* ring index of the next slot */
  int polled;                            /* `view` is valid, not released */
  _Atomic int ended;                     /* saw SL_CHANNEL_END */
  _Atomic uint64_t received, received_bytes;
  sl_channel_slot view;
} sl_ring_cprivate;

typedef struct sl_ring sl_ring;

/* What a transport adds to the protocol.  Every hook may be NULL. */
typedef struct sl_ring_hooks {
  /* Producer, out of credit by its cache: let credits that arrived reach
   * ps->returned (tcp reads credit messages). */
  void (*refresh)(sl_ring *r);
  /* Producer: a slot was published or the stream closed (tcp wakes its
   * sender thread). */
  void (*kick)(sl_ring *r);
  /* Consumer: a slot was released, ps->returned is the new count (tcp
   * sends it). */
  void (*returned)(sl_ring *r);
  /* This side aborted: tell the peer (tcp sends a message; shm and local
   * share the abort words). */
  void (*aborted)(sl_ring *r);
  /* A call found nothing to do: check that the peer is alive (rate-limited
   * by the transport); a dead peer breaks the ring with sl_ring_fail. */
  void (*idle)(sl_ring *r);
  /* Wait up to ns for news from the peer instead of sleeping. */
  void (*nap)(void *r, int64_t ns);
  /* Free the transport's resources (the ring struct itself too). */
  void (*destroy)(sl_ring *r);
} sl_ring_hooks;

enum { SL_RING_PRODUCER = 1, SL_RING_CONSUMER = 2, SL_RING_BOTH = 3 };

enum { SL_RING_MSG = 256 };

/* A channel running the ring protocol; a transport's channel starts with
 * it.  `slots`, `ps` and `cs` point wherever the transport keeps them: all
 * on the heap (local), all in one shared mapping (shm), or the local side's
 * copy (tcp, where the I/O carries the writes to the peer's copy). */
struct sl_ring {
  sl_channel base;
  unsigned char *slots; /* c * m bytes, cache-line aligned */
  sl_ring_pshared *ps;
  sl_ring_cshared *cs;
  const sl_ring_hooks *hooks;
  int sides;      /* SL_RING_* ends that live in this process */
  char peer[192]; /* "the consumer (pid 42)": for messages */
  /* Why the ring broke: written once by the first sl_ring_fail. */
  _Atomic int msg_state; /* 0 none, 1 being written, 2 ready */
  char msg[SL_RING_MSG];
  sl_ring_pprivate pp;
  sl_ring_cprivate cp;
};

/* Set up the private state (the caller has zeroed *r and the ring). */
void sl_ring_init(sl_ring *r, const sl_channel_transport *t,
                  const sl_channel_config *shape, int sides,
                  const sl_ring_hooks *hooks);
/* The control lines' initial values. */
void sl_ring_init_shared(sl_ring_pshared *ps, sl_ring_cshared *cs);

static inline unsigned char *sl_ring_slot(const sl_ring *r, uint32_t i) {
  return r->slots + (size_t)i * r->base.slot_size;
}
static inline sl_channel_footer *sl_ring_footer(const sl_ring *r, uint32_t i) {
  return (sl_channel_footer *)(sl_ring_slot(r, i) + r->base.payload_size);
}

/* Write footer fields into a slot's footer and then its full flag (the
 * slot's last byte) with release: the one place a slot becomes visible,
 * for the producer's publish and for tcp's receiver landing a slot. */
void sl_ring_land(sl_channel_footer *dst, const sl_channel_footer *src);

/* The abort code as this end sees it (0 while healthy). */
int sl_ring_aborted(const sl_ring *r);

/* Break the ring with `code` (first abort wins) and remember why (printf
 * format).  notify = 0 when the peer already knows (it told us).  Returns
 * the code in force. */
int sl_ring_fail(sl_ring *r, int code, int notify, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The transport-table entries every ring transport shares (designated
 * initialisers; a transport adds name, open, open_end). */
#define SL_RING_TRANSPORT_OPS                                                  \
  .acquire = sl_ring_acquire, .publish = sl_ring_publish,                      \
  .wait_credit = sl_ring_wait_credit, .poll = sl_ring_poll,                    \
  .wait_slot = sl_ring_wait_slot, .release = sl_ring_release,                  \
  .close = sl_ring_close, .abort = sl_ring_abort, .status = sl_ring_status,    \
  .stats = sl_ring_stats, .destroy = sl_ring_destroy, .error = sl_ring_error

/* The transport-table functions every ring transport uses. */
void *sl_ring_acquire(sl_channel *ch);
int sl_ring_publish(sl_channel *ch, uint32_t len, const sl_channel_header *hdr);
int sl_ring_wait_credit(sl_channel *ch, int64_t timeout_ns);
const sl_channel_slot *sl_ring_poll(sl_channel *ch);
int sl_ring_wait_slot(sl_channel *ch, int64_t timeout_ns);
int sl_ring_release(sl_channel *ch);
int sl_ring_close(sl_channel *ch);
void sl_ring_abort(sl_channel *ch, int code);
int sl_ring_status(const sl_channel *ch);
void sl_ring_stats(const sl_channel *ch, sl_channel_stats *out);
void sl_ring_destroy(sl_channel *ch);
int sl_ring_error(const sl_channel *ch, sl_error *err);

/* --- rendezvous of cross-process ends (channel_endpoint.c) --- */

/* The first message of each end to the other, both ways, before anything
 * else: who we are and the shape we expect. */
typedef struct sl_hello {
  char magic[4];      /* "SLCH" */
  uint32_t version;   /* SL_HELLO_VERSION */
  uint32_t role;      /* sl_channel_role of the sender */
  uint32_t credits;   /* shape after defaults */
  uint32_t slot_size; /* shape after defaults */
  int32_t pid;        /* the sender's process, for messages */
} sl_hello;

enum { SL_HELLO_VERSION = 1 };

/* Check the endpoint and get a connected stream socket to the peer (in
 * *fd, blocking mode, close-on-exec) according to ep->via; `where` gets a
 * printable peer address for messages. */
int sl_endpoint_connect(const sl_channel_endpoint *ep, int family,
                        int64_t deadline_ns, int *fd, char *where,
                        size_t where_size, sl_error *err);

/* Exchange hellos on fd: send ours (with memfd attached when passfd >= 0)
 * and receive the peer's (a passed descriptor, if any, lands in *gotfd,
 * else -1).  Checks magic, version, opposite roles and equal shapes. */
int sl_endpoint_hello(int fd, const char *transport, sl_channel_role role,
                      const sl_channel_config *shape, int passfd,
                      int64_t deadline_ns, sl_hello *peer, int *gotfd,
                      const char *where, sl_error *err);

/* Read or write exactly n bytes before the deadline (CLOCK_MONOTONIC ns,
 * < 0 = none).  SL_OK, or SL_EIO with what/where in the message. */
int sl_endpoint_send_all(int fd, const void *buf, size_t n, int64_t deadline_ns,
                         const char *what, const char *where, sl_error *err);
int sl_endpoint_recv_all(int fd, void *buf, size_t n, int64_t deadline_ns,
                         const char *what, const char *where, sl_error *err);

/* Fail an open before the endpoint's socket was taken over: a passed
 * descriptor (VIA_FD) belongs to the channel from the call on, so it is
 * closed here.  Returns rc. */
int sl_endpoint_refuse(const sl_channel_endpoint *ep, int rc);

/* Deadline for a rendezvous from ep->timeout_ns. */
int64_t sl_endpoint_deadline(const sl_channel_endpoint *ep);

/* sl_channel_listen for verbs (channel_verbs_connect.c). */
int sl_verbs_listen(const char *address, int *fd, char *bound,
                    size_t bound_size, sl_error *err);

#endif
