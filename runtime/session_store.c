/* session_store.c - per-key session lists with merging (session_store.h). */
#include <stdlib.h>
#include <string.h>

#include "session_store.h"

#define WM_MAX INT64_MAX

void session_store_init(session_store *s, const sl_row_layout *key_layout,
                        const sl_agg_set *aggs) {
  memset(s, 0, sizeof *s);
  s->head_set.n = 0;
  s->head_set.aggs = NULL;
  s->head_set.input = key_layout;
  s->head_set.state_width = sizeof(session *);
  s->aggs = aggs;
  s->free_list = NULL;
  s->min_start = WM_MAX;
  s->min_end = WM_MAX;
  s->open = 0;
  sl_group_table_init(&s->keys, key_layout, &s->head_set, 64);
}

void session_store_free(session_store *s) {
  sl_group_table_free(&s->keys);
}

static session *new_session(session_store *s, int64_t start, int64_t end) {
  session *ss = s->free_list;
  if (ss) {
    s->free_list = ss->next;
  } else {
    ss = SL_ANEW(&s->keys.arena, session);
    ss->states = sl_arena_alloc(&s->keys.arena, s->aggs->state_width + 1);
  }
  ss->start = start;
  ss->end = end;
  ss->next = NULL;
  sl_agg_state_init(s->aggs, ss->states);
  s->open++;
  return ss;
}

static session **head_of(session_store *s, uint64_t hash, const uint8_t *key) {
  return (session **)sl_group_table_upsert(&s->keys, hash, key);
}

static bool touches(const session *ss, int64_t start, int64_t end) {
  return ss->start <= end && start <= ss->end;
}

bool session_store_overlaps(session_store *s, uint64_t hash, const uint8_t *key,
                            int64_t start, int64_t end, int64_t closed_end) {
  for (session *ss = *head_of(s, hash, key); ss; ss = ss->next)
    if (ss->end > closed_end && touches(ss, start, end))
      return true;
  return false;
}

session *session_store_add(session_store *s, uint64_t hash, const uint8_t *key,
                           int64_t start, int64_t end, const uint8_t *states,
                           int64_t closed_end, sl_error *err) {
  session **head = head_of(s, hash, key);
  session *merged = NULL;
  session **pp = head;
  while (*pp) {
    session *ss = *pp;
    if (ss->end <= closed_end || !touches(ss, start, end)) {
      pp = &ss->next;
      continue;
    }
    if (!merged) {
      merged = ss;
      pp = &ss->next;
      continue;
    }
    /* A second session touches: fold it into the first and unlink it. */
    if (sl_agg_merge(s->aggs, merged->states, ss->states, &s->keys.arena,
                     err) != SL_OK)
      return NULL;
    if (ss->start < merged->start)
      merged->start = ss->start;
    if (ss->end > merged->end)
      merged->end = ss->end;
    *pp = ss->next;
    ss->next = s->free_list;
    s->free_list = ss;
    s->open--;
  }
  if (!merged) {
    merged = new_session(s, start, end);
    /* keep the list sorted by start */
    pp = head;
    while (*pp && (*pp)->start < start)
      pp = &(*pp)->next;
    merged->next = *pp;
    *pp = merged;
  } else {
    if (start < merged->start)
      merged->start = start;
    if (end > merged->end)
      merged->end = end;
  }
  if (states && sl_agg_merge(s->aggs, merged->states, states, &s->keys.arena,
                             err) != SL_OK)
    return NULL;
  if (merged->start < s->min_start)
    s->min_start = merged->start;
  if (merged->end < s->min_end)
    s->min_end = merged->end;
  return merged;
}

int session_store_close(session_store *s, session_pred can_close, session_fn fn,
                        void *arg, sl_error *err) {
  (void)err;
  int64_t min_start = WM_MAX, min_end = WM_MAX;
  for (uint32_t i = 0; i < s->keys.cap; i++) {
    if (!sl_group_table_slot_used(&s->keys, i))
      continue;
    const uint8_t *key = sl_group_table_key(&s->keys, i);
    session **pp = (session **)sl_group_table_states(&s->keys, i);
    while (*pp) {
      session *ss = *pp;
      if (can_close(arg, ss)) {
        int rc = fn(arg, key, ss);
        if (rc != SL_OK)
          return rc;
        *pp = ss->next;
        /* Not reused: fn's receiver may still read its states. */
        s->open--;
        continue;
      }
      if (ss->start < min_start)
        min_start = ss->start;
      if (ss->end < min_end)
        min_end = ss->end;
      pp = &ss->next;
    }
  }
  s->min_start = min_start;
  s->min_end = min_end;
  return SL_OK;
}
