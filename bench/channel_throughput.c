/* channel_throughput.c - bytes per second through channels.
 *
 * Default: one in-process channel.  One producer thread memcpy's a payload
 * (from a 64 MiB source pool, so it is not cache-hot) into each slot it
 * acquires; one consumer thread reads every word of each slot (a checksum)
 * and releases it.  Slot sizes 4 KiB .. 1 MiB (powers of 4), 8 credits,
 * GB/s = payload bytes / second, median of 5 runs, next to one thread doing
 * the same memcpy (pool -> a ring of the same shape) and the same memcpy +
 * checksum with no channel in between.
 *
 * --transports: local vs shm vs tcp (vs verbs) side by side, the same producer
 * and consumer work, for slot sizes 4 KiB, 64 KiB, 256 KiB, 1 MiB and 2, 8, 32
 * credits.  local runs producer and consumer as two threads of this
 * process; shm and tcp as two processes (fork: the child produces, this
 * process consumes and times from its open to the end of the stream; tcp
 * over 127.0.0.1).  GB/s (median, and min-max) and slots/s (median) of
 * the runs, the runs of one shape interleaved across transports so that a
 * burst of load from elsewhere hits all three.  With them, in every
 * round, the bound for tcp: one process send()s the same bytes in 1 MiB
 * writes over a loopback TCP connection (TCP_NODELAY) and another recv()s
 * them into a buffer without touching them: what the kernel's loopback
 * moves, which no tcp channel can beat; "% of bound" = tcp GB/s / the
 * bound's median.
 *
 * verbs joins the table when an RDMA device is present (both ends in
 * forked children, the consumer listening on the device's address or
 * SLUICE_RDMA_ADDR).  --verbs-one measures one verbs channel moving
 * untouched payloads, for comparison with ib_write_bw at the same size
 * (perftest's MB/s: 2^20 bytes per second).
 *
 *   build/bench/channel_throughput [MiB per run, default 1024]
 *   build/bench/channel_throughput --transports [MiB per run, 256] [runs, 5]
 *   build/bench/channel_throughput --verbs-one SLOT [MiB, 1024] [credits]
 *                                  [runs, 5]
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sluice/common/clock.h"
#include "sluice/net/channel.h"

enum { RUNS = 5, CREDITS = 8 };
#define POOL_BYTES ((size_t)64 << 20)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t checksum(const void *p, size_t len) {
  const uint64_t *w = p;
  uint64_t s = 0;
  for (size_t i = 0; i < len / 8; i++)
    s += w[i];
  return s;
}

typedef struct run {
  sl_channel *ch;
  const unsigned char *pool;
  uint64_t slots;
  uint32_t len;
  uint64_t sum;
  int err;
  int untouched; /* --verbs-one: move bytes, do not write or read them */
} run;

static void *producer(void *arg) {
  run *r = arg;
  size_t off = 0;
  for (uint64_t i = 0; i < r->slots; i++) {
    void *p;
    while (!(p = sl_channel_acquire(r->ch)))
      if (sl_channel_wait_credit(r->ch, -1) != SL_OK) {
        r->err = 1;
        return NULL;
      }
    if (!r->untouched)
      memcpy(p, r->pool + off, r->len);
    off = off + 2 * (size_t)r->len > POOL_BYTES ? 0 : off + r->len;
    sl_channel_header h = {1, 0, (int64_t)i};
    if (sl_channel_publish(r->ch, r->len, &h) != SL_OK) {
      r->err = 1;
      return NULL;
    }
  }
  sl_channel_close(r->ch);
  return NULL;
}

static void *consumer(void *arg) {
  run *r = arg;
  uint64_t sum = 0, n = 0;
  for (;;) {
    const sl_channel_slot *s = sl_channel_poll(r->ch);
    if (!s) {
      int rc = sl_channel_wait_slot(r->ch, -1);
      if (rc == SL_OK)
        continue;
      if (rc != SL_CHANNEL_END)
        r->err = 1;
      break;
    }
    if (!r->untouched)
      sum += checksum(s->payload, s->len);
    sl_channel_release(r->ch);
    n++;
  }
  if (n != r->slots)
    r->err = 1;
  r->sum = sum;
  return NULL;
}

static void report(const char *what, sl_error *err) {
  fprintf(stderr, "channel_throughput: %s: %s\n", what,
          err->message ? err->message : "?");
  sl_error_clear(err);
}

/* Seconds to move `slots` slots of `len` bytes through a local channel
 * (two threads); < 0 on failure.  *stalls (if not NULL): no-credit
 * episodes of the producer. */
static double run_local(const unsigned char *pool, sl_channel_config cfg,
                        uint64_t slots, uint32_t len, uint64_t *sink,
                        uint64_t *stalls) {
  sl_error err = {0};
  run w = {0};
  if (sl_channel_open(&sl_channel_local, &cfg, &w.ch, &err) != SL_OK) {
    report("local open", &err);
    return -1;
  }
  w.pool = pool;
  w.slots = slots;
  w.len = len;
  pthread_t p, c;
  double t0 = sl_clock_seconds();
  pthread_create(&c, NULL, consumer, &w);
  pthread_create(&p, NULL, producer, &w);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  double dt = sl_clock_seconds() - t0;
  sl_channel_stats st;
  sl_channel_get_stats(w.ch, &st);
  if (stalls)
    *stalls = st.stalls;
  sl_channel_destroy(w.ch);
  *sink += w.sum;
  return w.err ? -1 : dt;
}

/* GB/s through a local channel of slot_size bytes and CREDITS credits,
 * moving `total` payload bytes. */
static double channel_run(const unsigned char *pool, uint32_t slot_size,
                          size_t total, uint64_t *stalls, uint64_t *sink) {
  sl_channel_config cfg = {CREDITS, slot_size};
  uint32_t len = sl_channel_payload_size_for(slot_size) & ~7u;
  uint64_t slots = total / len;
  double dt = run_local(pool, cfg, slots, len, sink, stalls);
  if (dt <= 0) {
    fprintf(stderr, "channel_throughput: channel error\n");
    return 0;
  }
  return (double)slots * len / dt / 1e9;
}

/* One thread: the producer's memcpy into a ring of the same shape, with
 * (check = 1) or without the consumer's checksum. */
static double memcpy_run(const unsigned char *pool, unsigned char *ring,
                         uint32_t slot_size, size_t total, int check,
                         uint64_t *sink) {
  uint32_t len = (slot_size - 32) & ~7u;
  uint64_t slots = total / len, sum = 0;
  size_t off = 0;
  double t0 = sl_clock_seconds();
  for (uint64_t i = 0; i < slots; i++) {
    unsigned char *dst = ring + (i % CREDITS) * (size_t)slot_size;
    memcpy(dst, pool + off, len);
    off = off + 2 * (size_t)len > POOL_BYTES ? 0 : off + len;
    if (check)
      sum += checksum(dst, len);
  }
  double dt = sl_clock_seconds() - t0;
  *sink += sum;
  return (double)slots * len / dt / 1e9;
}

/* --- --transports --- */

enum { MAX_RUNS = 15 };

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return v[n / 2];
}

static double run_forked(const char *transport, const unsigned char *pool,
                         sl_channel_config cfg, uint64_t slots, uint32_t len,
                         uint64_t *sink) {
  sl_error err = {0};
  int sv[2] = {-1, -1}, lfd = -1;
  char addr[128] = "";
  int shm = !strcmp(transport, "shm");
  if (shm ? socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0
          : sl_channel_listen("tcp", "127.0.0.1:0", &lfd, addr, sizeof addr,
                              &err) != SL_OK) {
    report("rendezvous", &err);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    sl_channel_endpoint ep = {.transport = transport,
                              .role = SL_CHANNEL_PRODUCER};
    if (shm) {
      close(sv[0]);
      ep.via = SL_CHANNEL_VIA_FD;
      ep.fd = sv[1];
    } else {
      close(lfd);
      ep.via = SL_CHANNEL_VIA_CONNECT;
      ep.address = addr;
    }
    run w = {.pool = pool, .slots = slots, .len = len};
    if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK) {
      report("producer open", &err);
      _exit(1);
    }
    producer(&w);
    sl_channel_destroy(w.ch);
    _exit(w.err);
  }
  sl_channel_endpoint ep = {.transport = transport,
                            .role = SL_CHANNEL_CONSUMER};
  if (shm) {
    close(sv[1]);
    ep.via = SL_CHANNEL_VIA_FD;
    ep.fd = sv[0];
  } else {
    ep.via = SL_CHANNEL_VIA_ACCEPT;
    ep.fd = lfd;
  }
  run w = {.slots = slots, .len = len};
  double dt = -1;
  if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK)
    report("consumer open", &err);
  else {
    double t0 = sl_clock_seconds();
    consumer(&w);
    dt = sl_clock_seconds() - t0;
    sl_channel_destroy(w.ch);
  }
  if (lfd >= 0)
    close(lfd);
  int status = 0;
  waitpid(pid, &status, 0);
  *sink += w.sum;
  if (w.err || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return dt;
}

/* Where a verbs consumer listens: SLUICE_RDMA_ADDR, else the probed
 * device's address, port 0.  0, or -1 (why in err). */
static int verbs_address(char *buf, size_t n, sl_error *err) {
  const char *env = getenv("SLUICE_RDMA_ADDR");
  if (env && *env) {
    snprintf(buf, n, strchr(env, ':') ? "%s" : "%s:0", env);
    return 0;
  }
  sl_verbs_device d;
  if (sl_channel_verbs_probe(&d, err) != SL_OK)
    return -1;
  snprintf(buf, n, "%s:0", d.address);
  return 0;
}

/* verbs: both ends in forked children, so that this process never uses
 * rdma_cm (a process that did must not fork verbs users: channel.h).  The
 * consumer listens, passes its address to the producer over a pipe, and
 * reports its time and checksum over another. */
static double run_verbs(const unsigned char *pool, sl_channel_config cfg,
                        uint64_t slots, uint32_t len, int untouched,
                        uint64_t *sink) {
  char where[128];
  sl_error err = {0};
  if (verbs_address(where, sizeof where, &err) != 0) {
    report("verbs", &err);
    return -1;
  }
  int ap[2], rp[2];
  if (pipe(ap) != 0 || pipe(rp) != 0)
    return -1;
  fflush(NULL);
  pid_t prod = fork();
  if (prod == 0) {
    char addr[128];
    close(ap[1]);
    if (read(ap[0], addr, sizeof addr) != (ssize_t)sizeof addr)
      _exit(1);
    sl_channel_endpoint ep = {.transport = "verbs",
                              .role = SL_CHANNEL_PRODUCER,
                              .via = SL_CHANNEL_VIA_CONNECT,
                              .address = addr};
    run w = {.pool = pool, .slots = slots, .len = len, .untouched = untouched};
    if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK) {
      report("verbs producer open", &err);
      _exit(1);
    }
    producer(&w);
    sl_channel_destroy(w.ch);
    _exit(w.err);
  }
  pid_t cons = fork();
  if (cons == 0) {
    close(ap[0]);
    struct {
      double dt;
      uint64_t sum;
    } res = {-1, 0};
    char addr[128] = "";
    int lfd = -1;
    run w = {.slots = slots, .len = len, .untouched = untouched};
    if (sl_channel_listen("verbs", where, &lfd, addr, sizeof addr, &err) !=
        SL_OK) {
      report("verbs listen", &err);
      _exit(1);
    }
    if (write(ap[1], addr, sizeof addr) != (ssize_t)sizeof addr)
      _exit(1);
    sl_channel_endpoint ep = {.transport = "verbs",
                              .role = SL_CHANNEL_CONSUMER,
                              .via = SL_CHANNEL_VIA_ACCEPT,
                              .fd = lfd};
    if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK)
      report("verbs consumer open", &err);
    else {
      double t0 = sl_clock_seconds();
      consumer(&w);
      res.dt = w.err ? -1 : sl_clock_seconds() - t0;
      res.sum = w.sum;
      sl_channel_destroy(w.ch);
    }
    close(lfd);
    _exit(write(rp[1], &res, sizeof res) == (ssize_t)sizeof res ? 0 : 1);
  }
  close(ap[0]), close(ap[1]), close(rp[1]);
  struct {
    double dt;
    uint64_t sum;
  } res = {-1, 0};
  if (read(rp[0], &res, sizeof res) != (ssize_t)sizeof res)
    res.dt = -1;
  close(rp[0]);
  int sp = 0, sc = 0;
  waitpid(prod, &sp, 0);
  waitpid(cons, &sc, 0);
  *sink += res.sum;
  if (!WIFEXITED(sp) || WEXITSTATUS(sp) != 0 || !WIFEXITED(sc) ||
      WEXITSTATUS(sc) != 0)
    return -1;
  return res.dt;
}

/* --verbs-one SLOT [MiB] [credits] [runs]: one verbs channel of SLOT-byte
 * slots moving full payloads that nobody writes or reads, as ib_write_bw
 * moves a buffer: the number to hold against `ib_write_bw -s SLOT`.
 * MB/s is perftest's unit (its "MB/sec" is 2^20 bytes per second);
 * payload bytes only (SLOT - 32 per slot). */
static int verbs_one_main(int argc, char **argv) {
  uint32_t slot = argc > 0 ? (uint32_t)atol(argv[0]) : 65536;
  size_t total = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
  uint32_t credits = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  if (runs < 1 || runs > MAX_RUNS || total == 0 || slot < 128) {
    fprintf(stderr,
            "usage: channel_throughput --verbs-one SLOT [MiB] "
            "[credits, 0 = default] [runs 1..%d]\n",
            MAX_RUNS);
    return 2;
  }
  sl_channel_config cfg = {credits, slot};
  uint32_t len = sl_channel_payload_size_for(slot);
  uint64_t slots = total / len, sink = 0;
  double mbs[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    double dt = run_verbs(NULL, cfg, slots, len, 1, &sink);
    if (dt <= 0) {
      fprintf(stderr, "channel_throughput: verbs run failed\n");
      return 1;
    }
    mbs[i] = (double)slots * len / dt / (1 << 20);
    printf("run %d: %.2f MB/s\n", i + 1, mbs[i]);
  }
  printf("verbs %u B: %.2f MB/s (median of %d, %u credits, 2^20 B/MB as "
         "perftest)\n",
         slot, median(mbs, runs), runs,
         credits ? credits : (uint32_t)SL_CHANNEL_VERBS_DEFAULT_CREDITS);
  return 0;
}

static int transports_main(int argc, char **argv) {
  size_t total = (size_t)(argc > 0 ? atoi(argv[0]) : 256) << 20;
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  if (runs < 1 || runs > MAX_RUNS || total == 0) {
    fprintf(
        stderr,
        "usage: channel_throughput --transports [MiB per run] [runs 1..%d]\n",
        MAX_RUNS);
    return 2;
  }
  unsigned char *pool = malloc(POOL_BYTES);
  if (!pool) {
    fprintf(stderr, "channel_throughput: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < POOL_BYTES; i++)
    pool[i] = (unsigned char)(i * 131 + (i >> 12));
  uint64_t sink = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf("channel transports, %zu MiB per run, median (min-max) of %d runs, "
         "%ld CPUs\n",
         total >> 20, runs, cpus);

  /* The bound is measured in every round of every row, next to the
   * channels, so that "% of bound" compares runs under the same load. */
  /* verbs joins when there is a device (same work, same processes). */
  char vaddr[128];
  sl_error verr = {0};
  int nt = verbs_address(vaddr, sizeof vaddr, &verr) == 0 ? 4 : 3;
  if (nt == 3)
    printf("(no verbs column: %s)\n", verr.message ? verr.message : "?");
  sl_error_clear(&verr);
  printf("| slot | credits | local GB/s | shm GB/s | tcp GB/s |%s loopback "
         "bound GB/s | tcp %% of bound | local slots/s | shm slots/s | tcp "
         "slots/s |%s\n",
         nt == 4 ? " verbs GB/s |" : "", nt == 4 ? " verbs slots/s |" : "");
  printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |%s\n",
         nt == 4 ? " --- | --- |" : "");
  const char *names[4] = {"local", "shm", "tcp", "verbs"};
  const uint32_t slot_sizes[] = {4096, 64 << 10, 256 << 10, 1 << 20};
  const uint32_t credit_counts[] = {2, 8, 32};
  int failed = 0;
  for (int si = 0; si < 4; si++)
    for (int ci = 0; ci < 3; ci++) {
      sl_channel_config cfg = {credit_counts[ci], slot_sizes[si]};
      uint32_t len = sl_channel_payload_size_for(cfg.slot_size) & ~7u;
      uint64_t slots = total / len;
      double gbs[4][MAX_RUNS], sps[4][MAX_RUNS], bound[MAX_RUNS];
      for (int i = 0; i < runs; i++) {
        for (int t = 0; t < nt; t++) {
          double dt = t == 0 ? run_local(pool, cfg, slots, len, &sink, NULL)
                      : t == 3
                          ? run_verbs(pool, cfg, slots, len, 0, &sink)
                          : run_forked(names[t], pool, cfg, slots, len, &sink);
          if (dt <= 0) {
            fprintf(stderr, "channel_throughput: %s %u x %u failed\n", names[t],
                    cfg.credits, cfg.slot_size);
            failed = 1;
            dt = 1e9;
          }
          gbs[t][i] = (double)slots * len / dt / 1e9;
          sps[t][i] = (double)slots / dt;
        }
        double dt = bench_loopback_tcp_seconds(pool, POOL_BYTES,
                                               (size_t)slots * len, 1 << 20);
        bound[i] = dt > 0 ? (double)slots * len / dt / 1e9 : 0;
      }
      /* GB/s cells: median (min-max); median() leaves v sorted. */
      double s[4], b = median(bound, runs);
      char g[4][48];
      for (int t = 0; t < nt; t++) {
        double m = median(gbs[t], runs);
        snprintf(g[t], sizeof g[t], "%.2f (%.2f-%.2f)", m, gbs[t][0],
                 gbs[t][runs - 1]);
        s[t] = median(sps[t], runs);
      }
      char vg[64] = "", vs[32] = "";
      if (nt == 4) {
        snprintf(vg, sizeof vg, " %s |", g[3]);
        snprintf(vs, sizeof vs, " %.0f |", s[3]);
      }
      printf("| %u KiB | %u | %s | %s | %s |%s %.2f | %.0f%% | %.0f | "
             "%.0f | %.0f |%s\n",
             cfg.slot_size >> 10, cfg.credits, g[0], g[1], g[2], vg, b,
             b > 0 ? 100 * atof(g[2]) / b : 0, s[0], s[1], s[2], vs);
      fflush(stdout);
    }
  fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sink);
  free(pool);
  return failed;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--transports") == 0)
    return transports_main(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "--verbs-one") == 0)
    return verbs_one_main(argc - 2, argv + 2);
  size_t total = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
  unsigned char *pool = malloc(POOL_BYTES);
  unsigned char *ring = aligned_alloc(64, (size_t)CREDITS << 20);
  if (!pool || !ring || total == 0) {
    fprintf(stderr, "channel_throughput: out of memory or bad size\n");
    return 1;
  }
  for (size_t i = 0; i < POOL_BYTES; i++)
    pool[i] = (unsigned char)(i * 131 + (i >> 12));
  memset(ring, 0, (size_t)CREDITS << 20);
  uint64_t sink = 0;
  printf("local channel, %d credits, %zu MiB per run, median of %d runs\n",
         CREDITS, total >> 20, RUNS);
  printf("%-9s %14s %13s %20s %12s\n", "slot", "channel GB/s", "memcpy GB/s",
         "memcpy+check GB/s", "stalls/run");
  for (uint32_t slot = 4096; slot <= (1u << 20); slot *= 4) {
    double ch[RUNS], mc[RUNS], mk[RUNS];
    uint64_t stalls = 0;
    for (int i = 0; i < RUNS; i++) {
      ch[i] = channel_run(pool, slot, total, &stalls, &sink);
      mc[i] = memcpy_run(pool, ring, slot, total, 0, &sink);
      mk[i] = memcpy_run(pool, ring, slot, total, 1, &sink);
    }
    qsort(ch, RUNS, sizeof ch[0], cmp_double);
    qsort(mc, RUNS, sizeof mc[0], cmp_double);
    qsort(mk, RUNS, sizeof mk[0], cmp_double);
    printf("%6u KiB %14.2f %13.2f %20.2f %12llu\n", slot >> 10, ch[RUNS / 2],
           mc[RUNS / 2], mk[RUNS / 2], (unsigned long long)stalls);
  }
  fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sink);
  free(pool);
  free(ring);
  return 0;
}
