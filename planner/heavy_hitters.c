/* heavy_hitters.c - space-saving top-k (Metwally et al.), statistics.h.
 *
 * k counters.  A counted item increments its counter; an uncounted one
 * takes over the counter with the smallest count c and starts at c + 1
 * with error c.  Hence count overestimates by at most error <= n / k, and
 * any item more frequent than n / k holds a counter.  Of several smallest
 * counters the first (lowest index) is taken, so a sketch is the same
 * whatever finds it.  Lookups go through a small hash index and the
 * smallest counter is the root of a heap ordered by (count, index): a
 * scan of the k keys and another of the k counts per record was most of
 * the time of sampling a stream of many distinct keys.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/planner/statistics.h"

struct sl_hh {
  int k;
  int used;
  uint64_t total;
  sl_hh_item *items;
  /* key -> counter: linear probing over slots holding index + 1 (0:
   * empty), at most half full */
  uint32_t *slots;
  uint32_t mask;
  /* a min-heap of counter indexes by (count, index), and each counter's
   * place in it */
  int *heap, *place;
};

sl_hh *sl_hh_new(sl_arena *a, int k) {
  if (k < 1)
    k = 1;
  if (k > SL_HH_MAX_K)
    k = SL_HH_MAX_K;
  sl_hh *h = SL_ANEW(a, sl_hh);
  h->k = k;
  h->items = SL_ANEW_N(a, sl_hh_item, k);
  uint32_t n = 4;
  while (n < 2u * (uint32_t)k)
    n *= 2;
  h->slots = SL_ANEW_N(a, uint32_t, n);
  h->mask = n - 1;
  h->heap = SL_ANEW_N(a, int, k);
  h->place = SL_ANEW_N(a, int, k);
  return h;
}

static uint32_t slot_of(const sl_hh *h, uint64_t key) {
  key ^= key >> 29; /* keys are hashes already; fold the high bits in */
  return (uint32_t)key & h->mask;
}

/* The counter holding key, or -1. */
static int find(const sl_hh *h, uint64_t key) {
  for (uint32_t s = slot_of(h, key);; s = (s + 1) & h->mask) {
    uint32_t v = h->slots[s];
    if (v == 0)
      return -1;
    if (h->items[v - 1].key == key)
      return (int)v - 1;
  }
}

static void index_add(sl_hh *h, int i) {
  uint32_t s = slot_of(h, h->items[i].key);
  while (h->slots[s])
    s = (s + 1) & h->mask;
  h->slots[s] = (uint32_t)i + 1;
}

/* Counter i's key leaves the index (backward-shift deletion). */
static void index_remove(sl_hh *h, int i) {
  uint32_t s = slot_of(h, h->items[i].key);
  while (h->slots[s] != (uint32_t)i + 1)
    s = (s + 1) & h->mask;
  for (uint32_t next = (s + 1) & h->mask; h->slots[next];
       next = (next + 1) & h->mask) {
    uint32_t home = slot_of(h, h->items[h->slots[next] - 1].key);
    /* next's entry may move to s if s lies on its probe path */
    if (((next - home) & h->mask) >= ((next - s) & h->mask)) {
      h->slots[s] = h->slots[next];
      s = next;
    }
  }
  h->slots[s] = 0;
}

static bool before(const sl_hh *h, int a, int b) {
  uint64_t ca = h->items[a].count, cb = h->items[b].count;
  return ca != cb ? ca < cb : a < b;
}

static void heap_put(sl_hh *h, int at, int i) {
  h->heap[at] = i;
  h->place[i] = at;
}

static void sift_down(sl_hh *h, int at) {
  int i = h->heap[at];
  for (;;) {
    int c = 2 * at + 1;
    if (c >= h->used)
      break;
    if (c + 1 < h->used && before(h, h->heap[c + 1], h->heap[c]))
      c++;
    if (!before(h, h->heap[c], i))
      break;
    heap_put(h, at, h->heap[c]);
    at = c;
  }
  heap_put(h, at, i);
}

static void sift_up(sl_hh *h, int at) {
  int i = h->heap[at];
  while (at > 0 && before(h, i, h->heap[(at - 1) / 2])) {
    heap_put(h, at, h->heap[(at - 1) / 2]);
    at = (at - 1) / 2;
  }
  heap_put(h, at, i);
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
  int i = find(h, key);
  if (i >= 0) {
    h->items[i].count++;
    sift_down(h, h->place[i]);
    return;
  }
  sl_hh_item *it;
  if (h->used < h->k) {
    i = h->used++;
    it = &h->items[i];
    it->count = 1;
    it->error = 0;
    it->key = key;
    heap_put(h, h->used - 1, i);
    sift_up(h, h->used - 1);
  } else {
    i = h->heap[0]; /* the smallest count, the first of equals */
    it = &h->items[i];
    index_remove(h, i);
    it->error = it->count;
    it->count++;
    it->key = key;
    sift_down(h, 0);
  }
  index_add(h, i);
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
