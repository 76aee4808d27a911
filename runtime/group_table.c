/* group_table.c - hash table from group key to aggregate states.
 *
 * Entries are stored inline ([hash][key row][states]) in one power-of-two
 * array with linear probing; the table doubles at 3/4 load.  A key with
 * long strings keeps its bytes in the table's arena, so the input buffer
 * may be reused as soon as the row has been folded in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/aggregate.h"

uint64_t sl_key_hash(const sl_row_layout *l, const uint8_t *key) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ key[0]; /* first null-bitmap byte */
  for (int i = 0; i < l->nfields; i++) {
    const sl_field *f = &l->fields[i];
    if (sl_row_is_null(key, i))
      continue;
    const uint8_t *p = key + f->offset;
    if (f->ptype == SL_P_STR) {
      const sl_str *s = (const sl_str *)p;
      h = sl_mix64(h ^ sl_hash_bytes(sl_str_data(s), s->len));
    } else {
      uint64_t x = 0;
      memcpy(&x, p, f->size < 8 ? f->size : 8);
      if (f->size == 16) {
        uint64_t hi;
        memcpy(&hi, p + 8, 8);
        x ^= sl_mix64(hi);
      }
      h = sl_mix64(h ^ x);
    }
  }
  return h ? h : 1; /* 0 marks an empty slot */
}

static bool keys_equal(const sl_group_table *t, const uint8_t *a,
                       const uint8_t *b) {
  const sl_row_layout *l = t->key_layout;
  if (!t->key_has_strings)
    return memcmp(a, b, l->width) == 0;
  if (memcmp(a, b, l->null_bytes) != 0)
    return false;
  for (int i = 0; i < l->nfields; i++) {
    if (sl_row_is_null(a, i))
      continue;
    const sl_field *f = &l->fields[i];
    if (f->ptype == SL_P_STR) {
      if (!sl_str_equal((const sl_str *)(a + f->offset),
                        (const sl_str *)(b + f->offset)))
        return false;
    } else if (memcmp(a + f->offset, b + f->offset, f->size) != 0) {
      return false;
    }
  }
  return true;
}

static uint8_t *alloc_slots(uint32_t cap, uint32_t width) {
  uint8_t *p = calloc(cap, width);
  if (!p) {
    fprintf(stderr, "sluice: out of memory (group table of %u slots)\n", cap);
    abort();
  }
  return p;
}

void sl_group_table_init(sl_group_table *t, const sl_row_layout *key_layout,
                         const sl_agg_set *aggs, uint32_t initial_cap) {
  memset(t, 0, sizeof *t);
  t->key_layout = key_layout;
  t->aggs = aggs;
  for (int i = 0; i < key_layout->nfields; i++)
    if (key_layout->fields[i].ptype == SL_P_STR)
      t->key_has_strings = true;
  t->entry_width = (8 + key_layout->width + aggs->state_width + 7u) & ~7u;
  uint32_t cap = 16;
  while (cap < initial_cap)
    cap *= 2;
  t->cap = cap;
  t->slots = alloc_slots(cap, t->entry_width);
  sl_arena_init(&t->arena, 16 * 1024);
}

void sl_group_table_free(sl_group_table *t) {
  free(t->slots);
  t->slots = NULL;
  sl_arena_free(&t->arena);
  t->cap = t->count = 0;
}

static void grow(sl_group_table *t) {
  uint32_t old_cap = t->cap;
  uint8_t *old = t->slots;
  t->cap *= 2;
  t->slots = alloc_slots(t->cap, t->entry_width);
  uint32_t mask = t->cap - 1;
  for (uint32_t i = 0; i < old_cap; i++) {
    uint8_t *e = old + (size_t)i * t->entry_width;
    uint64_t h = *(uint64_t *)e;
    if (!h)
      continue;
    uint32_t j = (uint32_t)h & mask;
    while (*(uint64_t *)(t->slots + (size_t)j * t->entry_width))
      j = (j + 1) & mask;
    memcpy(t->slots + (size_t)j * t->entry_width, e, t->entry_width);
  }
  free(old);
}

uint8_t *sl_group_table_upsert(sl_group_table *t, uint64_t hash,
                               const uint8_t *key) {
  if ((t->count + 1) * 4 > t->cap * 3)
    grow(t);
  uint32_t mask = t->cap - 1;
  const uint32_t kw = t->key_layout->width;
  for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
    uint8_t *e = t->slots + (size_t)i * t->entry_width;
    uint64_t h = *(uint64_t *)e;
    if (h == hash && keys_equal(t, e + 8, key))
      return e + 8 + kw;
    if (h == 0) {
      *(uint64_t *)e = hash;
      memcpy(e + 8, key, kw);
      if (t->key_has_strings) {
        /* Keep long key strings alive with the table. */
        const sl_row_layout *l = t->key_layout;
        for (int f = 0; f < l->nfields; f++) {
          sl_str *s = (sl_str *)(e + 8 + l->fields[f].offset);
          if (l->fields[f].ptype == SL_P_STR && !sl_row_is_null(e + 8, f) &&
              s->len > SL_STR_INLINE)
            s->u.ptr = sl_arena_strndup(&t->arena, s->u.ptr, s->len);
        }
      }
      sl_agg_state_init(t->aggs, e + 8 + kw);
      t->count++;
      return e + 8 + kw;
    }
  }
}

int sl_group_table_merge(sl_group_table *dst, const sl_group_table *src,
                         sl_error *err) {
  /* Visit src's slots in a scattered order (an odd multiplier permutes the
   * indexes of a power-of-two table).  In slot order, src's keys would
   * arrive sorted by the low bits of their hash, and inserting keys in
   * home-slot order into a well-filled linear-probing table builds one
   * ever longer probe run: merging two disjoint halves of a million keys
   * took seconds instead of milliseconds. */
  uint32_t mask = src->cap - 1;
  for (uint32_t k = 0; k < src->cap; k++) {
    uint32_t i = (uint32_t)(k * 0x9E3779B1u) & mask;
    if (!sl_group_table_slot_used(src, i))
      continue;
    const uint8_t *e = src->slots + (size_t)i * src->entry_width;
    uint8_t *states = sl_group_table_upsert(dst, *(const uint64_t *)e, e + 8);
    int rc = sl_agg_merge(dst->aggs, states, sl_group_table_states(src, i),
                          &dst->arena, err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

size_t sl_group_table_bytes(const sl_group_table *t) {
  return (size_t)t->cap * t->entry_width + t->arena.total;
}
