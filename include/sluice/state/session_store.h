/* session_store.h - session windows per group key.
 *
 * A session is [first event, last event + gap); two sessions of one key
 * that intersect or touch merge (as Flink's TimeWindow.intersects).  The
 * store keeps, per key, a list of sessions with their aggregate states,
 * newest first: sorted by start, descending.  The open sessions of a key
 * never touch one another (an add merges all it touches), so their ends
 * descend too, and an add stops at the first open session that ends
 * before the new one starts: in-order input costs the same however many
 * sessions a key holds.  Workers keep one store each (their partial sessions);
 * the coordinator keeps one in which the workers' closed fragments merge.
 * Internal to runtime/.
 */
#ifndef SLUICE_SESSION_STORE_H
#define SLUICE_SESSION_STORE_H

#include "sluice/state/aggregate.h"

typedef struct session {
  int64_t start, end;
  struct session *next, *prev; /* the key's list (the head's prev: its tail) */
  uint8_t *states;
  uint8_t *key; /* a copy of its key row, and the key's hash */
  uint64_t hash;
  uint32_t gen; /* bumped when it is closed or folded into another: its
                 * timers (below) from before are stale */
} session;

/* A session's end or start in a min-heap, as it was when pushed. */
typedef struct session_timer {
  int64_t at;
  session *ss;
  uint32_t gen;
} session_timer;

typedef struct session_heap {
  session_timer *v;
  uint32_t n, cap;
} session_heap;

typedef struct session_store {
  sl_group_table keys; /* key -> session* (8 bytes of "state") */
  sl_agg_set head_set; /* no aggregates, 8 bytes per key: the list head */
  const sl_agg_set *aggs;
  session *free_list;
  /* Closing visits sessions in order of end instead of every key: ends
   * only grow, so a timer's end is a lower bound and is pushed again, at
   * the session's end then, when it comes up early; starts can shrink (a
   * record before a session), so a new timer is pushed when one does. */
  session_heap by_end, by_start;
  int64_t min_start; /* lower bound of every open session's start */
  int64_t min_end;   /* lower bound of every open session's end */
  uint64_t open;     /* sessions held */
  int64_t max_len;   /* the longest any session has been (walks stop by it) */
  /* Closed sessions are reused (their out-of-line state parts stay in the
   * arena): set when close's fn copies what it keeps of a session. */
  bool reuse_closed;
} session_store;

void session_store_init(session_store *s, const sl_row_layout *key_layout,
                        const sl_agg_set *aggs);
void session_store_free(session_store *s);

/* Bytes held: the key table (its slots and arena, where the sessions and
 * their states live) and both timer heaps, for the memory limit. */
uint64_t session_store_bytes(const session_store *s);

/* Add [start, end) for key (hash from sl_key_hash), merging every session
 * of that key it intersects or touches.  If states is not NULL it is
 * merged into the result (a fragment from a worker).  Returns the merged
 * session (for the caller to fold a record into), or NULL on error. */
session *session_store_add(session_store *s, uint64_t hash, const uint8_t *key,
                           int64_t start, int64_t end, const uint8_t *states,
                           int64_t closed_end, sl_error *err);

/* Does key have a session that intersects or touches [start, end)?
 * Sessions ending at or before closed_end are closed (the watermark has
 * passed them, they only wait to be handed over): they are ignored here and
 * by session_store_add, as if already gone. */
bool session_store_overlaps(session_store *s, uint64_t hash, const uint8_t *key,
                            int64_t start, int64_t end, int64_t closed_end);

/* Call fn for every session that may close (can_close true), then remove
 * it.  can_close must hold for every session ending before one it holds
 * for (sessions are visited in order of end until it fails).  Recomputes
 * min_start/min_end.  fn gets the key row and session; the key's long
 * strings stay valid until the store is freed, and so do the session's
 * states unless reuse_closed (then fn must copy what it keeps). */
typedef int (*session_fn)(void *arg, const uint8_t *key, const session *ss);
typedef bool (*session_pred)(void *arg, const session *ss);
int session_store_close(session_store *s, session_pred can_close, session_fn fn,
                        void *arg, sl_error *err);

#endif
