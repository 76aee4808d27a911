/* interp_cast.c - CAST and TRY_CAST between all castable types, and the
 * implicit coercions the compiler inserts (same code, never failing except
 * on overflow).
 *
 * Failures (unparsable text, out-of-range numbers) are errors for CAST and
 * NULL for TRY_CAST.  Numbers to integers truncate toward zero (Java);
 * to DECIMAL they round HALF_UP; text is trimmed of blanks before parsing.
 * Text forms follow Flink: TRUE/FALSE, DOUBLE like Java's Double.toString
 * ("1.0", "1.0E10"), DECIMAL with all its scale digits, TIMESTAMP with as
 * many fraction digits as its precision.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "interp_int.h"
#include "sluice/common/strbuf.h"

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

int ix_kind_class(const sl_type *t) {
  switch (t->kind) {
  case SL_TYPE_NULL:
    return K_NULL;
  case SL_TYPE_BOOLEAN:
    return K_BOOL;
  case SL_TYPE_TINYINT:
  case SL_TYPE_SMALLINT:
  case SL_TYPE_INT:
  case SL_TYPE_BIGINT:
    return K_INT;
  case SL_TYPE_FLOAT:
  case SL_TYPE_DOUBLE:
    return K_FLT;
  case SL_TYPE_DECIMAL:
    return K_DEC;
  case SL_TYPE_CHAR:
  case SL_TYPE_VARCHAR:
    return K_STR;
  case SL_TYPE_DATE:
    return K_DATE;
  case SL_TYPE_TIME:
    return K_TIME;
  case SL_TYPE_TIMESTAMP:
  case SL_TYPE_TIMESTAMP_LTZ:
    return K_TS;
  case SL_TYPE_INTERVAL_DAY_TIME:
    return K_IVDT;
  case SL_TYPE_INTERVAL_YEAR_MONTH:
    return K_IVYM;
  default:
    return K_OTHER;
  }
}

int ix_format_double(double d, bool is_float, char *buf) {
  if (isnan(d))
    return sprintf(buf, "NaN");
  if (isinf(d))
    return sprintf(buf, d < 0 ? "-Infinity" : "Infinity");
  if (d == 0)
    return sprintf(buf, signbit(d) ? "-0.0" : "0.0");
  /* shortest digits that read back as the same value */
  char e[40];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    double back = strtod(e, NULL);
    if (is_float ? (float)back == (float)d : back == d)
      break;
  }
  /* e = "-d.ddde+XX": collect the digits and the exponent */
  char digits[24];
  int nd = 0, len = 0;
  const char *p = e;
  bool neg = *p == '-';
  if (neg)
    p++;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9')
      digits[nd++] = *p;
  int exp = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  if (neg)
    buf[len++] = '-';
  double ad = fabs(d);
  if (ad >= 1e-3 && ad < 1e7) {
    if (exp >= 0) {
      for (int i = 0; i <= exp; i++)
        buf[len++] = i < nd ? digits[i] : '0';
      buf[len++] = '.';
      if (nd > exp + 1)
        for (int i = exp + 1; i < nd; i++)
          buf[len++] = digits[i];
      else
        buf[len++] = '0';
    } else {
      buf[len++] = '0';
      buf[len++] = '.';
      for (int i = 0; i < -exp - 1; i++)
        buf[len++] = '0';
      for (int i = 0; i < nd; i++)
        buf[len++] = digits[i];
    }
  } else {
    buf[len++] = digits[0];
    buf[len++] = '.';
    if (nd > 1)
      for (int i = 1; i < nd; i++)
        buf[len++] = digits[i];
    else
      buf[len++] = '0';
    len += sprintf(buf + len, "E%d", exp);
  }
  buf[len] = '\0';
  return len;
}

static int format_interval(int64_t v, bool ym, char *buf) {
  char sign = v < 0 ? '-' : '+';
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  if (ym)
    return sprintf(buf, "%c%llu-%02llu", sign, (unsigned long long)(u / 12),
                   (unsigned long long)(u % 12));
  uint64_t ms = u % 1000, s = u / 1000;
  return sprintf(buf, "%c%llu %02llu:%02llu:%02llu.%03llu", sign,
                 (unsigned long long)(s / 86400),
                 (unsigned long long)(s / 3600 % 24),
                 (unsigned long long)(s / 60 % 60),
                 (unsigned long long)(s % 60), (unsigned long long)ms);
}

static void trim_blanks(const char **p, uint32_t *len) {
  while (*len && (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r'))
    (*p)++, (*len)--;
  while (*len && ((*p)[*len - 1] == ' ' || (*p)[*len - 1] == '\t' ||
                  (*p)[*len - 1] == '\n' || (*p)[*len - 1] == '\r'))
    (*len)--;
}

static bool parse_int(const char *p, uint32_t len, int64_t *out) {
  trim_blanks(&p, &len);
  uint32_t i = 0;
  bool neg = false;
  if (i < len && (p[i] == '+' || p[i] == '-'))
    neg = p[i++] == '-';
  if (i == len)
    return false;
  uint64_t v = 0;
  for (; i < len; i++) {
    if (p[i] < '0' || p[i] > '9')
      return false;
    if (v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(p[i] - '0');
  }
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
    return false;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

static bool parse_double(const char *p, uint32_t len, double *out) {
  trim_blanks(&p, &len);
  char buf[128];
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy(buf, p, len);
  buf[len] = '\0';
  if (strcmp(buf, "NaN") == 0) {
    *out = NAN;
    return true;
  }
  if (strcmp(buf, "Infinity") == 0 || strcmp(buf, "+Infinity") == 0) {
    *out = INFINITY;
    return true;
  }
  if (strcmp(buf, "-Infinity") == 0) {
    *out = -INFINITY;
    return true;
  }
  for (uint32_t i = 0; i < len; i++) /* no hex, inf, nan spellings of C */
    if (!strchr("0123456789+-.eE", buf[i]))
      return false;
  char *end;
  *out = strtod(buf, &end);
  /* Too large for a DOUBLE is out of range, not an infinity nobody wrote
   * (the spelled-out ones are above). */
  return end == buf + len && !isinf(*out);
}

static bool parse_bool(const char *p, uint32_t len, int64_t *out) {
  trim_blanks(&p, &len);
  static const char *const t[] = {"true", "t", "yes", "y", "1"};
  static const char *const f[] = {"false", "f", "no", "n", "0"};
  for (int i = 0; i < 5; i++) {
    if (len == strlen(t[i]) && strncasecmp(p, t[i], len) == 0)
      return (*out = 1), true;
    if (len == strlen(f[i]) && strncasecmp(p, f[i], len) == 0)
      return (*out = 0), true;
  }
  return false;
}

/* Apply VARCHAR(n) truncation / CHAR(n) padding of an explicit CAST. */
static sl_str fit_length(sl_expr_ctx *c, const sl_type *t, sl_str s) {
  if (t->precision < 0)
    return s;
  const char *p = sl_str_data(&s);
  uint32_t chars = 0, i = 0;
  while (i < s.len && chars < (uint32_t)t->precision) {
    i++;
    while (i < s.len && ((unsigned char)p[i] & 0xC0) == 0x80)
      i++;
    chars++;
  }
  if (i < s.len)
    return ix_str(c, p, i);
  if (t->kind == SL_TYPE_CHAR && chars < (uint32_t)t->precision) {
    uint32_t pad = (uint32_t)t->precision - chars;
    char *b = ix_strbuf(c, s.len + pad);
    memcpy(b, p, s.len);
    memset(b + s.len, ' ', pad);
    return ix_str(c, b, s.len + pad);
  }
  return s;
}

/* Text of value i of a (source type class k). */
static sl_str to_text(sl_expr_ctx *c, const inode *x, int k, const ivec *a,
                      uint32_t i) {
  char buf[96];
  int len = 0;
  switch (k) {
  case K_BOOL:
    len = sprintf(buf, "%s", a->v.i[i] ? "TRUE" : "FALSE");
    break;
  case K_INT:
    len = sprintf(buf, "%lld", (long long)a->v.i[i]);
    break;
  case K_FLT:
    len = ix_format_double(a->v.f[i], x->type->kind == SL_TYPE_FLOAT, buf);
    break;
  case K_DEC:
    len = dec_format(a->v.d[i], x->scale, buf);
    break;
  case K_DATE:
    len = ix_format_date(a->v.i[i], buf);
    break;
  case K_TIME:
    len = ix_format_time(a->v.i[i], x->type->precision, buf);
    break;
  case K_TS:
    len = ix_format_timestamp(a->v.i[i], x->type->precision, buf);
    break;
  case K_IVDT:
  case K_IVYM:
    len = format_interval(a->v.i[i], k == K_IVYM, buf);
    break;
  case K_STR:
    return a->v.s[i];
  default:
    break;
  }
  return ix_str(c, buf, (uint32_t)len);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Convert value i; 0 = ok, 1 = cannot (bad text or out of range). */
static int convert(sl_expr_ctx *c, const inode *n, int from, int to,
                   const ivec *a, uint32_t i, ivec *o) {
  const inode *x = n->args[0];
  if (to == K_STR) {
    sl_str s = to_text(c, x, from, a, i);
    o->v.s[i] = n->op ? fit_length(c, n->type, s) : s;
    return 0;
  }
  if (from == K_STR) {
    const char *p = sl_str_data(&a->v.s[i]);
    uint32_t len = a->v.s[i].len;
    int64_t v;
    double d;
    switch (to) {
    case K_BOOL:
      return parse_bool(p, len, &o->v.i[i]) ? 0 : 1;
    case K_INT:
      if (!parse_int(p, len, &v) || v < n->lo || v > n->hi)
        return 1;
      o->v.i[i] = v;
      return 0;
    case K_FLT:
      if (!parse_double(p, len, &d) ||
          (n->type->kind == SL_TYPE_FLOAT && !isinf(d) && isinf((float)d)))
        return 1;
      o->v.f[i] = n->type->kind == SL_TYPE_FLOAT ? (float)d : d;
      return 0;
    case K_DEC:
      return dec_parse(p, len, n->scale, &o->v.d[i]) &&
                     dec_fits(o->v.d[i], n->prec)
                 ? 0
                 : 1;
    case K_DATE:
      trim_blanks(&p, &len);
      return ix_parse_date(p, len, &o->v.i[i]) ? 0 : 1;
    case K_TIME:
      trim_blanks(&p, &len);
      return ix_parse_time(p, len, &o->v.i[i]) ? 0 : 1;
    case K_TS:
      trim_blanks(&p, &len);
      if (!ix_parse_timestamp(p, len, &v))
        return 1;
      break; /* precision below */
    default:
      return 1;
    }
    a = NULL;
    o->v.i[i] = v;
    from = K_TS;
  }
  /* numbers and booleans */
  if (from == K_BOOL || from == K_INT) {
    int64_t v = a->v.i[i];
    switch (to) {
    case K_BOOL:
      o->v.i[i] = v != 0;
      return 0;
    case K_INT:
      if (v < n->lo || v > n->hi)
        return 1;
      o->v.i[i] = v;
      return 0;
    case K_FLT:
      o->v.f[i] = n->type->kind == SL_TYPE_FLOAT ? (double)(float)v : (double)v;
      return 0;
    case K_DEC:
      return dec_rescale(v, 0, n->scale, &o->v.d[i]) &&
                     dec_fits(o->v.d[i], n->prec)
                 ? 0
                 : 1;
    default:
      break;
    }
  }
  if (from == K_FLT) {
    double d = a->v.f[i];
    switch (to) {
    case K_BOOL:
      o->v.i[i] = d != 0;
      return 0;
    case K_INT:
      /* [-2^63, 2^63) is exactly representable; NaN fails both tests */
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return 1;
      if ((int64_t)d < n->lo || (int64_t)d > n->hi)
        return 1;
      o->v.i[i] = (int64_t)d;
      return 0;
    case K_FLT:
      o->v.f[i] = n->type->kind == SL_TYPE_FLOAT ? (double)(float)d : d;
      return 0;
    case K_DEC: {
      if (!isfinite(d))
        return 1;
      char buf[64];
      for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
          break;
      }
      return dec_parse(buf, strlen(buf), n->scale, &o->v.d[i]) &&
                     dec_fits(o->v.d[i], n->prec)
                 ? 0
                 : 1;
    }
    default:
      break;
    }
  }
  if (from == K_DEC) {
    i128 v = a->v.d[i];
    switch (to) {
    case K_BOOL:
      o->v.i[i] = v != 0;
      return 0;
    case K_INT: {
      i128 t = v / dec_pow10(x->scale); /* toward zero */
      if (t < n->lo || t > n->hi)
        return 1;
      o->v.i[i] = (int64_t)t;
      return 0;
    }
    case K_FLT: {
      double d = dec_to_double(v, x->scale);
      o->v.f[i] = n->type->kind == SL_TYPE_FLOAT ? (double)(float)d : d;
      return 0;
    }
    case K_DEC:
      return dec_rescale(v, x->scale, n->scale, &o->v.d[i]) &&
                     dec_fits(o->v.d[i], n->prec)
                 ? 0
                 : 1;
    default:
      break;
    }
  }
  /* temporal */
  const int64_t DAY_US = 86400000000LL;
  int64_t v = a ? a->v.i[i] : o->v.i[i];
  switch (to) {
  case K_DATE:
    if (from == K_DATE)
      o->v.i[i] = v;
    else if (from == K_TS)
      o->v.i[i] = floor_div(v, DAY_US);
    else
      return 1;
    return 0;
  case K_TIME:
    if (from == K_TIME || from == K_TS) {
      int64_t ms =
          from == K_TS ? (v - floor_div(v, DAY_US) * DAY_US) / 1000 : v;
      int p = n->type->precision;
      if (p >= 0 && p < 3) {
        int64_t unit = p == 0 ? 1000 : p == 1 ? 100 : 10;
        ms -= ms % unit;
      }
      o->v.i[i] = ms;
      return 0;
    }
    return 1;
  case K_TS: {
    int64_t us;
    if (from == K_TS)
      us = v;
    else if (from == K_DATE)
      us = v * DAY_US;
    else if (from == K_TIME)
      us = v * 1000;
    else
      return 1;
    int p = n->type->precision;
    if (p >= 0 && p < 6) {
      int64_t unit = 1;
      for (int k = p; k < 6; k++)
        unit *= 10;
      us = floor_div(us, unit) * unit;
    }
    o->v.i[i] = us;
    return 0;
  }
  case K_IVDT:
  case K_IVYM:
    if (from != to)
      return 1;
    o->v.i[i] = v;
    return 0;
  default:
    return 1;
  }
}

int ix_cast_one(const inode *n, const void *arg, void *res) {
  /* One-element vectors over the caller's values: convert() reads a->v and
   * writes o->v at index 0 (it needs the context only for string targets,
   * which the JIT does not hand here). */
  ivec a = {.v.p = (void *)arg}, o = {.v.p = res};
  int from = ix_kind_class(n->args[0]->type), to = ix_kind_class(n->type);
  if (to == K_STR || from == K_NULL)
    return 1;
  return convert(NULL, n, from, to, &a, 0, &o);
}

int ix_eval_cast(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  const inode *x = n->args[0];
  const ivec *a = ix_vec(c, x);
  ivec *o = ix_vec(c, n);
  int from = ix_kind_class(x->type), to = ix_kind_class(n->type);
  if (from == K_NULL) {
    FOR_ACT(i) {
      o->null[i] = 1;
    }
    return SL_OK;
  }
  /* the hot implicit widenings get their own loops */
  if (from == K_INT && to == K_DEC && n->scale == 0 && n->prec >= 19) {
    FOR_ACT(i) {
      o->v.d[i] = a->v.i[i];
    }
    return SL_OK;
  }
  if (from == K_INT && to == K_FLT && n->type->kind == SL_TYPE_DOUBLE) {
    FOR_ACT(i) {
      o->v.f[i] = (double)a->v.i[i];
    }
    return SL_OK;
  }
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    if (convert(c, n, from, to, a, i, o) == 0)
      continue;
    if (n->negated) { /* TRY_CAST */
      o->null[i] = 1;
      continue;
    }
    char msg[200];
    sl_strbuf tn = SL_STRBUF_INIT;
    sl_type_format(&tn, n->type);
    if (from == K_STR) {
      const sl_str *s = &a->v.s[i];
      snprintf(msg, sizeof msg, "cannot cast '%.*s'%s to %s",
               (int)(s->len > 60 ? 60 : s->len), sl_str_data(s),
               s->len > 60 ? "..." : "", sl_strbuf_cstr(&tn));
    } else {
      snprintf(msg, sizeof msg, "value out of range for %s",
               sl_strbuf_cstr(&tn));
    }
    sl_strbuf_free(&tn);
    return ix_error(c, n, SL_EINVAL, msg);
  }
  return SL_OK;
}
