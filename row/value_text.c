/* value_text.c - values as text (Flink's spellings) and text into values.
 *
 * See value_text.h for the formats.  Nothing here allocates: formatting
 * writes into a caller's fixed array or strbuf, parsing into the row and
 * the buffer's string heap, so both can run per row on hot paths.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/row/value_text.h"

typedef __int128 i128;
typedef unsigned __int128 u128;

/* ---- calendar ----------------------------------------------------------
 * Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian,
 * exact for every int64 day count we can store. */

int64_t sl_days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void sl_civil_from_days(int64_t z, int64_t *year, int *month, int *day) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *day = (int)(doy - (153 * mp + 2) / 5 + 1);
  *month = (int)(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2);
}

static bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m) {
  static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Floor division and modulo (timestamps before 1970 are negative). */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---- formatting ---------------------------------------------------------
 * Digits are written by hand rather than by printf: a CSV sink formats
 * every field of every row, and printf's parsing of its format was most
 * of its time (NEXMark q1 to a file ran at 1.2 M rows/s). */

/* v as exactly width digits, zero-padded (v < 10^width). */
static void put_digits(char *out, uint64_t v, int width) {
  for (int i = width - 1; i >= 0; i--) {
    out[i] = (char)('0' + (int)(v % 10));
    v /= 10;
  }
}

/* v in as few digits as it takes; returns their number (no NUL). */
static int put_u64(char *out, uint64_t v) {
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  return n;
}

static int fmt_i64(char *out, int64_t v) {
  int n = 0;
  uint64_t mag = (uint64_t)v;
  if (v < 0) {
    out[n++] = '-';
    mag = (uint64_t)0 - mag; /* INT64_MIN too */
  }
  n += put_u64(out + n, mag);
  out[n] = '\0';
  return n;
}

/* A year outside 0000..9999 cannot arise from text (parse_date reads four
 * digits), only from arithmetic (TIMESTAMP '0000-01-01 00:00:00' -
 * INTERVAL '1' DAY).  It is printed rather than refused (the check would
 * belong in every operation that makes a date), and printed as ISO 8601
 * says: "%04lld" alone made year -1 "-001" (the sign took a digit). */
int sl_format_date(char *out, int64_t days) {
  int64_t y;
  int m, d;
  sl_civil_from_days(days, &y, &m, &d);
  if (y >= 0 && y <= 9999) { /* every date text can hold: YYYY-MM-DD */
    put_digits(out, (uint64_t)y, 4);
    out[4] = '-';
    put_digits(out + 5, (uint64_t)m, 2);
    out[7] = '-';
    put_digits(out + 8, (uint64_t)d, 2);
    out[10] = '\0';
    return 10;
  }
  if (y < 0)
    return sprintf(out, "-%04lld-%02d-%02d", -(long long)y, m, d);
  return sprintf(out, y > 9999 ? "+%lld-%02d-%02d" : "%04lld-%02d-%02d",
                 (long long)y, m, d);
}

static int fmt_date(char *out, int64_t days) {
  return sl_format_date(out, days);
}

/* Append frac digits of a value given in micros (0..999999), at precision
 * p (0..9): digits beyond the sixth are zeros. */
static int fmt_fraction(char *out, int64_t micros, int p) {
  if (p <= 0)
    return 0;
  char digits[9];
  put_digits(digits, (uint64_t)(micros % 1000000), 6);
  memset(digits + 6, '0', 3);
  out[0] = '.';
  memcpy(out + 1, digits, (size_t)p);
  out[p + 1] = '\0';
  return p + 1;
}

static int fmt_timestamp(char *out, int64_t us, int p) {
  int64_t day_us = 86400LL * 1000000;
  int64_t days = floor_div(us, day_us);
  /* Not us - days * day_us: that overflows near INT64_MIN. */
  int64_t rem = us % day_us; /* 0 .. day_us-1 */
  if (rem < 0)
    rem += day_us;
  int n = fmt_date(out, days);
  int64_t secs = rem / 1000000;
  out[n] = ' ';
  put_digits(out + n + 1, (uint64_t)(secs / 3600), 2);
  out[n + 3] = ':';
  put_digits(out + n + 4, (uint64_t)(secs / 60 % 60), 2);
  out[n + 6] = ':';
  put_digits(out + n + 7, (uint64_t)(secs % 60), 2);
  n += 9;
  out[n] = '\0';
  if (p > 9)
    p = 9;
  n += fmt_fraction(out + n, rem % 1000000, p);
  return n;
}

/* v < 2^127 (an i128's magnitude): 64-bit divisions for all but one step
 * (v / 10^19 < 2^64 then). */
static int fmt_u128(char *out, u128 v) {
  int n;
  if (v <= UINT64_MAX) { /* most decimals */
    n = put_u64(out, (uint64_t)v);
  } else {
    const uint64_t e19 = 10000000000000000000ULL;
    n = put_u64(out, (uint64_t)(v / e19));
    put_digits(out + n, (uint64_t)(v % e19), 19);
    n += 19;
  }
  out[n] = '\0';
  return n;
}

static int fmt_decimal(char *out, i128 v, int scale) {
  u128 mag = v < 0 ? (u128)0 - (u128)v : (u128)v;
  /* The digits, left-padded with zeros so that there is at least one
   * digit before the point: 5 at scale 2 is 005 -> 0.05. */
  char digits[96];
  int nd = fmt_u128(digits + 48, mag);
  char *d = digits + 48;
  while (nd < scale + 1) {
    *--d = '0';
    nd++;
  }
  int n = 0;
  if (v < 0)
    out[n++] = '-';
  memcpy(out + n, d, (size_t)(nd - scale));
  n += nd - scale;
  if (scale > 0) {
    out[n++] = '.';
    memcpy(out + n, d + nd - scale, (size_t)scale);
    n += scale;
  }
  out[n] = '\0';
  return n;
}

/* Java's Double.toString / Float.toString.  The digits are the shortest
 * that read back as the same value (found by trying more and more
 * significant digits with correctly rounded printf and strtod); Java's layout
 * rules are then applied to them. */
static int fmt_java_double(char *out, double v, bool is_float) {
  if (isnan(v))
    return sprintf(out, "NaN");
  if (isinf(v))
    return sprintf(out, v > 0 ? "Infinity" : "-Infinity");
  if (v == 0)
    return sprintf(out, signbit(v) ? "-0.0" : "0.0");

  char sci[40];
  int maxp = is_float ? 9 : 17, prec = 2;
  /* A normal double whose shortest form D has at most 15 digits is within
   * half its gap (2^-53 of it) of D, closer than half a unit of the 15th
   * digit, so printed with 15 digits it is D followed by zeros (stripped
   * below): try 15, 16, 17 rather than 2..17 (one conversion instead of
   * up to 16 for most values).  Subnormals and floats take every step. */
  if (!is_float && fabs(v) >= DBL_MIN)
    prec = 15;
  /* Java prints at least two significant digits (d.d), and picks the
   * closest such: Double.MIN_VALUE is 4.9E-324, not 5.0E-324. */
  for (; prec <= maxp; prec++) {
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    if (is_float ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v)
      break;
  }
  /* sci is "-d.ddde+XX": collect the digits and the exponent. */
  char digits[24];
  int nd = 0;
  const char *p = sci;
  bool neg = *p == '-';
  if (neg)
    p++;
  for (; *p && *p != 'e'; p++)
    if (isdigit((unsigned char)*p))
      digits[nd++] = *p;
  int exp10 = atoi(p + 1);
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;

  int n = 0;
  if (neg)
    out[n++] = '-';
  double mag = fabs(v);
  if (mag >= 1e-3 && mag < 1e7) {
    if (exp10 >= 0) {
      for (int i = 0; i <= exp10; i++)
        out[n++] = i < nd ? digits[i] : '0';
      out[n++] = '.';
      if (nd > exp10 + 1) {
        for (int i = exp10 + 1; i < nd; i++)
          out[n++] = digits[i];
      } else {
        out[n++] = '0';
      }
    } else {
      out[n++] = '0';
      out[n++] = '.';
      for (int i = 0; i < -exp10 - 1; i++)
        out[n++] = '0';
      for (int i = 0; i < nd; i++)
        out[n++] = digits[i];
    }
  } else {
    out[n++] = digits[0];
    out[n++] = '.';
    if (nd > 1) {
      for (int i = 1; i < nd; i++)
        out[n++] = digits[i];
    } else {
      out[n++] = '0';
    }
    n += sprintf(out + n, "E%d", exp10);
  }
  out[n] = '\0';
  return n;
}

static int fmt_interval_dt(char *out, int64_t ms) {
  char sign = ms < 0 ? '-' : '+';
  uint64_t m = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
  uint64_t days = m / 86400000, rem = m % 86400000;
  return sprintf(out, "%c%llu %02u:%02u:%02u.%03u", sign,
                 (unsigned long long)days, (unsigned)(rem / 3600000),
                 (unsigned)(rem / 60000 % 60), (unsigned)(rem / 1000 % 60),
                 (unsigned)(rem % 1000));
}

static int fmt_interval_ym(char *out, int32_t months) {
  char sign = months < 0 ? '-' : '+';
  int64_t m = months < 0 ? -(int64_t)months : months;
  return sprintf(out, "%c%lld-%02d", sign, (long long)(m / 12), (int)(m % 12));
}

int sl_value_format_scalar(char *out, const sl_type *t, sl_ptype p,
                           const void *f) {
  switch (p) {
  case SL_P_BOOL:
    return sprintf(out, "%s", *(const uint8_t *)f ? "TRUE" : "FALSE");
  case SL_P_I8:
    return fmt_i64(out, *(const int8_t *)f);
  case SL_P_I16:
    return fmt_i64(out, *(const int16_t *)f);
  case SL_P_I32:
    return fmt_i64(out, *(const int32_t *)f);
  case SL_P_I64:
    return fmt_i64(out, *(const int64_t *)f);
  case SL_P_F32:
    return fmt_java_double(out, *(const float *)f, true);
  case SL_P_F64:
    return fmt_java_double(out, *(const double *)f, false);
  case SL_P_DEC64:
    return fmt_decimal(out, *(const int64_t *)f, t->scale);
  case SL_P_DEC128: {
    i128 v;
    memcpy(&v, f, sizeof v);
    return fmt_decimal(out, v, t->scale);
  }
  case SL_P_STR:
    out[0] = '\0';
    return -1;
  case SL_P_DATE:
    return fmt_date(out, *(const int32_t *)f);
  case SL_P_TIME: {
    int32_t ms = *(const int32_t *)f;
    int n = sprintf(out, "%02d:%02d:%02d", ms / 3600000, ms / 60000 % 60,
                    ms / 1000 % 60);
    int prec = t->precision < 0 ? 0 : t->precision > 3 ? 3 : t->precision;
    return n + fmt_fraction(out + n, (int64_t)(ms % 1000) * 1000, prec);
  }
  case SL_P_TS:
    return fmt_timestamp(out, *(const int64_t *)f,
                         t->precision < 0 ? 6 : t->precision);
  case SL_P_IV_DT:
    return fmt_interval_dt(out, *(const int64_t *)f);
  case SL_P_IV_YM:
    return fmt_interval_ym(out, *(const int32_t *)f);
  }
  out[0] = '\0';
  return 0;
}

void sl_value_append(sl_strbuf *b, const sl_row_layout *layout,
                     const uint8_t *row, int i) {
  const sl_field *f = &layout->fields[i];
  const void *p = row + f->offset;
  if (f->ptype == SL_P_STR) {
    const sl_str *s = p;
    sl_strbuf_appendn(b, sl_str_data(s), s->len);
    return;
  }
  char tmp[SL_VALUE_TEXT_MAX];
  int n = sl_value_format_scalar(tmp, f->type, f->ptype, p);
  sl_strbuf_appendn(b, tmp, (size_t)n);
}

/* ---- parsing ------------------------------------------------------------ */

/* "expected a BIGINT, got 'abc'" (the text cut at 40 bytes). */
static int expected(sl_error *err, const sl_type *t, const char *text,
                    size_t len, const char *why) {
  if (!err)
    return SL_EINVAL;
  char tname[64];
  sl_strbuf tb = SL_STRBUF_INIT;
  sl_type_format(&tb, t);
  snprintf(tname, sizeof tname, "%s", sl_strbuf_cstr(&tb));
  sl_strbuf_free(&tb);
  /* Strip " NOT NULL" and the time attribute marks: they are noise here. */
  char *cut = strstr(tname, " NOT NULL");
  if (cut)
    *cut = '\0';
  cut = strstr(tname, " *");
  if (cut)
    *cut = '\0';
  const char *article = strchr("AEIOU", tname[0]) ? "an" : "a";
  int shown = len > 40 ? 40 : (int)len;
  return sl_error_set(err, SL_EINVAL, "expected %s %s%s%s, got '%.*s%s'",
                      article, tname, why ? " " : "", why ? why : "", shown,
                      text, len > 40 ? "..." : "");
}

/* A number that does not parse as an integer type: out of range when it
 * is all digits (with a sign), else not a number at all. */
static int not_an_int(sl_error *err, const sl_type *t, const char *orig,
                      size_t orig_len, const char *text, size_t len, int64_t lo,
                      int64_t hi) {
  size_t i = len > 0 && (text[0] == '+' || text[0] == '-');
  bool digits = i < len;
  for (; i < len && digits; i++)
    digits = text[i] >= '0' && text[i] <= '9';
  if (!digits)
    return expected(err, t, orig, orig_len, NULL);
  char why[80];
  snprintf(why, sizeof why, "(out of range: %lld to %lld)", (long long)lo,
           (long long)hi);
  return expected(err, t, orig, orig_len, why);
}

static void trim(const char **text, size_t *len) {
  const char *p = *text;
  size_t n = *len;
  while (n > 0 && isspace((unsigned char)*p))
    p++, n--;
  while (n > 0 && isspace((unsigned char)p[n - 1]))
    n--;
  *text = p;
  *len = n;
}

/* Optional sign and at least one digit, all of the text; false on
 * overflow of [lo, hi]. */
static bool parse_int(const char *p, size_t n, int64_t lo, int64_t hi,
                      int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (p[i] == '+' || p[i] == '-'))
    neg = p[i++] == '-';
  if (i == n)
    return false;
  /* Accumulate the magnitude as unsigned so INT64_MIN parses. */
  uint64_t limit = neg ? (uint64_t)0 - (uint64_t)lo : (uint64_t)hi;
  uint64_t v = 0;
  for (; i < n; i++) {
    if (p[i] < '0' || p[i] > '9')
      return false;
    unsigned d = (unsigned)(p[i] - '0');
    if (v > (limit - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)((uint64_t)0 - v) : (int64_t)v;
  return true;
}

/* Exactly `digits` decimal digits at p, into *out. */
static bool fixed_digits(const char *p, int digits, int *out) {
  int v = 0;
  for (int i = 0; i < digits; i++) {
    if (p[i] < '0' || p[i] > '9')
      return false;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return true;
}

/* yyyy-MM-dd at p (exactly 10 bytes available) -> days. */
static bool parse_date(const char *p, size_t n, int64_t *days) {
  int y, m, d;
  if (n != 10 || p[4] != '-' || p[7] != '-' || !fixed_digits(p, 4, &y) ||
      !fixed_digits(p + 5, 2, &m) || !fixed_digits(p + 8, 2, &d))
    return false;
  if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
    return false;
  *days = sl_days_from_civil(y, m, d);
  return true;
}

/* HH:mm:ss[.f...] -> microseconds of the day (fraction truncated). */
static bool parse_time(const char *p, size_t n, int64_t *us) {
  int h, mi, s;
  if (n < 8 || p[2] != ':' || p[5] != ':' || !fixed_digits(p, 2, &h) ||
      !fixed_digits(p + 3, 2, &mi) || !fixed_digits(p + 6, 2, &s))
    return false;
  if (h > 23 || mi > 59 || s > 59)
    return false;
  int64_t frac = 0;
  if (n > 8) {
    if (p[8] != '.' || n == 9 || n > 18)
      return false;
    for (size_t i = 9; i < n; i++) {
      if (p[i] < '0' || p[i] > '9')
        return false;
      if (i < 15)
        frac = frac * 10 + (p[i] - '0');
    }
    for (size_t i = n; i < 15; i++)
      frac *= 10;
  }
  *us = ((int64_t)h * 3600 + mi * 60 + s) * 1000000 + frac;
  return true;
}

static bool parse_timestamp(const char *p, size_t n, int64_t *us) {
  if (n > 0 && (p[n - 1] == 'Z' || p[n - 1] == 'z'))
    n--;
  int64_t days, tod = 0;
  if (n < 10 || !parse_date(p, 10, &days))
    return false;
  if (n > 10) {
    if ((p[10] != ' ' && p[10] != 'T' && p[10] != 't') ||
        !parse_time(p + 11, n - 11, &tod))
      return false;
  }
  *us = days * 86400LL * 1000000 + tod;
  return true;
}

bool sl_value_parse_timestamp(const char *text, size_t len, int64_t *us) {
  return parse_timestamp(text, len, us);
}

/* DECIMAL(p, s): sign, digits, optional point and fraction, optional
 * exponent; rounded HALF_UP to s digits.  false: not a number (*overflow
 * false) or too many integer digits (*overflow true). */
static bool parse_decimal(const char *text, size_t n, int prec, int scale,
                          i128 *out, bool *overflow) {
  *overflow = false;
  size_t i = 0;
  bool neg = false;
  if (i < n && (text[i] == '+' || text[i] == '-'))
    neg = text[i++] == '-';
  /* Significant digits (leading zeros dropped) and the power of ten of
   * the last one. */
  char dig[80];
  int nd = 0, exp10 = 0, ndigits_seen = 0;
  bool point = false;
  for (; i < n; i++) {
    char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9')
      break;
    ndigits_seen++;
    if (point)
      exp10--;
    if (nd == 0 && c == '0')
      continue;
    if (nd < (int)sizeof dig) {
      dig[nd++] = c;
    } else {
      /* Beyond 80 significant digits (more than any DECIMAL holds): drop
       * the digit but keep dig[nd-1] at its power of ten.  Only the first
       * dropped digit matters for HALF_UP, and it is kept. */
      exp10++;
    }
  }
  if (ndigits_seen == 0)
    return false;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    int64_t e;
    if (!parse_int(text + i + 1, n - i - 1, -100000, 100000, &e))
      return false;
    exp10 += (int)e;
    i = n;
  }
  if (i != n)
    return false;
  /* value = dig * 10^exp10; unscaled = dig * 10^(exp10 + scale). */
  int shift = exp10 + scale;
  int keep = nd + (shift < 0 ? shift : 0); /* digits that survive */
  if (keep < 0) {
    *out = 0; /* below half of the last digit of the scale */
    return true;
  }
  if (keep + (shift > 0 ? shift : 0) > prec) {
    *overflow = true;
    return false;
  }
  u128 v = 0;
  for (int k = 0; k < keep; k++)
    v = v * 10 + (unsigned)(dig[k] - '0');
  for (int k = 0; k < shift; k++)
    v *= 10;
  if (keep < nd && dig[keep] >= '5') { /* HALF_UP */
    v++;
    u128 lim = 1;
    for (int k = 0; k < prec; k++)
      lim *= 10;
    if (v >= lim) {
      *overflow = true;
      return false;
    }
  }
  *out = neg ? -(i128)v : (i128)v;
  return true;
}

static bool parse_interval_dt(const char *p, size_t n, int64_t *ms) {
  int64_t v;
  if (parse_int(p, n, INT64_MIN, INT64_MAX, &v)) {
    *ms = v;
    return true;
  }
  /* [+-]D HH:mm:ss[.fff] */
  size_t i = 0;
  bool neg = false;
  if (i < n && (p[i] == '+' || p[i] == '-'))
    neg = p[i++] == '-';
  size_t sp = i;
  while (sp < n && p[sp] != ' ')
    sp++;
  int64_t days, tod;
  if (sp == n || !parse_int(p + i, sp - i, 0, 106751991167LL, &days) ||
      !parse_time(p + sp + 1, n - sp - 1, &tod))
    return false;
  int64_t total = days * 86400000 + tod / 1000;
  *ms = neg ? -total : total;
  return true;
}

static bool parse_interval_ym(const char *p, size_t n, int32_t *months) {
  int64_t v;
  if (parse_int(p, n, INT32_MIN, INT32_MAX, &v)) {
    *months = (int32_t)v;
    return true;
  }
  size_t i = 0;
  bool neg = false;
  if (i < n && (p[i] == '+' || p[i] == '-'))
    neg = p[i++] == '-';
  const char *dash = memchr(p + i, '-', n - i);
  int64_t y, m;
  if (!dash || !parse_int(p + i, (size_t)(dash - p) - i, 0, 178956970, &y) ||
      !parse_int(dash + 1, n - (size_t)(dash + 1 - p), 0, 11, &m))
    return false;
  *months = (int32_t)(neg ? -(y * 12 + m) : y * 12 + m);
  return true;
}

int sl_value_parse(const char *text, size_t len, const sl_row_layout *layout,
                   uint8_t *row, int i, sl_buffer *buf, sl_error *err) {
  const sl_field *f = &layout->fields[i];
  void *dst = row + f->offset;
  const sl_type *t = f->type;
  sl_row_set_null(row, i, false);
  if (f->ptype == SL_P_STR) {
    if (len > UINT32_MAX || !sl_buffer_put_str(buf, dst, text, (uint32_t)len))
      return sl_error_set(err, SL_EINTERNAL,
                          "no room for a string of %zu bytes in the buffer",
                          len);
    return SL_OK;
  }
  const char *orig = text;
  size_t orig_len = len;
  trim(&text, &len);
  int64_t v;
  switch (f->ptype) {
  case SL_P_BOOL:
    if ((len == 4 && strncasecmp(text, "true", 4) == 0) ||
        (len == 1 && text[0] == '1'))
      *(uint8_t *)dst = 1;
    else if ((len == 5 && strncasecmp(text, "false", 5) == 0) ||
             (len == 1 && text[0] == '0'))
      *(uint8_t *)dst = 0;
    else
      return expected(err, t, orig, orig_len, "(true or false)");
    return SL_OK;
  case SL_P_I8:
    if (!parse_int(text, len, INT8_MIN, INT8_MAX, &v))
      return not_an_int(err, t, orig, orig_len, text, len, INT8_MIN, INT8_MAX);
    *(int8_t *)dst = (int8_t)v;
    return SL_OK;
  case SL_P_I16:
    if (!parse_int(text, len, INT16_MIN, INT16_MAX, &v))
      return not_an_int(err, t, orig, orig_len, text, len, INT16_MIN,
                        INT16_MAX);
    *(int16_t *)dst = (int16_t)v;
    return SL_OK;
  case SL_P_I32:
    if (!parse_int(text, len, INT32_MIN, INT32_MAX, &v))
      return not_an_int(err, t, orig, orig_len, text, len, INT32_MIN,
                        INT32_MAX);
    *(int32_t *)dst = (int32_t)v;
    return SL_OK;
  case SL_P_I64:
    if (!parse_int(text, len, INT64_MIN, INT64_MAX, &v))
      return not_an_int(err, t, orig, orig_len, text, len, INT64_MIN,
                        INT64_MAX);
    *(int64_t *)dst = v;
    return SL_OK;
  case SL_P_F32:
  case SL_P_F64: {
    char tmp[512];
    if (len == 0 || len >= sizeof tmp)
      return expected(err, t, orig, orig_len, NULL);
    memcpy(tmp, text, len);
    tmp[len] = '\0';
    const char *s = tmp + (tmp[0] == '+' || tmp[0] == '-');
    /* Java spells them NaN and Infinity; strtod also knows them. */
    char *end;
    errno = 0;
    double d = strtod(tmp, &end);
    if (end != tmp + len || strncasecmp(s, "0x", 2) == 0)
      return expected(err, t, orig, orig_len, NULL);
    /* A number too large is out of range (as in PostgreSQL), not an
     * infinity nobody wrote; 'Infinity' spelled out still is one. */
    bool f32 = f->ptype == SL_P_F32;
    if (!isinf(d) ? f32 && isinf((float)d) : errno == ERANGE)
      return expected(err, t, orig, orig_len,
                      f32 ? "(out of range: beyond +-3.4E38)"
                          : "(out of range: beyond +-1.8E308)");
    if (f->ptype == SL_P_F32)
      *(float *)dst = (float)d;
    else
      *(double *)dst = d;
    return SL_OK;
  }
  case SL_P_DEC64:
  case SL_P_DEC128: {
    i128 d;
    bool overflow;
    if (!parse_decimal(text, len, t->precision, t->scale, &d, &overflow))
      return expected(err, t, orig, orig_len,
                      overflow ? "(too many digits before the point)" : NULL);
    if (f->ptype == SL_P_DEC64)
      *(int64_t *)dst = (int64_t)d;
    else
      memcpy(dst, &d, sizeof d);
    return SL_OK;
  }
  case SL_P_DATE: {
    int64_t days;
    if (!parse_date(text, len, &days) || days < INT32_MIN || days > INT32_MAX)
      return expected(err, t, orig, orig_len, "(yyyy-MM-dd)");
    *(int32_t *)dst = (int32_t)days;
    return SL_OK;
  }
  case SL_P_TIME: {
    int64_t us;
    if (!parse_time(text, len, &us))
      return expected(err, t, orig, orig_len, "(HH:mm:ss[.fff])");
    *(int32_t *)dst = (int32_t)(us / 1000);
    return SL_OK;
  }
  case SL_P_TS: {
    int64_t us;
    if (!parse_timestamp(text, len, &us))
      return expected(err, t, orig, orig_len, "(yyyy-MM-dd HH:mm:ss[.fff])");
    *(int64_t *)dst = us;
    return SL_OK;
  }
  case SL_P_IV_DT:
    if (!parse_interval_dt(text, len, (int64_t *)dst))
      return expected(err, t, orig, orig_len,
                      "(milliseconds or +D HH:mm:ss.fff)");
    return SL_OK;
  case SL_P_IV_YM:
    if (!parse_interval_ym(text, len, (int32_t *)dst))
      return expected(err, t, orig, orig_len, "(months or +Y-MM)");
    return SL_OK;
  case SL_P_STR:
    break;
  }
  return sl_error_set(err, SL_EINTERNAL, "cannot parse a value of type %d",
                      (int)f->ptype);
}
