/* ast_dump.c - sl_stmt_dump: a compact S-expression rendering of a whole
 * statement, for golden tests of the grammar and for debugging.
 *
 * The format is stable: tests compare it byte for byte.  Every node prints
 * as (tag child ...); optional parts appear only when present; names print
 * as written (backquoted only when not a plain word), strings in single
 * quotes, types as sl_type_format prints them.  Spans are not shown.
 */
#include <ctype.h>
#include <string.h>

#include "sluice/common/strbuf.h"
#include "sluice/parser/ast.h"

static void dump_expr(sl_strbuf *b, const sl_expr *e);
static void dump_query(sl_strbuf *b, const sl_query *q);
static void dump_stmt(sl_strbuf *b, const sl_stmt *s);

static void dump_word(sl_strbuf *b, const char *s) {
  bool plain = s && *s && (isalpha((unsigned char)*s) || *s == '_');
  for (const char *p = s; plain && *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '$'))
      plain = false;
  if (plain) {
    sl_strbuf_append(b, s);
    return;
  }
  sl_strbuf_appendc(b, '`');
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '`')
      sl_strbuf_appendc(b, '`');
    sl_strbuf_appendc(b, *p);
  }
  sl_strbuf_appendc(b, '`');
}

static void dump_string(sl_strbuf *b, const char *s) {
  sl_strbuf_appendc(b, '\'');
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '\'')
      sl_strbuf_appendc(b, '\'');
    sl_strbuf_appendc(b, *p);
  }
  sl_strbuf_appendc(b, '\'');
}

static void dump_qname(sl_strbuf *b, const sl_qname *q) {
  for (int i = 0; i < q->nparts; i++) {
    if (i)
      sl_strbuf_appendc(b, '.');
    dump_word(b, q->parts[i]);
  }
}

/* " a b c" for a list of const char*. */
static void dump_words(sl_strbuf *b, const sl_list *l) {
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    sl_strbuf_appendc(b, ' ');
    dump_word(b, SL_LIST_AT(l, i));
  }
}

static void dump_tagged_words(sl_strbuf *b, const char *tag, const sl_list *l) {
  if (!l)
    return;
  sl_strbuf_printf(b, " (%s", tag);
  dump_words(b, l);
  sl_strbuf_appendc(b, ')');
}

/* " e1 e2 ..." for a list of sl_expr*. */
static void dump_exprs(sl_strbuf *b, const sl_list *l) {
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, SL_LIST_AT(l, i));
  }
}

static void dump_order(sl_strbuf *b, const sl_list *l) {
  if (!l)
    return;
  sl_strbuf_append(b, " (order-by");
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    const sl_order_item *o = SL_LIST_AT(l, i);
    sl_strbuf_append(b, o->desc ? " (desc " : " (asc ");
    dump_expr(b, o->expr);
    if (o->nulls)
      sl_strbuf_append(b, o->nulls == 1 ? " nulls-first" : " nulls-last");
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

static void dump_literal(sl_strbuf *b, const sl_expr *e) {
  switch (e->u.lit.kind) {
  case SL_LIT_NULL:
    sl_strbuf_append(b, "null");
    break;
  case SL_LIT_BOOL:
    sl_strbuf_append(b, e->u.lit.bool_value ? "true" : "false");
    break;
  case SL_LIT_INTEGER:
  case SL_LIT_DECIMAL:
  case SL_LIT_DOUBLE:
    sl_strbuf_append(b, e->u.lit.text ? e->u.lit.text : "?");
    break;
  case SL_LIT_STRING:
    dump_string(b, e->u.lit.text);
    break;
  case SL_LIT_INTERVAL:
    sl_strbuf_append(b, e->u.lit.negative ? "(interval -" : "(interval ");
    dump_string(b, e->u.lit.text);
    sl_strbuf_printf(b, " %s", sl_interval_unit_name(e->u.lit.unit));
    if (e->u.lit.to_unit != SL_UNIT_NONE)
      sl_strbuf_printf(b, " TO %s", sl_interval_unit_name(e->u.lit.to_unit));
    if (e->u.lit.precision >= 0)
      sl_strbuf_printf(b, "(%d)", e->u.lit.precision);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_LIT_TIMESTAMP:
  case SL_LIT_DATE:
  case SL_LIT_TIME:
    sl_strbuf_append(b, e->u.lit.kind == SL_LIT_TIMESTAMP ? "(timestamp "
                        : e->u.lit.kind == SL_LIT_DATE    ? "(date "
                                                          : "(time ");
    dump_string(b, e->u.lit.text);
    sl_strbuf_appendc(b, ')');
    break;
  }
}

static void dump_call(sl_strbuf *b, const sl_expr *e) {
  static const char *const sides[] = {"BOTH", "LEADING", "TRAILING"};
  sl_strbuf_append(b, "(call ");
  dump_qname(b, &e->u.call.name);
  if (e->u.call.unit != SL_UNIT_NONE)
    sl_strbuf_printf(b, " (unit %s)", sl_interval_unit_name(e->u.call.unit));
  if (e->u.call.trim_side > 0 && e->u.call.trim_side < 3)
    sl_strbuf_printf(b, " (trim %s)", sides[e->u.call.trim_side]);
  if (e->u.call.distinct)
    sl_strbuf_append(b, " distinct");
  if (e->u.call.star)
    sl_strbuf_append(b, " *");
  dump_exprs(b, e->u.call.args);
  if (e->u.call.filter) {
    sl_strbuf_append(b, " (filter ");
    dump_expr(b, e->u.call.filter);
    sl_strbuf_appendc(b, ')');
  }
  if (e->u.call.over) {
    sl_strbuf_append(b, " (over");
    if (e->u.call.over->partition_by) {
      sl_strbuf_append(b, " (partition-by");
      dump_exprs(b, e->u.call.over->partition_by);
      sl_strbuf_appendc(b, ')');
    }
    dump_order(b, e->u.call.over->order_by);
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

static void dump_expr(sl_strbuf *b, const sl_expr *e) {
  if (!e) {
    sl_strbuf_append(b, "?");
    return;
  }
  switch (e->kind) {
  case SL_EXPR_LITERAL:
    dump_literal(b, e);
    break;
  case SL_EXPR_NAME:
    dump_qname(b, &e->u.name);
    break;
  case SL_EXPR_STAR:
    if (e->u.star.qualifier) {
      dump_qname(b, e->u.star.qualifier);
      sl_strbuf_appendc(b, '.');
    }
    sl_strbuf_appendc(b, '*');
    break;
  case SL_EXPR_UNARY:
    sl_strbuf_printf(b, "(%s ",
                     e->u.unary.op == SL_OP_NOT ? "not"
                                                : sl_op_symbol(e->u.unary.op));
    dump_expr(b, e->u.unary.operand);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_BINARY:
    sl_strbuf_printf(b, "(%s ", sl_op_symbol(e->u.binary.op));
    dump_expr(b, e->u.binary.left);
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, e->u.binary.right);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_LOGICAL:
    sl_strbuf_printf(b, "(%s", sl_op_symbol(e->u.logical.op));
    dump_exprs(b, e->u.logical.args);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_BETWEEN:
    sl_strbuf_printf(b, "(%sbetween%s ", e->u.between.negated ? "not-" : "",
                     e->u.between.symmetric ? "-symmetric" : "");
    dump_expr(b, e->u.between.operand);
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, e->u.between.low);
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, e->u.between.high);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_IN_LIST:
    sl_strbuf_append(b, e->u.in_list.negated ? "(not-in " : "(in ");
    dump_expr(b, e->u.in_list.operand);
    dump_exprs(b, e->u.in_list.values);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_LIKE:
    sl_strbuf_printf(b, "(%s%s ", e->u.like.negated ? "not-" : "",
                     e->u.like.similar ? "similar" : "like");
    dump_expr(b, e->u.like.operand);
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, e->u.like.pattern);
    if (e->u.like.escape) {
      sl_strbuf_append(b, " (escape ");
      dump_expr(b, e->u.like.escape);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_IS: {
    static const char *const what[] = {"null", "true", "false", "unknown"};
    sl_strbuf_printf(b, "(is-%s%s ", e->u.is.negated ? "not-" : "",
                     what[e->u.is.what]);
    dump_expr(b, e->u.is.operand);
    sl_strbuf_appendc(b, ')');
    break;
  }
  case SL_EXPR_CASE:
    sl_strbuf_append(b, "(case");
    if (e->u.case_.operand) {
      sl_strbuf_append(b, " (operand ");
      dump_expr(b, e->u.case_.operand);
      sl_strbuf_appendc(b, ')');
    }
    for (int i = 0; i < SL_LIST_LEN(e->u.case_.whens); i++) {
      const sl_when *w = SL_LIST_AT(e->u.case_.whens, i);
      sl_strbuf_append(b, " (when ");
      dump_expr(b, w->when);
      sl_strbuf_appendc(b, ' ');
      dump_expr(b, w->then);
      sl_strbuf_appendc(b, ')');
    }
    if (e->u.case_.else_expr) {
      sl_strbuf_append(b, " (else ");
      dump_expr(b, e->u.case_.else_expr);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_CAST:
    sl_strbuf_append(b, e->u.cast.try_cast ? "(try-cast " : "(cast ");
    dump_expr(b, e->u.cast.operand);
    sl_strbuf_appendc(b, ' ');
    sl_type_format(b, e->u.cast.type);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_CALL:
    dump_call(b, e);
    break;
  case SL_EXPR_SUBQUERY:
    switch (e->u.subquery.kind) {
    case SL_SUBQ_SCALAR:
      sl_strbuf_append(b, "(subquery ");
      break;
    case SL_SUBQ_EXISTS:
      sl_strbuf_append(b, e->u.subquery.negated ? "(not-exists " : "(exists ");
      break;
    case SL_SUBQ_IN:
      sl_strbuf_append(b, e->u.subquery.negated ? "(not-in-subquery "
                                                : "(in-subquery ");
      dump_expr(b, e->u.subquery.operand);
      sl_strbuf_appendc(b, ' ');
      break;
    }
    dump_query(b, e->u.subquery.query);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_FIELD:
    sl_strbuf_append(b, "(field ");
    dump_expr(b, e->u.field.base);
    sl_strbuf_appendc(b, ' ');
    dump_word(b, e->u.field.field);
    sl_strbuf_appendc(b, ')');
    break;
  }
}

/* ---- FROM ---------------------------------------------------------------- */

static void dump_tref(sl_strbuf *b, const sl_table_ref *t);

static void dump_tvf_arg(sl_strbuf *b, const sl_tvf_arg *a) {
  if (a->name) {
    sl_strbuf_append(b, "(=> ");
    dump_word(b, a->name);
    sl_strbuf_appendc(b, ' ');
  }
  if (a->table_arg) {
    sl_strbuf_append(b, "(table ");
    dump_qname(b, a->table_arg);
    if (a->partition_by) {
      sl_strbuf_append(b, " (partition-by");
      dump_exprs(b, a->partition_by);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
  } else if (a->descriptor) {
    sl_strbuf_append(b, "(descriptor");
    for (int i = 0; i < SL_LIST_LEN(a->descriptor); i++) {
      sl_strbuf_appendc(b, ' ');
      dump_qname(b, SL_LIST_AT(a->descriptor, i));
    }
    sl_strbuf_appendc(b, ')');
  } else {
    dump_expr(b, a->expr);
  }
  if (a->name)
    sl_strbuf_appendc(b, ')');
}

static void dump_tref(sl_strbuf *b, const sl_table_ref *t) {
  static const char *const kinds[] = {"inner", "left", "right", "full",
                                      "cross"};
  switch (t->kind) {
  case SL_TREF_NAME:
    sl_strbuf_append(b, "(table ");
    dump_qname(b, &t->u.name.name);
    if (t->u.name.system_time) {
      sl_strbuf_append(b, " (system-time ");
      dump_expr(b, t->u.name.system_time);
      sl_strbuf_appendc(b, ')');
    }
    break;
  case SL_TREF_SUBQUERY:
    sl_strbuf_append(b, t->u.subquery.lateral ? "(lateral-subquery "
                                              : "(subquery ");
    dump_query(b, t->u.subquery.query);
    break;
  case SL_TREF_TVF:
    sl_strbuf_append(b, "(tvf ");
    dump_qname(b, &t->u.tvf.func);
    for (int i = 0; i < SL_LIST_LEN(t->u.tvf.args); i++) {
      sl_strbuf_appendc(b, ' ');
      dump_tvf_arg(b, SL_LIST_AT(t->u.tvf.args, i));
    }
    break;
  case SL_TREF_JOIN:
    if (t->u.join.comma)
      sl_strbuf_append(b, "(comma ");
    else
      sl_strbuf_printf(b, "(%sjoin-%s ", t->u.join.natural ? "natural-" : "",
                       kinds[t->u.join.kind]);
    dump_tref(b, t->u.join.left);
    sl_strbuf_appendc(b, ' ');
    dump_tref(b, t->u.join.right);
    if (t->u.join.on) {
      sl_strbuf_append(b, " (on ");
      dump_expr(b, t->u.join.on);
      sl_strbuf_appendc(b, ')');
    }
    dump_tagged_words(b, "using", t->u.join.using_);
    break;
  }
  if (t->alias) {
    sl_strbuf_append(b, " (as ");
    dump_word(b, t->alias);
    dump_words(b, t->column_aliases);
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

/* ---- queries ------------------------------------------------------------- */

static void dump_select(sl_strbuf *b, const sl_select *s) {
  sl_strbuf_append(b,
                   s->distinct ? "(select distinct (items" : "(select (items");
  for (int i = 0; i < SL_LIST_LEN(s->items); i++) {
    const sl_select_item *it = SL_LIST_AT(s->items, i);
    sl_strbuf_appendc(b, ' ');
    if (it->alias)
      sl_strbuf_append(b, "(as ");
    dump_expr(b, it->expr);
    if (it->alias) {
      sl_strbuf_appendc(b, ' ');
      dump_word(b, it->alias);
      sl_strbuf_appendc(b, ')');
    }
  }
  sl_strbuf_appendc(b, ')');
  if (s->from) {
    sl_strbuf_append(b, " (from ");
    dump_tref(b, s->from);
    sl_strbuf_appendc(b, ')');
  }
  if (s->where) {
    sl_strbuf_append(b, " (where ");
    dump_expr(b, s->where);
    sl_strbuf_appendc(b, ')');
  }
  if (s->group_by) {
    sl_strbuf_append(b, " (group-by");
    dump_exprs(b, s->group_by);
    sl_strbuf_appendc(b, ')');
  }
  if (s->having) {
    sl_strbuf_append(b, " (having ");
    dump_expr(b, s->having);
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

static void dump_body(sl_strbuf *b, const sl_query_body *q) {
  static const char *const ops[] = {"", "union", "intersect", "except"};
  if (q->nested) {
    dump_query(b, q->nested);
    return;
  }
  switch (q->kind) {
  case SL_SETOP_NONE:
    if (q->select)
      dump_select(b, q->select);
    break;
  case SL_SETOP_VALUES:
    sl_strbuf_append(b, "(values");
    for (int i = 0; i < SL_LIST_LEN(q->values); i++) {
      sl_strbuf_append(b, " (row");
      dump_exprs(b, SL_LIST_AT(q->values, i));
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
    break;
  case SL_SETOP_UNION:
  case SL_SETOP_INTERSECT:
  case SL_SETOP_EXCEPT:
    sl_strbuf_printf(b, "(%s%s ", ops[q->kind], q->all ? "-all" : "");
    dump_body(b, q->left);
    sl_strbuf_appendc(b, ' ');
    dump_body(b, q->right);
    sl_strbuf_appendc(b, ')');
    break;
  }
}

static void dump_query(sl_strbuf *b, const sl_query *q) {
  sl_strbuf_append(b, "(query ");
  if (q->ctes) {
    sl_strbuf_append(b, "(with");
    for (int i = 0; i < SL_LIST_LEN(q->ctes); i++) {
      const sl_cte *c = SL_LIST_AT(q->ctes, i);
      sl_strbuf_append(b, " (cte ");
      dump_word(b, c->name);
      dump_tagged_words(b, "columns", c->columns);
      sl_strbuf_appendc(b, ' ');
      dump_query(b, c->query);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_append(b, ") ");
  }
  dump_body(b, q->body);
  dump_order(b, q->order_by);
  if (q->limit) {
    sl_strbuf_append(b, " (limit ");
    dump_expr(b, q->limit);
    sl_strbuf_appendc(b, ')');
  }
  if (q->offset) {
    sl_strbuf_append(b, " (offset ");
    dump_expr(b, q->offset);
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

/* ---- statements ---------------------------------------------------------- */

static void dump_flag(sl_strbuf *b, bool on, const char *name) {
  if (on)
    sl_strbuf_printf(b, " %s", name);
}

static void dump_create_table(sl_strbuf *b, const sl_stmt *s) {
  sl_strbuf_append(b, "(create-table ");
  dump_qname(b, &s->u.create_table.name);
  dump_flag(b, s->u.create_table.temporary, "temporary");
  dump_flag(b, s->u.create_table.if_not_exists, "if-not-exists");
  sl_strbuf_append(b, " (columns");
  for (int i = 0; i < SL_LIST_LEN(s->u.create_table.columns); i++) {
    const sl_column_def *c = SL_LIST_AT(s->u.create_table.columns, i);
    sl_strbuf_append(b, c->computed ? " (computed " : " (column ");
    dump_word(b, c->name);
    sl_strbuf_appendc(b, ' ');
    if (c->computed)
      dump_expr(b, c->computed);
    else
      sl_type_format(b, c->type);
    dump_flag(b, c->primary_key, "primary-key");
    if (c->comment) {
      sl_strbuf_append(b, " (comment ");
      dump_string(b, c->comment);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
  if (s->u.create_table.watermark) {
    sl_strbuf_append(b, " (watermark ");
    dump_qname(b, &s->u.create_table.watermark->column);
    sl_strbuf_appendc(b, ' ');
    dump_expr(b, s->u.create_table.watermark->expr);
    sl_strbuf_appendc(b, ')');
  }
  dump_tagged_words(b, "primary-key", s->u.create_table.primary_key);
  if (s->u.create_table.comment) {
    sl_strbuf_append(b, " (comment ");
    dump_string(b, s->u.create_table.comment);
    sl_strbuf_appendc(b, ')');
  }
  dump_tagged_words(b, "partitioned-by", s->u.create_table.partitioned_by);
  if (s->u.create_table.options) {
    sl_strbuf_append(b, " (with");
    for (int i = 0; i < SL_LIST_LEN(s->u.create_table.options); i++) {
      const sl_option *o = SL_LIST_AT(s->u.create_table.options, i);
      sl_strbuf_append(b, " (");
      dump_string(b, o->key);
      sl_strbuf_appendc(b, ' ');
      dump_string(b, o->value);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ')');
  }
  sl_strbuf_appendc(b, ')');
}

static void dump_stmt(sl_strbuf *b, const sl_stmt *s) {
  static const char *const objects[] = {"table", "view", "function"};
  static const char *const shows[] = {"tables", "views", "functions",
                                      "create-table", "create-view"};
  switch (s->kind) {
  case SL_STMT_QUERY:
    dump_query(b, s->u.query);
    return;
  case SL_STMT_INSERT:
    sl_strbuf_append(b, "(insert ");
    dump_qname(b, &s->u.insert.table);
    dump_flag(b, s->u.insert.overwrite, "overwrite");
    dump_tagged_words(b, "columns", s->u.insert.columns);
    sl_strbuf_appendc(b, ' ');
    dump_query(b, s->u.insert.query);
    break;
  case SL_STMT_CREATE_TABLE:
    dump_create_table(b, s);
    return;
  case SL_STMT_CREATE_VIEW:
    sl_strbuf_append(b, "(create-view ");
    dump_qname(b, &s->u.create_view.name);
    dump_flag(b, s->u.create_view.temporary, "temporary");
    dump_flag(b, s->u.create_view.if_not_exists, "if-not-exists");
    dump_tagged_words(b, "columns", s->u.create_view.columns);
    sl_strbuf_appendc(b, ' ');
    dump_query(b, s->u.create_view.query);
    break;
  case SL_STMT_CREATE_FUNCTION:
    sl_strbuf_append(b, "(create-function ");
    dump_qname(b, &s->u.create_function.name);
    dump_flag(b, s->u.create_function.temporary, "temporary");
    dump_flag(b, s->u.create_function.if_not_exists, "if-not-exists");
    sl_strbuf_appendc(b, ' ');
    dump_string(b, s->u.create_function.class_name);
    if (s->u.create_function.language)
      sl_strbuf_printf(b, " (language %s)", s->u.create_function.language);
    break;
  case SL_STMT_DROP:
    sl_strbuf_printf(b, "(drop-%s ", objects[s->u.drop.what]);
    dump_qname(b, &s->u.drop.name);
    dump_flag(b, s->u.drop.temporary, "temporary");
    dump_flag(b, s->u.drop.if_exists, "if-exists");
    break;
  case SL_STMT_SHOW:
    sl_strbuf_printf(b, "(show-%s", shows[s->u.show.what]);
    if (s->u.show.name.nparts) {
      sl_strbuf_appendc(b, ' ');
      dump_qname(b, &s->u.show.name);
    }
    break;
  case SL_STMT_DESCRIBE:
    sl_strbuf_append(b, "(describe ");
    dump_qname(b, &s->u.describe.name);
    break;
  case SL_STMT_SET:
    sl_strbuf_append(b, "(set");
    if (s->u.set.key) {
      sl_strbuf_appendc(b, ' ');
      dump_string(b, s->u.set.key);
      sl_strbuf_appendc(b, ' ');
      dump_string(b, s->u.set.value);
    }
    break;
  case SL_STMT_RESET:
    sl_strbuf_append(b, "(reset");
    if (s->u.reset.key) {
      sl_strbuf_appendc(b, ' ');
      dump_string(b, s->u.reset.key);
    }
    break;
  case SL_STMT_EXPLAIN:
    sl_strbuf_append(b, "(explain");
    dump_flag(b, s->u.explain.analyze, "analyze");
    dump_flag(b, s->u.explain.format == SL_EXPLAIN_JSON, "json");
    sl_strbuf_appendc(b, ' ');
    dump_stmt(b, s->u.explain.stmt);
    break;
  }
  sl_strbuf_appendc(b, ')');
}

void sl_stmt_dump(sl_strbuf *b, const sl_stmt *s) {
  if (!s) {
    sl_strbuf_append(b, "?");
    return;
  }
  dump_stmt(b, s);
}
