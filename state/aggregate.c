/* aggregate.c - partial aggregate states: init, update, merge, finalize.
 *
 * A state is a few bytes inside a group-table entry; see aggregate.h for
 * the CRDT each aggregate uses.  Updates are a switch per aggregate per row:
 * this is the interpreter's path, the JIT will inline the same layouts.
 */
#include <string.h>

#include "sluice/state/aggregate.h"

typedef __int128 i128;

/* ---- reading argument values ------------------------------------------- */

static bool is_float(sl_ptype t) {
  return t == SL_P_F32 || t == SL_P_F64;
}

static double read_double(const uint8_t *p, sl_ptype t) {
  return t == SL_P_F32 ? *(const float *)p : *(const double *)p;
}

static i128 read_i128(const uint8_t *p, sl_ptype t) {
  if (t == SL_P_DEC128) {
    i128 v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  return sl_int_load(p, t);
}

static void write_i128(uint8_t *p, i128 v) {
  memcpy(p, &v, sizeof v);
}

static i128 pow10_i128(int n) {
  i128 r = 1;
  while (n-- > 0)
    r *= 10;
  return r;
}

/* Compare two values of the same physical type (MIN/MAX, DISTINCT). */
static int compare_values(const uint8_t *a, const uint8_t *b, sl_ptype t) {
  if (t == SL_P_STR)
    return sl_str_compare((const sl_str *)a, (const sl_str *)b);
  if (is_float(t)) {
    double x = read_double(a, t), y = read_double(b, t);
    return (x > y) - (x < y);
  }
  if (t == SL_P_DEC128) {
    i128 x = read_i128(a, t), y = read_i128(b, t);
    return (x > y) - (x < y);
  }
  int64_t x = sl_int_load(a, t), y = sl_int_load(b, t);
  return (x > y) - (x < y);
}

/* Copy a value into a state; long string bytes into arena. */
static void store_value(uint8_t *dst, const uint8_t *src, sl_ptype t,
                        sl_arena *arena) {
  if (t == SL_P_STR) {
    const sl_str *s = (const sl_str *)src;
    if (s->len > SL_STR_INLINE) {
      char *copy = sl_arena_strndup(arena, s->u.ptr, s->len);
      *(sl_str *)dst = sl_str_make(copy, s->len);
      return;
    }
  }
  memcpy(dst, src, (size_t)sl_ptype_size(t));
}

/* ---- DISTINCT value sets ---------------------------------------------------
 * Open addressing over fixed-size value slots; each slot is [used:8][value].
 * Grown by reallocating in the arena (the old array is abandoned there:
 * sets double, so the waste is bounded by the live size). */

typedef struct value_set {
  uint32_t cap, count, vsize;
  uint32_t stride; /* 8 + vsize rounded up to 8: the used word aligned */
  sl_ptype type;
  uint8_t *slots;
} value_set;

static uint64_t hash_value(const uint8_t *v, sl_ptype t) {
  if (t == SL_P_STR) {
    const sl_str *s = (const sl_str *)v;
    return sl_hash_bytes(sl_str_data(s), s->len);
  }
  if (is_float(t)) {
    double d = read_double(v, t);
    if (d == 0)
      d = 0; /* -0.0 and 0.0 are one value */
    return sl_hash_bytes(&d, sizeof d);
  }
  return sl_hash_bytes(v, (size_t)sl_ptype_size(t));
}

static value_set *set_new(sl_arena *a, sl_ptype t, uint32_t cap) {
  value_set *s = SL_ANEW(a, value_set);
  s->cap = cap;
  s->type = t;
  s->vsize = (uint32_t)sl_ptype_size(t);
  s->stride = 8 + ((s->vsize + 7u) & ~7u);
  s->slots = sl_arena_zalloc(a, (size_t)cap * s->stride);
  return s;
}

static void set_insert(value_set *s, const uint8_t *v, sl_arena *a);

static void set_grow(value_set *s, sl_arena *a) {
  value_set old = *s;
  s->cap *= 2;
  s->count = 0;
  s->slots = sl_arena_zalloc(a, (size_t)s->cap * s->stride);
  for (uint32_t i = 0; i < old.cap; i++) {
    uint8_t *slot = old.slots + (size_t)i * old.stride;
    if (*(uint64_t *)slot)
      set_insert(s, slot + 8, a); /* strings already live in a */
  }
}

static void set_insert(value_set *s, const uint8_t *v, sl_arena *a) {
  if ((s->count + 1) * 4 > s->cap * 3)
    set_grow(s, a);
  uint64_t h = hash_value(v, s->type) | 1;
  uint32_t mask = s->cap - 1;
  for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
    uint8_t *slot = s->slots + (size_t)i * s->stride;
    uint64_t sh = *(uint64_t *)slot;
    if (sh == 0) {
      *(uint64_t *)slot = h;
      store_value(slot + 8, v, s->type, a);
      s->count++;
      return;
    }
    if (sh == h && compare_values(slot + 8, v, s->type) == 0)
      return;
  }
}

/* ---- the set of aggregates of one operator --------------------------------
 */

/* State layouts (offsets within the aggregate's state):
 *   COUNT*, COUNT      [count i64]
 *   SUM/AVG int        [sum i64][count i64]
 *   SUM/AVG float      [sum f64][count i64]
 *   SUM/AVG decimal    [sum i128][count i64][pad]
 *   MIN/MAX            [present i64][value (up to 16)]
 *   DISTINCT (any)     [value_set* 8]
 */
static uint32_t state_size(const sl_agg_desc *d) {
  if (d->distinct)
    return 8;
  switch (d->op) {
  case SL_AGG_COUNT_STAR:
  case SL_AGG_COUNT:
    return 8;
  case SL_AGG_SUM:
  case SL_AGG_AVG:
    return (d->in_ptype == SL_P_DEC64 || d->in_ptype == SL_P_DEC128) ? 32 : 16;
  case SL_AGG_MIN:
  case SL_AGG_MAX:
    return 24;
  }
  return 8;
}

int sl_agg_set_init(sl_arena *a, sl_agg_set *set, int n,
                    const sl_agg_desc *aggs, const sl_row_layout *input,
                    sl_error *err) {
  set->n = n;
  set->input = input;
  set->aggs = SL_ANEW_N(a, sl_agg_desc, n > 0 ? n : 1);
  uint32_t off = 0;
  for (int i = 0; i < n; i++) {
    sl_agg_desc *d = &set->aggs[i];
    *d = aggs[i];
    if (d->op != SL_AGG_COUNT_STAR) {
      if (d->in_field < 0 || d->in_field >= input->nfields)
        return sl_error_set(err, SL_EINTERNAL,
                            "aggregate %d has no argument field", i);
      const sl_field *f = &input->fields[d->in_field];
      d->in_ptype = f->ptype;
      d->in_scale = f->type->kind == SL_TYPE_DECIMAL ? f->type->scale : 0;
      if ((d->op == SL_AGG_SUM || d->op == SL_AGG_AVG) &&
          !sl_type_is_numeric(f->type))
        return sl_error_set(err, SL_EUNSUPPORTED, "%s over %s is not supported",
                            d->op == SL_AGG_SUM ? "SUM" : "AVG",
                            sl_type_name(a, f->type));
    }
    d->out_ptype = sl_ptype_of(d->out_type);
    d->out_scale =
        d->out_type->kind == SL_TYPE_DECIMAL ? d->out_type->scale : 0;
    d->state_offset = off;
    d->state_size = state_size(d);
    off += d->state_size;
  }
  set->state_width = off;
  return SL_OK;
}

void sl_agg_state_init(const sl_agg_set *set, uint8_t *state) {
  memset(state, 0, set->state_width);
}

static int overflow(sl_error *err, const char *what) {
  return sl_error_set(err, SL_EINVAL,
                      "integer overflow in %s: the result does not fit its "
                      "type (CAST the argument to DECIMAL or DOUBLE)",
                      what);
}

/* SUM/AVG state += v (sign 1) or -= v (sign -1, taking a row back). */
static int add_value(const sl_agg_desc *d, uint8_t *st, const uint8_t *v,
                     int sign, sl_error *err) {
  sl_ptype t = d->in_ptype;
  if (is_float(t)) {
    *(double *)st += sign * read_double(v, t);
  } else if (t == SL_P_DEC64 || t == SL_P_DEC128) {
    i128 sum;
    memcpy(&sum, st, sizeof sum);
    sum += sign * read_i128(v, t);
    write_i128(st, sum);
  } else {
    int64_t *sum = (int64_t *)st, x = sl_int_load(v, t);
    if (sign > 0 ? __builtin_add_overflow(*sum, x, sum)
                 : __builtin_sub_overflow(*sum, x, sum))
      return overflow(err, d->op == SL_AGG_SUM ? "SUM" : "AVG");
  }
  uint32_t count_off = (t == SL_P_DEC64 || t == SL_P_DEC128) ? 16 : 8;
  *(int64_t *)(st + count_off) += sign;
  return SL_OK;
}

int sl_agg_update(const sl_agg_set *set, uint8_t *state, const uint8_t *row,
                  sl_arena *arena, sl_error *err) {
  const sl_row_layout *in = set->input;
  for (int i = 0; i < set->n; i++) {
    const sl_agg_desc *d = &set->aggs[i];
    uint8_t *st = state + d->state_offset;
    if (d->filter_field >= 0) {
      if (sl_row_is_null(row, d->filter_field) ||
          !*(row + in->fields[d->filter_field].offset))
        continue;
    }
    if (d->op == SL_AGG_COUNT_STAR) {
      (*(int64_t *)st)++;
      continue;
    }
    if (sl_row_is_null(row, d->in_field))
      continue; /* aggregates ignore NULLs */
    const uint8_t *v = row + in->fields[d->in_field].offset;
    if (d->distinct) {
      value_set **s = (value_set **)st;
      if (!*s)
        *s = set_new(arena, d->in_ptype, 8);
      set_insert(*s, v, arena);
      continue;
    }
    switch (d->op) {
    case SL_AGG_COUNT:
      (*(int64_t *)st)++;
      break;
    case SL_AGG_SUM:
    case SL_AGG_AVG: {
      int rc = add_value(d, st, v, 1, err);
      if (rc != SL_OK)
        return rc;
      break;
    }
    case SL_AGG_MIN:
    case SL_AGG_MAX: {
      int64_t *present = (int64_t *)st;
      int c = *present ? compare_values(v, st + 8, d->in_ptype) : 0;
      if (!*present || (d->op == SL_AGG_MIN ? c < 0 : c > 0)) {
        store_value(st + 8, v, d->in_ptype, arena);
        *present = 1;
      }
      break;
    }
    case SL_AGG_COUNT_STAR:
      break;
    }
  }
  return SL_OK;
}

int sl_agg_set_with_count(sl_arena *a, const sl_agg_set *base, sl_agg_set *out,
                          sl_error *err) {
  int n = base->n;
  sl_agg_desc *d = SL_ANEW_N(a, sl_agg_desc, n + 1);
  for (int i = 0; i < n; i++) {
    d[i].op = base->aggs[i].op;
    d[i].distinct = base->aggs[i].distinct;
    d[i].in_field = base->aggs[i].in_field;
    d[i].filter_field = base->aggs[i].filter_field;
    d[i].out_type = base->aggs[i].out_type;
  }
  sl_type *t = sl_type_new(a, SL_TYPE_BIGINT);
  t->not_null = true;
  d[n].op = SL_AGG_COUNT_STAR;
  d[n].in_field = d[n].filter_field = -1;
  d[n].out_type = t;
  int rc = sl_agg_set_init(a, out, n + 1, d, base->input, err);
  if (rc == SL_OK && n > 0 &&
      out->aggs[n - 1].state_offset != base->aggs[n - 1].state_offset)
    rc = sl_error_set(err, SL_EINTERNAL, "aggregate states laid out apart");
  return rc;
}

bool sl_agg_can_retract(const sl_agg_set *set) {
  for (int i = 0; i < set->n; i++)
    if (set->aggs[i].distinct || set->aggs[i].op == SL_AGG_MIN ||
        set->aggs[i].op == SL_AGG_MAX)
      return false;
  return true;
}

int sl_agg_retract(const sl_agg_set *set, uint8_t *state, const uint8_t *row,
                   sl_error *err) {
  const sl_row_layout *in = set->input;
  for (int i = 0; i < set->n; i++) {
    const sl_agg_desc *d = &set->aggs[i];
    uint8_t *st = state + d->state_offset;
    if (d->filter_field >= 0 && (sl_row_is_null(row, d->filter_field) ||
                                 !*(row + in->fields[d->filter_field].offset)))
      continue;
    if (d->op == SL_AGG_COUNT_STAR) {
      (*(int64_t *)st)--;
      continue;
    }
    if (sl_row_is_null(row, d->in_field))
      continue;
    if (d->distinct || d->op == SL_AGG_MIN || d->op == SL_AGG_MAX)
      return sl_error_set(err, SL_EUNSUPPORTED,
                          "not supported yet: taking a row back from MIN, "
                          "MAX or DISTINCT");
    const uint8_t *v = row + in->fields[d->in_field].offset;
    if (d->op == SL_AGG_COUNT) {
      (*(int64_t *)st)--;
      continue;
    }
    int rc = add_value(d, st, v, -1, err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

int sl_agg_merge(const sl_agg_set *set, uint8_t *dst, const uint8_t *src,
                 sl_arena *arena, sl_error *err) {
  for (int i = 0; i < set->n; i++) {
    const sl_agg_desc *d = &set->aggs[i];
    uint8_t *a = dst + d->state_offset;
    const uint8_t *b = src + d->state_offset;
    if (d->distinct) {
      const value_set *sb = *(value_set *const *)b;
      if (!sb)
        continue;
      value_set **sa = (value_set **)a;
      if (!*sa)
        *sa = set_new(arena, d->in_ptype, 8);
      for (uint32_t k = 0; k < sb->cap; k++) {
        const uint8_t *slot = sb->slots + (size_t)k * sb->stride;
        if (*(const uint64_t *)slot)
          set_insert(*sa, slot + 8, arena);
      }
      continue;
    }
    switch (d->op) {
    case SL_AGG_COUNT_STAR:
    case SL_AGG_COUNT:
      /* (Counts of real rows cannot overflow; partial state from another
       * process could say anything.) */
      if (__builtin_add_overflow(*(int64_t *)a, *(const int64_t *)b,
                                 (int64_t *)a))
        return overflow(err, "COUNT");
      break;
    case SL_AGG_SUM:
    case SL_AGG_AVG: {
      sl_ptype t = d->in_ptype;
      uint32_t count_off = 8;
      const char *what = d->op == SL_AGG_SUM ? "SUM" : "AVG";
      if (is_float(t)) {
        *(double *)a += *(const double *)b;
      } else if (t == SL_P_DEC64 || t == SL_P_DEC128) {
        i128 x, y, z;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        if (__builtin_add_overflow(x, y, &z))
          return overflow(err, what);
        write_i128(a, z);
        count_off = 16;
      } else if (__builtin_add_overflow(*(int64_t *)a, *(const int64_t *)b,
                                        (int64_t *)a)) {
        return overflow(err, what);
      }
      if (__builtin_add_overflow(*(int64_t *)(a + count_off),
                                 *(const int64_t *)(b + count_off),
                                 (int64_t *)(a + count_off)))
        return overflow(err, what);
      break;
    }
    case SL_AGG_MIN:
    case SL_AGG_MAX:
      if (!*(const int64_t *)b)
        break;
      if (!*(int64_t *)a ||
          (d->op == SL_AGG_MIN
               ? compare_values(b + 8, a + 8, d->in_ptype) < 0
               : compare_values(b + 8, a + 8, d->in_ptype) > 0)) {
        store_value(a + 8, b + 8, d->in_ptype, arena);
        *(int64_t *)a = 1;
      }
      break;
    }
  }
  return SL_OK;
}

/* Rescale an unscaled decimal from scale `from` to scale `to`. */
static i128 rescale(i128 v, int from, int to) {
  if (to >= from)
    return v * pow10_i128(to - from);
  i128 p = pow10_i128(from - to);
  i128 q = v / p, r = v % p;
  /* HALF_UP, as Flink's DECIMAL division */
  if (r * 2 >= p)
    q++;
  else if (r * 2 <= -p)
    q--;
  return q;
}

/* Store a numeric result into an output field of any numeric type. */
static void write_number(uint8_t *dst, sl_ptype t, int out_scale, i128 ival,
                         int in_scale, double dval, bool is_double) {
  if (t == SL_P_F64 || t == SL_P_F32) {
    double d = is_double ? dval : (double)ival / (double)pow10_i128(in_scale);
    if (t == SL_P_F32)
      *(float *)dst = (float)d;
    else
      *(double *)dst = d;
    return;
  }
  i128 v = is_double ? (i128)dval : ival;
  if (t == SL_P_DEC64 || t == SL_P_DEC128) {
    v = rescale(v, is_double ? 0 : in_scale, out_scale);
    if (t == SL_P_DEC64)
      *(int64_t *)dst = (int64_t)v;
    else
      write_i128(dst, v);
    return;
  }
  sl_int_store(dst, t, (int64_t)rescale(v, is_double ? 0 : in_scale, 0));
}

/* Finalize a plain aggregate over a state. */
static int finalize_state(const sl_agg_desc *d, const uint8_t *st,
                          sl_buffer *buf, uint8_t *row, int field,
                          sl_error *err) {
  const sl_field *f = &buf->layout->fields[field];
  uint8_t *dst = row + f->offset;
  sl_ptype in = d->in_ptype;
  bool dec = in == SL_P_DEC64 || in == SL_P_DEC128;
  switch (d->op) {
  case SL_AGG_COUNT_STAR:
  case SL_AGG_COUNT:
    sl_int_store(dst, d->out_ptype, *(const int64_t *)st);
    return SL_OK;
  case SL_AGG_SUM:
  case SL_AGG_AVG: {
    int64_t count = *(const int64_t *)(st + (dec ? 16 : 8));
    if (count == 0) {
      sl_row_set_null(row, field, true);
      return SL_OK;
    }
    if (is_float(in)) {
      double s = *(const double *)st;
      write_number(dst, d->out_ptype, d->out_scale, 0, 0,
                   d->op == SL_AGG_AVG ? s / (double)count : s, true);
      return SL_OK;
    }
    i128 s = dec ? read_i128(st, SL_P_DEC128) : *(const int64_t *)st;
    int scale = dec ? d->in_scale : 0;
    if (d->op == SL_AGG_AVG) {
      if (d->out_ptype == SL_P_F64 || d->out_ptype == SL_P_F32) {
        write_number(dst, d->out_ptype, 0, 0, 0,
                     (double)s / (double)pow10_i128(scale) / (double)count,
                     true);
        return SL_OK;
      }
      /* Integer AVG truncates toward zero, as Flink; DECIMAL AVG divides
       * at the result scale with HALF_UP. */
      if (d->out_ptype == SL_P_DEC64 || d->out_ptype == SL_P_DEC128) {
        i128 num = rescale(s, scale, d->out_scale + 1) / count;
        s = rescale(num, d->out_scale + 1, d->out_scale);
        scale = d->out_scale;
      } else {
        s = rescale(s, scale, 0) / count;
        scale = 0;
      }
    }
    if (d->out_ptype == SL_P_I64 || d->out_ptype == SL_P_I32 ||
        d->out_ptype == SL_P_I16 || d->out_ptype == SL_P_I8) {
      i128 v = rescale(s, scale, 0);
      if (v > INT64_MAX || v < INT64_MIN)
        return overflow(err, d->op == SL_AGG_SUM ? "SUM" : "AVG");
    }
    write_number(dst, d->out_ptype, d->out_scale, s, scale, 0, false);
    return SL_OK;
  }
  case SL_AGG_MIN:
  case SL_AGG_MAX:
    if (!*(const int64_t *)st) {
      sl_row_set_null(row, field, true);
      return SL_OK;
    }
    if (in == SL_P_STR) {
      const sl_str *s = (const sl_str *)(st + 8);
      if (!sl_buffer_put_str(buf, (sl_str *)dst, sl_str_data(s), s->len))
        return 1; /* heap full: the caller flushes and retries */
      return SL_OK;
    }
    memcpy(dst, st + 8, (size_t)sl_ptype_size(in));
    return SL_OK;
  }
  return SL_OK;
}

int sl_agg_finalize(const sl_agg_set *set, int i, const uint8_t *state,
                    sl_buffer *out_buf, uint8_t *out_row, int field,
                    sl_error *err) {
  const sl_agg_desc *d = &set->aggs[i];
  const uint8_t *st = state + d->state_offset;
  if (!d->distinct)
    return finalize_state(d, st, out_buf, out_row, field, err);

  /* DISTINCT: fold the set's values into a plain state, then finalize it. */
  const value_set *s = *(value_set *const *)st;
  sl_agg_desc plain = *d;
  plain.distinct = false;
  uint8_t tmp[32] = {0};
  if (s) {
    for (uint32_t k = 0; k < s->cap; k++) {
      const uint8_t *slot = s->slots + (size_t)k * s->stride;
      if (!*(const uint64_t *)slot)
        continue;
      const uint8_t *v = slot + 8;
      switch (d->op) {
      case SL_AGG_COUNT:
      case SL_AGG_COUNT_STAR:
        (*(int64_t *)tmp)++;
        break;
      case SL_AGG_SUM:
      case SL_AGG_AVG: {
        int rc = add_value(&plain, tmp, v, 1, err);
        if (rc != SL_OK)
          return rc;
        break;
      }
      case SL_AGG_MIN:
      case SL_AGG_MAX: {
        int c = *(int64_t *)tmp ? compare_values(v, tmp + 8, s->type) : 0;
        if (!*(int64_t *)tmp || (d->op == SL_AGG_MIN ? c < 0 : c > 0)) {
          memcpy(tmp + 8, v, s->vsize); /* strings stay in the set's arena */
          *(int64_t *)tmp = 1;
        }
        break;
      }
      }
    }
  }
  return finalize_state(&plain, tmp, out_buf, out_row, field, err);
}

/* ---- the wire form of a state
 * ------------------------------------------------ For moving partial states
 * between nodes (late merge across nodes).  The fixed part of a state is copied
 * as it is (every node lays states out alike: same plan, same architecture);
 * what lives outside it (long strings of MIN/MAX, DISTINCT sets) follows
 * inline: MIN/MAX of a string  [present i64][u32 len][len bytes] DISTINCT [u32
 * count] then per value its fixed bytes, or for strings [u32 len][len bytes]
 *   anything else        the state's bytes
 * Decoding checks every length against the end of the input. */

static void put_u32(sl_strbuf *out, uint32_t v) {
  sl_strbuf_appendn(out, (const char *)&v, sizeof v);
}

static void put_value(sl_strbuf *out, const uint8_t *v, sl_ptype t) {
  if (t == SL_P_STR) {
    const sl_str *s = (const sl_str *)v;
    put_u32(out, s->len);
    sl_strbuf_appendn(out, sl_str_data(s), s->len);
    return;
  }
  sl_strbuf_appendn(out, (const char *)v, (size_t)sl_ptype_size(t));
}

void sl_agg_state_encode(const sl_agg_set *set, const uint8_t *state,
                         sl_strbuf *out) {
  for (int i = 0; i < set->n; i++) {
    const sl_agg_desc *d = &set->aggs[i];
    const uint8_t *st = state + d->state_offset;
    if (d->distinct) {
      const value_set *s = *(value_set *const *)st;
      put_u32(out, s ? s->count : 0);
      for (uint32_t k = 0; s && k < s->cap; k++) {
        const uint8_t *slot = s->slots + (size_t)k * s->stride;
        if (*(const uint64_t *)slot)
          put_value(out, slot + 8, s->type);
      }
    } else if ((d->op == SL_AGG_MIN || d->op == SL_AGG_MAX) &&
               d->in_ptype == SL_P_STR) {
      sl_strbuf_appendn(out, (const char *)st, 8); /* present */
      if (*(const int64_t *)st)
        put_value(out, st + 8, SL_P_STR);
    } else {
      sl_strbuf_appendn(out, (const char *)st, d->state_size);
    }
  }
}

static bool take(const uint8_t **p, const uint8_t *end, void *dst, size_t n) {
  if ((size_t)(end - *p) < n)
    return false;
  memcpy(dst, *p, n);
  *p += n;
  return true;
}

/* A value of type t from the input into v; a long string's bytes are left
 * in the input (v points at them). */
static bool take_value(const uint8_t **p, const uint8_t *end, uint8_t *v,
                       sl_ptype t) {
  if (t != SL_P_STR)
    return take(p, end, v, (size_t)sl_ptype_size(t));
  uint32_t len;
  if (!take(p, end, &len, sizeof len) || (size_t)(end - *p) < len)
    return false;
  *(sl_str *)v = sl_str_make((const char *)*p, len);
  *p += len;
  return true;
}

int sl_agg_state_decode(const sl_agg_set *set, const uint8_t **p,
                        const uint8_t *end, uint8_t *state, sl_arena *arena,
                        sl_error *err) {
  sl_agg_state_init(set, state);
  for (int i = 0; i < set->n; i++) {
    const sl_agg_desc *d = &set->aggs[i];
    uint8_t *st = state + d->state_offset;
    bool ok = true;
    if (d->distinct) {
      uint32_t count;
      ok = take(p, end, &count, sizeof count);
      if (ok && count > 0) {
        /* At least a byte per value: a corrupt count cannot make the set
         * allocate more than the input could describe. */
        if (count > (size_t)(end - *p))
          ok = false;
        uint32_t cap = 8;
        while (ok && cap * 3 < count * 4)
          cap *= 2;
        value_set *s = ok ? set_new(arena, d->in_ptype, cap) : NULL;
        uint8_t v[16];
        for (uint32_t k = 0; ok && k < count; k++) {
          ok = take_value(p, end, v, d->in_ptype);
          if (ok)
            set_insert(s, v, arena); /* copies long strings into arena */
        }
        *(value_set **)st = s;
      }
    } else if ((d->op == SL_AGG_MIN || d->op == SL_AGG_MAX) &&
               d->in_ptype == SL_P_STR) {
      ok = take(p, end, st, 8);
      if (ok && *(int64_t *)st) {
        uint8_t v[16];
        ok = take_value(p, end, v, SL_P_STR);
        if (ok)
          store_value(st + 8, v, SL_P_STR, arena);
      }
    } else {
      ok = take(p, end, st, d->state_size);
    }
    if (!ok)
      return sl_error_set(err, SL_EINVAL,
                          "a partial state from another node is cut short or "
                          "corrupt (aggregate %d of %d)",
                          i + 1, set->n);
  }
  return SL_OK;
}
