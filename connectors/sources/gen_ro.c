/* gen_ro.c - the Read-Only workload's source: (key, ts) pairs.
 *
 *   key BIGINT        in [0, key.range), uniform or zipf(zipf.z); with zipf
 *                     key 0 is the most frequent (rank r is key r - 1)
 *   ts  TIMESTAMP(3)  event time, events.per-second apart (default 1M/s)
 *
 * Options: 'key.range' (default 100000000), 'key.distribution' ('uniform'
 * default | 'zipf'), 'zipf.z' (default 1.0; 0 means uniform), plus the
 * common generator options.  Zipf uses rejection-inversion, so a 100M-key
 * range costs no memory.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "gen_common.h"
#include "generators.h"

enum { RO_KEY, RO_TS };

static const gen_column ro_columns[] = {
    {"key", GEN_INT, "BIGINT"},
    {"ts", GEN_TS, "TIMESTAMP(3)"},
};
#define RO_NCOLS ((int)(sizeof ro_columns / sizeof ro_columns[0]))

static const char *const ro_options[] = {GEN_COMMON_OPTION_NAMES,
                                         "events.per-second",
                                         "key.range",
                                         "key.distribution",
                                         "zipf.z",
                                         NULL};

typedef struct ro_config {
  gen_options common;
  uint64_t range;
  bool zipf;
  gen_zipf zf;
} ro_config;

static int ro_parse(const sl_table_def *t, ro_config *c, sl_error *err) {
  int rc = gen_check_option_names(t, "ro", ro_options, NULL, err);
  if (rc == SL_OK)
    rc = gen_parse_common(t, 1000000, &c->common, err);
  int64_t range;
  double z;
  if (rc == SL_OK)
    rc = sl_option_int(t, "key.range", 100000000, &range, err);
  if (rc == SL_OK)
    rc = sl_option_double(t, "zipf.z", 1.0, &z, err);
  if (rc != SL_OK)
    return rc;
  if (range <= 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'key.range' must be > 0, not %lld",
                        t->name, (long long)range);
  if (!(z >= 0) || z > 100)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'zipf.z' must be between 0 and 100",
                        t->name);
  const char *dist = sl_table_def_option(t, "key.distribution");
  if (dist && strcasecmp(dist, "uniform") != 0 && strcasecmp(dist, "zipf") != 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'key.distribution' must be 'uniform' or "
                        "'zipf', not '%s'",
                        t->name, dist);
  c->range = (uint64_t)range;
  c->zipf = dist && strcasecmp(dist, "zipf") == 0 && z > 0;
  if (c->zipf)
    gen_zipf_init(&c->zf, c->range, z);
  return gen_check_pregenerate(t, &c->common, err);
}

static int ro_validate(const sl_table_def *t, sl_error *err) {
  ro_config c;
  int rc = ro_parse(t, &c, err);
  if (rc == SL_OK)
    rc = gen_check_columns(t, "ro", ro_columns, RO_NCOLS, err);
  return rc;
}

static void ro_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                    uint8_t *row) {
  const ro_config *c = g->impl;
  const sl_row_layout *l = g->layout;
  uint64_t key = gen_event_key(g->seed, i);
  (void)buf;
  for (int j = 0; j < l->nfields; j++) {
    const sl_field *f = &l->fields[j];
    if (g->col[j] == RO_TS) {
      gen_put_ts(row, f, gen_time_of(&g->clock, i));
    } else if (c->zipf) {
      gen_rng r = gen_rng_at(key, RO_KEY);
      gen_put_int(row, f, (int64_t)gen_zipf_sample(&c->zf, &r) - 1);
    } else {
      gen_put_int(row, f, (int64_t)gen_below(gen_rand(key, RO_KEY), c->range));
    }
  }
}

static int ro_open(const sl_source_spec *spec, sl_source **out, sl_error *err) {
  ro_config c;
  gen_source *g;
  int rc = ro_parse(spec->table, &c, err);
  if (rc == SL_OK)
    rc = gen_begin(&g, spec, "ro", ro_columns, RO_NCOLS, &c.common, err);
  if (rc != SL_OK)
    return rc;
  ro_config *impl = SL_ANEW(&g->arena, ro_config);
  *impl = c;
  g->impl = impl;
  g->fill = ro_fill;
  g->clock.per_second = c.common.per_second;
  g->max_heap = 0;
  rc = gen_ready(g, &c.common, err);
  *out = rc == SL_OK ? (sl_source *)g : NULL;
  return rc;
}

const sl_source_connector sl_source_ro = {
    .name = "ro",
    .description = "Read-Only benchmark: (key BIGINT, ts TIMESTAMP(3)) with "
                   "uniform or zipf keys",
    .validate = ro_validate,
    .open = ro_open,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
