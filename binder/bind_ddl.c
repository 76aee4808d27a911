/* bind_ddl.c - validating CREATE TABLE and CREATE VIEW and building the
 * catalog entry (sl_table_def) the session then adds.  The entry keeps SQL
 * text, not ASTs: computed columns, the watermark and view bodies are
 * stored as the text the user wrote and re-parsed when used.
 */
#include <string.h>
#include <strings.h>

#include "bind_int.h"

static const char *last_part(const sl_qname *q) {
  return q->nparts > 0 ? q->parts[q->nparts - 1] : "";
}

/* The text of an AST expression: its source span, else SQL printed from
 * the tree.  Allocated in arena a. */
static const char *expr_text(sl_binder *b, sl_arena *a, const sl_expr *e) {
  const char *t = sl_bind_span_text(b, e->span);
  if (t)
    return sl_arena_strdup(a, t);
  sl_strbuf sb = SL_STRBUF_INIT;
  sl_expr_format(&sb, e);
  const char *r = sl_arena_strdup(a, sl_strbuf_cstr(&sb));
  sl_strbuf_free(&sb);
  return r;
}

static const char *stmt_text(sl_binder *b, sl_arena *a, const sl_stmt *s) {
  const char *t = sl_bind_span_text(b, s->span);
  if (!t)
    t = b->text ? b->text : "";
  return sl_arena_strdup(a, t);
}

/* CREATE of an existing name: an error, or nothing to do with IF NOT
 * EXISTS (new_table stays NULL). */
static int check_new_name(sl_binder *b, const sl_qname *q, bool if_not_exists,
                          bool *skip) {
  *skip = false;
  const sl_table_def *old = sl_catalog_find(b->cat, last_part(q));
  if (!old || strcmp(old->name, last_part(q)) != 0)
    return SL_OK;
  if (if_not_exists) {
    *skip = true;
    return SL_OK;
  }
  bool view = old->kind == SL_TABLE_VIEW;
  return sl_bind_error(b, q->span, SL_ECATALOG,
                       "%s '%s' already exists (DROP %s %s first, or use "
                       "CREATE %s IF NOT EXISTS)",
                       view ? "view" : "table", old->name,
                       view ? "VIEW" : "TABLE", old->name,
                       view ? "VIEW" : "TABLE");
}

static int find_def_column(sl_binder *b, sl_table_def *def, const char *name,
                           sl_span span, const char *what) {
  int i = sl_table_def_find_column(def, name);
  if (i >= 0)
    return i;
  const char **names = SL_ANEW_N(b->a, const char *, def->ncolumns + 1);
  for (int k = 0; k < def->ncolumns; k++)
    names[k] = def->columns[k].name;
  const char *sug = sl_closest_name(name, names, def->ncolumns);
  sl_bind_error(b, span, SL_EBIND,
                "%s column '%s' does not exist in '%s'%s%s%s", what, name,
                def->name, sug ? " (did you mean '" : "", sug ? sug : "",
                sug ? "'?)" : "");
  return -1;
}

static bool is_rowtime_type(const sl_type *t) {
  return (t->kind == SL_TYPE_TIMESTAMP || t->kind == SL_TYPE_TIMESTAMP_LTZ) &&
         t->precision >= 0 && t->precision <= 3;
}

static int bind_watermark(sl_binder *b, const sl_watermark_def *wm,
                          sl_table_def *def, sl_bcolumn *cols) {
  if (wm->column.nparts != 1)
    return sl_bind_error(b, wm->column.span, SL_EUNSUPPORTED,
                         "WATERMARK on a nested field (%s) is not supported; "
                         "declare a computed column for it",
                         sl_bind_qname_sql(b, &wm->column));
  const char *name = wm->column.parts[0];
  int ci = find_def_column(b, def, name, wm->column.span, "WATERMARK FOR");
  if (ci < 0)
    return SL_EBIND;
  sl_column *col = &def->columns[ci];
  if (col->type->time_attr == SL_TIME_PROCTIME)
    return sl_bind_error(b, wm->column.span, SL_EBIND,
                         "column '%s' is a PROCTIME() attribute and cannot "
                         "have a WATERMARK",
                         col->name);
  if (!is_rowtime_type(col->type))
    return sl_bind_error(b, wm->column.span, SL_EBIND,
                         "WATERMARK FOR column '%s' must be TIMESTAMP(3) or "
                         "TIMESTAMP_LTZ(3) (precision 0 to 3), got %s",
                         col->name, sl_tp_msg(b->a, col->type));
  sl_scope all = {NULL, def->ncolumns, cols, NULL, def->name};
  sl_ectx cx = {&all, "WATERMARK", NULL, false, false, NULL};
  sl_bexpr *x;
  int rc = sl_bind_expr(b, &cx, wm->expr, &x);
  if (rc)
    return rc;
  if (x->type->kind != col->type->kind)
    return sl_bind_error(b, wm->expr->span, SL_EBIND,
                         "the WATERMARK expression must return %s like column "
                         "'%s', got %s",
                         sl_tp_msg(b->a, col->type), col->name,
                         sl_tp_msg(b->a, x->type));
  col->type->time_attr = SL_TIME_ROWTIME;
  cols[ci].type = col->type;
  def->rowtime_column = ci;
  def->watermark_sql = expr_text(b, &def->arena, wm->expr);
  return SL_OK;
}

static int bind_options(sl_binder *b, const sl_stmt *s, sl_table_def *def) {
  sl_list *opts = s->u.create_table.options;
  def->noptions = SL_LIST_LEN(opts);
  def->options = SL_ANEW_N(&def->arena, sl_table_option, def->noptions + 1);
  bool connector = false;
  for (int i = 0; i < def->noptions; i++) {
    const sl_option *o = SL_LIST_AT(opts, i);
    for (int k = 0; k < i; k++)
      if (strcmp(def->options[k].key, o->key) == 0)
        return sl_bind_error(b, o->span, SL_EBIND, "option '%s' is given twice",
                             o->key);
    def->options[i].key = sl_arena_strdup(&def->arena, o->key);
    def->options[i].value =
        sl_arena_strdup(&def->arena, o->value ? o->value : "");
    /* 'connector.type' is the legacy (Flink < 1.11) spelling. */
    if (strcmp(o->key, "connector") == 0 ||
        strcmp(o->key, "connector.type") == 0)
      connector = true;
  }
  if (!connector)
    return sl_bind_error(b, s->u.create_table.name.span, SL_EBIND,
                         "table '%s' has no 'connector' option: add WITH "
                         "('connector' = '...'), e.g. 'nexmark', 'datagen', "
                         "'filesystem', 'print' or 'blackhole'",
                         def->name);
  return SL_OK;
}

static int name_list(sl_binder *b, sl_table_def *def, const sl_list *l,
                     sl_span span, const char *what, const char ***out,
                     int *n) {
  *n = SL_LIST_LEN(l);
  *out = SL_ANEW_N(&def->arena, const char *, *n + 1);
  for (int i = 0; i < *n; i++) {
    const char *name = SL_LIST_AT(l, i);
    int ci = find_def_column(b, def, name, span, what);
    if (ci < 0)
      return SL_EBIND;
    (*out)[i] = def->columns[ci].name;
  }
  return SL_OK;
}

int sl_bind_create_table(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs) {
  const sl_qname *qn = &s->u.create_table.name;
  bool skip;
  bs->if_not_exists = s->u.create_table.if_not_exists;
  int rc = check_new_name(b, qn, bs->if_not_exists, &skip);
  if (rc || skip)
    return rc;
  sl_table_def *def = sl_table_def_new(SL_TABLE_CONNECTOR, last_part(qn));
  bs->new_table = def; /* freed by sl_bind on error */
  sl_arena *da = &def->arena;
  def->temporary = s->u.create_table.temporary;
  if (s->u.create_table.comment)
    def->comment = sl_arena_strdup(da, s->u.create_table.comment);

  int n = SL_LIST_LEN(s->u.create_table.columns);
  def->ncolumns = n;
  def->columns = SL_ANEW_N(da, sl_column, n + 1);
  sl_bcolumn *cols = SL_ANEW_N(b->a, sl_bcolumn, n + 1);
  bool *hidden = SL_ANEW_N(b->a, bool, n + 1);
  for (int i = 0; i < n; i++) {
    const sl_column_def *cd = SL_LIST_AT(s->u.create_table.columns, i);
    for (int k = 0; k < i; k++)
      if (strcmp(def->columns[k].name, cd->name) == 0)
        return sl_bind_error(b, cd->span, SL_EBIND,
                             "duplicate column '%s' in CREATE TABLE '%s'",
                             cd->name, def->name);
    sl_column *c = &def->columns[i];
    c->name = sl_arena_strdup(da, cd->name);
    c->primary_key = cd->primary_key;
    if (cd->comment)
      c->comment = sl_arena_strdup(da, cd->comment);
    if (cd->type) {
      c->type = sl_type_copy(da, cd->type);
      c->type->time_attr = SL_TIME_NONE;
    }
    hidden[i] = cd->type == NULL;
    cols[i].name = c->name;
    cols[i].type = c->type;
    cols[i].qualifier = def->name;
    cols[i].span = cd->span;
  }
  /* Computed columns: typed by their expression over the physical
   * columns; PROCTIME() makes a processing-time attribute. */
  sl_scope phys = {NULL, n, cols, hidden, def->name};
  sl_ectx cx = {&phys, "a computed column", NULL, false, false, NULL};
  for (int i = 0; i < n; i++) {
    const sl_column_def *cd = SL_LIST_AT(s->u.create_table.columns, i);
    if (cd->type)
      continue;
    if (!cd->computed)
      return sl_bind_error(b, cd->span, SL_EINTERNAL,
                           "column '%s' has neither a type nor an expression",
                           cd->name);
    sl_bexpr *x;
    rc = sl_bind_expr(b, &cx, cd->computed, &x);
    if (rc)
      return rc;
    sl_column *c = &def->columns[i];
    c->type = sl_type_copy(da, x->type);
    if (c->type->time_attr != SL_TIME_PROCTIME)
      c->type->time_attr = SL_TIME_NONE;
    c->computed_sql = expr_text(b, da, cd->computed);
    cols[i].type = c->type;
  }
  if (s->u.create_table.watermark) {
    rc = bind_watermark(b, s->u.create_table.watermark, def, cols);
    if (rc)
      return rc;
  }
  /* PRIMARY KEY (...) and column-level PRIMARY KEY. */
  rc = name_list(b, def, s->u.create_table.primary_key, qn->span, "PRIMARY KEY",
                 &def->primary_key, &def->nprimary_key);
  if (rc)
    return rc;
  if (def->nprimary_key == 0) {
    def->primary_key = SL_ANEW_N(da, const char *, n + 1);
    for (int i = 0; i < n; i++)
      if (def->columns[i].primary_key)
        def->primary_key[def->nprimary_key++] = def->columns[i].name;
  }
  for (int i = 0; i < def->nprimary_key; i++)
    def->columns[sl_table_def_find_column(def, def->primary_key[i])]
        .primary_key = true;
  rc = name_list(b, def, s->u.create_table.partitioned_by, qn->span,
                 "PARTITIONED BY", &def->partitioned_by, &def->npartitioned_by);
  if (rc)
    return rc;
  rc = bind_options(b, s, def);
  if (rc)
    return rc;
  def->create_sql = stmt_text(b, da, s);
  return SL_OK;
}

int sl_bind_create_view(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs) {
  const sl_qname *qn = &s->u.create_view.name;
  bool skip;
  bs->if_not_exists = s->u.create_view.if_not_exists;
  int rc = check_new_name(b, qn, bs->if_not_exists, &skip);
  if (rc || skip)
    return rc;
  rc = sl_bind_query(b, s->u.create_view.query, NULL, &bs->query);
  if (rc)
    return rc;
  const sl_bquery *q = bs->query;
  const sl_list *names = s->u.create_view.columns;
  int nn = SL_LIST_LEN(names);
  if (nn > 0 && nn != q->ncols)
    return sl_bind_error(b, qn->span, SL_EBIND,
                         "view '%s' has %d column name%s but its query returns "
                         "%d column%s",
                         last_part(qn), nn, nn == 1 ? "" : "s", q->ncols,
                         q->ncols == 1 ? "" : "s");
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < i; k++)
      if (strcmp(SL_LIST_AT(names, i), SL_LIST_AT(names, k)) == 0)
        return sl_bind_error(b, qn->span, SL_EBIND,
                             "duplicate column '%s' in CREATE VIEW '%s'",
                             (const char *)SL_LIST_AT(names, i), last_part(qn));
  sl_table_def *def = sl_table_def_new(SL_TABLE_VIEW, last_part(qn));
  bs->new_table = def;
  sl_arena *da = &def->arena;
  def->temporary = s->u.create_view.temporary;
  def->ncolumns = q->ncols;
  def->columns = SL_ANEW_N(da, sl_column, q->ncols + 1);
  for (int i = 0; i < q->ncols; i++) {
    sl_column *c = &def->columns[i];
    c->name = sl_arena_strdup(da, nn > 0 ? (const char *)SL_LIST_AT(names, i)
                                         : q->cols[i].name);
    /* Types keep their time attribute: that is how a view passes on its
     * rowtime column. */
    c->type = sl_type_copy(da, q->cols[i].type);
  }
  sl_span qs = s->u.create_view.query_span;
  if (qs.length <= 0)
    qs = s->u.create_view.query->span;
  const char *body = sl_bind_span_text(b, qs);
  if (!body)
    return sl_bind_error(b, s->span, SL_EINTERNAL,
                         "the text of view '%s' is not known", def->name);
  def->view_sql = sl_arena_strdup(da, body);
  def->view_first_line = qs.line > 0 ? qs.line : b->first_line;
  def->create_sql = stmt_text(b, da, s);
  return SL_OK;
}
