/* interp_time.c - dates, times, timestamps and intervals: parsing and
 * formatting, DATE_FORMAT / TO_TIMESTAMP / UNIX_TIMESTAMP / FROM_UNIXTIME
 * with Java (SimpleDateFormat) patterns, EXTRACT and HOUR(...) & co,
 * FLOOR/CEIL(ts TO unit), PROCTIME/NOW, and temporal +/- interval.
 *
 * Calendar arithmetic is the proleptic Gregorian calendar (Howard
 * Hinnant's days_from_civil), all in UTC.  Timestamps are int64
 * microseconds, dates int32 days, times int32 milliseconds of the day.
 *
 * Supported pattern letters: y (yy = two digits), M (MMM Jan, MMMM
 * January), d, D (day of year), H, h (1-12), k (1-24), m, s, S (fraction
 * digits), a (AM/PM), E (EEE Mon, EEEE Monday), 'quoted text' ('' for a
 * quote); anything else, including unsupported letters, is copied as is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_int.h"

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

static const int64_t DAY_US = 86400000000LL;
static const int64_t DAY_MS = 86400000LL;

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ix_days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = (unsigned)(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

void ix_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = (unsigned)(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned month_days(int64_t y, unsigned m) {
  static const unsigned md[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : md[m - 1];
}

/* ---- parsing
 * -----------------------------------------------------------------
 */

/* Read 1..max digits at s[*i]. */
static bool digits(const char *s, size_t len, size_t *i, int max, int64_t *v) {
  int n = 0;
  *v = 0;
  while (*i < len && n < max && s[*i] >= '0' && s[*i] <= '9') {
    *v = *v * 10 + (s[*i] - '0');
    (*i)++, n++;
  }
  return n > 0;
}

static bool parse_date_at(const char *s, size_t len, size_t *i, int64_t *days) {
  int64_t y, m, d;
  bool neg = *i < len && s[*i] == '-';
  if (neg)
    (*i)++;
  if (!digits(s, len, i, 9, &y) || *i >= len || s[(*i)++] != '-' ||
      !digits(s, len, i, 2, &m) || *i >= len || s[(*i)++] != '-' ||
      !digits(s, len, i, 2, &d))
    return false;
  if (neg)
    y = -y;
  if (m < 1 || m > 12 || d < 1 || d > month_days(y, (unsigned)m))
    return false;
  *days = ix_days_from_civil(y, (unsigned)m, (unsigned)d);
  return true;
}

/* H:m[:s[.fffffffff]] -> microseconds of the day. */
static bool parse_time_at(const char *s, size_t len, size_t *i, int64_t *us) {
  int64_t h, m, sec = 0, frac = 0;
  if (!digits(s, len, i, 2, &h) || *i >= len || s[(*i)++] != ':' ||
      !digits(s, len, i, 2, &m))
    return false;
  if (*i < len && s[*i] == ':') {
    (*i)++;
    if (!digits(s, len, i, 2, &sec))
      return false;
    if (*i < len && s[*i] == '.') {
      (*i)++;
      int n = 0;
      while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (n < 6)
          frac = frac * 10 + (s[*i] - '0');
        (*i)++, n++;
      }
      if (n == 0)
        return false;
      for (; n < 6; n++)
        frac *= 10;
    }
  }
  if (h > 23 || m > 59 || sec > 59)
    return false;
  *us = ((h * 60 + m) * 60 + sec) * 1000000 + frac;
  return true;
}

bool ix_parse_date(const char *s, size_t len, int64_t *days) {
  size_t i = 0;
  return parse_date_at(s, len, &i, days) && i == len;
}

bool ix_parse_time(const char *s, size_t len, int64_t *ms) {
  size_t i = 0;
  int64_t us;
  if (!parse_time_at(s, len, &i, &us) || i != len)
    return false;
  *ms = us / 1000;
  return true;
}

bool ix_parse_timestamp(const char *s, size_t len, int64_t *us) {
  size_t i = 0;
  int64_t days, tod = 0;
  if (!parse_date_at(s, len, &i, &days))
    return false;
  if (i < len) {
    if (s[i] != ' ' && s[i] != 'T')
      return false;
    i++;
    if (!parse_time_at(s, len, &i, &tod) || i != len)
      return false;
  }
  *us = days * DAY_US + tod;
  return true;
}

/* ---- formatting
 * ----------------------------------------------------------------
 */

int ix_format_date(int64_t days, char *buf) {
  int64_t y;
  unsigned m, d;
  ix_civil_from_days(days, &y, &m, &d);
  /* ISO 8601 outside Flink's 0000..9999 (as value_text.h's
   * sl_format_date): year -1 is -0001, not -001. */
  if (y < 0)
    return sprintf(buf, "-%04lld-%02u-%02u", -(long long)y, m, d);
  return sprintf(buf, y > 9999 ? "+%lld-%02u-%02u" : "%04lld-%02u-%02u",
                 (long long)y, m, d);
}

static int format_fraction(int64_t us_of_sec, int prec, char *buf) {
  if (prec <= 0)
    return 0;
  if (prec > 9)
    prec = 9;
  char f[16];
  sprintf(f, "%06lld000", (long long)us_of_sec);
  buf[0] = '.';
  memcpy(buf + 1, f, (size_t)prec);
  buf[prec + 1] = '\0';
  return prec + 1;
}

int ix_format_time(int64_t ms, int prec, char *buf) {
  int len = sprintf(buf, "%02lld:%02lld:%02lld", (long long)(ms / 3600000),
                    (long long)(ms / 60000 % 60), (long long)(ms / 1000 % 60));
  return len +
         format_fraction(ms % 1000 * 1000, prec > 3 ? 3 : prec, buf + len);
}

int ix_format_timestamp(int64_t us, int prec, char *buf) {
  int64_t days = floor_div(us, DAY_US), tod = us - days * DAY_US;
  int len = ix_format_date(days, buf);
  int64_t s = tod / 1000000;
  len += sprintf(buf + len, " %02lld:%02lld:%02lld", (long long)(s / 3600),
                 (long long)(s / 60 % 60), (long long)(s % 60));
  return len + format_fraction(tod % 1000000, prec, buf + len);
}

/* ---- Java date patterns
 * ----------------------------------------------------------
 */

typedef struct dtok {
  char letter; /* 0: literal */
  int count;
  const char *lit;
  int litlen;
} dtok;

#define MAX_DTOK 64

typedef struct dfmt {
  int n;
  bool bad; /* an unsupported pattern letter */
  dtok t[MAX_DTOK];
} dfmt;

static void dfmt_parse(const char *p, uint32_t len, dfmt *f) {
  f->n = 0;
  f->bad = false;
  for (uint32_t i = 0; i < len && f->n < MAX_DTOK;) {
    dtok *t = &f->t[f->n++];
    char ch = p[i];
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      uint32_t j = i;
      while (j < len && p[j] == ch)
        j++;
      t->letter = ch;
      t->count = (int)(j - i);
      if (!strchr("yMdDHhkmsSaE", ch)) {
        f->bad = true;
        t->letter = 0, t->lit = p + i, t->litlen = t->count;
      }
      i = j;
    } else if (ch == '\'') {
      if (i + 1 < len && p[i + 1] == '\'') { /* '' is a quote */
        t->letter = 0, t->lit = p + i, t->litlen = 1;
        i += 2;
        continue;
      }
      /* quoted text up to the closing quote ('' inside is not split out:
       * rare enough to keep the tokenizer simple) */
      uint32_t j = i + 1;
      while (j < len && p[j] != '\'')
        j++;
      t->letter = 0, t->lit = p + i + 1, t->litlen = (int)(j - i - 1);
      i = j < len ? j + 1 : j;
    } else {
      uint32_t j = i;
      while (j < len && p[j] != '\'' &&
             !((p[j] >= 'a' && p[j] <= 'z') || (p[j] >= 'A' && p[j] <= 'Z')))
        j++;
      t->letter = 0, t->lit = p + i, t->litlen = (int)(j - i);
      i = j;
    }
  }
}

void *ix_datefmt_compile(sl_arena *a, const char *p, uint32_t len) {
  char *copy = sl_arena_strndup(a, p, len);
  dfmt *f = SL_ANEW(a, dfmt);
  dfmt_parse(copy, len, f);
  return f;
}

static const char *const MONTHS[] = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
static const char *const DAYS[] = {"Monday",   "Tuesday", "Wednesday",
                                   "Thursday", "Friday",  "Saturday",
                                   "Sunday"};

/* Format us with f into buf (cap bytes); returns length. */
static int dfmt_format(const dfmt *f, int64_t us, char *buf, int cap) {
  int64_t days = floor_div(us, DAY_US), tod = us - days * DAY_US;
  int64_t y;
  unsigned mo, d;
  ix_civil_from_days(days, &y, &mo, &d);
  int64_t sec = tod / 1000000, h = sec / 3600, mi = sec / 60 % 60, s = sec % 60;
  int len = 0;
  for (int k = 0; k < f->n && len < cap - 64; k++) {
    const dtok *t = &f->t[k];
    int w = t->count;
    int64_t v = -1;
    switch (t->letter) {
    case 0: {
      int n = t->litlen < cap - 64 - len ? t->litlen : cap - 64 - len;
      memcpy(buf + len, t->lit, (size_t)n);
      len += n;
      continue;
    }
    case 'y':
      v = w == 2 ? ((y % 100) + 100) % 100 : y;
      break;
    case 'M':
      if (w >= 3) {
        len += sprintf(buf + len, "%.*s", w == 3 ? 3 : 20, MONTHS[mo - 1]);
        continue;
      }
      v = mo;
      break;
    case 'd':
      v = d;
      break;
    case 'D':
      v = days - ix_days_from_civil(y, 1, 1) + 1;
      break;
    case 'H':
      v = h;
      break;
    case 'k':
      v = h == 0 ? 24 : h;
      break;
    case 'h':
      v = h % 12 == 0 ? 12 : h % 12;
      break;
    case 'm':
      v = mi;
      break;
    case 's':
      v = s;
      break;
    case 'S': { /* the first w digits of the fraction */
      char fr[16];
      sprintf(fr, "%06lld000", (long long)(tod % 1000000));
      int n = w > 9 ? 9 : w;
      memcpy(buf + len, fr, (size_t)n);
      len += n;
      continue;
    }
    case 'a':
      len += sprintf(buf + len, "%s", h < 12 ? "AM" : "PM");
      continue;
    case 'E': {
      int dow =
          (int)((floor_div(days, 1) % 7 + 7 + 3) % 7); /* 1970-01-01 Thu */
      len += sprintf(buf + len, "%.*s", w >= 4 ? 20 : 3, DAYS[dow]);
      continue;
    }
    }
    len += sprintf(buf + len, "%0*lld", w > 20 ? 20 : w, (long long)v);
  }
  return len;
}

/* Parse s with f; fields not in the pattern default to 1970-01-01 00:00. */
static bool dfmt_parse_value(const dfmt *f, const char *s, size_t len,
                             int64_t *us) {
  int64_t y = 1970, mo = 1, d = 1, h = 0, mi = 0, sec = 0, frac = 0;
  bool pm = false, has_a = false, h12 = false;
  size_t i = 0;
  for (int k = 0; k < f->n; k++) {
    const dtok *t = &f->t[k];
    int64_t v;
    if (t->letter == 0) {
      if (len - i < (size_t)t->litlen || memcmp(s + i, t->lit, t->litlen))
        return false;
      i += (size_t)t->litlen;
      continue;
    }
    if (t->letter == 'a') {
      if (len - i < 2)
        return false;
      has_a = true;
      pm = (s[i] == 'P' || s[i] == 'p');
      i += 2;
      continue;
    }
    if (t->letter == 'M' && t->count >= 3) {
      bool ok = false;
      for (int m = 0; m < 12 && !ok; m++) {
        size_t n = t->count == 3 ? 3 : strlen(MONTHS[m]);
        if (len - i >= n && strncmp(s + i, MONTHS[m], n) == 0)
          mo = m + 1, i += n, ok = true;
      }
      if (!ok)
        return false;
      continue;
    }
    /* a field followed directly by another field reads exactly `count`
     * digits; otherwise up to 9 (yyyy-M-d reads 2024-1-15) */
    bool adjacent = k + 1 < f->n && f->t[k + 1].letter != 0;
    int max = adjacent || t->letter == 'S' ? t->count : 9;
    size_t start = i;
    if (!digits(s, len, &i, max, &v))
      return false;
    switch (t->letter) {
    case 'y':
      y = t->count == 2 && i - start == 2 ? 2000 + v : v;
      break;
    case 'M':
      mo = v;
      break;
    case 'd':
      d = v;
      break;
    case 'H':
    case 'k':
      h = t->letter == 'k' && v == 24 ? 0 : v;
      break;
    case 'h':
      h = v % 12;
      h12 = true;
      break;
    case 'm':
      mi = v;
      break;
    case 's':
      sec = v;
      break;
    case 'S': {
      int n = (int)(i - start);
      frac = v;
      for (; n < 6; n++)
        frac *= 10;
      for (; n > 6; n--)
        frac /= 10;
      break;
    }
    default:
      break; /* D, E: read and ignored */
    }
  }
  if (i != len)
    return false;
  if (has_a && pm && (h12 || h < 12))
    h += 12;
  if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, (unsigned)mo) || h > 23 ||
      mi > 59 || sec > 59)
    return false;
  *us = ix_days_from_civil(y, (unsigned)mo, (unsigned)d) * DAY_US +
        ((h * 60 + mi) * 60 + sec) * 1000000 + frac;
  return true;
}

/* ---- functions
 * ---------------------------------------------------------------------
 */

static const char DEFAULT_FMT[] = "yyyy-MM-dd HH:mm:ss";

/* The pattern of row i: pre-compiled, or parsed into *tmp. */
static const dfmt *row_fmt(const inode *n, const ivec *fv, uint32_t i,
                           dfmt *tmp) {
  if (n->aux)
    return n->aux;
  if (fv) {
    dfmt_parse(sl_str_data(&fv->v.s[i]), fv->v.s[i].len, tmp);
  } else {
    dfmt_parse(DEFAULT_FMT, sizeof DEFAULT_FMT - 1, tmp);
  }
  return tmp;
}

static int64_t extract(sl_interval_unit u, const sl_type *t, int64_t v,
                       bool *ok) {
  *ok = true;
  if (t->kind == SL_TYPE_INTERVAL_YEAR_MONTH)
    return u == SL_UNIT_YEAR ? v / 12 : u == SL_UNIT_MONTH ? v % 12 : 0;
  int64_t us;
  if (t->kind == SL_TYPE_INTERVAL_DAY_TIME) {
    switch (u) {
    case SL_UNIT_DAY:
      return v / DAY_MS;
    case SL_UNIT_HOUR:
      return v / 3600000 % 24;
    case SL_UNIT_MINUTE:
      return v / 60000 % 60;
    case SL_UNIT_SECOND:
      return v / 1000 % 60;
    case SL_UNIT_MILLISECOND:
      return v % 60000;
    default:
      *ok = false;
      return 0;
    }
  }
  if (t->kind == SL_TYPE_DATE)
    us = v * DAY_US;
  else if (t->kind == SL_TYPE_TIME)
    us = v * 1000;
  else
    us = v;
  int64_t days = floor_div(us, DAY_US), tod = us - days * DAY_US;
  int64_t y;
  unsigned m, d;
  ix_civil_from_days(days, &y, &m, &d);
  if (t->kind == SL_TYPE_TIME && u <= SL_UNIT_DAY)
    *ok = false;
  switch (u) {
  case SL_UNIT_YEAR:
    return y;
  case SL_UNIT_MONTH:
    return m;
  case SL_UNIT_DAY:
    return d;
  case SL_UNIT_HOUR:
    return tod / 3600000000LL;
  case SL_UNIT_MINUTE:
    return tod / 60000000 % 60;
  case SL_UNIT_SECOND:
    return tod / 1000000 % 60;
  case SL_UNIT_MILLISECOND: /* seconds included, as Calcite */
    return tod / 1000 % 60000;
  default:
    *ok = false;
    return 0;
  }
}

static int64_t add_months(int64_t days, int64_t months) {
  int64_t y;
  unsigned m, d;
  ix_civil_from_days(days, &y, &m, &d);
  int64_t total = y * 12 + (m - 1) + months;
  int64_t ny = floor_div(total, 12);
  unsigned nm = (unsigned)(total - ny * 12) + 1;
  unsigned md = month_days(ny, nm);
  return ix_days_from_civil(ny, nm, d > md ? md : d);
}

static int64_t unit_us(sl_interval_unit u) {
  switch (u) {
  case SL_UNIT_DAY:
    return DAY_US;
  case SL_UNIT_HOUR:
    return 3600000000LL;
  case SL_UNIT_MINUTE:
    return 60000000LL;
  case SL_UNIT_SECOND:
    return 1000000LL;
  case SL_UNIT_MILLISECOND:
    return 1000LL;
  default:
    return 0;
  }
}

static int64_t floor_time(int64_t us, sl_interval_unit u, bool ceil_) {
  int64_t f;
  if (u == SL_UNIT_YEAR || u == SL_UNIT_MONTH) {
    int64_t days = floor_div(us, DAY_US), y;
    unsigned m, d;
    ix_civil_from_days(days, &y, &m, &d);
    f = ix_days_from_civil(y, u == SL_UNIT_YEAR ? 1 : m, 1) * DAY_US;
    if (ceil_ && f != us)
      f = add_months(f / DAY_US, u == SL_UNIT_YEAR ? 12 : 1) * DAY_US;
    return f;
  }
  int64_t unit = unit_us(u);
  if (unit == 0)
    return us;
  f = floor_div(us, unit) * unit;
  return ceil_ && f != us ? f + unit : f;
}

int ix_time_fn1(const inode *n, int64_t v, int64_t *out) {
  if (n->fn == F_FLOOR_TIME) {
    if (n->type->kind == SL_TYPE_DATE)
      *out = floor_time(v * DAY_US, n->unit, n->op == 1) / DAY_US;
    else
      *out = floor_time(v, n->unit, n->op == 1);
    return 0;
  }
  bool ok;
  *out = extract(n->unit, n->args[0]->type, v, &ok);
  return ok ? 0 : 1;
}

int ix_eval_time_fn(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                    uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = n->nargs > 0 ? ix_vec(c, n->args[0]) : NULL;
  const ivec *fv = n->nargs > 1 ? ix_vec(c, n->args[1]) : NULL;
  dfmt tmp;
  char buf[512];
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    switch (n->fn) {
    case F_NOW: /* TIMESTAMP(3) / TIMESTAMP_LTZ(3): whole milliseconds */
      o->v.i[i] = floor_div(c->now_us, 1000) * 1000;
      break;
    case F_EXTRACT:
    case F_FLOOR_TIME:
      if (ix_time_fn1(n, a->v.i[i], &o->v.i[i]))
        return ix_error(c, n, SL_EINVAL, "cannot extract that unit");
      break;
    case F_DATE_FORMAT: {
      int64_t us;
      if (n->args[0]->rep == R_STR) {
        if (!ix_parse_timestamp(sl_str_data(&a->v.s[i]), a->v.s[i].len, &us)) {
          o->null[i] = 1;
          break;
        }
      } else {
        us = a->v.i[i];
      }
      const dfmt *f = row_fmt(n, fv, i, &tmp);
      int len = dfmt_format(f, us, buf, sizeof buf);
      o->v.s[i] = ix_str(c, buf, (uint32_t)len);
      break;
    }
    case F_FROM_UNIXTIME: {
      int64_t sec = a->v.i[i];
      if (sec > INT64_MAX / 1000000 || sec < INT64_MIN / 1000000)
        return ix_error(c, n, SL_EINVAL, "epoch seconds out of range");
      const dfmt *f = row_fmt(n, fv, i, &tmp);
      int len = dfmt_format(f, sec * 1000000, buf, sizeof buf);
      o->v.s[i] = ix_str(c, buf, (uint32_t)len);
      break;
    }
    case F_TO_TIMESTAMP:
    case F_UNIX_TIMESTAMP: {
      if (n->nargs == 0) { /* UNIX_TIMESTAMP() */
        o->v.i[i] = floor_div(c->now_us, 1000000);
        break;
      }
      const char *s = sl_str_data(&a->v.s[i]);
      uint32_t len = a->v.s[i].len;
      int64_t us;
      bool ok = fv || n->aux
                    ? dfmt_parse_value(row_fmt(n, fv, i, &tmp), s, len, &us)
                    : ix_parse_timestamp(s, len, &us);
      if (!ok) {
        o->null[i] = 1;
        break;
      }
      o->v.i[i] = n->fn == F_UNIX_TIMESTAMP ? floor_div(us, 1000000)
                                            : floor_div(us, 1000) * 1000;
      break;
    }
    default:
      return ix_error(c, n, SL_EINTERNAL, "internal error: bad function");
    }
  }
  return SL_OK;
}

/* temporal +/- interval (N_TIME_ADD) and interval * / number
 * (N_IV_SCALE). */
int ix_eval_time_add(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]), *b = ix_vec(c, n->args[1]);
  if (n->kind == N_IV_SCALE) {
    FOR_ACT(i) {
      if (o->null[i])
        continue;
      double d = b->v.f[i], v = (double)a->v.i[i];
      if (n->op == SL_OP_DIV && d == 0)
        return ix_error(c, n, SL_EINVAL, "division by zero");
      double r = n->op == SL_OP_DIV ? v / d : v * d;
      if (!(r >= (double)n->lo && r <= (double)n->hi))
        return ix_error(c, n, SL_EINVAL, "interval overflow");
      o->v.i[i] = (int64_t)(r < 0 ? r - 0.5 : r + 0.5);
    }
    return SL_OK;
  }
  const sl_type_kind tk = n->type->kind;
  const bool ym = n->args[1]->type->kind == SL_TYPE_INTERVAL_YEAR_MONTH;
  const int sign = n->op == SL_OP_SUB ? -1 : 1;
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    int64_t t = a->v.i[i], iv = b->v.i[i] * sign, r;
    bool bad = false;
    if (ym) {
      if (tk == SL_TYPE_DATE) {
        r = add_months(t, iv);
      } else if (tk == SL_TYPE_TIME) {
        r = t;
      } else {
        int64_t days = floor_div(t, DAY_US);
        r = add_months(days, iv) * DAY_US + (t - days * DAY_US);
      }
    } else if (tk == SL_TYPE_DATE) {
      r = t + floor_div(iv, DAY_MS);
    } else if (tk == SL_TYPE_TIME) {
      r = ((t + iv % DAY_MS) % DAY_MS + DAY_MS) % DAY_MS;
    } else {
      int64_t d;
      bad = __builtin_mul_overflow(iv, 1000, &d) ||
            __builtin_add_overflow(t, d, &r);
    }
    if (bad || r < n->lo || r > n->hi)
      return ix_error(c, n, SL_EINVAL, "timestamp overflow");
    o->v.i[i] = r;
  }
  return SL_OK;
}
