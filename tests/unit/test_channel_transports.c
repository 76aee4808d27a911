/* test_channel_transports.c - the test-suite every channel transport must
 * pass: ONE set of tests run against local (producer and consumer threads
 * of this process), shm, tcp and verbs (producer and consumer in two
 * processes: fork, each opens its end with sl_channel_open_end; tcp over
 * 127.0.0.1 and an ephemeral port; verbs on the RDMA device's address, or
 * SLUICE_RDMA_ADDR, and SKIPPED without a device, or failed when
 * SLUICE_REQUIRE_VERBS=1; the verbs-only cases are test_channel_verbs.c).  FIFO
 * order with payload contents checked over thousands of slots, no overwrite
 * under a slow consumer, back-pressure at exactly c unread slots, tiny and
 * near-slot-size payloads, 16 channels at once, orderly close, abort from
 * either side, and a peer killed with SIGKILL mid-stream (the survivor must
 * fail with SL_EIO, never hang).
 *
 * Each test is a producer body and a consumer body that return 0 or the
 * failing line (a forked child cannot use cmocka's asserts); the harness
 * runs them on the two ends and asserts on both results.  Every wait is
 * bounded (GUARD_NS) and each pair run has an alarm() watchdog, so a bug
 * fails a test instead of hanging CI.  No test asserts on speed. */
/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel_helpers.h"
#include "sluice/net/channel.h"

#define WATCHDOG_S 180 /* a whole pair run; only stops hangs */
#define DEATH_BOUND_NS (5LL * 1000 * 1000 * 1000)

/* What a body sees of the other side: a pipe each way to sequence steps
 * ("the consumer has released one slot"), and the peer's pid when it is a
 * process (0 for a thread). */
typedef struct peer_link {
  int to_peer, from_peer;
  pid_t peer_pid;
  const char *transport;
} peer_link;

static int link_signal(peer_link *l, char c) {
  return write(l->to_peer, &c, 1) == 1 ? 0 : -1;
}

/* 0 when c arrived within GUARD_NS. */
static int link_wait(peer_link *l, char c) {
  struct pollfd p = {l->from_peer, POLLIN, 0};
  if (poll(&p, 1, (int)(GUARD_NS / 1000000)) != 1)
    return -1;
  char got;
  return read(l->from_peer, &got, 1) == 1 && got == c ? 0 : -1;
}

typedef int (*body_fn)(sl_channel **ch, int n, peer_link *l, const void *arg);

static void sleep_ns(long ns) {
  struct timespec ts = {ns / 1000000000, ns % 1000000000};
  nanosleep(&ts, NULL);
}

/* --- the harness --- */

enum { MAX_CH = 16 };

typedef struct pair_run {
  const char *transport;
  sl_channel_config cfg;
  int n; /* channels */
  body_fn prod, cons;
  const void *arg;
  int child_is_consumer; /* else the forked child is the producer */
  int child_killed;      /* the body kills the child: its status is moot */
  const void *prod_arg, *cons_arg; /* per side, instead of arg */
  /* The other rendezvous: shm through a listening socket on an abstract
   * unix name (accept / connect), tcp through sockets this test connects
   * itself and passes (VIA_FD). */
  int other_rendezvous;
} pair_run;

/* The argument of the body of `role`. */
static const void *arg_of(const pair_run *pr, sl_channel_role role) {
  const void *side = role == SL_CHANNEL_PRODUCER ? pr->prod_arg : pr->cons_arg;
  return side ? side : pr->arg;
}

/* Run the body of `role` on this process's ends. */
static int run_body(const pair_run *pr, sl_channel_role role, sl_channel **ch,
                    peer_link *l) {
  body_fn fn = role == SL_CHANNEL_PRODUCER ? pr->prod : pr->cons;
  return fn(ch, pr->n, l, arg_of(pr, role));
}

typedef struct thread_body {
  body_fn fn;
  sl_channel **ch;
  int n;
  peer_link l;
  const void *arg;
  int rc;
} thread_body;

static void *thread_main(void *arg) {
  thread_body *b = arg;
  b->rc = b->fn(b->ch, b->n, &b->l, b->arg);
  return NULL;
}

static void run_local(const pair_run *pr, int *prod_rc, int *cons_rc) {
  alarm(WATCHDOG_S);
  sl_channel *ch[MAX_CH];
  int a[2], b[2];
  assert_int_equal(pipe(a), 0);
  assert_int_equal(pipe(b), 0);
  for (int i = 0; i < pr->n; i++) {
    sl_error err = {0};
    int rc = sl_channel_open(&sl_channel_local, &pr->cfg, &ch[i], &err);
    if (rc)
      fprintf(stderr, "open: %s\n", err.message);
    assert_int_equal(rc, SL_OK);
  }
  thread_body p = {pr->prod,
                   ch,
                   pr->n,
                   {a[1], b[0], 0, "local"},
                   arg_of(pr, SL_CHANNEL_PRODUCER),
                   -1};
  thread_body c = {pr->cons,
                   ch,
                   pr->n,
                   {b[1], a[0], 0, "local"},
                   arg_of(pr, SL_CHANNEL_CONSUMER),
                   -1};
  pthread_t tp, tc;
  assert_int_equal(pthread_create(&tc, NULL, thread_main, &c), 0);
  assert_int_equal(pthread_create(&tp, NULL, thread_main, &p), 0);
  pthread_join(tp, NULL);
  pthread_join(tc, NULL);
  for (int i = 0; i < pr->n; i++)
    sl_channel_destroy(ch[i]);
  close(a[0]), close(a[1]), close(b[0]), close(b[1]);
  alarm(0);
  *prod_rc = p.rc;
  *cons_rc = c.rc;
}

/* A tcp socket connected to "127.0.0.1:port", or -1. */
static int connect_loopback(const char *addr) {
  const char *colon = strrchr(addr, ':');
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_port = htons((uint16_t)atoi(colon ? colon + 1 : "0"));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* --- verbs: where to listen, and whether there is a device --- */

/* The verbs cases need a device (channel_helpers.h). */
static void need_verbs(void **state) {
  if (strcmp(*state, "verbs") == 0)
    skip_without_verbs();
}

/* verbs: the consumer accepts, or the producer in the other rendezvous. */
static int verbs_accepts(const pair_run *pr, sl_channel_role role) {
  return (role == SL_CHANNEL_CONSUMER) == !pr->other_rendezvous;
}

enum { ADDR_LEN = 128 };

/* Open this process's n ends.  0 or the failing line.  verbs: the
 * accepting process makes one listener per channel (after the fork, in
 * itself: see channel.h) and sends each bound address over vpipe. */
static int open_ends(const pair_run *pr, sl_channel_role role, int sv[][2],
                     int lfd, const char *addr, sl_channel **ch,
                     const int vpipe[2]) {
  int shm = !strcmp(pr->transport, "shm");
  int verbs = !strcmp(pr->transport, "verbs");
  for (int i = 0; i < pr->n; i++) {
    sl_channel_endpoint ep = {.transport = pr->transport, .role = role};
    char vaddr[ADDR_LEN] = "";
    int vfd = -1;
    if (verbs && verbs_accepts(pr, role)) {
      char where[ADDR_LEN], why[256];
      CHECK(verbs_listen_address(where, sizeof where, why, sizeof why) == 0);
      sl_error err = {0};
      int rc =
          sl_channel_listen("verbs", where, &vfd, vaddr, sizeof vaddr, &err);
      if (rc != SL_OK)
        fprintf(stderr, "listen(verbs, %s): %s\n", where, err.message);
      sl_error_clear(&err);
      CHECK(rc == SL_OK);
      CHECK(write(vpipe[1], vaddr, sizeof vaddr) == (ssize_t)sizeof vaddr);
      ep.via = SL_CHANNEL_VIA_ACCEPT;
      ep.fd = vfd;
    } else if (verbs) {
      CHECK(read_exact(vpipe[0], vaddr, sizeof vaddr) == 0);
      ep.via = SL_CHANNEL_VIA_CONNECT;
      ep.address = vaddr;
    } else if (shm && !pr->other_rendezvous) {
      ep.via = SL_CHANNEL_VIA_FD;
      ep.fd = role == SL_CHANNEL_CONSUMER ? sv[i][0] : sv[i][1];
    } else if (!shm && pr->other_rendezvous) {
      ep.via = SL_CHANNEL_VIA_FD;
      ep.fd = role == SL_CHANNEL_CONSUMER ? accept(lfd, NULL, NULL)
                                          : connect_loopback(addr);
      CHECK(ep.fd >= 0);
    } else if (role == SL_CHANNEL_CONSUMER) {
      ep.via = SL_CHANNEL_VIA_ACCEPT;
      ep.fd = lfd;
    } else {
      ep.via = SL_CHANNEL_VIA_CONNECT;
      ep.address = addr;
    }
    sl_error err = {0};
    int rc = sl_channel_open_end(&ep, &pr->cfg, &ch[i], &err);
    if (vfd >= 0)
      close(vfd);
    if (rc != SL_OK) {
      fprintf(stderr, "open_end(%s, %s): %s\n", pr->transport,
              role == SL_CHANNEL_CONSUMER ? "consumer" : "producer",
              err.message);
      sl_error_clear(&err);
      return __LINE__;
    }
  }
  return 0;
}

/* The two ends in two processes (this one and a forked child).  0, or
 * the line of a set-up step that failed (no cmocka asserts here: verbs
 * runs this in a forked supervisor). */
static int run_forked(const pair_run *pr, int *prod_rc, int *cons_rc) {
  int sv[MAX_CH][2];
  int lfd = -1;
  char addr[ADDR_LEN] = "";
  int verbs = !strcmp(pr->transport, "verbs");
  /* shm normally: one socketpair per channel; else a listening socket
   * (verbs: listeners after the fork, see open_ends). */
  int shm = !strcmp(pr->transport, "shm") && !pr->other_rendezvous;
  for (int i = 0; shm && i < pr->n; i++)
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) == 0);
  if (!shm && !verbs) {
    sl_error err = {0};
    char name[64];
    snprintf(name, sizeof name, "@sluice-test-%d", (int)getpid());
    int rc = sl_channel_listen(
        pr->transport, strcmp(pr->transport, "shm") ? "127.0.0.1:0" : name,
        &lfd, addr, sizeof addr, &err);
    if (rc)
      fprintf(stderr, "listen: %s\n", err.message);
    sl_error_clear(&err);
    CHECK(rc == SL_OK);
  }
  int a[2], b[2];       /* a: parent -> child, b: child -> parent */
  int vp[2] = {-1, -1}; /* verbs: bound addresses, acceptor -> connector */
  CHECK(pipe(a) == 0);
  CHECK(pipe(b) == 0);
  CHECK(!verbs || pipe(vp) == 0);
  sl_channel_role child_role =
      pr->child_is_consumer ? SL_CHANNEL_CONSUMER : SL_CHANNEL_PRODUCER;
  sl_channel_role parent_role =
      pr->child_is_consumer ? SL_CHANNEL_PRODUCER : SL_CHANNEL_CONSUMER;
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    alarm(WATCHDOG_S);
    close(a[1]), close(b[0]);
    /* Keep only this side's socket of each pair, so that the parent's
     * death closes the wire. */
    for (int i = 0; shm && i < pr->n; i++)
      close(child_role == SL_CHANNEL_CONSUMER ? sv[i][1] : sv[i][0]);
    if (lfd >= 0 && child_role == SL_CHANNEL_PRODUCER)
      close(lfd);
    sl_channel *ch[MAX_CH] = {0};
    int rc = open_ends(pr, child_role, sv, lfd, addr, ch, vp);
    peer_link l = {b[1], a[0], getppid(), pr->transport};
    if (rc == 0)
      rc = run_body(pr, child_role, ch, &l);
    for (int i = 0; i < pr->n; i++)
      sl_channel_destroy(ch[i]);
    if (rc)
      fprintf(stderr, "(%s child, %s)\n",
              child_role == SL_CHANNEL_PRODUCER ? "producer" : "consumer",
              pr->transport);
    _exit(rc ? 1 : 0);
  }
  alarm(WATCHDOG_S);
  close(a[0]), close(b[1]);
  for (int i = 0; shm && i < pr->n; i++)
    close(parent_role == SL_CHANNEL_CONSUMER ? sv[i][1] : sv[i][0]);
  sl_channel *ch[MAX_CH] = {0};
  int rc = open_ends(pr, parent_role, sv, lfd, addr, ch, vp);
  peer_link l = {a[1], b[0], pid, pr->transport};
  if (rc == 0)
    rc = run_body(pr, parent_role, ch, &l);
  for (int i = 0; i < pr->n; i++)
    sl_channel_destroy(ch[i]);
  if (lfd >= 0)
    close(lfd);
  if (verbs)
    close(vp[0]), close(vp[1]);
  close(a[1]); /* a child waiting on the peer_link gives up */
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  alarm(0);
  close(b[0]);
  int child_rc = pr->child_killed                                ? 0
                 : WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0
                                                                 : -1;
  if (rc)
    fprintf(stderr, "(%s parent, %s)\n",
            parent_role == SL_CHANNEL_PRODUCER ? "producer" : "consumer",
            pr->transport);
  *prod_rc = parent_role == SL_CHANNEL_PRODUCER ? rc : child_rc;
  *cons_rc = parent_role == SL_CHANNEL_CONSUMER ? rc : child_rc;
  return 0;
}

/* verbs: run_forked in a forked supervisor, so that THIS process never
 * touches rdma_cm: librdmacm keeps device contexts open for the life of a
 * process, and a child forked from a process that used them cannot use
 * verbs (channel.h).  The supervisor reports the results over a pipe. */
static void run_isolated(const pair_run *pr, int *prod_rc, int *cons_rc) {
  int rp[2];
  assert_int_equal(pipe(rp), 0);
  fflush(NULL);
  pid_t s = fork();
  assert_true(s >= 0);
  if (s == 0) {
    close(rp[0]);
    int res[3] = {0, -1, -1};
    res[0] = run_forked(pr, &res[1], &res[2]);
    if (res[0])
      fprintf(stderr, "set-up failed at line %d\n", res[0]);
    _exit(write(rp[1], res, sizeof res) == (ssize_t)sizeof res ? 0 : 1);
  }
  close(rp[1]);
  int res[3] = {-1, -1, -1};
  ssize_t k;
  while ((k = read(rp[0], res, sizeof res)) < 0 && errno == EINTR)
    ;
  close(rp[0]);
  int status;
  while (waitpid(s, &status, 0) < 0 && errno == EINTR)
    ;
  assert_int_equal(k, (ssize_t)sizeof res);
  assert_int_equal(res[0], 0);
  *prod_rc = res[1];
  *cons_rc = res[2];
}

static void run_pair(const pair_run *pr) {
  int p = -1, c = -1;
  if (!strcmp(pr->transport, "local"))
    run_local(pr, &p, &c);
  else if (!strcmp(pr->transport, "verbs"))
    run_isolated(pr, &p, &c);
  else
    assert_int_equal(run_forked(pr, &p, &c), 0);
  assert_int_equal(p, 0);
  assert_int_equal(c, 0);
}

static pair_run pair(void **state, uint32_t credits, uint32_t slot, int n,
                     body_fn prod, body_fn cons, const void *arg) {
  need_verbs(state);
  pair_run pr = {*state, {credits, slot}, n, prod, cons, arg, 0, 0, NULL, NULL,
                 0};
  return pr;
}

/* --- streams: the producer sends n slots of len_for() lengths --- */

typedef struct stream_args {
  uint64_t n;
  int slow;      /* the consumer naps at random and re-checks its slot */
  int close_eos; /* end with a publish flagged EOS instead of close */
  uint64_t seed;
  const uint32_t *lens; /* if set: these lengths, in a cycle */
  int nlens;
  uint32_t want_credits, want_slot; /* if set: the shape both ends got */
} stream_args;

static uint32_t stream_len(const stream_args *a, uint64_t s, uint32_t payload,
                           uint64_t *st) {
  if (a->lens)
    return a->lens[s % (uint64_t)a->nlens];
  return len_for(s, payload, st);
}

/* Print why a channel broke (for a failing check's context). */
static void say_why(const sl_channel *ch) {
  sl_error err = {0};
  if (sl_channel_error(ch, &err) != SL_OK)
    fprintf(stderr, "  channel error: %s\n", err.message);
  sl_error_clear(&err);
}

/* Wait for credit; 0 or the error. */
static int get_slot(sl_channel *ch, void **p) {
  while (!(*p = sl_channel_acquire(ch))) {
    int rc = sl_channel_wait_credit(ch, GUARD_NS);
    if (rc != SL_OK) {
      say_why(ch);
      return rc ? rc : -100;
    }
  }
  return 0;
}

static int stream_producer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)l;
  const stream_args *a = arg;
  sl_channel *ch = chs[0];
  uint64_t st = a->seed;
  uint32_t payload = sl_channel_payload_size(ch);
  CHECK(!a->want_credits || sl_channel_credits(ch) == a->want_credits);
  CHECK(!a->want_slot || sl_channel_slot_size(ch) == a->want_slot);
  for (uint64_t s = 0; s < a->n; s++) {
    void *p;
    CHECK(get_slot(ch, &p) == 0);
    uint32_t len = stream_len(a, s, payload, &st);
    fill(p, s, len);
    sl_channel_header h = {(uint32_t)s, 0, (int64_t)s * 3};
    if (a->close_eos && s + 1 == a->n)
      h.flags |= SL_CHANNEL_F_EOS;
    CHECK(sl_channel_publish(ch, len, &h) == SL_OK);
  }
  if (!a->close_eos || a->n == 0)
    CHECK(sl_channel_close(ch) == SL_OK);
  sl_channel_stats stats;
  sl_channel_get_stats(ch, &stats);
  CHECK(stats.buffers == a->n);
  return 0;
}

static int stream_consumer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)l;
  const stream_args *a = arg;
  sl_channel *ch = chs[0];
  uint64_t st = a->seed ^ 0x9e3779b97f4a7c15ULL;
  uint64_t lst = a->seed; /* replays the producer's lengths */
  uint32_t payload = sl_channel_payload_size(ch);
  CHECK(!a->want_credits || sl_channel_credits(ch) == a->want_credits);
  CHECK(!a->want_slot || sl_channel_slot_size(ch) == a->want_slot);
  uint64_t got = 0;
  for (;;) {
    const sl_channel_slot *s = sl_channel_poll(ch);
    if (!s) {
      int rc = sl_channel_wait_slot(ch, GUARD_NS);
      if (rc == SL_OK)
        continue;
      if (rc != SL_CHANNEL_END)
        say_why(ch);
      CHECK(rc == SL_CHANNEL_END);
      break;
    }
    uint32_t len = stream_len(a, got, payload, &lst);
    CHECK(s->seq == got);
    CHECK(s->len == len);
    CHECK(s->hdr.rows == (uint32_t)got);
    CHECK(s->hdr.watermark == (int64_t)got * 3);
    CHECK(check(s->payload, got, s->len));
    if (a->slow) {
      uint64_t r = rnd(&st) % 64;
      if (r < 8)
        sched_yield();
      else if (r == 8)
        sleep_ns((long)(rnd(&st) % 200000));
      /* A producer writing into an unreleased slot would show here. */
      CHECK(check(s->payload, got, s->len));
      CHECK(s->seq == got);
    }
    CHECK(sl_channel_release(ch) == SL_OK);
    got++;
  }
  CHECK(got == a->n);
  CHECK(sl_channel_status(ch) == SL_CHANNEL_END);
  CHECK(sl_channel_poll(ch) == NULL);
  sl_channel_stats stats;
  sl_channel_get_stats(ch, &stats);
  CHECK(stats.received == a->n);
  return 0;
}

static void test_fifo_order(void **state) {
  stream_args a = {.n = 20000, .seed = 42};
  pair_run pr = pair(state, 8, 1024, 1, stream_producer, stream_consumer, &a);
  run_pair(&pr);
  /* The smallest slots, two credits: every hand-over is a wrap. */
  stream_args b = {.n = 5000, .seed = 5};
  pr = pair(state, 2, 128, 1, stream_producer, stream_consumer, &b);
  run_pair(&pr);
}

static void test_slow_consumer_no_overwrite(void **state) {
  stream_args a = {.n = 3000, .slow = 1, .seed = 7};
  pair_run pr = pair(state, 4, 512, 1, stream_producer, stream_consumer, &a);
  run_pair(&pr);
  /* One credit: the tightest ring, every slot reused at once. */
  stream_args b = {.n = 2000, .slow = 1, .seed = 9, .close_eos = 1};
  pr = pair(state, 1, 128, 1, stream_producer, stream_consumer, &b);
  run_pair(&pr);
}

static void test_tiny_and_large_payloads(void **state) {
  /* 1 MiB slots: payloads of 0, 1, 2 bytes and up to the whole slot. */
  const uint32_t big = sl_channel_payload_size_for(1 << 20);
  const uint32_t lens[] = {0, 1, big, 2, big - 1, 0, big - 4096, 1, 7, big};
  stream_args a = {.n = 60, .seed = 3, .lens = lens, .nlens = 10};
  pair_run pr =
      pair(state, 3, 1 << 20, 1, stream_producer, stream_consumer, &a);
  run_pair(&pr);
  const uint32_t small[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 95, 96};
  stream_args b = {
      .n = 500, .seed = 4, .lens = small, .nlens = 14, .close_eos = 1};
  pr = pair(state, 2, 128, 1, stream_producer, stream_consumer, &b);
  run_pair(&pr);
}

/* --- back-pressure: no credit exactly when c slots are unread --- */

enum { BP_C = 4, BP_LEN = 64 };

static int bp_producer(sl_channel **chs, int n, peer_link *l, const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(sl_channel_credits(ch) == BP_C);
  for (uint32_t i = 0; i < BP_C; i++) {
    void *p = sl_channel_acquire(ch);
    CHECK(p != NULL);
    CHECK((uintptr_t)p % 64 == 0);
    fill(p, i, BP_LEN);
    CHECK(sl_channel_publish(ch, BP_LEN, NULL) == SL_OK);
  }
  /* No credit: NULL, not a block, and nothing unread is touched. */
  CHECK(sl_channel_acquire(ch) == NULL);
  CHECK(sl_channel_acquire(ch) == NULL);
  CHECK(sl_channel_status(ch) == SL_OK);
  CHECK(sl_channel_wait_credit(ch, 1000000) == SL_CHANNEL_TIMEOUT);
  sl_channel_stats st;
  sl_channel_get_stats(ch, &st);
  CHECK(st.stalls == 1); /* one episode, however many tries */
  CHECK(st.buffers == BP_C);
  CHECK(st.bytes == BP_C * BP_LEN);
  CHECK(link_signal(l, 'A') == 0); /* the consumer may release one now */
  CHECK(sl_channel_wait_credit(ch, GUARD_NS) == SL_OK);
  void *p = sl_channel_acquire(ch);
  CHECK(p != NULL);
  fill(p, BP_C, BP_LEN);
  CHECK(sl_channel_publish(ch, BP_LEN, NULL) == SL_OK);
  CHECK(sl_channel_acquire(ch) == NULL); /* c unread again */
  CHECK(link_signal(l, 'B') == 0);
  CHECK(sl_channel_close(ch) == SL_OK);
  CHECK(link_wait(l, 'D') == 0);
  return 0;
}

static int bp_consumer(sl_channel **chs, int n, peer_link *l, const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(link_wait(l, 'A') == 0);
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_OK);
  const sl_channel_slot *s = sl_channel_poll(ch);
  CHECK(s != NULL);
  CHECK(s->seq == 0);
  CHECK(check(s->payload, 0, BP_LEN));
  CHECK(sl_channel_release(ch) == SL_OK);
  CHECK(link_wait(l, 'B') == 0); /* the producer is blocked again */
  /* The rest arrive intact and in order, then the end. */
  for (uint32_t i = 1; i <= BP_C; i++) {
    CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_OK);
    s = sl_channel_poll(ch);
    CHECK(s != NULL);
    CHECK(s->seq == i);
    CHECK(s->len == BP_LEN);
    CHECK(check(s->payload, i, BP_LEN));
    CHECK(sl_channel_release(ch) == SL_OK);
  }
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_CHANNEL_END);
  CHECK(link_signal(l, 'D') == 0);
  return 0;
}

/* The rendezvous the other tests do not use, with a plain stream. */
static void test_other_rendezvous(void **state) {
  if (!strcmp(*state, "local"))
    skip(); /* both ends from one sl_channel_open */
  /* With the transport's default shape (0 x 0).  verbs has no VIA_FD:
   * its other rendezvous is the producer accepting. */
  int shm = !strcmp(*state, "shm"), verbs = !strcmp(*state, "verbs");
  stream_args a = {.n = 3000,
                   .seed = 77,
                   .want_credits = shm     ? SL_CHANNEL_SHM_DEFAULT_CREDITS
                                   : verbs ? SL_CHANNEL_VERBS_DEFAULT_CREDITS
                                           : SL_CHANNEL_TCP_DEFAULT_CREDITS,
                   .want_slot = shm     ? SL_CHANNEL_SHM_DEFAULT_SLOT_SIZE
                                : verbs ? SL_CHANNEL_VERBS_DEFAULT_SLOT_SIZE
                                        : SL_CHANNEL_TCP_DEFAULT_SLOT_SIZE};
  pair_run pr = pair(state, 0, 0, 1, stream_producer, stream_consumer, &a);
  pr.other_rendezvous = 1;
  run_pair(&pr);
}

static void test_back_pressure(void **state) {
  pair_run pr = pair(state, BP_C, 256, 1, bp_producer, bp_consumer, NULL);
  run_pair(&pr);
}

/* --- many channels at once, driven by cooperative loops --- */

enum { MANY = 16, PER_CHANNEL = 1500 };

static int many_producer(sl_channel **ch, int n, peer_link *l,
                         const void *arg) {
  (void)l, (void)arg;
  uint64_t sent[MAX_CH] = {0};
  int done = 0;
  int64_t idle_ns = 0;
  while (done < n) {
    int progress = 0;
    for (int i = 0; i < n; i++) {
      if (sent[i] > PER_CHANNEL)
        continue;
      if (sent[i] == PER_CHANNEL) {
        CHECK(sl_channel_close(ch[i]) == SL_OK);
        sent[i]++;
        done++;
        continue;
      }
      void *p = sl_channel_acquire(ch[i]); /* no credit: serve others */
      if (!p) {
        CHECK(sl_channel_status(ch[i]) == SL_OK);
        continue;
      }
      uint32_t len = (uint32_t)(sent[i] % (sl_channel_payload_size(ch[i]) + 1));
      fill(p, sent[i] + (uint64_t)i * 1000003, len);
      sl_channel_header h = {(uint32_t)i, 0, (int64_t)sent[i]};
      CHECK(sl_channel_publish(ch[i], len, &h) == SL_OK);
      sent[i]++;
      progress = 1;
    }
    if (progress) {
      idle_ns = 0;
      continue;
    }
    idle_ns += 20000;
    CHECK(idle_ns < GUARD_NS);
    sleep_ns(20000);
  }
  return 0;
}

static int many_consumer(sl_channel **ch, int n, peer_link *l,
                         const void *arg) {
  (void)l, (void)arg;
  uint64_t got[MAX_CH] = {0};
  int ended[MAX_CH] = {0}, n_ended = 0;
  int64_t idle_ns = 0;
  while (n_ended < n) {
    int progress = 0;
    for (int i = 0; i < n; i++) {
      if (ended[i])
        continue;
      const sl_channel_slot *s = sl_channel_poll(ch[i]);
      if (!s) {
        int st = sl_channel_status(ch[i]);
        CHECK(st == SL_OK || st == SL_CHANNEL_END);
        if (st == SL_CHANNEL_END) {
          CHECK(got[i] == PER_CHANNEL);
          ended[i] = 1;
          n_ended++;
        }
        continue;
      }
      uint32_t len = (uint32_t)(got[i] % (sl_channel_payload_size(ch[i]) + 1));
      CHECK(s->seq == got[i]);
      CHECK(s->len == len);
      CHECK(s->hdr.rows == (uint32_t)i);
      CHECK(s->hdr.watermark == (int64_t)got[i]);
      CHECK(check(s->payload, got[i] + (uint64_t)i * 1000003, len));
      CHECK(sl_channel_release(ch[i]) == SL_OK);
      got[i]++;
      progress = 1;
    }
    if (progress) {
      idle_ns = 0;
      continue;
    }
    idle_ns += 20000;
    CHECK(idle_ns < GUARD_NS);
    sleep_ns(20000);
  }
  return 0;
}

static void test_many_channels(void **state) {
  pair_run pr = pair(state, 4, 256, MANY, many_producer, many_consumer, NULL);
  run_pair(&pr);
}

/* --- orderly close --- */

static int close_producer(sl_channel **chs, int n, peer_link *l,
                          const void *arg) {
  (void)n, (void)arg;
  /* Channel 0: closed with nothing sent. */
  CHECK(sl_channel_close(chs[0]) == SL_OK);
  CHECK(sl_channel_close(chs[0]) == SL_OK); /* idempotent */
  /* Channel 1: 3 slots, then an acquired slot dropped by the close. */
  sl_channel *ch = chs[1];
  for (int i = 0; i < 3; i++) {
    void *p = sl_channel_acquire(ch);
    CHECK(p != NULL);
    fill(p, (uint64_t)i, 8);
    CHECK(sl_channel_publish(ch, 8, NULL) == SL_OK);
  }
  CHECK(sl_channel_acquire(ch) != NULL);
  CHECK(sl_channel_close(ch) == SL_OK);
  CHECK(sl_channel_acquire(ch) == NULL);
  CHECK(sl_channel_publish(ch, 1, NULL) == SL_EINVAL);
  CHECK(sl_channel_wait_credit(ch, 0) == SL_EINVAL);
  /* Channel 2: the consumer is already waiting when the close comes. */
  CHECK(link_wait(l, 'W') == 0);
  sleep_ns(2000000);
  CHECK(sl_channel_close(chs[2]) == SL_OK);
  CHECK(link_wait(l, 'D') == 0);
  return 0;
}

static int close_consumer(sl_channel **chs, int n, peer_link *l,
                          const void *arg) {
  (void)n, (void)arg;
  CHECK(sl_channel_wait_slot(chs[0], GUARD_NS) == SL_CHANNEL_END);
  CHECK(sl_channel_poll(chs[0]) == NULL);
  CHECK(sl_channel_status(chs[0]) == SL_CHANNEL_END);
  sl_channel *ch = chs[1];
  for (uint64_t i = 0; i < 3; i++) {
    CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_OK);
    const sl_channel_slot *s = sl_channel_poll(ch);
    CHECK(s != NULL);
    CHECK(s->seq == i);
    CHECK(check(s->payload, i, 8));
    CHECK(sl_channel_release(ch) == SL_OK);
  }
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_CHANNEL_END);
  CHECK(sl_channel_poll(ch) == NULL);
  CHECK(sl_channel_status(ch) == SL_CHANNEL_END);
  CHECK(link_signal(l, 'W') == 0);
  CHECK(sl_channel_wait_slot(chs[2], GUARD_NS) == SL_CHANNEL_END);
  CHECK(link_signal(l, 'D') == 0);
  return 0;
}

static void test_orderly_close(void **state) {
  pair_run pr = pair(state, 4, 128, 3, close_producer, close_consumer, NULL);
  run_pair(&pr);
}

/* --- abort from either side --- */

static int abortp_producer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(sl_channel_acquire(ch) != NULL);
  CHECK(sl_channel_publish(ch, 4, NULL) == SL_OK);
  CHECK(link_wait(l, 'R') == 0); /* the consumer took it and waits */
  sleep_ns(2000000);
  sl_channel_abort(ch, SL_ECANCELLED);
  CHECK(sl_channel_acquire(ch) == NULL);
  CHECK(sl_channel_publish(ch, 0, NULL) == SL_ECANCELLED);
  CHECK(sl_channel_close(ch) == SL_ECANCELLED);
  CHECK(sl_channel_wait_credit(ch, GUARD_NS) == SL_ECANCELLED);
  CHECK(sl_channel_status(ch) == SL_ECANCELLED);
  sl_channel_abort(ch, SL_EINTERNAL); /* the first abort wins */
  CHECK(sl_channel_status(ch) == SL_ECANCELLED);
  CHECK(link_wait(l, 'X') == 0); /* keep our end until the peer has seen it */
  return 0;
}

static int abortp_consumer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_OK);
  CHECK(sl_channel_poll(ch) != NULL);
  CHECK(sl_channel_release(ch) == SL_OK);
  CHECK(link_signal(l, 'R') == 0);
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_ECANCELLED);
  CHECK(sl_channel_poll(ch) == NULL);
  CHECK(sl_channel_release(ch) == SL_ECANCELLED);
  CHECK(sl_channel_status(ch) == SL_ECANCELLED);
  sl_error err = {0};
  CHECK(sl_channel_error(ch, &err) == SL_ECANCELLED);
  CHECK(err.message != NULL);
  sl_error_clear(&err);
  CHECK(link_signal(l, 'X') == 0);
  return 0;
}

static void test_abort_by_producer(void **state) {
  pair_run pr = pair(state, 2, 128, 1, abortp_producer, abortp_consumer, NULL);
  run_pair(&pr);
}

static int abortc_producer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(sl_channel_acquire(ch) != NULL);
  CHECK(sl_channel_publish(ch, 4, NULL) == SL_OK);
  CHECK(link_signal(l, 'P') == 0);
  /* No credit: wait, until the consumer gives up. */
  CHECK(sl_channel_wait_credit(ch, GUARD_NS) == SL_EIO);
  CHECK(sl_channel_acquire(ch) == NULL);
  CHECK(sl_channel_status(ch) == SL_EIO);
  CHECK(link_signal(l, 'X') == 0);
  return 0;
}

static int abortc_consumer(sl_channel **chs, int n, peer_link *l,
                           const void *arg) {
  (void)n, (void)arg;
  sl_channel *ch = chs[0];
  CHECK(link_wait(l, 'P') == 0);
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_OK);
  sleep_ns(2000000);
  sl_channel_abort(ch, 0); /* not an error code: becomes SL_EIO */
  CHECK(sl_channel_poll(ch) == NULL);
  CHECK(sl_channel_wait_slot(ch, GUARD_NS) == SL_EIO);
  CHECK(sl_channel_status(ch) == SL_EIO);
  CHECK(link_wait(l, 'X') == 0);
  return 0;
}

static void test_abort_by_consumer(void **state) {
  pair_run pr = pair(state, 1, 128, 1, abortc_producer, abortc_consumer, NULL);
  run_pair(&pr);
}

/* --- an abort in the middle of a running stream --- */

/* Both sides stream without end; the side whose arg is 1 aborts with
 * SL_ECANCELLED after 1000 slots.  Both must then stop with exactly that
 * code (not SL_EIO: the abort travels, the connection does not just
 * break), and each keeps its end until the other has seen it. */
static int stopped_by_abort(int rc, peer_link *l) {
  CHECK(rc == SL_ECANCELLED);
  CHECK(link_signal(l, 'X') == 0);
  CHECK(link_wait(l, 'X') == 0);
  return 0;
}

static int abort_mid_producer(sl_channel **chs, int n, peer_link *l,
                              const void *arg) {
  (void)n;
  int aborts = *(const int *)arg;
  sl_channel *ch = chs[0];
  uint32_t payload = sl_channel_payload_size(ch);
  for (uint64_t s = 0;; s++) {
    if (aborts && s == 1000)
      sl_channel_abort(ch, SL_ECANCELLED);
    void *p;
    while (!(p = sl_channel_acquire(ch))) {
      int rc = sl_channel_wait_credit(ch, GUARD_NS);
      if (rc != SL_OK)
        return stopped_by_abort(rc, l);
    }
    uint32_t len = (uint32_t)(s % (payload + 1));
    fill(p, s, len);
    int rc = sl_channel_publish(ch, len, NULL);
    if (rc != SL_OK)
      return stopped_by_abort(rc, l);
  }
}

static int abort_mid_consumer(sl_channel **chs, int n, peer_link *l,
                              const void *arg) {
  (void)n;
  int aborts = *(const int *)arg;
  sl_channel *ch = chs[0];
  uint32_t payload = sl_channel_payload_size(ch);
  for (uint64_t got = 0;; got++) {
    if (aborts && got == 1000)
      sl_channel_abort(ch, SL_ECANCELLED);
    const sl_channel_slot *s;
    while (!(s = sl_channel_poll(ch))) {
      int rc = sl_channel_wait_slot(ch, GUARD_NS);
      if (rc != SL_OK)
        return stopped_by_abort(rc, l);
    }
    CHECK(s->seq == got);
    CHECK(check(s->payload, got, (uint32_t)(got % (payload + 1))));
    int rc = sl_channel_release(ch);
    if (rc != SL_OK)
      return stopped_by_abort(rc, l);
  }
}

static void test_abort_mid_stream(void **state) {
  static const int yes = 1, no = 0;
  pair_run pr =
      pair(state, 8, 2048, 1, abort_mid_producer, abort_mid_consumer, NULL);
  pr.prod_arg = &yes;
  pr.cons_arg = &no;
  run_pair(&pr);
  pr.prod_arg = &no;
  pr.cons_arg = &yes;
  run_pair(&pr);
}

/* --- a peer killed mid-stream --- */

/* Both bodies stream without end.  The side whose arg is 1 (the parent)
 * kills the other (the child) with SIGKILL after 300 slots and must then
 * fail with SL_EIO naming the dead peer, within DEATH_BOUND_NS of each
 * wait (not a timeout, not a hang); the killed side's result is moot. */

/* Expect the break: rc is SL_EIO and the message names `who`. */
/* killed: when the peer was killed (0 = not yet).  The time to notice is
 * printed, not asserted: the bound is the waits' DEATH_BOUND_NS. */
static int expect_death(sl_channel *ch, int rc, int64_t killed, const char *who,
                        peer_link *l) {
  CHECK(killed); /* only the kill ends these streams */
  CHECK(rc == SL_EIO);
  CHECK(sl_channel_status(ch) == SL_EIO);
  sl_error err = {0};
  CHECK(sl_channel_error(ch, &err) == SL_EIO);
  CHECK(err.message && strstr(err.message, who));
  fprintf(stderr, "  (%s, noticed %.1f ms after the kill: %s)\n", l->transport,
          (double)(now_ns() - killed) / 1e6, err.message);
  sl_error_clear(&err);
  return 0;
}

static int death_producer(sl_channel **chs, int n, peer_link *l,
                          const void *arg) {
  (void)n;
  int killer = *(const int *)arg;
  int64_t killed = 0;
  sl_channel *ch = chs[0];
  uint32_t payload = sl_channel_payload_size(ch);
  for (uint64_t s = 0;; s++) {
    if (killer && s == 300) {
      CHECK(link_wait(l, 'S') == 0); /* the consumer is mid-stream */
      CHECK(kill(l->peer_pid, SIGKILL) == 0);
      killed = now_ns();
    }
    void *p;
    while (!(p = sl_channel_acquire(ch))) {
      int rc = sl_channel_wait_credit(ch, DEATH_BOUND_NS);
      if (rc != SL_OK)
        return expect_death(ch, rc, killed, "consumer", l);
    }
    uint32_t len = (uint32_t)(s % (payload + 1));
    fill(p, s, len);
    int rc = sl_channel_publish(ch, len, NULL);
    if (rc != SL_OK)
      return expect_death(ch, rc, killed, "consumer", l);
  }
}

static int death_consumer(sl_channel **chs, int n, peer_link *l,
                          const void *arg) {
  (void)n;
  int killer = *(const int *)arg;
  int64_t killed = 0;
  sl_channel *ch = chs[0];
  uint32_t payload = sl_channel_payload_size(ch);
  for (uint64_t got = 0;; got++) {
    if (killer && got == 300) {
      CHECK(kill(l->peer_pid, SIGKILL) == 0);
      killed = now_ns(); /* what is in flight may arrive, then the break */
    }
    const sl_channel_slot *s;
    while (!(s = sl_channel_poll(ch))) {
      int rc = sl_channel_wait_slot(ch, DEATH_BOUND_NS);
      if (rc != SL_OK)
        return expect_death(ch, rc, killed, "producer", l);
    }
    CHECK(s->seq == got);
    CHECK(s->len == (uint32_t)(got % (payload + 1)));
    CHECK(check(s->payload, got, s->len));
    CHECK(sl_channel_release(ch) == SL_OK);
    if (!killer && got == 200)
      CHECK(link_signal(l, 'S') == 0);
  }
}

static void test_peer_killed(void **state) {
  if (!strcmp(*state, "local"))
    skip(); /* one process: there is no peer to kill */
  static const int kills = 1, killed = 0;
  /* The producer dies: the consumer's wait fails. */
  pair_run pr = pair(state, 4, 4096, 1, death_producer, death_consumer, NULL);
  pr.child_killed = 1;
  pr.prod_arg = &killed;
  pr.cons_arg = &kills;
  run_pair(&pr);
  /* The consumer dies: the producer's wait for credit fails. */
  pr.child_is_consumer = 1;
  pr.prod_arg = &kills;
  pr.cons_arg = &killed;
  run_pair(&pr);
}

/* --- the endpoint API itself (transport-independent) --- */

static void test_endpoint_errors(void **state) {
  (void)state;
  sl_channel *ch = NULL;
  sl_error err = {0};
  sl_channel_endpoint ep = {.transport = "local",
                            .role = SL_CHANNEL_PRODUCER,
                            .via = SL_CHANNEL_VIA_CONNECT,
                            .address = "x"};
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EINVAL);
  assert_null(ch);
  assert_non_null(strstr(err.message, "sl_channel_open"));
  ep.transport = "carrier-pigeon";
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "carrier-pigeon"));
  assert_int_equal(sl_channel_open(&sl_channel_shm, NULL, &ch, &err),
                   SL_EINVAL);
  assert_null(ch);
  assert_ptr_equal(sl_channel_transport_find("tcp"), &sl_channel_tcp);
  assert_ptr_equal(sl_channel_transport_find("verbs"), &sl_channel_verbs);
  assert_null(sl_channel_transport_find("rdma"));

  /* verbs ends meet through rdma_cm only: a passed socket is refused,
   * saying so, and closed like any passed descriptor. */
  int vsv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, vsv), 0);
  ep = (sl_channel_endpoint){.transport = "verbs",
                             .role = SL_CHANNEL_CONSUMER,
                             .via = SL_CHANNEL_VIA_FD,
                             .fd = vsv[0]};
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EINVAL);
  assert_null(ch);
  assert_non_null(strstr(err.message, "verbs"));
  assert_non_null(strstr(err.message, "rdma_cm"));
  char vc;
  assert_int_equal(recv(vsv[1], &vc, 1, MSG_DONTWAIT), 0); /* closed */
  close(vsv[1]);

  /* Nobody listens: a bounded wait, then an error naming the address. */
  int lfd;
  char addr[128];
  assert_int_equal(
      sl_channel_listen("tcp", "127.0.0.1:0", &lfd, addr, sizeof addr, &err),
      SL_OK);
  close(lfd); /* the port is free again: connects are refused */
  ep = (sl_channel_endpoint){.transport = "tcp",
                             .role = SL_CHANNEL_PRODUCER,
                             .via = SL_CHANNEL_VIA_CONNECT,
                             .address = addr,
                             .timeout_ns = 100 * 1000 * 1000};
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EIO);
  assert_null(ch);
  assert_non_null(strstr(err.message, addr));
  ep.address = "no-port-here";
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EINVAL);

  /* A bad shape is refused before any rendezvous; a passed fd is closed. */
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  sl_channel_config bad = {3, 100};
  ep = (sl_channel_endpoint){.transport = "shm",
                             .role = SL_CHANNEL_CONSUMER,
                             .via = SL_CHANNEL_VIA_FD,
                             .fd = sv[0]};
  assert_int_equal(sl_channel_open_end(&ep, &bad, &ch, &err), SL_EINVAL);
  char c;
  assert_int_equal(recv(sv[1], &c, 1, MSG_DONTWAIT), 0); /* EOF: closed */
  close(sv[1]);

  /* A peer that hangs up during the rendezvous is an error, not a hang. */
  const char *trs[] = {"shm", "tcp"};
  for (int t = 0; t < 2; t++)
    for (int role = SL_CHANNEL_PRODUCER; role <= SL_CHANNEL_CONSUMER; role++) {
      assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
      close(sv[1]);
      ep = (sl_channel_endpoint){.transport = trs[t],
                                 .role = (sl_channel_role)role,
                                 .via = SL_CHANNEL_VIA_FD,
                                 .fd = sv[0]};
      assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EIO);
      assert_null(ch);
      assert_non_null(err.message);
    }

  /* Two ends that disagree on the shape both fail, saying so. */
  for (int t = 0; t < 2; t++) {
    int lfd2 = -1;
    char a2[128] = "";
    if (t == 0)
      assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    else
      assert_int_equal(
          sl_channel_listen("tcp", "127.0.0.1:0", &lfd2, a2, sizeof a2, &err),
          SL_OK);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      alarm(30);
      sl_channel_endpoint pe = {.transport = trs[t],
                                .role = SL_CHANNEL_PRODUCER};
      if (t == 0) {
        close(sv[0]);
        pe.via = SL_CHANNEL_VIA_FD;
        pe.fd = sv[1];
      } else {
        close(lfd2);
        pe.via = SL_CHANNEL_VIA_CONNECT;
        pe.address = a2;
      }
      sl_channel_config other = {4, 4096};
      sl_channel *pc = NULL;
      sl_error e2 = {0};
      int rc = sl_channel_open_end(&pe, &other, &pc, &e2);
      _exit(rc == SL_EINVAL && strstr(e2.message, "shape") ? 0 : 1);
    }
    alarm(60);
    sl_channel_endpoint ce = {.transport = trs[t], .role = SL_CHANNEL_CONSUMER};
    if (t == 0) {
      close(sv[1]);
      ce.via = SL_CHANNEL_VIA_FD;
      ce.fd = sv[0];
    } else {
      ce.via = SL_CHANNEL_VIA_ACCEPT;
      ce.fd = lfd2;
    }
    sl_channel_config mine = {8, 4096};
    int rc = sl_channel_open_end(&ce, &mine, &ch, &err);
    assert_int_equal(rc, SL_EINVAL);
    assert_non_null(strstr(err.message, "shape"));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    alarm(0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (lfd2 >= 0)
      close(lfd2);
  }
  sl_error_clear(&err);
}

/* The same cases for every transport; the state is the transport's name. */
#define TRANSPORT_TESTS(name)                                                  \
  cmocka_unit_test_prestate(test_fifo_order, (void *)name),                    \
      cmocka_unit_test_prestate(test_slow_consumer_no_overwrite,               \
                                (void *)name),                                 \
      cmocka_unit_test_prestate(test_tiny_and_large_payloads, (void *)name),   \
      cmocka_unit_test_prestate(test_back_pressure, (void *)name),             \
      cmocka_unit_test_prestate(test_many_channels, (void *)name),             \
      cmocka_unit_test_prestate(test_orderly_close, (void *)name),             \
      cmocka_unit_test_prestate(test_abort_by_producer, (void *)name),         \
      cmocka_unit_test_prestate(test_abort_by_consumer, (void *)name),         \
      cmocka_unit_test_prestate(test_abort_mid_stream, (void *)name),          \
      cmocka_unit_test_prestate(test_peer_killed, (void *)name),               \
      cmocka_unit_test_prestate(test_other_rendezvous, (void *)name)

int main(void) {
  /* SIGPIPE keeps its default: a send to a dead peer must be an error
   * return, never a signal, without help from the program. */
  const struct CMUnitTest local[] = {TRANSPORT_TESTS("local")};
  const struct CMUnitTest shm[] = {TRANSPORT_TESTS("shm")};
  const struct CMUnitTest tcp[] = {TRANSPORT_TESTS("tcp")};
  const struct CMUnitTest verbs[] = {TRANSPORT_TESTS("verbs")};
  const struct CMUnitTest api[] = {cmocka_unit_test(test_endpoint_errors)};
  int failed = cmocka_run_group_tests_name("local", local, NULL, NULL);
  failed += cmocka_run_group_tests_name("shm", shm, NULL, NULL);
  failed += cmocka_run_group_tests_name("tcp", tcp, NULL, NULL);
  /* Without an RDMA device every verbs test reports SKIPPED (with
   * SLUICE_REQUIRE_VERBS=1 it fails instead). */
  char addr[128], why[256] = "";
  if (verbs_listen_address(addr, sizeof addr, why, sizeof why) == 0)
    printf("[ VERBS    ] listening on %s\n", addr);
  else
    printf("[ VERBS    ] %s: the verbs group is SKIPPED\n", why);
  failed += cmocka_run_group_tests_name("verbs", verbs, NULL, NULL);
  failed += cmocka_run_group_tests_name("endpoint", api, NULL, NULL);
  return failed;
}
