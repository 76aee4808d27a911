/* bind.c - the binder's entry point (sl_bind) and the statements that need
 * little more than a catalog lookup: INSERT, DESCRIBE, SHOW, DROP, SET,
 * RESET, EXPLAIN, CREATE FUNCTION.  Shared helpers (errors, source text)
 * live here too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bind_int.h"
#include "sluice/parser/parser.h"

/* ---- shared helpers ----------------------------------------------------- */

int sl_bind_error(sl_binder *b, sl_span span, int code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (span.line > 0 || span.length > 0)
    return sl_error_set_at(b->err, code, span.line, span.column, span.offset,
                           span.length, "%s", buf);
  return sl_error_set(b->err, code, "%s", buf);
}

const char *sl_bind_span_text(sl_binder *b, sl_span span) {
  if (!b->text || span.length <= 0 || span.offset < 0)
    return NULL;
  size_t len = strlen(b->text);
  if ((size_t)span.offset + (size_t)span.length > len)
    return NULL;
  return sl_arena_strndup(b->a, b->text + span.offset, (size_t)span.length);
}

const char *sl_bind_expr_sql(sl_binder *b, const sl_expr *e) {
  sl_strbuf sb = SL_STRBUF_INIT;
  sl_expr_format(&sb, e);
  const char *s = sl_strbuf_cstr(&sb);
  bool op = e->kind == SL_EXPR_BINARY || e->kind == SL_EXPR_LOGICAL ||
            e->kind == SL_EXPR_BETWEEN || e->kind == SL_EXPR_IN_LIST ||
            e->kind == SL_EXPR_LIKE || e->kind == SL_EXPR_IS ||
            e->kind == SL_EXPR_UNARY;
  const char *r = (op && s[0] != '(') ? sl_arena_printf(b->a, "(%s)", s)
                                      : sl_arena_strdup(b->a, s);
  sl_strbuf_free(&sb);
  return r;
}

const char *sl_bind_qname_sql(sl_binder *b, const sl_qname *q) {
  sl_strbuf sb = SL_STRBUF_INIT;
  for (int i = 0; i < q->nparts; i++) {
    if (i)
      sl_strbuf_appendc(&sb, '.');
    sl_strbuf_append(&sb, q->parts[i]);
  }
  const char *r = sl_arena_strdup(b->a, sl_strbuf_cstr(&sb));
  sl_strbuf_free(&sb);
  return r;
}

void *sl_bind_grow(sl_arena *a, void *items, int n, int *cap, size_t size) {
  if (n < *cap)
    return items;
  int ncap = *cap ? *cap * 2 : 8;
  void *p = sl_arena_zalloc(a, size * (size_t)ncap);
  if (n > 0)
    memcpy(p, items, size * (size_t)n);
  *cap = ncap;
  return p;
}

/* ---- simple statements -------------------------------------------------- */

static const char *last_part(const sl_qname *q) {
  return q->nparts > 0 ? q->parts[q->nparts - 1] : "";
}

/* DESCRIBE / SHOW CREATE / DROP: the named entry, with "did you mean". */
static int bind_object(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs) {
  const sl_qname *q = NULL;
  bool want_view = false, want_table = false, if_exists = false;
  switch (s->kind) {
  case SL_STMT_DESCRIBE:
    q = &s->u.describe.name;
    break;
  case SL_STMT_SHOW:
    if (s->u.show.what != SL_SHOW_CREATE_TABLE &&
        s->u.show.what != SL_SHOW_CREATE_VIEW)
      return SL_OK;
    q = &s->u.show.name;
    want_view = s->u.show.what == SL_SHOW_CREATE_VIEW;
    want_table = !want_view;
    break;
  case SL_STMT_DROP:
    if (s->u.drop.what == SL_OBJ_FUNCTION) {
      if (s->u.drop.if_exists)
        return SL_OK;
      return sl_bind_error(b, s->u.drop.name.span, SL_EUNSUPPORTED,
                           "cannot drop function '%s': Sluice has built-in "
                           "functions only (SHOW FUNCTIONS lists them)",
                           last_part(&s->u.drop.name));
    }
    q = &s->u.drop.name;
    want_view = s->u.drop.what == SL_OBJ_VIEW;
    want_table = !want_view;
    if_exists = s->u.drop.if_exists;
    break;
  default:
    return SL_OK;
  }
  const sl_table_def *def = sl_catalog_find(b->cat, last_part(q));
  if (!def) {
    if (if_exists)
      return SL_OK;
    return sl_bind_find_table(b, q, SL_ECATALOG, &def);
  }
  bool is_view = def->kind == SL_TABLE_VIEW;
  const char *verb = s->kind == SL_STMT_DROP ? "DROP" : "SHOW CREATE";
  if (want_view && !is_view)
    return sl_bind_error(b, q->span, SL_ECATALOG,
                         "'%s' is a table, not a view; use %s TABLE %s",
                         def->name, verb, def->name);
  if (want_table && is_view)
    return sl_bind_error(b, q->span, SL_ECATALOG,
                         "'%s' is a view, not a table; use %s VIEW %s",
                         def->name, verb, def->name);
  bs->table = def;
  return SL_OK;
}

static int bind_insert(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs) {
  const sl_table_def *def;
  int rc = sl_bind_find_table(b, &s->u.insert.table, SL_EBIND, &def);
  if (rc)
    return rc;
  if (def->kind == SL_TABLE_VIEW)
    return sl_bind_error(b, s->u.insert.table.span, SL_EBIND,
                         "cannot INSERT INTO view '%s': insert into a table",
                         def->name);
  bs->table = def;
  rc = sl_bind_query(b, s->u.insert.query, NULL, &bs->query);
  if (rc)
    return rc;

  /* Target columns: the list given, else every physical column (computed
   * columns cannot be written). */
  int ntarget = 0;
  int *target = SL_ANEW_N(b->a, int, def->ncolumns + 1);
  sl_list *cols = s->u.insert.columns;
  if (SL_LIST_LEN(cols) > 0) {
    for (int i = 0; i < cols->n; i++) {
      const char *name = SL_LIST_AT(cols, i);
      int ci = sl_table_def_find_column(def, name);
      if (ci < 0) {
        const char **names = SL_ANEW_N(b->a, const char *, def->ncolumns + 1);
        for (int j = 0; j < def->ncolumns; j++)
          names[j] = def->columns[j].name;
        const char *sug = sl_closest_name(name, names, def->ncolumns);
        return sl_bind_error(b, s->u.insert.table.span, SL_EBIND,
                             "unknown column '%s' in table '%s'%s%s%s", name,
                             def->name, sug ? " (did you mean '" : "",
                             sug ? sug : "", sug ? "'?)" : "");
      }
      if (def->columns[ci].computed_sql)
        return sl_bind_error(b, s->u.insert.table.span, SL_EBIND,
                             "cannot INSERT INTO computed column '%s' of '%s'",
                             def->columns[ci].name, def->name);
      for (int j = 0; j < ntarget; j++)
        if (target[j] == ci)
          return sl_bind_error(b, s->u.insert.table.span, SL_EBIND,
                               "column '%s' appears twice in the INSERT column "
                               "list",
                               def->columns[ci].name);
      target[ntarget++] = ci;
    }
  } else {
    for (int i = 0; i < def->ncolumns; i++)
      if (!def->columns[i].computed_sql)
        target[ntarget++] = i;
  }
  sl_bquery *q = bs->query;
  if (q->ncols != ntarget)
    return sl_bind_error(b, s->u.insert.query->span, SL_EBIND,
                         "INSERT INTO '%s' has %d target column%s but the "
                         "query returns %d column%s",
                         def->name, ntarget, ntarget == 1 ? "" : "s", q->ncols,
                         q->ncols == 1 ? "" : "s");
  for (int i = 0; i < ntarget; i++) {
    const sl_column *dst = &def->columns[target[i]];
    const sl_type *src = q->cols[i].type;
    if (!sl_tp_assignable(dst->type, src)) {
      sl_span sp = q->cols[i].span;
      if (sp.length == 0)
        sp = s->u.insert.query->span;
      return sl_bind_error(
          b, sp, SL_EBIND,
          "cannot write column %d ('%s', %s) of the query into column '%s' "
          "of '%s' (%s): CAST it",
          i + 1, q->cols[i].name, sl_tp_msg(b->a, src), dst->name, def->name,
          sl_tp_msg(b->a, dst->type));
    }
  }
  bs->insert_columns = target;
  return SL_OK;
}

static int bind_stmt(sl_binder *b, const sl_stmt *s, sl_bound_stmt **out);

static int bind_explain(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs) {
  if (!s->u.explain.stmt)
    return sl_bind_error(b, s->span, SL_EINTERNAL, "EXPLAIN without statement");
  return bind_stmt(b, s->u.explain.stmt, &bs->inner);
}

static int bind_create_function(sl_binder *b, const sl_stmt *s) {
  const char *cls = s->u.create_function.class_name;
  const char *lang = s->u.create_function.language;
  const char *what = "Java class";
  if (lang && strcasecmp(lang, "PYTHON") == 0)
    what = "Python function";
  else if (lang && strcasecmp(lang, "SQL") == 0)
    what = "SQL function";
  return sl_bind_error(b, s->span, SL_EUNSUPPORTED,
                       "user-defined functions (%s '%s') are not supported; "
                       "Sluice has built-in functions only (SHOW FUNCTIONS "
                       "lists them)",
                       what, cls ? cls : last_part(&s->u.create_function.name));
}

static int bind_stmt(sl_binder *b, const sl_stmt *s, sl_bound_stmt **out) {
  sl_bound_stmt *bs = SL_ANEW(b->a, sl_bound_stmt);
  bs->kind = s->kind;
  bs->ast = s;
  bs->text = b->text;
  *out = bs;
  switch (s->kind) {
  case SL_STMT_QUERY:
    return sl_bind_query(b, s->u.query, NULL, &bs->query);
  case SL_STMT_INSERT:
    return bind_insert(b, s, bs);
  case SL_STMT_CREATE_TABLE:
    return sl_bind_create_table(b, s, bs);
  case SL_STMT_CREATE_VIEW:
    return sl_bind_create_view(b, s, bs);
  case SL_STMT_CREATE_FUNCTION:
    return bind_create_function(b, s);
  case SL_STMT_DROP:
  case SL_STMT_SHOW:
  case SL_STMT_DESCRIBE:
    return bind_object(b, s, bs);
  case SL_STMT_SET:
  case SL_STMT_RESET:
    return SL_OK;
  case SL_STMT_EXPLAIN:
    return bind_explain(b, s, bs);
  }
  return sl_bind_error(b, s->span, SL_EINTERNAL, "unknown statement kind %d",
                       (int)s->kind);
}

void sl_bound_stmt_release(sl_bound_stmt *bs) {
  for (; bs; bs = bs->inner) {
    if (bs->new_table) {
      sl_table_def_free(bs->new_table);
      bs->new_table = NULL;
    }
  }
}

int sl_bind(sl_arena *a, const sl_catalog *cat, const sl_stmt *stmt,
            const char *stmt_text, int first_line, sl_bound_stmt **out,
            sl_error *err) {
  sl_binder b = {0};
  b.a = a;
  b.cat = cat;
  b.text = stmt_text ? sl_arena_strdup(a, stmt_text) : NULL;
  b.first_line = first_line;
  b.err = err;
  sl_bound_stmt *bs = NULL;
  int rc = bind_stmt(&b, stmt, &bs);
  if (rc) {
    sl_bound_stmt_release(bs);
    *out = NULL;
    return rc;
  }
  *out = bs;
  return SL_OK;
}
