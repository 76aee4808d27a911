/* bind_window.c - windows and aggregation: window TVFs
 * (TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))), legacy group windows
 * (GROUP BY TUMBLE(ts, size)) and their TUMBLE_START-style properties,
 * window functions (ROW_NUMBER() OVER ...), and the rewrite of a SELECT's
 * expressions onto the post-aggregation row with the "must appear in GROUP
 * BY" check.
 */
#include <string.h>
#include <strings.h>

#include "bind_int.h"

const char *sl_bind_time_attr_problem(sl_binder *b, const char *fn,
                                      const sl_bcolumn *col,
                                      const char *table) {
  const char *where = table ? sl_arena_printf(b->a, "column '%s' of table '%s'",
                                              col->name, table)
                            : sl_arena_printf(b->a, "column '%s'", col->name);
  const sl_type *t = col->type;
  if (t->kind == SL_TYPE_TIMESTAMP || t->kind == SL_TYPE_TIMESTAMP_LTZ)
    return sl_arena_printf(
        b->a,
        "window function %s needs a time attribute: %s is %s without a "
        "WATERMARK (declare WATERMARK FOR %s AS ... or use PROCTIME())",
        fn, where, sl_tp_msg(b->a, t), col->name);
  return sl_arena_printf(b->a,
                         "window function %s needs a time attribute: %s is "
                         "%s, not a TIMESTAMP with a WATERMARK (or PROCTIME())",
                         fn, where, sl_tp_msg(b->a, t));
}

/* A window size/slide/gap: a positive constant day-time INTERVAL. */
static int window_interval(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                           const char *fn, const char *what, int64_t *ms,
                           bool allow_zero) {
  sl_bexpr *x;
  int rc = sl_bind_expr(b, cx, e, &x);
  if (rc)
    return rc;
  if (!sl_bexpr_interval_ms(x, ms) || (*ms <= 0 && !(allow_zero && *ms == 0)))
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s %s must be a positive INTERVAL literal such as "
                         "INTERVAL '10' SECOND",
                         fn, what);
  return SL_OK;
}

static int check_multiple(sl_binder *b, sl_span span, sl_bwindow *w) {
  if (w->kind == SL_WINDOW_HOP && w->size_ms % w->slide_ms != 0)
    return sl_bind_error(b, span, SL_EBIND,
                         "HOP size (%lld ms) must be an integral multiple of "
                         "the slide (%lld ms)",
                         (long long)w->size_ms, (long long)w->slide_ms);
  if (w->kind == SL_WINDOW_CUMULATE && w->size_ms % w->slide_ms != 0)
    return sl_bind_error(b, span, SL_EBIND,
                         "CUMULATE size (%lld ms) must be an integral multiple "
                         "of the step (%lld ms)",
                         (long long)w->size_ms, (long long)w->slide_ms);
  return SL_OK;
}

/* ---- window TVFs ------------------------------------------------------------
 */

/* Positional parameter names per window kind (Flink's named arguments). */
static const char *const tvf_params[4][5] = {
    [SL_WINDOW_TUMBLE] = {"DATA", "TIMECOL", "SIZE", "OFFSET", NULL},
    [SL_WINDOW_HOP] = {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
    [SL_WINDOW_CUMULATE] = {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
    [SL_WINDOW_SESSION] = {"DATA", "TIMECOL", "GAP", NULL, NULL},
};

/* The arguments of a window TVF call in their slots (Flink's positional
 * or named arguments), checked for kind: TABLE, DESCRIPTOR, expressions. */
static int tvf_slots(sl_binder *b, const sl_table_ref *t, const sl_function *fn,
                     const sl_tvf_arg **slot) {
  sl_window_kind kind = fn->window;
  int nargs = SL_LIST_LEN(t->u.tvf.args);
  for (int i = 0; i < nargs; i++) {
    const sl_tvf_arg *a = SL_LIST_AT(t->u.tvf.args, i);
    int k = i;
    if (a->name) {
      k = -1;
      for (int j = 0; j < 5; j++)
        if (tvf_params[kind][j] &&
            strcasecmp(tvf_params[kind][j], a->name) == 0)
          k = j;
      if (k < 0)
        return sl_bind_error(b, a->span, SL_EBIND,
                             "%s has no parameter named %s", fn->name, a->name);
    }
    if (k >= 5 || !tvf_params[kind][k])
      return sl_bind_error(b, a->span, SL_EBIND,
                           "too many arguments to %s (%s)", fn->name,
                           fn->signature);
    slot[k] = a;
  }
  int needed = kind == SL_WINDOW_TUMBLE || kind == SL_WINDOW_SESSION ? 3 : 4;
  for (int k = 0; k < needed; k++)
    if (!slot[k])
      return sl_bind_error(b, t->span, SL_EBIND,
                           "%s needs its %s argument (%s)", fn->name,
                           tvf_params[kind][k], fn->signature);
  if (!slot[0]->table_arg)
    return sl_bind_error(b, slot[0]->span, SL_EBIND,
                         "the first argument of %s must be TABLE name",
                         fn->name);
  if (!slot[1]->descriptor || SL_LIST_LEN(slot[1]->descriptor) != 1)
    return sl_bind_error(b, slot[1]->span, SL_EBIND,
                         "the time argument of %s must be DESCRIPTOR(column)",
                         fn->name);
  /* The rest (size, slide, gap, offset) are expressions, not TABLE or
   * DESCRIPTOR arguments. */
  for (int k = 2; k < 5; k++)
    if (slot[k] && !slot[k]->expr)
      return sl_bind_error(b, slot[k]->span, SL_EBIND,
                           "the %s argument of %s must be an expression such "
                           "as INTERVAL '10' SECOND (%s)",
                           tvf_params[kind][k], fn->name, fn->signature);
  return SL_OK;
}

/* DESCRIPTOR(ts): a time attribute column of the input. */
static int tvf_time_column(sl_binder *b, const sl_function *fn,
                           const sl_tvf_arg *arg, sl_scope *is,
                           const sl_bfrom *input, const char *in_name,
                           sl_bwindow *w) {
  const sl_qname *tc = SL_LIST_AT(arg->descriptor, 0);
  sl_bexpr *col;
  int rc = sl_bind_column_ref(b, is, tc, &col, NULL);
  if (rc)
    return rc;
  if (col->kind != SL_BEXPR_COLUMN)
    return sl_bind_error(b, tc->span, SL_EBIND,
                         "DESCRIPTOR of %s must name a top-level column",
                         fn->name);
  if (col->type->time_attr == SL_TIME_NONE)
    return sl_bind_error(b, tc->span, SL_EBIND, "%s",
                         sl_bind_time_attr_problem(
                             b, fn->name, &input->cols[col->index], in_name));
  w->time_column = col->index;
  w->time_attr = col->type->time_attr;
  return SL_OK;
}

/* The window's size, slide or step, gap and offset. */
static int tvf_sizes(sl_binder *b, sl_ectx *cx, const sl_table_ref *t,
                     const sl_function *fn, const sl_tvf_arg *const *slot,
                     sl_bwindow *w) {
  sl_window_kind kind = fn->window;
  int rc = SL_OK;
  switch (kind) {
  case SL_WINDOW_TUMBLE:
    rc = window_interval(b, cx, slot[2]->expr, fn->name, "size", &w->size_ms,
                         false);
    w->slide_ms = w->size_ms;
    break;
  case SL_WINDOW_HOP:
  case SL_WINDOW_CUMULATE:
    rc = window_interval(b, cx, slot[2]->expr, fn->name,
                         kind == SL_WINDOW_HOP ? "slide" : "step", &w->slide_ms,
                         false);
    if (!rc)
      rc = window_interval(b, cx, slot[3]->expr, fn->name, "size", &w->size_ms,
                           false);
    if (!rc)
      rc = check_multiple(b, t->span, w);
    break;
  case SL_WINDOW_SESSION:
    rc = window_interval(b, cx, slot[2]->expr, fn->name, "gap", &w->gap_ms,
                         false);
    break;
  }
  int off = kind == SL_WINDOW_TUMBLE ? 3 : 4;
  if (!rc && kind != SL_WINDOW_SESSION && slot[off]) {
    sl_bexpr *x;
    rc = sl_bind_expr(b, cx, slot[off]->expr, &x);
    if (!rc && !sl_bexpr_interval_ms(x, &w->offset_ms))
      rc = sl_bind_error(b, slot[off]->span, SL_EBIND,
                         "%s offset must be an INTERVAL literal", fn->name);
  }
  return rc;
}

/* SESSION's PARTITION BY columns. */
static int tvf_partition(sl_binder *b, sl_ectx *cx, const sl_function *fn,
                         const sl_tvf_arg *arg, sl_bwindow *w) {
  sl_window_kind kind = fn->window;
  int np = SL_LIST_LEN(arg->partition_by);
  if (np > 0 && kind != SL_WINDOW_SESSION)
    return sl_bind_error(b, arg->span, SL_EBIND,
                         "PARTITION BY is only allowed for SESSION windows");
  w->npartition = np;
  w->partition_columns = SL_ANEW_N(b->a, int, np + 1);
  for (int i = 0; i < np; i++) {
    const sl_expr *pe = SL_LIST_AT(arg->partition_by, i);
    sl_bexpr *x;
    int rc = sl_bind_expr(b, cx, pe, &x);
    if (rc)
      return rc;
    if (x->kind != SL_BEXPR_COLUMN)
      return sl_bind_error(b, pe->span, SL_EBIND,
                           "SESSION PARTITION BY must list columns");
    w->partition_columns[i] = x->index;
  }
  return SL_OK;
}

/* Output: the input's columns (the time column is no longer a time
 * attribute, as in Flink), then window_start, window_end, window_time. */
static void tvf_columns(sl_binder *b, const sl_table_ref *t,
                        const sl_bfrom *input, const sl_bwindow *w,
                        sl_bfrom *f) {
  f->ncols = input->ncols + 3;
  f->cols = SL_ANEW_N(b->a, sl_bcolumn, f->ncols + 1);
  const char *qual = t->alias ? t->alias : input->alias;
  for (int i = 0; i < input->ncols; i++) {
    f->cols[i] = input->cols[i];
    f->cols[i].qualifier = qual;
    if (i == w->time_column)
      f->cols[i].type = sl_tp_plain(b->a, input->cols[i].type);
  }
  static const char *const names[3] = {"window_start", "window_end",
                                       "window_time"};
  for (int k = 0; k < 3; k++) {
    sl_type *ty = sl_type_timestamp(b->a, 3);
    ty->not_null = true;
    if (k == 2) {
      if (w->time_attr == SL_TIME_PROCTIME)
        ty->kind = SL_TYPE_TIMESTAMP_LTZ;
      ty->time_attr = w->time_attr;
    }
    sl_bcolumn *c = &f->cols[input->ncols + k];
    c->name = names[k];
    c->type = ty;
    c->qualifier = qual;
    c->window_col = k + 1;
    c->span = t->span;
  }
}

int sl_bind_window_tvf(sl_binder *b, const sl_table_ref *t, sl_scope *outer,
                       sl_bfrom **out) {
  const sl_qname *qn = &t->u.tvf.func;
  const char *name = qn->nparts ? qn->parts[qn->nparts - 1] : "";
  const sl_function *fn = sl_function_find(name);
  if (!fn || fn->kind != SL_FN_WINDOW_TVF) {
    const char *tvfs[] = {"TUMBLE", "HOP", "CUMULATE", "SESSION"};
    const char *sug = sl_closest_name(name, tvfs, 4);
    return sl_bind_error(b, qn->span.length ? qn->span : t->span, SL_EBIND,
                         "unknown table function '%s'%s%s%s; Sluice has "
                         "TUMBLE, HOP, CUMULATE and SESSION",
                         name, sug ? " (did you mean '" : "", sug ? sug : "",
                         sug ? "'?)" : "");
  }
  sl_window_kind kind = fn->window;
  const sl_tvf_arg *slot[5] = {0};
  int rc = tvf_slots(b, t, fn, slot);
  if (rc)
    return rc;

  /* The input table. */
  sl_table_ref in = {0};
  in.kind = SL_TREF_NAME;
  in.span = slot[0]->span;
  in.u.name.name = *slot[0]->table_arg;
  sl_bfrom *input;
  rc = sl_bind_from(b, &in, outer, &input);
  if (rc)
    return rc;
  const char *in_name =
      slot[0]->table_arg->parts[slot[0]->table_arg->nparts - 1];
  sl_scope is = {NULL, input->ncols, input->cols, NULL, in_name};

  sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
  f->kind = SL_BFROM_WINDOW_TVF;
  f->span = t->span;
  f->alias = t->alias;
  f->u.tvf.input = input;
  sl_bwindow *w = &f->u.tvf.window;
  w->kind = kind;
  w->span = t->span;

  rc = tvf_time_column(b, fn, slot[1], &is, input, in_name, w);
  if (rc)
    return rc;
  sl_ectx cx = {&is, fn->name, NULL, false, false, NULL};
  rc = tvf_sizes(b, &cx, t, fn, slot, w);
  if (rc)
    return rc;
  rc = tvf_partition(b, &cx, fn, slot[0], w);
  if (rc)
    return rc;
  tvf_columns(b, t, input, w, f);
  *out = f;
  return SL_OK;
}

/* ---- legacy group windows --------------------------------------------------
 */

int sl_bind_group_window(sl_binder *b, sl_ectx *cx, const sl_expr *call,
                         const sl_function *fn, sl_bwindow **out) {
  sl_window_kind kind = fn->window;
  if (kind == SL_WINDOW_CUMULATE)
    return sl_bind_error(
        b, call->span, SL_EBIND,
        "CUMULATE is only available as a window TVF: FROM "
        "TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size))");
  int want = kind == SL_WINDOW_HOP ? 3 : 2;
  int n = SL_LIST_LEN(call->u.call.args);
  if (n != want)
    return sl_bind_error(b, call->span, SL_EBIND,
                         "wrong number of arguments to GROUP BY %s: got %d, "
                         "expected %d (%s)",
                         fn->name, n, want,
                         kind == SL_WINDOW_HOP      ? "HOP(ts, slide, size)"
                         : kind == SL_WINDOW_TUMBLE ? "TUMBLE(ts, size)"
                                                    : "SESSION(ts, gap)");
  const sl_expr *ts = SL_LIST_AT(call->u.call.args, 0);
  sl_bexpr *col;
  int rc = sl_bind_expr(b, cx, ts, &col);
  if (rc)
    return rc;
  if (col->kind != SL_BEXPR_COLUMN || col->depth != 0)
    return sl_bind_error(b, ts->span, SL_EBIND,
                         "window function %s needs a time attribute column, "
                         "got %s",
                         fn->name, sl_bind_expr_sql(b, ts));
  if (col->type->time_attr == SL_TIME_NONE) {
    const sl_bcolumn *c = &cx->scope->cols[col->index];
    return sl_bind_error(
        b, ts->span, SL_EBIND, "%s",
        sl_bind_time_attr_problem(b, fn->name, c, c->qualifier));
  }
  sl_bwindow *w = SL_ANEW(b->a, sl_bwindow);
  w->kind = kind;
  w->time_column = col->index;
  w->time_attr = col->type->time_attr;
  w->span = call->span;
  const sl_expr *a1 = SL_LIST_AT(call->u.call.args, 1);
  switch (kind) {
  case SL_WINDOW_TUMBLE:
    rc = window_interval(b, cx, a1, fn->name, "size", &w->size_ms, false);
    w->slide_ms = w->size_ms;
    break;
  case SL_WINDOW_HOP:
    rc = window_interval(b, cx, a1, fn->name, "slide", &w->slide_ms, false);
    if (!rc)
      rc = window_interval(b, cx, SL_LIST_AT(call->u.call.args, 2), fn->name,
                           "size", &w->size_ms, false);
    if (!rc)
      rc = check_multiple(b, call->span, w);
    break;
  default:
    rc = window_interval(b, cx, a1, fn->name, "gap", &w->gap_ms, false);
    break;
  }
  if (rc)
    return rc;
  *out = w;
  return SL_OK;
}

/* Does TUMBLE_START(ts, size) (already bound) name the group window? */
static bool aux_matches(const sl_bexpr *e, const sl_bwindow *w) {
  if (e->fn->window != w->kind || e->nargs < 2)
    return false;
  const sl_bexpr *ts = e->args[0];
  if (ts->kind != SL_BEXPR_COLUMN || ts->depth != 0 ||
      ts->index != w->time_column)
    return false;
  int64_t a = 0, c = 0;
  if (!sl_bexpr_interval_ms(e->args[1], &a))
    return false;
  switch (w->kind) {
  case SL_WINDOW_HOP:
    return e->nargs == 3 && a == w->slide_ms &&
           sl_bexpr_interval_ms(e->args[2], &c) && c == w->size_ms;
  case SL_WINDOW_SESSION:
    return a == w->gap_ms;
  default:
    return a == w->size_ms;
  }
}

static int window_prop(sl_binder *b, sl_bselect *sel, const sl_bexpr *e,
                       sl_bexpr **out) {
  const sl_bwindow *w = sel->group_window;
  const char *wn = sl_window_kind_name(e->fn->window);
  if (!w)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s needs GROUP BY %s(...) with the same arguments",
                         e->fn->name, wn);
  if (!aux_matches(e, w))
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s(...) must have the same arguments as the GROUP "
                         "BY %s(...) window",
                         e->fn->name, sl_window_kind_name(w->kind));
  sl_type *t = sl_type_timestamp(b->a, 3);
  t->not_null = true;
  if (e->fn->prop == SL_WPROP_ROWTIME) {
    if (w->time_attr != SL_TIME_ROWTIME)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "%s needs an event-time window; this window is on "
                           "processing time (use %s_PROCTIME)",
                           e->fn->name, wn);
    t->time_attr = SL_TIME_ROWTIME;
  } else if (e->fn->prop == SL_WPROP_PROCTIME) {
    if (w->time_attr != SL_TIME_PROCTIME)
      return sl_bind_error(b, e->span, SL_EBIND,
                           "%s needs a processing-time window; this window is "
                           "on event time (use %s_ROWTIME)",
                           e->fn->name, wn);
    t->kind = SL_TYPE_TIMESTAMP_LTZ;
    t->time_attr = SL_TIME_PROCTIME;
  }
  sl_bexpr *p = sl_bexpr_new(b, SL_BEXPR_WINDOW_PROP, t, e->span);
  p->fn = e->fn;
  p->prop = e->fn->prop;
  p->name = e->fn->name;
  *out = p;
  return SL_OK;
}

/* ---- the post-aggregation rewrite ---------------------------------------- */

int sl_bind_post_agg(sl_binder *b, sl_bselect *sel, sl_bexpr *e,
                     sl_bexpr **out) {
  for (int i = 0; i < sel->ngroups; i++) {
    if (!sl_bexpr_equal(e, sel->groups[i]))
      continue;
    /* After a GROUP BY, a grouped time attribute is a plain timestamp,
     * except window_time in a window aggregate. */
    const sl_bexpr *g = sel->groups[i];
    bool keep = sel->window_aggregate && g->kind == SL_BEXPR_COLUMN &&
                g->depth == 0 && sel->from &&
                sel->from->cols[g->index].window_col == 3;
    sl_type *t =
        keep ? sl_type_copy(b->a, g->type) : sl_tp_plain(b->a, g->type);
    sl_bexpr *r = sl_bexpr_new(b, SL_BEXPR_GROUP_REF, t, e->span);
    r->index = i;
    sl_strbuf sb = SL_STRBUF_INIT;
    sl_bexpr_format(&sb, g);
    r->name = sl_arena_strdup(b->a, sl_strbuf_cstr(&sb));
    sl_strbuf_free(&sb);
    *out = r;
    return SL_OK;
  }
  switch (e->kind) {
  case SL_BEXPR_LITERAL:
  case SL_BEXPR_AGG_REF:
  case SL_BEXPR_WINDOW_REF:
  case SL_BEXPR_WINDOW_PROP:
  case SL_BEXPR_GROUP_REF:
    *out = e;
    return SL_OK;
  case SL_BEXPR_COLUMN:
  case SL_BEXPR_FIELD: {
    const sl_bexpr *base = e;
    while (base->kind == SL_BEXPR_FIELD)
      base = base->args[0];
    if (base->kind == SL_BEXPR_COLUMN && base->depth > 0) {
      *out = e; /* a correlated reference to an outer block */
      return SL_OK;
    }
    const char *text = sl_bind_span_text(b, e->span);
    return sl_bind_error(b, e->span, SL_EBIND,
                         "expression '%s' must appear in GROUP BY or be "
                         "inside an aggregate function",
                         text ? text : e->name);
  }
  case SL_BEXPR_CALL:
    if (e->fn && e->fn->kind == SL_FN_GROUP_AUX)
      return window_prop(b, sel, e, out);
    break;
  default:
    break;
  }
  sl_bexpr *c = sl_bexpr_new(b, e->kind, e->type, e->span);
  *c = *e;
  if (e->nargs > 0) {
    c->args = SL_ANEW_N(b->a, sl_bexpr *, e->nargs);
    for (int i = 0; i < e->nargs; i++) {
      int rc = sl_bind_post_agg(b, sel, e->args[i], &c->args[i]);
      if (rc)
        return rc;
    }
  }
  *out = c;
  return SL_OK;
}

/* ---- window functions (OVER) ------------------------------------------------
 */

int sl_bind_over(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                 const sl_function *fn, sl_bexpr **out) {
  if (!cx->allow_window || !cx->block)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "window function %s(...) OVER is not allowed in %s; "
                         "compute it in a subquery's SELECT list",
                         fn->name, cx->clause ? cx->clause : "this context");
  if (fn->kind != SL_FN_WINDOW && fn->kind != SL_FN_AGGREGATE)
    return sl_bind_error(b, e->span, SL_EBIND,
                         "%s cannot be used with OVER; only ROW_NUMBER, RANK, "
                         "DENSE_RANK and aggregate functions can",
                         fn->name);
  sl_bwinfunc wf = {0};
  wf.fn = fn;
  wf.span = e->span;
  wf.star = e->u.call.star;
  wf.distinct = e->u.call.distinct;
  int nargs = SL_LIST_LEN(e->u.call.args);
  if (fn->kind == SL_FN_AGGREGATE && !wf.star &&
      (nargs < fn->min_args || nargs > fn->max_args))
    return sl_bind_error(b, e->span, SL_EBIND,
                         "wrong number of arguments to %s: got %d (%s)",
                         fn->name, nargs, fn->signature);
  if (fn->kind == SL_FN_WINDOW && nargs > 0)
    return sl_bind_error(b, e->span, SL_EBIND, "%s takes no arguments",
                         fn->name);
  sl_ectx sub = *cx;
  sub.allow_window = false;
  sub.clause = "OVER";
  wf.nargs = nargs;
  wf.args = SL_ANEW_N(b->a, sl_bexpr *, nargs + 1);
  for (int i = 0; i < nargs; i++) {
    int rc = sl_bind_expr(b, &sub, SL_LIST_AT(e->u.call.args, i), &wf.args[i]);
    if (rc)
      return rc;
  }
  const sl_over *ov = e->u.call.over;
  wf.npartition = SL_LIST_LEN(ov->partition_by);
  wf.partition = SL_ANEW_N(b->a, sl_bexpr *, wf.npartition + 1);
  for (int i = 0; i < wf.npartition; i++) {
    int rc = sl_bind_expr(b, &sub, SL_LIST_AT(ov->partition_by, i),
                          &wf.partition[i]);
    if (rc)
      return rc;
  }
  wf.norder = SL_LIST_LEN(ov->order_by);
  wf.order = SL_ANEW_N(b->a, sl_bexpr *, wf.norder + 1);
  wf.order_desc = SL_ANEW_N(b->a, bool, wf.norder + 1);
  wf.order_nulls = SL_ANEW_N(b->a, int, wf.norder + 1);
  for (int i = 0; i < wf.norder; i++) {
    const sl_order_item *it = SL_LIST_AT(ov->order_by, i);
    int rc = sl_bind_expr(b, &sub, it->expr, &wf.order[i]);
    if (rc)
      return rc;
    wf.order_desc[i] = it->desc;
    wf.order_nulls[i] = it->nulls;
  }
  if (fn->kind == SL_FN_WINDOW && wf.norder == 0)
    return sl_bind_error(b, ov->span.length ? ov->span : e->span, SL_EBIND,
                         "%s needs ORDER BY in its OVER clause", fn->name);
  const sl_type **types = SL_ANEW_N(b->a, const sl_type *, nargs + 1);
  for (int i = 0; i < nargs; i++)
    types[i] = wf.args[i]->type;
  sl_fn_check chk = {-1, NULL};
  wf.type = fn->return_type(b->a, wf.star ? 0 : nargs, types, &chk);
  if (!wf.type)
    return sl_bind_error(b, e->span, SL_EBIND, "%s %s", fn->name,
                         chk.message ? chk.message : "rejects its arguments");
  sl_block *blk = cx->block;
  int idx = blk->nwindows;
  SL_BIND_PUSH(b->a, blk->windows, blk->nwindows, blk->windows_cap, wf);
  sl_bexpr *r = sl_bexpr_new(b, SL_BEXPR_WINDOW_REF,
                             sl_type_copy(b->a, wf.type), e->span);
  r->index = idx;
  r->fn = fn;
  r->name = sl_bind_expr_sql(b, e);
  *out = r;
  return SL_OK;
}
