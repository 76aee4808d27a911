/* heavy_hitters.c - space-saving top-k (Metwally et al.), statistics.h.
 *
 * k counters.  A counted item increments its counter; an uncounted one
 * takes over the counter with the smallest count c and starts at c + 1
 * with error c.  Hence count overestimates by at most error <= n / k, and
 * any item more frequent than n / k holds a counter.  k is small (64 by
 * default), so lookups scan a contiguous array of hashes rather than keep
 * an index: 64 compares per record is cheap next to reading the record.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/planner/statistics.h"

struct sl_hh {
  int k;
  int used;
  uint64_t total;
  uint64_t *keys; /* keys[i] == items[i].key, scanned on every add */
  sl_hh_item *items;
};

sl_hh *sl_hh_new(sl_arena *a, int k) {
  if (k < 1)
    k = 1;
  if (k > SL_HH_MAX_K)
    k = SL_HH_MAX_K;
  sl_hh *h = SL_ANEW(a, sl_hh);
  h->k = k;
  h->keys = SL_ANEW_N(a, uint64_t, k);
  h->items = SL_ANEW_N(a, sl_hh_item, k);
  return h;
}

static void set_label(sl_hh_item *it, const void *label, size_t len) {
  if (len > SL_HH_LABEL_MAX)
    len = SL_HH_LABEL_MAX;
  it->label_len = (uint32_t)len;
  if (len)
    memcpy(it->label, label, len);
}

void sl_hh_add(sl_hh *h, uint64_t key, const void *label, size_t label_len) {
  h->total++;
  for (int i = 0; i < h->used; i++)
    if (h->keys[i] == key) {
      h->items[i].count++;
      return;
    }
  sl_hh_item *it;
  if (h->used < h->k) {
    it = &h->items[h->used];
    h->keys[h->used++] = key;
    it->count = 1;
    it->error = 0;
  } else {
    int min = 0;
    for (int i = 1; i < h->k; i++)
      if (h->items[i].count < h->items[min].count)
        min = i;
    it = &h->items[min];
    h->keys[min] = key;
    it->error = it->count;
    it->count++;
  }
  it->key = key;
  set_label(it, label, label_len);
}

uint64_t sl_hh_total(const sl_hh *h) {
  return h->total;
}

uint64_t sl_hh_error_bound(const sl_hh *h) {
  return h->total / (uint64_t)h->k;
}

static int by_count_desc(const void *x, const void *y) {
  const sl_hh_item *a = x, *b = y;
  if (a->count != b->count)
    return a->count < b->count ? 1 : -1;
  /* Ties: the smaller error (more certain) first, then by key so the order
   * does not depend on qsort. */
  if (a->error != b->error)
    return a->error < b->error ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}

int sl_hh_top(const sl_hh *h, sl_hh_item *out, int max) {
  if (max <= 0 || h->used == 0)
    return 0;
  sl_hh_item *all = malloc(sizeof(sl_hh_item) * (size_t)h->used);
  if (!all)
    return 0;
  memcpy(all, h->items, sizeof(sl_hh_item) * (size_t)h->used);
  qsort(all, (size_t)h->used, sizeof(sl_hh_item), by_count_desc);
  int n = h->used < max ? h->used : max;
  memcpy(out, all, sizeof(sl_hh_item) * (size_t)n);
  free(all);
  return n;
}
