/* group_table.c - hash table from group key to aggregate states.
 *
 * Entries are stored inline ([hash][key row][states]) in one power-of-two
 * array with linear probing; the table doubles at 3/4 load.  A key with
 * long strings keeps its bytes in the table's arena, so the input buffer
 * may be reused as soon as the row has been folded in.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sluice/state/aggregate.h"
#include "sluice/state/memory_account.h"

/* One non-NULL field into the running hash. */
static uint64_t field_hash(uint64_t h, const sl_field *f, const uint8_t *p) {
  if (f->ptype == SL_P_STR) {
    const sl_str *s = (const sl_str *)p;
    return sl_mix64(h ^ sl_hash_bytes(sl_str_data(s), s->len));
  }
  uint64_t x = 0;
  memcpy(&x, p, f->size < 8 ? f->size : 8);
  if (f->size == 16) {
    uint64_t hi;
    memcpy(&hi, p + 8, 8);
    x ^= sl_mix64(hi);
  }
  return sl_mix64(h ^ x);
}

uint64_t sl_key_hash(const sl_row_layout *l, const uint8_t *key) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ key[0]; /* first null-bitmap byte */
  for (int i = 0; i < l->nfields; i++)
    if (!sl_row_is_null(key, i))
      h = field_hash(h, &l->fields[i], key + l->fields[i].offset);
  return h ? h : 1; /* 0 marks an empty slot */
}

uint64_t sl_fields_hash(const sl_row_layout *l, const uint8_t *row, int n,
                        const int *fields) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < n; i++) {
    const sl_field *f = &l->fields[fields[i]];
    h = sl_row_is_null(row, fields[i]) ? sl_mix64(h ^ 0x5bd1e995u)
                                       : field_hash(h, f, row + f->offset);
  }
  return h ? h : 1;
}

bool sl_key_equal(const sl_row_layout *l, const uint8_t *a, const uint8_t *b) {
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

static bool keys_equal(const sl_group_table *t, const uint8_t *a,
                       const uint8_t *b) {
  if (!t->key_has_strings) {
    /* the common widths with a constant size, compared inline (a call to
     * memcmp per probe was a tenth of a HOP merge) */
    switch (t->key_layout->width) {
    case 8:
      return memcmp(a, b, 8) == 0;
    case 16:
      return memcmp(a, b, 16) == 0;
    case 24:
      return memcmp(a, b, 24) == 0;
    case 32:
      return memcmp(a, b, 32) == 0;
    default:
      return memcmp(a, b, t->key_layout->width) == 0;
    }
  }
  return sl_key_equal(t->key_layout, a, b);
}

/* ---- the slot pool ------------------------------------------------------- */

#define POOL_MAX_ARRAYS 32

/* A slot array of `bytes`, zeroed, and its release (slots_free with the
 * same size).  From 2 MiB on an array is a mapping of its own advised into
 * huge pages: a table of millions of groups is probed at random, and with
 * 4 KiB pages nearly every probe (and every prefetch) also missed the TLB.
 * Every page is written once here: see alloc_slots_raw for why. */
#define SLOTS_MAPPED ((size_t)2 << 20)
static uint8_t *slots_new(size_t bytes) {
  if (bytes < SLOTS_MAPPED) {
    uint8_t *p = bytes >= ((size_t)64 << 10) ? malloc(bytes) : calloc(1, bytes);
    if (p && bytes >= ((size_t)64 << 10))
      explicit_bzero(p, bytes); /* not memset: compilers make that calloc */
    return p;
  }
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  (void)madvise(m, bytes, MADV_HUGEPAGE); /* advice: works without */
  volatile uint8_t *v = m;
  for (size_t off = 0; off < bytes; off += 4096)
    v[off] = 0; /* a fresh mapping is zero already */
  return m;
}

static void slots_free(uint8_t *a, size_t bytes) {
  if (bytes < SLOTS_MAPPED)
    free(a);
  else if (a)
    munmap(a, bytes);
}

struct sl_slot_pool {
  pthread_mutex_t lock;
  size_t max_bytes, held;
  sl_memory_account *budget; /* held counts there (charged) */
  uint64_t charged;
  int n;
  size_t size[POOL_MAX_ARRAYS];
  uint8_t *array[POOL_MAX_ARRAYS];
};

sl_slot_pool *sl_slot_pool_new(size_t max_bytes) {
  sl_slot_pool *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  pthread_mutex_init(&p->lock, NULL);
  p->max_bytes = max_bytes;
  return p;
}

void sl_slot_pool_set_budget(sl_slot_pool *p, sl_memory_account *a) {
  p->budget = a;
}

void sl_slot_pool_free(sl_slot_pool *p) {
  if (!p)
    return;
  if (p->budget)
    sl_memory_charge(p->budget, &p->charged, 0);
  for (int i = 0; i < p->n; i++)
    slots_free(p->array[i], p->size[i]);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

/* A zeroed array of exactly `bytes` from the pool, or NULL. */
static uint8_t *pool_take(sl_slot_pool *p, size_t bytes) {
  uint8_t *a = NULL;
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->n; i++)
    if (p->size[i] == bytes) {
      a = p->array[i];
      p->held -= bytes;
      p->n--;
      p->array[i] = p->array[p->n];
      p->size[i] = p->size[p->n];
      break;
    }
  if (a && p->budget) /* the table that takes it counts it now */
    sl_memory_charge(p->budget, &p->charged, p->held);
  pthread_mutex_unlock(&p->lock);
  if (a)
    memset(a, 0, bytes);
  return a;
}

/* Keep `a` for reuse if the budget allows; else free it. */
static void pool_give(sl_slot_pool *p, uint8_t *a, size_t bytes) {
  pthread_mutex_lock(&p->lock);
  /* An array kept is memory held: only while the account has room for
   * it (its table's holder stops counting it when the table is freed). */
  bool kept = p->n < POOL_MAX_ARRAYS && p->held + bytes <= p->max_bytes &&
              (!p->budget || (p->held + bytes <= p->budget->limit / 8 &&
                              sl_memory_room_for(p->budget, bytes)));
  if (kept) {
    p->array[p->n] = a;
    p->size[p->n] = bytes;
    p->n++;
    p->held += bytes;
    if (p->budget)
      sl_memory_charge(p->budget, &p->charged, p->held);
  }
  pthread_mutex_unlock(&p->lock);
  if (!kept)
    slots_free(a, bytes);
}

/* Free every kept array: memory a table needs comes before reuse. */
static void pool_drain(sl_slot_pool *p) {
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->n; i++)
    slots_free(p->array[i], p->size[i]);
  p->n = 0;
  p->held = 0;
  if (p->budget)
    sl_memory_charge(p->budget, &p->charged, 0);
  pthread_mutex_unlock(&p->lock);
}

/* ---- the table ------------------------------------------------------------
 */

/* Zeroed slots.  Large arrays are written, not calloc'd: calloc maps them
 * to the shared zero page, the first probe reads it, and the write that
 * follows is then a copy-on-write fault whose TLB flush interrupts every
 * core running one of the process's threads (it measured 18% of NEXMark
 * q5 at 2 workers).  Written first, each page faults in once, quietly. */
static uint8_t *alloc_slots_raw(uint32_t cap, uint32_t width) {
  uint8_t *p = slots_new((size_t)cap * width);
  if (!p) {
    fprintf(stderr, "sluice: out of memory (group table of %u slots)\n", cap);
    abort();
  }
  return p;
}

static uint8_t *alloc_slots(sl_group_table *t, uint32_t cap) {
  size_t bytes = (size_t)cap * t->entry_width;
  uint8_t *a = t->pool ? pool_take(t->pool, bytes) : NULL;
  return a ? a : alloc_slots_raw(cap, t->entry_width);
}

static void free_slots(sl_group_table *t, uint8_t *a, uint32_t cap) {
  if (!a)
    return;
  if (t->pool)
    pool_give(t->pool, a, (size_t)cap * t->entry_width);
  else
    slots_free(a, (size_t)cap * t->entry_width);
}

void sl_group_table_init(sl_group_table *t, const sl_row_layout *key_layout,
                         const sl_agg_set *aggs, uint32_t initial_cap) {
  sl_group_table_init_pooled(t, key_layout, aggs, initial_cap, NULL);
}

void sl_group_table_init_pooled(sl_group_table *t,
                                const sl_row_layout *key_layout,
                                const sl_agg_set *aggs, uint32_t initial_cap,
                                sl_slot_pool *pool) {
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
  t->pool = pool;
  t->budget = pool ? pool->budget : NULL;
  t->slots = alloc_slots(t, cap);
  sl_arena_init(&t->arena, 16 * 1024);
}

void sl_group_table_free(sl_group_table *t) {
  free_slots(t, t->slots, t->cap);
  t->slots = NULL;
  sl_arena_free(&t->arena);
  t->cap = t->count = 0;
}

static void grow(sl_group_table *t) {
  uint32_t old_cap = t->cap;
  uint8_t *old = t->slots;
  t->cap *= 2;
  t->slots = alloc_slots(t, t->cap);
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
  free_slots(t, old, old_cap);
}

/* Past 3/4 full: should the table wait before doubling?  Yes while the
 * memory account has no room for the doubled slots and the table is not
 * yet 15/16 full (its holder then stops the query at its next report:
 * sl_group_table_bytes counts the slots it needs). */
static bool hold_growth(sl_group_table *t) {
  t->growth_held = false;
  if (!t->budget || (uint64_t)(t->count + 1) * 16 > (uint64_t)t->cap * 15)
    return false;
  uint64_t need = (uint64_t)t->cap * 2 * t->entry_width;
  if (!sl_memory_room_for(t->budget, need) && t->pool)
    pool_drain(t->pool);
  t->growth_held = !sl_memory_room_for(t->budget, need);
  return t->growth_held;
}

uint8_t *sl_group_table_upsert(sl_group_table *t, uint64_t hash,
                               const uint8_t *key) {
  bool created;
  return sl_group_table_upsert_ex(t, hash, key, &created);
}

uint8_t *sl_group_table_upsert_ex(sl_group_table *t, uint64_t hash,
                                  const uint8_t *key, bool *created) {
  *created = false;
  if ((t->count + 1) * 4 > t->cap * 3 && !hold_growth(t))
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
      *created = true;
      return e + 8 + kw;
    }
  }
}

/* Merge src's entry at slot i into dst. */
static int merge_entry(sl_group_table *dst, const sl_group_table *src,
                       uint32_t i, sl_error *err) {
  const uint8_t *e = src->slots + (size_t)i * src->entry_width;
  uint8_t *states = sl_group_table_upsert(dst, *(const uint64_t *)e, e + 8);
  return sl_agg_merge(dst->aggs, states, sl_group_table_states(src, i),
                      &dst->arena, err);
}

#define MERGE_AHEAD 8 /* entries whose dst slots are being fetched */

int sl_group_table_merge(sl_group_table *dst, const sl_group_table *src,
                         sl_error *err) {
  /* Visit src's slots in a scattered order (an odd multiplier permutes the
   * indexes of a power-of-two table).  In slot order, src's keys would
   * arrive sorted by the low bits of their hash, and inserting keys in
   * home-slot order into a well-filled linear-probing table builds one
   * ever longer probe run: merging two disjoint halves of a million keys
   * took seconds instead of milliseconds.
   *
   * Both orders are random in memory: each src slot is prefetched a few
   * visits ahead, and each used entry's home slot in dst MERGE_AHEAD
   * entries before it is merged (HOP windows merge every slice into each
   * of their windows: q5 spent 40% of its workers' time here, mostly
   * waiting for memory). */
  uint32_t mask = src->cap - 1;
  uint32_t queue[MERGE_AHEAD];
  uint32_t nq = 0, head = 0;
  for (uint32_t k = 0; k < src->cap; k++) {
    uint32_t i = (uint32_t)(k * 0x9E3779B1u) & mask;
    __builtin_prefetch(src->slots +
                       (size_t)((uint32_t)((k + 16) * 0x9E3779B1u) & mask) *
                           src->entry_width);
    if (!sl_group_table_slot_used(src, i))
      continue;
    uint64_t h = *(const uint64_t *)(src->slots + (size_t)i * src->entry_width);
    __builtin_prefetch(dst->slots + (size_t)((uint32_t)h & (dst->cap - 1)) *
                                        dst->entry_width);
    if (nq == MERGE_AHEAD) {
      int rc = merge_entry(dst, src, queue[head], err);
      if (rc != SL_OK)
        return rc;
      queue[head] = i;
      head = (head + 1) % MERGE_AHEAD;
    } else {
      queue[(head + nq++) % MERGE_AHEAD] = i;
    }
  }
  for (; nq > 0; nq--, head = (head + 1) % MERGE_AHEAD) {
    int rc = merge_entry(dst, src, queue[head], err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

void sl_group_table_keep_since(
    sl_group_table *t, uint32_t touched_off, int64_t oldest,
    void (*dropped)(void *arg, uint64_t hash, const uint8_t *key), void *arg) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < t->cap; i++)
    if (sl_group_table_slot_used(t, i) &&
        *(int64_t *)(sl_group_table_states(t, i) + touched_off) >= oldest)
      keep++;
  if (keep == t->count)
    return;
  sl_group_table fresh;
  sl_group_table_init(&fresh, t->key_layout, t->aggs, keep ? keep : 1);
  fresh.budget = t->budget;
  sl_error e = {0};
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    const uint8_t *key = sl_group_table_key(t, i);
    uint64_t hash = *(const uint64_t *)(key - 8);
    uint8_t *old = sl_group_table_states(t, i);
    if (*(int64_t *)(old + touched_off) < oldest) {
      if (dropped)
        dropped(arg, hash, key);
      continue;
    }
    /* A fresh state merged with the old one is the old one (copied into
     * the fresh table's arena: the old table goes). */
    sl_agg_merge(t->aggs, sl_group_table_upsert(&fresh, hash, key), old,
                 &fresh.arena, &e);
  }
  sl_error_clear(&e);
  sl_group_table_free(t);
  *t = fresh;
}

bool sl_group_table_growth_over_budget(const sl_group_table *t) {
  if (!t->budget || (uint64_t)(t->count + 1) * 16 <= (uint64_t)t->cap * 15)
    return false;
  return !sl_memory_room_for(t->budget, (uint64_t)t->cap * 2 * t->entry_width);
}

size_t sl_group_table_bytes(const sl_group_table *t) {
  size_t slots = (size_t)t->cap * t->entry_width;
  return slots + t->arena.total + (t->growth_held ? 2 * slots : 0);
}

/* ---- the wire form of a table
 * ------------------------------------------------ header  [magic u32
 * "SLGT"][version u32][key width u32][state width u32] [groups u32] group [key
 * row][for each long key string: its bytes][state's wire form (aggregate.c)]
 * The hash is not sent: the receiver recomputes it (same function). */

#define WIRE_MAGIC 0x54474c53u /* "SLGT" little-endian */
#define WIRE_VERSION 1u

uint32_t sl_group_table_encode_where(const sl_group_table *t,
                                     bool (*keep)(void *arg,
                                                  const uint8_t *key),
                                     void *arg, sl_strbuf *out) {
  const sl_row_layout *kl = t->key_layout;
  size_t at = out->len;
  uint32_t head[5] = {WIRE_MAGIC, WIRE_VERSION, kl->width, t->aggs->state_width,
                      0};
  sl_strbuf_appendn(out, (const char *)head, sizeof head);
  uint32_t groups = 0;
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    const uint8_t *key = sl_group_table_key(t, i);
    if (keep && !keep(arg, key))
      continue;
    groups++;
    sl_strbuf_appendn(out, (const char *)key, kl->width);
    for (int f = 0; t->key_has_strings && f < kl->nfields; f++) {
      const sl_str *s = (const sl_str *)(key + kl->fields[f].offset);
      if (kl->fields[f].ptype == SL_P_STR && !sl_row_is_null(key, f) &&
          s->len > SL_STR_INLINE)
        sl_strbuf_appendn(out, s->u.ptr, s->len);
    }
    sl_agg_state_encode(t->aggs, sl_group_table_states(t, i), out);
  }
  memcpy(out->data + at + 4 * sizeof(uint32_t), &groups, sizeof groups);
  return groups;
}

void sl_group_table_encode(const sl_group_table *t, sl_strbuf *out) {
  sl_group_table_encode_where(t, NULL, NULL, out);
}

static int corrupt(sl_error *err, const char *what) {
  return sl_error_set(err, SL_EINVAL,
                      "a partial window state from another node is %s; the "
                      "nodes may be running different versions or plans",
                      what);
}

int sl_group_table_decode_merge(sl_group_table *dst, const uint8_t *bytes,
                                size_t len, sl_error *err) {
  const sl_row_layout *kl = dst->key_layout;
  const uint8_t *p = bytes, *end = bytes + len;
  uint32_t head[5];
  if (len < sizeof head)
    return corrupt(err, "cut short");
  memcpy(head, p, sizeof head);
  p += sizeof head;
  if (head[0] != WIRE_MAGIC || head[1] != WIRE_VERSION)
    return corrupt(err, "not in this version's format");
  if (head[2] != kl->width || head[3] != dst->aggs->state_width)
    return corrupt(err, "of another shape (key or state width differs)");
  /* One group's state at a time, in a scratch arena: merging copies what
   * dst keeps into dst's arena. */
  sl_arena scratch;
  sl_arena_init(&scratch, 0);
  uint8_t *key = sl_arena_alloc(&scratch, kl->width + 1);
  uint8_t *state = sl_arena_alloc(&scratch, dst->aggs->state_width + 1);
  int rc = SL_OK;
  for (uint32_t g = 0; g < head[4] && rc == SL_OK; g++) {
    if ((size_t)(end - p) < kl->width) {
      rc = corrupt(err, "cut short");
      break;
    }
    memcpy(key, p, kl->width);
    p += kl->width;
    for (int f = 0; f < kl->nfields; f++) {
      sl_str *s = (sl_str *)(key + kl->fields[f].offset);
      if (kl->fields[f].ptype != SL_P_STR || sl_row_is_null(key, f) ||
          s->len <= SL_STR_INLINE)
        continue;
      if ((size_t)(end - p) < s->len) {
        rc = corrupt(err, "cut short");
        break;
      }
      /* Keep the 4-byte prefix the sender wrote; point at the bytes. */
      s->u.ptr = (const char *)p;
      p += s->len;
    }
    if (rc != SL_OK)
      break;
    rc = sl_agg_state_decode(dst->aggs, &p, end, state, &scratch, err);
    if (rc != SL_OK)
      break;
    uint8_t *st = sl_group_table_upsert(dst, sl_key_hash(kl, key), key);
    rc = sl_agg_merge(dst->aggs, st, state, &dst->arena, err);
    if ((g & 1023) == 1023) { /* bound the scratch arena's growth */
      sl_arena_free(&scratch);
      sl_arena_init(&scratch, 0);
      key = sl_arena_alloc(&scratch, kl->width + 1);
      state = sl_arena_alloc(&scratch, dst->aggs->state_width + 1);
    }
  }
  if (rc == SL_OK && p != end)
    rc = corrupt(err, "longer than its groups");
  sl_arena_free(&scratch);
  return rc;
}
