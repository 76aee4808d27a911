/* bind_format.c - printing bound expressions back as SQL, for EXPLAIN and
 * messages (sl_bexpr_format). */
#include <string.h>

#include "bind_int.h"

const char *sl_bexpr_kind_name(sl_bexpr_kind k) {
  static const char *const names[] = {
      "LITERAL",   "COLUMN",  "FIELD",      "UNARY",       "BINARY",  "CALL",
      "CAST",      "CASE",    "BETWEEN",    "IN_LIST",     "LIKE",    "IS",
      "GROUP_REF", "AGG_REF", "WINDOW_REF", "WINDOW_PROP", "SUBQUERY"};
  if ((int)k < 0 || (size_t)k >= sizeof names / sizeof names[0])
    return "?";
  return names[k];
}

static void quoted(sl_strbuf *b, const char *s) {
  sl_strbuf_appendc(b, '\'');
  for (; s && *s; s++) {
    if (*s == '\'')
      sl_strbuf_appendc(b, '\'');
    sl_strbuf_appendc(b, *s);
  }
  sl_strbuf_appendc(b, '\'');
}

static void literal(sl_strbuf *b, const sl_bexpr *e) {
  const sl_bliteral *l = &e->lit;
  switch (l->kind) {
  case SL_LIT_NULL:
    sl_strbuf_append(b, "NULL");
    break;
  case SL_LIT_BOOL:
    sl_strbuf_append(b, l->i64 ? "TRUE" : "FALSE");
    break;
  case SL_LIT_INTEGER:
    sl_strbuf_printf(b, "%lld", (long long)l->i64);
    break;
  case SL_LIT_DECIMAL:
  case SL_LIT_DOUBLE:
    sl_strbuf_append(b, l->text ? l->text : "?");
    break;
  case SL_LIT_STRING:
    quoted(b, l->text);
    break;
  case SL_LIT_INTERVAL:
    sl_strbuf_append(b, "INTERVAL ");
    if (l->i64 < 0)
      sl_strbuf_append(b, "-");
    quoted(b, l->text);
    sl_strbuf_printf(b, " %s", sl_interval_unit_name(e->unit));
    if (e->to_unit)
      sl_strbuf_printf(b, " TO %s", sl_interval_unit_name(e->to_unit));
    break;
  case SL_LIT_TIMESTAMP:
    sl_strbuf_append(b, "TIMESTAMP ");
    quoted(b, l->text);
    break;
  case SL_LIT_DATE:
    sl_strbuf_append(b, "DATE ");
    quoted(b, l->text);
    break;
  case SL_LIT_TIME:
    sl_strbuf_append(b, "TIME ");
    quoted(b, l->text);
    break;
  }
}

static void args(sl_strbuf *b, const sl_bexpr *e, int from) {
  for (int i = from; i < e->nargs; i++) {
    if (i > from)
      sl_strbuf_append(b, ", ");
    sl_bexpr_format(b, e->args[i]);
  }
}

void sl_bexpr_format(sl_strbuf *b, const sl_bexpr *e) {
  if (!e) {
    sl_strbuf_append(b, "?");
    return;
  }
  switch (e->kind) {
  case SL_BEXPR_LITERAL:
    literal(b, e);
    break;
  case SL_BEXPR_COLUMN:
    if (e->qualifier)
      sl_strbuf_printf(b, "%s.", e->qualifier);
    sl_strbuf_append(b, e->name ? e->name : "?");
    break;
  case SL_BEXPR_GROUP_REF:
  case SL_BEXPR_AGG_REF:
  case SL_BEXPR_WINDOW_REF:
    sl_strbuf_append(b, e->name ? e->name : "?");
    break;
  case SL_BEXPR_WINDOW_PROP:
    sl_strbuf_append(b, e->fn ? e->fn->name : "?");
    break;
  case SL_BEXPR_FIELD:
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_printf(b, ".%s", e->name);
    break;
  case SL_BEXPR_UNARY:
    if (e->op == SL_OP_NOT)
      sl_strbuf_append(b, "NOT ");
    else
      sl_strbuf_append(b, sl_op_symbol(e->op));
    sl_bexpr_format(b, e->args[0]);
    break;
  case SL_BEXPR_BINARY: /* AND and OR: any number of operands */
    sl_strbuf_appendc(b, '(');
    for (int i = 0; i < e->nargs; i++) {
      if (i)
        sl_strbuf_printf(b, " %s ", sl_op_symbol(e->op));
      sl_bexpr_format(b, e->args[i]);
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_BEXPR_CALL:
    if (e->nargs == 0 && e->fn && e->fn->min_args == 0 &&
        e->fn->max_args == 0 && strchr(e->fn->signature, '(') == NULL) {
      sl_strbuf_append(b, e->fn->name); /* CURRENT_TIMESTAMP */
      break;
    }
    sl_strbuf_printf(b, "%s(", e->fn ? e->fn->name : "?");
    if (e->unit && e->nargs == 1) {
      sl_strbuf_printf(b, "%s FROM ", sl_interval_unit_name(e->unit));
      sl_bexpr_format(b, e->args[0]);
    } else {
      args(b, e, 0);
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_BEXPR_CAST:
    sl_strbuf_append(b, e->negated ? "TRY_CAST(" : "CAST(");
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_append(b, " AS ");
    {
      sl_type t = *e->type;
      t.not_null = false;
      t.time_attr = SL_TIME_NONE;
      sl_type_format(b, &t);
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_BEXPR_CASE:
    sl_strbuf_append(b, "CASE");
    for (int i = 0; i + 1 < e->nargs; i += 2) {
      sl_strbuf_append(b, " WHEN ");
      sl_bexpr_format(b, e->args[i]);
      sl_strbuf_append(b, " THEN ");
      sl_bexpr_format(b, e->args[i + 1]);
    }
    sl_strbuf_append(b, " ELSE ");
    sl_bexpr_format(b, e->args[e->nargs - 1]);
    sl_strbuf_append(b, " END");
    break;
  case SL_BEXPR_BETWEEN:
    sl_strbuf_appendc(b, '(');
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_append(b, e->negated ? " NOT BETWEEN " : " BETWEEN ");
    sl_bexpr_format(b, e->args[1]);
    sl_strbuf_append(b, " AND ");
    sl_bexpr_format(b, e->args[2]);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_BEXPR_IN_LIST:
    sl_strbuf_appendc(b, '(');
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_append(b, e->negated ? " NOT IN (" : " IN (");
    args(b, e, 1);
    sl_strbuf_append(b, "))");
    break;
  case SL_BEXPR_LIKE:
    sl_strbuf_appendc(b, '(');
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_printf(b, "%s%s ", e->negated ? " NOT" : "",
                     e->similar ? " SIMILAR TO" : " LIKE");
    sl_bexpr_format(b, e->args[1]);
    if (e->nargs > 2) {
      sl_strbuf_append(b, " ESCAPE ");
      sl_bexpr_format(b, e->args[2]);
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_BEXPR_IS: {
    static const char *const what[] = {"NULL", "TRUE", "FALSE", "UNKNOWN"};
    sl_strbuf_appendc(b, '(');
    sl_bexpr_format(b, e->args[0]);
    sl_strbuf_printf(b, " IS %s%s)", e->negated ? "NOT " : "",
                     what[e->is_what]);
    break;
  }
  case SL_BEXPR_SUBQUERY:
    if (e->subquery_kind == SL_SUBQ_EXISTS) {
      sl_strbuf_append(b, e->negated ? "NOT EXISTS (subquery)"
                                     : "EXISTS (subquery)");
    } else if (e->subquery_kind == SL_SUBQ_IN) {
      sl_strbuf_appendc(b, '(');
      sl_bexpr_format(b, e->args[0]);
      sl_strbuf_append(b,
                       e->negated ? " NOT IN (subquery))" : " IN (subquery))");
    } else {
      sl_strbuf_append(b, "(subquery)");
    }
    break;
  }
}
