/* bind_names.c - resolving names in expressions: columns (exact, then a
 * unique case-insensitive match), table qualifiers, fields of ROW columns,
 * ambiguity and "did you mean" errors, and the output names Flink derives.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "bind_int.h"

/* ---- names ----------------------------------------------------------------
 */

/* The span of part i of a qualified name, found by splitting its source
 * text at dots outside quotes; the whole span when that fails. */
static sl_span part_span(sl_binder *b, const sl_qname *q, int i) {
  sl_span sp = q->span;
  const char *t = sl_bind_span_text(b, sp);
  if (!t || q->nparts <= 1)
    return sp;
  int part = 0, start = 0;
  char quote = 0;
  int n = (int)strlen(t);
  for (int k = 0; k <= n; k++) {
    char c = t[k];
    if (quote) {
      if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '`' || c == '"') {
      quote = c;
      continue;
    }
    if (c == '.' || c == '\0') {
      if (part == i) {
        int s = start, e = k;
        while (s < e && isspace((unsigned char)t[s]))
          s++;
        while (e > s && isspace((unsigned char)t[e - 1]))
          e--;
        sl_span r = sp;
        r.offset += s;
        r.column += s; /* names do not span lines */
        r.length = e - s;
        return r;
      }
      part++;
      start = k + 1;
    }
  }
  return sp;
}

static bool qual_eq(const char *q, const char *want, bool ci) {
  if (!q || !want)
    return false;
  return ci ? strcasecmp(q, want) == 0 : strcmp(q, want) == 0;
}

/* Does the scope have columns qualified by `qual`?  Sets *ci when only a
 * case-insensitive spelling matches. */
static bool has_qualifier(const sl_scope *s, const char *qual, bool *ci) {
  for (int i = 0; i < s->ncols; i++)
    if (qual_eq(s->cols[i].qualifier, qual, false)) {
      *ci = false;
      return true;
    }
  for (int i = 0; i < s->ncols; i++)
    if (qual_eq(s->cols[i].qualifier, qual, true)) {
      *ci = true;
      return true;
    }
  return false;
}

/* Columns named `name` (optionally with qualifier qual): exact name first,
 * then case-insensitive.  Returns the number found (first two in m[]). */
static int match_columns(const sl_scope *s, const char *qual, bool qual_ci,
                         const char *name, int m[2]) {
  for (int pass = 0; pass < 2; pass++) {
    int n = 0;
    for (int i = 0; i < s->ncols; i++) {
      if (s->hidden && s->hidden[i])
        continue;
      if (qual && !qual_eq(s->cols[i].qualifier, qual, qual_ci))
        continue;
      bool hit = pass == 0 ? strcmp(s->cols[i].name, name) == 0
                           : strcasecmp(s->cols[i].name, name) == 0;
      if (hit) {
        if (n < 2)
          m[n] = i;
        n++;
      }
    }
    if (n > 0)
      return n;
  }
  return 0;
}

static const char *suggest_column(sl_binder *b, const sl_scope *s,
                                  const char *qual, bool qual_ci,
                                  const char *name) {
  const char **names = SL_ANEW_N(b->a, const char *, s->ncols + 1);
  int n = 0;
  for (int i = 0; i < s->ncols; i++) {
    if (s->hidden && s->hidden[i])
      continue;
    if (qual && !qual_eq(s->cols[i].qualifier, qual, qual_ci))
      continue;
    names[n++] = s->cols[i].name;
  }
  return sl_closest_name(name, names, n);
}

static const char *did_you_mean(sl_binder *b, const char *sug) {
  return sug ? sl_arena_printf(b->a, " (did you mean '%s'?)", sug) : "";
}

/* The table to name in "unknown column 'x' in table 't'": the scope's
 * single table, or the single qualifier of all its columns. */
static const char *scope_table(const sl_scope *s) {
  if (s->table)
    return s->table;
  const char *q = NULL;
  for (int i = 0; i < s->ncols; i++) {
    const char *c = s->cols[i].qualifier;
    if (!c)
      return NULL;
    if (q && strcmp(q, c) != 0)
      return NULL;
    q = c;
  }
  return q;
}

/* Apply field accesses parts[from..] to e. */
int sl_bind_fields(sl_binder *b, const sl_qname *q, int from, sl_bexpr *e,
                   sl_bexpr **out) {
  for (int i = from; i < q->nparts; i++) {
    const char *f = q->parts[i];
    const char *path = sl_arena_strdup(b->a, q->parts[0]);
    for (int k = 1; k < i; k++)
      path = sl_arena_printf(b->a, "%s.%s", path, q->parts[k]);
    if (e->type->kind != SL_TYPE_ROW)
      return sl_bind_error(b, part_span(b, q, i), SL_EBIND,
                           "cannot access field '%s' of '%s': it is %s, not a "
                           "ROW",
                           f, path, sl_tp_msg(b->a, e->type));
    int fi = sl_type_find_field(e->type, f);
    if (fi < 0) {
      const char **names = SL_ANEW_N(b->a, const char *, e->type->nfields + 1);
      for (int k = 0; k < e->type->nfields; k++)
        names[k] = e->type->fields[k].name;
      return sl_bind_error(
          b, part_span(b, q, i), SL_EBIND, "unknown field '%s' in '%s'%s", f,
          path, did_you_mean(b, sl_closest_name(f, names, e->type->nfields)));
    }
    sl_type *ft = sl_type_copy(b->a, e->type->fields[fi].type);
    ft->not_null = ft->not_null && e->type->not_null;
    sl_bexpr *fe = sl_bexpr_new(b, SL_BEXPR_FIELD, ft, q->span);
    fe->nargs = 1;
    fe->args = SL_ANEW_N(b->a, sl_bexpr *, 1);
    fe->args[0] = e;
    fe->index = fi;
    fe->name = e->type->fields[fi].name;
    e = fe;
  }
  *out = e;
  return SL_OK;
}

static int ambiguous(sl_binder *b, const sl_scope *s, const sl_qname *q,
                     int part, int m[2]) {
  const char *q1 = s->cols[m[0]].qualifier, *q2 = s->cols[m[1]].qualifier;
  const char *name = q->parts[part];
  if (q1 && q2 && strcmp(q1, q2) != 0)
    return sl_bind_error(b, part_span(b, q, part), SL_EBIND,
                         "column '%s' is ambiguous: it is in both '%s' and "
                         "'%s'; qualify it",
                         name, q1, q2);
  return sl_bind_error(b, part_span(b, q, part), SL_EBIND,
                       "column '%s' is ambiguous: it appears twice in the FROM "
                       "clause; use aliases",
                       name);
}

int sl_bind_column_ref(sl_binder *b, sl_scope *scope, const sl_qname *q,
                       sl_bexpr **out, bool *not_found) {
  if (not_found)
    *not_found = false;
  int m[2];
  int depth = 0;
  for (sl_scope *s = scope; s; s = s->parent, depth++) {
    bool ci;
    if (q->nparts >= 2 && has_qualifier(s, q->parts[0], &ci)) {
      int n = match_columns(s, q->parts[0], ci, q->parts[1], m);
      if (n > 1)
        return ambiguous(b, s, q, 1, m);
      if (n == 0)
        return sl_bind_error(b, part_span(b, q, 1), SL_EBIND,
                             "unknown column '%s' in table '%s'%s", q->parts[1],
                             q->parts[0],
                             did_you_mean(b, suggest_column(b, s, q->parts[0],
                                                            ci, q->parts[1])));
      sl_bexpr *c = sl_bexpr_column(b, s, m[0], depth, q->span);
      c->qualifier = s->cols[m[0]].qualifier;
      return sl_bind_fields(b, q, 2, c, out);
    }
    int n = match_columns(s, NULL, false, q->parts[0], m);
    if (n > 1)
      return ambiguous(b, s, q, 0, m);
    if (n == 1)
      return sl_bind_fields(b, q, 1,
                            sl_bexpr_column(b, s, m[0], depth, q->span), out);
  }
  if (not_found) {
    *not_found = true;
    return SL_OK;
  }
  if (!scope)
    return sl_bind_error(b, q->span, SL_EBIND,
                         "unknown column '%s': there is no FROM clause",
                         q->parts[0]);
  if (q->nparts >= 2) {
    /* Neither a table alias nor a column: suggest among both. */
    int n = 0;
    const char **names = SL_ANEW_N(b->a, const char *, scope->ncols * 2 + 1);
    for (int i = 0; i < scope->ncols; i++) {
      if (scope->cols[i].qualifier)
        names[n++] = scope->cols[i].qualifier;
      names[n++] = scope->cols[i].name;
    }
    return sl_bind_error(
        b, part_span(b, q, 0), SL_EBIND,
        "unknown table or column '%s' in '%s'%s", q->parts[0],
        sl_bind_qname_sql(b, q),
        did_you_mean(b, sl_closest_name(q->parts[0], names, n)));
  }
  const char *sug = suggest_column(b, scope, NULL, false, q->parts[0]);
  const char *t = scope_table(scope);
  if (t)
    return sl_bind_error(b, q->span, SL_EBIND,
                         "unknown column '%s' in table '%s'%s", q->parts[0], t,
                         did_you_mean(b, sug));
  return sl_bind_error(b, q->span, SL_EBIND, "unknown column '%s'%s",
                       q->parts[0], did_you_mean(b, sug));
}

const char *sl_bind_derive_name(sl_binder *b, const sl_expr *e, int i) {
  if (e->kind == SL_EXPR_NAME && e->u.name.nparts > 0)
    return e->u.name.parts[e->u.name.nparts - 1];
  if (e->kind == SL_EXPR_FIELD)
    return e->u.field.field;
  return sl_arena_printf(b->a, "EXPR$%d", i);
}
