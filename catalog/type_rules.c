/* type_rules.c - the typing rules of the binder, following Flink SQL.
 *
 * Literals
 *   integer literal       INT if it fits 32 bits, else BIGINT; an error if it
 *                         does not fit 64 bits.  Literals are NOT NULL.
 *   decimal literal       DECIMAL(p, s) with p = all digits written
 *                         (Calcite counts a leading "0": 0.908 is
 *                         DECIMAL(4, 3)) and s = digits after the point.
 *   1e3                   DOUBLE
 *   'abc'                 CHAR(3) NOT NULL (Flink types string literals as
 *                         CHAR(n))
 *   INTERVAL '1' SECOND   INTERVAL SECOND(3) (day-time), YEAR/MONTH ones are
 *                         year-month intervals
 * Arithmetic (+ - * / %)
 *   integers              the wider of the two (TINYINT < SMALLINT < INT <
 *                         BIGINT); integer division stays integer
 *   with DECIMAL          integers count as DECIMAL(3|5|10|19, 0), then
 *                         Flink's LogicalTypeMerging rules:
 *                           +,-  s = max(s1, s2), p = max(p1-s1, p2-s2)+s+1
 *                           *    p = p1 + p2, s = s1 + s2
 *                           /    s = max(6, s1 + p2 + 1), p = p1-s1+s2+s
 *                           %    s = max(s1, s2), p = min(p1-s1, p2-s2)+s
 *                         and when p > 38: p = 38, s = max(38 - int digits,
 *                         min(s, 6)).  So 0.908 * price(BIGINT) is
 *                         DECIMAL(4+19, 3) = DECIMAL(23, 3).
 *   with FLOAT/DOUBLE     DOUBLE (FLOAT op FLOAT is FLOAT)
 *   timestamp +/- interval  the timestamp type; date + interval is DATE
 *   interval +/- interval, interval * number  the interval
 *   A result is nullable when an operand is; a computed value is never a
 *   time attribute.
 * Comparisons need comparable types: numeric with numeric, string with
 * string, boolean with boolean, DATE/TIMESTAMP with DATE/TIMESTAMP
 * (TIMESTAMP_LTZ with TIMESTAMP_LTZ), intervals of one class, equal ROWs.
 * Flink does no implicit string/number coercion, so VARCHAR = BIGINT is an
 * error.  NULL compares with anything.
 * Common type (CASE, COALESCE, UNION, VALUES, IN): the widest numeric (with
 * DECIMAL: max integer digits and max scale), VARCHAR of the longest (STRING
 * if any is), the widest timestamp; nullable if any input is.
 * Aggregates: COUNT -> BIGINT NOT NULL; SUM of integer types -> that type
 * (BIGINT -> BIGINT), of DECIMAL(p, s) -> DECIMAL(38, s); AVG of integer
 * types -> that type, of DECIMAL(p, s) -> DECIMAL(38, max(s, 6)); MIN/MAX
 * -> the argument's type; all nullable except COUNT.
 * CAST: numeric, string and boolean convert among each other; strings
 * convert to and from temporal types; DATE/TIME/TIMESTAMP convert among
 * each other; numbers do not convert to timestamps (Flink 1.15+: use
 * TO_TIMESTAMP_LTZ).  CAST keeps the operand's nullability.
 */
#include "sluice/catalog/type_rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DECIMAL_PRECISION 38

sl_type *sl_tp(sl_arena *a, sl_type_kind kind, bool not_null) {
  sl_type *t = sl_type_new(a, kind);
  t->not_null = not_null;
  return t;
}

sl_type *sl_tp_plain(sl_arena *a, const sl_type *t) {
  sl_type *c = sl_type_copy(a, t);
  c->time_attr = SL_TIME_NONE;
  return c;
}

sl_type *sl_tp_nullable(sl_arena *a, const sl_type *t, bool not_null) {
  sl_type *c = sl_type_copy(a, t);
  c->not_null = not_null;
  return c;
}

void sl_tp_decimal_of(const sl_type *t, int *p, int *s) {
  *s = 0;
  switch (t->kind) {
  case SL_TYPE_TINYINT:
    *p = 3;
    break;
  case SL_TYPE_SMALLINT:
    *p = 5;
    break;
  case SL_TYPE_INT:
    *p = 10;
    break;
  case SL_TYPE_BIGINT:
    *p = 19;
    break;
  case SL_TYPE_DECIMAL:
    *p = t->precision;
    *s = t->scale;
    break;
  default:
    *p = MAX_DECIMAL_PRECISION;
    break;
  }
}

sl_type *sl_tp_integer_literal(sl_arena *a, const char *text) {
  errno = 0;
  char *end = NULL;
  long long v = strtoll(text, &end, 10);
  if (errno == ERANGE || !end || *end != '\0')
    return NULL;
  sl_type_kind k =
      (v >= INT32_MIN && v <= INT32_MAX) ? SL_TYPE_INT : SL_TYPE_BIGINT;
  return sl_tp(a, k, true);
}

sl_type *sl_tp_decimal_literal(sl_arena *a, const char *text) {
  int digits = 0, scale = 0;
  bool after = false;
  for (const char *p = text; *p; p++) {
    if (*p == '.') {
      after = true;
    } else if (*p >= '0' && *p <= '9') {
      digits++;
      if (after)
        scale++;
    }
  }
  if (digits == 0 || digits > MAX_DECIMAL_PRECISION)
    return NULL;
  sl_type *t = sl_type_decimal(a, digits, scale);
  t->not_null = true;
  return t;
}

/* Flink's LogicalTypeMerging.adjustPrecisionScale. */
static sl_type *decimal_adjusted(sl_arena *a, int p, int s) {
  if (p > MAX_DECIMAL_PRECISION) {
    int int_digits = p - s;
    int min_scale = s < 6 ? s : 6;
    s = MAX_DECIMAL_PRECISION - int_digits;
    if (s < min_scale)
      s = min_scale;
    p = MAX_DECIMAL_PRECISION;
  }
  if (p < 1)
    p = 1;
  return sl_type_decimal(a, p, s);
}

static int int_rank(sl_type_kind k) {
  switch (k) {
  case SL_TYPE_TINYINT:
    return 1;
  case SL_TYPE_SMALLINT:
    return 2;
  case SL_TYPE_INT:
    return 3;
  case SL_TYPE_BIGINT:
    return 4;
  default:
    return 0;
  }
}

static int imax(int x, int y) {
  return x > y ? x : y;
}
static int imin(int x, int y) {
  return x < y ? x : y;
}

static sl_type *numeric_arith(sl_arena *a, sl_op op, const sl_type *l,
                              const sl_type *r) {
  if (l->kind == SL_TYPE_DOUBLE || r->kind == SL_TYPE_DOUBLE)
    return sl_type_new(a, SL_TYPE_DOUBLE);
  if (l->kind == SL_TYPE_FLOAT || r->kind == SL_TYPE_FLOAT)
    return sl_type_new(a,
                       (l->kind == SL_TYPE_FLOAT && r->kind == SL_TYPE_FLOAT) ||
                               sl_type_is_integer(l) || sl_type_is_integer(r)
                           ? SL_TYPE_FLOAT
                           : SL_TYPE_DOUBLE);
  if (l->kind != SL_TYPE_DECIMAL && r->kind != SL_TYPE_DECIMAL)
    return sl_type_new(a, int_rank(l->kind) >= int_rank(r->kind) ? l->kind
                                                                 : r->kind);
  int p1, s1, p2, s2;
  sl_tp_decimal_of(l, &p1, &s1);
  sl_tp_decimal_of(r, &p2, &s2);
  int p, s;
  switch (op) {
  case SL_OP_ADD:
  case SL_OP_SUB:
    s = imax(s1, s2);
    p = imax(p1 - s1, p2 - s2) + s + 1;
    break;
  case SL_OP_MUL:
    p = p1 + p2;
    s = s1 + s2;
    break;
  case SL_OP_DIV:
    s = imax(6, s1 + p2 + 1);
    p = p1 - s1 + s2 + s;
    break;
  default: /* MOD */
    s = imax(s1, s2);
    p = imin(p1 - s1, p2 - s2) + s;
    break;
  }
  return decimal_adjusted(a, p, s);
}

sl_type *sl_tp_arith(sl_arena *a, sl_op op, const sl_type *l,
                     const sl_type *r) {
  bool not_null = l->not_null && r->not_null;
  sl_type *t = NULL;
  if (op == SL_OP_CONCAT) {
    if ((sl_type_is_string(l) || l->kind == SL_TYPE_NULL) &&
        (sl_type_is_string(r) || r->kind == SL_TYPE_NULL)) {
      int pl = l->kind == SL_TYPE_NULL ? 0 : l->precision;
      int pr = r->kind == SL_TYPE_NULL ? 0 : r->precision;
      t = sl_type_varchar(a, (pl < 0 || pr < 0) ? -1 : pl + pr);
    }
  } else if (l->kind == SL_TYPE_NULL || r->kind == SL_TYPE_NULL) {
    const sl_type *o = l->kind == SL_TYPE_NULL ? r : l;
    if (o->kind == SL_TYPE_NULL || sl_type_is_numeric(o) ||
        sl_type_is_temporal(o) || sl_type_is_interval(o))
      t = sl_tp_plain(a, o);
  } else if (sl_type_is_numeric(l) && sl_type_is_numeric(r)) {
    t = numeric_arith(a, op, l, r);
  } else if ((op == SL_OP_ADD || op == SL_OP_SUB) && sl_type_is_temporal(l) &&
             sl_type_is_interval(r)) {
    t = sl_tp_plain(a, l);
  } else if (op == SL_OP_ADD && sl_type_is_interval(l) &&
             sl_type_is_temporal(r)) {
    t = sl_tp_plain(a, r);
  } else if ((op == SL_OP_ADD || op == SL_OP_SUB) && sl_type_is_interval(l) &&
             l->kind == r->kind) {
    t = sl_tp_plain(a, l);
  } else if ((op == SL_OP_MUL || op == SL_OP_DIV) && sl_type_is_interval(l) &&
             sl_type_is_numeric(r)) {
    t = sl_tp_plain(a, l);
  } else if (op == SL_OP_MUL && sl_type_is_numeric(l) &&
             sl_type_is_interval(r)) {
    t = sl_tp_plain(a, r);
  }
  if (!t)
    return NULL;
  t->not_null = not_null;
  t->time_attr = SL_TIME_NONE;
  return t;
}

static bool is_timestampish(const sl_type *t) {
  return t->kind == SL_TYPE_DATE || t->kind == SL_TYPE_TIMESTAMP;
}

bool sl_tp_comparable(const sl_type *l, const sl_type *r) {
  if (l->kind == SL_TYPE_NULL || r->kind == SL_TYPE_NULL)
    return true;
  if (sl_type_is_numeric(l) && sl_type_is_numeric(r))
    return true;
  if (sl_type_is_string(l) && sl_type_is_string(r))
    return true;
  if (is_timestampish(l) && is_timestampish(r))
    return true;
  if (l->kind == r->kind) {
    if (l->kind == SL_TYPE_ROW)
      return sl_type_equal(l, r);
    return true; /* BOOLEAN, TIME, TIMESTAMP_LTZ, intervals of a class */
  }
  return false;
}

/* Common type of two non-NULL-kind types, or NULL. */
static sl_type *common2(sl_arena *a, const sl_type *x, const sl_type *y) {
  if (sl_type_is_numeric(x) && sl_type_is_numeric(y)) {
    if (x->kind == SL_TYPE_DOUBLE || y->kind == SL_TYPE_DOUBLE)
      return sl_type_new(a, SL_TYPE_DOUBLE);
    if (x->kind == SL_TYPE_FLOAT || y->kind == SL_TYPE_FLOAT)
      return sl_type_new(a, SL_TYPE_FLOAT);
    if (x->kind == SL_TYPE_DECIMAL || y->kind == SL_TYPE_DECIMAL) {
      int p1, s1, p2, s2;
      sl_tp_decimal_of(x, &p1, &s1);
      sl_tp_decimal_of(y, &p2, &s2);
      int s = imax(s1, s2);
      return decimal_adjusted(a, imax(p1 - s1, p2 - s2) + s, s);
    }
    return sl_type_new(a, int_rank(x->kind) >= int_rank(y->kind) ? x->kind
                                                                 : y->kind);
  }
  if (sl_type_is_string(x) && sl_type_is_string(y)) {
    if (x->kind == SL_TYPE_CHAR && y->kind == SL_TYPE_CHAR &&
        x->precision == y->precision)
      return sl_tp_plain(a, x);
    if (x->precision < 0 || y->precision < 0)
      return sl_type_varchar(a, -1);
    return sl_type_varchar(a, imax(x->precision, y->precision));
  }
  if (sl_type_is_temporal(x) && sl_type_is_temporal(y)) {
    if (x->kind == y->kind) {
      sl_type *t = sl_tp_plain(a, x);
      t->precision = imax(x->precision, y->precision);
      return t;
    }
    if ((x->kind == SL_TYPE_TIMESTAMP && y->kind == SL_TYPE_DATE) ||
        (y->kind == SL_TYPE_TIMESTAMP && x->kind == SL_TYPE_DATE))
      return sl_tp_plain(a, x->kind == SL_TYPE_TIMESTAMP ? x : y);
    if ((x->kind == SL_TYPE_TIMESTAMP || x->kind == SL_TYPE_TIMESTAMP_LTZ) &&
        (y->kind == SL_TYPE_TIMESTAMP || y->kind == SL_TYPE_TIMESTAMP_LTZ)) {
      sl_type *t = sl_type_new(a, SL_TYPE_TIMESTAMP_LTZ);
      t->precision = imax(x->precision, y->precision);
      return t;
    }
    return NULL;
  }
  if (x->kind == y->kind && (x->kind != SL_TYPE_ROW || sl_type_equal(x, y)))
    return sl_tp_plain(a, x);
  return NULL;
}

sl_type *sl_tp_common(sl_arena *a, int n, const sl_type *const *types) {
  sl_type *acc = NULL;
  bool not_null = true;
  for (int i = 0; i < n; i++) {
    const sl_type *t = types[i];
    if (t->kind == SL_TYPE_NULL) {
      not_null = false;
      continue;
    }
    if (!t->not_null)
      not_null = false;
    if (!acc) {
      acc = sl_tp_plain(a, t);
      continue;
    }
    acc = common2(a, acc, t);
    if (!acc)
      return NULL;
  }
  if (!acc)
    return sl_tp(a, SL_TYPE_NULL, false);
  acc->not_null = not_null;
  acc->time_attr = SL_TIME_NONE;
  return acc;
}

bool sl_tp_castable(const sl_type *from, const sl_type *to, const char **hint) {
  *hint = NULL;
  if (from->kind == SL_TYPE_NULL || sl_type_is_string(from) ||
      sl_type_is_string(to))
    return true;
  bool fnum = sl_type_is_numeric(from) || from->kind == SL_TYPE_BOOLEAN;
  bool tnum = sl_type_is_numeric(to) || to->kind == SL_TYPE_BOOLEAN;
  if (fnum && tnum)
    return true;
  if (sl_type_is_temporal(from) && sl_type_is_temporal(to))
    return !(from->kind == SL_TYPE_TIME && to->kind == SL_TYPE_DATE) &&
           !(from->kind == SL_TYPE_DATE && to->kind == SL_TYPE_TIME);
  if (sl_type_is_numeric(from) && sl_type_is_temporal(to)) {
    *hint = "use TO_TIMESTAMP_LTZ(value, 3) for epoch milliseconds";
    return false;
  }
  if (sl_type_is_temporal(from) && sl_type_is_numeric(to)) {
    *hint = "use UNIX_TIMESTAMP(CAST(ts AS STRING)) for epoch seconds";
    return false;
  }
  if (sl_type_is_interval(from) && sl_type_is_interval(to))
    return from->kind == to->kind;
  if (from->kind == SL_TYPE_ROW && to->kind == SL_TYPE_ROW)
    return from->nfields == to->nfields;
  return false;
}

bool sl_tp_assignable(const sl_type *dst, const sl_type *src) {
  if (src->kind == SL_TYPE_NULL)
    return true;
  if (sl_type_is_numeric(dst) && sl_type_is_numeric(src))
    return true;
  if (sl_type_is_string(dst) && sl_type_is_string(src))
    return true;
  if ((dst->kind == SL_TYPE_TIMESTAMP || dst->kind == SL_TYPE_TIMESTAMP_LTZ) &&
      (src->kind == SL_TYPE_TIMESTAMP || src->kind == SL_TYPE_TIMESTAMP_LTZ ||
       src->kind == SL_TYPE_DATE))
    return true;
  if (dst->kind == SL_TYPE_ROW && src->kind == SL_TYPE_ROW) {
    if (dst->nfields != src->nfields)
      return false;
    for (int i = 0; i < dst->nfields; i++)
      if (!sl_tp_assignable(dst->fields[i].type, src->fields[i].type))
        return false;
    return true;
  }
  return dst->kind == src->kind;
}

sl_type *sl_tp_sum(sl_arena *a, const sl_type *arg) {
  sl_type *t;
  if (arg->kind == SL_TYPE_DECIMAL)
    t = sl_type_decimal(a, MAX_DECIMAL_PRECISION, arg->scale);
  else
    t = sl_tp_plain(a, arg);
  t->not_null = false;
  return t;
}

sl_type *sl_tp_avg(sl_arena *a, const sl_type *arg) {
  sl_type *t;
  if (arg->kind == SL_TYPE_DECIMAL)
    t = sl_type_decimal(a, MAX_DECIMAL_PRECISION, imax(arg->scale, 6));
  else
    t = sl_tp_plain(a, arg);
  t->not_null = false;
  return t;
}

const char *sl_tp_msg(sl_arena *a, const sl_type *t) {
  if (t->kind == SL_TYPE_VARCHAR && t->precision < 0)
    return "VARCHAR";
  if (t->kind == SL_TYPE_NULL)
    return "NULL";
  sl_type *c = sl_tp_plain(a, t);
  c->not_null = false;
  return sl_type_name(a, c);
}
