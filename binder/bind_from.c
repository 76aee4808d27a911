/* bind_from.c - binding FROM clauses: connector tables (with their computed
 * columns and watermark), views (re-parsed from their stored text and bound
 * as subqueries), CTE references, derived tables, joins and lookup joins
 * (FOR SYSTEM_TIME AS OF).  Window TVFs are in bind_window.c.
 */
#include <string.h>
#include <strings.h>

#include "bind_int.h"
#include "sluice/parser/parser.h"

static const char *last_part(const sl_qname *q) {
  return q->nparts > 0 ? q->parts[q->nparts - 1] : "";
}

static const sl_cte_env *find_cte(const sl_binder *b, const char *name) {
  for (const sl_cte_env *e = b->ctes; e; e = e->parent)
    if (strcmp(e->cte->name, name) == 0)
      return e;
  for (const sl_cte_env *e = b->ctes; e; e = e->parent)
    if (strcasecmp(e->cte->name, name) == 0)
      return e;
  return NULL;
}

int sl_bind_find_table(sl_binder *b, const sl_qname *q, int code,
                       const sl_table_def **out) {
  const char *name = last_part(q);
  *out = sl_catalog_find(b->cat, name);
  if (*out)
    return SL_OK;
  /* Suggest among catalog entries and CTEs in scope. */
  int n = sl_catalog_count(b->cat);
  int m = 0;
  for (const sl_cte_env *e = b->ctes; e; e = e->parent)
    m++;
  const char **names = SL_ANEW_N(b->a, const char *, n + m + 1);
  int k = 0;
  for (int i = 0; i < n; i++)
    names[k++] = sl_catalog_at(b->cat, i)->name;
  for (const sl_cte_env *e = b->ctes; e; e = e->parent)
    names[k++] = e->cte->name;
  const char *sug = sl_closest_name(name, names, k);
  if (sug)
    return sl_bind_error(b, q->span, code,
                         "unknown table '%s' (did you mean '%s'?)", name, sug);
  return sl_bind_error(b, q->span, code, "unknown table '%s'%s", name,
                       n == 0 ? " (the catalog is empty: CREATE TABLE first)"
                              : " (SHOW TABLES lists the tables)");
}

/* Copy a subquery's output columns as the columns of a FROM item, renamed
 * by a column alias list if there is one. */
static int sub_columns(sl_binder *b, sl_bfrom *f, const sl_bquery *q,
                       const char *qualifier, const sl_list *aliases,
                       sl_span span, const char *what) {
  int na = SL_LIST_LEN(aliases);
  if (na > 0 && na != q->ncols)
    return sl_bind_error(b, span, SL_EBIND,
                         "%s has %d column name%s but its query returns %d "
                         "column%s",
                         what, na, na == 1 ? "" : "s", q->ncols,
                         q->ncols == 1 ? "" : "s");
  f->ncols = q->ncols;
  f->cols = SL_ANEW_N(b->a, sl_bcolumn, q->ncols + 1);
  for (int i = 0; i < q->ncols; i++) {
    f->cols[i] = q->cols[i];
    if (na > 0)
      f->cols[i].name = SL_LIST_AT(aliases, i);
    f->cols[i].qualifier = qualifier;
  }
  return SL_OK;
}

int sl_bind_parse_expr(sl_binder *b, const char *sql, sl_expr **out,
                       const char **text) {
  /* The grammar parses statements; a stored expression is parsed as the
   * single item of a SELECT. */
  const char *t = sl_arena_printf(b->a, "SELECT %s", sql);
  sl_stmt *st = NULL;
  sl_error perr = {0};
  int rc = sl_parse_one(b->a, t, strlen(t), 1, &st, &perr);
  if (rc || !st || st->kind != SL_STMT_QUERY || !st->u.query->body->select ||
      SL_LIST_LEN(st->u.query->body->select->items) != 1) {
    rc = sl_error_set(b->err, SL_EINTERNAL,
                      "stored expression '%s' does not parse: %s", sql,
                      perr.message ? perr.message : "not one expression");
    sl_error_clear(&perr);
    return rc;
  }
  const sl_select_item *it = SL_LIST_AT(st->u.query->body->select->items, 0);
  *out = it->expr;
  *text = t;
  return SL_OK;
}

/* Rewrite an error raised inside stored text (view body, computed column)
 * so that it names the object and points at the reference. */
static int wrap_error(sl_binder *b, sl_span at, const char *kind,
                      const char *name) {
  const char *msg = b->err && b->err->message ? b->err->message : "error";
  int code = b->err ? b->err->code : SL_EBIND;
  char *copy = sl_arena_strdup(b->a, msg);
  return sl_bind_error(b, at, code, "in %s '%s': %s", kind, name, copy);
}

int sl_bind_scan(sl_binder *b, const sl_table_def *def, const char *alias,
                 sl_span span, sl_bfrom **out) {
  sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
  f->kind = SL_BFROM_SCAN;
  f->span = span;
  f->alias = alias ? alias : def->name;
  f->ncols = def->ncolumns;
  f->cols = SL_ANEW_N(b->a, sl_bcolumn, def->ncolumns + 1);
  f->u.scan.table = def;
  f->u.scan.rowtime_column = def->rowtime_column;
  f->u.scan.computed = SL_ANEW_N(b->a, sl_bexpr *, def->ncolumns + 1);
  bool *hidden = SL_ANEW_N(b->a, bool, def->ncolumns + 1);
  for (int i = 0; i < def->ncolumns; i++) {
    f->cols[i].name = def->columns[i].name;
    f->cols[i].type = sl_type_copy(b->a, def->columns[i].type);
    f->cols[i].qualifier = f->alias;
    f->cols[i].span = span;
    hidden[i] = def->columns[i].computed_sql != NULL;
  }
  *out = f;
  const char *saved = b->text;
  int rc = SL_OK;
  /* Computed columns see the physical columns only (as in Flink). */
  sl_scope phys = {NULL, f->ncols, f->cols, hidden, def->name};
  sl_ectx cx = {&phys, "a computed column", NULL, false, false, NULL};
  for (int i = 0; !rc && i < def->ncolumns; i++) {
    if (!def->columns[i].computed_sql)
      continue;
    sl_expr *e;
    rc = sl_bind_parse_expr(b, def->columns[i].computed_sql, &e, &b->text);
    if (!rc)
      rc = sl_bind_expr(b, &cx, e, &f->u.scan.computed[i]);
  }
  if (!rc && def->watermark_sql) {
    sl_scope all = {NULL, f->ncols, f->cols, NULL, def->name};
    cx.scope = &all;
    cx.clause = "WATERMARK";
    sl_expr *e;
    rc = sl_bind_parse_expr(b, def->watermark_sql, &e, &b->text);
    if (!rc)
      rc = sl_bind_expr(b, &cx, e, &f->u.scan.watermark);
  }
  b->text = saved;
  if (rc)
    return wrap_error(b, span, "table", def->name);
  return SL_OK;
}

static int bind_view(sl_binder *b, const sl_table_def *def,
                     const sl_table_ref *t, sl_bfrom **out) {
  sl_list *stmts = NULL;
  sl_error perr = {0};
  const char *sql = def->view_sql ? def->view_sql : "";
  int rc = sl_parse(b->a, sql, strlen(sql),
                    def->view_first_line > 0 ? def->view_first_line : 1, &stmts,
                    &perr);
  if (rc || SL_LIST_LEN(stmts) != 1 ||
      ((sl_stmt *)SL_LIST_AT(stmts, 0))->kind != SL_STMT_QUERY) {
    rc = sl_bind_error(b, t->span, SL_EINTERNAL,
                       "the stored text of view '%s' does not parse: %s",
                       def->name, perr.message ? perr.message : "not a query");
    sl_error_clear(&perr);
    return rc;
  }
  const sl_stmt *st = SL_LIST_AT(stmts, 0);
  /* A view body sees the catalog only, not the query's CTEs. */
  const char *saved_text = b->text;
  sl_cte_env *saved_ctes = b->ctes;
  b->text = sql;
  b->ctes = NULL;
  sl_bquery *q = NULL;
  rc = sl_bind_query(b, st->u.query, NULL, &q);
  b->text = saved_text;
  b->ctes = saved_ctes;
  if (rc)
    return wrap_error(b, t->span, "view", def->name);
  /* What the planner later says about the view's query as a whole (it
   * cannot run it as a join's input, say) points at the reference in this
   * statement, not into the view's stored text, which the user does not
   * have in front of them. */
  q->span = t->span;
  sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
  f->kind = SL_BFROM_VIEW;
  f->span = t->span;
  f->alias = t->alias ? t->alias : def->name;
  f->u.sub.name = def->name;
  f->u.sub.query = q;
  if (q->ncols != def->ncolumns)
    return sl_bind_error(b, t->span, SL_EBIND,
                         "view '%s' now returns %d columns but was created "
                         "with %d; re-create it",
                         def->name, q->ncols, def->ncolumns);
  rc = sub_columns(b, f, q, f->alias, t->column_aliases, t->span, "view");
  if (rc)
    return rc;
  /* The view's column list (CREATE VIEW v (a, b) AS ...) names them. */
  if (SL_LIST_LEN(t->column_aliases) == 0)
    for (int i = 0; i < f->ncols; i++)
      f->cols[i].name = def->columns[i].name;
  *out = f;
  return SL_OK;
}

static int bind_cte_ref(sl_binder *b, const sl_cte_env *env,
                        const sl_table_ref *t, sl_bfrom **out) {
  sl_cte_env *saved = b->ctes;
  b->ctes = env->visible;
  sl_bquery *q = NULL;
  int rc = sl_bind_query(b, env->cte->query, NULL, &q);
  b->ctes = saved;
  if (rc)
    return rc;
  sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
  f->kind = SL_BFROM_SUBQUERY;
  f->span = t->span;
  f->alias = t->alias ? t->alias : env->cte->name;
  f->u.sub.name = env->cte->name;
  f->u.sub.query = q;
  const sl_list *names =
      SL_LIST_LEN(t->column_aliases) ? t->column_aliases : env->cte->columns;
  rc = sub_columns(b, f, q, f->alias, names, env->cte->span, "WITH query");
  *out = f;
  return rc;
}

static int bind_named(sl_binder *b, const sl_table_ref *t, sl_bfrom **out) {
  const sl_qname *q = &t->u.name.name;
  if (q->nparts == 1) {
    const sl_cte_env *env = find_cte(b, q->parts[0]);
    if (env)
      return bind_cte_ref(b, env, t, out);
  }
  const sl_table_def *def;
  int rc = sl_bind_find_table(b, q, SL_EBIND, &def);
  if (rc)
    return rc;
  if (def->kind == SL_TABLE_VIEW)
    return bind_view(b, def, t, out);
  rc = sl_bind_scan(b, def, t->alias, t->span, out);
  if (!rc && SL_LIST_LEN(t->column_aliases) > 0) {
    sl_bfrom *f = *out;
    if (SL_LIST_LEN(t->column_aliases) != f->ncols)
      return sl_bind_error(b, t->span, SL_EBIND,
                           "table '%s' has %d columns but %d column aliases "
                           "were given",
                           def->name, f->ncols, SL_LIST_LEN(t->column_aliases));
    for (int i = 0; i < f->ncols; i++)
      f->cols[i].name = SL_LIST_AT(t->column_aliases, i);
  }
  return rc;
}

static int bind_join(sl_binder *b, const sl_table_ref *t, sl_scope *outer,
                     sl_bfrom **out) {
  if (t->u.join.natural || SL_LIST_LEN(t->u.join.using_) > 0)
    return sl_bind_error(b, t->span, SL_EUNSUPPORTED,
                         "JOIN ... %s is not supported yet; write ON "
                         "a.x = b.x",
                         t->u.join.natural ? "NATURAL" : "USING");
  sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
  f->kind = SL_BFROM_JOIN;
  f->span = t->span;
  f->alias = t->alias;
  f->u.join.kind = t->u.join.kind;
  int rc = sl_bind_from(b, t->u.join.left, outer, &f->u.join.left);
  if (rc)
    return rc;
  const sl_table_ref *r = t->u.join.right;
  sl_bfrom *left = f->u.join.left;
  if (r->kind == SL_TREF_NAME && r->u.name.system_time) {
    /* Lookup / temporal join: the right side is versioned by a time
     * attribute of the left side. */
    sl_table_ref plain = *r;
    plain.u.name.system_time = NULL;
    rc = sl_bind_from(b, &plain, outer, &f->u.join.right);
    if (rc)
      return rc;
    sl_scope ls = {outer, left->ncols, left->cols, NULL, NULL};
    sl_ectx cx = {&ls, "FOR SYSTEM_TIME AS OF", NULL, false, false, NULL};
    sl_bexpr *st;
    rc = sl_bind_expr(b, &cx, r->u.name.system_time, &st);
    if (rc)
      return rc;
    if (st->type->time_attr == SL_TIME_NONE)
      return sl_bind_error(b, r->u.name.system_time->span, SL_EBIND,
                           "FOR SYSTEM_TIME AS OF needs a time attribute of "
                           "the left side (e.g. a PROCTIME() column), got %s",
                           sl_tp_msg(b->a, st->type));
    if (f->u.join.right->kind == SL_BFROM_SCAN)
      f->u.join.right->u.scan.system_time = st;
    f->u.join.lookup = true;
  } else {
    rc = sl_bind_from(b, r, outer, &f->u.join.right);
    if (rc)
      return rc;
  }
  sl_bfrom *right = f->u.join.right;
  f->ncols = left->ncols + right->ncols;
  f->cols = SL_ANEW_N(b->a, sl_bcolumn, f->ncols + 1);
  memcpy(f->cols, left->cols, sizeof(sl_bcolumn) * (size_t)left->ncols);
  memcpy(f->cols + left->ncols, right->cols,
         sizeof(sl_bcolumn) * (size_t)right->ncols);
  if (t->u.join.on) {
    sl_scope js = {outer, f->ncols, f->cols, NULL, NULL};
    sl_ectx cx = {&js, "ON", NULL, false, false, NULL};
    rc = sl_bind_condition(b, &cx, t->u.join.on, &f->u.join.on);
    if (rc)
      return rc;
  } else if (t->u.join.kind != SL_JOIN_CROSS &&
             t->u.join.kind != SL_JOIN_INNER) {
    return sl_bind_error(b, t->span, SL_EBIND,
                         "an outer JOIN needs an ON condition");
  }
  *out = f;
  return SL_OK;
}

int sl_bind_from(sl_binder *b, const sl_table_ref *t, sl_scope *outer,
                 sl_bfrom **out) {
  switch (t->kind) {
  case SL_TREF_NAME:
    if (t->u.name.system_time)
      return sl_bind_error(b, t->u.name.system_time->span, SL_EBIND,
                           "FOR SYSTEM_TIME AS OF is only allowed on the right "
                           "side of a JOIN");
    return bind_named(b, t, out);
  case SL_TREF_SUBQUERY: {
    sl_bquery *q;
    /* Only a LATERAL subquery may see the enclosing FROM. */
    int rc = sl_bind_query(b, t->u.subquery.query,
                           t->u.subquery.lateral ? outer : NULL, &q);
    if (rc)
      return rc;
    sl_bfrom *f = SL_ANEW(b->a, sl_bfrom);
    f->kind = SL_BFROM_SUBQUERY;
    f->span = t->span;
    f->alias = t->alias;
    f->u.sub.query = q;
    *out = f;
    return sub_columns(b, f, q, t->alias, t->column_aliases, t->span,
                       "subquery");
  }
  case SL_TREF_TVF:
    return sl_bind_window_tvf(b, t, outer, out);
  case SL_TREF_JOIN:
    return bind_join(b, t, outer, out);
  }
  return sl_bind_error(b, t->span, SL_EINTERNAL, "unknown FROM item kind %d",
                       (int)t->kind);
}
