/* interp_decimal.c - exact DECIMAL arithmetic in 128 bits.
 *
 * A DECIMAL(p, s) value is its unscaled integer v (value = v / 10^s), held
 * as __int128 in vectors whatever its storage width.  Results are computed
 * exactly at their natural scale (max(s1, s2) for + and -, s1 + s2 for *),
 * then rounded HALF_UP (away from zero on .5, as Java's BigDecimal
 * ROUND_HALF_UP that Flink uses) to the bound result scale and checked
 * against the result precision.  An intermediate beyond 38 digits is a
 * "decimal overflow" error even when the rounded result would fit; Flink's
 * BigDecimal would succeed there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_int.h"

/* 10^n for n in 0..38 without loops: 64-bit table lookups. */

static inline i128 p10(int n) {
  if (n <= 18)
    return sl_pow10_i64[n];
  if (n <= 36)
    return (i128)sl_pow10_i64[18] * sl_pow10_i64[n - 18];
  return (i128)sl_pow10_i64[18] * sl_pow10_i64[18] * sl_pow10_i64[n - 36];
}

/* q = a / b rounded HALF_UP (b > 0 or < 0, b != 0). */
static i128 div_half_up(i128 a, i128 b) {
  i128 q = a / b, r = a % b;
  if (r != 0) {
    i128 ar = r < 0 ? -r : r, ab = b < 0 ? -b : b;
    if (ab - ar <= ar) /* 2|r| >= |b| without overflow */
      q += ((a < 0) != (b < 0)) ? -1 : 1;
  }
  return q;
}

bool dec_rescale(i128 v, int from, int to, i128 *out) {
  if (to == from) {
    *out = v;
    return true;
  }
  if (to > from) {
    if (to - from > 38)
      return v == 0 ? (*out = 0, true) : false;
    return !__builtin_mul_overflow(v, p10(to - from), out);
  }
  if (from - to > 38) {
    *out = 0;
    return true;
  }
  *out = div_half_up(v, p10(from - to));
  return true;
}

bool dec_fits(i128 v, int precision) {
  if (precision >= 39)
    return true;
  i128 lim = p10(precision);
  return v < lim && v > -lim;
}

bool dec_parse(const char *s, size_t len, int scale, i128 *out) {
  size_t i = 0;
  while (i < len && (s[i] == ' ' || s[i] == '\t'))
    i++;
  while (len > i && (s[len - 1] == ' ' || s[len - 1] == '\t'))
    len--;
  bool neg = false;
  if (i < len && (s[i] == '+' || s[i] == '-'))
    neg = s[i++] == '-';
  i128 v = 0;
  int digits = 0, frac = 0;
  bool dot = false, overflow = false, round_up = false, dropped = false;
  for (; i < len; i++) {
    char ch = s[i];
    if (ch == '.' && !dot) {
      dot = true;
      continue;
    }
    if (ch < '0' || ch > '9')
      break;
    digits++;
    if (dot && frac >= scale) {
      /* beyond the target scale: only the first dropped digit rounds */
      if (!dropped)
        round_up = ch >= '5';
      dropped = true;
      continue;
    }
    if (dot)
      frac++;
    if (__builtin_mul_overflow(v, 10, &v) ||
        __builtin_add_overflow(v, ch - '0', &v))
      overflow = true;
  }
  int exp = 0;
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    /* exponents: parse exactly through a wider scale */
    i++;
    bool eneg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
      eneg = s[i++] == '-';
    if (i >= len)
      return false;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
      if (exp < 1000)
        exp = exp * 10 + (s[i] - '0');
    if (eneg)
      exp = -exp;
  }
  if (i != len || digits == 0 || overflow)
    return false;
  if (round_up)
    v += 1;
  /* v has scale frac (+ the exponent) */
  int have = frac - exp;
  if (have < -38 || have > 76)
    return v == 0 ? (*out = 0, true) : false;
  if (!dec_rescale(v, have, scale, &v))
    return false;
  *out = neg ? -v : v;
  return true;
}

int dec_format(i128 v, int scale, char *buf) {
  char tmp[64];
  int n = 0;
  bool neg = v < 0;
  /* digits from the right; -v of INT128_MIN cannot happen (38 digits) */
  unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  while (n <= scale)
    tmp[n++] = '0';
  int len = 0;
  if (neg)
    buf[len++] = '-';
  for (int i = n - 1; i >= 0; i--) {
    buf[len++] = tmp[i];
    if (i == scale && scale > 0)
      buf[len++] = '.';
  }
  buf[len] = '\0';
  return len;
}

double dec_to_double(i128 v, int scale) {
  /* exact for |v| < 2^53; otherwise correctly rounded via text */
  if (v > -((i128)1 << 53) && v < ((i128)1 << 53) && scale <= 22)
    return (double)v / (double)p10(scale);
  char buf[64];
  dec_format(v, scale, buf);
  return strtod(buf, NULL);
}

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

int ix_dec_arith1(int op, i128 u, int s1, i128 v, int s2, int s, int p,
                  i128 *out) {
  i128 r = 0;
  bool ok = true;
  int rs; /* scale of r */
  switch (op) {
  case SL_OP_ADD:
  case SL_OP_SUB: {
    rs = s1 > s2 ? s1 : s2;
    ok = dec_rescale(u, s1, rs, &u) && dec_rescale(v, s2, rs, &v);
    if (ok)
      ok = op == SL_OP_ADD ? !__builtin_add_overflow(u, v, &r)
                           : !__builtin_sub_overflow(u, v, &r);
    break;
  }
  case SL_OP_MUL:
    rs = s1 + s2;
    ok = !__builtin_mul_overflow(u, v, &r);
    break;
  case SL_OP_DIV: {
    if (v == 0)
      return IX_DEC_DIV_ZERO;
    /* r = u * 10^(s + s2 - s1) / v, rounded HALF_UP */
    int e = s + s2 - s1;
    rs = s;
    if (e >= 0) {
      i128 num;
      ok = e <= 38 && !__builtin_mul_overflow(u, p10(e), &num);
      if (ok)
        r = div_half_up(num, v);
    } else {
      i128 den;
      ok = -e <= 38 && !__builtin_mul_overflow(v, p10(-e), &den);
      if (ok)
        r = div_half_up(u, den);
    }
    break;
  }
  default: { /* MOD: exact at the larger scale, sign of the dividend */
    if (v == 0)
      return IX_DEC_DIV_ZERO;
    rs = s1 > s2 ? s1 : s2;
    ok = dec_rescale(u, s1, rs, &u) && dec_rescale(v, s2, rs, &v);
    if (ok)
      r = u % v;
    break;
  }
  }
  if (ok)
    ok = dec_rescale(r, rs, s, &r) && dec_fits(r, p);
  if (!ok)
    return IX_DEC_OVERFLOW;
  *out = r;
  return 0;
}

int ix_eval_dec_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact) {
  const inode *x = n->args[0], *y = n->args[1];
  const ivec *a = ix_vec(c, x), *b = ix_vec(c, y);
  ivec *o = ix_vec(c, n);
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    int rc = ix_dec_arith1(n->op, a->v.d[i], x->scale, b->v.d[i], y->scale,
                           n->scale, n->prec, &o->v.d[i]);
    if (rc == IX_DEC_DIV_ZERO)
      return ix_error(c, n, SL_EINVAL, "division by zero");
    if (rc)
      return ix_error(c, n, SL_EINVAL, "decimal overflow");
  }
  return SL_OK;
}

i128 dec_pow10(int n) {
  return p10(n);
}
