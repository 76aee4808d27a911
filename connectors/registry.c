/* registry.c - the registry of sources and sinks, flattened table
 * columns, and option parsing shared by every connector.
 *
 * The registry is two const tables; nothing here is mutable, so lookups
 * need no locking.  The names lists for messages are string literals kept
 * in step with the tables (test_csv_source checks that they agree).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/binder/binder.h"
#include "sluice/common/settings.h"
#include "sluice/connectors/connector.h"
#include "sluice/connectors/io_connectors.h"
#include "sources/generators.h"

/* ---- the registry ------------------------------------------------------ */

static const sl_source_connector *const sources[] = {
    &sl_source_nexmark, &sl_source_ysb,     &sl_source_cm,
    &sl_source_ro,      &sl_source_datagen, &sl_source_files,
};
static const char source_names[] = "nexmark, ysb, cm, ro, datagen, filesystem";

static const sl_sink_connector *const sinks[] = {
    &sl_sink_filesystem,
    &sl_sink_sqlite,
    &sl_sink_blackhole,
    &sl_sink_print,
};
static const char sink_names[] = "filesystem, sqlite, blackhole, print";

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const sl_source_connector *sl_source_connector_find(const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < COUNT(sources); i++)
    if (strcasecmp(sources[i]->name, name) == 0)
      return sources[i];
  return NULL;
}

const sl_sink_connector *sl_sink_connector_find(const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < COUNT(sinks); i++)
    if (strcasecmp(sinks[i]->name, name) == 0)
      return sinks[i];
  return NULL;
}

const sl_sink_connector *sl_shell_sink_connector(void) {
  return &sl_sink_shell;
}

const char *sl_source_connector_names(void) {
  return source_names;
}
const char *sl_sink_connector_names(void) {
  return sink_names;
}

/* ---- leaf columns ------------------------------------------------------ */

static int count_leaves(const sl_type *t) {
  if (t->kind != SL_TYPE_ROW)
    return 1;
  int n = 0;
  for (int i = 0; i < t->nfields; i++)
    n += count_leaves(t->fields[i].type);
  return n;
}

static void add_leaves(sl_arena *a, const char *prefix, const sl_type *t,
                       sl_leaf_columns *out) {
  if (t->kind != SL_TYPE_ROW) {
    out->names[out->n] = prefix;
    out->types[out->n] = t;
    out->n++;
    return;
  }
  for (int i = 0; i < t->nfields; i++)
    add_leaves(a, sl_arena_printf(a, "%s.%s", prefix, t->fields[i].name),
               t->fields[i].type, out);
}

void sl_table_leaf_columns(sl_arena *a, const sl_table_def *t,
                           sl_leaf_columns *out) {
  int total = 0;
  for (int i = 0; i < t->ncolumns; i++)
    if (!t->columns[i].computed_sql)
      total += count_leaves(t->columns[i].type);
  out->n = 0;
  out->names = SL_ANEW_N(a, const char *, total > 0 ? total : 1);
  out->types = SL_ANEW_N(a, const sl_type *, total > 0 ? total : 1);
  for (int i = 0; i < t->ncolumns; i++)
    if (!t->columns[i].computed_sql)
      add_leaves(a, t->columns[i].name, t->columns[i].type, out);
}

/* ---- options ----------------------------------------------------------- */

int sl_option_int(const sl_table_def *t, const char *key, int64_t fallback,
                  int64_t *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  while (*end == ' ')
    end++;
  if (errno || end == v || *end)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' must be an integer between "
                        "%lld and %lld, got '%s'",
                        t->name, key, (long long)INT64_MIN,
                        (long long)INT64_MAX, v);
  *out = x;
  return SL_OK;
}

int sl_option_duration_ms(const sl_table_def *t, const char *key,
                          int64_t fallback, int64_t *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  double sec;
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  if (!sl_parse_duration(v, 0.001, &sec)) /* bare: ms, as in Flink */
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' must be a duration such as "
                        "'500 ms', '1 min' or '2 h', got '%s'",
                        t->name, key, v);
  *out = (int64_t)(sec * 1000 + 0.5);
  return SL_OK;
}

int sl_option_size(const sl_table_def *t, const char *key, int64_t fallback,
                   int64_t *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  double b;
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  if (!sl_parse_size(v, &b) || b < 1)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' must be a size such as "
                        "'128MB' or '64 kb', got '%s'",
                        t->name, key, v);
  *out = (int64_t)b;
  return SL_OK;
}

int sl_option_double(const sl_table_def *t, const char *key, double fallback,
                     double *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  while (*end == ' ')
    end++;
  if (errno || end == v || *end || !isfinite(x))
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' must be a number, got '%s'",
                        t->name, key, v);
  *out = x;
  return SL_OK;
}

int sl_option_bool(const sl_table_def *t, const char *key, bool fallback,
                   bool *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  if (strcasecmp(v, "true") == 0) {
    *out = true;
    return SL_OK;
  }
  if (strcasecmp(v, "false") == 0) {
    *out = false;
    return SL_OK;
  }
  return sl_error_set(err, SL_EINVAL,
                      "table '%s': option '%s' must be 'true' or 'false', "
                      "got '%s'",
                      t->name, key, v);
}

int sl_check_options(const sl_table_def *t, const char *connector,
                     const char *const *allowed, sl_error *err) {
  for (int i = 0; i < t->noptions; i++) {
    const char *key = t->options[i].key;
    bool ok = false;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = strcmp(*a, key) == 0;
    if (ok)
      continue;
    char list[512] = "";
    for (const char *const *a = allowed; *a; a++) {
      size_t n = strlen(list);
      snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", *a);
    }
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' is not supported by the "
                        "'%s' connector; supported options: %s",
                        t->name, key, connector, list);
  }
  return SL_OK;
}

int sl_leaf_of(const sl_bexpr *e, const char *const *column_names, char *buf,
               size_t cap) {
  const sl_bexpr *chain[16];
  int depth = 0;
  while (e && e->kind == SL_BEXPR_FIELD && depth < 16) {
    chain[depth++] = e;
    e = e->args[0];
  }
  if (!e || e->kind != SL_BEXPR_COLUMN || e->depth != 0 || e->index < 0)
    return -1;
  snprintf(buf, cap, "%s", column_names[e->index]);
  for (int d = depth - 1; d >= 0; d--) {
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, ".%s", chain[d]->name);
  }
  return e->index;
}

void sl_leaf_mark(const sl_leaf_columns *lc, bool *need, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; i < lc->n; i++)
    if (strcmp(lc->names[i], name) == 0 ||
        (strncmp(lc->names[i], name, n) == 0 && lc->names[i][n] == '.'))
      need[i] = true;
}

int sl_sink_close_after(const sl_sink_connector *sc, sl_sink *sink, int rc,
                        sl_error *err) {
  sl_error close_err = {0};
  int crc = sc->close(sink, rc == SL_OK, &close_err);
  if (rc == SL_OK && crc != SL_OK) {
    sl_error_move(err, &close_err);
    rc = crc;
  }
  sl_error_clear(&close_err);
  return rc;
}
