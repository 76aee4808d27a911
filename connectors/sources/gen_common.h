/* gen_common.h - what the event generators (nexmark, ysb, cm, ro, datagen)
 * share: a counter-based random generator, a zipf sampler, typed stores
 * into rows, option checking, and the source driver that splits the event
 * sequence over workers, paces it and optionally pre-generates it.
 *
 * Determinism.  Every value of event i is a function of (seed, i, column)
 * only: the driver hashes (seed, i) once per event and each column mixes
 * in its own salt.  So the data does not depend on the number of workers
 * (worker w of n generates the blocks w, w + n, ... of GEN_BLOCK events)
 * nor on which columns a query reads.
 *
 * Event time.  Event i happens at base + i * 1e6 / events-per-second
 * microseconds (integer arithmetic, so it is exact and non-decreasing);
 * the base is 2015-07-15 00:00:00 UTC, NEXMark's customary start.
 */
#ifndef SLUICE_GEN_COMMON_H
#define SLUICE_GEN_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/connectors/connector.h"

/* 2015-07-15T00:00:00Z in microseconds. */
#define GEN_BASE_TIME_US INT64_C(1436918400000000)

/* ---- random numbers ---------------------------------------------------- */

/* splitmix64's finaliser: a bijective 64-bit mix. */
static inline uint64_t gen_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

/* The per-event key: one hash of (seed, event number). */
static inline uint64_t gen_event_key(uint64_t seed, uint64_t i) {
  return gen_mix64(seed ^ gen_mix64(i + UINT64_C(0x9e3779b97f4a7c15)));
}

/* A column's (or a purpose's) 64 random bits for an event. */
static inline uint64_t gen_rand(uint64_t key, uint32_t salt) {
  return gen_mix64(key + (uint64_t)(salt + 1) * UINT64_C(0x9e3779b97f4a7c15));
}

/* A small stream for values that need several draws (splitmix64). */
typedef struct gen_rng {
  uint64_t s;
} gen_rng;

static inline gen_rng gen_rng_at(uint64_t key, uint32_t salt) {
  gen_rng r = {gen_rand(key, salt)};
  return r;
}
static inline uint64_t gen_rng_next(gen_rng *r) {
  r->s += UINT64_C(0x9e3779b97f4a7c15);
  return gen_mix64(r->s);
}

/* Uniform in [0, n) by multiply-shift (Lemire); n > 0. */
static inline uint64_t gen_below(uint64_t x, uint64_t n) {
  return (uint64_t)(((unsigned __int128)x * n) >> 64);
}
/* Uniform double in [0, 1). */
static inline double gen_unit(uint64_t x) {
  return (double)(x >> 11) * 0x1.0p-53;
}

/* Zipf over ranks 1..n with exponent z > 0 by rejection-inversion
 * (Hoermann & Derflinger 1996): O(1) memory and expected time for any n,
 * so 100M keys need no table.  z == 0 is handled by the caller (uniform). */
typedef struct gen_zipf {
  double n, z;
  double h_x1; /* H(1.5) - 1 */
  double h_n;  /* H(n + 0.5) */
  double s;    /* squeeze: accept k when k - x <= s */
} gen_zipf;

void gen_zipf_init(gen_zipf *zf, uint64_t n, double z);
/* A rank in 1..n; consumes draws from r. */
uint64_t gen_zipf_sample(const gen_zipf *zf, gen_rng *r);

/* ---- event time ---------------------------------------------------------- */

typedef struct gen_clock {
  int64_t base_us;
  int64_t per_second; /* events per second of event time, > 0 */
} gen_clock;

static inline int64_t gen_time_of(const gen_clock *c, uint64_t i) {
  uint64_t eps = (uint64_t)c->per_second;
  return c->base_us + (int64_t)((i / eps) * 1000000u) +
         (int64_t)(((i % eps) * 1000000u) / eps);
}

/* ---- columns and typed stores ---------------------------------------------
 */

/* The kind of value a generator column produces; a declared column must
 * have a type the value can be stored in. */
typedef enum gen_class {
  GEN_INT,    /* integer, float, double or decimal columns */
  GEN_DOUBLE, /* float, double, decimal */
  GEN_STR,    /* CHAR, VARCHAR, STRING */
  GEN_TS,     /* TIMESTAMP, TIMESTAMP_LTZ */
  GEN_ANY,    /* any non-ROW type (datagen) */
} gen_class;

typedef struct gen_column {
  const char *name; /* leaf name, e.g. "bid.price" */
  gen_class cls;
  const char *sql; /* the type to declare, for messages: "BIGINT" */
} gen_column;

bool gen_type_fits(gen_class cls, const sl_type *t);

void gen_put_int(uint8_t *row, const sl_field *f, int64_t v);
void gen_put_double(uint8_t *row, const sl_field *f, double v);
/* Microseconds, truncated to the column's precision (TIMESTAMP(3) keeps
 * milliseconds) so that values equal what a CSV round trip would give. */
void gen_put_ts(uint8_t *row, const sl_field *f, int64_t us);
/* The driver reserved max_heap bytes, so this cannot run out of room. */
static inline void gen_put_str(sl_buffer *b, uint8_t *row, const sl_field *f,
                               const char *p, uint32_t len) {
  sl_buffer_put_str(b, (sl_str *)(row + f->offset), p, len);
}

/* Write the decimal digits of v (v >= 0) to out; returns the length. */
int gen_utoa(char *out, uint64_t v);

/* ---- options ------------------------------------------------------------ */

/* Options every generator takes. */
typedef struct gen_options {
  uint64_t seed;
  uint64_t num; /* total events over all workers; UINT64_MAX = unbounded */
  double rate;  /* wall-clock events/s over all workers; 0 = unpaced */
  bool pregenerate;
  int64_t per_second; /* events.per-second of event time (not nexmark) */
} gen_options;

#define GEN_COMMON_OPTION_NAMES                                                \
  "connector", "events.num", "seed", "events.rate", "pregenerate"

/* Every option key of t must be in known (NULL-terminated) or be accepted
 * by extra (may be NULL); otherwise SL_EINVAL listing the known ones. */
int gen_check_option_names(const sl_table_def *t, const char *connector,
                           const char *const *known,
                           bool (*extra)(const char *key), sl_error *err);

/* Parse the common options; default_eps is the events.per-second default
 * (0: the generator has no such option). */
int gen_parse_common(const sl_table_def *t, int64_t default_eps, gen_options *o,
                     sl_error *err);

/* 'pregenerate' needs a bounded run: call after the generator's own
 * options have settled o->num. */
int gen_check_pregenerate(const sl_table_def *t, const gen_options *o,
                          sl_error *err);

/* Every physical column of t must be one of cols (n of them) with a
 * fitting type; otherwise SL_EINVAL naming the column and listing cols. */
int gen_check_columns(const sl_table_def *t, const char *connector,
                      const gen_column *cols, int n, sl_error *err);

/* ---- the source driver -----------------------------------------------------
 */

/* Consecutive events an instance generates before the next instance's
 * turn: small, so that the instances' event times stay close (their
 * watermarks together gate every window), and not a divisor of a
 * generator's period of event kinds (NEXMark: 50), so that each instance
 * gets its share of every kind. */
#define GEN_BLOCK 16u

typedef struct gen_source gen_source;

/* A layout field the plan reads as its dictionary code (sl_source_spec.
 * as_code): gen_source.col holds the column id with this bit set, and the
 * generator stores the value's index in its dictionary (an INT field). */
#define GEN_CODE 0x10000

/* Fill row (zeroed, all non-NULL) with event i. */
typedef void (*gen_fill_fn)(const gen_source *g, uint64_t i, sl_buffer *buf,
                            uint8_t *row);

struct gen_source {
  sl_arena arena; /* the instance's memory (pools, column map) */
  const sl_row_layout *layout;
  int *col; /* per layout field: the generator column id (| GEN_CODE) */
  gen_fill_fn fill;
  /* Pushed-down filter (connector.h): events for which keep() is false
   * are skipped without being generated.  NULL: keep all. */
  bool (*keep)(const gen_source *g, uint64_t i);
  /* A rechecked filter (connector.h): of every carry_every consecutive
   * events keep() skips, the last is generated all the same, as a time
   * carrier.  0: none.  skip_run counts the skipped events since the last
   * row. */
  uint32_t carry_every, skip_run;
  const void *impl; /* the generator's state, in arena */
  gen_clock clock;
  uint64_t seed;
  uint32_t max_heap; /* most long-string bytes one row can need */
  bool sample;       /* opened for the planner's sample: never pre-generated */

  /* Instance w of n owns the events of blocks w, w + n, w + 2n, ... of
   * GEN_BLOCK consecutive events (gen_common.c: one event in n would give
   * one instance every event of a kind whose period n divides). */
  uint64_t next; /* next global event number of this instance */
  uint64_t end;  /* global end (exclusive); UINT64_MAX unbounded */
  uint32_t step; /* nworkers */

  double rate; /* wall-clock events/s for this instance; 0 = unpaced */
  uint64_t start_ns;
  uint64_t emitted; /* events of this instance so far */

  /* Pre-generated rows: chunks of one layout, replayed by next().  The
   * chunks live in slabs of many chunks each (one allocation per slab, so
   * that the input costs its bytes and not a malloc arena's overhead per
   * chunk); the chunks' buffers do not own their memory. */
  sl_buffer *chunks;
  uint32_t nchunks, chunk_at, row_at;
  unsigned char **slabs;
  uint32_t nslabs;

  uint64_t rows, bytes;
};

/* Start an instance: map the spec's fields to cols (error naming an unknown
 * or ill-typed leaf), set up splitting and pacing from o.  The generator
 * then fills in fill, impl, clock and max_heap, and calls gen_ready. */
int gen_begin(gen_source **out, const sl_source_spec *spec,
              const char *connector, const gen_column *cols, int ncols,
              const gen_options *o, sl_error *err);
/* Finish open(): pre-generates when asked.  On error g is freed. */
int gen_ready(gen_source *g, const gen_options *o, sl_error *err);

int gen_next(sl_source *s, sl_buffer *buf, bool *done, sl_error *err);
/* The connector's lend: a whole pre-generated chunk, when the input was
 * pre-generated, the next chunk starts afresh and fits max_rows. */
int gen_lend(sl_source *s, uint32_t max_rows, const sl_buffer **out, bool *done,
             sl_error *err);
void gen_stats(const sl_source *s, sl_source_stats *out);
void gen_close(sl_source *s);

#endif
