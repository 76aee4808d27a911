/* interp_arith.c - arithmetic, negation, comparisons, IN lists and the
 * numeric functions (ABS, FLOOR, CEIL, ROUND, POWER, SQRT, LN, LOG10, EXP,
 * HASH_CODE).
 *
 * Integers of every width are int64 in vectors; overflow is checked against
 * the bound result type's range (TINYINT..BIGINT), so INT + INT that leaves
 * the INT range is an error as it would be in BIGINT.  (Flink/Java would
 * wrap silently; Sluice prefers an error to a wrong answer.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_int.h"

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

void ix_int_range(const sl_type *t, int64_t *lo, int64_t *hi) {
  switch (t->kind) {
  case SL_TYPE_BOOLEAN:
    *lo = 0, *hi = 1;
    break;
  case SL_TYPE_TINYINT:
    *lo = INT8_MIN, *hi = INT8_MAX;
    break;
  case SL_TYPE_SMALLINT:
    *lo = INT16_MIN, *hi = INT16_MAX;
    break;
  case SL_TYPE_INT:
  case SL_TYPE_DATE:
  case SL_TYPE_TIME:
  case SL_TYPE_INTERVAL_YEAR_MONTH:
    *lo = INT32_MIN, *hi = INT32_MAX;
    break;
  default:
    *lo = INT64_MIN, *hi = INT64_MAX;
    break;
  }
}

static int overflow(sl_expr_ctx *c, const inode *n) {
  return ix_error(c, n, SL_EINVAL, "integer overflow");
}

static int int_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact) {
  const ivec *a = ix_vec(c, n->args[0]), *b = ix_vec(c, n->args[1]);
  ivec *o = ix_vec(c, n);
  const int64_t lo = n->lo, hi = n->hi;
  const int64_t *x = a->v.i, *y = b->v.i;
  int64_t *r = o->v.i;
  bool bad = false;
  switch (n->op) {
  case SL_OP_ADD:
    /* NULL positions compute on whatever is there; only non-NULL count */
    FOR_ACT(i) {
      bad |= (__builtin_add_overflow(x[i], y[i], &r[i]) || r[i] < lo ||
              r[i] > hi) &
             !o->null[i];
    }
    break;
  case SL_OP_SUB:
    FOR_ACT(i) {
      bad |= (__builtin_sub_overflow(x[i], y[i], &r[i]) || r[i] < lo ||
              r[i] > hi) &
             !o->null[i];
    }
    break;
  case SL_OP_MUL:
    FOR_ACT(i) {
      bad |= (__builtin_mul_overflow(x[i], y[i], &r[i]) || r[i] < lo ||
              r[i] > hi) &
             !o->null[i];
    }
    break;
  case SL_OP_DIV:
  case SL_OP_MOD:
    FOR_ACT(i) {
      if (o->null[i])
        continue;
      if (y[i] == 0)
        return ix_error(c, n, SL_EINVAL, "division by zero");
      if (y[i] == -1) { /* INT64_MIN / -1 traps in C */
        if (n->op == SL_OP_MOD) {
          r[i] = 0;
          continue;
        }
        if (x[i] == INT64_MIN || -x[i] < lo || -x[i] > hi)
          return overflow(c, n);
        r[i] = -x[i];
        continue;
      }
      r[i] = n->op == SL_OP_DIV ? x[i] / y[i] : x[i] % y[i];
    }
    break;
  default:
    return ix_error(c, n, SL_EINTERNAL, "internal error: bad operator");
  }
  return bad ? overflow(c, n) : SL_OK;
}

static int dbl_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact) {
  const double *x = ix_vec(c, n->args[0])->v.f, *y = ix_vec(c, n->args[1])->v.f;
  double *r = ix_vec(c, n)->v.f;
  switch (n->op) {
  case SL_OP_ADD:
    FOR_ACT(i) {
      r[i] = x[i] + y[i];
    }
    break;
  case SL_OP_SUB:
    FOR_ACT(i) {
      r[i] = x[i] - y[i];
    }
    break;
  case SL_OP_MUL:
    FOR_ACT(i) {
      r[i] = x[i] * y[i];
    }
    break;
  case SL_OP_DIV:
    FOR_ACT(i) {
      r[i] = x[i] / y[i];
    }
    break;
  default:
    FOR_ACT(i) {
      r[i] = fmod(x[i], y[i]);
    }
    break;
  }
  if (n->type->kind == SL_TYPE_FLOAT)
    FOR_ACT(i) {
      r[i] = (float)r[i];
    }
  return SL_OK;
}

int ix_eval_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                  uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  switch (n->rep) {
  case R_I64:
    return int_arith(c, n, act, nact);
  case R_F64:
    return dbl_arith(c, n, act, nact);
  case R_DEC:
    return ix_eval_dec_arith(c, n, act, nact);
  default:
    return ix_error(c, n, SL_EINTERNAL, "internal error: string arithmetic");
  }
}

int ix_eval_neg(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  const ivec *a = ix_vec(c, n->args[0]);
  ivec *o = ix_vec(c, n);
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    switch (n->rep) {
    case R_I64:
      if (a->v.i[i] == INT64_MIN || -a->v.i[i] < n->lo || -a->v.i[i] > n->hi)
        return overflow(c, n);
      o->v.i[i] = -a->v.i[i];
      break;
    case R_F64:
      o->v.f[i] = -a->v.f[i];
      break;
    case R_DEC:
      if (!dec_rescale(-a->v.d[i], n->args[0]->scale, n->scale, &o->v.d[i]) ||
          !dec_fits(o->v.d[i], n->prec))
        return ix_error(c, n, SL_EINVAL, "decimal overflow");
      break;
    case R_STR:
      break;
    }
  }
  return SL_OK;
}

/* ---- comparisons ------------------------------------------------------------
 */

static inline int64_t cmp_result(int op, int c3) {
  switch (op) {
  case SL_OP_EQ:
    return c3 == 0;
  case SL_OP_NE:
    return c3 != 0;
  case SL_OP_LT:
    return c3 < 0;
  case SL_OP_LE:
    return c3 <= 0;
  case SL_OP_GT:
    return c3 > 0;
  default:
    return c3 >= 0;
  }
}

#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

/* Compare x (vector) with y (vector, or the constant node yc). */
static void compare_vec(const ivec *a, const ivec *b, const inode *yc, irep rep,
                        int op, ivec *o, const uint16_t *act, uint32_t nact) {
  switch (rep) {
  case R_I64:
    if (yc) {
      const int64_t y = yc->ci;
      FOR_ACT(i) {
        o->v.i[i] = cmp_result(op, CMP3(a->v.i[i], y));
      }
    } else {
      FOR_ACT(i) {
        o->v.i[i] = cmp_result(op, CMP3(a->v.i[i], b->v.i[i]));
      }
    }
    break;
  case R_F64:
    /* SQL: NaN compares equal to itself and greater than any number (as
     * Java's Double.compare, which Flink uses for ordering). */
    FOR_ACT(i) {
      double x = a->v.f[i], y = yc ? yc->cf : b->v.f[i];
      int c3 = isnan(x) || isnan(y) ? (isnan(x) - isnan(y)) : CMP3(x, y);
      o->v.i[i] = cmp_result(op, c3);
    }
    break;
  case R_DEC:
    FOR_ACT(i) {
      i128 y = yc ? yc->cd : b->v.d[i];
      o->v.i[i] = cmp_result(op, CMP3(a->v.d[i], y));
    }
    break;
  case R_STR:
    if (op == SL_OP_EQ || op == SL_OP_NE) {
      const int64_t want = op == SL_OP_EQ;
      FOR_ACT(i) {
        if (o->null[i])
          continue;
        const sl_str *y = yc ? &yc->cs : &b->v.s[i];
        o->v.i[i] = sl_str_equal(&a->v.s[i], y) == want;
      }
    } else {
      FOR_ACT(i) {
        if (o->null[i])
          continue;
        const sl_str *y = yc ? &yc->cs : &b->v.s[i];
        o->v.i[i] = cmp_result(op, sl_str_compare(&a->v.s[i], y));
      }
    }
    break;
  }
}

int ix_eval_cmp(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                uint32_t nact) {
  const inode *x = n->args[0], *y = n->args[1];
  ivec *o = ix_vec(c, n);
  int rc = ix_eval(c, x, act, nact);
  if (rc)
    return rc;
  const ivec *a = ix_vec(c, x);
  /* A constant right operand is read directly, not spread into a vector
   * (the common `col = 'literal'` predicate). */
  const inode *yc = y->kind == N_CONST ? y : NULL;
  if (yc) {
    const uint8_t yn = y->cnull;
    FOR_ACT(i) {
      o->null[i] = a->null[i] | yn;
    }
    if (yn)
      return SL_OK;
  } else {
    rc = ix_eval(c, y, act, nact);
    if (rc)
      return rc;
    const uint8_t *bn = ix_vec(c, y)->null;
    FOR_ACT(i) {
      o->null[i] = a->null[i] | bn[i];
    }
  }
  compare_vec(a, yc ? NULL : ix_vec(c, y), yc, x->rep, n->op, o, act, nact);
  return SL_OK;
}

/* x IN (v1, ...): TRUE if some vi = x; else NULL if x or some vi is NULL;
 * else FALSE.  NOT IN negates that (NULL stays NULL). */
int ix_eval_in(sl_expr_ctx *c, const inode *n, const uint16_t *act,
               uint32_t nact) {
  ivec *o = ix_vec(c, n);
  int rc = ix_eval(c, n->args[0], act, nact);
  if (rc)
    return rc;
  const ivec *a = ix_vec(c, n->args[0]);
  uint8_t *found = ix_alloc(c, VEC), *anynull = ix_alloc(c, VEC);
  int64_t *eq = ix_alloc(c, sizeof(int64_t) * VEC);
  ivec tmp = {.null = ix_alloc(c, VEC), .v.i = eq};
  FOR_ACT(i) {
    found[i] = 0;
    anynull[i] = a->null[i];
    tmp.null[i] = a->null[i];
  }
  const ix_inset *set = n->aux;
  if (set) { /* the constants: one probe per row */
    const bool has_null = ix_inset_has_null(set);
    const irep rep = n->args[0]->rep;
    FOR_ACT(i) {
      if (a->null[i])
        continue;
      const void *v = rep == R_I64   ? (const void *)&a->v.i[i]
                      : rep == R_F64 ? (const void *)&a->v.f[i]
                      : rep == R_DEC ? (const void *)&a->v.d[i]
                                     : (const void *)&a->v.s[i];
      found[i] = ix_inset_has(set, v);
      anynull[i] |= has_null;
    }
  }
  for (int k = 1; k < n->nargs; k++) {
    const inode *y = n->args[k];
    const inode *yc = y->kind == N_CONST ? y : NULL;
    const ivec *b = NULL;
    if (yc) {
      if (yc->cnull) {
        FOR_ACT(i) {
          anynull[i] = 1;
        }
        continue;
      }
    } else {
      rc = ix_eval(c, y, act, nact);
      if (rc)
        return rc;
      b = ix_vec(c, y);
    }
    FOR_ACT(i) {
      tmp.null[i] = a->null[i] | (b ? b->null[i] : 0);
    }
    compare_vec(a, b, yc, n->args[0]->rep, SL_OP_EQ, &tmp, act, nact);
    FOR_ACT(i) {
      if (tmp.null[i])
        anynull[i] = 1;
      else
        found[i] |= eq[i] != 0;
    }
  }
  FOR_ACT(i) {
    o->null[i] = !found[i] && anynull[i];
    o->v.i[i] = found[i] != n->negated;
  }
  return SL_OK;
}

/* ---- numeric functions ------------------------------------------------------
 */

/* Java's BigDecimal.valueOf(d).setScale(digits, HALF_UP): round the
 * shortest decimal text of d, not its binary value (2.675 -> 2.68). */
static double round_double(double d, int64_t digits) {
  if (!isfinite(d) || digits > 300)
    return d;
  if (digits < -300)
    return 0.0 * d;
  char buf[64];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  if (fabs(d) < 1e30 && digits >= 0 && digits <= 30) {
    i128 v;
    if (dec_parse(buf, strlen(buf), (int)digits, &v))
      return dec_to_double(v, (int)digits);
  }
  double f = pow(10.0, (double)digits);
  return round(d * f) / f;
}

static int32_t java_long_hash(int64_t v) {
  return (int32_t)(v ^ (int64_t)((uint64_t)v >> 32));
}

/* Java's String.hashCode over UTF-16 code units of the UTF-8 bytes. */
static int32_t java_string_hash(const char *p, uint32_t len) {
  uint32_t h = 0;
  const unsigned char *s = (const unsigned char *)p;
  for (uint32_t i = 0; i < len;) {
    uint32_t cp = s[i];
    int extra = cp < 0x80 ? 0 : cp < 0xE0 ? 1 : cp < 0xF0 ? 2 : 3;
    if (extra)
      cp &= 0x3F >> extra;
    i++;
    for (int k = 0; k < extra && i < len; k++, i++)
      cp = (cp << 6) | (s[i] & 0x3F);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      h = h * 31 + (0xD800 + (cp >> 10));
      h = h * 31 + (0xDC00 + (cp & 0x3FF));
    } else {
      h = h * 31 + cp;
    }
  }
  return (int32_t)h;
}

static int32_t hash_value(const inode *x, const ivec *a, uint32_t i) {
  switch (x->rep) {
  case R_I64:
    switch (x->type->kind) {
    case SL_TYPE_BOOLEAN:
      return a->v.i[i] ? 1231 : 1237;
    case SL_TYPE_BIGINT:
    case SL_TYPE_TIMESTAMP:
    case SL_TYPE_TIMESTAMP_LTZ:
    case SL_TYPE_INTERVAL_DAY_TIME:
      return java_long_hash(a->v.i[i]);
    default:
      return (int32_t)a->v.i[i];
    }
  case R_F64: {
    if (x->type->kind == SL_TYPE_FLOAT) {
      float f = (float)a->v.f[i];
      int32_t bits;
      memcpy(&bits, &f, 4);
      return bits;
    }
    double d = a->v.f[i];
    int64_t bits;
    memcpy(&bits, &d, 8);
    return java_long_hash(bits);
  }
  case R_DEC: {
    i128 v = a->v.d[i];
    return java_long_hash((int64_t)v ^ (int64_t)(v >> 64)) * 31 + x->scale;
  }
  case R_STR:
    return java_string_hash(sl_str_data(&a->v.s[i]), a->v.s[i].len);
  }
  return 0;
}

static i128 dec_floor_div(i128 v, i128 d, bool ceil_) {
  i128 q = v / d, r = v % d;
  if (r != 0 && ((r < 0) != ceil_))
    q += ceil_ ? 1 : -1;
  return q;
}

int ix_eval_math(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  const inode *x = n->args[0];
  const ivec *a = ix_vec(c, x);
  const ivec *b = n->nargs > 1 ? ix_vec(c, n->args[1]) : NULL;
  ivec *o = ix_vec(c, n);
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    switch (n->fn) {
    case F_ABS:
      if (n->rep == R_I64) {
        int64_t v = a->v.i[i];
        if (v == INT64_MIN || (v < 0 && -v > n->hi))
          return overflow(c, n);
        o->v.i[i] = v < 0 ? -v : v;
      } else if (n->rep == R_F64) {
        o->v.f[i] = fabs(a->v.f[i]);
      } else {
        i128 v = a->v.d[i];
        if (!dec_rescale(v < 0 ? -v : v, x->scale, n->scale, &o->v.d[i]) ||
            !dec_fits(o->v.d[i], n->prec))
          return ix_error(c, n, SL_EINVAL, "decimal overflow");
      }
      break;
    case F_FLOOR:
    case F_CEIL:
      if (n->rep == R_I64) {
        o->v.i[i] = a->v.i[i];
      } else if (n->rep == R_F64) {
        o->v.f[i] = n->fn == F_FLOOR ? floor(a->v.f[i]) : ceil(a->v.f[i]);
      } else {
        i128 q = dec_floor_div(a->v.d[i], dec_pow10(x->scale), n->fn == F_CEIL);
        if (!dec_rescale(q, 0, n->scale, &o->v.d[i]) ||
            !dec_fits(o->v.d[i], n->prec))
          return ix_error(c, n, SL_EINVAL, "decimal overflow");
      }
      break;
    case F_ROUND: {
      int64_t d = b ? b->v.i[i] : 0;
      if (n->rep == R_I64) {
        int64_t v = a->v.i[i];
        if (d >= 0) {
          o->v.i[i] = v;
        } else if (d < -18) {
          o->v.i[i] = 0;
        } else {
          i128 r;
          dec_rescale(v, 0, (int)d, &r); /* HALF_UP to 10^-d */
          r *= dec_pow10((int)-d);
          if (r < n->lo || r > n->hi)
            return overflow(c, n);
          o->v.i[i] = (int64_t)r;
        }
      } else if (n->rep == R_F64) {
        o->v.f[i] = round_double(a->v.f[i], d);
        if (n->type->kind == SL_TYPE_FLOAT)
          o->v.f[i] = (float)o->v.f[i];
      } else {
        i128 v = a->v.d[i], r;
        int s = x->scale;
        if (d < s) {
          int keep = d < -38 ? -38 : (int)d;
          dec_rescale(v, s, keep, &r); /* HALF_UP */
          if (keep < 0) {
            if (!dec_rescale(r, 0, -keep, &r))
              return ix_error(c, n, SL_EINVAL, "decimal overflow");
            keep = 0;
          }
          v = r;
          s = keep;
        }
        if (!dec_rescale(v, s, n->scale, &r) || !dec_fits(r, n->prec))
          return ix_error(c, n, SL_EINVAL, "decimal overflow");
        o->v.d[i] = r;
      }
      break;
    }
    case F_POWER:
      o->v.f[i] = pow(a->v.f[i], b->v.f[i]);
      break;
    case F_SQRT:
      o->v.f[i] = sqrt(a->v.f[i]);
      break;
    case F_LN:
      o->v.f[i] = log(a->v.f[i]);
      break;
    case F_LOG10:
      o->v.f[i] = log10(a->v.f[i]);
      break;
    case F_EXP:
      o->v.f[i] = exp(a->v.f[i]);
      break;
    case F_HASH_CODE:
      o->v.i[i] = hash_value(x, a, i);
      break;
    default:
      return ix_error(c, n, SL_EINTERNAL, "internal error: bad function");
    }
  }
  return SL_OK;
}
