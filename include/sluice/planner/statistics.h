/* statistics.h - what the planner's cost model knows about a source,
 * gathered from a short sample read before a query starts.
 *
 * Three pieces:
 *
 *   sl_hll    HyperLogLog distinct-count sketch (planner/hyperloglog.c).
 *             2^p one-byte registers; relative standard error
 *             1.04 / sqrt(2^p) (p = 12: 4096 registers, ~1.6%).  Small
 *             cardinalities (raw estimate <= 2.5 * 2^p with empty registers
 *             left) use linear counting, which is nearly exact there.  Two
 *             sketches with the same p merge (register-wise max) into the
 *             sketch of the union of their inputs.  Input is a 64-bit hash;
 *             sl_stats_hash_* below give one for values.
 *
 *   sl_hh     space-saving top-k heavy hitters (planner/heavy_hitters.c).
 *             k counters (default 64).  After n additions every counted
 *             item's estimate `count` is >= its true frequency and
 *             count - error <= true frequency; error <= n / k.  Every item
 *             whose true frequency exceeds n / k is among the counters.
 *
 *   sampler   sl_stats_sample (planner/statistics.c) opens the table's
 *             source as worker 0 of 1, reads up to max_records records or
 *             for max_seconds of wall time, whichever comes first (a paced
 *             or idle source is never waited on beyond that), optionally
 *             keeps only the records passing a filter, evaluates the key
 *             expressions with the interpreter and builds per key: distinct
 *             count (HLL), heavy hitters, skew, NULL fraction, and a growth
 *             curve distinct(n) for extrapolation; per table: record width,
 *             event-time rate, sample size, whether the source ended.
 *
 * How the planner should use the estimates.  The sample is small (100k
 * records by default), so `distinct` is the number of distinct keys IN THE
 * SAMPLE, not in a window.  For "distinct groups per window" of a window
 * holding W records, call sl_key_stats_distinct_for(k, W):
 *   - W <= sample size: read off the measured growth curve;
 *   - the source ended within the sample: the whole input was seen, so the
 *     answer is at most the sampled distinct count;
 *   - a declared uniform distribution over R keys (ro, key.range): the
 *     expected number of distinct values of W uniform draws,
 *     R * (1 - (1 - 1/R)^W);
 *   - otherwise extrapolate the curve as a power law d(n) = c * n^b, b
 *     fitted in log-log over the checkpoints between n/4 and n (b = 1:
 *     every record a new key; b = 0: the key set is saturated), capped by
 *     W and by a declared range.
 * The declared distinct count (declared_distinct) is the size of the key
 * domain, an upper bound for any window; it is not the per-window count.
 *
 * Ownership: every result lives in the arena passed in (strings copied, no
 * pointer into the bound tree or the catalog), so a sl_table_stats can be
 * kept after the statement's tree is gone; the cache below owns the arenas
 * of its entries.  Nothing here keeps global mutable state.
 */
#ifndef SLUICE_STATISTICS_H
#define SLUICE_STATISTICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/binder/binder.h"
#include "sluice/catalog/catalog.h"
#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"

/* ---- hashing ------------------------------------------------------------ */

/* 64-bit hashes of values for the sketches: integers of any width hash by
 * their value (INT 5 and BIGINT 5 alike), strings by their bytes. */
uint64_t sl_stats_hash_i64(int64_t v);
uint64_t sl_stats_hash_bytes(const void *p, size_t n);

/* ---- HyperLogLog --------------------------------------------------------- */

#define SL_HLL_DEFAULT_P 12
#define SL_HLL_MIN_P 4
#define SL_HLL_MAX_P 18

typedef struct sl_hll sl_hll;

/* A sketch with 2^p registers in arena a (p outside [SL_HLL_MIN_P,
 * SL_HLL_MAX_P] is clamped). */
sl_hll *sl_hll_new(sl_arena *a, int p);
int sl_hll_p(const sl_hll *h);
void sl_hll_add_hash(sl_hll *h, uint64_t hash);
/* Estimated number of distinct hashes added. */
double sl_hll_estimate(const sl_hll *h);
/* dst := dst U src.  SL_EINVAL when the precisions differ. */
int sl_hll_merge(sl_hll *dst, const sl_hll *src, sl_error *err);
/* The relative standard error of a sketch of precision p: 1.04/sqrt(2^p). */
double sl_hll_std_error(int p);

/* ---- heavy hitters (space-saving) ---------------------------------------- */

#define SL_HH_DEFAULT_K 64
#define SL_HH_MAX_K 1024
#define SL_HH_LABEL_MAX 32

typedef struct sl_hh_item {
  uint64_t key;   /* the item's hash */
  uint64_t count; /* estimate, >= the true frequency */
  uint64_t error; /* count - error <= the true frequency */
  uint32_t label_len;
  uint8_t label[SL_HH_LABEL_MAX]; /* caller's bytes (the value), truncated */
} sl_hh_item;

typedef struct sl_hh sl_hh;

/* k counters in arena a (clamped to [1, SL_HH_MAX_K]). */
sl_hh *sl_hh_new(sl_arena *a, int k);
/* Count one occurrence of `key`; label is kept (up to SL_HH_LABEL_MAX
 * bytes) when the item gets a counter, so it can be shown later. */
void sl_hh_add(sl_hh *h, uint64_t key, const void *label, size_t label_len);
uint64_t sl_hh_total(const sl_hh *h);
/* The guaranteed bound on any count's overestimate: total / k. */
uint64_t sl_hh_error_bound(const sl_hh *h);
/* Copy up to max items into out, highest count first; returns how many. */
int sl_hh_top(const sl_hh *h, sl_hh_item *out, int max);

/* ---- sampling a source --------------------------------------------------- */

typedef struct sl_stats_options {
  uint64_t max_records; /* 0: 100000 */
  double max_seconds;   /* wall-clock budget; 0: 0.2 */
  int hll_p;            /* 0: SL_HLL_DEFAULT_P */
  int hh_k;             /* 0: SL_HH_DEFAULT_K */
  int top;              /* heavy hitters reported per key; 0: 10 */
  uint32_t buffer_size; /* 0: 64 KiB */
  /* Optional BOOLEAN predicate over the table's row: only records for
   * which it is TRUE are sampled (e.g. NEXMark's `event_type = 2`). */
  const sl_bexpr *filter;
  /* Optional: per table column, its bound computed-column expression or
   * NULL (sl_bfrom.u.scan.computed).  Needed only when an expression
   * reads a computed column; without it that is SL_EINVAL. */
  sl_bexpr *const *computed;
} sl_stats_options;

/* One reported heavy hitter. */
typedef struct sl_stats_item {
  const char *value; /* the value as text (truncated), "NULL" never */
  uint64_t count;    /* space-saving estimate (upper bound) */
  double share;      /* guaranteed lower bound: (count - error) / sample */
  double share_max;  /* upper bound: count / sample */
} sl_stats_item;

typedef struct sl_key_stats {
  const char *expr; /* the key expression as SQL text */
  uint64_t nonnull; /* sampled non-NULL values */
  uint64_t nulls;
  double null_fraction; /* nulls / (nulls + nonnull); 0 for an empty sample */

  /* Distinct non-NULL values in the sample (HLL), and its relative standard
   * error; a NULL key is one more group when nulls > 0. */
  double distinct;
  double distinct_stderr;
  const sl_hll *hll; /* the sketch itself (for merging across sources) */

  /* Heavy hitters, highest first; shares are of the non-NULL sample.
   * Every share is within hh_error_share (= 1/k) of the truth in the
   * sample. */
  int nitems;
  sl_stats_item *items;
  double hh_error_share;
  /* Skew: share of the top 1 and top 10 keys (lower bounds, as `share`).
   * Uniform keys over a large domain give ~0; zipf(1.5) gives ~0.38. */
  double top1_share;
  double top10_share;

  /* The growth curve: distinct(curve_n[i]) = curve_d[i] at record counts
   * 1024, 2048, ... and the full sample (last point); the fitted power-law
   * exponent over [n/4, n] (0..1). */
  int ncurve;
  const uint64_t *curve_n;
  const double *curve_d;
  double growth_exponent;
  /* An upper bound on distinct values known from elsewhere (a joined
   * table's distinct keys), applied by sl_key_stats_distinct_for; 0: none.
   * The sampler leaves it 0. */
  double max_distinct;

  /* A generator's declared distribution of this key (ro's `key` column:
   * 'key.range', 'key.distribution', 'zipf.z'); declared == false when
   * unknown.  declared_top_share is the theoretical share of the most
   * frequent key (1/R for uniform, 1/H(R,z) for zipf). */
  bool declared;
  double declared_distinct;
  const char *declared_distribution; /* "uniform" or "zipf" */
  double declared_zipf_z;
  double declared_top_share;

  bool source_ended; /* copied from the table: the sample is everything */
} sl_key_stats;

typedef struct sl_table_stats {
  const char *table;
  uint64_t records;      /* sampled records (after the filter) */
  uint64_t records_read; /* records read from the source */
  double seconds;        /* wall time spent sampling */
  bool source_ended;     /* the source ended within the sample */
  bool stopped_by_time;  /* the time limit, not max_records, ended it */
  /* Bytes per record of the row layout of the leaves read (the keys',
   * rowtime's and filter's), and of all the table's leaves. */
  uint32_t record_width;
  uint32_t full_width;
  /* Event time (when a rowtime expression was given and >= 2 records had
   * one): records per second of event time, (records - 1) / (max - min);
   * 0 when unknown.  Timestamps are microseconds. */
  bool has_event_rate;
  double event_rate;
  int64_t min_ts, max_ts;
  /* Records read per second of wall time (meaningful for paced sources). */
  double wall_rate;

  int nkeys;
  sl_key_stats *keys;
  /* nkeys >= 2: the composite key (all keys together, as GROUP BY a, b
   * groups); NULL otherwise. */
  sl_key_stats *combined;
} sl_table_stats;

/* Sample table t (a connector table).  keys[i] and rowtime (may be NULL)
 * are bound expressions over the table's own row: COLUMN i is column i of
 * t; FIELD chains over ROW columns read leaves by name.  opt may be NULL
 * (defaults).  On success *out lives in a. */
int sl_stats_sample(sl_arena *a, const sl_table_def *t, int nkeys,
                    const sl_bexpr *const *keys, const sl_bexpr *rowtime,
                    const sl_stats_options *opt, sl_table_stats **out,
                    sl_error *err);

/* Estimated distinct keys among n_records records of the stream (see the
 * top of this file for the method). */
double sl_key_stats_distinct_for(const sl_key_stats *k, double n_records);

/* A short human-readable summary (for EXPLAIN's "why" block and tests). */
void sl_table_stats_format(sl_strbuf *b, const sl_table_stats *s);

/* ---- a per-session cache ----------------------------------------------- */

/* Keyed by table name + the table's create_sql (so a re-created table
 * misses) + the text of the keys, rowtime, filter and sampling options.
 * Holds at most SL_STATS_CACHE_MAX entries (the oldest is evicted).
 * Not thread-safe: one per session. */
#define SL_STATS_CACHE_MAX 64

typedef struct sl_stats_cache sl_stats_cache;

sl_stats_cache *sl_stats_cache_new(void);
void sl_stats_cache_free(sl_stats_cache *c);
int sl_stats_cache_count(const sl_stats_cache *c);

/* The cache key for a sampling request (a string in arena a). */
const char *sl_stats_cache_key(sl_arena *a, const sl_table_def *t, int nkeys,
                               const sl_bexpr *const *keys,
                               const sl_bexpr *rowtime,
                               const sl_stats_options *opt);
/* The cached statistics for key, or NULL.  Valid until the entry is
 * evicted or the cache freed. */
const sl_table_stats *sl_stats_cache_lookup(sl_stats_cache *c, const char *key);
/* Store stats under key.  The cache takes over arena *owner (which holds
 * stats) and re-initialises *owner empty; an entry of the same key is
 * replaced. Returns the stored pointer (== stats). */
const sl_table_stats *sl_stats_cache_insert(sl_stats_cache *c, const char *key,
                                            sl_arena *owner,
                                            const sl_table_stats *stats);

/* Lookup, or sample and insert on a miss (*hit says which). */
int sl_stats_cache_sample(sl_stats_cache *c, const sl_table_def *t, int nkeys,
                          const sl_bexpr *const *keys, const sl_bexpr *rowtime,
                          const sl_stats_options *opt,
                          const sl_table_stats **out, bool *hit, sl_error *err);

#endif
