/* channel_helpers.h - shared by the channel unit tests (test_channel.c,
 * test_channel_transports.c): the payload pattern every test writes and
 * checks, a small reproducible random generator, and the payload lengths
 * of the stream tests (zero, tiny, full and in between), and where verbs
 * tests listen. */
#ifndef SLUICE_TEST_CHANNEL_HELPERS_H
#define SLUICE_TEST_CHANNEL_HELPERS_H

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice/net/channel.h"

/* Long enough never to fire on a loaded machine; it only stops hangs. */
#define GUARD_NS (20LL * 1000 * 1000 * 1000)

/* The byte at offset j of the payload of slot s. */
static inline uint8_t pattern(uint64_t s, uint32_t j) {
  return (uint8_t)(s * 131 + j * 7 + (s >> 8) + 1);
}

static inline void fill(void *p, uint64_t s, uint32_t len) {
  uint8_t *b = p;
  for (uint32_t j = 0; j < len; j++)
    b[j] = pattern(s, j);
}

/* 1 when every byte matches. */
static inline int check(const void *p, uint64_t s, uint32_t len) {
  const uint8_t *b = p;
  for (uint32_t j = 0; j < len; j++)
    if (b[j] != pattern(s, j))
      return 0;
  return 1;
}

/* Small xorshift so each thread has its own reproducible randomness. */
static inline uint64_t rnd(uint64_t *st) {
  uint64_t x = *st;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *st = x;
}

/* Length of slot s in the stream tests: zero, tiny, full and in between. */
static inline uint32_t len_for(uint64_t s, uint32_t payload, uint64_t *st) {
  if (s % 97 == 0)
    return payload;
  if (s % 13 == 0)
    return 0;
  if (s % 5 == 0)
    return (uint32_t)(s % 17);
  return (uint32_t)(rnd(st) % (payload + 1));
}

/* --- verbs (test_channel_transports.c, test_channel_verbs.c) --- */

/* The address a verbs acceptor listens on: SLUICE_RDMA_ADDR ("ip" or
 * "ip:port"), else the probed device's address with port 0.  0, or -1
 * with why. */
static inline int verbs_listen_address(char *buf, size_t n, char *why,
                                       size_t wn) {
  const char *env = getenv("SLUICE_RDMA_ADDR");
  if (env && *env) {
    snprintf(buf, n, strchr(env, ':') ? "%s" : "%s:0", env);
    return 0;
  }
  sl_verbs_device d;
  sl_error err = {0};
  int rc = sl_channel_verbs_probe(&d, &err);
  if (rc != SL_OK) {
    snprintf(why, wn, "%s", err.message ? err.message : "no RDMA device");
    sl_error_clear(&err);
    return -1;
  }
  snprintf(buf, n, "%s:0", d.address);
  return 0;
}

/* Exactly n bytes from fd within GUARD_NS.  0 or -1. */
static inline int read_exact(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, (int)(GUARD_NS / 1000000)) != 1)
      return -1;
    ssize_t k = read(fd, p, n);
    if (k <= 0)
      return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* A test body's check: in a forked child cmocka's asserts cannot report,
 * so a body returns 0 or the failing line. */
#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
      return __LINE__;                                                         \
    }                                                                          \
  } while (0)

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A verbs test without a device is skipped, visibly (cmocka prints
 * SKIPPED), or fails when SLUICE_REQUIRE_VERBS=1 (inside the RDMA VM).
 * Include cmocka.h first. */
static inline void skip_without_verbs(void) {
  char addr[128], why[256] = "";
  if (verbs_listen_address(addr, sizeof addr, why, sizeof why) == 0)
    return;
  const char *req = getenv("SLUICE_REQUIRE_VERBS");
  if (req && strcmp(req, "1") == 0)
    fail_msg("SLUICE_REQUIRE_VERBS=1 but %s", why);
  skip();
}

#endif
