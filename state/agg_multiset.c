/* agg_multiset.c - MIN, MAX and DISTINCT aggregates that can take a row
 * back: per group, every value with its count, in order (see
 * agg_multiset.h).
 *
 * A value is kept as a one-field row of the argument's type (its long
 * string in the same block), so values compare as sorted results do and a
 * result is computed by the ordinary aggregate code: the values present
 * are folded into a fresh state of the aggregate without DISTINCT (MIN:
 * the first, MAX: the last, DISTINCT: each once) and that is finalized.
 */
#include "sluice/state/agg_multiset.h"

#include <stdlib.h>
#include <string.h>

#include "sluice/binder/binder.h"
#include "sluice/state/sorted_result.h"

typedef struct mvalue {
  uint8_t *row; /* a row of the aggregate's value layout, in its block */
  int64_t count;
  size_t size; /* of its block */
} mvalue;

typedef struct mset {
  mvalue *v; /* ascending */
  int n, cap;
} mset;

typedef struct mgroup {
  struct mgroup *next;
  uint64_t hash;
  uint8_t *key; /* group row, its long strings after it */
  size_t size;
  mset sets[]; /* one per aggregate here */
} mgroup;

/* One aggregate kept here. */
typedef struct magg {
  int agg;                     /* its index in the stage's aggregates */
  const sl_row_layout *values; /* one field: the argument */
  sl_agg_set plain;            /* the aggregate alone, without DISTINCT,
                                * over rows of `values` */
  uint8_t *state;              /* scratch: plain's state */
} magg;

struct agg_multisets {
  const sl_agg_set *aggs;
  const sl_row_layout *group_layout;
  int n;
  magg *m;
  int *slot; /* per aggregate of aggs: its index in m, or -1 */
  mgroup **buckets;
  uint32_t cap, count;
  uint64_t bytes;
  uint8_t *scratch; /* a value row */
  sl_arena strings; /* MIN/MAX string copies made while finalizing, dead
                     * once the result row holds its own */
};

static const sl_border ascending = {.column = 0};

agg_multisets *agg_multisets_new(sl_arena *a, const sl_agg_set *aggs,
                                 const sl_row_layout *group_layout) {
  int n = 0;
  for (int i = 0; i < aggs->n; i++)
    n += aggs->aggs[i].distinct || aggs->aggs[i].op == SL_AGG_MIN ||
         aggs->aggs[i].op == SL_AGG_MAX;
  if (n == 0)
    return NULL;
  agg_multisets *m = calloc(1, sizeof *m);
  if (!m)
    abort();
  m->aggs = aggs;
  m->group_layout = group_layout;
  m->m = SL_ANEW_N(a, magg, n);
  m->slot = SL_ANEW_N(a, int, aggs->n);
  uint32_t widest = 8;
  for (int i = 0; i < aggs->n; i++) {
    const sl_agg_desc *d = &aggs->aggs[i];
    m->slot[i] = -1;
    if (!d->distinct && d->op != SL_AGG_MIN && d->op != SL_AGG_MAX)
      continue;
    magg *g = &m->m[m->n];
    g->agg = i;
    const sl_type *t = aggs->input->fields[d->in_field].type;
    g->values = sl_row_layout_new(a, 1, NULL, &t);
    sl_agg_desc p = *d;
    p.distinct = false;
    p.in_field = 0;
    p.filter_field = -1;
    sl_error e = {0};
    if (sl_agg_set_init(a, &g->plain, 1, &p, g->values, &e) != SL_OK)
      abort(); /* the same aggregate over the same type was accepted */
    g->state = sl_arena_zalloc(a, g->plain.state_width + 8);
    if (g->values->width > widest)
      widest = g->values->width;
    m->slot[i] = m->n++;
  }
  m->scratch = sl_arena_zalloc(a, widest);
  sl_arena_init(&m->strings, 0);
  return m;
}

bool agg_multisets_has(const agg_multisets *m, int i) {
  return m && m->slot[i] >= 0;
}

int agg_multisets_states(const agg_multisets *m, sl_arena *a,
                         const sl_agg_set *aggs, sl_agg_set *out,
                         sl_error *err) {
  sl_agg_desc *d = SL_ANEW_N(a, sl_agg_desc, aggs->n > 0 ? aggs->n : 1);
  for (int i = 0; i < aggs->n; i++) {
    d[i] = aggs->aggs[i];
    if (!agg_multisets_has(m, i))
      continue;
    sl_type *t = sl_type_new(a, SL_TYPE_BIGINT);
    t->not_null = true;
    d[i] = (sl_agg_desc){.op = SL_AGG_COUNT_STAR,
                         .in_field = -1,
                         .filter_field = -1,
                         .out_type = t};
  }
  return sl_agg_set_init(a, out, aggs->n, d, aggs->input, err);
}

/* Free a group; returns the bytes it held. */
static uint64_t free_group(mgroup *g, int n) {
  uint64_t bytes = g->size;
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < g->sets[k].n; i++) {
      bytes += g->sets[k].v[i].size;
      free(g->sets[k].v[i].row);
    }
    bytes += sizeof *g->sets[k].v * (size_t)g->sets[k].cap;
    free(g->sets[k].v);
  }
  free(g);
  return bytes;
}

void agg_multisets_remove(agg_multisets *m, uint64_t hash, const uint8_t *key) {
  if (!m || !m->cap)
    return;
  for (mgroup **p = &m->buckets[hash & (m->cap - 1)]; *p; p = &(*p)->next) {
    mgroup *g = *p;
    if (g->hash != hash || !sl_key_equal(m->group_layout, g->key, key))
      continue;
    *p = g->next;
    m->count--;
    m->bytes -= free_group(g, m->n);
    return;
  }
}

void agg_multisets_free(agg_multisets *m) {
  if (!m)
    return;
  for (uint32_t b = 0; b < m->cap; b++)
    for (mgroup *g = m->buckets[b], *next; g; g = next) {
      next = g->next;
      (void)free_group(g, m->n);
    }
  free(m->buckets);
  sl_arena_free(&m->strings);
  free(m);
}

static void grow(agg_multisets *m) {
  uint32_t cap = m->cap ? m->cap * 2 : 1024;
  mgroup **b = calloc(cap, sizeof *b);
  if (!b)
    abort();
  for (uint32_t i = 0; i < m->cap; i++)
    for (mgroup *g = m->buckets[i], *next; g; g = next) {
      next = g->next;
      g->next = b[g->hash & (cap - 1)];
      b[g->hash & (cap - 1)] = g;
    }
  m->bytes += sizeof *b * (size_t)(cap - m->cap);
  free(m->buckets);
  m->buckets = b;
  m->cap = cap;
}

static mgroup *find_group(agg_multisets *m, uint64_t hash, const uint8_t *key,
                          bool create) {
  if (create && m->count + 1 > m->cap)
    grow(m);
  if (!m->cap)
    return NULL;
  mgroup **slot = &m->buckets[hash & (m->cap - 1)];
  for (mgroup *g = *slot; g; g = g->next)
    if (g->hash == hash && sl_key_equal(m->group_layout, g->key, key))
      return g;
  if (!create)
    return NULL;
  const sl_row_layout *gl = m->group_layout;
  size_t head = sizeof(mgroup) + sizeof(mset) * (size_t)m->n;
  head = (head + 7) & ~(size_t)7;
  size_t size = head + gl->width + sl_row_long_bytes(gl, key);
  mgroup *g = calloc(1, size);
  if (!g)
    abort();
  g->hash = hash;
  g->size = size;
  g->key = (uint8_t *)g + head;
  sl_row_copy_deep(gl, key, g->key, (char *)g->key + gl->width);
  g->next = *slot;
  *slot = g;
  m->count++;
  m->bytes += size;
  return g;
}

/* The first place in s whose value is not below v; *found: it equals v. */
static int lower_bound(const magg *a, const mset *s, const uint8_t *v,
                       bool *found) {
  int lo = 0, hi = s->n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (sorted_result_compare(a->values, &ascending, 1, s->v[mid].row, v) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = lo < s->n && sorted_result_compare(a->values, &ascending, 1,
                                              s->v[lo].row, v) == 0;
  return lo;
}

static int update_one(agg_multisets *m, const magg *a, mset *s,
                      const uint8_t *v, bool adds, bool lenient,
                      sl_error *err) {
  bool found;
  int at = lower_bound(a, s, v, &found);
  if (found) {
    s->v[at].count += adds ? 1 : -1;
    if (s->v[at].count > 0)
      return SL_OK;
    m->bytes -= s->v[at].size;
    free(s->v[at].row);
    memmove(&s->v[at], &s->v[at + 1], sizeof *s->v * (size_t)(s->n - at - 1));
    s->n--;
    return SL_OK;
  }
  if (!adds)
    return lenient ? SL_OK
                   : sl_error_set(err, SL_EINTERNAL,
                                  "an aggregate's input took back a value it "
                                  "never added");
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 4;
    s->v = realloc(s->v, sizeof *s->v * (size_t)cap);
    if (!s->v)
      abort();
    m->bytes += sizeof *s->v * (size_t)(cap - s->cap);
    s->cap = cap;
  }
  size_t size = a->values->width + sl_row_long_bytes(a->values, v);
  uint8_t *row = malloc(size);
  if (!row)
    abort();
  sl_row_copy_deep(a->values, v, row, (char *)row + a->values->width);
  memmove(&s->v[at + 1], &s->v[at], sizeof *s->v * (size_t)(s->n - at));
  s->v[at] = (mvalue){row, 1, size};
  s->n++;
  m->bytes += size;
  return SL_OK;
}

int agg_multisets_update(agg_multisets *m, uint64_t hash, const uint8_t *key,
                         const uint8_t *row, bool adds, bool lenient,
                         sl_error *err) {
  const sl_row_layout *in = m->aggs->input;
  mgroup *g = NULL;
  for (int k = 0; k < m->n; k++) {
    const magg *a = &m->m[k];
    const sl_agg_desc *d = &m->aggs->aggs[a->agg];
    if (d->filter_field >= 0 && (sl_row_is_null(row, d->filter_field) ||
                                 !*(row + in->fields[d->filter_field].offset)))
      continue;
    if (sl_row_is_null(row, d->in_field))
      continue; /* aggregates ignore NULLs */
    if (!g)
      g = find_group(m, hash, key, adds);
    if (!g)
      return lenient ? SL_OK
                     : sl_error_set(err, SL_EINTERNAL,
                                    "an aggregate's input took back a row "
                                    "of a group it never had");
    /* The value as a row of its own layout (its long string stays where
     * it is: update_one copies what it keeps). */
    uint8_t *v = m->scratch;
    memset(v, 0, a->values->width);
    memcpy(v + a->values->fields[0].offset,
           row + in->fields[d->in_field].offset, a->values->fields[0].size);
    int rc = update_one(m, a, &g->sets[k], v, adds, lenient, err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

int agg_multisets_finalize(agg_multisets *m, int i, uint64_t hash,
                           const uint8_t *key, sl_buffer *out, uint8_t *out_row,
                           int field, sl_error *err) {
  int k = m->slot[i];
  magg *a = &m->m[k];
  const sl_agg_desc *d = &m->aggs->aggs[i];
  mgroup *g = find_group(m, hash, key, false);
  const mset *s = g ? &g->sets[k] : NULL;
  sl_agg_state_init(&a->plain, a->state);
  /* MIN and MAX fold only their end; strings are not copied (no arena:
   * the values live in the set until the row is written). */
  int from = 0, to = s ? s->n : 0;
  if (s && s->n > 0 && !d->distinct) {
    from = d->op == SL_AGG_MAX ? s->n - 1 : 0;
    to = from + 1;
  }
  /* Its copies die with the result written: the arena is emptied once it
   * grows, not per row (a new arena costs a block per call). */
  if (m->strings.total > (1u << 20)) {
    sl_arena_free(&m->strings);
    sl_arena_init(&m->strings, 0);
  }
  int rc = SL_OK;
  for (int j = from; j < to && rc == SL_OK; j++)
    rc = sl_agg_update(&a->plain, a->state, s->v[j].row, &m->strings, err);
  if (rc == SL_OK)
    rc = sl_agg_finalize(&a->plain, 0, a->state, out, out_row, field, err);
  return rc;
}

uint64_t agg_multisets_bytes(const agg_multisets *m) {
  return m ? m->bytes : 0;
}
