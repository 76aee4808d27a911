/* agg_multiset.h - MIN, MAX and DISTINCT aggregates that can take a row
 * back, for a GROUP BY over an updating result (update_stages.c).
 *
 * Their ordinary states (aggregate.h) keep one value, or a grow-only set:
 * once the minimum is taken back, nothing says what the next one is.
 * Here each group keeps, per such aggregate, every value it has seen
 * with how many rows hold it, in order (a sorted array): MIN is the
 * first, MAX the last, a DISTINCT aggregate folds the values present.
 * That is Flink's answer too (a map view of value -> count): state grows
 * with the distinct values per group, not with the rows.
 *
 * The stage's own group states hold a placeholder COUNT(*) for each of
 * these aggregates (agg_multisets_states); the result of one comes from
 * agg_multisets_finalize.
 *
 * Ownership: the multisets own copies of their keys and values (long
 * strings too) and free them in agg_multisets_free.  Internal to
 * runtime/.
 */
#ifndef SLUICE_AGG_MULTISET_H
#define SLUICE_AGG_MULTISET_H

#include "sluice/state/aggregate.h"

typedef struct agg_multisets agg_multisets;

/* The multisets for the aggregates of `aggs` (over its input layout) that
 * cannot take a row back, per group of group_layout; NULL when every
 * aggregate can (COUNT, SUM, AVG).  a: where the layouts are built. */
agg_multisets *agg_multisets_new(sl_arena *a, const sl_agg_set *aggs,
                                 const sl_row_layout *group_layout);
void agg_multisets_free(agg_multisets *m);

/* Is aggregate i one of them (its result from agg_multisets_finalize)? */
bool agg_multisets_has(const agg_multisets *m, int i);

/* out := aggs with each of them replaced by a COUNT(*) placeholder, whose
 * states can take rows back (in a). */
int agg_multisets_states(const agg_multisets *m, sl_arena *a,
                         const sl_agg_set *aggs, sl_agg_set *out,
                         sl_error *err);

/* Fold one input row (of aggs' input layout) of the group `key` (hash:
 * sl_key_hash over group_layout) in (adds) or take it back.  Taking back
 * a value the group does not hold is SL_EINTERNAL, or nothing when
 * lenient (under a state TTL the value may have expired with its
 * group). */
int agg_multisets_update(agg_multisets *m, uint64_t hash, const uint8_t *key,
                         const uint8_t *row, bool adds, bool lenient,
                         sl_error *err);

/* The group `key` leaves (its state expired); nothing if m is NULL or it
 * has none. */
void agg_multisets_remove(agg_multisets *m, uint64_t hash, const uint8_t *key);

/* Aggregate i's result for group `key` into field `field` of out_row, a
 * row of out (long strings to its heap): SL_OK, an error, or 1 when out's
 * heap is full (as sl_agg_finalize). */
int agg_multisets_finalize(agg_multisets *m, int i, uint64_t hash,
                           const uint8_t *key, sl_buffer *out, uint8_t *out_row,
                           int field, sl_error *err);

/* Bytes held, for the stats and the memory limit. */
uint64_t agg_multisets_bytes(const agg_multisets *m);

#endif
