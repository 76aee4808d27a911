/* parse_build.c - AST construction helpers for the grammar's actions.
 *
 * Each helper allocates in the parse context's arena and sets the node's
 * span from its first token to ctx->last_end (see parse_int.h).  Semantic
 * errors found while building (an unknown EXPLAIN format, two WATERMARKs)
 * are reported through p_error_at, which keeps only the first error; the
 * helpers still return valid objects so later reductions need no checks.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "grammar.h"
#include "parse_int.h"

/* ---- spans and errors ---------------------------------------------------- */

sl_span p_tok_span(const sl_token *t) {
  sl_span s = {t->line, t->column, t->offset, t->length};
  return s;
}

sl_span p_span_from(const sl_parse_ctx *c, sl_span start) {
  sl_span s = start;
  int len = c->last_end - start.offset;
  if (len > s.length)
    s.length = len;
  return s;
}

void p_error_at(sl_parse_ctx *c, sl_span at, const char *fmt, ...) {
  if (c->failed)
    return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  sl_error_set_at(c->err, SL_ESYNTAX, at.line, at.column, at.offset, at.length,
                  "%s", buf);
  c->failed = true;
}

void p_syntax_error(sl_parse_ctx *c, int major, const sl_token *tok) {
  if (c->failed)
    return;
  /* End of input is lemon's token 0 or the zero-length ';' parse.c adds
   * after a last statement that has none. */
  if (major == 0 || tok->length == 0) {
    sl_span at = {c->end_line, c->end_column, c->last_end, 0};
    p_error_at(c, at, "syntax error: unexpected end of input");
    return;
  }
  int n = tok->length;
  const char *more = "";
  if (n > 40) {
    n = 40;
    more = "...";
  }
  p_error_at(c, p_tok_span(tok), "syntax error near \"%.*s%s\"", n, tok->start,
             more);
}

void p_stack_overflow(sl_parse_ctx *c) {
  p_error_at(c, p_tok_span(&c->cur),
             "expression nested too deeply: the parser's limit of %d open "
             "levels (parentheses, subqueries, calls, prefix operators) is "
             "reached here",
             SL_PARSE_MAX_DEPTH);
}

/* ---- token text ---------------------------------------------------------- */

/* Strip the quotes of a quoted token and collapse doubled quotes. */
static const char *unquote(sl_parse_ctx *c, const sl_token *t) {
  if (t->length < 2)
    return sl_arena_strndup(c->arena, t->start, (size_t)t->length);
  char q = t->start[0];
  char *out = sl_arena_alloc(c->arena, (size_t)t->length);
  int n = 0;
  for (int i = 1; i < t->length - 1; i++) {
    out[n++] = t->start[i];
    if (t->start[i] == q && i + 1 < t->length - 1 && t->start[i + 1] == q)
      i++;
  }
  out[n] = '\0';
  return out;
}

const char *p_ident(sl_parse_ctx *c, const sl_token *t) {
  if (t->kind == SL_TOK_QIDENT)
    return unquote(c, t);
  return sl_arena_strndup(c->arena, t->start, (size_t)t->length);
}

const char *p_string(sl_parse_ctx *c, const sl_token *t) {
  return unquote(c, t);
}

const char *p_text(sl_parse_ctx *c, const sl_token *t) {
  return sl_arena_strndup(c->arena, t->start, (size_t)t->length);
}

const char *p_upper(sl_parse_ctx *c, const sl_token *t) {
  char *s = sl_arena_strndup(c->arena, t->start, (size_t)t->length);
  for (char *p = s; *p; p++)
    *p = (char)toupper((unsigned char)*p);
  return s;
}

int p_int(sl_parse_ctx *c, const sl_token *t) {
  long v = 0;
  for (int i = 0; i < t->length; i++) {
    v = v * 10 + (t->start[i] - '0');
    if (v > 1000000000L) {
      p_error_at(c, p_tok_span(t), "number %.*s is too large", t->length,
                 t->start);
      return 0;
    }
  }
  return (int)v;
}

/* ---- lists and names ----------------------------------------------------- */

sl_list *p_list1(sl_parse_ctx *c, void *item) {
  sl_list *l = sl_list_new(c->arena);
  sl_list_push(c->arena, l, item);
  return l;
}

sl_list *p_push(sl_parse_ctx *c, sl_list *l, void *item) {
  if (!l)
    l = sl_list_new(c->arena);
  sl_list_push(c->arena, l, item);
  return l;
}

sl_list *p_names1(sl_parse_ctx *c, const sl_token *t) {
  return p_list1(c, (void *)p_ident(c, t));
}

sl_list *p_names_push(sl_parse_ctx *c, sl_list *l, const sl_token *t) {
  return p_push(c, l, (void *)p_ident(c, t));
}

sl_qname *p_qname(sl_parse_ctx *c, const sl_token *t) {
  sl_qname *q = SL_ANEW(c->arena, sl_qname);
  q->parts = SL_ANEW_N(c->arena, const char *, 1);
  q->parts[0] = p_ident(c, t);
  q->nparts = 1;
  q->span = p_tok_span(t);
  return q;
}

sl_qname *p_qname_push(sl_parse_ctx *c, sl_qname *q, const sl_token *t) {
  const char **parts = SL_ANEW_N(c->arena, const char *, q->nparts + 1);
  memcpy(parts, q->parts, sizeof(*parts) * (size_t)q->nparts);
  parts[q->nparts++] = p_ident(c, t);
  q->parts = parts;
  q->span = p_span_from(c, q->span);
  return q;
}

sl_qname *p_qname_word(sl_parse_ctx *c, const sl_token *t) {
  return p_qname(c, t);
}

/* ---- expressions --------------------------------------------------------- */

sl_expr *p_expr(sl_parse_ctx *c, sl_expr_kind kind, sl_span start) {
  return sl_expr_new(c->arena, kind, p_span_from(c, start));
}

sl_expr *p_literal(sl_parse_ctx *c, sl_literal_kind kind, const sl_token *t) {
  sl_expr *e = sl_expr_new(c->arena, SL_EXPR_LITERAL, p_tok_span(t));
  e->u.lit.kind = kind;
  e->u.lit.precision = -1;
  if (kind == SL_LIT_STRING)
    e->u.lit.text = p_string(c, t);
  else if (kind != SL_LIT_NULL && kind != SL_LIT_BOOL)
    e->u.lit.text = p_text(c, t);
  return e;
}

sl_expr *p_typed_literal(sl_parse_ctx *c, sl_literal_kind kind,
                         const sl_token *kw, const sl_token *str) {
  sl_expr *e = p_expr(c, SL_EXPR_LITERAL, p_tok_span(kw));
  e->u.lit.kind = kind;
  e->u.lit.text = p_string(c, str);
  e->u.lit.precision = -1;
  return e;
}

sl_expr *p_interval(sl_parse_ctx *c, const sl_token *kw, const sl_token *val,
                    bool negative, p_unit_spec q) {
  sl_expr *e = p_expr(c, SL_EXPR_LITERAL, p_tok_span(kw));
  e->u.lit.kind = SL_LIT_INTERVAL;
  e->u.lit.text =
      val->kind == SL_TOK_STRING ? p_string(c, val) : p_text(c, val);
  e->u.lit.negative = negative;
  e->u.lit.unit = q.unit;
  e->u.lit.to_unit = q.to_unit;
  e->u.lit.precision = q.precision;
  return e;
}

sl_expr *p_name(sl_parse_ctx *c, sl_qname *q) {
  sl_expr *e = sl_expr_new(c->arena, SL_EXPR_NAME, q->span);
  e->u.name = *q;
  return e;
}

sl_expr *p_unary(sl_parse_ctx *c, sl_op op, const sl_token *optok,
                 sl_expr *operand) {
  sl_expr *e = p_expr(c, SL_EXPR_UNARY, p_tok_span(optok));
  e->u.unary.op = op;
  e->u.unary.operand = operand;
  return e;
}

/* a AND b AND c is one node: generated SQL chains thousands of conditions,
 * and a flat list keeps every walker's recursion (and the depth limit) at
 * one level for any length.  AND and OR are associative, so parentheses
 * that group the same operator are flattened too. */
static sl_expr *p_logical(sl_parse_ctx *c, sl_op op, sl_expr *l, sl_expr *r) {
  sl_expr *e = l;
  if (l->kind != SL_EXPR_LOGICAL || l->u.logical.op != op) {
    e = p_expr(c, SL_EXPR_LOGICAL, l->span);
    e->u.logical.op = op;
    e->u.logical.args = p_list1(c, l);
  }
  if (r->kind == SL_EXPR_LOGICAL && r->u.logical.op == op) {
    for (int i = 0; i < r->u.logical.args->n; i++)
      sl_list_push(c->arena, e->u.logical.args,
                   SL_LIST_AT(r->u.logical.args, i));
  } else {
    sl_list_push(c->arena, e->u.logical.args, r);
  }
  e->span = p_span_from(c, l->span);
  return e;
}

sl_expr *p_binary(sl_parse_ctx *c, sl_op op, sl_expr *l, sl_expr *r) {
  if (op == SL_OP_AND || op == SL_OP_OR)
    return p_logical(c, op, l, r);
  sl_expr *e = p_expr(c, SL_EXPR_BINARY, l->span);
  e->u.binary.op = op;
  e->u.binary.left = l;
  e->u.binary.right = r;
  return e;
}

sl_expr *p_call(sl_parse_ctx *c, sl_qname *name, sl_list *args, sl_span start) {
  sl_expr *e = p_expr(c, SL_EXPR_CALL, start);
  e->u.call.name = *name;
  e->u.call.args = args;
  return e;
}

sl_expr *p_call_word(sl_parse_ctx *c, const sl_token *name, sl_list *args) {
  return p_call(c, p_qname(c, name), args, p_tok_span(name));
}

sl_expr *p_paren(sl_parse_ctx *c, const sl_token *lp, sl_expr *e) {
  e->span = p_span_from(c, p_tok_span(lp));
  return e;
}

sl_expr *p_subquery(sl_parse_ctx *c, sl_subquery_kind kind, sl_span start,
                    sl_query *q, sl_expr *operand, bool negated) {
  sl_expr *e = p_expr(c, SL_EXPR_SUBQUERY, start);
  e->u.subquery.kind = kind;
  e->u.subquery.query = q;
  e->u.subquery.operand = operand;
  e->u.subquery.negated = negated;
  return e;
}

sl_expr *p_field(sl_parse_ctx *c, sl_expr *base, const sl_token *name) {
  sl_expr *e = p_expr(c, SL_EXPR_FIELD, base->span);
  e->u.field.base = base;
  e->u.field.field = p_ident(c, name);
  return e;
}

/* ---- types --------------------------------------------------------------- */

sl_type *p_type(sl_parse_ctx *c, sl_type_kind kind) {
  return sl_type_new(c->arena, kind);
}

sl_type *p_row_type(sl_parse_ctx *c, sl_list *fields) {
  sl_type *t = sl_type_new(c->arena, SL_TYPE_ROW);
  t->nfields = SL_LIST_LEN(fields);
  t->fields = SL_ANEW_N(c->arena, sl_type_field, t->nfields);
  for (int i = 0; i < t->nfields; i++)
    t->fields[i] = *(sl_type_field *)SL_LIST_AT(fields, i);
  return t;
}

sl_type_field *p_type_field(sl_parse_ctx *c, const sl_token *name,
                            sl_type *type) {
  sl_type_field *f = SL_ANEW(c->arena, sl_type_field);
  f->name = p_ident(c, name);
  f->type = type;
  return f;
}

/* ---- queries ------------------------------------------------------------- */

sl_query *p_query(sl_parse_ctx *c, sl_span start, sl_list *ctes,
                  sl_query_body *body, sl_list *order_by, sl_expr **limits) {
  sl_query *q = SL_ANEW(c->arena, sl_query);
  q->ctes = ctes;
  q->body = body;
  q->order_by = order_by;
  if (limits) {
    q->limit = limits[0];
    q->offset = limits[1];
  }
  q->span = p_span_from(c, start);
  return q;
}

sl_query_body *p_body_select(sl_parse_ctx *c, sl_select *s) {
  sl_query_body *b = SL_ANEW(c->arena, sl_query_body);
  b->kind = SL_SETOP_NONE;
  b->select = s;
  b->span = s->span;
  return b;
}

sl_query_body *p_body_setop(sl_parse_ctx *c, sl_setop_kind kind, bool all,
                            sl_query_body *l, sl_query_body *r) {
  sl_query_body *b = SL_ANEW(c->arena, sl_query_body);
  b->kind = kind;
  b->all = all;
  b->left = l;
  b->right = r;
  b->span = p_span_from(c, l->span);
  return b;
}

sl_query_body *p_body_nested(sl_parse_ctx *c, const sl_token *lp, sl_query *q) {
  sl_span span = p_span_from(c, p_tok_span(lp));
  /* (SELECT ...) with nothing but a body is just that body; only a query
   * with its own WITH, ORDER BY or LIMIT needs the nested form. */
  if (!q->ctes && !q->order_by && !q->limit && !q->offset) {
    q->body->span = span;
    return q->body;
  }
  sl_query_body *b = SL_ANEW(c->arena, sl_query_body);
  b->kind = SL_SETOP_NONE;
  b->nested = q;
  b->span = span;
  return b;
}

sl_order_item *p_order_item(sl_parse_ctx *c, sl_expr *e, int dir, int nulls) {
  sl_order_item *o = SL_ANEW(c->arena, sl_order_item);
  o->expr = e;
  o->desc = dir == 1;
  o->nulls = nulls;
  return o;
}

sl_expr **p_limits(sl_parse_ctx *c, sl_expr *limit, sl_expr *offset) {
  sl_expr **l = SL_ANEW_N(c->arena, sl_expr *, 2);
  l[0] = limit;
  l[1] = offset;
  return l;
}

/* ---- FROM ---------------------------------------------------------------- */

sl_table_ref *p_tref(sl_parse_ctx *c, sl_table_ref_kind kind, sl_span start) {
  sl_table_ref *t = SL_ANEW(c->arena, sl_table_ref);
  t->kind = kind;
  t->span = p_span_from(c, start);
  return t;
}

sl_table_ref *p_join(sl_parse_ctx *c, sl_join_kind kind, bool natural,
                     sl_table_ref *l, sl_table_ref *r) {
  sl_table_ref *t = p_tref(c, SL_TREF_JOIN, l->span);
  t->u.join.kind = kind;
  t->u.join.natural = natural;
  t->u.join.left = l;
  t->u.join.right = r;
  return t;
}

void p_alias(sl_parse_ctx *c, sl_table_ref *t, sl_list *alias) {
  if (!alias)
    return;
  t->alias = SL_LIST_AT(alias, 0);
  if (alias->n > 1) {
    t->column_aliases = sl_list_new(c->arena);
    for (int i = 1; i < alias->n; i++)
      sl_list_push(c->arena, t->column_aliases, SL_LIST_AT(alias, i));
  }
  t->span = p_span_from(c, t->span);
}

sl_list *p_alias_list(sl_parse_ctx *c, const sl_token *alias,
                      sl_list *columns) {
  sl_list *l = p_names1(c, alias);
  for (int i = 0; i < SL_LIST_LEN(columns); i++)
    sl_list_push(c->arena, l, SL_LIST_AT(columns, i));
  return l;
}

sl_list *p_tvf_push(sl_parse_ctx *c, sl_list *l, sl_tvf_arg *arg) {
  /* `TABLE t PARTITION BY k1, k2, DESCRIPTOR(ts), ...`: a bare column name
   * right after a partitioned table argument continues its key list (no
   * window function takes a column name as a positional argument). */
  sl_tvf_arg *prev = SL_LIST_LEN(l) ? SL_LIST_AT(l, l->n - 1) : NULL;
  if (prev && prev->table_arg && prev->partition_by && !arg->name &&
      arg->expr && arg->expr->kind == SL_EXPR_NAME) {
    sl_list_push(c->arena, prev->partition_by, arg->expr);
    prev->span = p_span_from(c, prev->span);
    return l;
  }
  return p_push(c, l, arg);
}

/* ---- statements ---------------------------------------------------------- */

sl_stmt *p_stmt(sl_parse_ctx *c, sl_stmt_kind kind, const sl_token *first) {
  sl_stmt *s = SL_ANEW(c->arena, sl_stmt);
  s->kind = kind;
  if (first)
    s->span = p_span_from(c, p_tok_span(first));
  return s;
}

void p_add_stmt(sl_parse_ctx *c, sl_stmt *s) {
  sl_span at = s->span;
  int depth = sl_stmt_depth(s, SL_MAX_EXPR_DEPTH, &at);
  if (depth > SL_MAX_EXPR_DEPTH) {
    p_error_at(c, at,
               "expression nested too deeply: depth %d exceeds the limit of "
               "%d (a chain a + b + c + ... nests one level per operator, as "
               "do nested calls, CASEs and subqueries; AND/OR chains and IN "
               "lists do not): split the expression",
               depth, SL_MAX_EXPR_DEPTH);
    return;
  }
  sl_list_push(c->arena, c->stmts, s);
}

void p_table_elements(sl_parse_ctx *c, sl_stmt *s, sl_list *elems) {
  s->u.create_table.columns = sl_list_new(c->arena);
  for (int i = 0; i < SL_LIST_LEN(elems); i++) {
    p_table_elem *e = SL_LIST_AT(elems, i);
    sl_list *pk = e->primary_key;
    if (e->column) {
      sl_list_push(c->arena, s->u.create_table.columns, e->column);
      if (e->column->primary_key)
        pk = p_list1(c, (void *)e->column->name);
    }
    if (e->watermark) {
      if (s->u.create_table.watermark)
        p_error_at(c, e->span, "a table can have only one WATERMARK");
      s->u.create_table.watermark = e->watermark;
    }
    if (pk) {
      if (s->u.create_table.primary_key)
        p_error_at(c, e->span, "a table can have only one PRIMARY KEY");
      s->u.create_table.primary_key = pk;
    }
  }
}

sl_explain_format p_explain_format(sl_parse_ctx *c, const sl_token *t) {
  const char *f = p_upper(c, t);
  if (strcmp(f, "JSON") == 0)
    return SL_EXPLAIN_JSON;
  if (strcmp(f, "TEXT") != 0)
    p_error_at(c, p_tok_span(t),
               "unknown EXPLAIN format \"%s\" (expected TEXT or JSON)",
               p_ident(c, t));
  return SL_EXPLAIN_TEXT;
}

const char *p_language(sl_parse_ctx *c, const sl_token *t) {
  static const char *const known[] = {"JAVA", "SCALA", "PYTHON", "SQL"};
  const char *l = p_upper(c, t);
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (strcmp(l, known[i]) == 0)
      return l;
  p_error_at(c, p_tok_span(t),
             "unknown function language \"%s\" (expected JAVA, SCALA, PYTHON "
             "or SQL)",
             p_ident(c, t));
  return l;
}
