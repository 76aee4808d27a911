/* aggregate.h - partial aggregate states and the group table that holds them.
 *
 * Every worker keeps its own partial state for each (window slice, group)
 * and updates it per record without touching anything shared; a window's
 * result is the merge of all partials when the watermark passes its end
 * (late merge).  That only works because each state is a CRDT: merging is
 * commutative, associative and idempotent per producer (each partial has one
 * writer, so "merge by adding" equals the brief's per-slot-max counter
 * vector merge):
 *
 *   COUNT, COUNT(*)   int64 count                       merge: add
 *   SUM               sum (int64 | double | int128) + count of non-NULLs
 *   AVG               (sum, count)                      merge: add both
 *   MIN, MAX          value + present flag              merge: min / max
 *   ... DISTINCT      a grow-only set of the values     merge: union
 *
 * Integer overflow in SUM/AVG is an error, never a wrap.  Result types
 * follow the binder (Flink): SUM(BIGINT) BIGINT, AVG(BIGINT) BIGINT
 * (truncating), SUM(DECIMAL(p,s)) DECIMAL(38,s), COUNT BIGINT NOT NULL.
 *
 * Ownership: an sl_agg_set lives in the query's arena.  States live in
 * their group table; long strings and DISTINCT sets of a state are
 * allocated in the group table's arena and die with it.
 */
#ifndef SLUICE_AGGREGATE_H
#define SLUICE_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/row/row.h"

typedef enum sl_agg_op {
  SL_AGG_COUNT_STAR,
  SL_AGG_COUNT,
  SL_AGG_SUM,
  SL_AGG_AVG,
  SL_AGG_MIN,
  SL_AGG_MAX,
} sl_agg_op;

typedef struct sl_agg_desc {
  sl_agg_op op;
  bool distinct;
  int in_field;     /* argument field of the input layout; -1 for COUNT(*) */
  int filter_field; /* BOOLEAN field of the input layout (FILTER), or -1 */
  const sl_type *out_type;
  /* Derived by sl_agg_set_init: */
  sl_ptype in_ptype;
  int in_scale; /* DECIMAL argument scale */
  sl_ptype out_ptype;
  int out_scale; /* DECIMAL result scale */
  uint32_t state_offset;
  uint32_t state_size;
} sl_agg_desc;

typedef struct sl_agg_set {
  int n;
  sl_agg_desc *aggs;
  const sl_row_layout *input; /* rows fed to sl_agg_update */
  uint32_t state_width;       /* bytes of all states of one group */
} sl_agg_set;

/* Fill in the derived fields of aggs[0..n) (copied into a) for the given
 * input layout.  SL_EUNSUPPORTED for a combination that has no state
 * implementation (with a message naming it). */
int sl_agg_set_init(sl_arena *a, sl_agg_set *set, int n,
                    const sl_agg_desc *aggs, const sl_row_layout *input,
                    sl_error *err);

/* A fresh state for one group (counts 0, nothing seen). */
void sl_agg_state_init(const sl_agg_set *set, uint8_t *state);

/* Fold one input row into state.  arena: where long strings and DISTINCT
 * sets of this state are kept.  Errors: integer overflow. */
int sl_agg_update(const sl_agg_set *set, uint8_t *state, const uint8_t *row,
                  sl_arena *arena, sl_error *err);

/* out := base's aggregates, then one COUNT(*) (its state an int64 the
 * caller may use: the rows of a group, the time it last changed).  base's
 * states keep their offsets, so merging and finalizing with base still
 * work on out's states.  Allocated in a. */
int sl_agg_set_with_count(sl_arena *a, const sl_agg_set *base, sl_agg_set *out,
                          sl_error *err);

/* Take one input row back out of state (an updating input's -U or -D):
 * COUNT, SUM and AVG only (sl_agg_can_retract says whether every
 * aggregate of the set can); SL_EUNSUPPORTED for MIN, MAX and DISTINCT. */
bool sl_agg_can_retract(const sl_agg_set *set);
int sl_agg_retract(const sl_agg_set *set, uint8_t *state, const uint8_t *row,
                   sl_error *err);

/* dst := merge(dst, src).  src is not changed; values dst keeps are copied
 * into arena (so src's table may be freed afterwards). */
int sl_agg_merge(const sl_agg_set *set, uint8_t *dst, const uint8_t *src,
                 sl_arena *arena, sl_error *err);

/* Write aggregate i's result into field `field` of out_row (a row of
 * out_buf; long strings go to out_buf's heap).  Returns SL_OK, an error
 * (overflow), or SL_EINVAL-free status 1 when out_buf's heap is full. */
int sl_agg_finalize(const sl_agg_set *set, int i, const uint8_t *state,
                    sl_buffer *out_buf, uint8_t *out_row, int field,
                    sl_error *err);

/* The wire form of a state (late merge across nodes): the state with its
 * out-of-line parts (long strings, DISTINCT sets) inline, appended to out.
 * Every node must use the same sl_agg_set (same plan) and architecture. */
void sl_agg_state_encode(const sl_agg_set *set, const uint8_t *state,
                         sl_strbuf *out);
/* Read one state from *p (advanced past it) into state (initialized
 * here); its strings and sets are allocated in arena.  SL_EINVAL when the
 * input is cut short or corrupt. */
int sl_agg_state_decode(const sl_agg_set *set, const uint8_t **p,
                        const uint8_t *end, uint8_t *state, sl_arena *arena,
                        sl_error *err);

/* ---- group table: group key -> states ----------------------------------- */

/* Slot arrays of group tables, kept for reuse across windows.  A window's
 * tables grow to megabytes and die when it fires; returning that memory to
 * the kernel (munmap) and taking it back (page faults) every window costs
 * a TLB shoot-down on every core and, measured, a third of the run time of
 * a high-cardinality window aggregate.  A pool keeps freed arrays (up to a
 * byte budget) for the next tables of the same query.  Thread-safe: the
 * workers allocate, the coordinator frees. */
typedef struct sl_slot_pool sl_slot_pool;

sl_slot_pool *sl_slot_pool_new(size_t max_bytes);
void sl_slot_pool_free(sl_slot_pool *p);

/* The query's memory account (include/sluice/state/memory_account.h) that the
 * pool's kept arrays count in (a kept array is memory the process holds) and
 * that its tables ask before doubling (sl_group_table.budget).  The pool
 * keeps an array only while the account has room for it. */
struct sl_memory_account;
void sl_slot_pool_set_budget(sl_slot_pool *p, struct sl_memory_account *a);

/* Open addressing (linear probing) over entries laid out as
 * [hash:8][key row][states], all inline in one array, so a lookup touches
 * one cache line for small keys.  One table per (worker, slice). */
typedef struct sl_group_table {
  const sl_row_layout *key_layout; /* group key columns (with null bits) */
  const sl_agg_set *aggs;
  bool key_has_strings; /* compare field-wise instead of memcmp */
  uint32_t entry_width;
  uint32_t cap;   /* slots, a power of two */
  uint32_t count; /* groups */
  uint8_t *slots;
  sl_slot_pool *pool; /* where slots come from and go back to, or NULL */
  sl_arena arena;     /* long key strings, state strings, DISTINCT sets */
  /* The memory account asked before the slots double (NULL: none; a
   * pooled table takes its pool's).  Doubling allocates the new array
   * while the old one is alive; when the account has no room for it the
   * table keeps filling past 3/4 (linear probing works up to 15/16) and
   * counts the array it needs in sl_group_table_bytes, so that its
   * holder's next report stops the query before it is allocated. */
  struct sl_memory_account *budget;
  bool growth_held; /* doubling was refused for want of room */
} sl_group_table;

void sl_group_table_init(sl_group_table *t, const sl_row_layout *key_layout,
                         const sl_agg_set *aggs, uint32_t initial_cap);
/* The same, with slot arrays taken from and returned to pool. */
void sl_group_table_init_pooled(sl_group_table *t,
                                const sl_row_layout *key_layout,
                                const sl_agg_set *aggs, uint32_t initial_cap,
                                sl_slot_pool *pool);
void sl_group_table_free(sl_group_table *t);

/* Hash of a key row (strings hashed by content). */
uint64_t sl_key_hash(const sl_row_layout *key_layout, const uint8_t *key);
/* The same over fields[0..n) of a row only, in that order: rows of two
 * layouts whose listed fields have the same types hash alike (a join key
 * that is part of one side's group key and columns of the other's rows). */
uint64_t sl_fields_hash(const sl_row_layout *layout, const uint8_t *row, int n,
                        const int *fields);
/* Are two key rows equal (NULLs equal to NULLs, strings by content)? */
bool sl_key_equal(const sl_row_layout *key_layout, const uint8_t *a,
                  const uint8_t *b);

/* The states of the group with this key (hash from sl_key_hash), inserting
 * a fresh group (key copied, long strings into the table's arena) if it is
 * new.  Never fails (grows as needed). */
uint8_t *sl_group_table_upsert(sl_group_table *t, uint64_t hash,
                               const uint8_t *key);

/* The same, saying whether the group is new (*created).  The group's key
 * row (in the table, long strings in its arena) ends where its states
 * begin: states - key_layout->width. */
uint8_t *sl_group_table_upsert_ex(sl_group_table *t, uint64_t hash,
                                  const uint8_t *key, bool *created);
/* Iterate: for (uint32_t i = 0; i < t->cap; i++) if
 * (sl_group_table_slot_used(t, i)) ... */
static inline bool sl_group_table_slot_used(const sl_group_table *t,
                                            uint32_t i) {
  /* hash 0 marks an empty slot; real hashes are forced non-zero */
  return *(const uint64_t *)(t->slots + (size_t)i * t->entry_width) != 0;
}
static inline uint8_t *sl_group_table_key(const sl_group_table *t, uint32_t i) {
  return t->slots + (size_t)i * t->entry_width + 8;
}
static inline uint8_t *sl_group_table_states(const sl_group_table *t,
                                             uint32_t i) {
  return t->slots + (size_t)i * t->entry_width + 8 + t->key_layout->width;
}

/* Merge every group of src into dst (dst += src). */
int sl_group_table_merge(sl_group_table *dst, const sl_group_table *src,
                         sl_error *err);

/* The wire form of a whole table, appended to out: a header (format,
 * key and state widths, group count), then per group its key row (long
 * key strings inline after it) and its state (sl_agg_state_encode). */
void sl_group_table_encode(const sl_group_table *t, sl_strbuf *out);
/* The same for the groups whose key row keep(arg, key) accepts (keep
 * NULL: all); returns how many were written. */
uint32_t sl_group_table_encode_where(const sl_group_table *t,
                                     bool (*keep)(void *arg,
                                                  const uint8_t *key),
                                     void *arg, sl_strbuf *out);
/* Merge the groups of an encoded table into dst (dst += decoded), as
 * sl_group_table_merge does for a table in memory.  SL_EINVAL with a
 * message when the bytes are cut short, corrupt, or of another shape. */
int sl_group_table_decode_merge(sl_group_table *dst, const uint8_t *bytes,
                                size_t len, sl_error *err);

/* State TTL: keep only the groups whose int64 state at byte touched_off
 * (a time the caller keeps there) is at or after oldest.  The table
 * cannot delete in place, so the kept groups are copied into a fresh one
 * (new slots and arena) unless none goes; dropped(arg, hash, key), if not
 * NULL, is told of each group that goes first. */
void sl_group_table_keep_since(
    sl_group_table *t, uint32_t touched_off, int64_t oldest,
    void (*dropped)(void *arg, uint64_t hash, const uint8_t *key), void *arg);

/* Bytes held (slots + arena, and the doubled slots the table needs when
 * its budget refused them), for EXPLAIN ANALYZE and memory limits. */
size_t sl_group_table_bytes(const sl_group_table *t);
/* Would the next new group double the table although its memory account
 * has no room for the doubled slots?  (Growth is held only up to 15/16
 * full; past that the next upsert doubles regardless.)  A holder that
 * merges many groups at once asks before each and stops the query with
 * the memory-limit error instead of allocating what it could not keep. */
bool sl_group_table_growth_over_budget(const sl_group_table *t);

#endif
