/* ast_depth.c - how deeply a statement nests (sl_stmt_depth, ast.h).
 *
 * The parser builds the tree bottom-up on lemon's bounded stack, so a
 * left-deep chain (`1 + 1 + ...`, `a UNION b UNION ...`, `t JOIN u JOIN
 * ...`) can be any length; every later walker (binder, formatter, planner,
 * interpreter, JIT) recurses over it.  This walk measures the depth with an
 * explicit stack on the heap instead, so measuring a tree never overflows
 * the stack that the limit protects.
 */
#include <stdlib.h>

#include "sluice/common/cancel.h"
#include "sluice/parser/ast.h"

typedef enum wkind { W_EXPR, W_QUERY, W_BODY, W_SELECT, W_TREF } wkind;

typedef struct witem {
  wkind kind;
  int depth;
  const void *p;
} witem;

typedef struct walker {
  witem *items;
  int n, cap;
  int max;
  int limit;
  bool over;
  bool oom;
  sl_span at;
} walker;

static void push(walker *w, wkind kind, const void *p, int depth) {
  if (!p || w->oom)
    return;
  if (w->n == w->cap) {
    int cap = w->cap ? w->cap * 2 : 256;
    witem *grown = realloc(w->items, sizeof *grown * (size_t)cap);
    if (!grown) {
      w->oom = true; /* report what was measured so far as too deep */
      return;
    }
    w->items = grown;
    w->cap = cap;
  }
  witem it = {kind, depth, p};
  w->items[w->n++] = it;
}

static void push_exprs(walker *w, const sl_list *l, int depth) {
  for (int i = 0; i < SL_LIST_LEN(l); i++)
    push(w, W_EXPR, SL_LIST_AT(l, i), depth);
}

static void push_order(walker *w, const sl_list *l, int depth) {
  for (int i = 0; i < SL_LIST_LEN(l); i++) {
    const sl_order_item *o = SL_LIST_AT(l, i);
    push(w, W_EXPR, o->expr, depth);
  }
}

/* The operands of expression e (at depth d) one level down. */
static void expr_children(walker *w, const sl_expr *e, int d) {
  switch (e->kind) {
  case SL_EXPR_LITERAL:
  case SL_EXPR_NAME:
  case SL_EXPR_STAR:
    break;
  case SL_EXPR_UNARY:
    push(w, W_EXPR, e->u.unary.operand, d + 1);
    break;
  case SL_EXPR_BINARY:
    push(w, W_EXPR, e->u.binary.left, d + 1);
    push(w, W_EXPR, e->u.binary.right, d + 1);
    break;
  case SL_EXPR_LOGICAL:
    push_exprs(w, e->u.logical.args, d + 1);
    break;
  case SL_EXPR_BETWEEN:
    push(w, W_EXPR, e->u.between.operand, d + 1);
    push(w, W_EXPR, e->u.between.low, d + 1);
    push(w, W_EXPR, e->u.between.high, d + 1);
    break;
  case SL_EXPR_IN_LIST:
    push(w, W_EXPR, e->u.in_list.operand, d + 1);
    push_exprs(w, e->u.in_list.values, d + 1);
    break;
  case SL_EXPR_LIKE:
    push(w, W_EXPR, e->u.like.operand, d + 1);
    push(w, W_EXPR, e->u.like.pattern, d + 1);
    push(w, W_EXPR, e->u.like.escape, d + 1);
    break;
  case SL_EXPR_IS:
    push(w, W_EXPR, e->u.is.operand, d + 1);
    break;
  case SL_EXPR_CASE:
    push(w, W_EXPR, e->u.case_.operand, d + 1);
    for (int i = 0; i < SL_LIST_LEN(e->u.case_.whens); i++) {
      const sl_when *wh = SL_LIST_AT(e->u.case_.whens, i);
      push(w, W_EXPR, wh->when, d + 1);
      push(w, W_EXPR, wh->then, d + 1);
    }
    push(w, W_EXPR, e->u.case_.else_expr, d + 1);
    break;
  case SL_EXPR_CAST:
    push(w, W_EXPR, e->u.cast.operand, d + 1);
    break;
  case SL_EXPR_CALL:
    push_exprs(w, e->u.call.args, d + 1);
    push(w, W_EXPR, e->u.call.filter, d + 1);
    if (e->u.call.over) {
      push_exprs(w, e->u.call.over->partition_by, d + 1);
      push_order(w, e->u.call.over->order_by, d + 1);
    }
    break;
  case SL_EXPR_SUBQUERY:
    push(w, W_EXPR, e->u.subquery.operand, d + 1);
    push(w, W_QUERY, e->u.subquery.query, d + 1);
    break;
  case SL_EXPR_FIELD:
    push(w, W_EXPR, e->u.field.base, d + 1);
    break;
  }
}

static void tref_children(walker *w, const sl_table_ref *t, int d) {
  switch (t->kind) {
  case SL_TREF_NAME:
    push(w, W_EXPR, t->u.name.system_time, d + 1);
    break;
  case SL_TREF_SUBQUERY:
    push(w, W_QUERY, t->u.subquery.query, d + 1);
    break;
  case SL_TREF_TVF:
    for (int i = 0; i < SL_LIST_LEN(t->u.tvf.args); i++) {
      const sl_tvf_arg *a = SL_LIST_AT(t->u.tvf.args, i);
      push(w, W_EXPR, a->expr, d + 1);
      push_exprs(w, a->partition_by, d + 1);
    }
    break;
  case SL_TREF_JOIN:
    push(w, W_TREF, t->u.join.left, d + 1);
    push(w, W_TREF, t->u.join.right, d + 1);
    push(w, W_EXPR, t->u.join.on, d + 1);
    break;
  }
}

static void select_children(walker *w, const sl_select *s, int d) {
  for (int i = 0; i < SL_LIST_LEN(s->items); i++) {
    const sl_select_item *it = SL_LIST_AT(s->items, i);
    push(w, W_EXPR, it->expr, d + 1);
  }
  push(w, W_TREF, s->from, d);
  push(w, W_EXPR, s->where, d + 1);
  push_exprs(w, s->group_by, d + 1);
  push(w, W_EXPR, s->having, d + 1);
}

static void body_children(walker *w, const sl_query_body *b, int d) {
  if (b->select)
    push(w, W_SELECT, b->select, d);
  for (int i = 0; i < SL_LIST_LEN(b->values); i++)
    push_exprs(w, SL_LIST_AT(b->values, i), d + 1);
  push(w, W_BODY, b->left, d + 1);
  push(w, W_BODY, b->right, d + 1);
  push(w, W_QUERY, b->nested, d + 1);
}

static void query_children(walker *w, const sl_query *q, int d) {
  for (int i = 0; i < SL_LIST_LEN(q->ctes); i++) {
    const sl_cte *c = SL_LIST_AT(q->ctes, i);
    push(w, W_QUERY, c->query, d + 1);
  }
  push(w, W_BODY, q->body, d);
  push_order(w, q->order_by, d + 1);
  push(w, W_EXPR, q->limit, d + 1);
  push(w, W_EXPR, q->offset, d + 1);
}

static sl_span span_of(const witem *it) {
  switch (it->kind) {
  case W_EXPR:
    return ((const sl_expr *)it->p)->span;
  case W_QUERY:
    return ((const sl_query *)it->p)->span;
  case W_BODY:
    return ((const sl_query_body *)it->p)->span;
  case W_SELECT:
    return ((const sl_select *)it->p)->span;
  case W_TREF:
    return ((const sl_table_ref *)it->p)->span;
  }
  sl_span none = {0, 0, 0, 0};
  return none;
}

static void push_stmt(walker *w, const sl_stmt *s) {
  switch (s->kind) {
  case SL_STMT_QUERY:
    push(w, W_QUERY, s->u.query, 0);
    break;
  case SL_STMT_INSERT:
    push(w, W_QUERY, s->u.insert.query, 0);
    break;
  case SL_STMT_CREATE_VIEW:
    push(w, W_QUERY, s->u.create_view.query, 0);
    break;
  case SL_STMT_CREATE_TABLE:
    for (int i = 0; i < SL_LIST_LEN(s->u.create_table.columns); i++) {
      const sl_column_def *c = SL_LIST_AT(s->u.create_table.columns, i);
      push(w, W_EXPR, c->computed, 1);
    }
    if (s->u.create_table.watermark)
      push(w, W_EXPR, s->u.create_table.watermark->expr, 1);
    break;
  case SL_STMT_EXPLAIN:
    if (s->u.explain.stmt)
      push_stmt(w, s->u.explain.stmt); /* EXPLAIN does not nest */
    break;
  default:
    break;
  }
}

int sl_stmt_depth(const sl_stmt *s, int limit, sl_span *deepest) {
  walker w = {0};
  w.limit = limit;
  if (s)
    push_stmt(&w, s);
  unsigned steps = 0;
  while (w.n > 0 && !w.oom) {
    /* Ctrl-C, .timeout: a million-literal IN list walks for 0.2-0.4 s.
     * The depth measured so far is returned; sl_parse sees the flag and
     * fails the statement, so an unmeasured tree never reaches a walker. */
    if ((++steps & 65535) == 0 && sl_cancel_current_pending())
      break;
    witem it = w.items[--w.n];
    if (it.depth > w.max)
      w.max = it.depth;
    if (it.depth > limit && !w.over) {
      w.over = true;
      w.at = span_of(&it);
    }
    switch (it.kind) {
    case W_EXPR:
      expr_children(&w, it.p, it.depth);
      break;
    case W_QUERY:
      query_children(&w, it.p, it.depth);
      break;
    case W_BODY:
      body_children(&w, it.p, it.depth);
      break;
    case W_SELECT:
      select_children(&w, it.p, it.depth);
      break;
    case W_TREF:
      tref_children(&w, it.p, it.depth);
      break;
    }
  }
  if (w.oom && w.max <= limit) { /* cannot tell: refuse rather than risk */
    w.max = limit + 1;
    w.over = true;
  }
  free(w.items);
  if (deepest && w.over)
    *deepest = w.at;
  return w.max;
}
