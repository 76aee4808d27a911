/* ast.c - AST support: lists, node constructors, names of operators and
 * kinds, and printing expressions (and the queries inside them) back as SQL.
 *
 * sl_expr_format prints the fewest parentheses that keep the tree: a child
 * is parenthesised when its operator binds more loosely than the grammar
 * requires at that position.  The grammar tests check that the output
 * re-parses to the same tree.  The S-expression dump used by golden tests
 * is in ast_dump.c.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "grammar.h"
#include "parse_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/parser/ast.h"
#include "sluice/parser/parser.h"

sl_list *sl_list_new(sl_arena *a) {
  return SL_ANEW(a, sl_list);
}

void sl_list_push(sl_arena *a, sl_list *l, void *item) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    void **items = SL_ANEW_N(a, void *, cap);
    if (l->n)
      memcpy(items, l->items, sizeof(void *) * (size_t)l->n);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = item;
}

sl_expr *sl_expr_new(sl_arena *a, sl_expr_kind kind, sl_span span) {
  sl_expr *e = SL_ANEW(a, sl_expr);
  e->kind = kind;
  e->span = span;
  return e;
}

const char *sl_op_symbol(sl_op op) {
  switch (op) {
  case SL_OP_NEG:
    return "-";
  case SL_OP_PLUS:
    return "+";
  case SL_OP_NOT:
    return "NOT";
  case SL_OP_ADD:
    return "+";
  case SL_OP_SUB:
    return "-";
  case SL_OP_MUL:
    return "*";
  case SL_OP_DIV:
    return "/";
  case SL_OP_MOD:
    return "%";
  case SL_OP_CONCAT:
    return "||";
  case SL_OP_EQ:
    return "=";
  case SL_OP_NE:
    return "<>";
  case SL_OP_LT:
    return "<";
  case SL_OP_LE:
    return "<=";
  case SL_OP_GT:
    return ">";
  case SL_OP_GE:
    return ">=";
  case SL_OP_AND:
    return "AND";
  case SL_OP_OR:
    return "OR";
  }
  return "?";
}

const char *sl_interval_unit_name(sl_interval_unit u) {
  switch (u) {
  case SL_UNIT_NONE:
    return "";
  case SL_UNIT_YEAR:
    return "YEAR";
  case SL_UNIT_MONTH:
    return "MONTH";
  case SL_UNIT_DAY:
    return "DAY";
  case SL_UNIT_HOUR:
    return "HOUR";
  case SL_UNIT_MINUTE:
    return "MINUTE";
  case SL_UNIT_SECOND:
    return "SECOND";
  case SL_UNIT_MILLISECOND:
    return "MILLISECOND";
  }
  return "?";
}

const char *sl_stmt_kind_name(sl_stmt_kind k) {
  switch (k) {
  case SL_STMT_QUERY:
    return "QUERY";
  case SL_STMT_INSERT:
    return "INSERT";
  case SL_STMT_CREATE_TABLE:
    return "CREATE TABLE";
  case SL_STMT_CREATE_VIEW:
    return "CREATE VIEW";
  case SL_STMT_CREATE_FUNCTION:
    return "CREATE FUNCTION";
  case SL_STMT_DROP:
    return "DROP";
  case SL_STMT_SHOW:
    return "SHOW";
  case SL_STMT_DESCRIBE:
    return "DESCRIBE";
  case SL_STMT_SET:
    return "SET";
  case SL_STMT_RESET:
    return "RESET";
  case SL_STMT_EXPLAIN:
    return "EXPLAIN";
  }
  return "?";
}

/* ---- identifiers and literals -------------------------------------------- */

static bool is_plain_ident(const char *s) {
  if (!s || !*s)
    return false;
  if (!(isalpha((unsigned char)*s) || *s == '_'))
    return false;
  for (const char *p = s + 1; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '$'))
      return false;
  return true;
}

/* Append an identifier, backquoted when it is not a plain word or is a
 * keyword (some keywords would work bare, but quoting is always safe). */
static void format_ident(sl_strbuf *b, const char *s) {
  if (is_plain_ident(s) && !sl_is_keyword(s, strlen(s))) {
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

void sl_qname_format(sl_strbuf *b, const sl_qname *q) {
  for (int i = 0; i < q->nparts; i++) {
    if (i)
      sl_strbuf_appendc(b, '.');
    format_ident(b, q->parts[i]);
  }
}

static void format_string(sl_strbuf *b, const char *s) {
  sl_strbuf_appendc(b, '\'');
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '\'')
      sl_strbuf_appendc(b, '\'');
    sl_strbuf_appendc(b, *p);
  }
  sl_strbuf_appendc(b, '\'');
}

static void format_names(sl_strbuf *b, const sl_list *l) {
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    if (i)
      sl_strbuf_append(b, ", ");
    format_ident(b, SL_LIST_AT(l, i));
  }
}

/* Function names print bare when the grammar reads them back as a call of
 * that name: ordinary words, non-reserved keywords without a meaning of
 * their own at the start of an expression, and the keyword functions. */
static bool call_name_bare(const char *s) {
  static const char *const kwfuncs[] = {"LEFT", "RIGHT", "INSERT",
                                        "DATE", "TIME",  "TIMESTAMP"};
  static const char *const special[] = {
      "TRY_CAST",  "CURRENT_DATE",   "CURRENT_TIME", "CURRENT_TIMESTAMP",
      "LOCALTIME", "LOCALTIMESTAMP", "EXTRACT",      "SUBSTRING",
      "TRIM",      "POSITION"};
  if (!is_plain_ident(s))
    return false;
  int code = sl_keyword_code(s, strlen(s));
  if (!code)
    return true;
  for (size_t i = 0; i < sizeof(kwfuncs) / sizeof(kwfuncs[0]); i++)
    if (strcasecmp(s, kwfuncs[i]) == 0)
      return true;
  for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
    if (strcasecmp(s, special[i]) == 0)
      return false;
  return sl_lemon_parseFallback(code) != 0;
}

/* ---- expressions --------------------------------------------------------- */

enum {
  PREC_ANY = 0,
  PREC_OR = 1,
  PREC_AND = 2,
  PREC_NOT = 3,
  PREC_CMP = 4, /* comparisons, IS, LIKE, BETWEEN, IN */
  PREC_ADD = 5, /* + - || */
  PREC_MUL = 6,
  PREC_UNARY = 7,
  PREC_PRIMARY = 8,
  PREC_FIELD_BASE = 9,
};

static int op_prec(sl_op op) {
  switch (op) {
  case SL_OP_OR:
    return PREC_OR;
  case SL_OP_AND:
    return PREC_AND;
  case SL_OP_NOT:
    return PREC_NOT;
  case SL_OP_EQ:
  case SL_OP_NE:
  case SL_OP_LT:
  case SL_OP_LE:
  case SL_OP_GT:
  case SL_OP_GE:
    return PREC_CMP;
  case SL_OP_ADD:
  case SL_OP_SUB:
  case SL_OP_CONCAT:
    return PREC_ADD;
  case SL_OP_MUL:
  case SL_OP_DIV:
  case SL_OP_MOD:
    return PREC_MUL;
  case SL_OP_NEG:
  case SL_OP_PLUS:
    return PREC_UNARY;
  }
  return PREC_PRIMARY;
}

static int expr_prec(const sl_expr *e) {
  switch (e->kind) {
  case SL_EXPR_UNARY:
    return op_prec(e->u.unary.op);
  case SL_EXPR_BINARY:
    return op_prec(e->u.binary.op);
  case SL_EXPR_LOGICAL:
    return op_prec(e->u.logical.op);
  case SL_EXPR_BETWEEN:
  case SL_EXPR_IN_LIST:
  case SL_EXPR_LIKE:
  case SL_EXPR_IS:
    return PREC_CMP;
  case SL_EXPR_SUBQUERY:
    return e->u.subquery.kind == SL_SUBQ_IN ? PREC_CMP : PREC_PRIMARY;
  default:
    return PREC_PRIMARY;
  }
}

static void format_expr(sl_strbuf *b, const sl_expr *e, int need);
static void format_query(sl_strbuf *b, const sl_query *q);

static void format_exprs(sl_strbuf *b, const sl_list *l) {
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    if (i)
      sl_strbuf_append(b, ", ");
    format_expr(b, SL_LIST_AT(l, i), PREC_ANY);
  }
}

static void format_order(sl_strbuf *b, const sl_list *l) {
  sl_strbuf_append(b, "ORDER BY ");
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    const sl_order_item *o = SL_LIST_AT(l, i);
    if (i)
      sl_strbuf_append(b, ", ");
    format_expr(b, o->expr, PREC_ANY);
    if (o->desc)
      sl_strbuf_append(b, " DESC");
    if (o->nulls)
      sl_strbuf_append(b, o->nulls == 1 ? " NULLS FIRST" : " NULLS LAST");
  }
}

static void format_literal(sl_strbuf *b, const sl_expr *e) {
  switch (e->u.lit.kind) {
  case SL_LIT_NULL:
    sl_strbuf_append(b, "NULL");
    break;
  case SL_LIT_BOOL:
    sl_strbuf_append(b, e->u.lit.bool_value ? "TRUE" : "FALSE");
    break;
  case SL_LIT_INTEGER:
  case SL_LIT_DECIMAL:
  case SL_LIT_DOUBLE:
    sl_strbuf_append(b, e->u.lit.text ? e->u.lit.text : "0");
    break;
  case SL_LIT_STRING:
    format_string(b, e->u.lit.text);
    break;
  case SL_LIT_INTERVAL:
    sl_strbuf_append(b, e->u.lit.negative ? "INTERVAL -" : "INTERVAL ");
    format_string(b, e->u.lit.text);
    sl_strbuf_printf(b, " %s", sl_interval_unit_name(e->u.lit.unit));
    if (e->u.lit.to_unit != SL_UNIT_NONE)
      sl_strbuf_printf(b, " TO %s", sl_interval_unit_name(e->u.lit.to_unit));
    if (e->u.lit.precision >= 0)
      sl_strbuf_printf(b, "(%d)", e->u.lit.precision);
    break;
  case SL_LIT_TIMESTAMP:
  case SL_LIT_DATE:
  case SL_LIT_TIME:
    sl_strbuf_append(b, e->u.lit.kind == SL_LIT_TIMESTAMP ? "TIMESTAMP "
                        : e->u.lit.kind == SL_LIT_DATE    ? "DATE "
                                                          : "TIME ");
    format_string(b, e->u.lit.text);
    break;
  }
}

static void format_call(sl_strbuf *b, const sl_expr *e) {
  const sl_qname *n = &e->u.call.name;
  const sl_list *args = e->u.call.args;
  int nargs = SL_LIST_LEN(args);
  const char *name = n->nparts == 1 ? n->parts[0] : "";
  /* Niladic keywords are written without parentheses. */
  if (nargs == 0 && !e->u.call.star && n->nparts == 1 &&
      (strncasecmp(name, "CURRENT_", 8) == 0 ||
       strncasecmp(name, "LOCALTIME", 9) == 0)) {
    sl_strbuf_append(b, name);
    return;
  }
  if (n->nparts == 1 && strcasecmp(name, "EXTRACT") == 0 && nargs == 1) {
    sl_strbuf_printf(b, "%s(%s FROM ", name,
                     sl_interval_unit_name(e->u.call.unit));
    format_expr(b, SL_LIST_AT(args, 0), PREC_ANY);
    sl_strbuf_appendc(b, ')');
    return;
  }
  if (n->nparts == 1 && strcasecmp(name, "TRIM") == 0 && nargs >= 1 &&
      nargs <= 2) {
    static const char *const sides[] = {"BOTH", "LEADING", "TRAILING"};
    int side = e->u.call.trim_side;
    sl_strbuf_printf(b, "%s(%s ", name,
                     sides[side >= 0 && side < 3 ? side : 0]);
    if (nargs == 2) {
      format_expr(b, SL_LIST_AT(args, 1), PREC_ANY);
      sl_strbuf_appendc(b, ' ');
    }
    sl_strbuf_append(b, "FROM ");
    format_expr(b, SL_LIST_AT(args, 0), PREC_ANY);
    sl_strbuf_appendc(b, ')');
    return;
  }
  if (n->nparts == 1 && strcasecmp(name, "POSITION") == 0 && nargs == 2) {
    sl_strbuf_printf(b, "%s(", name);
    format_expr(b, SL_LIST_AT(args, 0), PREC_PRIMARY);
    sl_strbuf_append(b, " IN ");
    format_expr(b, SL_LIST_AT(args, 1), PREC_ANY);
    sl_strbuf_appendc(b, ')');
    return;
  }
  if (n->nparts == 1 && call_name_bare(name))
    sl_strbuf_append(b, name);
  else
    sl_qname_format(b, n);
  sl_strbuf_appendc(b, '(');
  if (e->u.call.star)
    sl_strbuf_appendc(b, '*');
  if (e->u.call.distinct)
    sl_strbuf_append(b, "DISTINCT ");
  format_exprs(b, args);
  sl_strbuf_appendc(b, ')');
  if (e->u.call.filter) {
    sl_strbuf_append(b, " FILTER (WHERE ");
    format_expr(b, e->u.call.filter, PREC_ANY);
    sl_strbuf_appendc(b, ')');
  }
  if (e->u.call.over) {
    const sl_over *o = e->u.call.over;
    sl_strbuf_append(b, " OVER (");
    if (o->partition_by) {
      sl_strbuf_append(b, "PARTITION BY ");
      format_exprs(b, o->partition_by);
      if (o->order_by)
        sl_strbuf_appendc(b, ' ');
    }
    if (o->order_by)
      format_order(b, o->order_by);
    sl_strbuf_appendc(b, ')');
  }
}

static void format_expr_inner(sl_strbuf *b, const sl_expr *e) {
  switch (e->kind) {
  case SL_EXPR_LITERAL:
    format_literal(b, e);
    break;
  case SL_EXPR_NAME:
    sl_qname_format(b, &e->u.name);
    break;
  case SL_EXPR_STAR:
    if (e->u.star.qualifier) {
      sl_qname_format(b, e->u.star.qualifier);
      sl_strbuf_appendc(b, '.');
    }
    sl_strbuf_appendc(b, '*');
    break;
  case SL_EXPR_UNARY:
    if (e->u.unary.op == SL_OP_NOT) {
      sl_strbuf_append(b, "NOT ");
      format_expr(b, e->u.unary.operand, PREC_NOT);
    } else {
      sl_strbuf_append(b, sl_op_symbol(e->u.unary.op));
      format_expr(b, e->u.unary.operand, PREC_PRIMARY);
    }
    break;
  case SL_EXPR_BINARY: {
    int p = op_prec(e->u.binary.op);
    format_expr(b, e->u.binary.left, p);
    sl_strbuf_printf(b, " %s ", sl_op_symbol(e->u.binary.op));
    format_expr(b, e->u.binary.right, p + 1);
    break;
  }
  case SL_EXPR_LOGICAL: {
    int p = op_prec(e->u.logical.op);
    for (int i = 0; i < SL_LIST_LEN(e->u.logical.args); i++) {
      if (i)
        sl_strbuf_printf(b, " %s ", sl_op_symbol(e->u.logical.op));
      format_expr(b, SL_LIST_AT(e->u.logical.args, i), i ? p + 1 : p);
    }
    break;
  }
  case SL_EXPR_BETWEEN:
    format_expr(b, e->u.between.operand, PREC_ADD);
    sl_strbuf_append(b, e->u.between.negated ? " NOT BETWEEN " : " BETWEEN ");
    if (e->u.between.symmetric)
      sl_strbuf_append(b, "SYMMETRIC ");
    format_expr(b, e->u.between.low, PREC_ADD);
    sl_strbuf_append(b, " AND ");
    format_expr(b, e->u.between.high, PREC_ADD);
    break;
  case SL_EXPR_IN_LIST:
    format_expr(b, e->u.in_list.operand, PREC_ADD);
    sl_strbuf_append(b, e->u.in_list.negated ? " NOT IN (" : " IN (");
    format_exprs(b, e->u.in_list.values);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_LIKE:
    format_expr(b, e->u.like.operand, PREC_ADD);
    if (e->u.like.negated)
      sl_strbuf_append(b, " NOT");
    sl_strbuf_append(b, e->u.like.similar ? " SIMILAR TO " : " LIKE ");
    format_expr(b, e->u.like.pattern, PREC_ADD);
    if (e->u.like.escape) {
      sl_strbuf_append(b, " ESCAPE ");
      format_expr(b, e->u.like.escape, PREC_ADD);
    }
    break;
  case SL_EXPR_IS: {
    static const char *const what[] = {"NULL", "TRUE", "FALSE", "UNKNOWN"};
    format_expr(b, e->u.is.operand, PREC_ADD);
    sl_strbuf_append(b, e->u.is.negated ? " IS NOT " : " IS ");
    sl_strbuf_append(b, what[e->u.is.what]);
    break;
  }
  case SL_EXPR_CASE:
    sl_strbuf_append(b, "CASE");
    if (e->u.case_.operand) {
      sl_strbuf_appendc(b, ' ');
      format_expr(b, e->u.case_.operand, PREC_ANY);
    }
    for (int i = 0; i < SL_LIST_LEN(e->u.case_.whens); i++) {
      const sl_when *w = SL_LIST_AT(e->u.case_.whens, i);
      sl_strbuf_append(b, " WHEN ");
      format_expr(b, w->when, PREC_ANY);
      sl_strbuf_append(b, " THEN ");
      format_expr(b, w->then, PREC_ANY);
    }
    if (e->u.case_.else_expr) {
      sl_strbuf_append(b, " ELSE ");
      format_expr(b, e->u.case_.else_expr, PREC_ANY);
    }
    sl_strbuf_append(b, " END");
    break;
  case SL_EXPR_CAST:
    sl_strbuf_append(b, e->u.cast.try_cast ? "TRY_CAST(" : "CAST(");
    format_expr(b, e->u.cast.operand, PREC_ANY);
    sl_strbuf_append(b, " AS ");
    sl_type_format(b, e->u.cast.type);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_CALL:
    format_call(b, e);
    break;
  case SL_EXPR_SUBQUERY:
    if (e->u.subquery.kind == SL_SUBQ_IN) {
      format_expr(b, e->u.subquery.operand, PREC_ADD);
      sl_strbuf_append(b, e->u.subquery.negated ? " NOT IN " : " IN ");
    } else if (e->u.subquery.kind == SL_SUBQ_EXISTS) {
      sl_strbuf_append(b, e->u.subquery.negated ? "NOT EXISTS " : "EXISTS ");
    }
    sl_strbuf_appendc(b, '(');
    format_query(b, e->u.subquery.query);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_EXPR_FIELD:
    format_expr(b, e->u.field.base, PREC_FIELD_BASE);
    sl_strbuf_appendc(b, '.');
    format_ident(b, e->u.field.field);
    break;
  }
}

static void format_expr(sl_strbuf *b, const sl_expr *e, int need) {
  if (!e) {
    sl_strbuf_append(b, "?");
    return;
  }
  bool paren = expr_prec(e) < need;
  /* The base of `.field`: a name would read back as a longer name and a
   * number would swallow the dot. */
  if (need == PREC_FIELD_BASE)
    paren = expr_prec(e) < PREC_PRIMARY || e->kind == SL_EXPR_NAME ||
            e->kind == SL_EXPR_LITERAL;
  if (paren)
    sl_strbuf_appendc(b, '(');
  format_expr_inner(b, e);
  if (paren)
    sl_strbuf_appendc(b, ')');
}

void sl_expr_format(sl_strbuf *b, const sl_expr *e) {
  format_expr(b, e, PREC_ANY);
}

/* ---- queries (for subqueries inside expressions) ------------------------- */

static void format_tref(sl_strbuf *b, const sl_table_ref *t, bool primary);

static void format_alias(sl_strbuf *b, const sl_table_ref *t) {
  if (!t->alias)
    return;
  sl_strbuf_append(b, " AS ");
  format_ident(b, t->alias);
  if (t->column_aliases) {
    sl_strbuf_append(b, " (");
    format_names(b, t->column_aliases);
    sl_strbuf_appendc(b, ')');
  }
}

static void format_tvf_arg(sl_strbuf *b, const sl_tvf_arg *a) {
  if (a->name) {
    format_ident(b, a->name);
    sl_strbuf_append(b, " => ");
  }
  if (a->table_arg) {
    sl_strbuf_append(b, "TABLE ");
    sl_qname_format(b, a->table_arg);
    int n = SL_LIST_LEN(a->partition_by);
    if (n > 0) {
      sl_strbuf_append(b, n > 1 ? " PARTITION BY (" : " PARTITION BY ");
      format_exprs(b, a->partition_by);
      if (n > 1)
        sl_strbuf_appendc(b, ')');
    }
  } else if (a->descriptor) {
    sl_strbuf_append(b, "DESCRIPTOR(");
    for (int i = 0; i < SL_LIST_LEN(a->descriptor); i++) {
      if (i)
        sl_strbuf_append(b, ", ");
      sl_qname_format(b, SL_LIST_AT(a->descriptor, i));
    }
    sl_strbuf_appendc(b, ')');
  } else {
    format_expr(b, a->expr, PREC_ANY);
  }
}

static void format_tref(sl_strbuf *b, const sl_table_ref *t, bool primary) {
  switch (t->kind) {
  case SL_TREF_NAME:
    sl_qname_format(b, &t->u.name.name);
    if (t->u.name.system_time) {
      sl_strbuf_append(b, " FOR SYSTEM_TIME AS OF ");
      format_expr(b, t->u.name.system_time, PREC_ANY);
    }
    break;
  case SL_TREF_SUBQUERY:
    sl_strbuf_append(b, t->u.subquery.lateral ? "LATERAL (" : "(");
    format_query(b, t->u.subquery.query);
    sl_strbuf_appendc(b, ')');
    break;
  case SL_TREF_TVF:
    sl_strbuf_append(b, "TABLE(");
    sl_qname_format(b, &t->u.tvf.func);
    sl_strbuf_appendc(b, '(');
    for (int i = 0; i < SL_LIST_LEN(t->u.tvf.args); i++) {
      if (i)
        sl_strbuf_append(b, ", ");
      format_tvf_arg(b, SL_LIST_AT(t->u.tvf.args, i));
    }
    sl_strbuf_append(b, "))");
    break;
  case SL_TREF_JOIN: {
    static const char *const kinds[] = {"JOIN", "LEFT JOIN", "RIGHT JOIN",
                                        "FULL JOIN", "CROSS JOIN"};
    bool paren = primary || t->alias;
    if (paren)
      sl_strbuf_appendc(b, '(');
    format_tref(b, t->u.join.left, false);
    if (t->u.join.comma) {
      sl_strbuf_append(b, ", ");
    } else {
      sl_strbuf_append(b, t->u.join.natural ? " NATURAL " : " ");
      sl_strbuf_append(b, kinds[t->u.join.kind]);
      sl_strbuf_appendc(b, ' ');
    }
    format_tref(b, t->u.join.right, !t->u.join.comma);
    if (t->u.join.on) {
      sl_strbuf_append(b, " ON ");
      format_expr(b, t->u.join.on, PREC_ANY);
    }
    if (t->u.join.using_) {
      sl_strbuf_append(b, " USING (");
      format_names(b, t->u.join.using_);
      sl_strbuf_appendc(b, ')');
    }
    if (paren)
      sl_strbuf_appendc(b, ')');
    break;
  }
  }
  format_alias(b, t);
}

static void format_select(sl_strbuf *b, const sl_select *s) {
  sl_strbuf_append(b, s->distinct ? "SELECT DISTINCT " : "SELECT ");
  for (int i = 0; i < SL_LIST_LEN(s->items); i++) {
    const sl_select_item *it = SL_LIST_AT(s->items, i);
    if (i)
      sl_strbuf_append(b, ", ");
    format_expr(b, it->expr, PREC_ANY);
    if (it->alias) {
      sl_strbuf_append(b, " AS ");
      format_ident(b, it->alias);
    }
  }
  if (s->from) {
    sl_strbuf_append(b, " FROM ");
    format_tref(b, s->from, false);
  }
  if (s->where) {
    sl_strbuf_append(b, " WHERE ");
    format_expr(b, s->where, PREC_ANY);
  }
  if (s->group_by) {
    sl_strbuf_append(b, " GROUP BY ");
    format_exprs(b, s->group_by);
  }
  if (s->having) {
    sl_strbuf_append(b, " HAVING ");
    format_expr(b, s->having, PREC_ANY);
  }
}

/* level: 0 anywhere, 1 operand needing at least an INTERSECT term, 2 a
 * primary (right of INTERSECT). */
static void format_body(sl_strbuf *b, const sl_query_body *q, int level) {
  if (q->nested) {
    sl_strbuf_appendc(b, '(');
    format_query(b, q->nested);
    sl_strbuf_appendc(b, ')');
    return;
  }
  switch (q->kind) {
  case SL_SETOP_NONE:
    if (q->select)
      format_select(b, q->select);
    return;
  case SL_SETOP_VALUES:
    sl_strbuf_append(b, "VALUES ");
    for (int i = 0; i < SL_LIST_LEN(q->values); i++) {
      if (i)
        sl_strbuf_append(b, ", ");
      sl_strbuf_appendc(b, '(');
      format_exprs(b, SL_LIST_AT(q->values, i));
      sl_strbuf_appendc(b, ')');
    }
    return;
  default:
    break;
  }
  bool intersect = q->kind == SL_SETOP_INTERSECT;
  bool paren = level == 2 || (level == 1 && !intersect);
  if (paren)
    sl_strbuf_appendc(b, '(');
  format_body(b, q->left, intersect ? 1 : 0);
  sl_strbuf_append(b, intersect                   ? " INTERSECT "
                      : q->kind == SL_SETOP_UNION ? " UNION "
                                                  : " EXCEPT ");
  if (q->all)
    sl_strbuf_append(b, "ALL ");
  format_body(b, q->right, intersect ? 2 : 1);
  if (paren)
    sl_strbuf_appendc(b, ')');
}

static void format_query(sl_strbuf *b, const sl_query *q) {
  if (q->ctes) {
    sl_strbuf_append(b, "WITH ");
    for (int i = 0; i < SL_LIST_LEN(q->ctes); i++) {
      const sl_cte *c = SL_LIST_AT(q->ctes, i);
      if (i)
        sl_strbuf_append(b, ", ");
      format_ident(b, c->name);
      if (c->columns) {
        sl_strbuf_append(b, " (");
        format_names(b, c->columns);
        sl_strbuf_appendc(b, ')');
      }
      sl_strbuf_append(b, " AS (");
      format_query(b, c->query);
      sl_strbuf_appendc(b, ')');
    }
    sl_strbuf_appendc(b, ' ');
  }
  format_body(b, q->body, 0);
  if (q->order_by) {
    sl_strbuf_appendc(b, ' ');
    format_order(b, q->order_by);
  }
  if (q->limit) {
    sl_strbuf_append(b, " LIMIT ");
    format_expr(b, q->limit, PREC_ANY);
  }
  if (q->offset) {
    sl_strbuf_append(b, " OFFSET ");
    format_expr(b, q->offset, PREC_ANY);
  }
}
