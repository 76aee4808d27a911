/* stats_cache.c - a session's cache of source statistics (statistics.h),
 * so that repeated EXPLAINs of queries over one table do not resample.
 *
 * Entries are few (one per table and key set), so a small array scanned
 * with strcmp is enough.  Each entry owns the arena its statistics were
 * built in; the key includes the table's CREATE text, so dropping and
 * re-creating a table with other options misses instead of serving stale
 * numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/planner/statistics.h"

typedef struct cache_entry {
  char *key; /* heap */
  sl_arena arena;
  const sl_table_stats *stats;
  uint64_t seq; /* insertion order, for eviction */
} cache_entry;

struct sl_stats_cache {
  int n;
  uint64_t next_seq;
  cache_entry e[SL_STATS_CACHE_MAX];
};

sl_stats_cache *sl_stats_cache_new(void) {
  return calloc(1, sizeof(sl_stats_cache));
}

static void entry_free(cache_entry *e) {
  free(e->key);
  sl_arena_free(&e->arena);
  memset(e, 0, sizeof *e);
}

void sl_stats_cache_free(sl_stats_cache *c) {
  if (!c)
    return;
  for (int i = 0; i < c->n; i++)
    entry_free(&c->e[i]);
  free(c);
}

int sl_stats_cache_count(const sl_stats_cache *c) {
  return c ? c->n : 0;
}

static void append_expr(sl_strbuf *b, const char *what, const sl_bexpr *e) {
  sl_strbuf_printf(b, "\x1f%s:", what);
  if (e)
    sl_bexpr_format(b, e);
}

const char *sl_stats_cache_key(sl_arena *a, const sl_table_def *t, int nkeys,
                               const sl_bexpr *const *keys,
                               const sl_bexpr *rowtime,
                               const sl_stats_options *opt) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s\x1f%s", t->name, t->create_sql ? t->create_sql : "");
  for (int i = 0; i < nkeys; i++)
    append_expr(&b, "key", keys[i]);
  append_expr(&b, "rowtime", rowtime);
  if (opt) {
    append_expr(&b, "filter", opt->filter);
    sl_strbuf_printf(&b, "\x1f%llu/%g/%d/%d/%d/%u",
                     (unsigned long long)opt->max_records, opt->max_seconds,
                     opt->hll_p, opt->hh_k, opt->top, opt->buffer_size);
  }
  const char *k = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return k;
}

static cache_entry *find(sl_stats_cache *c, const char *key) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->e[i].key, key) == 0)
      return &c->e[i];
  return NULL;
}

const sl_table_stats *sl_stats_cache_lookup(sl_stats_cache *c,
                                            const char *key) {
  cache_entry *e = find(c, key);
  return e ? e->stats : NULL;
}

const sl_table_stats *sl_stats_cache_insert(sl_stats_cache *c, const char *key,
                                            sl_arena *owner,
                                            const sl_table_stats *stats) {
  cache_entry *e = find(c, key);
  if (e) {
    entry_free(e);
  } else if (c->n < SL_STATS_CACHE_MAX) {
    e = &c->e[c->n++];
  } else {
    e = &c->e[0];
    for (int i = 1; i < c->n; i++)
      if (c->e[i].seq < e->seq)
        e = &c->e[i];
    entry_free(e);
  }
  e->key = strdup(key);
  e->arena = *owner; /* the blocks move; the caller's arena starts over */
  sl_arena_init(owner, 0);
  e->stats = stats;
  e->seq = c->next_seq++;
  return stats;
}

int sl_stats_cache_sample(sl_stats_cache *c, const sl_table_def *t, int nkeys,
                          const sl_bexpr *const *keys, const sl_bexpr *rowtime,
                          const sl_stats_options *opt,
                          const sl_table_stats **out, bool *hit,
                          sl_error *err) {
  sl_arena tmp;
  sl_arena_init(&tmp, 0);
  const char *key = sl_stats_cache_key(&tmp, t, nkeys, keys, rowtime, opt);
  const sl_table_stats *st = sl_stats_cache_lookup(c, key);
  *hit = st != NULL;
  if (st) {
    sl_arena_free(&tmp);
    *out = st;
    return SL_OK;
  }
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_table_stats *fresh;
  int rc = sl_stats_sample(&a, t, nkeys, keys, rowtime, opt, &fresh, err);
  if (rc != SL_OK) {
    sl_arena_free(&a);
    sl_arena_free(&tmp);
    return rc;
  }
  *out = sl_stats_cache_insert(c, key, &a, fresh);
  sl_arena_free(&a);
  sl_arena_free(&tmp);
  return SL_OK;
}
