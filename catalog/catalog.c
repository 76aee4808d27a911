/* catalog.c - the session's tables and views (catalog.h).
 *
 * A small array kept sorted by name: catalogs hold tens of entries, so
 * binary search is not worth it and name order makes SHOW TABLES trivial.
 * Each entry owns an arena with everything it points to.
 */
#include "sluice/catalog/catalog.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/catalog/functions.h"

struct sl_catalog {
  int n;
  int cap;
  sl_table_def **entries; /* sorted by name (strcmp) */
};

sl_catalog *sl_catalog_new(void) {
  sl_catalog *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  return c;
}

void sl_catalog_free(sl_catalog *c) {
  if (!c)
    return;
  for (int i = 0; i < c->n; i++)
    sl_table_def_free(c->entries[i]);
  free(c->entries);
  free(c);
}

sl_table_def *sl_table_def_new(sl_table_kind kind, const char *name) {
  sl_table_def *d = calloc(1, sizeof *d);
  if (!d)
    abort();
  sl_arena_init(&d->arena, 4096);
  d->kind = kind;
  d->name = sl_arena_strdup(&d->arena, name ? name : "");
  d->rowtime_column = -1;
  return d;
}

void sl_table_def_free(sl_table_def *def) {
  if (!def)
    return;
  sl_arena_free(&def->arena);
  free(def);
}

/* Index of the exact name, or -1. */
static int find_exact(const sl_catalog *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->entries[i]->name, name) == 0)
      return i;
  return -1;
}

/* Exact match first, then a unique case-insensitive one (Flink is
 * case-sensitive; this is friendlier and never ambiguous). */
static int find_index(const sl_catalog *c, const char *name) {
  int i = find_exact(c, name);
  if (i >= 0)
    return i;
  int found = -1;
  for (i = 0; i < c->n; i++) {
    if (strcasecmp(c->entries[i]->name, name) == 0) {
      if (found >= 0)
        return -1;
      found = i;
    }
  }
  return found;
}

int sl_catalog_add(sl_catalog *c, sl_table_def *def, bool replace,
                   sl_error *err) {
  int old = find_exact(c, def->name);
  if (old >= 0) {
    if (!replace) {
      int rc = sl_error_set(
          err, SL_ECATALOG, "%s '%s' already exists",
          c->entries[old]->kind == SL_TABLE_VIEW ? "view" : "table", def->name);
      sl_table_def_free(def);
      return rc;
    }
    sl_table_def_free(c->entries[old]);
    memmove(&c->entries[old], &c->entries[old + 1],
            sizeof(*c->entries) * (size_t)(c->n - old - 1));
    c->n--;
  }
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 16;
    c->entries = realloc(c->entries, sizeof(*c->entries) * (size_t)c->cap);
    if (!c->entries)
      abort();
  }
  int pos = 0;
  while (pos < c->n && strcmp(c->entries[pos]->name, def->name) < 0)
    pos++;
  memmove(&c->entries[pos + 1], &c->entries[pos],
          sizeof(*c->entries) * (size_t)(c->n - pos));
  c->entries[pos] = def;
  c->n++;
  return SL_OK;
}

const sl_table_def *sl_catalog_find(const sl_catalog *c, const char *name) {
  if (!c || !name)
    return NULL;
  int i = find_index(c, name);
  return i >= 0 ? c->entries[i] : NULL;
}

bool sl_catalog_drop(sl_catalog *c, const char *name) {
  int i = find_index(c, name);
  if (i < 0)
    return false;
  sl_table_def_free(c->entries[i]);
  memmove(&c->entries[i], &c->entries[i + 1],
          sizeof(*c->entries) * (size_t)(c->n - i - 1));
  c->n--;
  return true;
}

int sl_catalog_count(const sl_catalog *c) {
  return c ? c->n : 0;
}

const sl_table_def *sl_catalog_at(const sl_catalog *c, int i) {
  if (!c || i < 0 || i >= c->n)
    return NULL;
  return c->entries[i];
}

const char *sl_catalog_suggest(const sl_catalog *c, const char *name) {
  if (!c || c->n == 0)
    return NULL;
  const char **names = malloc(sizeof(*names) * (size_t)c->n);
  if (!names)
    abort();
  for (int i = 0; i < c->n; i++)
    names[i] = c->entries[i]->name;
  const char *best = sl_closest_name(name, names, c->n);
  free(names);
  return best;
}

const char *sl_table_def_option(const sl_table_def *def, const char *key) {
  for (int i = 0; i < def->noptions; i++)
    if (strcmp(def->options[i].key, key) == 0)
      return def->options[i].value;
  return NULL;
}

int sl_table_def_find_column(const sl_table_def *def, const char *name) {
  for (int i = 0; i < def->ncolumns; i++)
    if (strcmp(def->columns[i].name, name) == 0)
      return i;
  int found = -1;
  for (int i = 0; i < def->ncolumns; i++) {
    if (strcasecmp(def->columns[i].name, name) == 0) {
      if (found >= 0)
        return -1;
      found = i;
    }
  }
  return found;
}
