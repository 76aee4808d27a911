/* types.c - constructing, comparing and printing SQL types. */
#include "sluice/common/types.h"

#include <string.h>
#include <strings.h>

sl_type *sl_type_new(sl_arena *a, sl_type_kind kind) {
  sl_type *t = SL_ANEW(a, sl_type);
  t->kind = kind;
  t->precision = -1;
  t->scale = 0;
  if (kind == SL_TYPE_TIMESTAMP || kind == SL_TYPE_TIMESTAMP_LTZ)
    t->precision = 6; /* Flink's default */
  if (kind == SL_TYPE_TIME)
    t->precision = 0;
  if (kind == SL_TYPE_DECIMAL) {
    t->precision = 10; /* Flink's default DECIMAL = DECIMAL(10, 0) */
    t->scale = 0;
  }
  return t;
}

sl_type *sl_type_decimal(sl_arena *a, int precision, int scale) {
  sl_type *t = sl_type_new(a, SL_TYPE_DECIMAL);
  t->precision = precision;
  t->scale = scale;
  return t;
}

sl_type *sl_type_varchar(sl_arena *a, int length) {
  sl_type *t = sl_type_new(a, SL_TYPE_VARCHAR);
  t->precision = length;
  return t;
}

sl_type *sl_type_timestamp(sl_arena *a, int precision) {
  sl_type *t = sl_type_new(a, SL_TYPE_TIMESTAMP);
  t->precision = precision;
  return t;
}

sl_type *sl_type_copy(sl_arena *a, const sl_type *t) {
  if (!t)
    return NULL;
  sl_type *c = SL_ANEW(a, sl_type);
  *c = *t;
  if (t->nfields > 0) {
    c->fields = SL_ANEW_N(a, sl_type_field, t->nfields);
    for (int i = 0; i < t->nfields; i++) {
      c->fields[i].name = sl_arena_strdup(a, t->fields[i].name);
      c->fields[i].type = sl_type_copy(a, t->fields[i].type);
    }
  }
  return c;
}

bool sl_type_equal(const sl_type *x, const sl_type *y) {
  if (x == y)
    return true;
  if (!x || !y || x->kind != y->kind)
    return false;
  switch (x->kind) {
  case SL_TYPE_DECIMAL:
    return x->precision == y->precision && x->scale == y->scale;
  case SL_TYPE_CHAR:
  case SL_TYPE_VARCHAR:
  case SL_TYPE_TIME:
  case SL_TYPE_TIMESTAMP:
  case SL_TYPE_TIMESTAMP_LTZ:
    return x->precision == y->precision;
  case SL_TYPE_ROW:
    if (x->nfields != y->nfields)
      return false;
    for (int i = 0; i < x->nfields; i++) {
      if (strcmp(x->fields[i].name, y->fields[i].name) != 0 ||
          !sl_type_equal(x->fields[i].type, y->fields[i].type))
        return false;
    }
    return true;
  default:
    return true;
  }
}

bool sl_type_is_integer(const sl_type *t) {
  return t && (t->kind == SL_TYPE_TINYINT || t->kind == SL_TYPE_SMALLINT ||
               t->kind == SL_TYPE_INT || t->kind == SL_TYPE_BIGINT);
}

bool sl_type_is_numeric(const sl_type *t) {
  return sl_type_is_integer(t) ||
         (t && (t->kind == SL_TYPE_FLOAT || t->kind == SL_TYPE_DOUBLE ||
                t->kind == SL_TYPE_DECIMAL));
}

bool sl_type_is_string(const sl_type *t) {
  return t && (t->kind == SL_TYPE_CHAR || t->kind == SL_TYPE_VARCHAR);
}

bool sl_type_is_temporal(const sl_type *t) {
  return t &&
         (t->kind == SL_TYPE_DATE || t->kind == SL_TYPE_TIME ||
          t->kind == SL_TYPE_TIMESTAMP || t->kind == SL_TYPE_TIMESTAMP_LTZ);
}

bool sl_type_is_interval(const sl_type *t) {
  return t && (t->kind == SL_TYPE_INTERVAL_DAY_TIME ||
               t->kind == SL_TYPE_INTERVAL_YEAR_MONTH);
}

void sl_type_format(sl_strbuf *b, const sl_type *t) {
  if (!t) {
    sl_strbuf_append(b, "?");
    return;
  }
  switch (t->kind) {
  case SL_TYPE_NULL:
    sl_strbuf_append(b, "NULL");
    break;
  case SL_TYPE_BOOLEAN:
    sl_strbuf_append(b, "BOOLEAN");
    break;
  case SL_TYPE_TINYINT:
    sl_strbuf_append(b, "TINYINT");
    break;
  case SL_TYPE_SMALLINT:
    sl_strbuf_append(b, "SMALLINT");
    break;
  case SL_TYPE_INT:
    sl_strbuf_append(b, "INT");
    break;
  case SL_TYPE_BIGINT:
    sl_strbuf_append(b, "BIGINT");
    break;
  case SL_TYPE_FLOAT:
    sl_strbuf_append(b, "FLOAT");
    break;
  case SL_TYPE_DOUBLE:
    sl_strbuf_append(b, "DOUBLE");
    break;
  case SL_TYPE_DECIMAL:
    sl_strbuf_printf(b, "DECIMAL(%d, %d)", t->precision, t->scale);
    break;
  case SL_TYPE_CHAR:
    sl_strbuf_printf(b, "CHAR(%d)", t->precision < 0 ? 1 : t->precision);
    break;
  case SL_TYPE_VARCHAR:
    if (t->precision < 0)
      sl_strbuf_append(b, "STRING");
    else
      sl_strbuf_printf(b, "VARCHAR(%d)", t->precision);
    break;
  case SL_TYPE_DATE:
    sl_strbuf_append(b, "DATE");
    break;
  case SL_TYPE_TIME:
    sl_strbuf_printf(b, "TIME(%d)", t->precision);
    break;
  case SL_TYPE_TIMESTAMP:
    sl_strbuf_printf(b, "TIMESTAMP(%d)", t->precision);
    break;
  case SL_TYPE_TIMESTAMP_LTZ:
    sl_strbuf_printf(b, "TIMESTAMP_LTZ(%d)", t->precision);
    break;
  case SL_TYPE_INTERVAL_DAY_TIME:
    sl_strbuf_append(b, "INTERVAL SECOND(3)");
    break;
  case SL_TYPE_INTERVAL_YEAR_MONTH:
    sl_strbuf_append(b, "INTERVAL YEAR TO MONTH");
    break;
  case SL_TYPE_ROW:
    sl_strbuf_append(b, "ROW<");
    for (int i = 0; i < t->nfields; i++) {
      if (i)
        sl_strbuf_append(b, ", ");
      sl_strbuf_printf(b, "`%s` ", t->fields[i].name);
      sl_type_format(b, t->fields[i].type);
    }
    sl_strbuf_append(b, ">");
    break;
  }
  if (t->not_null)
    sl_strbuf_append(b, " NOT NULL");
  if (t->time_attr == SL_TIME_ROWTIME)
    sl_strbuf_append(b, " *ROWTIME*");
  else if (t->time_attr == SL_TIME_PROCTIME)
    sl_strbuf_append(b, " *PROCTIME*");
}

const char *sl_type_name(sl_arena *a, const sl_type *t) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_type_format(&b, t);
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

int sl_type_find_field(const sl_type *row, const char *name) {
  if (!row || row->kind != SL_TYPE_ROW)
    return -1;
  for (int i = 0; i < row->nfields; i++)
    if (strcmp(row->fields[i].name, name) == 0)
      return i;
  int found = -1;
  for (int i = 0; i < row->nfields; i++) {
    if (strcasecmp(row->fields[i].name, name) == 0) {
      if (found >= 0)
        return -1; /* ambiguous without exact case */
      found = i;
    }
  }
  return found;
}
