/* bind_query.c - binding queries: WITH, set operations, VALUES, SELECT
 * blocks (select list, WHERE, GROUP BY, HAVING, DISTINCT), ORDER BY and
 * LIMIT, and the output column names Flink derives.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bind_int.h"

void sl_bind_uniquify(sl_binder *b, int n, sl_bcolumn *cols) {
  /* Calcite's SqlValidatorUtil.uniquify: a repeated name gets the first
   * free suffix 0, 1, ... (dateTime, dateTime0). */
  for (int i = 1; i < n; i++) {
    bool dup = false;
    for (int j = 0; j < i && !dup; j++)
      dup = strcmp(cols[j].name, cols[i].name) == 0;
    if (!dup)
      continue;
    for (int k = 0;; k++) {
      const char *cand = sl_arena_printf(b->a, "%s%d", cols[i].name, k);
      bool used = false;
      for (int j = 0; j < n && !used; j++)
        used = j != i && strcmp(cols[j].name, cand) == 0;
      if (!used) {
        cols[i].name = cand;
        break;
      }
    }
  }
}

/* ---- the select list ------------------------------------------------------
 */

typedef struct item_list {
  int n, cap;
  sl_bexpr **exprs;
  int ncols_cap;
  sl_bcolumn *cols;
} item_list;

static void add_item(sl_binder *b, item_list *l, sl_bexpr *e, sl_bcolumn col) {
  int n = l->n;
  SL_BIND_PUSH(b->a, l->exprs, l->n, l->cap, e);
  l->cols = sl_bind_grow(b->a, l->cols, n, &l->ncols_cap, sizeof *l->cols);
  l->cols[n] = col;
}

/* `*` and `t.*`: every (visible) column of the FROM, or of table t. */
static int expand_star(sl_binder *b, sl_scope *scope, const sl_select_item *it,
                       item_list *l) {
  const sl_qname *q = it->expr->u.star.qualifier;
  if (!scope || scope->ncols == 0)
    return sl_bind_error(b, it->expr->span, SL_EBIND,
                         "SELECT * needs a FROM clause");
  const char *qual = q && q->nparts ? q->parts[q->nparts - 1] : NULL;
  bool ci = false;
  if (qual) {
    bool exact = false, any = false;
    for (int i = 0; i < scope->ncols; i++) {
      const char *c = scope->cols[i].qualifier;
      exact = exact || (c && strcmp(c, qual) == 0);
      any = any || (c && strcasecmp(c, qual) == 0);
    }
    if (!any) {
      const char **names = SL_ANEW_N(b->a, const char *, scope->ncols + 1);
      for (int i = 0; i < scope->ncols; i++)
        names[i] = scope->cols[i].qualifier;
      const char *sug = sl_closest_name(qual, names, scope->ncols);
      return sl_bind_error(
          b, q->span, SL_EBIND, "unknown table '%s' in %s.*%s%s%s", qual, qual,
          sug ? " (did you mean '" : "", sug ? sug : "", sug ? "'?)" : "");
    }
    ci = !exact;
  }
  for (int i = 0; i < scope->ncols; i++) {
    const char *c = scope->cols[i].qualifier;
    if (qual && !(c && (ci ? strcasecmp(c, qual) : strcmp(c, qual)) == 0))
      continue;
    if (scope->hidden && scope->hidden[i])
      continue;
    sl_bexpr *e = sl_bexpr_column(b, scope, i, 0, it->span);
    sl_bcolumn col = {scope->cols[i].name, e->type, NULL,
                      scope->cols[i].window_col, it->span};
    add_item(b, l, e, col);
  }
  return SL_OK;
}

/* window_col survives a projection of the plain column. */
static int window_col_of(const sl_bselect *sel, const sl_bexpr *e) {
  if (e->kind == SL_BEXPR_GROUP_REF)
    e = sel->groups[e->index];
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0 && sel->from)
    return sel->from->cols[e->index].window_col;
  return 0;
}

/* TUMBLE_START(...) and friends left outside an aggregating block. */
static int check_no_aux(sl_binder *b, const sl_bexpr *e) {
  if (!e)
    return SL_OK;
  if (e->kind == SL_BEXPR_CALL && e->fn && e->fn->kind == SL_FN_GROUP_AUX)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s needs GROUP BY %s(...) with the same arguments",
                         e->fn->name, sl_window_kind_name(e->fn->window));
  for (int i = 0; i < e->nargs; i++) {
    int rc = check_no_aux(b, e->args[i]);
    if (rc)
      return rc;
  }
  return SL_OK;
}

static int bind_group_by(sl_binder *b, sl_scope *scope, const sl_select *s,
                         sl_bselect *sel) {
  sl_ectx cx = {scope, "GROUP BY", NULL, false, false, NULL};
  int n = SL_LIST_LEN(s->group_by);
  sel->groups = SL_ANEW_N(b->a, sl_bexpr *, n + 1);
  for (int i = 0; i < n; i++) {
    const sl_expr *e = SL_LIST_AT(s->group_by, i);
    if (e->kind == SL_EXPR_CALL && e->u.call.name.nparts == 1 &&
        !e->u.call.over) {
      const sl_function *fn = sl_function_find(e->u.call.name.parts[0]);
      if (fn && fn->kind == SL_FN_WINDOW_TVF) {
        if (sel->group_window)
          return sl_bind_error(b, e->span, SL_EBIND,
                               "only one group window (%s) is allowed in GROUP "
                               "BY",
                               fn->name);
        int rc = sl_bind_group_window(b, &cx, e, fn, &sel->group_window);
        if (rc)
          return rc;
        continue;
      }
    }
    sl_bexpr *g;
    int rc = sl_bind_expr(b, &cx, e, &g);
    if (rc)
      return rc;
    bool dup = false;
    for (int k = 0; k < sel->ngroups && !dup; k++)
      dup = sl_bexpr_equal(sel->groups[k], g);
    if (!dup)
      sel->groups[sel->ngroups++] = g;
  }
  /* A window aggregate groups by window_start and window_end of a TVF. */
  bool start = false, end = false;
  for (int i = 0; i < sel->ngroups; i++) {
    int wc = window_col_of(sel, sel->groups[i]);
    start = start || wc == 1;
    end = end || wc == 2;
  }
  sel->window_aggregate = start && end;
  return SL_OK;
}

static int bind_select(sl_binder *b, const sl_select *s, sl_scope *parent,
                       sl_bquery *q) {
  sl_bselect *sel = SL_ANEW(b->a, sl_bselect);
  q->kind = SL_BQUERY_SELECT;
  q->select = sel;
  sel->distinct = s->distinct;
  sl_scope *scope = SL_ANEW(b->a, sl_scope);
  scope->parent = parent;
  if (s->from) {
    int rc = sl_bind_from(b, s->from, parent, &sel->from);
    if (rc)
      return rc;
    scope->ncols = sel->from->ncols;
    scope->cols = sel->from->cols;
  }
  if (s->where) {
    sl_ectx cx = {scope, "WHERE", NULL, false, false, NULL};
    int rc = sl_bind_condition(b, &cx, s->where, &sel->where);
    if (rc)
      return rc;
  }
  int rc = bind_group_by(b, scope, s, sel);
  if (rc)
    return rc;

  sl_block blk = {0};
  sl_ectx cx = {scope, "SELECT", &blk, true, true, NULL};
  item_list items = {0};
  for (int i = 0; i < SL_LIST_LEN(s->items); i++) {
    const sl_select_item *it = SL_LIST_AT(s->items, i);
    if (it->expr->kind == SL_EXPR_STAR) {
      rc = expand_star(b, sel->from ? scope : NULL, it, &items);
      if (rc)
        return rc;
      continue;
    }
    sl_bexpr *e;
    rc = sl_bind_expr(b, &cx, it->expr, &e);
    if (rc)
      return rc;
    const char *name =
        it->alias ? it->alias : sl_bind_derive_name(b, it->expr, i);
    sl_bcolumn col = {name, e->type, NULL, 0, it->span};
    add_item(b, &items, e, col);
  }
  if (s->having) {
    sl_ectx hx = {scope, "HAVING", &blk, true, false, NULL};
    rc = sl_bind_condition(b, &hx, s->having, &sel->having);
    if (rc)
      return rc;
  }
  sel->naggs = blk.naggs;
  sel->aggs = blk.aggs;
  sel->nwindows = blk.nwindows;
  sel->windows = blk.windows;
  sel->nexprs = items.n;
  sel->exprs = items.exprs;
  sel->aggregate = sel->ngroups > 0 || sel->group_window || blk.naggs > 0 ||
                   sel->having != NULL;

  if (sel->aggregate) {
    for (int i = 0; i < sel->nexprs; i++) {
      rc = sl_bind_post_agg(b, sel, sel->exprs[i], &sel->exprs[i]);
      if (rc)
        return rc;
    }
    if (sel->having) {
      rc = sl_bind_post_agg(b, sel, sel->having, &sel->having);
      if (rc)
        return rc;
    }
    for (int w = 0; w < sel->nwindows; w++) {
      sl_bwinfunc *wf = &sel->windows[w];
      for (int i = 0; !rc && i < wf->nargs; i++)
        rc = sl_bind_post_agg(b, sel, wf->args[i], &wf->args[i]);
      for (int i = 0; !rc && i < wf->npartition; i++)
        rc = sl_bind_post_agg(b, sel, wf->partition[i], &wf->partition[i]);
      for (int i = 0; !rc && i < wf->norder; i++)
        rc = sl_bind_post_agg(b, sel, wf->order[i], &wf->order[i]);
      if (rc)
        return rc;
    }
  } else {
    for (int i = 0; i < sel->nexprs; i++) {
      rc = check_no_aux(b, sel->exprs[i]);
      if (rc)
        return rc;
    }
  }
  q->ncols = items.n;
  q->cols = items.cols;
  for (int i = 0; i < q->ncols; i++) {
    q->cols[i].type = sel->exprs[i]->type;
    q->cols[i].window_col = window_col_of(sel, sel->exprs[i]);
  }
  sl_bind_uniquify(b, q->ncols, q->cols);
  return SL_OK;
}

/* ---- VALUES and set operations ------------------------------------------ */

static int bind_values(sl_binder *b, const sl_query_body *body,
                       sl_scope *parent, sl_bquery *q) {
  q->kind = SL_BQUERY_VALUES;
  q->nrows = SL_LIST_LEN(body->values);
  q->rows = SL_ANEW_N(b->a, sl_bexpr **, q->nrows + 1);
  sl_scope empty = {parent, 0, NULL, NULL, NULL};
  sl_ectx cx = {&empty, "VALUES", NULL, false, false, NULL};
  for (int r = 0; r < q->nrows; r++) {
    sl_list *row = SL_LIST_AT(body->values, r);
    int n = SL_LIST_LEN(row);
    if (r == 0)
      q->ncols = n;
    else if (n != q->ncols)
      return sl_bind_error(b, body->span, SL_EBIND,
                           "VALUES rows must have the same number of columns: "
                           "row 1 has %d, row %d has %d",
                           q->ncols, r + 1, n);
    q->rows[r] = SL_ANEW_N(b->a, sl_bexpr *, n + 1);
    for (int c = 0; c < n; c++) {
      int rc = sl_bind_expr(b, &cx, SL_LIST_AT(row, c), &q->rows[r][c]);
      if (rc)
        return rc;
    }
  }
  q->cols = SL_ANEW_N(b->a, sl_bcolumn, q->ncols + 1);
  const sl_type **types = SL_ANEW_N(b->a, const sl_type *, q->nrows + 1);
  for (int c = 0; c < q->ncols; c++) {
    for (int r = 0; r < q->nrows; r++)
      types[r] = q->rows[r][c]->type;
    sl_type *t = sl_tp_common(b->a, q->nrows, types);
    if (!t)
      return sl_bind_error(b, body->span, SL_EBIND,
                           "VALUES column %d has no common type across rows",
                           c + 1);
    q->cols[c].name = sl_arena_printf(b->a, "EXPR$%d", c);
    q->cols[c].type = t;
    q->cols[c].span = body->span;
  }
  return SL_OK;
}

static const char *setop_name(sl_setop_kind k) {
  switch (k) {
  case SL_SETOP_UNION:
    return "UNION";
  case SL_SETOP_INTERSECT:
    return "INTERSECT";
  case SL_SETOP_EXCEPT:
    return "EXCEPT";
  default:
    return "VALUES";
  }
}

static int bind_body(sl_binder *b, const sl_query_body *body, sl_scope *parent,
                     sl_bquery **out);

static int bind_setop(sl_binder *b, const sl_query_body *body, sl_scope *parent,
                      sl_bquery *q) {
  q->kind = SL_BQUERY_SETOP;
  q->setop = body->kind;
  q->all = body->all;
  int rc = bind_body(b, body->left, parent, &q->left);
  if (!rc)
    rc = bind_body(b, body->right, parent, &q->right);
  if (rc)
    return rc;
  if (q->left->ncols != q->right->ncols)
    return sl_bind_error(b, body->span, SL_EBIND,
                         "both sides of %s must have the same number of "
                         "columns: %d vs %d",
                         setop_name(body->kind), q->left->ncols,
                         q->right->ncols);
  q->ncols = q->left->ncols;
  q->cols = SL_ANEW_N(b->a, sl_bcolumn, q->ncols + 1);
  for (int i = 0; i < q->ncols; i++) {
    const sl_type *pair[2] = {q->left->cols[i].type, q->right->cols[i].type};
    sl_type *t = sl_tp_common(b->a, 2, pair);
    if (!t)
      return sl_bind_error(b, body->span, SL_EBIND,
                           "column %d ('%s') of %s has no common type: %s vs "
                           "%s",
                           i + 1, q->left->cols[i].name, setop_name(body->kind),
                           sl_tp_msg(b->a, pair[0]), sl_tp_msg(b->a, pair[1]));
    q->cols[i] = q->left->cols[i];
    q->cols[i].type = t;
    q->cols[i].window_col = 0;
  }
  return SL_OK;
}

static int bind_body(sl_binder *b, const sl_query_body *body, sl_scope *parent,
                     sl_bquery **out) {
  if (body->nested)
    return sl_bind_query(b, body->nested, parent, out);
  sl_bquery *q = SL_ANEW(b->a, sl_bquery);
  q->span = body->span;
  q->limit = -1;
  *out = q;
  switch (body->kind) {
  case SL_SETOP_NONE:
    if (!body->select)
      return sl_bind_error(b, body->span, SL_EINTERNAL, "empty query body");
    return bind_select(b, body->select, parent, q);
  case SL_SETOP_VALUES:
    return bind_values(b, body, parent, q);
  default:
    return bind_setop(b, body, parent, q);
  }
}

/* ---- ORDER BY / LIMIT ------------------------------------------------------
 */

/* An ORDER BY item as an output column: a name or alias, an ordinal, or an
 * expression equal to a select item. */
static int order_column(sl_binder *b, sl_bquery *q, sl_scope *parent,
                        const sl_expr *e, int *col) {
  if (e->kind == SL_EXPR_NAME && e->u.name.nparts == 1) {
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < q->ncols; i++)
        if ((pass == 0 ? strcmp : strcasecmp)(q->cols[i].name,
                                              e->u.name.parts[0]) == 0) {
          *col = i;
          return SL_OK;
        }
  }
  if (e->kind == SL_EXPR_LITERAL && e->u.lit.kind == SL_LIT_INTEGER) {
    long v = strtol(e->u.lit.text, NULL, 10);
    if (v < 1 || v > q->ncols)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "ORDER BY position %ld is not in the select list "
                           "(1 to %d)",
                           v, q->ncols);
    *col = (int)v - 1;
    return SL_OK;
  }
  if (q->kind == SL_BQUERY_SELECT) {
    sl_bselect *sel = q->select;
    sl_scope scope = {parent, sel->from ? sel->from->ncols : 0,
                      sel->from ? sel->from->cols : NULL, NULL, NULL};
    /* Aggregates resolve against the block's own (deduplicated) list. */
    sl_block blk = {sel->naggs, sel->naggs, sel->aggs, 0, 0, NULL};
    sl_ectx cx = {&scope, "ORDER BY", &blk, sel->aggregate, false, NULL};
    sl_bexpr *x;
    int rc = sl_bind_expr(b, &cx, e, &x);
    if (rc)
      return rc;
    if (blk.naggs == sel->naggs) {
      if (sel->aggregate)
        rc = sl_bind_post_agg(b, sel, x, &x);
      if (rc)
        return rc;
      for (int i = 0; i < sel->nexprs; i++)
        if (sl_bexpr_equal(sel->exprs[i], x)) {
          *col = i;
          return SL_OK;
        }
    }
  }
  return sl_bind_error(b, e->span, SL_EBIND,
                       "ORDER BY %s must be one of the output columns; add it "
                       "to the SELECT list",
                       sl_bind_expr_sql(b, e));
}

static int limit_value(sl_binder *b, const sl_expr *e, const char *what,
                       int64_t *out) {
  if (e->kind != SL_EXPR_LITERAL || e->u.lit.kind != SL_LIT_INTEGER)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s must be a non-negative integer literal", what);
  *out = strtoll(e->u.lit.text, NULL, 10);
  return SL_OK;
}

int sl_bind_query(sl_binder *b, const sl_query *q, sl_scope *parent,
                  sl_bquery **out) {
  if (++b->depth > SL_BIND_MAX_DEPTH) {
    b->depth--;
    return sl_bind_error(b, q->span, SL_EBIND,
                         "queries, views and WITH are nested too deeply "
                         "(more than %d levels)",
                         SL_BIND_MAX_DEPTH);
  }
  sl_cte_env *saved = b->ctes;
  for (int i = 0; i < SL_LIST_LEN(q->ctes); i++) {
    const sl_cte *c = SL_LIST_AT(q->ctes, i);
    sl_cte_env *env = SL_ANEW(b->a, sl_cte_env);
    env->parent = b->ctes;
    env->visible = b->ctes;
    env->cte = c;
    b->ctes = env;
  }
  int rc = bind_body(b, q->body, parent, out);
  sl_bquery *bq = *out;
  for (int i = 0; !rc && i < SL_LIST_LEN(q->order_by); i++) {
    const sl_order_item *it = SL_LIST_AT(q->order_by, i);
    sl_border o = {0};
    rc = order_column(b, bq, parent, it->expr, &o.column);
    o.desc = it->desc;
    o.nulls = it->nulls;
    o.span = it->expr->span;
    int cap = bq->norder;
    if (!rc)
      SL_BIND_PUSH(b->a, bq->order, bq->norder, cap, o);
  }
  if (!rc && q->limit)
    rc = limit_value(b, q->limit, "LIMIT", &bq->limit);
  if (!rc && q->offset)
    rc = limit_value(b, q->offset, "OFFSET", &bq->offset);
  if (!rc)
    bq->span = q->span;
  b->ctes = saved;
  b->depth--;
  return rc;
}
