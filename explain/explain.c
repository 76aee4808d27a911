/* explain.c - EXPLAIN of the bound tree (explain.h).
 *
 * The bound statement is first turned into a small tree of display nodes
 * (a name, a one-line detail, key/value attributes, children), which is then
 * printed either as indented text, one node per line, or as JSON.  Building
 * the display tree once keeps the TEXT and JSON forms identical in content.
 */
#include "sluice/explain/explain.h"

#include <stdio.h>
#include <string.h>

#include "sluice/catalog/functions.h"

#include "explain_tree.h"

/* ---- building -------------------------------------------------------------
 */

static const char *schema(sl_arena *a, int n, const sl_bcolumn *cols,
                          sl_bexpr *const *exprs) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_appendc(&b, '[');
  for (int i = 0; i < n; i++) {
    if (i)
      sl_strbuf_append(&b, ", ");
    sl_strbuf_printf(&b, "%s ", cols[i].name);
    sl_type_format(&b, cols[i].type);
    if (exprs) {
      const sl_bexpr *e = exprs[i];
      bool plain = false;
      if ((e->kind == SL_BEXPR_COLUMN || e->kind == SL_BEXPR_GROUP_REF) &&
          e->name) {
        /* "bidder" or "B.bidder" selected as bidder */
        size_t ln = strlen(e->name), lc = strlen(cols[i].name);
        plain = strcmp(e->name, cols[i].name) == 0 ||
                (ln > lc && e->name[ln - lc - 1] == '.' &&
                 strcmp(e->name + ln - lc, cols[i].name) == 0);
      }
      if (!plain) {
        sl_strbuf_append(&b, " := ");
        sl_bexpr_format(&b, e);
      }
    }
  }
  sl_strbuf_appendc(&b, ']');
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

static const char *window_str(sl_arena *a, const sl_bwindow *w,
                              const sl_bcolumn *input_cols) {
  const char *tc = input_cols ? input_cols[w->time_column].name : "?";
  const char *k = sl_window_kind_name(w->kind);
  const char *off = w->offset_ms
                        ? sl_arena_printf(a, ", offset=[%s]",
                                          sl_explain_duration(a, w->offset_ms))
                        : "";
  switch (w->kind) {
  case SL_WINDOW_TUMBLE:
    return sl_arena_printf(a, "%s(time_col=[%s], size=[%s]%s)", k, tc,
                           sl_explain_duration(a, w->size_ms), off);
  case SL_WINDOW_HOP:
    return sl_arena_printf(a, "%s(time_col=[%s], size=[%s], slide=[%s]%s)", k,
                           tc, sl_explain_duration(a, w->size_ms),
                           sl_explain_duration(a, w->slide_ms), off);
  case SL_WINDOW_CUMULATE:
    return sl_arena_printf(a, "%s(time_col=[%s], max_size=[%s], step=[%s]%s)",
                           k, tc, sl_explain_duration(a, w->size_ms),
                           sl_explain_duration(a, w->slide_ms), off);
  default: {
    const char *part = "";
    for (int i = 0; i < w->npartition; i++)
      part = sl_arena_printf(a, "%s%s%s", part, i ? ", " : "",
                             input_cols[w->partition_columns[i]].name);
    return sl_arena_printf(a, "%s(time_col=[%s]%s%s%s, gap=[%s])", k, tc,
                           w->npartition ? ", partition_keys=[" : "", part,
                           w->npartition ? "]" : "",
                           sl_explain_duration(a, w->gap_ms));
  }
  }
}

static xnode *build_query(sl_arena *a, const sl_bquery *q);

static const char *join_name(sl_join_kind k) {
  switch (k) {
  case SL_JOIN_LEFT:
    return "LEFT";
  case SL_JOIN_RIGHT:
    return "RIGHT";
  case SL_JOIN_FULL:
    return "FULL";
  case SL_JOIN_CROSS:
    return "CROSS";
  default:
    return "INNER";
  }
}

static xnode *build_from(sl_arena *a, const sl_bfrom *f) {
  xnode *n;
  switch (f->kind) {
  case SL_BFROM_SCAN: {
    const sl_table_def *t = f->u.scan.table;
    n = sl_xnode(a, "Scan");
    const char *d = t->name;
    if (f->alias && strcmp(f->alias, t->name) != 0)
      d = sl_arena_printf(a, "%s AS %s", d, f->alias);
    sl_xnode_attr(a, n, "table", t->name);
    if (f->alias)
      sl_xnode_attr(a, n, "alias", f->alias);
    const char *conn = sl_table_def_option(t, "connector");
    if (!conn)
      conn = sl_table_def_option(t, "connector.type");
    const char *extra = "";
    if (conn) {
      sl_xnode_attr(a, n, "connector", conn);
      extra = sl_arena_printf(a, "connector=%s", conn);
    }
    const char *computed = "";
    for (int i = 0; i < f->ncols; i++)
      if (f->u.scan.computed && f->u.scan.computed[i])
        computed = sl_arena_printf(a, "%s%s%s", computed, *computed ? ", " : "",
                                   f->cols[i].name);
    if (*computed) {
      sl_xnode_attr(a, n, "computed", computed);
      extra = sl_arena_printf(a, "%s%scomputed=[%s]", extra, *extra ? ", " : "",
                              computed);
    }
    if (f->u.scan.rowtime_column >= 0) {
      const char *rt = f->cols[f->u.scan.rowtime_column].name;
      const char *wm = sl_explain_expr(a, f->u.scan.watermark);
      sl_xnode_attr(a, n, "rowtime", rt);
      sl_xnode_attr(a, n, "watermark", wm);
      extra = sl_arena_printf(a, "%s%srowtime=%s, watermark=%s", extra,
                              *extra ? ", " : "", rt, wm);
    }
    if (f->u.scan.system_time) {
      const char *st = sl_explain_expr(a, f->u.scan.system_time);
      sl_xnode_attr(a, n, "system_time", st);
      extra = sl_arena_printf(a, "%s%sFOR SYSTEM_TIME AS OF %s", extra,
                              *extra ? ", " : "", st);
    }
    n->detail = *extra ? sl_arena_printf(a, "%s [%s]", d, extra) : d;
    return n;
  }
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY: {
    bool view = f->kind == SL_BFROM_VIEW;
    n = sl_xnode(a, view ? "View" : "Subquery");
    const char *d = f->u.sub.name ? f->u.sub.name : "";
    if (f->u.sub.name)
      sl_xnode_attr(a, n, "name", f->u.sub.name);
    if (f->alias && (!f->u.sub.name || strcmp(f->alias, f->u.sub.name) != 0)) {
      sl_xnode_attr(a, n, "alias", f->alias);
      d = *d ? sl_arena_printf(a, "%s AS %s", d, f->alias)
             : sl_arena_printf(a, "AS %s", f->alias);
    }
    n->detail = d;
    sl_xnode_kid(a, n, build_query(a, f->u.sub.query));
    return n;
  }
  case SL_BFROM_WINDOW_TVF: {
    const sl_bwindow *w = &f->u.tvf.window;
    n = sl_xnode(a, "WindowTVF");
    const char *ws = window_str(a, w, f->u.tvf.input->cols);
    const sl_bcolumn *wt = &f->cols[f->ncols - 1];
    sl_strbuf tb = SL_STRBUF_INIT;
    sl_type_format(&tb, wt->type);
    const char *wtt = sl_arena_strdup(a, sl_strbuf_cstr(&tb));
    sl_strbuf_free(&tb);
    sl_xnode_attr(a, n, "window", ws);
    sl_xnode_attr(a, n, "window_time", wtt);
    n->detail = sl_arena_printf(a, "%s [window_time %s]", ws, wtt);
    if (f->alias) {
      sl_xnode_attr(a, n, "alias", f->alias);
      n->detail = sl_arena_printf(a, "%s AS %s", n->detail, f->alias);
    }
    sl_xnode_kid(a, n, build_from(a, f->u.tvf.input));
    return n;
  }
  case SL_BFROM_JOIN: {
    n = sl_xnode(a, f->u.join.lookup ? "LookupJoin" : "Join");
    const char *k = join_name(f->u.join.kind);
    sl_xnode_attr(a, n, "kind", k);
    if (f->u.join.on) {
      const char *on = sl_explain_expr(a, f->u.join.on);
      sl_xnode_attr(a, n, "on", on);
      n->detail = sl_arena_printf(a, "%s ON %s", k, on);
    } else {
      n->detail = k;
    }
    sl_xnode_kid(a, n, build_from(a, f->u.join.left));
    sl_xnode_kid(a, n, build_from(a, f->u.join.right));
    return n;
  }
  }
  return sl_xnode(a, "?");
}

static const char *aggs_str(sl_arena *a, const sl_bselect *s) {
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < s->naggs; i++) {
    const sl_bagg *g = &s->aggs[i];
    if (i)
      sl_strbuf_append(&b, ", ");
    sl_strbuf_printf(&b, "%s(%s", g->fn->name, g->distinct ? "DISTINCT " : "");
    if (g->star)
      sl_strbuf_appendc(&b, '*');
    for (int k = 0; k < g->nargs; k++) {
      if (k)
        sl_strbuf_append(&b, ", ");
      sl_bexpr_format(&b, g->args[k]);
    }
    sl_strbuf_appendc(&b, ')');
    if (g->filter) {
      sl_strbuf_append(&b, " FILTER (WHERE ");
      sl_bexpr_format(&b, g->filter);
      sl_strbuf_appendc(&b, ')');
    }
    sl_strbuf_append(&b, " ");
    sl_type_format(&b, g->type);
    sl_strbuf_printf(&b, " {%s}", sl_agg_state_name(g->state));
  }
  const char *r = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return r;
}

static const char *winfunc_str(sl_arena *a, const sl_bwinfunc *w) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s(%s", w->fn->name, w->distinct ? "DISTINCT " : "");
  if (w->star)
    sl_strbuf_appendc(&b, '*');
  for (int k = 0; k < w->nargs; k++) {
    if (k)
      sl_strbuf_append(&b, ", ");
    sl_bexpr_format(&b, w->args[k]);
  }
  sl_strbuf_append(&b, ") OVER (");
  if (w->npartition) {
    sl_strbuf_append(&b, "PARTITION BY ");
    for (int k = 0; k < w->npartition; k++) {
      if (k)
        sl_strbuf_append(&b, ", ");
      sl_bexpr_format(&b, w->partition[k]);
    }
  }
  if (w->norder) {
    sl_strbuf_append(&b, w->npartition ? " ORDER BY " : "ORDER BY ");
    for (int k = 0; k < w->norder; k++) {
      if (k)
        sl_strbuf_append(&b, ", ");
      sl_bexpr_format(&b, w->order[k]);
      if (w->order_desc[k])
        sl_strbuf_append(&b, " DESC");
    }
  }
  sl_strbuf_append(&b, ") ");
  sl_type_format(&b, w->type);
  const char *r = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return r;
}

/* A SELECT block, top (output) first: Project, Window, Having, Aggregate,
 * Filter, then the FROM tree. */
static xnode *build_select(sl_arena *a, const sl_bquery *q) {
  const sl_bselect *s = q->select;
  xnode *top = sl_xnode(a, "Project");
  top->detail = schema(a, q->ncols, q->cols, s->exprs);
  sl_xnode_attr(a, top, "columns", top->detail);
  xnode *cur = top;
  if (s->nwindows) {
    xnode *w = sl_xnode(a, "Window");
    const char *list = "";
    for (int i = 0; i < s->nwindows; i++)
      list = sl_arena_printf(a, "%s%s%s", list, i ? ", " : "",
                             winfunc_str(a, &s->windows[i]));
    w->detail = sl_arena_printf(a, "[%s]", list);
    sl_xnode_attr(a, w, "functions", w->detail);
    sl_xnode_kid(a, cur, w);
    cur = w;
  }
  if (s->having) {
    xnode *h = sl_xnode(a, "Having");
    h->detail = sl_explain_expr(a, s->having);
    sl_xnode_attr(a, h, "condition", h->detail);
    sl_xnode_kid(a, cur, h);
    cur = h;
  }
  if (s->aggregate) {
    bool windowed = s->group_window || s->window_aggregate;
    xnode *g = sl_xnode(a, windowed ? "WindowAggregate" : "Aggregate");
    const char *keys = "";
    for (int i = 0; i < s->ngroups; i++)
      keys = sl_arena_printf(a, "%s%s%s", keys, i ? ", " : "",
                             sl_explain_expr(a, s->groups[i]));
    const char *d = sl_arena_printf(a, "groups=[%s]", keys);
    sl_xnode_attr(a, g, "groups", keys);
    if (s->group_window) {
      const char *ws =
          window_str(a, s->group_window, s->from ? s->from->cols : NULL);
      sl_xnode_attr(a, g, "window", ws);
      d = sl_arena_printf(a, "%s, window=[%s]", d, ws);
    }
    const char *ag = aggs_str(a, s);
    sl_xnode_attr(a, g, "aggregates", ag);
    g->detail = sl_arena_printf(a, "%s, aggs=[%s]", d, ag);
    sl_xnode_kid(a, cur, g);
    cur = g;
  }
  if (s->where) {
    xnode *f = sl_xnode(a, "Filter");
    f->detail = sl_explain_expr(a, s->where);
    sl_xnode_attr(a, f, "condition", f->detail);
    sl_xnode_kid(a, cur, f);
    cur = f;
  }
  if (s->from)
    sl_xnode_kid(a, cur, build_from(a, s->from));
  if (s->distinct) {
    xnode *d = sl_xnode(a, "Distinct");
    sl_xnode_kid(a, d, top);
    return d;
  }
  return top;
}

static xnode *build_query(sl_arena *a, const sl_bquery *q) {
  xnode *n;
  switch (q->kind) {
  case SL_BQUERY_SELECT:
    n = build_select(a, q);
    break;
  case SL_BQUERY_VALUES:
    n = sl_xnode(a, "Values");
    n->detail =
        sl_arena_printf(a, "%d row%s %s", q->nrows, q->nrows == 1 ? "" : "s",
                        schema(a, q->ncols, q->cols, NULL));
    sl_xnode_attr(a, n, "rows", sl_arena_printf(a, "%d", q->nrows));
    sl_xnode_attr(a, n, "columns", schema(a, q->ncols, q->cols, NULL));
    break;
  default: {
    const char *op = q->setop == SL_SETOP_UNION       ? "Union"
                     : q->setop == SL_SETOP_INTERSECT ? "Intersect"
                                                      : "Except";
    n = sl_xnode(a, op);
    n->detail = sl_arena_printf(a, "%s%s", q->all ? "ALL " : "",
                                schema(a, q->ncols, q->cols, NULL));
    sl_xnode_attr(a, n, "all", q->all ? "true" : "false");
    sl_xnode_kid(a, n, build_query(a, q->left));
    sl_xnode_kid(a, n, build_query(a, q->right));
    break;
  }
  }
  if (q->norder) {
    xnode *s = sl_xnode(a, "Sort");
    const char *keys = "";
    for (int i = 0; i < q->norder; i++)
      keys = sl_arena_printf(a, "%s%s%s%s", keys, i ? ", " : "",
                             q->cols[q->order[i].column].name,
                             q->order[i].desc ? " DESC" : "");
    s->detail = sl_arena_printf(a, "[%s]", keys);
    sl_xnode_attr(a, s, "keys", keys);
    sl_xnode_kid(a, s, n);
    n = s;
  }
  if (q->limit >= 0 || q->offset > 0) {
    xnode *l = sl_xnode(a, "Limit");
    l->detail = q->offset > 0
                    ? sl_arena_printf(a, "%lld OFFSET %lld",
                                      (long long)q->limit, (long long)q->offset)
                    : sl_arena_printf(a, "%lld", (long long)q->limit);
    sl_xnode_attr(a, l, "limit",
                  sl_arena_printf(a, "%lld", (long long)q->limit));
    sl_xnode_attr(a, l, "offset",
                  sl_arena_printf(a, "%lld", (long long)q->offset));
    sl_xnode_kid(a, l, n);
    n = l;
  }
  return n;
}

/* SQL text on one line: runs of white space become one space. */
static void squashed(sl_strbuf *b, const char *s) {
  bool space = false;
  for (; *s; s++) {
    if (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') {
      space = true;
      continue;
    }
    if (space)
      sl_strbuf_appendc(b, ' ');
    space = false;
    sl_strbuf_appendc(b, *s);
  }
}

static xnode *build_table_def(sl_arena *a, const char *what,
                              const sl_table_def *t) {
  xnode *n = sl_xnode(a, what);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s [", t->name);
  for (int i = 0; i < t->ncolumns; i++) {
    if (i)
      sl_strbuf_append(&b, ", ");
    sl_strbuf_printf(&b, "%s ", t->columns[i].name);
    sl_type_format(&b, t->columns[i].type);
    if (t->columns[i].computed_sql) {
      sl_strbuf_append(&b, " AS ");
      squashed(&b, t->columns[i].computed_sql);
    }
  }
  sl_strbuf_appendc(&b, ']');
  if (t->watermark_sql) {
    sl_strbuf_append(&b, ", watermark=");
    squashed(&b, t->watermark_sql);
  }
  for (int i = 0; i < t->noptions; i++)
    sl_strbuf_printf(&b, ", %s=%s", t->options[i].key, t->options[i].value);
  n->detail = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  sl_xnode_attr(a, n, "name", t->name);
  return n;
}

xnode *sl_explain_bound_tree(sl_arena *a, const sl_bound_stmt *s) {
  switch (s->kind) {
  case SL_STMT_QUERY:
    return build_query(a, s->query);
  case SL_STMT_INSERT: {
    xnode *n = sl_xnode(a, "Insert");
    const sl_table_def *t = s->table;
    const char *cols = "";
    for (int i = 0; i < s->query->ncols; i++)
      cols = sl_arena_printf(a, "%s%s%s", cols, i ? ", " : "",
                             t->columns[s->insert_columns[i]].name);
    n->detail = sl_arena_printf(a, "INTO %s [%s]", t->name, cols);
    sl_xnode_attr(a, n, "table", t->name);
    sl_xnode_attr(a, n, "columns", cols);
    sl_xnode_kid(a, n, build_query(a, s->query));
    return n;
  }
  case SL_STMT_CREATE_TABLE:
    if (s->new_table)
      return build_table_def(a, "CreateTable", s->new_table);
    break;
  case SL_STMT_CREATE_VIEW:
    if (s->new_table) {
      xnode *n = build_table_def(a, "CreateView", s->new_table);
      sl_xnode_kid(a, n, build_query(a, s->query));
      return n;
    }
    break;
  case SL_STMT_EXPLAIN:
    return sl_explain_bound_tree(a, s->inner);
  default:
    break;
  }
  xnode *n = sl_xnode(a, "Statement");
  n->detail = sl_stmt_kind_name(s->kind);
  if (s->table) {
    sl_xnode_attr(a, n, "object", s->table->name);
    n->detail = sl_arena_printf(a, "%s %s", n->detail, s->table->name);
  }
  return n;
}

/* ---- printing ---------------------------------------------------------------
 */

void sl_explain_bound(sl_strbuf *b, const sl_bound_stmt *s,
                      sl_explain_format fmt) {
  sl_arena a;
  sl_arena_init(&a, 0);
  xnode *root = sl_explain_bound_tree(&a, s);
  if (fmt == SL_EXPLAIN_JSON) {
    sl_strbuf_append(b, "{\"bound_tree\": ");
    sl_xnode_print_json(b, root, 0);
    sl_strbuf_append(b, "}\n");
  } else {
    sl_strbuf_append(b, "== Bound tree ==\n");
    sl_xnode_print_text(b, root, 0);
  }
  sl_arena_free(&a);
}
