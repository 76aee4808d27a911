/* hyperloglog.c - the HyperLogLog distinct-count sketch (statistics.h),
 * and the value hashes the statistics feed it.
 *
 * Flajolet et al.'s estimator with the classic small-range correction
 * (linear counting while registers are still empty).  Hashes are 64 bits,
 * so the large-range correction of the 32-bit original is not needed.
 */
#include <math.h>
#include <string.h>

#include "sluice/planner/statistics.h"
#include "sluice/row/row.h"

struct sl_hll {
  int p;
  uint32_t m;
  uint8_t reg[]; /* m registers: max rank seen per bucket */
};

/* ---- hashing ------------------------------------------------------------- */

uint64_t sl_stats_hash_i64(int64_t v) {
  /* fmix64 is a bijection with full avalanche; the added constant keeps 0
   * from hashing to 0. */
  return sl_mix64((uint64_t)v + 0x9e3779b97f4a7c15ULL);
}

static uint64_t rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

uint64_t sl_stats_hash_bytes(const void *p, size_t n) {
  /* 8 bytes per step, multiply-rotate mixing (as in xxhash/murmur), the
   * length folded in so "a" and "a\0" differ, fmix64 at the end. */
  const unsigned char *s = p;
  uint64_t h = 0x243f6a8885a308d3ULL ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h ^= rotl(w * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
    h = rotl(h, 27) * 5 + 0x52dce729;
    s += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, s, n);
  h ^= rotl(w * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
  return sl_mix64(h);
}

/* ---- the sketch ---------------------------------------------------------- */

sl_hll *sl_hll_new(sl_arena *a, int p) {
  if (p < SL_HLL_MIN_P)
    p = SL_HLL_MIN_P;
  if (p > SL_HLL_MAX_P)
    p = SL_HLL_MAX_P;
  uint32_t m = 1u << p;
  sl_hll *h = sl_arena_zalloc(a, sizeof(sl_hll) + m);
  h->p = p;
  h->m = m;
  return h;
}

int sl_hll_p(const sl_hll *h) {
  return h->p;
}

void sl_hll_add_hash(sl_hll *h, uint64_t hash) {
  uint32_t idx = (uint32_t)(hash >> (64 - h->p));
  /* The rank is the position of the first 1 bit in the remaining 64 - p
   * bits; the sentinel bit bounds it by 64 - p + 1. */
  uint64_t w = (hash << h->p) | (1ULL << (h->p - 1));
  uint8_t rank = (uint8_t)(__builtin_clzll(w) + 1);
  if (rank > h->reg[idx])
    h->reg[idx] = rank;
}

double sl_hll_estimate(const sl_hll *h) {
  double m = (double)h->m;
  double sum = 0;
  uint32_t zeros = 0;
  for (uint32_t i = 0; i < h->m; i++) {
    sum += ldexp(1.0, -(int)h->reg[i]);
    zeros += h->reg[i] == 0;
  }
  double alpha;
  if (h->m == 16)
    alpha = 0.673;
  else if (h->m == 32)
    alpha = 0.697;
  else if (h->m == 64)
    alpha = 0.709;
  else
    alpha = 0.7213 / (1.0 + 1.079 / m);
  double e = alpha * m * m / sum;
  /* Small range: the raw estimate is biased upward; counting empty
   * registers (linear counting) is accurate while some remain. */
  if (e <= 2.5 * m && zeros > 0)
    e = m * log(m / (double)zeros);
  return e;
}

int sl_hll_merge(sl_hll *dst, const sl_hll *src, sl_error *err) {
  if (dst->p != src->p)
    return sl_error_set(err, SL_EINVAL,
                        "cannot merge HyperLogLog sketches of precision %d "
                        "and %d",
                        dst->p, src->p);
  for (uint32_t i = 0; i < dst->m; i++)
    if (src->reg[i] > dst->reg[i])
      dst->reg[i] = src->reg[i];
  return SL_OK;
}

double sl_hll_std_error(int p) {
  return 1.04 / sqrt((double)(1u << p));
}
