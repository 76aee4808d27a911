/* channel_throughput.c - bytes per second through one in-process channel.
 *
 * One producer thread memcpy's a payload (from a 64 MiB source pool, so it
 * is not cache-hot) into each slot it acquires; one consumer thread reads
 * every word of each slot (a checksum) and releases it.  Slot sizes 4 KiB
 * .. 1 MiB (powers of 4), 8 credits, GB/s = payload bytes / second, median
 * of 5 runs, next to one thread doing the same memcpy (pool -> a ring of the
 * same shape) and the same memcpy + checksum with no channel in between.
 *
 *   build/bench/channel_throughput [MiB per run, default 1024]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice/channel.h"
#include "sluice/clock.h"

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
  uint64_t sum = 0;
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
    sum += checksum(s->payload, s->len);
    sl_channel_release(r->ch);
  }
  r->sum = sum;
  return NULL;
}

/* GB/s through a channel of slot_size bytes, moving `total` payload bytes. */
static double channel_run(const unsigned char *pool, uint32_t slot_size,
                          size_t total, uint64_t *stalls) {
  sl_error err = {0};
  run r = {0};
  if (sl_channel_open_local(CREDITS, slot_size, &r.ch, &err) != SL_OK) {
    fprintf(stderr, "channel_throughput: %s\n", err.message);
    sl_error_clear(&err);
    return 0;
  }
  r.pool = pool;
  r.len = sl_channel_payload_size(r.ch) & ~7u;
  r.slots = total / r.len;
  pthread_t p, c;
  double t0 = sl_clock_seconds();
  pthread_create(&c, NULL, consumer, &r);
  pthread_create(&p, NULL, producer, &r);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  double dt = sl_clock_seconds() - t0;
  sl_channel_stats st;
  sl_channel_get_stats(r.ch, &st);
  *stalls = st.stalls;
  sl_channel_destroy(r.ch);
  if (r.err)
    fprintf(stderr, "channel_throughput: channel error\n");
  return (double)r.slots * r.len / dt / 1e9;
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

int main(int argc, char **argv) {
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
      ch[i] = channel_run(pool, slot, total, &stalls);
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
