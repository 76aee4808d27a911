/* test_channel.c - the in-process channel (net/channel_local.c) against
 * the protocol of channel.h, under real threads: FIFO order over millions
 * of slots, no overwrite under a slow consumer, back-pressure, tiny and
 * full payloads, many channels at once, orderly close, and abort from
 * either side.  Every wait is bounded (GUARD_NS), so a broken channel fails
 * a test instead of hanging it; no test asserts on speed.  These are the
 * in-process details (millions of slots, misuse, the shape check); the
 * suite every transport passes, with the ends in two processes for shm and
 * tcp, is test_channel_transports.c. */
/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "channel_helpers.h"
#include "sluice/net/channel.h"

static sl_channel *open_ok(uint32_t c, uint32_t m) {
  sl_channel *ch = NULL;
  sl_error err = {0};
  int rc = sl_channel_open_local(c, m, &ch, &err);
  if (rc != SL_OK)
    fprintf(stderr, "open: %s\n", err.message);
  assert_int_equal(rc, SL_OK);
  assert_non_null(ch);
  return ch;
}

/* --- one producer thread, one consumer thread --- */

typedef struct stream {
  sl_channel *ch;
  uint64_t n;
  int slow;      /* consumer yields/sleeps at random and re-reads slots */
  int close_eos; /* end with a publish flagged EOS instead of close */
  uint64_t seed;
  int prod_err; /* first failure, 0 = none */
  int cons_err;
  uint64_t got;
  int end_rc;
} stream;

static void *producer_main(void *arg) {
  stream *t = arg;
  uint64_t st = t->seed;
  uint32_t payload = sl_channel_payload_size(t->ch);
  for (uint64_t s = 0; s < t->n; s++) {
    void *p;
    while (!(p = sl_channel_acquire(t->ch))) {
      int rc = sl_channel_wait_credit(t->ch, GUARD_NS);
      if (rc != SL_OK) {
        t->prod_err = rc ? rc : -100;
        return NULL;
      }
    }
    uint32_t len = len_for(s, payload, &st);
    fill(p, s, len);
    sl_channel_header h = {(uint32_t)s, 0, (int64_t)s * 3};
    if (t->close_eos && s + 1 == t->n)
      h.flags |= SL_CHANNEL_F_EOS;
    int rc = sl_channel_publish(t->ch, len, &h);
    if (rc != SL_OK) {
      t->prod_err = rc;
      return NULL;
    }
  }
  if (!t->close_eos || t->n == 0) {
    int rc = sl_channel_close(t->ch);
    if (rc != SL_OK)
      t->prod_err = rc;
  }
  return NULL;
}

static void *consumer_main(void *arg) {
  stream *t = arg;
  uint64_t st = t->seed ^ 0x9e3779b97f4a7c15ULL;
  uint64_t lst = t->seed; /* replays the producer's lengths */
  uint32_t payload = sl_channel_payload_size(t->ch);
  for (;;) {
    const sl_channel_slot *s = sl_channel_poll(t->ch);
    if (!s) {
      int rc = sl_channel_wait_slot(t->ch, GUARD_NS);
      if (rc == SL_OK)
        continue;
      t->end_rc = rc;
      return NULL;
    }
    uint64_t want = t->got;
    uint32_t len = len_for(want, payload, &lst);
    if (s->seq != want || s->len != len || s->hdr.rows != (uint32_t)want ||
        s->hdr.watermark != (int64_t)want * 3 ||
        !check(s->payload, want, s->len)) {
      t->cons_err = 1;
      return NULL;
    }
    if (t->slow) {
      uint64_t r = rnd(&st) % 64;
      if (r < 8)
        sched_yield();
      else if (r == 8) {
        struct timespec ts = {0, (long)(rnd(&st) % 50000)};
        nanosleep(&ts, NULL);
      }
      /* If the producer wrote into an unreleased slot, this sees it. */
      if (!check(s->payload, want, s->len)) {
        t->cons_err = 2;
        return NULL;
      }
    }
    int rc = sl_channel_release(t->ch);
    if (rc != SL_OK) { /* an abort while the slot was being read */
      t->end_rc = rc;
      return NULL;
    }
    t->got++;
  }
}

static void run_stream(stream *t) {
  pthread_t p, c;
  assert_int_equal(pthread_create(&c, NULL, consumer_main, t), 0);
  assert_int_equal(pthread_create(&p, NULL, producer_main, t), 0);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  assert_int_equal(t->prod_err, 0);
  assert_int_equal(t->cons_err, 0);
  assert_int_equal(t->end_rc, SL_CHANNEL_END);
  assert_int_equal(t->got, t->n);
  assert_int_equal(sl_channel_status(t->ch), SL_CHANNEL_END);
  sl_channel_stats stats;
  sl_channel_get_stats(t->ch, &stats);
  assert_int_equal(stats.buffers, t->n);
  assert_int_equal(stats.received, t->n);
}

static void test_fifo_millions(void **state) {
  (void)state;
  sl_channel *ch = open_ok(8, 128);
  stream t = {.ch = ch, .n = 2000000, .seed = 42};
  run_stream(&t);
  sl_channel_destroy(ch);
}

static void test_slow_consumer_no_overwrite(void **state) {
  (void)state;
  sl_channel *ch = open_ok(4, 512);
  stream t = {.ch = ch, .n = 30000, .slow = 1, .seed = 7};
  run_stream(&t);
  sl_channel_destroy(ch);
  /* One credit: the tightest ring, every slot reused at once. */
  ch = open_ok(1, 128);
  stream t1 = {.ch = ch, .n = 20000, .slow = 1, .seed = 9, .close_eos = 1};
  run_stream(&t1);
  sl_channel_destroy(ch);
}

static void test_eos_flag_and_large_slots(void **state) {
  (void)state;
  sl_channel *ch = open_ok(3, 1 << 20);
  stream t = {.ch = ch, .n = 300, .seed = 3, .close_eos = 1};
  run_stream(&t);
  sl_channel_destroy(ch);
}

/* --- single-threaded protocol details --- */

static void test_shape_and_config(void **state) {
  (void)state;
  sl_channel *ch = open_ok(0, 0);
  assert_int_equal(sl_channel_credits(ch), SL_CHANNEL_DEFAULT_CREDITS);
  assert_int_equal(sl_channel_slot_size(ch), 65536);
  assert_int_equal(sl_channel_payload_size(ch), 65536 - 32);
  assert_string_equal(sl_channel_transport_name(ch), "local");
  void *p = sl_channel_acquire(ch);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 64, 0);
  sl_channel_destroy(ch);
  sl_channel_destroy(NULL);

  const uint32_t bad[][2] = {
      {1, 64}, {1, 100}, {1, 130}, {70000, 128}, {1, 1u << 31}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sl_error err = {0};
    ch = (sl_channel *)&err; /* must be reset to NULL */
    assert_int_equal(sl_channel_open_local(bad[i][0], bad[i][1], &ch, &err),
                     SL_EINVAL);
    assert_null(ch);
    assert_non_null(err.message);
    sl_error_clear(&err);
  }
}

static void test_tiny_and_full_payloads(void **state) {
  (void)state;
  sl_channel *ch = open_ok(2, 256);
  uint32_t payload = sl_channel_payload_size(ch);
  uint32_t lens[20];
  int n = 0;
  for (uint32_t l = 0; l <= 16; l++)
    lens[n++] = l;
  lens[n++] = payload - 1;
  lens[n++] = payload;
  for (int i = 0; i < n; i++) {
    void *p = sl_channel_acquire(ch);
    assert_non_null(p);
    fill(p, (uint64_t)i, lens[i]);
    sl_channel_header h = {.rows = lens[i], .watermark = -i};
    assert_int_equal(sl_channel_publish(ch, lens[i], &h), SL_OK);
    const sl_channel_slot *s = sl_channel_poll(ch);
    assert_non_null(s);
    assert_int_equal(s->len, lens[i]);
    assert_int_equal(s->hdr.rows, lens[i]);
    assert_int_equal(s->hdr.watermark, -i);
    assert_int_equal(s->seq, (uint64_t)i);
    assert_true(check(s->payload, (uint64_t)i, s->len));
    assert_int_equal(sl_channel_release(ch), SL_OK);
  }
  /* One byte too many is refused and the slot stays acquired. */
  assert_non_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_publish(ch, payload + 1, NULL), SL_EINVAL);
  assert_int_equal(sl_channel_publish(ch, 0, NULL), SL_OK);
  const sl_channel_slot *s = sl_channel_poll(ch);
  assert_non_null(s);
  assert_int_equal(s->len, 0);
  assert_int_equal(s->hdr.rows, 0);
  sl_channel_destroy(ch);
}

static void test_misuse(void **state) {
  (void)state;
  sl_channel *ch = open_ok(2, 128);
  assert_int_equal(sl_channel_publish(ch, 0, NULL), SL_EINVAL);
  assert_int_equal(sl_channel_release(ch), SL_EINVAL);
  void *a = sl_channel_acquire(ch);
  assert_ptr_equal(sl_channel_acquire(ch), a); /* same slot until publish */
  assert_int_equal(sl_channel_publish(ch, 1, NULL), SL_OK);
  const sl_channel_slot *s = sl_channel_poll(ch);
  assert_non_null(s);
  assert_ptr_equal(sl_channel_poll(ch), s); /* same slot until release */
  assert_int_equal(sl_channel_release(ch), SL_OK);
  assert_null(sl_channel_poll(ch));
  assert_int_equal(sl_channel_status(ch), SL_OK);
  sl_channel_destroy(ch);
}

typedef struct waiter {
  sl_channel *ch;
  int rc;
} waiter;

static void *wait_credit_main(void *arg) {
  waiter *w = arg;
  w->rc = sl_channel_wait_credit(w->ch, GUARD_NS);
  return NULL;
}

static void *wait_slot_main(void *arg) {
  waiter *w = arg;
  w->rc = sl_channel_wait_slot(w->ch, GUARD_NS);
  return NULL;
}

static void test_back_pressure(void **state) {
  (void)state;
  const uint32_t c = 4;
  sl_channel *ch = open_ok(c, 128);
  for (uint32_t i = 0; i < c; i++) {
    void *p = sl_channel_acquire(ch);
    assert_non_null(p);
    fill(p, i, 64);
    assert_int_equal(sl_channel_publish(ch, 64, NULL), SL_OK);
  }
  /* No credit: NULL, not a block, and nothing unread is touched. */
  assert_null(sl_channel_acquire(ch));
  assert_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_status(ch), SL_OK);
  assert_int_equal(sl_channel_wait_credit(ch, 1000000), SL_CHANNEL_TIMEOUT);
  sl_channel_stats st;
  sl_channel_get_stats(ch, &st);
  assert_int_equal(st.stalls, 1); /* one episode, however many tries */
  assert_int_equal(st.buffers, c);
  assert_int_equal(st.bytes, 64 * c);

  /* A producer thread waiting for credit resumes after one release. */
  waiter w = {ch, -1000};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_credit_main, &w), 0);
  const sl_channel_slot *s = sl_channel_poll(ch);
  assert_non_null(s);
  assert_true(check(s->payload, 0, 64));
  assert_int_equal(sl_channel_release(ch), SL_OK);
  pthread_join(th, NULL);
  assert_int_equal(w.rc, SL_OK);
  void *p = sl_channel_acquire(ch);
  assert_non_null(p);
  fill(p, c, 64);
  assert_int_equal(sl_channel_publish(ch, 64, NULL), SL_OK);
  assert_null(sl_channel_acquire(ch));
  /* The rest arrive intact and in order. */
  for (uint32_t i = 1; i <= c; i++) {
    s = sl_channel_poll(ch);
    assert_non_null(s);
    assert_int_equal(s->seq, i);
    assert_true(check(s->payload, i, 64));
    assert_int_equal(sl_channel_release(ch), SL_OK);
  }
  assert_null(sl_channel_poll(ch));
  assert_int_equal(sl_channel_wait_slot(ch, 1000000), SL_CHANNEL_TIMEOUT);
  sl_channel_get_stats(ch, &st);
  assert_int_equal(st.stalls, 2);
  assert_int_equal(st.received, c + 1);
  sl_channel_destroy(ch);
}

static void test_orderly_close(void **state) {
  (void)state;
  /* Close with nothing sent. */
  sl_channel *ch = open_ok(2, 128);
  assert_int_equal(sl_channel_close(ch), SL_OK);
  assert_int_equal(sl_channel_close(ch), SL_OK); /* idempotent */
  assert_null(sl_channel_poll(ch));
  assert_int_equal(sl_channel_status(ch), SL_CHANNEL_END);
  assert_int_equal(sl_channel_wait_slot(ch, GUARD_NS), SL_CHANNEL_END);
  sl_channel_destroy(ch);

  /* Slots published before close are all delivered first; an acquired but
   * unpublished slot is dropped; nothing can be sent after close. */
  ch = open_ok(4, 128);
  for (int i = 0; i < 3; i++) {
    assert_non_null(sl_channel_acquire(ch));
    assert_int_equal(sl_channel_publish(ch, 8, NULL), SL_OK);
  }
  assert_non_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_close(ch), SL_OK);
  assert_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_publish(ch, 1, NULL), SL_EINVAL);
  assert_int_equal(sl_channel_wait_credit(ch, 0), SL_EINVAL);
  for (uint64_t i = 0; i < 3; i++) {
    assert_int_equal(sl_channel_status(ch), SL_OK);
    assert_int_equal(sl_channel_wait_slot(ch, GUARD_NS), SL_OK);
    const sl_channel_slot *s = sl_channel_poll(ch);
    assert_non_null(s);
    assert_int_equal(s->seq, i);
    assert_int_equal(sl_channel_release(ch), SL_OK);
  }
  assert_null(sl_channel_poll(ch));
  assert_int_equal(sl_channel_status(ch), SL_CHANNEL_END);
  assert_null(sl_channel_poll(ch));
  sl_channel_destroy(ch);

  /* A consumer blocked in wait_slot wakes up with END. */
  ch = open_ok(2, 128);
  waiter w = {ch, -1000};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_slot_main, &w), 0);
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  assert_int_equal(sl_channel_close(ch), SL_OK);
  pthread_join(th, NULL);
  assert_int_equal(w.rc, SL_CHANNEL_END);
  sl_channel_destroy(ch);
}

static void test_abort_by_producer(void **state) {
  (void)state;
  sl_channel *ch = open_ok(2, 128);
  /* A published but unread slot is discarded by the abort. */
  assert_non_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_publish(ch, 4, NULL), SL_OK);
  const sl_channel_slot *s = sl_channel_poll(ch);
  assert_non_null(s);
  assert_int_equal(sl_channel_release(ch), SL_OK);

  waiter w = {ch, -1000};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_slot_main, &w), 0);
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  sl_channel_abort(ch, SL_ECANCELLED);
  pthread_join(th, NULL);
  assert_int_equal(w.rc, SL_ECANCELLED);
  assert_null(sl_channel_poll(ch));
  assert_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_publish(ch, 0, NULL), SL_ECANCELLED);
  assert_int_equal(sl_channel_release(ch), SL_ECANCELLED);
  assert_int_equal(sl_channel_close(ch), SL_ECANCELLED);
  assert_int_equal(sl_channel_status(ch), SL_ECANCELLED);
  sl_channel_abort(ch, SL_EINTERNAL); /* the first abort wins */
  assert_int_equal(sl_channel_status(ch), SL_ECANCELLED);
  sl_channel_destroy(ch);
}

static void test_abort_by_consumer(void **state) {
  (void)state;
  sl_channel *ch = open_ok(1, 128);
  assert_non_null(sl_channel_acquire(ch));
  assert_int_equal(sl_channel_publish(ch, 4, NULL), SL_OK);
  /* The producer has no credit and waits; the consumer gives up. */
  waiter w = {ch, -1000};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, wait_credit_main, &w), 0);
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  sl_channel_abort(ch, 0); /* not an error code: becomes SL_EIO */
  pthread_join(th, NULL);
  assert_int_equal(w.rc, SL_EIO);
  assert_null(sl_channel_acquire(ch));
  assert_null(sl_channel_poll(ch));
  assert_int_equal(sl_channel_wait_slot(ch, GUARD_NS), SL_EIO);
  assert_int_equal(sl_channel_status(ch), SL_EIO);
  sl_channel_destroy(ch);
}

/* A stream aborted mid-way from either side: the other side stops with the
 * error, whatever it was doing. */
static void test_abort_mid_stream(void **state) {
  (void)state;
  for (int side = 0; side < 2; side++) {
    sl_channel *ch = open_ok(4, 256);
    stream t = {.ch = ch, .n = UINT64_MAX, .seed = 11, .slow = side};
    pthread_t p, c;
    assert_int_equal(pthread_create(&c, NULL, consumer_main, &t), 0);
    assert_int_equal(pthread_create(&p, NULL, producer_main, &t), 0);
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    sl_channel_abort(ch, SL_EIO);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    assert_int_equal(t.prod_err, SL_EIO);
    assert_int_equal(t.cons_err, 0);
    assert_int_equal(t.end_rc, SL_EIO);
    sl_channel_destroy(ch);
  }
}

/* --- many channels: N workers all-to-all, each both producer and consumer,
 * driven by a cooperative loop as the runtime's scheduler will be --- */

enum { NW = 4, PER_CHANNEL = 20000 };

typedef struct mesh {
  sl_channel *ch[NW][NW]; /* ch[from][to] */
  int err[NW];
} mesh;

typedef struct mesh_worker {
  mesh *m;
  int id;
} mesh_worker;

static void *mesh_main(void *arg) {
  mesh_worker *w = arg;
  mesh *m = w->m;
  uint64_t sent[NW] = {0}, got[NW] = {0};
  int closed[NW] = {0}, ended[NW] = {0}, n_ended = 0, n_closed = 0;
  int64_t idle_since = 0;
  while (n_ended < NW || n_closed < NW) {
    int progress = 0;
    for (int to = 0; to < NW; to++) {
      sl_channel *ch = m->ch[w->id][to];
      if (closed[to])
        continue;
      if (sent[to] == PER_CHANNEL) {
        if (sl_channel_close(ch) != SL_OK)
          return m->err[w->id] = 1, NULL;
        closed[to] = 1;
        n_closed++;
        continue;
      }
      void *p = sl_channel_acquire(ch); /* no credit: serve others */
      if (!p)
        continue;
      uint32_t len = (uint32_t)(sent[to] % (sl_channel_payload_size(ch) + 1));
      fill(p, sent[to] + (uint64_t)w->id * 1000003, len);
      sl_channel_header h = {(uint32_t)w->id, 0, (int64_t)sent[to]};
      if (sl_channel_publish(ch, len, &h) != SL_OK)
        return m->err[w->id] = 2, NULL;
      sent[to]++;
      progress = 1;
    }
    for (int from = 0; from < NW; from++) {
      sl_channel *ch = m->ch[from][w->id];
      if (ended[from])
        continue;
      const sl_channel_slot *s = sl_channel_poll(ch);
      if (!s) {
        int st = sl_channel_status(ch);
        if (st == SL_CHANNEL_END) {
          if (got[from] != PER_CHANNEL)
            return m->err[w->id] = 3, NULL;
          ended[from] = 1;
          n_ended++;
        } else if (st != SL_OK)
          return m->err[w->id] = 4, NULL;
        continue;
      }
      uint32_t len = (uint32_t)(got[from] % (sl_channel_payload_size(ch) + 1));
      if (s->seq != got[from] || s->len != len ||
          s->hdr.rows != (uint32_t)from ||
          s->hdr.watermark != (int64_t)got[from] ||
          !check(s->payload, got[from] + (uint64_t)from * 1000003, len))
        return m->err[w->id] = 5, NULL;
      if (sl_channel_release(ch) != SL_OK)
        return m->err[w->id] = 6, NULL;
      got[from]++;
      progress = 1;
    }
    if (progress) {
      idle_since = 0;
      continue;
    }
    /* A hang guard, not a time assertion: no progress for GUARD_NS. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (idle_since == 0)
      idle_since = now;
    else if (now - idle_since > GUARD_NS)
      return m->err[w->id] = 7, NULL;
    sched_yield();
  }
  return NULL;
}

static void test_all_to_all(void **state) {
  (void)state;
  mesh m = {0};
  for (int i = 0; i < NW; i++)
    for (int j = 0; j < NW; j++)
      m.ch[i][j] = open_ok(4, 256);
  pthread_t th[NW];
  mesh_worker w[NW];
  for (int i = 0; i < NW; i++) {
    w[i] = (mesh_worker){&m, i};
    assert_int_equal(pthread_create(&th[i], NULL, mesh_main, &w[i]), 0);
  }
  for (int i = 0; i < NW; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < NW; i++)
    assert_int_equal(m.err[i], 0);
  for (int i = 0; i < NW; i++)
    for (int j = 0; j < NW; j++) {
      sl_channel_stats st;
      sl_channel_get_stats(m.ch[i][j], &st);
      assert_int_equal(st.buffers, PER_CHANNEL);
      assert_int_equal(st.received, PER_CHANNEL);
      assert_int_equal(sl_channel_status(m.ch[i][j]), SL_CHANNEL_END);
      sl_channel_destroy(m.ch[i][j]);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape_and_config),
      cmocka_unit_test(test_tiny_and_full_payloads),
      cmocka_unit_test(test_misuse),
      cmocka_unit_test(test_back_pressure),
      cmocka_unit_test(test_orderly_close),
      cmocka_unit_test(test_abort_by_producer),
      cmocka_unit_test(test_abort_by_consumer),
      cmocka_unit_test(test_abort_mid_stream),
      cmocka_unit_test(test_fifo_millions),
      cmocka_unit_test(test_slow_consumer_no_overwrite),
      cmocka_unit_test(test_eos_flag_and_large_slots),
      cmocka_unit_test(test_all_to_all),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
