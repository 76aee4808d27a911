/* interp_inset.c - `x IN (constants)` as one hashed probe per row.
 *
 * Generated SQL writes IN lists of thousands of literals; compared one by
 * one they cost a node, a vector slot and a comparison per literal per
 * row (and, in the JIT, code per literal).  The interpreter's compiler puts
 * the constants, converted to the comparison's common type, into this
 * open-addressing set; the interpreter and the JIT (through a helper) probe
 * it.  Equality is exactly the interpreter's comparison's: integers and
 * DECIMALs (one scale) by value, DOUBLEs with -0.0 = 0.0 and NaN = NaN (as
 * compare_vec orders NaN), strings byte for byte.  A NULL among the
 * constants is remembered (has_null) for SQL's three-valued result.
 */
#include <math.h>
#include <string.h>

#include "interp_int.h"

struct ix_inset {
  irep rep;
  bool has_null;
  uint64_t mask; /* capacity - 1 */
  uint64_t n;
  uint8_t *used;
  union {
    int64_t *i;
    double *f;
    i128 *d;
    sl_str *s;
  } keys;
};

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* -0.0 is 0.0 and every NaN is one NaN, as the comparison has them. */
static double canonical(double d) {
  if (isnan(d))
    return NAN;
  return d == 0.0 ? 0.0 : d;
}

static uint64_t hash_of(const ix_inset *s, const void *v) {
  switch (s->rep) {
  case R_I64:
    return mix64((uint64_t) * (const int64_t *)v);
  case R_F64: {
    double d = canonical(*(const double *)v);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return mix64(bits);
  }
  case R_DEC: {
    i128 d = *(const i128 *)v;
    return mix64((uint64_t)d ^ mix64((uint64_t)((unsigned __int128)d >> 64)));
  }
  case R_STR: {
    const sl_str *x = v;
    return sl_hash_bytes(sl_str_data(x), x->len);
  }
  }
  return 0;
}

static bool equal_at(const ix_inset *s, uint64_t slot, const void *v) {
  switch (s->rep) {
  case R_I64:
    return s->keys.i[slot] == *(const int64_t *)v;
  case R_F64: {
    double x = s->keys.f[slot], y = *(const double *)v;
    return isnan(x) ? isnan(y) : x == y;
  }
  case R_DEC:
    return s->keys.d[slot] == *(const i128 *)v;
  case R_STR:
    return sl_str_equal(&s->keys.s[slot], v);
  }
  return false;
}

ix_inset *ix_inset_new(sl_arena *a, irep rep, uint64_t expected) {
  ix_inset *s = SL_ANEW(a, ix_inset);
  s->rep = rep;
  uint64_t cap = 16;
  while (cap < expected * 2)
    cap *= 2;
  s->mask = cap - 1;
  s->used = sl_arena_zalloc(a, cap);
  size_t width = rep == R_I64   ? sizeof(int64_t)
                 : rep == R_F64 ? sizeof(double)
                 : rep == R_DEC ? sizeof(i128)
                                : sizeof(sl_str);
  s->keys.i = sl_arena_zalloc(a, width * cap);
  return s;
}

void ix_inset_add_null(ix_inset *s) {
  s->has_null = true;
}

bool ix_inset_add(ix_inset *s, const void *v) {
  if ((s->n + 1) * 2 > s->mask + 1)
    return false; /* more than the caller said: it keeps the value itself */
  uint64_t slot = hash_of(s, v) & s->mask;
  while (s->used[slot]) {
    if (equal_at(s, slot, v))
      return true;
    slot = (slot + 1) & s->mask;
  }
  s->used[slot] = 1;
  s->n++;
  switch (s->rep) {
  case R_I64:
    s->keys.i[slot] = *(const int64_t *)v;
    break;
  case R_F64:
    s->keys.f[slot] = canonical(*(const double *)v);
    break;
  case R_DEC:
    s->keys.d[slot] = *(const i128 *)v;
    break;
  case R_STR:
    s->keys.s[slot] = *(const sl_str *)v;
    break;
  }
  return true;
}

bool ix_inset_has(const ix_inset *s, const void *v) {
  uint64_t slot = hash_of(s, v) & s->mask;
  while (s->used[slot]) {
    if (equal_at(s, slot, v))
      return true;
    slot = (slot + 1) & s->mask;
  }
  return false;
}

bool ix_inset_has_null(const ix_inset *s) {
  return s->has_null;
}

uint64_t ix_inset_size(const ix_inset *s) {
  return s->n;
}
