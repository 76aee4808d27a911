/* bind_expr.c - binding expressions: names to columns, literals to typed
 * values, operators and function calls to typed nodes (rules in
 * bind_types.c), aggregates collected into the enclosing SELECT block.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bind_int.h"
#include "sluice/common/cancel.h"

sl_bexpr *sl_bexpr_new(sl_binder *b, sl_bexpr_kind kind, sl_type *type,
                       sl_span span) {
  sl_bexpr *e = SL_ANEW(b->a, sl_bexpr);
  e->kind = kind;
  e->type = type;
  e->span = span;
  return e;
}

static sl_bexpr **new_args(sl_binder *b, sl_bexpr *e, int n) {
  e->nargs = n;
  e->args = SL_ANEW_N(b->a, sl_bexpr *, n > 0 ? n : 1);
  return e->args;
}

sl_bexpr *sl_bexpr_column(sl_binder *b, const sl_scope *s, int index, int depth,
                          sl_span span) {
  /* A plain column reference keeps the column's type as is, including its
   * time attribute: that is how *ROWTIME* survives projections. */
  sl_bexpr *e = sl_bexpr_new(b, SL_BEXPR_COLUMN,
                             sl_type_copy(b->a, s->cols[index].type), span);
  e->index = index;
  e->depth = depth;
  e->name = s->cols[index].name;
  return e;
}

bool sl_bexpr_equal(const sl_bexpr *x, const sl_bexpr *y) {
  if (x == y)
    return true;
  if (!x || !y || x->kind != y->kind || x->nargs != y->nargs)
    return false;
  switch (x->kind) {
  case SL_BEXPR_LITERAL:
    if (x->lit.kind != y->lit.kind || x->lit.i64 != y->lit.i64 ||
        !sl_type_equal(x->type, y->type))
      return false;
    if (x->lit.text && y->lit.text)
      return strcmp(x->lit.text, y->lit.text) == 0;
    return x->lit.text == y->lit.text;
  case SL_BEXPR_COLUMN:
    return x->index == y->index && x->depth == y->depth;
  case SL_BEXPR_FIELD:
  case SL_BEXPR_GROUP_REF:
  case SL_BEXPR_AGG_REF:
  case SL_BEXPR_WINDOW_REF:
    if (x->index != y->index)
      return false;
    break;
  case SL_BEXPR_SUBQUERY:
    return false; /* never merged */
  case SL_BEXPR_CAST:
    if (!sl_type_equal(x->type, y->type))
      return false;
    break;
  default:
    break;
  }
  if (x->op != y->op || x->fn != y->fn || x->negated != y->negated ||
      x->similar != y->similar || x->is_what != y->is_what ||
      x->unit != y->unit || x->trim_side != y->trim_side || x->prop != y->prop)
    return false;
  for (int i = 0; i < x->nargs; i++)
    if (!sl_bexpr_equal(x->args[i], y->args[i]))
      return false;
  return true;
}

bool sl_bexpr_interval_ms(const sl_bexpr *e, int64_t *ms) {
  if (!e || e->kind != SL_BEXPR_LITERAL ||
      e->type->kind != SL_TYPE_INTERVAL_DAY_TIME)
    return false;
  *ms = e->lit.i64;
  return true;
}

static const char *did_you_mean(sl_binder *b, const char *sug) {
  return sug ? sl_arena_printf(b->a, " (did you mean '%s'?)", sug) : "";
}

/* ---- literals ------------------------------------------------------------ */

static int64_t unit_ms(sl_interval_unit u) {
  switch (u) {
  case SL_UNIT_DAY:
    return 86400000;
  case SL_UNIT_HOUR:
    return 3600000;
  case SL_UNIT_MINUTE:
    return 60000;
  case SL_UNIT_SECOND:
    return 1000;
  case SL_UNIT_MILLISECOND:
    return 1;
  case SL_UNIT_YEAR:
    return 12; /* months */
  default:
    return 1; /* MONTH: months */
  }
}

/* INTERVAL '1 02:03:04.5' DAY TO SECOND and friends: the fields from unit
 * down to to_unit, separated by any non-digit; a fraction on the last. */
static int interval_value(const char *text, sl_interval_unit unit,
                          sl_interval_unit to, int64_t *out) {
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  bool neg = false;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    p++;
  }
  if (to == SL_UNIT_NONE)
    to = unit;
  bool ym = unit == SL_UNIT_YEAR || unit == SL_UNIT_MONTH;
  int64_t total = 0;
  sl_interval_unit u = unit;
  while (*p) {
    if (!isdigit((unsigned char)*p))
      return -1;
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (errno == ERANGE || end == p)
      return -1;
    /* v >= 0; a value past int64 (as milliseconds or months) is out of
     * range, not a wrapped number (casting it would be undefined). */
    double part = v * (double)unit_ms(u) + 0.5;
    if (!(part < 9223372036854775808.0) || (int64_t)part > INT64_MAX - total)
      return -2;
    total += (int64_t)part;
    p = end;
    if (!*p)
      break;
    if (u == to)
      return -1; /* more fields than units */
    while (*p && !isdigit((unsigned char)*p))
      p++;
    u = (sl_interval_unit)(u + 1);
    if (ym && u > SL_UNIT_MONTH)
      return -1;
  }
  *out = neg ? -total : total;
  return 0;
}

static int bind_literal(sl_binder *b, const sl_expr *e, sl_bexpr **out) {
  sl_bexpr *r = sl_bexpr_new(b, SL_BEXPR_LITERAL, NULL, e->span);
  r->lit.kind = e->u.lit.kind;
  r->lit.text = e->u.lit.text;
  const char *text = e->u.lit.text ? e->u.lit.text : "";
  switch (e->u.lit.kind) {
  case SL_LIT_NULL:
    r->type = sl_tp(b->a, SL_TYPE_NULL, false);
    break;
  case SL_LIT_BOOL:
    r->type = sl_tp(b->a, SL_TYPE_BOOLEAN, true);
    r->lit.i64 = e->u.lit.bool_value;
    break;
  case SL_LIT_INTEGER:
    r->type = sl_tp_integer_literal(b->a, text);
    if (!r->type)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "integer literal %s is out of range for BIGINT; "
                           "write it as a DECIMAL (%s.0)",
                           text, text);
    r->lit.i64 = strtoll(text, NULL, 10);
    break;
  case SL_LIT_DECIMAL:
    r->type = sl_tp_decimal_literal(b->a, text);
    if (!r->type)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "decimal literal %s has more than 38 digits", text);
    r->lit.f64 = strtod(text, NULL);
    break;
  case SL_LIT_DOUBLE:
    r->type = sl_tp(b->a, SL_TYPE_DOUBLE, true);
    r->lit.f64 = strtod(text, NULL);
    if (isinf(r->lit.f64))
      return sl_bind_error(b, e->span, SL_EBIND,
                           "numeric literal %s is out of range for DOUBLE "
                           "(at most about 1.8E308)",
                           text);
    break;
  case SL_LIT_STRING: {
    int chars = 0; /* code points, as Flink counts CHAR(n) */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
      if ((*p & 0xC0) != 0x80)
        chars++;
    r->type = sl_tp(b->a, SL_TYPE_CHAR, true);
    r->type->precision = chars;
    break;
  }
  case SL_LIT_INTERVAL: {
    sl_interval_unit u = e->u.lit.unit;
    bool ym = u == SL_UNIT_YEAR || u == SL_UNIT_MONTH;
    r->type = sl_tp(
        b->a, ym ? SL_TYPE_INTERVAL_YEAR_MONTH : SL_TYPE_INTERVAL_DAY_TIME,
        true);
    int64_t v;
    int rc = interval_value(text, u, e->u.lit.to_unit, &v);
    if (rc == -2)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "interval literal '%s' is out of range: an "
                           "interval holds at most 2^63-1 %s",
                           text, ym ? "months" : "milliseconds");
    if (rc != 0)
      return sl_bind_error(
          b, e->span, SL_EBIND, "invalid interval literal '%s' for %s%s%s",
          text, sl_interval_unit_name(u), e->u.lit.to_unit ? " TO " : "",
          e->u.lit.to_unit ? sl_interval_unit_name(e->u.lit.to_unit) : "");
    r->lit.i64 = e->u.lit.negative ? -v : v;
    r->unit = u;
    r->to_unit = e->u.lit.to_unit;
    break;
  }
  case SL_LIT_TIMESTAMP: {
    const char *dot = strchr(text, '.');
    int prec = 0;
    if (dot)
      while (isdigit((unsigned char)dot[1 + prec]))
        prec++;
    r->type = sl_type_timestamp(b->a, prec > 9 ? 9 : prec);
    r->type->not_null = true;
    break;
  }
  case SL_LIT_DATE:
    r->type = sl_tp(b->a, SL_TYPE_DATE, true);
    break;
  case SL_LIT_TIME:
    r->type = sl_tp(b->a, SL_TYPE_TIME, true);
    break;
  }
  *out = r;
  return SL_OK;
}

/* ---- operators ------------------------------------------------------------
 */

static bool is_bool_or_null(const sl_type *t) {
  return t->kind == SL_TYPE_BOOLEAN || t->kind == SL_TYPE_NULL;
}

static bool is_comparison(sl_op op) {
  return op == SL_OP_EQ || op == SL_OP_NE || op == SL_OP_LT || op == SL_OP_LE ||
         op == SL_OP_GT || op == SL_OP_GE;
}

static int bind_binary(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                       sl_bexpr **out) {
  sl_bexpr *l, *r;
  int rc = sl_bind_expr(b, cx, e->u.binary.left, &l);
  if (!rc)
    rc = sl_bind_expr(b, cx, e->u.binary.right, &r);
  if (rc)
    return rc;
  sl_op op = e->u.binary.op;
  sl_type *t = NULL;
  bool not_null = l->type->not_null && r->type->not_null;
  if (op == SL_OP_AND || op == SL_OP_OR) {
    const sl_bexpr *bad = !is_bool_or_null(l->type)   ? l
                          : !is_bool_or_null(r->type) ? r
                                                      : NULL;
    if (bad)
      return sl_bind_error(
          b, bad->span, SL_EBIND, "%s needs BOOLEAN operands, got %s in %s",
          sl_op_symbol(op), sl_tp_msg(b->a, bad->type), sl_bind_expr_sql(b, e));
    t = sl_tp(b->a, SL_TYPE_BOOLEAN, not_null);
  } else if (is_comparison(op)) {
    if (!sl_tp_comparable(l->type, r->type))
      return sl_bind_error(b, e->span, SL_EBIND,
                           "cannot compare %s with %s in %s",
                           sl_tp_msg(b->a, l->type), sl_tp_msg(b->a, r->type),
                           sl_bind_expr_sql(b, e));
    t = sl_tp(b->a, SL_TYPE_BOOLEAN, not_null);
  } else {
    t = sl_tp_arith(b->a, op, l->type, r->type);
    if (!t)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "cannot apply '%s' to %s and %s in %s",
                           sl_op_symbol(op), sl_tp_msg(b->a, l->type),
                           sl_tp_msg(b->a, r->type), sl_bind_expr_sql(b, e));
  }
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_BINARY, t, e->span);
  n->op = op;
  sl_bexpr **a = new_args(b, n, 2);
  a[0] = l;
  a[1] = r;
  *out = n;
  return SL_OK;
}

/* AND / OR over any number of operands: one bound node whose args are the
 * operands (binder.h), so a chain of any length is one level deep. */
static int bind_logical(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                        sl_bexpr **out) {
  sl_op op = e->u.logical.op;
  int n = SL_LIST_LEN(e->u.logical.args);
  sl_bexpr *node = sl_bexpr_new(b, SL_BEXPR_BINARY, NULL, e->span);
  node->op = op;
  sl_bexpr **a = new_args(b, node, n);
  bool not_null = true;
  for (int i = 0; i < n; i++) {
    int rc = sl_bind_expr(b, cx, SL_LIST_AT(e->u.logical.args, i), &a[i]);
    if (rc)
      return rc;
    if (!is_bool_or_null(a[i]->type))
      return sl_bind_error(b, a[i]->span, SL_EBIND,
                           "%s needs BOOLEAN operands, got %s in %s",
                           sl_op_symbol(op), sl_tp_msg(b->a, a[i]->type),
                           sl_bind_expr_sql(b, e));
    not_null = not_null && a[i]->type->not_null;
  }
  node->type = sl_tp(b->a, SL_TYPE_BOOLEAN, not_null);
  *out = node;
  return SL_OK;
}

static int bind_unary(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                      sl_bexpr **out) {
  sl_bexpr *x;
  int rc = sl_bind_expr(b, cx, e->u.unary.operand, &x);
  if (rc)
    return rc;
  sl_op op = e->u.unary.op;
  bool ok = op == SL_OP_NOT ? is_bool_or_null(x->type)
                            : (sl_type_is_numeric(x->type) ||
                               sl_type_is_interval(x->type) ||
                               x->type->kind == SL_TYPE_NULL);
  if (!ok)
    return sl_bind_error(b, e->span, SL_EBIND, "cannot apply %s to %s in %s",
                         op == SL_OP_NOT ? "NOT" : sl_op_symbol(op),
                         sl_tp_msg(b->a, x->type), sl_bind_expr_sql(b, e));
  sl_type *t = op == SL_OP_NOT ? sl_tp(b->a, SL_TYPE_BOOLEAN, x->type->not_null)
                               : sl_tp_plain(b->a, x->type);
  /* Fold -<literal> so that -5 stays a constant (window offsets etc.). */
  if (op == SL_OP_NEG && x->kind == SL_BEXPR_LITERAL &&
      (x->lit.kind == SL_LIT_INTEGER || x->lit.kind == SL_LIT_INTERVAL)) {
    x->lit.i64 = -x->lit.i64;
    x->span = e->span;
    *out = x;
    return SL_OK;
  }
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_UNARY, t, e->span);
  n->op = op;
  new_args(b, n, 1)[0] = x;
  *out = n;
  return SL_OK;
}

static int require_comparable(sl_binder *b, const sl_expr *e, const sl_bexpr *x,
                              const sl_bexpr *y) {
  if (sl_tp_comparable(x->type, y->type))
    return SL_OK;
  return sl_bind_error(b, y->span, SL_EBIND, "cannot compare %s with %s in %s",
                       sl_tp_msg(b->a, x->type), sl_tp_msg(b->a, y->type),
                       sl_bind_expr_sql(b, e));
}

static int bind_between(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                        sl_bexpr **out) {
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_BETWEEN, NULL, e->span);
  sl_bexpr **a = new_args(b, n, 3);
  int rc = sl_bind_expr(b, cx, e->u.between.operand, &a[0]);
  if (!rc)
    rc = sl_bind_expr(b, cx, e->u.between.low, &a[1]);
  if (!rc)
    rc = sl_bind_expr(b, cx, e->u.between.high, &a[2]);
  if (!rc)
    rc = require_comparable(b, e, a[0], a[1]);
  if (!rc)
    rc = require_comparable(b, e, a[0], a[2]);
  if (rc)
    return rc;
  n->negated = e->u.between.negated;
  n->type = sl_tp(b->a, SL_TYPE_BOOLEAN,
                  a[0]->type->not_null && a[1]->type->not_null &&
                      a[2]->type->not_null);
  *out = n;
  return SL_OK;
}

static int bind_in_list(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                        sl_bexpr **out) {
  int nv = SL_LIST_LEN(e->u.in_list.values);
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_IN_LIST, NULL, e->span);
  sl_bexpr **a = new_args(b, n, nv + 1);
  int rc = sl_bind_expr(b, cx, e->u.in_list.operand, &a[0]);
  bool not_null = !rc && a[0]->type->not_null;
  for (int i = 0; !rc && i < nv; i++) {
    rc = sl_bind_expr(b, cx, SL_LIST_AT(e->u.in_list.values, i), &a[i + 1]);
    if (!rc)
      rc = require_comparable(b, e, a[0], a[i + 1]);
    if (!rc && !a[i + 1]->type->not_null)
      not_null = false;
  }
  if (rc)
    return rc;
  n->negated = e->u.in_list.negated;
  n->type = sl_tp(b->a, SL_TYPE_BOOLEAN, not_null);
  *out = n;
  return SL_OK;
}

static int bind_like(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                     sl_bexpr **out) {
  bool esc = e->u.like.escape != NULL;
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_LIKE, NULL, e->span);
  sl_bexpr **a = new_args(b, n, esc ? 3 : 2);
  int rc = sl_bind_expr(b, cx, e->u.like.operand, &a[0]);
  if (!rc)
    rc = sl_bind_expr(b, cx, e->u.like.pattern, &a[1]);
  if (!rc && esc)
    rc = sl_bind_expr(b, cx, e->u.like.escape, &a[2]);
  if (rc)
    return rc;
  bool not_null = true;
  for (int i = 0; i < n->nargs; i++) {
    if (!sl_type_is_string(a[i]->type) && a[i]->type->kind != SL_TYPE_NULL)
      return sl_bind_error(b, a[i]->span, SL_EBIND,
                           "%s needs string operands, got %s in %s",
                           e->u.like.similar ? "SIMILAR TO" : "LIKE",
                           sl_tp_msg(b->a, a[i]->type), sl_bind_expr_sql(b, e));
    not_null = not_null && a[i]->type->not_null;
  }
  n->negated = e->u.like.negated;
  n->similar = e->u.like.similar;
  n->type = sl_tp(b->a, SL_TYPE_BOOLEAN, not_null);
  *out = n;
  return SL_OK;
}

static int bind_is(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                   sl_bexpr **out) {
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_IS, NULL, e->span);
  sl_bexpr **a = new_args(b, n, 1);
  int rc = sl_bind_expr(b, cx, e->u.is.operand, &a[0]);
  if (rc)
    return rc;
  if (e->u.is.what != SL_IS_NULL && !is_bool_or_null(a[0]->type))
    return sl_bind_error(b, e->span, SL_EBIND,
                         "IS TRUE/FALSE/UNKNOWN needs a BOOLEAN, got %s in %s",
                         sl_tp_msg(b->a, a[0]->type), sl_bind_expr_sql(b, e));
  n->is_what = e->u.is.what;
  n->negated = e->u.is.negated;
  n->type = sl_tp(b->a, SL_TYPE_BOOLEAN, true);
  *out = n;
  return SL_OK;
}

static int bind_case(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                     sl_bexpr **out) {
  int nw = SL_LIST_LEN(e->u.case_.whens);
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_CASE, NULL, e->span);
  sl_bexpr **a = new_args(b, n, 2 * nw + 1);
  sl_bexpr *operand = NULL;
  int rc = SL_OK;
  if (e->u.case_.operand)
    rc = sl_bind_expr(b, cx, e->u.case_.operand, &operand);
  const sl_type **results = SL_ANEW_N(b->a, const sl_type *, nw + 1);
  for (int i = 0; !rc && i < nw; i++) {
    const sl_when *w = SL_LIST_AT(e->u.case_.whens, i);
    sl_bexpr *c;
    rc = sl_bind_expr(b, cx, w->when, &c);
    if (rc)
      break;
    if (operand) {
      /* CASE x WHEN v: WHEN x = v */
      rc = require_comparable(b, e, operand, c);
      if (rc)
        break;
      sl_bexpr *eq =
          sl_bexpr_new(b, SL_BEXPR_BINARY,
                       sl_tp(b->a, SL_TYPE_BOOLEAN,
                             operand->type->not_null && c->type->not_null),
                       w->when->span);
      eq->op = SL_OP_EQ;
      sl_bexpr **ea = new_args(b, eq, 2);
      ea[0] = operand;
      ea[1] = c;
      c = eq;
    } else if (!is_bool_or_null(c->type)) {
      return sl_bind_error(b, c->span, SL_EBIND,
                           "CASE WHEN condition must be BOOLEAN, got %s",
                           sl_tp_msg(b->a, c->type));
    }
    a[2 * i] = c;
    rc = sl_bind_expr(b, cx, w->then, &a[2 * i + 1]);
    if (!rc)
      results[i] = a[2 * i + 1]->type;
  }
  if (rc)
    return rc;
  if (e->u.case_.else_expr) {
    rc = sl_bind_expr(b, cx, e->u.case_.else_expr, &a[2 * nw]);
    if (rc)
      return rc;
  } else {
    sl_bexpr *null = sl_bexpr_new(b, SL_BEXPR_LITERAL,
                                  sl_tp(b->a, SL_TYPE_NULL, false), e->span);
    null->lit.kind = SL_LIT_NULL;
    a[2 * nw] = null;
  }
  results[nw] = a[2 * nw]->type;
  n->type = sl_tp_common(b->a, nw + 1, results);
  if (!n->type) {
    sl_strbuf sb = SL_STRBUF_INIT;
    for (int i = 0; i <= nw; i++) {
      if (i)
        sl_strbuf_append(&sb, ", ");
      sl_strbuf_append(&sb, sl_tp_msg(b->a, results[i]));
    }
    rc = sl_bind_error(b, e->span, SL_EBIND,
                       "CASE results have no common type: %s",
                       sl_strbuf_cstr(&sb));
    sl_strbuf_free(&sb);
    return rc;
  }
  *out = n;
  return SL_OK;
}

static int bind_cast(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                     sl_bexpr **out) {
  sl_bexpr *x;
  int rc = sl_bind_expr(b, cx, e->u.cast.operand, &x);
  if (rc)
    return rc;
  const sl_type *to = e->u.cast.type;
  const char *hint;
  if (!sl_tp_castable(x->type, to, &hint))
    return sl_bind_error(b, e->span, SL_EBIND, "cannot CAST %s to %s%s%s",
                         sl_tp_msg(b->a, x->type), sl_tp_msg(b->a, to),
                         hint ? ": " : "", hint ? hint : "");
  sl_type *t = sl_tp_plain(b->a, to);
  t->not_null = x->type->not_null && !e->u.cast.try_cast;
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_CAST, t, e->span);
  new_args(b, n, 1)[0] = x;
  n->negated = e->u.cast.try_cast;
  *out = n;
  return SL_OK;
}

static int bind_subquery(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                         sl_bexpr **out) {
  sl_bquery *q;
  int rc = sl_bind_query(b, e->u.subquery.query, cx->scope, &q);
  if (rc)
    return rc;
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_SUBQUERY, NULL, e->span);
  n->subquery = q;
  n->subquery_kind = e->u.subquery.kind;
  n->negated = e->u.subquery.negated;
  if (e->u.subquery.kind == SL_SUBQ_EXISTS) {
    n->type = sl_tp(b->a, SL_TYPE_BOOLEAN, true);
    *out = n;
    return SL_OK;
  }
  if (q->ncols != 1)
    return sl_bind_error(
        b, e->span, SL_EBIND, "%s subquery must return one column, got %d",
        e->u.subquery.kind == SL_SUBQ_IN ? "IN" : "scalar", q->ncols);
  if (e->u.subquery.kind == SL_SUBQ_SCALAR) {
    n->type = sl_tp_nullable(b->a, sl_tp_plain(b->a, q->cols[0].type), false);
    *out = n;
    return SL_OK;
  }
  sl_bexpr *x;
  rc = sl_bind_expr(b, cx, e->u.subquery.operand, &x);
  if (rc)
    return rc;
  if (!sl_tp_comparable(x->type, q->cols[0].type))
    return sl_bind_error(
        b, e->span, SL_EBIND, "cannot compare %s with %s in IN (subquery)",
        sl_tp_msg(b->a, x->type), sl_tp_msg(b->a, q->cols[0].type));
  new_args(b, n, 1)[0] = x;
  n->type = sl_tp(b->a, SL_TYPE_BOOLEAN, false);
  *out = n;
  return SL_OK;
}

/* ---- function calls --------------------------------------------------------
 */

static int check_arity(sl_binder *b, const sl_expr *e, const sl_function *fn,
                       int nargs) {
  if (nargs >= fn->min_args && (fn->max_args < 0 || nargs <= fn->max_args))
    return SL_OK;
  const char *want;
  if (fn->max_args < 0)
    want = sl_arena_printf(b->a, "at least %d", fn->min_args);
  else if (fn->min_args == fn->max_args)
    want = sl_arena_printf(b->a, "%d", fn->min_args);
  else
    want = sl_arena_printf(b->a, "%d to %d", fn->min_args, fn->max_args);
  return sl_bind_error(b, e->span, SL_EBIND,
                       "wrong number of arguments to %s: got %d, expected %s "
                       "(%s)",
                       fn->name, nargs, want, fn->signature);
}

/* Apply fn's return-type rule to bound arguments. */
static int call_type(sl_binder *b, const sl_expr *e, const sl_function *fn,
                     int nargs, sl_bexpr **args, sl_type **out) {
  const sl_type **types = SL_ANEW_N(b->a, const sl_type *, nargs + 1);
  for (int i = 0; i < nargs; i++)
    types[i] = args[i]->type;
  sl_fn_check chk = {-1, NULL};
  sl_type *t = fn->return_type(b->a, nargs, types, &chk);
  if (!t) {
    sl_span sp = chk.bad_arg >= 0 && chk.bad_arg < nargs
                     ? args[chk.bad_arg]->span
                     : e->span;
    return sl_bind_error(b, sp, SL_EBIND, "%s %s", fn->name,
                         chk.message ? chk.message : "rejects its arguments");
  }
  *out = t;
  return SL_OK;
}

static int bind_args(sl_binder *b, sl_ectx *cx, const sl_list *l,
                     sl_bexpr ***out) {
  int n = SL_LIST_LEN(l);
  sl_bexpr **a = SL_ANEW_N(b->a, sl_bexpr *, n + 1);
  for (int i = 0; i < n; i++) {
    const sl_expr *x = SL_LIST_AT(l, i);
    if (x->kind == SL_EXPR_STAR)
      return sl_bind_error(b, x->span, SL_EBIND,
                           "'*' is only allowed in COUNT(*) and the SELECT "
                           "list");
    int rc = sl_bind_expr(b, cx, x, &a[i]);
    if (rc)
      return rc;
  }
  *out = a;
  return SL_OK;
}

static int bind_aggregate(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                          const sl_function *fn, sl_bexpr **out) {
  if (cx->in_agg)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "aggregate functions cannot be nested: %s inside %s",
                         fn->name, cx->in_agg);
  if (!cx->allow_agg || !cx->block)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "aggregate function %s is not allowed in %s", fn->name,
                         cx->clause ? cx->clause : "this context");
  bool star = e->u.call.star;
  int nargs = SL_LIST_LEN(e->u.call.args);
  if (star && strcmp(fn->name, "COUNT") != 0)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s(*) is not allowed; only COUNT(*)", fn->name);
  if (!star && nargs == 0 && strcmp(fn->name, "COUNT") == 0)
    star = true; /* COUNT() as COUNT(*) */
  if (!star) {
    int rc = check_arity(b, e, fn, nargs);
    if (rc)
      return rc;
  }
  sl_ectx sub = *cx;
  sub.allow_agg = false;
  sub.allow_window = false;
  sub.in_agg = fn->name;
  sub.clause = "an aggregate's arguments";
  sl_bagg agg = {0};
  agg.fn = fn;
  agg.star = star;
  agg.distinct = e->u.call.distinct;
  agg.span = e->span;
  int rc = bind_args(b, &sub, e->u.call.args, &agg.args);
  if (rc)
    return rc;
  agg.nargs = star ? 0 : nargs;
  if (e->u.call.filter) {
    sub.clause = "FILTER";
    rc = sl_bind_condition(b, &sub, e->u.call.filter, &agg.filter);
    if (rc)
      return rc;
  }
  rc = call_type(b, e, fn, agg.nargs, agg.args, &agg.type);
  if (rc)
    return rc;
  agg.state = sl_function_agg_state(fn, agg.distinct);

  /* The same aggregate twice is computed once. */
  sl_block *blk = cx->block;
  int idx = -1;
  for (int i = 0; i < blk->naggs && idx < 0; i++) {
    const sl_bagg *o = &blk->aggs[i];
    if (o->fn != fn || o->star != agg.star || o->distinct != agg.distinct ||
        o->nargs != agg.nargs || !sl_bexpr_equal(o->filter, agg.filter))
      continue;
    bool same = true;
    for (int k = 0; k < agg.nargs && same; k++)
      same = sl_bexpr_equal(o->args[k], agg.args[k]);
    if (same)
      idx = i;
  }
  if (idx < 0) {
    idx = blk->naggs;
    SL_BIND_PUSH(b->a, blk->aggs, blk->naggs, blk->aggs_cap, agg);
  }
  sl_bexpr *r =
      sl_bexpr_new(b, SL_BEXPR_AGG_REF, sl_type_copy(b->a, agg.type), e->span);
  r->index = idx;
  r->fn = fn;
  r->name = sl_bind_expr_sql(b, e);
  *out = r;
  return SL_OK;
}

static int bind_call(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                     sl_bexpr **out) {
  const sl_qname *qn = &e->u.call.name;
  const char *name = qn->nparts ? qn->parts[qn->nparts - 1] : "";
  const sl_function *fn = qn->nparts == 1 ? sl_function_find(name) : NULL;
  if (!fn) {
    const char *sug = sl_function_suggest(name);
    return sl_bind_error(b, qn->span.length ? qn->span : e->span, SL_EBIND,
                         "unknown function '%s'%s", sl_bind_qname_sql(b, qn),
                         did_you_mean(b, sug));
  }
  if (e->u.call.over)
    return sl_bind_over(b, cx, e, fn, out);
  switch (fn->kind) {
  case SL_FN_AGGREGATE:
    return bind_aggregate(b, cx, e, fn, out);
  case SL_FN_WINDOW:
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s needs an OVER (PARTITION BY ... ORDER BY ...) "
                         "clause",
                         fn->name);
  case SL_FN_WINDOW_TVF:
    return sl_bind_error(
        b, e->span, SL_EBIND,
        "%s is a window function: use it in FROM TABLE(%s(TABLE t, "
        "DESCRIPTOR(ts), ...)) or in GROUP BY %s(ts, ...)",
        fn->name, fn->name, fn->name);
  default:
    break;
  }
  if (e->u.call.star || e->u.call.distinct || e->u.call.filter)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s is not an aggregate function: %s is not allowed",
                         fn->name,
                         e->u.call.star       ? "'*'"
                         : e->u.call.distinct ? "DISTINCT"
                                              : "FILTER");
  int nargs = SL_LIST_LEN(e->u.call.args);
  int rc = check_arity(b, e, fn, nargs);
  if (rc)
    return rc;
  sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_CALL, NULL, e->span);
  n->fn = fn;
  n->unit = e->u.call.unit;
  n->trim_side = e->u.call.trim_side;
  rc = bind_args(b, cx, e->u.call.args, &n->args);
  if (rc)
    return rc;
  n->nargs = nargs;
  rc = call_type(b, e, fn, nargs, n->args, &n->type);
  if (rc)
    return rc;
  *out = n;
  return SL_OK;
}

/* A bare name that is not a column may be a niladic function. */
static const char *const niladic[] = {"CURRENT_TIMESTAMP", "LOCALTIMESTAMP"};

static int bind_name(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                     sl_bexpr **out) {
  bool missing;
  int rc = sl_bind_column_ref(b, cx->scope, &e->u.name, out, &missing);
  if (rc || !missing)
    return rc;
  if (e->u.name.nparts == 1) {
    for (size_t i = 0; i < sizeof niladic / sizeof niladic[0]; i++) {
      if (strcasecmp(e->u.name.parts[0], niladic[i]) == 0) {
        const sl_function *fn = sl_function_find(niladic[i]);
        sl_bexpr *n = sl_bexpr_new(b, SL_BEXPR_CALL, NULL, e->span);
        n->fn = fn;
        n->args = SL_ANEW_N(b->a, sl_bexpr *, 1);
        sl_fn_check chk = {-1, NULL};
        n->type = fn->return_type(b->a, 0, NULL, &chk);
        *out = n;
        return SL_OK;
      }
    }
  }
  return sl_bind_column_ref(b, cx->scope, &e->u.name, out, NULL);
}

static int bind_field(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                      sl_bexpr **out) {
  sl_bexpr *base;
  int rc = sl_bind_expr(b, cx, e->u.field.base, &base);
  if (rc)
    return rc;
  sl_qname q = {0};
  const char *parts[2] = {"(expression)", e->u.field.field};
  q.nparts = 2;
  q.parts = parts;
  q.span = e->span;
  return sl_bind_fields(b, &q, 1, base, out);
}

static int bind_expr_kind(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                          sl_bexpr **out) {
  switch (e->kind) {
  case SL_EXPR_LITERAL:
    return bind_literal(b, e, out);
  case SL_EXPR_NAME:
    return bind_name(b, cx, e, out);
  case SL_EXPR_STAR:
    return sl_bind_error(b, e->span, SL_EBIND,
                         "'*' is only allowed in COUNT(*) and the SELECT list");
  case SL_EXPR_UNARY:
    return bind_unary(b, cx, e, out);
  case SL_EXPR_BINARY:
    return bind_binary(b, cx, e, out);
  case SL_EXPR_LOGICAL:
    return bind_logical(b, cx, e, out);
  case SL_EXPR_BETWEEN:
    return bind_between(b, cx, e, out);
  case SL_EXPR_IN_LIST:
    return bind_in_list(b, cx, e, out);
  case SL_EXPR_LIKE:
    return bind_like(b, cx, e, out);
  case SL_EXPR_IS:
    return bind_is(b, cx, e, out);
  case SL_EXPR_CASE:
    return bind_case(b, cx, e, out);
  case SL_EXPR_CAST:
    return bind_cast(b, cx, e, out);
  case SL_EXPR_CALL:
    return bind_call(b, cx, e, out);
  case SL_EXPR_SUBQUERY:
    return bind_subquery(b, cx, e, out);
  case SL_EXPR_FIELD:
    return bind_field(b, cx, e, out);
  }
  return sl_bind_error(b, e->span, SL_EINTERNAL, "unknown expression kind %d",
                       (int)e->kind);
}

/* The parser bounds each statement's depth; views and subqueries bound
 * inside an expression add theirs, so the recursion is counted here too. */
int sl_bind_expr(sl_binder *b, sl_ectx *cx, const sl_expr *e, sl_bexpr **out) {
  /* Ctrl-C, .timeout: a long list binds for s */
  if (sl_cancel_current_pending())
    return sl_error_set(b->err, SL_ECANCELLED, "query cancelled");
  if (b->expr_depth >= SL_MAX_BIND_DEPTH)
    return sl_bind_error(
        b, e->span, SL_EBIND,
        "expression nested too deeply once views and subqueries are "
        "expanded: more than %d levels; split it, or nest fewer views",
        SL_MAX_BIND_DEPTH);
  b->expr_depth++;
  int rc = bind_expr_kind(b, cx, e, out);
  b->expr_depth--;
  return rc;
}

int sl_bind_condition(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                      sl_bexpr **out) {
  int rc = sl_bind_expr(b, cx, e, out);
  if (rc)
    return rc;
  if (!is_bool_or_null((*out)->type))
    return sl_bind_error(b, e->span, SL_EBIND, "%s must be BOOLEAN, got %s",
                         cx->clause ? cx->clause : "condition",
                         sl_tp_msg(b->a, (*out)->type));
  return SL_OK;
}
