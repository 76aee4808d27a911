/* channel_transports.c - local vs shm vs tcp channels side by side, and the
 * loopback TCP stream bandwidth that bounds tcp.
 *
 * For every transport, slot size (4 KiB, 64 KiB, 1 MiB) and credit count
 * (2, 8, 32): the producer memcpy's each payload from a 64 MiB pool (not
 * cache-hot) into the slot it acquired; the consumer sums every 8-byte word
 * of the slot and releases it.  local runs producer and consumer as two
 * threads of this process; shm and tcp as two processes (fork: the child
 * produces, this process consumes and times from its open to the end of
 * the stream; tcp over 127.0.0.1).  GB/s = payload bytes / second and
 * slots/s, median of RUNS runs, all runs of one configuration interleaved
 * across transports so that a burst of load from elsewhere hits all three.
 *
 * The bound: one process send()s `total` bytes in 1 MiB writes over a
 * loopback TCP connection (TCP_NODELAY) and another recv()s them into a
 * 1 MiB buffer without touching them: what the kernel's loopback moves,
 * and what no tcp channel can beat.  "% of bound" = tcp GB/s / bound.
 *
 *   build/bench/channel_transports [MiB per run, default 256] [runs, 5]
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/channel.h"
#include "sluice/clock.h"

enum { MAX_RUNS = 15 };
#define POOL_BYTES ((size_t)64 << 20)

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return v[n / 2];
}

static uint64_t checksum(const void *p, size_t len) {
  const uint64_t *w = p;
  uint64_t s = 0;
  for (size_t i = 0; i < len / 8; i++)
    s += w[i];
  return s;
}

typedef struct work {
  sl_channel *ch;
  const unsigned char *pool;
  uint64_t slots;
  uint32_t len;
  uint64_t sum;
  int err;
} work;

static void *produce(void *arg) {
  work *w = arg;
  size_t off = 0;
  for (uint64_t i = 0; i < w->slots; i++) {
    void *p;
    while (!(p = sl_channel_acquire(w->ch)))
      if (sl_channel_wait_credit(w->ch, -1) != SL_OK) {
        w->err = 1;
        return NULL;
      }
    memcpy(p, w->pool + off, w->len);
    off = off + 2 * (size_t)w->len > POOL_BYTES ? 0 : off + w->len;
    sl_channel_header h = {1, 0, (int64_t)i};
    if (sl_channel_publish(w->ch, w->len, &h) != SL_OK) {
      w->err = 1;
      return NULL;
    }
  }
  sl_channel_close(w->ch);
  return NULL;
}

static void *consume(void *arg) {
  work *w = arg;
  uint64_t sum = 0, n = 0;
  for (;;) {
    const sl_channel_slot *s = sl_channel_poll(w->ch);
    if (!s) {
      int rc = sl_channel_wait_slot(w->ch, -1);
      if (rc == SL_OK)
        continue;
      if (rc != SL_CHANNEL_END)
        w->err = 1;
      break;
    }
    sum += checksum(s->payload, s->len);
    sl_channel_release(w->ch);
    n++;
  }
  if (n != w->slots)
    w->err = 1;
  w->sum = sum;
  return NULL;
}

static void report(const char *what, sl_error *err) {
  fprintf(stderr, "channel_transports: %s: %s\n", what,
          err->message ? err->message : "?");
  sl_error_clear(err);
}

/* Seconds to move `slots` slots of `len` bytes; < 0 on failure. */
static double run_local(const unsigned char *pool, sl_channel_config cfg,
                        uint64_t slots, uint32_t len, uint64_t *sink) {
  sl_error err = {0};
  work w = {0};
  if (sl_channel_open(&sl_channel_local, &cfg, &w.ch, &err) != SL_OK) {
    report("local open", &err);
    return -1;
  }
  w.pool = pool;
  w.slots = slots;
  w.len = len;
  pthread_t p, c;
  double t0 = sl_clock_seconds();
  pthread_create(&c, NULL, consume, &w);
  pthread_create(&p, NULL, produce, &w);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  double dt = sl_clock_seconds() - t0;
  sl_channel_destroy(w.ch);
  *sink += w.sum;
  return w.err ? -1 : dt;
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
    work w = {.pool = pool, .slots = slots, .len = len};
    if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK) {
      report("producer open", &err);
      _exit(1);
    }
    produce(&w);
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
  work w = {.slots = slots, .len = len};
  double dt = -1;
  if (sl_channel_open_end(&ep, &cfg, &w.ch, &err) != SL_OK)
    report("consumer open", &err);
  else {
    double t0 = sl_clock_seconds();
    consume(&w);
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

/* Loopback TCP stream: seconds to move `total` bytes in `chunk` writes. */
static double run_bound(const unsigned char *pool, size_t total, size_t chunk) {
  sl_error err = {0};
  int lfd;
  char addr[128];
  if (sl_channel_listen("tcp", "127.0.0.1:0", &lfd, addr, sizeof addr, &err) !=
      SL_OK) {
    report("bound listen", &err);
    return -1;
  }
  struct sockaddr_in sa;
  socklen_t sl = sizeof sa;
  getsockname(lfd, (struct sockaddr *)&sa, &sl);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sl) != 0)
      _exit(1);
    size_t off = 0, left = total;
    while (left > 0) {
      size_t n = left < chunk ? left : chunk;
      ssize_t k = send(fd, pool + off, n, MSG_NOSIGNAL);
      if (k <= 0)
        _exit(1);
      left -= (size_t)k;
      off = off + 2 * chunk > POOL_BYTES ? 0 : off + (size_t)k;
    }
    close(fd);
    _exit(0);
  }
  int fd = accept(lfd, NULL, NULL);
  close(lfd);
  unsigned char *buf = malloc(chunk);
  size_t got = 0;
  double t0 = sl_clock_seconds();
  for (;;) {
    ssize_t k = recv(fd, buf, chunk, 0);
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  double dt = sl_clock_seconds() - t0;
  close(fd);
  free(buf);
  int status;
  waitpid(pid, &status, 0);
  return got == total ? dt : -1;
}

int main(int argc, char **argv) {
  size_t total = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1 || runs > MAX_RUNS || total == 0) {
    fprintf(stderr, "usage: channel_transports [MiB per run] [runs 1..%d]\n",
            MAX_RUNS);
    return 2;
  }
  unsigned char *pool = malloc(POOL_BYTES);
  if (!pool) {
    fprintf(stderr, "channel_transports: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < POOL_BYTES; i++)
    pool[i] = (unsigned char)(i * 131 + (i >> 12));
  uint64_t sink = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf("channel transports, %zu MiB per run, median of %d runs, %ld CPUs\n",
         total >> 20, runs, cpus);

  double bound[MAX_RUNS], bound64[MAX_RUNS];
  for (int i = 0; i < runs; i++) {
    double dt = run_bound(pool, total, 1 << 20);
    double dt64 = run_bound(pool, total, 64 << 10);
    bound[i] = dt > 0 ? (double)total / dt / 1e9 : 0;
    bound64[i] = dt64 > 0 ? (double)total / dt64 / 1e9 : 0;
  }
  double b = median(bound, runs);
  printf("loopback TCP stream bound: %.2f GB/s (1 MiB writes), %.2f GB/s "
         "(64 KiB writes)\n\n",
         b, median(bound64, runs));
  printf("| slot | credits | local GB/s | shm GB/s | tcp GB/s | tcp %% of "
         "bound | local slots/s | shm slots/s | tcp slots/s |\n");
  printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  const char *names[3] = {"local", "shm", "tcp"};
  const uint32_t slot_sizes[] = {4096, 64 << 10, 1 << 20};
  const uint32_t credit_counts[] = {2, 8, 32};
  int failed = 0;
  for (int si = 0; si < 3; si++)
    for (int ci = 0; ci < 3; ci++) {
      sl_channel_config cfg = {credit_counts[ci], slot_sizes[si]};
      uint32_t len = sl_channel_payload_size_for(cfg.slot_size) & ~7u;
      uint64_t slots = total / len;
      double gbs[3][MAX_RUNS], sps[3][MAX_RUNS];
      for (int i = 0; i < runs; i++)
        for (int t = 0; t < 3; t++) {
          double dt = t == 0
                          ? run_local(pool, cfg, slots, len, &sink)
                          : run_forked(names[t], pool, cfg, slots, len, &sink);
          if (dt <= 0) {
            fprintf(stderr, "channel_transports: %s %u x %u failed\n", names[t],
                    cfg.credits, cfg.slot_size);
            failed = 1;
            dt = 1e9;
          }
          gbs[t][i] = (double)slots * len / dt / 1e9;
          sps[t][i] = (double)slots / dt;
        }
      double g[3], s[3];
      for (int t = 0; t < 3; t++) {
        g[t] = median(gbs[t], runs);
        s[t] = median(sps[t], runs);
      }
      printf("| %u KiB | %u | %.2f | %.2f | %.2f | %.0f%% | %.0f | %.0f | "
             "%.0f |\n",
             cfg.slot_size >> 10, cfg.credits, g[0], g[1], g[2],
             b > 0 ? 100 * g[2] / b : 0, s[0], s[1], s[2]);
      fflush(stdout);
    }
  fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sink);
  free(pool);
  return failed;
}
