/* channel_tcp.c - the TCP channel transport: a producer and a consumer on
 * any two hosts run the ring protocol (channel_ring.c) on their own copies,
 * and one I/O thread per end carries the protocol's remote writes over a
 * TCP connection (TCP_NODELAY, keepalive).
 *
 * PRODUCER END.  The producer fills slots of its own ring of c slots
 * exactly as in-process (acquire/publish set the full flag).  A sender
 * thread plays the remote WRITE: it takes full slots in order, sends each
 * as one frame, and clears the flag; the producer does not reuse the slot
 * before its credit returns, which is after the consumer got it, so the
 * bytes stay valid while they are sent.  The producer thread itself reads
 * the consumer's messages (credits, abort) when it is out of credit, and
 * its waits sleep in poll() on the socket, so a credit or a hang-up wakes
 * it at once.  publish never blocks on the network; it wakes the sender
 * through an eventfd only when the sender is asleep (a flag checked with a
 * seq_cst fence on both sides, so no wakeup is lost).
 *
 * CONSUMER END.  A receiver thread reads frames straight into the slots of
 * the consumer's ring (the credits guarantee the slot is free) and lands
 * the footer with the full flag last (sl_ring_land), so the consumer polls
 * local memory as in-process.  release sends the new credit count from the
 * consumer thread (non-blocking; a send that does not fit is finished by
 * the next consumer call: counts are absolute, so a later one replaces an
 * unsent earlier one).  Nothing on the data path allocates.
 *
 * FRAMING (little-endian, as the hosts; the hello fails otherwise).
 *   producer -> consumer: a 32-byte header laid out as sl_channel_footer;
 *     its last byte (the full flag's place) is the frame kind:
 *       1 DATA   seq, watermark, len, rows, flags; then len payload bytes
 *                (only the used bytes, not the whole slot).  The header
 *                lands as the slot's footer, its 1 as the full flag.
 *       2 CLOSE  seq = number of slots in the stream
 *       3 ABORT  flags = -code
 *   consumer -> producer: 16-byte messages {u32 kind, i32 code, u64 value}
 *       1 CREDIT value = slots released so far (the credit counter)
 *       2 ABORT  code
 *       3 CLOSED the CLOSE frame arrived (everything is in the consumer's
 *                ring): the producer end may now close its socket.
 *
 * PEER DEATH.  A dead process's kernel closes its socket: the other end
 * reads EOF or ECONNRESET, or a send fails, and the channel breaks with
 * SL_EIO naming the peer's address, unless the stream was already complete
 * (CLOSE received / every credit back).  A host that vanishes without a
 * reset is caught by keepalive and TCP_USER_TIMEOUT within ~10 s. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "channel_int.h"
#include "sluice/common/clock.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tcp channel framing is little-endian"
#endif

enum { F_DATA = 1, F_CLOSE = 2, F_ABORT = 3 };
enum { SEND_BATCH = 16 }; /* slots per sendmsg at most */
enum { M_CREDIT = 1, M_ABORT = 2, M_CLOSED = 3 };

typedef struct tcp_msg {
  uint32_t kind;
  int32_t code;
  uint64_t value;
} tcp_msg;

_Static_assert(sizeof(tcp_msg) == 16, "consumer messages are 16 bytes");

typedef struct tcp_channel {
  sl_ring ring;
  /* This end's copies of both control lines: the producer end's ps is
   * written from credit messages and its cs is shipped by the sender; the
   * consumer end's cs is written by the receiver and its ps is shipped by
   * release. */
  sl_ring_pshared ps;
  sl_ring_cshared cs;
  unsigned char *mem; /* the ring */
  int sock;
  /* An eventfd and a "sleeping" flag: on the producer end the sender
   * sleeps on it and publish wakes it; on the consumer end the consumer's
   * waits sleep on it and the receiver wakes them when a slot lands. */
  int wake;
  pthread_t io;
  int io_started;
  _Atomic int io_done;
  _Atomic int sleeping; /* the sleeper is (about to be) in poll() */
  _Atomic int stop;
  _Atomic int close_sent;
  int64_t timeout_ns; /* from the endpoint: bounds destroy's flush */
  char where[128];
  /* Producer end, producer thread: a partly read consumer message. */
  unsigned char in[sizeof(tcp_msg)];
  size_t in_len;
  int closed_acked;
  int peer_eof;
  /* Consumer end: outgoing messages from release/abort (any thread). */
  pthread_mutex_t out_lock;
  unsigned char out[sizeof(tcp_msg)];
  size_t out_len, out_off;
  _Atomic uint64_t credit_sent; /* written under out_lock */
  uint64_t credit_batch;        /* release sends once this many are owed */
  _Atomic int out_pending;
} tcp_channel;

static inline tcp_channel *T(sl_ring *r) {
  return (tcp_channel *)r;
}

/* Exactly n bytes from a blocking socket.  0 done, 1 EOF before the first
 * byte, 2 EOF in the middle, < 0 -errno. */
static int recv_exact(int fd, void *buf, size_t n) {
  char *p = buf;
  size_t got = 0;
  while (got < n) {
    ssize_t k = recv(fd, p + got, n - got, 0);
    if (k == 0)
      return got ? 2 : 1;
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    got += (size_t)k;
  }
  return 0;
}

/* Exactly the bytes of iov[0..n) on a blocking socket.  0 or -errno. */
static int send_iov(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    struct msghdr m = {0};
    m.msg_iov = iov;
    m.msg_iovlen = (size_t)n;
    ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    while (n > 0 && (size_t)k >= iov->iov_len) {
      k -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + k;
      iov->iov_len -= (size_t)k;
    }
  }
  return 0;
}

/* ---------------- producer end ---------------- */

static int send_frame(tcp_channel *t, sl_channel_footer *h, void *payload,
                      uint32_t len) {
  struct iovec iov[2] = {{h, sizeof *h}, {payload, len}};
  return send_iov(t->sock, iov, len ? 2 : 1);
}

/* The sender thread: ships full slots in order, then CLOSE, or ABORT. */
static void *tcp_sender(void *arg) {
  tcp_channel *t = arg;
  sl_ring *r = &t->ring;
  uint64_t tx = 0;
  uint32_t idx = 0;
  sl_channel_footer hdrs[SEND_BATCH];
  struct iovec iov[2 * SEND_BATCH];
  while (!atomic_load(&t->stop)) {
    int a = sl_ring_aborted(r);
    if (a) {
      /* Best effort: a dead consumer needs no notice. */
      sl_channel_footer h = {.flags = (uint32_t)-a};
      ((unsigned char *)&h)[sizeof h - 1] = F_ABORT;
      send_frame(t, &h, NULL, 0);
      break;
    }
    sl_channel_footer *f = sl_ring_footer(r, idx);
    /* Every slot full in a row goes out in one sendmsg (a producer ahead
     * of the network pays one system call per batch, not per slot). */
    int k = 0;
    while (k < SEND_BATCH) {
      sl_channel_footer *g = sl_ring_footer(r, idx);
      if (!atomic_load_explicit(&g->full, memory_order_acquire))
        break;
      memcpy(&hdrs[k], g, sizeof hdrs[k]); /* full == 1 == F_DATA */
      /* Cleared before the send, not after: once the bytes are out the
       * credit can come back and the producer republish this slot before
       * this thread runs again, and a late clear would erase that. */
      atomic_store_explicit(&g->full, 0, memory_order_relaxed);
      iov[2 * k] = (struct iovec){&hdrs[k], sizeof hdrs[k]};
      iov[2 * k + 1] = (struct iovec){sl_ring_slot(r, idx), hdrs[k].len};
      k++;
      idx = idx + 1 == r->base.credits ? 0 : idx + 1;
    }
    if (k > 0) {
      int rc = send_iov(t->sock, iov, 2 * k);
      if (rc < 0) {
        sl_ring_fail(r, SL_EIO, 0,
                     "tcp channel: sending slots %llu..%llu to the consumer "
                     "at %s failed: %s (the consumer process exited or died, "
                     "or the network failed)",
                     (unsigned long long)tx, (unsigned long long)tx + k - 1,
                     t->where, strerror(-rc));
        break;
      }
      tx += (uint64_t)k;
      continue;
    }
    uint64_t closed =
        atomic_load_explicit(&t->cs.closed_at, memory_order_acquire);
    if (closed == tx && !atomic_load(&t->close_sent)) {
      sl_channel_footer h = {.seq = closed};
      ((unsigned char *)&h)[sizeof h - 1] = F_CLOSE;
      int rc = send_frame(t, &h, NULL, 0);
      if (rc < 0) {
        sl_ring_fail(r, SL_EIO, 0,
                     "tcp channel: sending the end of the stream to the "
                     "consumer at %s failed: %s (the consumer process exited "
                     "or died)",
                     t->where, strerror(-rc));
        break;
      }
      atomic_store(&t->close_sent, 1);
      continue;
    }
    /* Nothing to do: sleep until kicked.  Announce it, then look once more
     * (the producer stores, fences, then reads `sleeping`). */
    atomic_store(&t->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&f->full, memory_order_acquire) &&
        !sl_ring_aborted(r) && !atomic_load(&t->stop) &&
        (atomic_load(&t->cs.closed_at) != tx || atomic_load(&t->close_sent))) {
      struct pollfd p = {t->wake, POLLIN, 0};
      poll(&p, 1, -1);
    }
    atomic_store(&t->sleeping, 0);
    uint64_t v;
    if (read(t->wake, &v, sizeof v) < 0) {
      /* EAGAIN: nobody kicked; fine */
    }
  }
  atomic_store(&t->io_done, 1);
  return NULL;
}

static void tcp_kick(sl_ring *r) {
  tcp_channel *t = T(r);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&t->sleeping, memory_order_relaxed)) {
    uint64_t one = 1;
    if (write(t->wake, &one, sizeof one) < 0) {
      /* the counter cannot overflow in practice; a failed kick means the
       * sender is awake anyway */
    }
  }
}

/* The consumer went away.  Normal after a complete stream. */
static void producer_peer_gone(tcp_channel *t, int e) {
  sl_ring *r = &t->ring;
  t->peer_eof = 1;
  uint64_t back = atomic_load(&t->ps.returned);
  if (r->pp.closed && (t->closed_acked || back == r->pp.sent))
    return;
  sl_ring_fail(r, SL_EIO, 0,
               "tcp channel: lost the consumer at %s (%s) while the stream "
               "was running (%llu slots published, %llu released): the "
               "consumer process exited or died, see its error",
               t->where, e ? strerror(e) : "it closed the connection",
               (unsigned long long)r->pp.sent, (unsigned long long)back);
}

/* Producer thread: read whatever consumer messages have arrived. */
static void tcp_refresh(sl_ring *r) {
  tcp_channel *t = T(r);
  while (!t->peer_eof) {
    ssize_t k = recv(t->sock, t->in + t->in_len, sizeof t->in - t->in_len,
                     MSG_DONTWAIT);
    if (k == 0) {
      producer_peer_gone(t, 0);
      return;
    }
    if (k < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        producer_peer_gone(t, errno);
      return;
    }
    t->in_len += (size_t)k;
    if (t->in_len < sizeof t->in)
      continue;
    t->in_len = 0;
    tcp_msg m;
    memcpy(&m, t->in, sizeof m);
    if (m.kind == M_CREDIT && m.value <= r->pp.sent &&
        m.value >= atomic_load_explicit(&t->ps.returned, memory_order_relaxed))
      atomic_store_explicit(&t->ps.returned, m.value, memory_order_release);
    else if (m.kind == M_ABORT)
      sl_ring_fail(r, m.code < 0 ? m.code : SL_EIO, 0,
                   "tcp channel: the consumer at %s aborted the channel "
                   "(%s): its query stopped, see its error",
                   t->where, sl_error_kind(m.code < 0 ? m.code : SL_EIO));
    else if (m.kind == M_CLOSED)
      t->closed_acked = 1;
    else {
      sl_ring_fail(r, SL_EIO, 1,
                   "tcp channel: bad message (kind %u, credit %llu of %llu "
                   "sent) from the consumer at %s: the peer broke the "
                   "protocol",
                   m.kind, (unsigned long long)m.value,
                   (unsigned long long)r->pp.sent, t->where);
      return;
    }
  }
}

/* Producer waits sleep in poll() on the socket: a credit wakes them. */
static void tcp_producer_nap(void *arg, int64_t ns) {
  tcp_channel *t = arg;
  struct timespec ts = {ns / 1000000000, ns % 1000000000};
  if (t->peer_eof) {
    nanosleep(&ts, NULL);
    return;
  }
  struct pollfd p = {t->sock, POLLIN, 0};
  ppoll(&p, 1, &ts, NULL);
}

/* ---------------- consumer end ---------------- */

/* Push out the pending message bytes, then the newest credit if it was not
 * sent yet.  Called with out_lock held.  Never blocks. */
static void flush_out(tcp_channel *t) {
  sl_ring *r = &t->ring;
  for (;;) {
    if (t->out_off == t->out_len) {
      uint64_t head =
          atomic_load_explicit(&t->ps.returned, memory_order_relaxed);
      if (head == atomic_load(&t->credit_sent)) {
        atomic_store(&t->out_pending, 0);
        return;
      }
      tcp_msg m = {M_CREDIT, 0, head};
      memcpy(t->out, &m, sizeof m);
      t->out_len = sizeof m;
      t->out_off = 0;
      atomic_store(&t->credit_sent, head);
    }
    ssize_t k = send(t->sock, t->out + t->out_off, t->out_len - t->out_off,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        atomic_store(&t->out_pending, 1);
        return;
      }
      int e = errno;
      t->out_off = t->out_len; /* drop it */
      atomic_store(&t->out_pending, 0);
      /* After CLOSE the producer may be gone: credits no longer matter. */
      if (atomic_load(&t->cs.closed_at) == SL_RING_NOT_CLOSED)
        sl_ring_fail(r, SL_EIO, 0,
                     "tcp channel: returning credits to the producer at %s "
                     "failed: %s (the producer process exited or died)",
                     t->where, strerror(e));
      return;
    }
    t->out_off += (size_t)k;
  }
}

static void send_credit(tcp_channel *t) {
  pthread_mutex_lock(&t->out_lock);
  flush_out(t);
  pthread_mutex_unlock(&t->out_lock);
}

/* Credits go back in batches of a quarter of the ring while the consumer
 * keeps finding slots (one message per slot costs a system call each on
 * both ends), and all at once as soon as it runs dry (idle below), so the
 * producer never waits for a credit the consumer is sitting on. */
static void tcp_returned(sl_ring *r) {
  tcp_channel *t = T(r);
  uint64_t head = atomic_load_explicit(&t->ps.returned, memory_order_relaxed);
  if (head - atomic_load_explicit(&t->credit_sent, memory_order_relaxed) >=
          t->credit_batch ||
      atomic_load_explicit(&t->out_pending, memory_order_relaxed) ||
      atomic_load_explicit(&t->cs.closed_at, memory_order_relaxed) !=
          SL_RING_NOT_CLOSED)
    send_credit(t);
}

static void tcp_consumer_idle(sl_ring *r) {
  tcp_channel *t = T(r);
  if (atomic_load_explicit(&t->out_pending, memory_order_relaxed) ||
      atomic_load_explicit(&t->ps.returned, memory_order_relaxed) !=
          atomic_load_explicit(&t->credit_sent, memory_order_relaxed))
    send_credit(t);
}

/* Tell the peer, best effort: it may be the one that died. */
static void tcp_aborted(sl_ring *r) {
  tcp_channel *t = T(r);
  if (r->sides == SL_RING_PRODUCER) {
    tcp_kick(r); /* the sender ships the ABORT frame */
    return;
  }
  tcp_msg m = {M_ABORT, sl_ring_aborted(r), 0};
  pthread_mutex_lock(&t->out_lock);
  if (t->out_off == t->out_len) {
    memcpy(t->out, &m, sizeof m);
    t->out_len = sizeof m;
    t->out_off = 0;
  }
  flush_out(t);
  pthread_mutex_unlock(&t->out_lock);
}

/* The connection broke (rc from recv_exact) before the end of the stream,
 * between frames after rx slots, or in the middle of slot rx. */
static void lost_producer(tcp_channel *t, int rc, uint64_t rx, int mid) {
  char when[64];
  snprintf(when, sizeof when,
           mid ? "in the middle of slot %llu" : "after %llu slots",
           (unsigned long long)rx);
  sl_ring_fail(&t->ring, SL_EIO, 0,
               "tcp channel: lost the producer at %s (%s) %s, before the "
               "end of the stream: the producer process exited or died, see "
               "its error",
               t->where, rc < 0 ? strerror(-rc) : "it closed the connection",
               when);
}

/* The receiver thread: frames into the ring. */
static void *tcp_receiver(void *arg) {
  tcp_channel *t = arg;
  sl_ring *r = &t->ring;
  uint64_t rx = 0;
  uint32_t idx = 0;
  for (;;) {
    sl_channel_footer h;
    int rc = recv_exact(t->sock, &h, sizeof h);
    if (atomic_load(&t->stop) || sl_ring_aborted(r))
      break;
    if (rc != 0) {
      lost_producer(t, rc, rx, 0);
      break;
    }
    unsigned kind = ((unsigned char *)&h)[sizeof h - 1];
    if (kind == F_DATA && h.seq == rx && h.len <= r->base.payload_size &&
        !atomic_load_explicit(&sl_ring_footer(r, idx)->full,
                              memory_order_acquire)) {
      rc = h.len ? recv_exact(t->sock, sl_ring_slot(r, idx), h.len) : 0;
      if (rc != 0) {
        if (!atomic_load(&t->stop))
          lost_producer(t, rc, rx, 1);
        break;
      }
      sl_ring_land(sl_ring_footer(r, idx), &h);
      tcp_kick(r);
      rx++;
      idx = idx + 1 == r->base.credits ? 0 : idx + 1;
    } else if (kind == F_CLOSE && h.seq == rx) {
      atomic_store_explicit(&t->cs.closed_at, h.seq, memory_order_release);
      tcp_msg m = {M_CLOSED, 0, rx};
      pthread_mutex_lock(&t->out_lock);
      /* A credit in flight is finished first (messages do not interleave);
       * this one waits for room, bounded by the send timeout. */
      if (t->out_off != t->out_len)
        flush_out(t);
      if (t->out_off == t->out_len) {
        struct iovec iov = {&m, sizeof m};
        send_iov(t->sock, &iov, 1); /* the producer may already be gone */
      }
      pthread_mutex_unlock(&t->out_lock);
      break;
    } else if (kind == F_ABORT) {
      int code = -(int)h.flags;
      sl_ring_fail(r, code < 0 ? code : SL_EIO, 0,
                   "tcp channel: the producer at %s aborted the channel "
                   "(%s): its query stopped, see its error",
                   t->where, sl_error_kind(code < 0 ? code : SL_EIO));
      break;
    } else {
      sl_ring_fail(r, SL_EIO, 1,
                   "tcp channel: bad frame from the producer at %s (kind %u, "
                   "sequence %llu, expected %llu, length %u): the peer "
                   "broke the protocol",
                   t->where, kind, (unsigned long long)h.seq,
                   (unsigned long long)rx, h.len);
      break;
    }
  }
  atomic_store(&t->io_done, 1);
  tcp_kick(r); /* an end, a close or a break: the consumer must look */
  return NULL;
}

/* Consumer waits sleep on the eventfd the receiver kicks, so a landed slot
 * ends the nap at once (not after up to the back-off's 200 us).  Announce
 * the sleep, then look once more (the receiver lands, fences, then reads
 * `sleeping`). */
static void tcp_consumer_nap(void *arg, int64_t ns) {
  tcp_channel *t = arg;
  sl_ring *r = &t->ring;
  atomic_store(&t->sleeping, 1);
  atomic_thread_fence(memory_order_seq_cst);
  if (!atomic_load_explicit(&sl_ring_footer(r, r->cp.next)->full,
                            memory_order_acquire) &&
      !atomic_load(&t->io_done) && !sl_ring_aborted(r)) {
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    struct pollfd p = {t->wake, POLLIN, 0};
    ppoll(&p, 1, &ts, NULL);
  }
  atomic_store(&t->sleeping, 0);
  uint64_t v;
  if (read(t->wake, &v, sizeof v) < 0) {
    /* EAGAIN: nobody kicked; fine */
  }
}

/* ---------------- set-up and tear-down ---------------- */

static void tcp_free(tcp_channel *t) {
  if (t->sock >= 0)
    close(t->sock);
  if (t->wake >= 0)
    close(t->wake);
  pthread_mutex_destroy(&t->out_lock);
  free(t->mem);
  free(t);
}

/* Wait (bounded) for the I/O thread to finish on its own. */
static void wait_io_done(tcp_channel *t, int64_t deadline_ns) {
  while (!atomic_load(&t->io_done) &&
         (deadline_ns < 0 || sl_clock_ns() < deadline_ns)) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static void tcp_destroy(sl_ring *r) {
  tcp_channel *t = T(r);
  int64_t deadline = t->timeout_ns < 0 ? -1 : sl_clock_ns() + t->timeout_ns;
  if (t->io_started && r->sides == SL_RING_PRODUCER) {
    if (!r->pp.closed && !sl_ring_aborted(r))
      sl_ring_fail(r, SL_ECANCELLED, 1,
                   "tcp channel: the producer end was destroyed before the "
                   "stream was closed");
    if (sl_ring_aborted(r)) {
      /* Give the sender a moment to ship the ABORT frame. */
      tcp_kick(r);
      wait_io_done(t, sl_clock_ns() + 1000000000LL);
    } else {
      /* Flush: every slot and the CLOSE frame out, then wait for CLOSED so
       * that closing our socket (a reset, with credits unread) cannot race
       * the consumer's reading of the last bytes. */
      while (!atomic_load(&t->close_sent) && !sl_ring_aborted(r) &&
             (deadline < 0 || sl_clock_ns() < deadline)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
      while (!t->closed_acked && !t->peer_eof && !sl_ring_aborted(r)) {
        int ms =
            deadline < 0 ? 100 : (int)((deadline - sl_clock_ns()) / 1000000);
        if (ms <= 0)
          break;
        struct pollfd p = {t->sock, POLLIN, 0};
        poll(&p, 1, ms > 100 ? 100 : ms);
        tcp_refresh(r);
      }
    }
  }
  atomic_store(&t->stop, 1);
  if (t->io_started) {
    /* Unblocks a receiver in recv() or a sender in send(). */
    shutdown(t->sock, SHUT_RDWR);
    if (r->sides == SL_RING_PRODUCER)
      tcp_kick(r);
    pthread_join(t->io, NULL);
  }
  tcp_free(t);
}

static const sl_ring_hooks tcp_producer_hooks = {
    .refresh = tcp_refresh,
    .kick = tcp_kick,
    .aborted = tcp_aborted,
    .nap = tcp_producer_nap,
    .destroy = tcp_destroy,
};

static const sl_ring_hooks tcp_consumer_hooks = {
    .returned = tcp_returned,
    .aborted = tcp_aborted,
    .idle = tcp_consumer_idle,
    .nap = tcp_consumer_nap,
    .destroy = tcp_destroy,
};

/* Latency and liveness options; failures only cost performance (a unix
 * socketpair passed as the fd has none of them). */
static void tune_socket(int fd) {
  int one = 1, idle = 5, intvl = 1, cnt = 5;
  unsigned user_timeout = 10000; /* ms of unacknowledged data */
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout,
             sizeof user_timeout);
}

static int tcp_open_end(const sl_channel_endpoint *ep,
                        const sl_channel_config *cfg, sl_channel **out,
                        sl_error *err) {
  sl_channel_config c;
  int rc = sl_channel_check_shape(cfg, SL_CHANNEL_TCP_DEFAULT_CREDITS,
                                  SL_CHANNEL_TCP_DEFAULT_SLOT_SIZE, &c, err);
  if (rc != SL_OK)
    return sl_endpoint_refuse(ep, rc);
  size_t size =
      (sizeof(tcp_channel) + SL_CACHE_LINE - 1) / SL_CACHE_LINE * SL_CACHE_LINE;
  size_t ring_bytes = (size_t)c.credits * c.slot_size;
  tcp_channel *t = aligned_alloc(_Alignof(tcp_channel), size);
  unsigned char *mem = aligned_alloc(SL_CACHE_LINE, ring_bytes);
  if (!t || !mem) {
    free(t);
    free(mem);
    return sl_endpoint_refuse(
        ep, sl_error_set(err, SL_ENOMEM,
                         "out of memory for a tcp channel of %u x %u bytes",
                         c.credits, c.slot_size));
  }
  memset(t, 0, sizeof *t);
  memset(mem, 0, ring_bytes);
  t->mem = mem;
  t->sock = -1;
  t->wake = -1;
  t->timeout_ns = ep->timeout_ns == 0 ? 10LL * 1000000000 : ep->timeout_ns;
  pthread_mutex_init(&t->out_lock, NULL);
  t->credit_batch = c.credits / 4 ? c.credits / 4 : 1;
  int producer = ep->role == SL_CHANNEL_PRODUCER;
  sl_ring_init(&t->ring, &sl_channel_tcp, &c,
               producer ? SL_RING_PRODUCER : SL_RING_CONSUMER,
               producer ? &tcp_producer_hooks : &tcp_consumer_hooks);
  t->ring.slots = mem;
  t->ring.ps = &t->ps;
  t->ring.cs = &t->cs;
  sl_ring_init_shared(&t->ps, &t->cs);
  int64_t deadline = sl_endpoint_deadline(ep);
  rc = sl_endpoint_connect(ep, AF_INET, deadline, &t->sock, t->where,
                           sizeof t->where, err);
  sl_hello peer = {0};
  if (rc == SL_OK) {
    tune_socket(t->sock);
    rc = sl_endpoint_hello(t->sock, "tcp", ep->role, &c, -1, deadline, &peer,
                           NULL, t->where, err);
  }
  if (rc == SL_OK && (t->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
    rc = sl_error_set(err, SL_EIO, "tcp channel: eventfd failed: %s",
                      strerror(errno));
  if (rc == SL_OK) {
    int e =
        pthread_create(&t->io, NULL, producer ? tcp_sender : tcp_receiver, t);
    if (e != 0)
      rc = sl_error_set(err, SL_EIO,
                        "tcp channel: cannot start the I/O thread: %s",
                        strerror(e));
    else
      t->io_started = 1;
  }
  if (rc != SL_OK) {
    tcp_free(t);
    return rc;
  }
  snprintf(t->ring.peer, sizeof t->ring.peer, "the %s at %s (pid %d)",
           producer ? "consumer" : "producer", t->where, (int)peer.pid);
  *out = &t->ring.base;
  return SL_OK;
}

const sl_channel_transport sl_channel_tcp = {
    .name = "tcp",
    SL_RING_TRANSPORT_OPS,
    .open_end = tcp_open_end,
};
