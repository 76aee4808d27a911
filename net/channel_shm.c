/* channel_shm.c - the shared-memory channel transport: a producer and a
 * consumer in two processes of one host run the ring protocol
 * (channel_ring.c) unchanged over one MAP_SHARED mapping that holds the
 * ring and both control lines; C11 atomics order the same across processes
 * on a shared mapping as across threads.
 *
 * WHY A MEMFD OVER A UNIX SOCKET (and not shm_open with a name).  The
 * consumer, whose memory the ring is, creates an anonymous memfd, sizes
 * and maps it, and passes the descriptor to the producer with its hello
 * (SCM_RIGHTS).  Nothing is ever named in /dev/shm, so there is nothing to
 * unlink and nothing left behind when a process dies at any point: the
 * memory goes away with the last mapping.  (The "unlink once both ends
 * have mapped it" of a named object is implicit.)  The same socket then
 * stays open, idle, as a liveness wire: when a peer process dies, however
 * it dies, the kernel closes its end and ours reads EOF.  A pid in the
 * mapping checked with kill(pid, 0) would not do: a killed child stays a
 * zombie, which kill() reports alive, until its parent (often the very
 * process that is waiting) reaps it.
 *
 * LIVENESS.  Waits sleep in poll() on the socket instead of nanosleep, so a
 * hang-up ends a nap at once; calls that find nothing to do (acquire
 * without credit, poll with no slot) check the socket at most once per
 * millisecond.  EOF from the peer is the normal end when the producer has
 * closed the stream (the consumer then drains the ring) and an SL_EIO
 * naming the peer's pid otherwise.  Caveat: a process forked after the
 * open inherits the socket and keeps the wire up; fork before opening.
 *
 * Shared mapping layout (offsets in bytes):
 *   0     shm_header: magic, shape, the producer's control line (credit
 *         counter, abort) and the consumer's (closed_at, abort), each on
 *         its own cache line
 *   4096  the ring: c slots of m bytes */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "channel_int.h"
#include "sluice/common/clock.h"

#define RING_OFFSET 4096
#define CHECK_EVERY_NS (1000 * 1000) /* liveness check from idle calls */

typedef struct shm_header {
  char magic[8]; /* "SLSHMv1" */
  uint32_t credits, slot_size;
  sl_ring_pshared ps;
  sl_ring_cshared cs;
} shm_header;

_Static_assert(sizeof(shm_header) <= RING_OFFSET, "header fits its page");

typedef struct shm_channel {
  sl_ring ring;
  void *map;
  size_t map_size;
  int sock;              /* to the peer; idle after the hello */
  int peer_gone;         /* EOF seen (normal end or death) */
  int64_t next_check_ns; /* idle() checks no more often than this */
  char where[128];
} shm_channel;

static const char *role_name(int sides) {
  return sides == SL_RING_PRODUCER ? "producer" : "consumer";
}

/* The peer hung up: the end of a finished stream, or a death. */
static void peer_hung_up(shm_channel *s) {
  sl_ring *r = &s->ring;
  s->peer_gone = 1;
  if (r->sides == SL_RING_CONSUMER) {
    if (atomic_load_explicit(&r->cs->closed_at, memory_order_acquire) !=
        SL_RING_NOT_CLOSED)
      return; /* closed, then exited: the ring holds the rest */
    sl_ring_fail(r, SL_EIO, 0,
                 "shm channel: %s exited or died before closing the stream "
                 "(after %llu slots were received); its query failed or was "
                 "killed, see that process's error",
                 r->peer, (unsigned long long)r->cp.head);
  } else {
    if (r->pp.closed)
      return; /* nothing more to send; the consumer is done with us */
    sl_ring_fail(r, SL_EIO, 0,
                 "shm channel: %s exited or died while the stream was running "
                 "(%llu slots published, %llu released); its query failed "
                 "or was killed, see that process's error",
                 r->peer, (unsigned long long)r->pp.sent,
                 (unsigned long long)atomic_load(&r->ps->returned));
  }
}

/* Look at the socket without waiting. */
static void check_peer(shm_channel *s) {
  if (s->peer_gone)
    return;
  struct pollfd p = {s->sock, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0)
    return;
  char b;
  ssize_t k = recv(s->sock, &b, 1, MSG_DONTWAIT | MSG_PEEK);
  if (k == 0 ||
      (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
    peer_hung_up(s);
}

static void shm_idle(sl_ring *r) {
  shm_channel *s = (shm_channel *)r;
  int64_t now = sl_clock_ns();
  if (now < s->next_check_ns)
    return;
  s->next_check_ns = now + CHECK_EVERY_NS;
  check_peer(s);
}

/* A nap that a hang-up ends early. */
static void shm_nap(void *arg, int64_t ns) {
  shm_channel *s = arg;
  struct timespec ts = {ns / 1000000000, ns % 1000000000};
  if (s->peer_gone) {
    nanosleep(&ts, NULL);
    return;
  }
  struct pollfd p = {s->sock, POLLIN, 0};
  if (ppoll(&p, 1, &ts, NULL) > 0)
    check_peer(s);
}

static void shm_free(shm_channel *s) {
  if (s->map)
    munmap(s->map, s->map_size);
  if (s->sock >= 0)
    close(s->sock);
  free(s);
}

static void shm_destroy(sl_ring *r) {
  shm_free((shm_channel *)r);
}

static const sl_ring_hooks shm_hooks = {
    .idle = shm_idle, .nap = shm_nap, .destroy = shm_destroy};

/* Consumer: create, size, map and initialise the memory, hand it over. */
static int shm_consumer_setup(shm_channel *s, const sl_channel_config *c,
                              int64_t deadline, sl_hello *peer, sl_error *err) {
  int mfd = memfd_create("sluice-channel", MFD_CLOEXEC);
  if (mfd < 0)
    return sl_error_set(err, SL_EIO,
                        "shm channel: cannot create shared memory: %s",
                        strerror(errno));
  if (ftruncate(mfd, (off_t)s->map_size) != 0) {
    int e = errno;
    close(mfd);
    return sl_error_set(err, SL_ENOMEM,
                        "shm channel: cannot size shared memory to %zu "
                        "bytes: %s",
                        s->map_size, strerror(e));
  }
  s->map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_POPULATE, mfd, 0);
  if (s->map == MAP_FAILED) {
    int e = errno;
    s->map = NULL;
    close(mfd);
    return sl_error_set(err, SL_ENOMEM, "shm channel: cannot map %zu bytes: %s",
                        s->map_size, strerror(e));
  }
  /* ftruncate gave zeros: every full flag is 0, all slots free.  Both
   * ends map with MAP_POPULATE: the page faults of a fresh ring are paid
   * at open, not by the first c slots of the stream. */
  shm_header *h = s->map;
  memcpy(h->magic, "SLSHMv1", 8);
  h->credits = c->credits;
  h->slot_size = c->slot_size;
  sl_ring_init_shared(&h->ps, &h->cs);
  int rc = sl_endpoint_hello(s->sock, "shm", SL_CHANNEL_CONSUMER, c, mfd,
                             deadline, peer, NULL, s->where, err);
  close(mfd); /* the producer has its own descriptor now */
  if (rc != SL_OK)
    return rc;
  /* The producer says when it has mapped the memory. */
  char ack[4];
  rc =
      sl_endpoint_recv_all(s->sock, ack, sizeof ack, deadline,
                           "producer's mapping acknowledgement", s->where, err);
  if (rc == SL_OK && memcmp(ack, "MAPD", 4) != 0)
    rc = sl_error_set(err, SL_EIO, "shm channel: bad acknowledgement from %s",
                      s->where);
  return rc;
}

/* Producer: map what the consumer passed and check it is what we expect. */
static int shm_producer_setup(shm_channel *s, const sl_channel_config *c,
                              int64_t deadline, sl_hello *peer, sl_error *err) {
  int mfd = -1;
  int rc = sl_endpoint_hello(s->sock, "shm", SL_CHANNEL_PRODUCER, c, -1,
                             deadline, peer, &mfd, s->where, err);
  if (rc != SL_OK) {
    if (mfd >= 0)
      close(mfd);
    return rc;
  }
  struct stat st;
  if (mfd < 0 || fstat(mfd, &st) != 0 || (size_t)st.st_size != s->map_size) {
    if (mfd >= 0)
      close(mfd);
    return sl_error_set(err, SL_EIO,
                        "shm channel: %s did not pass shared memory of %zu "
                        "bytes with its hello (is it a shm consumer end on "
                        "this host?)",
                        s->where, s->map_size);
  }
  s->map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_POPULATE, mfd, 0);
  int e = errno;
  close(mfd); /* the mapping keeps the memory */
  if (s->map == MAP_FAILED) {
    s->map = NULL;
    return sl_error_set(err, SL_ENOMEM,
                        "shm channel: cannot map %zu bytes from %s: %s",
                        s->map_size, s->where, strerror(e));
  }
  shm_header *h = s->map;
  if (memcmp(h->magic, "SLSHMv1", 8) != 0 || h->credits != c->credits ||
      h->slot_size != c->slot_size)
    return sl_error_set(err, SL_EIO,
                        "shm channel: the shared memory from %s has a bad "
                        "header",
                        s->where);
  return sl_endpoint_send_all(s->sock, "MAPD", 4, deadline,
                              "mapping acknowledgement", s->where, err);
}

static int shm_open_end(const sl_channel_endpoint *ep,
                        const sl_channel_config *cfg, sl_channel **out,
                        sl_error *err) {
  sl_channel_config c;
  int rc = sl_channel_check_shape(cfg, SL_CHANNEL_SHM_DEFAULT_CREDITS,
                                  SL_CHANNEL_SHM_DEFAULT_SLOT_SIZE, &c, err);
  if (rc != SL_OK)
    return sl_endpoint_refuse(ep, rc);
  size_t size =
      (sizeof(shm_channel) + SL_CACHE_LINE - 1) / SL_CACHE_LINE * SL_CACHE_LINE;
  shm_channel *s = aligned_alloc(_Alignof(shm_channel), size);
  if (!s)
    return sl_endpoint_refuse(
        ep, sl_error_set(err, SL_ENOMEM, "out of memory for a shm channel"));
  memset(s, 0, sizeof *s);
  s->sock = -1;
  s->map_size = RING_OFFSET + (size_t)c.credits * c.slot_size;
  int sides =
      ep->role == SL_CHANNEL_PRODUCER ? SL_RING_PRODUCER : SL_RING_CONSUMER;
  sl_ring_init(&s->ring, &sl_channel_shm, &c, sides, &shm_hooks);
  int64_t deadline = sl_endpoint_deadline(ep);
  rc = sl_endpoint_connect(ep, AF_UNIX, deadline, &s->sock, s->where,
                           sizeof s->where, err);
  sl_hello peer = {0};
  if (rc == SL_OK)
    rc = sides == SL_RING_CONSUMER
             ? shm_consumer_setup(s, &c, deadline, &peer, err)
             : shm_producer_setup(s, &c, deadline, &peer, err);
  if (rc != SL_OK) {
    shm_free(s);
    return rc;
  }
  shm_header *h = s->map;
  s->ring.slots = (unsigned char *)s->map + RING_OFFSET;
  s->ring.ps = &h->ps;
  s->ring.cs = &h->cs;
  snprintf(s->ring.peer, sizeof s->ring.peer, "the %s (pid %d)",
           role_name(sides == SL_RING_PRODUCER ? SL_RING_CONSUMER
                                               : SL_RING_PRODUCER),
           (int)peer.pid);
  *out = &s->ring.base;
  return SL_OK;
}

const sl_channel_transport sl_channel_shm = {
    .name = "shm",
    SL_RING_TRANSPORT_OPS,
    .open_end = shm_open_end,
};
