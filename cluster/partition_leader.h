/* partition_leader.h - late merge across nodes at partition leaders: the
 * pure parts (which partition a key belongs to, splitting a partial state
 * by partition, and a leader's window store with its vector clock).  The
 * channels between nodes are node_leaders.c's.  Internal to runtime/.
 *
 * Node k of n leads partition k of the key space.  A helper splits each
 * partial window state (an epoch's delta or a closing window's last
 * changes) by partition and ships each part to its leader; a leader merges
 * what arrives per window and fires window w only when every node's entry
 * of its vector clock has passed w's end.
 *
 * Ownership: a store owns its windows' tables until sl_leader_store_take
 * hands one out (the caller then frees it with sl_leader_window_free).
 * All store functions lock the store: receivers (one thread per incoming
 * channel) and the node's coordinator call them concurrently. */
#ifndef SLUICE_PARTITION_LEADER_H
#define SLUICE_PARTITION_LEADER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../exec/distribution.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/state/aggregate.h"
#include "sluice/state/memory_account.h"

/* The partition (0..n-1) of a key with this sl_key_hash.  From bits
 * 48..63 by multiply-shift: group tables index by the low bits and the
 * repartition picks the owner from bits 32.. modulo the member count, so a
 * leader's keys still spread over its tables and its workers. */
static inline int sl_leader_partition(uint64_t key_hash, int n) {
  return (int)(((key_hash >> 48) * (uint64_t)n) >> 16);
}

/* Append to out[p] (p = 0..n-1) the wire form (sl_group_table_encode) of
 * t's groups of partition p; parts with no group get nothing appended
 * (out[p] unchanged), so a caller can skip them.  groups[p] (may be NULL)
 * gets the number of groups of each part.  The partition is of the whole
 * key's hash (sl_key_hash), or with nfields > 0 of those key fields'
 * (sl_fields_hash: a join co-partitioned on part of the key). */
void sl_leader_split(const sl_group_table *t, int n, int nfields,
                     const int *fields, sl_strbuf *out, uint32_t *groups);

void sl_leader_window_free(sl_leader_window *w);

typedef struct sl_leader_store {
  pthread_mutex_t lock;
  int n;           /* nodes (entries of the vector clock) */
  int64_t *vc;     /* per node: every change of a window ending at or before
                    * it has been merged here (INT64_MIN at first, INT64_MAX
                    * once the node has sent everything) */
  int64_t unit_us; /* a window [s, e) is done at watermark e - unit */
  sl_leader_window *windows; /* sorted by end */
  const sl_row_layout *key_layout;
  const sl_agg_set *aggs;
  sl_slot_pool *pool;
  int64_t fired_end;      /* the end of the last window taken */
  uint64_t merges, bytes; /* parts merged here, their wire bytes */
  /* SET 'sluice.memory-limit': the windows held here (held: their
   * tables' bytes) count in this account (memory_account.h; NULL: none,
   * charged: what was last reported); a merge that takes it over the
   * limit fails with SL_ENOMEM. */
  sl_memory_account *memory;
  uint64_t held, charged;
} sl_leader_store;

void sl_leader_store_init(sl_leader_store *s, int n, int64_t unit_us,
                          const sl_row_layout *key_layout,
                          const sl_agg_set *aggs, sl_slot_pool *pool);
void sl_leader_store_free(sl_leader_store *s);

/* Merge a part (wire form) of window [start, end) into the store.  A part
 * of a window that has already fired is an error (the sender's watermark
 * promised it would not come): SL_EINTERNAL; windows over the store's
 * limit are SL_ENOMEM. */
int sl_leader_store_merge(sl_leader_store *s, int64_t start, int64_t end,
                          const uint8_t *wire, size_t len, sl_error *err);

/* Node `node`'s vector clock entry moves up to wm (never down). */
void sl_leader_store_advance(sl_leader_store *s, int node, int64_t wm);

/* The vector clock rule: the earliest window every entry has passed
 * (end - unit <= min(vc), or every entry INT64_MAX), removed from the
 * store; NULL when none is due. */
sl_leader_window *sl_leader_store_take(sl_leader_store *s);

/* The vector clock's minimum: once the windows sl_leader_store_take
 * returns are taken, every window ending at or before it (less a unit) has
 * been. */
int64_t sl_leader_store_clock(sl_leader_store *s);

/* Every node has sent everything and every window has been taken. */
bool sl_leader_store_finished(sl_leader_store *s);

#endif
