/* plan_exprs.c - building and comparing bound expressions for the planner
 * (plan_int.h): columns, flat ANDs, substitution, maps, equality, the
 * conjuncts of a condition.  Shared by the single-pipeline planner
 * (physical_plan.c) and the staged one (stage_*.c), and apart from both
 * because none of it knows about plans. */
#include <string.h>
#include <strings.h>

#include "plan_int.h"
#include "sluice/common/strbuf.h"

sl_bexpr *sl_pl_new_expr(sl_arena *a, sl_bexpr_kind kind, sl_type *type) {
  sl_bexpr *e = SL_ANEW(a, sl_bexpr);
  e->kind = kind;
  e->type = type;
  return e;
}

sl_bexpr *sl_pl_column(sl_arena *a, int index, const sl_type *type,
                       const char *name) {
  sl_bexpr *e = sl_pl_new_expr(a, SL_BEXPR_COLUMN, (sl_type *)type);
  e->index = index;
  e->name = name;
  return e;
}

bool sl_pl_is_and(const sl_bexpr *e) {
  return e && e->kind == SL_BEXPR_BINARY && e->op == SL_OP_AND;
}

bool sl_pl_is_or(const sl_bexpr *e) {
  return e && e->kind == SL_BEXPR_BINARY && e->op == SL_OP_OR;
}

void sl_pl_parts_add(sl_arena *a, sl_pl_parts *p, sl_bexpr *e) {
  if (!e)
    return;
  if (p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 8;
    sl_bexpr **v = SL_ANEW_N(a, sl_bexpr *, cap);
    if (p->n)
      memcpy(v, p->v, sizeof *v * (size_t)p->n);
    p->v = v;
    p->cap = cap;
  }
  p->v[p->n++] = e;
}

sl_bexpr *sl_pl_and_parts(sl_arena *a, const sl_pl_parts *p) {
  int n = 0, nonnull = 0;
  sl_bexpr *only = NULL;
  for (int i = 0; i < p->n; i++) {
    if (!p->v[i])
      continue;
    nonnull++;
    only = p->v[i];
    n += sl_pl_is_and(p->v[i]) ? p->v[i]->nargs : 1;
  }
  if (nonnull <= 1)
    return only;
  sl_bexpr *e =
      sl_pl_new_expr(a, SL_BEXPR_BINARY, sl_type_new(a, SL_TYPE_BOOLEAN));
  e->op = SL_OP_AND;
  e->args = SL_ANEW_N(a, sl_bexpr *, n);
  for (int i = 0; i < p->n; i++) {
    sl_bexpr *x = p->v[i];
    if (!x)
      continue;
    if (!e->span.length)
      e->span = x->span;
    if (sl_pl_is_and(x)) {
      memcpy(e->args + e->nargs, x->args, sizeof *x->args * (size_t)x->nargs);
      e->nargs += x->nargs;
    } else {
      e->args[e->nargs++] = x;
    }
  }
  return e;
}

sl_bexpr *sl_pl_and(sl_arena *a, sl_bexpr *x, sl_bexpr *y) {
  sl_bexpr *v[2] = {x, y};
  sl_pl_parts p = {v, 2, 2};
  return sl_pl_and_parts(a, &p);
}

/* Deep-enough copy of e with COLUMN(i) (depth 0) replaced by cols[i]. */
sl_bexpr *sl_pl_subst(sl_arena *a, const sl_bexpr *e, sl_bexpr *const *cols) {
  if (!e)
    return NULL;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0)
    return cols[e->index];
  if (e->nargs == 0)
    return (sl_bexpr *)e;
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  c->args = SL_ANEW_N(a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++)
    c->args[i] = sl_pl_subst(a, e->args[i], cols);
  return c;
}

sl_bexpr *sl_pl_map(sl_arena *a, const sl_bexpr *e,
                    sl_bexpr *(*fn)(sl_arena *a, const sl_bexpr *e, void *arg),
                    void *arg) {
  if (!e)
    return NULL;
  sl_bexpr *r = fn(a, e, arg);
  if (r)
    return r;
  if (e->nargs == 0)
    return (sl_bexpr *)e;
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  c->args = SL_ANEW_N(a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++)
    c->args[i] = sl_pl_map(a, e->args[i], fn, arg);
  return c;
}

static bool same_text(const char *x, const char *y) {
  return x == y || (x && y && strcmp(x, y) == 0);
}

bool sl_pl_equal(const sl_bexpr *x, const sl_bexpr *y) {
  if (x == y)
    return true;
  if (!x || !y || x->kind != y->kind || x->nargs != y->nargs ||
      !sl_type_equal(x->type, y->type) || x->op != y->op || x->fn != y->fn ||
      x->index != y->index || x->depth != y->depth ||
      x->negated != y->negated || x->similar != y->similar ||
      x->is_what != y->is_what || x->unit != y->unit ||
      x->to_unit != y->to_unit || x->trim_side != y->trim_side ||
      x->dictionary != y->dictionary || x->prop != y->prop ||
      x->kind == SL_BEXPR_SUBQUERY)
    return false;
  if (x->kind == SL_BEXPR_LITERAL &&
      (x->lit.kind != y->lit.kind || !same_text(x->lit.text, y->lit.text) ||
       x->lit.i64 != y->lit.i64 || x->lit.f64 != y->lit.f64))
    return false;
  /* A FIELD chain is resolved by name. */
  if (x->kind == SL_BEXPR_FIELD && !same_text(x->name, y->name))
    return false;
  for (int i = 0; i < x->nargs; i++)
    if (!sl_pl_equal(x->args[i], y->args[i]))
      return false;
  return true;
}

/* Does e read only base columns in [lo, hi)? (Window placeholders count as
 * reading nothing.) */
bool sl_pl_columns_within(const sl_bexpr *e, int lo, int hi) {
  if (!e)
    return true;
  if (e->kind == SL_BEXPR_COLUMN && (e->index < lo || e->index >= hi))
    return false;
  for (int i = 0; i < e->nargs; i++)
    if (!sl_pl_columns_within(e->args[i], lo, hi))
      return false;
  return true;
}

bool sl_pl_has_window_prop(const sl_bexpr *e) {
  if (!e)
    return false;
  if (e->kind == SL_BEXPR_WINDOW_PROP)
    return true;
  for (int i = 0; i < e->nargs; i++)
    if (sl_pl_has_window_prop(e->args[i]))
      return true;
  return false;
}

void sl_pl_conjuncts(sl_arena *a, sl_bexpr *e, sl_pl_parts *out) {
  if (!e)
    return;
  if (!sl_pl_is_and(e)) {
    sl_pl_parts_add(a, out, e);
    return;
  }
  /* An explicit stack of (AND node, next operand): nested ANDs (a view's
   * filter inside a WHERE) come out in order, at any depth. */
  sl_pl_parts nodes = {0};
  int *next = NULL, cap = 0;
  sl_pl_parts_add(a, &nodes, e);
  cap = nodes.cap;
  next = SL_ANEW_N(a, int, cap);
  next[0] = 0;
  while (nodes.n > 0) {
    sl_bexpr *top = nodes.v[nodes.n - 1];
    int *k = &next[nodes.n - 1];
    if (*k == top->nargs) {
      nodes.n--;
      continue;
    }
    sl_bexpr *c = top->args[(*k)++];
    if (!sl_pl_is_and(c)) {
      sl_pl_parts_add(a, out, c);
      continue;
    }
    sl_pl_parts_add(a, &nodes, c);
    if (nodes.cap > cap) {
      int *grown = SL_ANEW_N(a, int, nodes.cap);
      memcpy(grown, next, sizeof *next * (size_t)cap);
      next = grown;
      cap = nodes.cap;
    }
    next[nodes.n - 1] = 0;
  }
}

const char *sl_pl_sql(sl_arena *a, const sl_bexpr *e) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_bexpr_format(&b, e);
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}
