/* physical_plan.c - bound tree -> the runtime's pipeline (plan.h).
 *
 * The core move is substitution: a view or simple subquery is inlined by
 * replacing each reference to one of its output columns with the
 * expression that computes it, down to the columns of the base row (the
 * source's leaves).  The result is one filter and one set of expressions
 * over the base row, which the runtime evaluates in a single pass per
 * buffer, with no intermediate rows for views (NEXMark's `bid` view over
 * `datagen` costs nothing but its filter).
 *
 * Shapes the runtime cannot run yet are refused here with a message saying
 * so; the cost model and the choice between distribution strategies arrive
 * with the planner issue and will sit on top of this translation.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"
#include "sluice/common/cancel.h"
#include "sluice/planner/plan.h"

/* ---- flattening FROM ------------------------------------------------------
 */

typedef struct flat {
  int ncols;
  sl_bexpr **cols;  /* each over the base row */
  sl_bexpr *filter; /* over the base row */
  bool has_window;  /* a window TVF is inside */
  const sl_bwindow *window;
  sl_bexpr *window_time; /* the TVF's time column over the base row */
  int window_start_col;  /* index in cols of window_start */
} flat;

typedef struct planner {
  sl_arena *a;
  sl_plan *plan;
  sl_error *err;
  const sl_bfrom *stream_scan; /* input 0's scan node */
  bool too_deep;               /* a substitution was refused (err says which) */
} planner;

/* Substituting a view's columns stacks its expressions' depth on the
 * query's (and its views' on its own): each result is measured, without
 * recursion, before any recursive walker (the rest of planning, folding,
 * the interpreter, the JIT, EXPLAIN) sees it.  One too deep, or too large
 * once its shared subtrees are counted per use (what compiling it would
 * build), is refused; a NULL literal takes its place until planning
 * returns the error. */
static sl_bexpr *measured(planner *p, sl_bexpr *r, const sl_bexpr *at) {
  if (!r)
    return r;
  int64_t nodes = 0, copies = 0;
  int h = sl_bexpr_height(r, &nodes, &copies);
  if (h >= 0 && h <= SL_MAX_PLAN_EXPR_DEPTH &&
      copies <= SL_MAX_PLAN_EXPR_COPIES)
    return r;
  if (!p->too_deep) {
    sl_span s = at ? at->span : r->span;
    if (h >= 0 && h > SL_MAX_PLAN_EXPR_DEPTH)
      sl_error_set_at(p->err, SL_EUNSUPPORTED, s.line, s.column, s.offset,
                      s.length,
                      "expression nested too deeply once views are "
                      "expanded: depth %d exceeds the limit of %d; nest "
                      "fewer views or split their expressions",
                      h, SL_MAX_PLAN_EXPR_DEPTH);
    else if (h >= 0)
      sl_error_set_at(p->err, SL_EUNSUPPORTED, s.line, s.column, s.offset,
                      s.length,
                      "expression too large once views are expanded: "
                      "views' columns used more than once add %lld copies "
                      "of their expressions, more than the limit of %d; "
                      "nest fewer views or use each column fewer times",
                      (long long)copies, SL_MAX_PLAN_EXPR_COPIES);
    else if (h == -2)
      sl_error_set(p->err, SL_ECANCELLED, "query cancelled");
    else
      sl_error_set(p->err, SL_ENOMEM, "out of memory measuring an expression");
  }
  p->too_deep = true;
  sl_bexpr *l = sl_pl_new_expr(p->a, SL_BEXPR_LITERAL, r->type);
  l->lit.kind = SL_LIT_NULL;
  l->span = r->span;
  return l;
}

static sl_bexpr *subst(planner *p, const sl_bexpr *e, sl_bexpr *const *cols) {
  return measured(p, sl_pl_subst(p->a, e, cols), e);
}

static int unsupported(planner *p, sl_span span, const char *what) {
  return sl_error_set_at(p->err, SL_EUNSUPPORTED, span.line, span.column,
                         span.offset, span.length, "not supported yet: %s",
                         what);
}

static bool table_is_bounded(const sl_table_def *t) {
  const char *c = sl_table_def_option(t, "connector");
  if (!c)
    c = sl_table_def_option(t, "connector.type");
  if (c && strcasecmp(c, "filesystem") == 0) /* unless followed */
    return !sl_table_def_option(t, "source.monitor-interval");
  if (sl_table_def_option(t, "events.num") ||
      sl_table_def_option(t, "number-of-rows"))
    return true;
  const char *yt = sl_table_def_option(t, "ysb.table");
  return yt && strcasecmp(yt, "campaigns") == 0;
}

/* Can a join read t whole before the stream starts (a lookup join)?  A
 * bounded table without event time.  A table with a WATERMARK is an event
 * stream even when it ends: joined with another stream it is a regular
 * join of two streams (updating stages), as in Flink's streaming mode. */
static bool table_is_lookup(const sl_table_def *t) {
  return table_is_bounded(t) && !t->watermark_sql;
}

/* The connector table a FROM subtree reads (NULL if several or none). */
static const sl_bfrom *find_scan(const sl_bfrom *f) {
  switch (f->kind) {
  case SL_BFROM_SCAN:
    return f;
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    if (f->u.sub.query->kind != SL_BQUERY_SELECT ||
        !f->u.sub.query->select->from)
      return NULL;
    return find_scan(f->u.sub.query->select->from);
  case SL_BFROM_WINDOW_TVF:
    return find_scan(f->u.tvf.input);
  case SL_BFROM_JOIN:
    return NULL;
  }
  return NULL;
}

static int flatten(planner *p, const sl_bfrom *f, flat *out);

static int add_input(planner *p, const sl_bfrom *scan, flat *out) {
  sl_plan *plan = p->plan;
  if (plan->ninputs == 2)
    return unsupported(p, scan->span, "a query over more than two tables");
  const sl_table_def *t = scan->u.scan.table;
  if (t->kind != SL_TABLE_CONNECTOR)
    return sl_error_set(p->err, SL_EINTERNAL, "scan of a view");
  const char *cname = sl_table_def_option(t, "connector");
  if (!cname)
    cname = sl_table_def_option(t, "connector.type");
  const sl_source_connector *conn =
      cname ? sl_source_connector_find(cname) : NULL;
  if (!conn)
    return sl_error_set_at(
        p->err, SL_EUNSUPPORTED, scan->span.line, scan->span.column,
        scan->span.offset, scan->span.length,
        "table '%s' has connector '%s', which cannot be read; sources are: %s",
        t->name, cname ? cname : "(none)", sl_source_connector_names());
  sl_plan_input *in = &plan->inputs[plan->ninputs++];
  memset(in, 0, sizeof *in);
  in->table = t;
  in->connector = conn;
  in->bounded = table_is_bounded(t);
  sl_table_leaf_columns(p->a, t, &in->leaves);
  in->first_column = plan->base_ncols;
  in->ncolumns = t->ncolumns;

  /* Grow the base row by this table's columns. */
  int n = plan->base_ncols + t->ncolumns;
  const char **names = SL_ANEW_N(p->a, const char *, n);
  const sl_type **types = SL_ANEW_N(p->a, const sl_type *, n);
  for (int i = 0; i < plan->base_ncols; i++) {
    names[i] = plan->base_names[i];
    types[i] = plan->base_types[i];
  }
  for (int i = 0; i < t->ncolumns; i++) {
    names[plan->base_ncols + i] = t->columns[i].name;
    types[plan->base_ncols + i] = t->columns[i].type;
  }
  plan->base_names = names;
  plan->base_types = types;
  plan->base_ncols = n;

  /* The scan's columns: physical ones are base columns, computed ones are
   * their expressions over the physical ones. */
  sl_bexpr **base = SL_ANEW_N(p->a, sl_bexpr *, t->ncolumns);
  for (int i = 0; i < t->ncolumns; i++)
    base[i] = sl_pl_column(p->a, in->first_column + i, t->columns[i].type,
                           t->columns[i].name);
  out->ncols = scan->ncols;
  out->cols = SL_ANEW_N(p->a, sl_bexpr *, scan->ncols);
  for (int i = 0; i < scan->ncols; i++) {
    const sl_bexpr *c = scan->u.scan.computed ? scan->u.scan.computed[i] : NULL;
    out->cols[i] = c ? subst(p, c, base) : base[i];
  }
  out->filter = NULL;
  if (plan->ninputs == 1)
    p->stream_scan = scan;
  /* Event time of the stream: its rowtime column and watermark. */
  if (plan->ninputs == 1 && scan->u.scan.rowtime_column >= 0) {
    plan->rowtime = out->cols[scan->u.scan.rowtime_column];
    plan->watermark = subst(p, scan->u.scan.watermark, out->cols);
  }
  return SL_OK;
}

static int flatten_sub(planner *p, const sl_bfrom *f, flat *out) {
  const sl_bquery *q = f->u.sub.query;
  if (q->kind != SL_BQUERY_SELECT)
    return unsupported(p, f->span,
                       "VALUES or UNION, INTERSECT, EXCEPT in FROM");
  const sl_bselect *s = q->select;
  if (s->aggregate || s->nwindows > 0 || s->distinct || q->norder > 0 ||
      q->limit >= 0)
    return unsupported(p, f->span,
                       "a subquery or view with GROUP BY, DISTINCT, ORDER BY, "
                       "LIMIT or OVER feeding another query (multi-stage "
                       "queries come with windowed joins)");
  if (!s->from)
    return unsupported(p, f->span, "SELECT without FROM");
  flat inner;
  int rc = flatten(p, s->from, &inner);
  if (rc != SL_OK)
    return rc;
  *out = inner;
  out->filter = sl_pl_and(p->a, inner.filter, subst(p, s->where, inner.cols));
  out->ncols = s->nexprs;
  out->cols = SL_ANEW_N(p->a, sl_bexpr *, s->nexprs);
  for (int i = 0; i < s->nexprs; i++)
    out->cols[i] = subst(p, s->exprs[i], inner.cols);
  /* A window TVF's bounds keep their place only if selected unchanged. */
  if (inner.has_window) {
    out->window_start_col = -1;
    for (int i = 0; i < s->nexprs; i++)
      if (out->cols[i]->kind == SL_BEXPR_WINDOW_PROP &&
          out->cols[i]->prop == SL_WPROP_START)
        out->window_start_col = i;
  }
  return SL_OK;
}

static int flatten_tvf(planner *p, const sl_bfrom *f, flat *out) {
  flat inner;
  int rc = flatten(p, f->u.tvf.input, &inner);
  if (rc != SL_OK)
    return rc;
  if (inner.has_window)
    return unsupported(p, f->span, "a window over a window");
  const sl_bwindow *w = &f->u.tvf.window;
  *out = inner;
  out->has_window = true;
  out->window = w;
  out->window_time = inner.cols[w->time_column];
  out->ncols = f->ncols;
  out->cols = SL_ANEW_N(p->a, sl_bexpr *, f->ncols);
  for (int i = 0; i < inner.ncols; i++)
    out->cols[i] = inner.cols[i];
  static const sl_window_prop props[3] = {SL_WPROP_START, SL_WPROP_END,
                                          SL_WPROP_ROWTIME};
  for (int k = 0; k < 3 && inner.ncols + k < f->ncols; k++) {
    sl_bexpr *e = sl_pl_new_expr(p->a, SL_BEXPR_WINDOW_PROP,
                                 f->cols[inner.ncols + k].type);
    e->prop = props[k];
    e->name = f->cols[inner.ncols + k].name;
    out->cols[inner.ncols + k] = e;
  }
  out->window_start_col = inner.ncols;
  return SL_OK;
}

/* Two integer keys of different widths (q13's MOD(B.auction, 10000), an
 * INT, against a BIGINT key): the narrower is CAST to the wider, so that
 * both hash and compare alike (the comparison's own meaning). */
static void widen_integers(sl_arena *a, sl_bexpr **x, sl_bexpr **y) {
  const sl_type *tx = (*x)->type, *ty = (*y)->type;
  if (!sl_type_is_integer(tx) || !sl_type_is_integer(ty) ||
      tx->kind == ty->kind)
    return;
  sl_bexpr **narrow = tx->kind < ty->kind ? x : y;
  const sl_type *wide = tx->kind < ty->kind ? ty : tx;
  sl_type *t = sl_type_new(a, wide->kind);
  t->not_null = (*narrow)->type->not_null;
  sl_bexpr *c = sl_pl_new_expr(a, SL_BEXPR_CAST, t);
  c->nargs = 1;
  c->args = SL_ANEW_N(a, sl_bexpr *, 1);
  c->args[0] = *narrow;
  c->span = (*narrow)->span;
  *narrow = c;
}

static int flatten_join(planner *p, const sl_bfrom *f, flat *out) {
  if (f->u.join.kind != SL_JOIN_INNER && f->u.join.kind != SL_JOIN_CROSS &&
      !f->u.join.lookup)
    return unsupported(p, f->span, "outer joins");
  const sl_bfrom *ls = find_scan(f->u.join.left);
  const sl_bfrom *rs = find_scan(f->u.join.right);
  if (!ls || !rs)
    return unsupported(p, f->span, "a join of joins or of aggregated inputs");
  bool lb = table_is_lookup(ls->u.scan.table);
  bool rb = table_is_lookup(rs->u.scan.table);
  if (!lb && !rb)
    return unsupported(p, f->span,
                       "a join of two unbounded streams (window and interval "
                       "joins come with the joins milestone; a stream can be "
                       "joined with a bounded table now)");
  /* The stream side (or, when both are bounded, the left) is input 0. */
  bool swap = lb && !rb;
  const sl_bfrom *stream = swap ? f->u.join.right : f->u.join.left;
  const sl_bfrom *table = swap ? f->u.join.left : f->u.join.right;
  flat fs, ft;
  int rc = flatten(p, stream, &fs);
  if (rc == SL_OK)
    rc = flatten(p, table, &ft);
  if (rc != SL_OK)
    return rc;
  if (ft.has_window)
    return unsupported(p, f->span, "a window over the bounded side of a join");
  const flat *fl = swap ? &ft : &fs, *fr = swap ? &fs : &ft;
  *out = fs; /* window info of the stream side */
  out->ncols = fl->ncols + fr->ncols;
  out->cols = SL_ANEW_N(p->a, sl_bexpr *, out->ncols);
  for (int i = 0; i < fl->ncols; i++)
    out->cols[i] = fl->cols[i];
  for (int i = 0; i < fr->ncols; i++)
    out->cols[fl->ncols + i] = fr->cols[i];
  if (fs.has_window)
    out->window_start_col =
        swap ? fl->ncols + fs.window_start_col : fs.window_start_col;
  out->filter = sl_pl_and(p->a, fs.filter, ft.filter);

  /* ON: equality conjuncts between the two inputs become the hash keys. */
  sl_plan *plan = p->plan;
  plan->join = true;
  sl_bexpr *on = subst(p, f->u.join.on, out->cols);
  sl_pl_parts on_parts = {0}, rest = {0};
  sl_pl_conjuncts(p->a, on, &on_parts);
  sl_bexpr **parts = on_parts.v;
  int n = on_parts.n;
  int s0 = plan->inputs[0].first_column;
  int s1 = s0 + plan->inputs[0].ncolumns;
  int t0 = plan->inputs[1].first_column;
  int t1 = t0 + plan->inputs[1].ncolumns;
  plan->join_stream_keys = SL_ANEW_N(p->a, sl_bexpr *, n > 0 ? n : 1);
  plan->join_table_keys = SL_ANEW_N(p->a, sl_bexpr *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    sl_bexpr *c = parts[i];
    if (c->kind == SL_BEXPR_BINARY && c->op == SL_OP_EQ) {
      sl_bexpr *x = c->args[0], *y = c->args[1];
      if (sl_pl_columns_within(x, t0, t1) && sl_pl_columns_within(y, s0, s1)) {
        sl_bexpr *tmp = x;
        x = y;
        y = tmp;
      }
      if (sl_pl_columns_within(x, s0, s1) && sl_pl_columns_within(y, t0, t1))
        widen_integers(p->a, &x, &y);
      if (sl_pl_columns_within(x, s0, s1) && sl_pl_columns_within(y, t0, t1) &&
          sl_type_equal(x->type, y->type)) {
        plan->join_stream_keys[plan->njoin_keys] = x;
        plan->join_table_keys[plan->njoin_keys++] = y;
        continue;
      }
    }
    sl_pl_parts_add(p->a, &rest, c);
  }
  out->filter = sl_pl_and(p->a, out->filter, sl_pl_and_parts(p->a, &rest));
  if (plan->njoin_keys == 0)
    return unsupported(p, f->span,
                       "a join without an equality between the stream and "
                       "the table (of the same type)");
  return SL_OK;
}

static int flatten_from(planner *p, const sl_bfrom *f, flat *out) {
  switch (f->kind) {
  case SL_BFROM_SCAN:
    if (f->u.scan.system_time && p->plan->ninputs == 0)
      return unsupported(p, f->span, "FOR SYSTEM_TIME AS OF on the stream");
    return add_input(p, f, out);
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    return flatten_sub(p, f, out);
  case SL_BFROM_WINDOW_TVF:
    return flatten_tvf(p, f, out);
  case SL_BFROM_JOIN:
    return flatten_join(p, f, out);
  }
  return sl_error_set(p->err, SL_EINTERNAL, "unknown FROM node");
}

static int flatten(planner *p, const sl_bfrom *f, flat *out) {
  memset(out, 0, sizeof *out);
  out->window_start_col = -1;
  int rc = flatten_from(p, f, out);
  return rc == SL_OK && p->too_deep ? p->err->code : rc;
}

/* ---- windows and aggregates -----------------------------------------------
 */

static int64_t unit_of(const sl_type *t) {
  int prec = t->precision < 0 ? 6 : t->precision;
  int64_t u = 1;
  for (int i = prec; i < 6; i++)
    u *= 10;
  return u;
}

static void set_window(sl_plan *plan, const sl_bwindow *w, sl_bexpr *time) {
  sl_plan_window *pw = &plan->window;
  plan->windowed = true;
  pw->kind = w->kind;
  pw->size_us = w->size_ms * 1000;
  pw->slide_us =
      (w->kind == SL_WINDOW_TUMBLE ? w->size_ms : w->slide_ms) * 1000;
  pw->gap_us = w->gap_ms * 1000;
  pw->offset_us = w->offset_ms * 1000;
  pw->time = time;
  pw->unit_us = unit_of(time->type);
  pw->proctime = w->time_attr == SL_TIME_PROCTIME;
}

sl_agg_op sl_plan_agg_op(const sl_bagg *agg, bool *ok) {
  const char *n = agg->fn->name;
  *ok = true;
  if (strcmp(n, "COUNT") == 0)
    return agg->star ? SL_AGG_COUNT_STAR : SL_AGG_COUNT;
  if (strcmp(n, "SUM") == 0)
    return SL_AGG_SUM;
  if (strcmp(n, "AVG") == 0)
    return SL_AGG_AVG;
  if (strcmp(n, "MIN") == 0)
    return SL_AGG_MIN;
  if (strcmp(n, "MAX") == 0)
    return SL_AGG_MAX;
  *ok = false;
  return SL_AGG_COUNT;
}

bool sl_pl_agg(sl_arena *a, const sl_bagg *ba, sl_bexpr *const *cols,
               sl_plan_agg *pa) {
  bool ok;
  pa->op = sl_plan_agg_op(ba, &ok);
  pa->distinct = ba->distinct;
  pa->arg = ba->nargs > 0 ? ba->args[0] : NULL;
  pa->filter = ba->filter;
  if (cols) {
    pa->arg = sl_pl_subst(a, pa->arg, cols);
    pa->filter = sl_pl_subst(a, pa->filter, cols);
  }
  pa->type = ba->type;
  return ok;
}

/* Rewrite a post-aggregation expression to COLUMNs of the aggregate row. */
typedef struct agg_row_map {
  const int *group_to_col; /* per bound group key: aggregate-row column */
  int nkeys, naggs;
  const sl_type *const *types; /* aggregate-row types */
} agg_row_map;

static sl_bexpr *agg_row_column(sl_arena *a, const sl_bexpr *e, void *arg) {
  const agg_row_map *m = arg;
  int col = -1;
  switch (e->kind) {
  case SL_BEXPR_GROUP_REF:
    col = m->group_to_col[e->index];
    break;
  case SL_BEXPR_AGG_REF:
    col = m->nkeys + e->index;
    break;
  case SL_BEXPR_WINDOW_PROP:
    col = m->nkeys + m->naggs +
          (e->prop == SL_WPROP_START ? 0
           : e->prop == SL_WPROP_END ? 1
                                     : 2);
    break;
  default:
    break;
  }
  return col >= 0 ? sl_pl_column(a, col, e->type, e->name) : NULL;
}

static sl_bexpr *to_agg_row(sl_arena *a, const sl_bexpr *e,
                            const agg_row_map *m) {
  return sl_pl_map(a, e, agg_row_column, (void *)m);
}

static int plan_aggregate(planner *p, const sl_bselect *s, const flat *f) {
  sl_plan *plan = p->plan;
  plan->kind = SL_PLAN_AGGREGATE;
  int *group_to_col = SL_ANEW_N(p->a, int, s->ngroups > 0 ? s->ngroups : 1);
  plan->keys = SL_ANEW_N(p->a, sl_bexpr *, s->ngroups > 0 ? s->ngroups : 1);
  bool saw_start = false, saw_end = false;
  for (int i = 0; i < s->ngroups; i++) {
    sl_bexpr *k = subst(p, s->groups[i], f->cols);
    if (k->kind == SL_BEXPR_WINDOW_PROP) {
      saw_start |= k->prop == SL_WPROP_START;
      saw_end |= k->prop == SL_WPROP_END;
      group_to_col[i] = -1 - (int)k->prop; /* fixed up below */
      continue;
    }
    if (sl_pl_has_window_prop(k))
      return unsupported(p, s->groups[i]->span,
                         "grouping by an expression of window bounds");
    group_to_col[i] = plan->nkeys;
    plan->keys[plan->nkeys++] = k;
  }
  if (s->group_window) {
    set_window(plan, s->group_window, f->cols[s->group_window->time_column]);
  } else if (f->has_window) {
    if (!saw_start || !saw_end)
      return unsupported(p,
                         s->ngroups > 0 ? s->groups[0]->span : f->window->span,
                         "a window table function without both window_start "
                         "and window_end in GROUP BY");
    set_window(plan, f->window, f->window_time);
    if (f->window->kind == SL_WINDOW_SESSION && f->window->npartition > 0) {
      /* TVF SESSION ... PARTITION BY k: sessions are per key, so k must be
       * grouped by as well (Flink requires it too). */
    }
  }
  if (plan->windowed && plan->window.kind == SL_WINDOW_CUMULATE &&
      plan->window.size_us % plan->window.slide_us != 0)
    return unsupported(p, f->window->span,
                       "CUMULATE whose size is not a multiple of its step");
  if (plan->windowed && plan->window.kind == SL_WINDOW_HOP &&
      plan->window.size_us % plan->window.slide_us != 0)
    return unsupported(
        p, s->group_window ? s->group_window->span : f->window->span,
        "HOP whose size is not a multiple of its slide");
  plan->naggs = s->naggs;
  plan->aggs = SL_ANEW_N(p->a, sl_plan_agg, s->naggs > 0 ? s->naggs : 1);
  for (int i = 0; i < s->naggs; i++) {
    if (!sl_pl_agg(p->a, &s->aggs[i], f->cols, &plan->aggs[i]))
      return unsupported(p, s->aggs[i].span, "this aggregate function");
    plan->aggs[i].arg = measured(p, plan->aggs[i].arg, NULL);
    plan->aggs[i].filter = measured(p, plan->aggs[i].filter, NULL);
  }
  if (p->too_deep)
    return p->err->code;
  for (int i = 0; i < s->ngroups; i++)
    if (group_to_col[i] < 0) {
      sl_window_prop prop = (sl_window_prop)(-1 - group_to_col[i]);
      group_to_col[i] = plan->nkeys + plan->naggs +
                        (prop == SL_WPROP_START ? 0
                         : prop == SL_WPROP_END ? 1
                                                : 2);
    }
  agg_row_map m = {group_to_col, plan->nkeys, plan->naggs, NULL};
  plan->having = to_agg_row(p->a, s->having, &m);
  plan->nout = s->nexprs;
  plan->out = SL_ANEW_N(p->a, sl_bexpr *, s->nexprs);
  for (int i = 0; i < s->nexprs; i++)
    plan->out[i] = to_agg_row(p->a, s->exprs[i], &m);
  return SL_OK;
}

static bool needs_stages_from(const sl_bfrom *f);

/* Is a window TVF inside f (not under an aggregate)?  Window rows joined
 * with anything are a window join. */
static bool has_tvf(const sl_bfrom *f) {
  switch (f->kind) {
  case SL_BFROM_WINDOW_TVF:
    return true;
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    return f->u.sub.query->kind == SL_BQUERY_SELECT &&
           f->u.sub.query->select->from && !f->u.sub.query->select->aggregate &&
           has_tvf(f->u.sub.query->select->from);
  default:
    return false;
  }
}

static bool needs_stages_query(const sl_bquery *q, bool top) {
  if (q->kind != SL_BQUERY_SELECT || !q->select->from)
    return false;
  const sl_bselect *s = q->select;
  if (s->nwindows > 0)
    return true;
  if (!top && (s->aggregate || s->distinct))
    return true;
  /* Window rows read on their own: the stage store puts each row into its
   * windows (several under HOP and CUMULATE) and hands a window's rows on
   * when the watermark passes its end. */
  if (top && !s->aggregate && has_tvf(s->from))
    return true;
  return needs_stages_from(s->from);
}

static bool needs_stages_from(const sl_bfrom *f) {
  switch (f->kind) {
  case SL_BFROM_SCAN:
    return false;
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    return needs_stages_query(f->u.sub.query, false);
  case SL_BFROM_WINDOW_TVF:
    return needs_stages_from(f->u.tvf.input);
  case SL_BFROM_JOIN: {
    /* Window rows on both sides: a window join (one side only, with a
     * bounded table: a lookup join in one pipeline). */
    if (needs_stages_from(f->u.join.left) ||
        needs_stages_from(f->u.join.right) ||
        (has_tvf(f->u.join.left) && has_tvf(f->u.join.right)))
      return true;
    if (f->u.join.lookup)
      return false;
    const sl_bfrom *ls = find_scan(f->u.join.left);
    const sl_bfrom *rs = find_scan(f->u.join.right);
    if (!ls || !rs)
      return true;
    return !table_is_lookup(ls->u.scan.table) &&
           !table_is_lookup(rs->u.scan.table);
  }
  }
  return false;
}

/* The pipeline of query q into p->plan (sink already chosen).  leaf: a
 * leaf of a staged plan (no filter goes into the source). */
/* SELECT without FROM, or VALUES: rows of constants, no source. */
static int plan_constant(planner *p, const sl_bquery *q) {
  sl_plan *plan = p->plan;
  plan->kind = SL_PLAN_CONSTANT;
  if (q->kind == SL_BQUERY_VALUES) {
    plan->nconst_rows = q->nrows;
    plan->const_rows = (sl_bexpr *const *const *)q->rows;
  } else {
    const sl_bselect *s = q->select;
    if (s->aggregate || s->nwindows > 0 || s->distinct)
      return unsupported(p, q->span,
                         "GROUP BY, aggregates, OVER or DISTINCT without FROM");
    sl_bexpr ***rows = SL_ANEW_N(p->a, sl_bexpr **, 1);
    rows[0] = s->exprs;
    plan->nconst_rows = 1;
    plan->const_rows = (sl_bexpr *const *const *)rows;
    plan->const_filter = s->where;
  }
  plan->nout = q->ncols;
  plan->out_names = SL_ANEW_N(p->a, const char *, q->ncols > 0 ? q->ncols : 1);
  plan->out_types =
      SL_ANEW_N(p->a, const sl_type *, q->ncols > 0 ? q->ncols : 1);
  for (int i = 0; i < q->ncols; i++) {
    plan->out_names[i] = q->cols[i].name;
    plan->out_types[i] = q->cols[i].type;
  }
  plan->out = plan->nconst_rows > 0 ? (sl_bexpr **)plan->const_rows[0]
                                    : SL_ANEW_N(p->a, sl_bexpr *, 1);
  plan->limit = q->limit;
  plan->offset = q->offset;
  plan->norder = q->norder;
  plan->order = q->order;
  return SL_OK;
}

/* A GROUP BY without a window: its result changes as input arrives, so it
 * is a changelog (Flink's streaming mode), except over a bounded input
 * with ORDER BY or LIMIT, whose final result is what is asked for (it is
 * sorted or cut once the input has ended).  Over an unbounded stream LIMIT
 * would cut a changelog at an arbitrary change, so it is refused. */
static int choose_changelog(planner *p, const sl_bquery *q, bool leaf) {
  sl_plan *plan = p->plan;
  bool bounded = plan->inputs[0].bounded;
  if (leaf) {
    if (bounded)
      return SL_OK;
    return unsupported(p,
                       q->select->groups ? q->select->groups[0]->span : q->span,
                       "GROUP BY without a window feeding a join or another "
                       "query over an unbounded stream (stages above it are "
                       "evaluated per window). Add a window, or bound the "
                       "source with 'events.num'");
  }
  if (bounded && (plan->norder > 0 || plan->limit >= 0 || plan->offset > 0))
    return SL_OK;
  if (plan->limit >= 0)
    return unsupported(p, q->span,
                       "LIMIT over the updating result of a GROUP BY without "
                       "a window over an unbounded stream (its rows change "
                       "forever). Drop LIMIT, add a window, or bound the "
                       "source with 'events.num'");
  if (plan->offset > 0)
    return unsupported(p, q->span,
                       "OFFSET over the updating result of a GROUP BY "
                       "without a window");
  plan->changelog = true;
  return SL_OK;
}

static int build_query(planner *p, const sl_bquery *q, bool leaf) {
  sl_arena *a = p->a;
  sl_plan *plan = p->plan;
  sl_error *err = p->err;
  if (q && !leaf &&
      (q->kind == SL_BQUERY_VALUES ||
       (q->kind == SL_BQUERY_SELECT && !q->select->from)))
    return plan_constant(p, q);
  if (!q || q->kind != SL_BQUERY_SELECT)
    return unsupported(p, q->span, "UNION, INTERSECT and EXCEPT queries");
  const sl_bselect *s = q->select;
  if (!s->from)
    return unsupported(p, q->span, "SELECT without FROM feeding another query");
  if (s->distinct)
    return unsupported(p, q->span, "SELECT DISTINCT");
  if (s->nwindows > 0)
    return unsupported(p, s->windows[0].span,
                       "OVER window functions (ROW_NUMBER comes with Top-N)");
  flat f;
  int rc = flatten(p, s->from, &f);
  if (rc != SL_OK)
    return rc;

  /* WHERE and the views' filters: the part over the stream alone runs
   * before the join; the rest after it. */
  sl_bexpr *where = sl_pl_and(a, f.filter, subst(p, s->where, f.cols));
  if (p->too_deep)
    return err->code;
  sl_pl_parts parts = {0}, before = {0}, after = {0};
  sl_pl_conjuncts(a, where, &parts);
  int s0 = plan->inputs[0].first_column;
  int s1 = s0 + plan->inputs[0].ncolumns;
  sl_pl_parts_add(a, &before, plan->filter);
  sl_pl_parts_add(a, &after, plan->post_join_filter);
  for (int i = 0; i < parts.n; i++) {
    if (sl_pl_has_window_prop(parts.v[i]))
      return unsupported(p, parts.v[i]->span,
                         "a condition on window bounds before aggregation");
    if (!plan->join || sl_pl_columns_within(parts.v[i], s0, s1))
      sl_pl_parts_add(a, &before, parts.v[i]);
    else
      sl_pl_parts_add(a, &after, parts.v[i]);
  }
  plan->filter = sl_pl_and_parts(a, &before);
  plan->post_join_filter = sl_pl_and_parts(a, &after);

  if (s->aggregate) {
    rc = plan_aggregate(p, s, &f);
    if (rc != SL_OK)
      return rc;
  } else {
    plan->kind = SL_PLAN_STATELESS;
    plan->nout = s->nexprs;
    plan->out = SL_ANEW_N(a, sl_bexpr *, s->nexprs);
    for (int i = 0; i < s->nexprs; i++) {
      plan->out[i] = subst(p, s->exprs[i], f.cols);
      if (sl_pl_has_window_prop(plan->out[i]))
        return unsupported(p, s->exprs[i]->span,
                           "window bounds without a window aggregate");
    }
  }
  if (p->too_deep)
    return err->code;
  plan->out_names = SL_ANEW_N(a, const char *, plan->nout > 0 ? plan->nout : 1);
  plan->out_types =
      SL_ANEW_N(a, const sl_type *, plan->nout > 0 ? plan->nout : 1);
  for (int i = 0; i < plan->nout; i++) {
    plan->out_names[i] = q->cols[i].name;
    plan->out_types[i] = q->cols[i].type;
  }
  plan->limit = q->limit;
  plan->offset = q->offset;
  if (q->norder > 0) {
    int rc = sl_pl_order_bounded(plan, q, err);
    if (rc != SL_OK)
      return rc;
    plan->norder = q->norder;
    plan->order = q->order;
  }
  if (plan->kind == SL_PLAN_AGGREGATE && !plan->windowed) {
    rc = choose_changelog(p, q, leaf);
    if (rc != SL_OK)
      return rc;
  }
  sl_plan_push_having(a, plan);
  sl_plan_propagate_constants(a, plan);
  sl_plan_fold_constants(a, plan);
  if (sl_cancel_current_pending()) /* Ctrl-C, .timeout (folding stopped) */
    return sl_error_set(err, SL_ECANCELLED, "query cancelled");
  if (!leaf && !plan->track_watermark)
    sl_plan_push_into_sources(a, plan);
  sl_plan_prune_leaves(a, plan);
  for (int j = 0; j < plan->ninputs; j++)
    if (plan->inputs[j].nused < plan->inputs[j].leaves.n)
      sl_plan_note(a, plan,
                   "projection pruning: %s produces %d of its %d leaves",
                   plan->inputs[j].table->name, plan->inputs[j].nused,
                   plan->inputs[j].leaves.n);
  return SL_OK;
}

int sl_pl_order_bounded(const sl_plan *p, const sl_bquery *q, sl_error *err) {
  /* A sort needs the whole result: only a result that ends can be sorted
   * (Flink's ORDER BY on a time attribute is not done yet). */
  for (int j = 0; j < p->ninputs; j++)
    if (!p->inputs[j].bounded)
      return sl_error_set_at(
          err, SL_EUNSUPPORTED, q->order[0].span.line, q->order[0].span.column,
          q->order[0].span.offset, q->order[0].span.length,
          "ORDER BY on the unbounded stream '%s': its result never ends, so "
          "it can never be sorted; bound the source ('events.num', or a "
          "file) or drop ORDER BY",
          p->inputs[j].table->name);
  return SL_OK;
}

int sl_plan_build_leaf(sl_arena *a, const sl_bquery *q, sl_plan **out,
                       sl_error *err) {
  planner p = {a, SL_ANEW(a, sl_plan), err, NULL, false};
  p.plan->limit = -1;
  p.plan->track_watermark = true;
  int rc = build_query(&p, q, true);
  if (rc != SL_OK)
    return rc;
  sl_plan *plan = p.plan;
  if (plan->kind == SL_PLAN_AGGREGATE && plan->windowed) {
    /* The hidden last column: window_end, which says which window a row
     * belongs to. */
    int n = plan->nout + 1;
    sl_bexpr **outs = SL_ANEW_N(a, sl_bexpr *, n);
    const char **names = SL_ANEW_N(a, const char *, n);
    const sl_type **types = SL_ANEW_N(a, const sl_type *, n);
    for (int i = 0; i < plan->nout; i++) {
      outs[i] = plan->out[i];
      names[i] = plan->out_names[i];
      types[i] = plan->out_types[i];
    }
    sl_type *t = sl_type_timestamp(a, 3);
    outs[n - 1] =
        sl_pl_column(a, plan->nkeys + plan->naggs + 1, t, "$window_end");
    names[n - 1] = "$window_end";
    types[n - 1] = t;
    plan->out = outs;
    plan->out_names = names;
    plan->out_types = types;
    plan->nout = n;
  }
  *out = plan;
  return SL_OK;
}

/* INSERT INTO adds rows; INSERT OVERWRITE replaces the table's, which only
 * a bounded query can do (as in Flink: an unbounded one would never
 * finish replacing), and only into a sink that can. */
static int plan_insert_mode(sl_plan *plan, const sl_bound_stmt *stmt,
                            sl_error *err) {
  plan->sink_unbounded = !sl_plan_is_bounded(plan);
  plan->sink_overwrite = stmt->ast && stmt->ast->kind == SL_STMT_INSERT &&
                         stmt->ast->u.insert.overwrite;
  if (!plan->sink_overwrite)
    return SL_OK;
  const sl_span sp = stmt->ast->span;
  if (!plan->sink->can_overwrite)
    return sl_error_set_at(err, SL_EUNSUPPORTED, sp.line, sp.column, sp.offset,
                           sp.length,
                           "INSERT OVERWRITE into '%s': the '%s' connector "
                           "cannot replace a table's rows; use INSERT INTO",
                           stmt->table->name, plan->sink->name);
  if (plan->sink_unbounded)
    return sl_error_set_at(
        err, SL_EUNSUPPORTED, sp.line, sp.column, sp.offset, sp.length,
        "INSERT OVERWRITE into '%s' of a query over an unbounded stream: the "
        "old rows would be replaced only when the query ends, which it never "
        "does. Use INSERT INTO (it adds rows as they come), or bound the "
        "source ('events.num', a file that is not followed)",
        stmt->table->name);
  return SL_OK;
}

int sl_plan_build(sl_arena *a, const sl_bound_stmt *stmt, sl_plan **out,
                  sl_error *err) {
  planner p = {a, SL_ANEW(a, sl_plan), err, NULL, false};
  sl_plan *plan = p.plan;
  plan->limit = -1;
  const sl_bquery *q = stmt->query;
  if (stmt->kind == SL_STMT_INSERT) {
    plan->sink_table = stmt->table;
    const char *c = sl_table_def_option(stmt->table, "connector");
    plan->sink = c ? sl_sink_connector_find(c) : NULL;
    if (!plan->sink)
      return sl_error_set(err, SL_EUNSUPPORTED,
                          "table '%s' has connector '%s', which cannot be "
                          "written; sinks are: %s",
                          stmt->table->name, c ? c : "(none)",
                          sl_sink_connector_names());
  } else {
    plan->sink = sl_shell_sink_connector();
  }
  if (!q)
    return unsupported(&p, stmt->ast->span,
                       "UNION, INTERSECT and EXCEPT queries");
  /* A partitioned filesystem sink that commits partitions by partition
   * time needs the watermark even of rows that have no window: computed
   * (the table's, over every row), and no row dropped as late (a late row
   * goes into its partition again). */
  const char *trigger =
      plan->sink_table ? sl_table_def_option(plan->sink_table,
                                             "sink.partition-commit.trigger")
                       : NULL;
  if (trigger && plan->sink_table->npartitioned_by > 0 &&
      !strcasecmp(trigger, "partition-time")) {
    plan->track_watermark = true;
    plan->keep_late = true;
  }
  int rc;
  if (needs_stages_query(q, true)) {
    plan->kind = SL_PLAN_STAGED;
    rc = sl_stage_plan_build(a, q, plan, err);
  } else {
    rc = build_query(&p, q, false);
  }
  if (rc != SL_OK)
    return rc;
  if (stmt->kind == SL_STMT_INSERT) {
    rc = plan_insert_mode(plan, stmt, err);
    if (rc != SL_OK)
      return rc;
  }
  *out = plan;
  return SL_OK;
}
