/* gen_datagen.c - random rows for any schema, with Flink's datagen
 * options.
 *
 * Per column (a ROW column's leaves by their flattened name, e.g.
 * 'fields.person.id.min'):
 *   'fields.<col>.kind'       'random' (default) or 'sequence'
 *   'fields.<col>.min'/'max'  bounds of random numbers (integers: the
 *                             type's range; FLOAT/DOUBLE/DECIMAL: 0 and 1;
 *                             intervals: 0 and 1000)
 *   'fields.<col>.length'     length of random strings (default 100, or
 *                             n for CHAR(n)/VARCHAR(n) below 100); at most
 *                             4096
 *   'fields.<col>.var-len'    'true': random length 1..length
 *   'fields.<col>.start'/'end' a sequence: row i gets start + i (numbers,
 *                             or its digits for strings); the run ends
 *                             after end - start + 1 rows
 *   'fields.<col>.null-rate'  probability of NULL (default 0)
 * TIMESTAMP columns carry event time (events.per-second apart, default
 * 1000/s, from 2015-07-15); DATE and TIME columns the date and time of day
 * of the event time.  'number-of-rows' (Flink) means 'events.num' and
 * 'rows-per-second' means 'events.rate'; both run unbounded and unpaced
 * without them.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gen_common.h"
#include "generators.h"

static const char *const dg_options[] = {GEN_COMMON_OPTION_NAMES,
                                         "events.per-second", "number-of-rows",
                                         "rows-per-second", NULL};
static const char *const dg_props[] = {"kind",   "min",       "max",
                                       "length", "var-len",   "start",
                                       "end",    "null-rate", NULL};

#define DG_MAX_LENGTH 4096
#define DG_POOL 8192 /* > DG_MAX_LENGTH */

enum { DG_RANDOM, DG_SEQUENCE, DG_TIME };

typedef struct dg_field {
  int kind;
  sl_ptype ptype;
  int64_t imin, imax; /* random integers, intervals */
  double dmin, dmax;  /* random FLOAT, DOUBLE, DECIMAL */
  int64_t start, end; /* sequences */
  uint32_t length;    /* strings */
  bool var_len;
  double null_rate;
} dg_field;

typedef struct dg_config {
  gen_options common;
  int n;
  const char **names;
  dg_field *fields; /* per table leaf */
} dg_config;

typedef struct dg_state {
  dg_config c;
  char pool[DG_POOL];
} dg_state;

static bool is_field_option(const char *key) {
  return strncmp(key, "fields.", 7) == 0;
}

static int find_leaf(const dg_config *c, const char *name, size_t len) {
  for (int k = 0; k < c->n; k++)
    if (strlen(c->names[k]) == len && strncmp(c->names[k], name, len) == 0)
      return k;
  return -1;
}

/* Every 'fields.<col>.<prop>' names a column and a property we know. */
static int check_field_options(const sl_table_def *t, const dg_config *c,
                               sl_error *err) {
  for (int i = 0; i < t->noptions; i++) {
    const char *key = t->options[i].key;
    if (!is_field_option(key))
      continue;
    const char *dot = strrchr(key, '.');
    const char *prop = dot + 1;
    bool ok = false;
    for (int p = 0; dg_props[p] && !ok; p++)
      ok = strcmp(dg_props[p], prop) == 0;
    if (!ok || dot == key + 6)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': unsupported option '%s'; per-column "
                          "options are 'fields.<column>.<p>' with <p> one of "
                          "kind, min, max, length, var-len, start, end, "
                          "null-rate",
                          t->name, key);
    if (find_leaf(c, key + 7, (size_t)(dot - key - 7)) < 0)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': option '%s' names no column of the "
                          "table",
                          t->name, key);
  }
  return SL_OK;
}

static bool is_number(sl_ptype p) {
  return p == SL_P_I8 || p == SL_P_I16 || p == SL_P_I32 || p == SL_P_I64 ||
         p == SL_P_F32 || p == SL_P_F64 || p == SL_P_DEC64 ||
         p == SL_P_DEC128 || p == SL_P_IV_DT || p == SL_P_IV_YM;
}
static bool is_floating(sl_ptype p) {
  return p == SL_P_F32 || p == SL_P_F64 || p == SL_P_DEC64 || p == SL_P_DEC128;
}

static int parse_field(const sl_table_def *t, const char *name,
                       const sl_type *type, dg_field *f, sl_error *err) {
  char key[320];
  int rc;
  f->ptype = sl_ptype_of(type);
#define KEY(prop) (snprintf(key, sizeof key, "fields.%s.%s", name, prop), key)
  const char *kind = sl_table_def_option(t, KEY("kind"));
  if (kind && strcasecmp(kind, "random") != 0 &&
      strcasecmp(kind, "sequence") != 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': '%s' must be 'random' or 'sequence', not "
                        "'%s'",
                        t->name, key, kind);
  bool seq = kind && strcasecmp(kind, "sequence") == 0;
  if ((rc = sl_option_double(t, KEY("null-rate"), 0, &f->null_rate, err)))
    return rc;
  if (f->null_rate < 0 || f->null_rate > 1)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': '%s' must be between 0 and 1", t->name,
                        key);
  if (f->ptype == SL_P_TS || f->ptype == SL_P_DATE || f->ptype == SL_P_TIME) {
    f->kind = DG_TIME;
    const char *bad[] = {"kind", "min", "max", "start", "end", "length"};
    for (int k = 0; k < 6; k++)
      if (sl_table_def_option(t, KEY(bad[k])))
        return sl_error_set(err, SL_EINVAL,
                            "table '%s': '%s' is not supported: column '%s' "
                            "carries the event time",
                            t->name, key, name);
    return SL_OK;
  }
  if (seq) {
    f->kind = DG_SEQUENCE;
    if (!is_number(f->ptype) && f->ptype != SL_P_STR)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': column '%s': a sequence needs a number "
                          "or string column",
                          t->name, name);
    if (!sl_table_def_option(t, KEY("start")) ||
        !sl_table_def_option(t, KEY("end")))
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': the sequence column '%s' needs "
                          "'fields.%s.start' and 'fields.%s.end'",
                          t->name, name, name, name);
    if ((rc = sl_option_int(t, KEY("start"), 0, &f->start, err)) ||
        (rc = sl_option_int(t, KEY("end"), 0, &f->end, err)))
      return rc;
    if (f->end < f->start)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': column '%s': the sequence end %lld is "
                          "before its start %lld",
                          t->name, name, (long long)f->end,
                          (long long)f->start);
    return SL_OK;
  }
  f->kind = DG_RANDOM;
  if (f->ptype == SL_P_STR) {
    int64_t def = 100, len;
    if (type->precision > 0 && type->precision < 100)
      def = type->precision;
    if ((rc = sl_option_int(t, KEY("length"), def, &len, err)) ||
        (rc = sl_option_bool(t, KEY("var-len"), false, &f->var_len, err)))
      return rc;
    if (len < 0 || len > DG_MAX_LENGTH)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': '%s' must be between 0 and %d", t->name,
                          KEY("length"), DG_MAX_LENGTH);
    f->length = (uint32_t)len;
    return SL_OK;
  }
  if (is_floating(f->ptype)) {
    if ((rc = sl_option_double(t, KEY("min"), 0, &f->dmin, err)) ||
        (rc = sl_option_double(t, KEY("max"), 1, &f->dmax, err)))
      return rc;
    if (f->dmax < f->dmin)
      return sl_error_set(err, SL_EINVAL,
                          "table '%s': column '%s': max is below min", t->name,
                          name);
    return SL_OK;
  }
  int64_t lo = 0, hi = 1000; /* intervals */
  switch (f->ptype) {
  case SL_P_BOOL:
    lo = 0, hi = 1;
    break;
  case SL_P_I8:
    lo = INT8_MIN, hi = INT8_MAX;
    break;
  case SL_P_I16:
    lo = INT16_MIN, hi = INT16_MAX;
    break;
  case SL_P_I32:
    lo = INT32_MIN, hi = INT32_MAX;
    break;
  case SL_P_I64:
    lo = INT64_MIN, hi = INT64_MAX;
    break;
  default:
    break;
  }
  if ((rc = sl_option_int(t, KEY("min"), lo, &f->imin, err)) ||
      (rc = sl_option_int(t, KEY("max"), hi, &f->imax, err)))
    return rc;
  if (f->imin < lo || f->imax > hi || f->imax < f->imin)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': column '%s': min and max must satisfy "
                        "%lld <= min <= max <= %lld",
                        t->name, name, (long long)lo, (long long)hi);
  return SL_OK;
#undef KEY
}

/* Parse everything into c (arrays in arena a). */
static int dg_parse(const sl_table_def *t, sl_arena *a, dg_config *c,
                    sl_error *err) {
  int rc =
      gen_check_option_names(t, "datagen", dg_options, is_field_option, err);
  if (rc == SL_OK)
    rc = gen_parse_common(t, 1000, &c->common, err);
  int64_t rows;
  double rps;
  if (rc == SL_OK)
    rc = sl_option_int(t, "number-of-rows", -1, &rows, err);
  if (rc == SL_OK)
    rc = sl_option_double(t, "rows-per-second", c->common.rate, &rps, err);
  if (rc != SL_OK)
    return rc;
  if (rows == 0 || rows < -1)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'number-of-rows' must be > 0", t->name);
  if (rows > 0 && (uint64_t)rows < c->common.num)
    c->common.num = (uint64_t)rows;
  if (rps < 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'rows-per-second' must be >= 0", t->name);
  c->common.rate = rps;

  sl_leaf_columns leaves;
  sl_table_leaf_columns(a, t, &leaves);
  c->n = leaves.n;
  c->names = leaves.names;
  c->fields = SL_ANEW_N(a, dg_field, leaves.n > 0 ? leaves.n : 1);
  if ((rc = check_field_options(t, c, err)))
    return rc;
  for (int k = 0; k < c->n; k++) {
    dg_field *f = &c->fields[k];
    if ((rc = parse_field(t, c->names[k], leaves.types[k], f, err)))
      return rc;
    if (f->kind == DG_SEQUENCE) {
      uint64_t n = (uint64_t)(f->end - f->start) + 1;
      if (n != 0 && n < c->common.num)
        c->common.num = n;
    }
  }
  return gen_check_pregenerate(t, &c->common, err);
}

static int dg_validate(const sl_table_def *t, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  dg_config c;
  int rc = dg_parse(t, &a, &c, err);
  sl_arena_free(&a);
  return rc;
}

static void dg_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                    uint8_t *row) {
  const dg_state *s = g->impl;
  const sl_row_layout *l = g->layout;
  uint64_t key = gen_event_key(g->seed, i);
  for (int j = 0; j < l->nfields; j++) {
    int leaf = g->col[j];
    const dg_field *d = &s->c.fields[leaf];
    const sl_field *f = &l->fields[j];
    gen_rng r = gen_rng_at(key, (uint32_t)leaf);
    uint64_t x = gen_rng_next(&r);
    if (d->null_rate > 0 && gen_unit(gen_rng_next(&r)) < d->null_rate) {
      sl_row_set_null(row, j, true);
      continue;
    }
    if (d->kind == DG_TIME) {
      int64_t us = gen_time_of(&g->clock, i);
      if (f->ptype == SL_P_TS)
        gen_put_ts(row, f, us);
      else if (f->ptype == SL_P_DATE)
        gen_put_int(row, f, us / 86400000000);
      else
        gen_put_int(row, f, us % 86400000000 / 1000);
    } else if (d->kind == DG_SEQUENCE) {
      int64_t v = d->start + (int64_t)i;
      if (f->ptype == SL_P_STR) {
        char text[24];
        int n = 0;
        if (v < 0)
          text[n++] = '-';
        n += gen_utoa(text + n, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
        gen_put_str(buf, row, f, text, (uint32_t)n);
      } else {
        gen_put_int(row, f, v);
      }
    } else if (f->ptype == SL_P_STR) {
      uint32_t len = d->length;
      if (d->var_len && len > 0)
        len = 1 + (uint32_t)gen_below(gen_rng_next(&r), len);
      gen_put_str(buf, row, f, s->pool + gen_below(x, DG_POOL - len), len);
    } else if (is_floating(f->ptype)) {
      gen_put_double(row, f, d->dmin + (d->dmax - d->dmin) * gen_unit(x));
    } else {
      uint64_t span = (uint64_t)d->imax - (uint64_t)d->imin + 1;
      uint64_t v = span ? gen_below(x, span) : x; /* 0: the full range */
      gen_put_int(row, f, (int64_t)((uint64_t)d->imin + v));
    }
  }
}

static int dg_open(const sl_source_spec *spec, sl_source **out, sl_error *err) {
  sl_arena tmp;
  sl_arena_init(&tmp, 0);
  dg_config c;
  int rc = dg_parse(spec->table, &tmp, &c, err);
  /* Every leaf is a column of its own; the id is the leaf index. */
  gen_column *cols = SL_ANEW_N(&tmp, gen_column, c.n > 0 ? c.n : 1);
  for (int k = 0; rc == SL_OK && k < c.n; k++) {
    cols[k].name = c.names[k];
    cols[k].cls = GEN_ANY;
    cols[k].sql = "";
  }
  gen_source *g = NULL;
  if (rc == SL_OK)
    rc = gen_begin(&g, spec, "datagen", cols, c.n, &c.common, err);
  if (rc != SL_OK) {
    sl_arena_free(&tmp);
    return rc;
  }
  dg_state *s = SL_ANEW(&g->arena, dg_state);
  s->c = c;
  s->c.fields = SL_ANEW_N(&g->arena, dg_field, c.n > 0 ? c.n : 1);
  memcpy(s->c.fields, c.fields, sizeof(dg_field) * (size_t)c.n);
  s->c.names = NULL; /* lived in tmp */
  sl_arena_free(&tmp);
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int k = 0; k < DG_POOL; k++)
    s->pool[k] = chars[gen_below(gen_rand(c.common.seed, 0x90000u + k), 36)];
  g->impl = s;
  g->fill = dg_fill;
  g->clock.per_second = c.common.per_second;
  g->max_heap = 0;
  for (int j = 0; j < g->layout->nfields; j++)
    if (g->layout->fields[j].ptype == SL_P_STR)
      g->max_heap += s->c.fields[g->col[j]].length + 24;
  rc = gen_ready(g, &c.common, err);
  *out = rc == SL_OK ? (sl_source *)g : NULL;
  return rc;
}

const sl_source_connector sl_source_datagen = {
    .name = "datagen",
    .description = "random rows for any schema (Flink's datagen options)",
    .validate = dg_validate,
    .open = dg_open,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
