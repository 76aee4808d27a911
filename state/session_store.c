/* session_store.c - per-key session lists with merging (session_store.h). */
#include <stdlib.h>
#include <string.h>

#include "sluice/state/session_store.h"

#define WM_MAX INT64_MAX

/* A key's sessions (the group table's state of the key, 8 bytes: the
 * table is probed once per record).  The head's prev is the tail; every
 * other session's prev is the one before it. */
typedef struct key_list {
  session *head;
} key_list;

static session *tail_of(const key_list *l) {
  return l->head ? l->head->prev : NULL;
}

void session_store_init(session_store *s, const sl_row_layout *key_layout,
                        const sl_agg_set *aggs) {
  memset(s, 0, sizeof *s);
  s->head_set.n = 0;
  s->head_set.aggs = NULL;
  s->head_set.input = key_layout;
  s->head_set.state_width = sizeof(key_list);
  s->aggs = aggs;
  s->free_list = NULL;
  s->min_start = WM_MAX;
  s->min_end = WM_MAX;
  s->open = 0;
  sl_group_table_init(&s->keys, key_layout, &s->head_set, 64);
}

void session_store_free(session_store *s) {
  free(s->by_end.v);
  free(s->by_start.v);
  sl_group_table_free(&s->keys);
}

uint64_t session_store_bytes(const session_store *s) {
  return sl_group_table_bytes(&s->keys) +
         ((uint64_t)s->by_end.cap + s->by_start.cap) * sizeof(session_timer);
}

/* ---- timers: a binary min-heap on `at` ---------------------------------- */

static void heap_push(session_heap *h, int64_t at, session *ss) {
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 64;
    h->v = realloc(h->v, sizeof *h->v * h->cap);
    if (!h->v)
      abort();
  }
  uint32_t i = h->n++;
  session_timer t = {at, ss, ss->gen};
  while (i > 0) {
    uint32_t up = (i - 1) / 2;
    if (h->v[up].at <= at)
      break;
    h->v[i] = h->v[up];
    i = up;
  }
  h->v[i] = t;
}

static void heap_pop(session_heap *h) {
  session_timer last = h->v[--h->n];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->v[c + 1].at < h->v[c].at)
      c++;
    if (h->v[c].at >= last.at)
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n)
    h->v[i] = last;
}

/* The earliest start of a session still held (stale timers dropped). */
static int64_t earliest_start(session_heap *h) {
  while (h->n) {
    const session_timer *t = &h->v[0];
    if (t->gen == t->ss->gen && t->at == t->ss->start)
      return t->at;
    heap_pop(h);
  }
  return WM_MAX;
}

static session *new_session(session_store *s, uint64_t hash, const uint8_t *key,
                            int64_t start, int64_t end) {
  session *ss = s->free_list;
  if (ss) {
    s->free_list = ss->next;
  } else {
    ss = SL_ANEW(&s->keys.arena, session);
    ss->states = sl_arena_alloc(&s->keys.arena, s->aggs->state_width + 1);
    ss->key = sl_arena_alloc(&s->keys.arena, s->head_set.input->width + 1);
  }
  ss->gen++;
  ss->start = start;
  ss->end = end;
  ss->next = ss->prev = NULL;
  ss->hash = hash;
  memcpy(ss->key, key, s->head_set.input->width);
  sl_agg_state_init(s->aggs, ss->states);
  s->open++;
  heap_push(&s->by_end, end, ss);
  heap_push(&s->by_start, start, ss);
  return ss;
}

static key_list *list_of(session_store *s, uint64_t hash, const uint8_t *key) {
  return (key_list *)sl_group_table_upsert(&s->keys, hash, key);
}

static bool touches(const session *ss, int64_t start, int64_t end) {
  return ss->start <= end && start <= ss->end;
}

/* The first session of l (newest first) that starts at or before t, or
 * NULL: walked to from whichever end of the list is nearer in time, so
 * that records landing near either end (in order, or a reader far behind
 * another) cost the same however many sessions the key holds. */
static session *first_from(const key_list *l, int64_t t) {
  session *tail = tail_of(l);
  if (!tail || tail->start > t)
    return NULL;
  if (l->head->start - t <= t - tail->start) {
    session *ss = l->head;
    while (ss->start > t)
      ss = ss->next;
    return ss;
  }
  session *ss = tail;
  while (ss != l->head && ss->prev->start <= t)
    ss = ss->prev;
  return ss;
}

/* Whether the walk of l for [start, end) can stop at ss: no session after
 * it touches.  The list descends by start, so every session after ss
 * starts no later and ends before ss->start + max_len.  And the open
 * sessions (ending after closed_end) never touch one another, so after an
 * open session ending before start come only open sessions ending before
 * its start.  (Closed ones, waiting to be handed over, are skipped: under
 * repartitioning they pile up while another reader holds the watermark
 * back, and max_len is what stops the walk among them.) */
static bool walk_ends(const session_store *s, const session *ss, int64_t start,
                      int64_t closed_end) {
  return ss->start < start - s->max_len ||
         (ss->end > closed_end && ss->end < start);
}

static void note_len(session_store *s, const session *ss) {
  if (ss->end - ss->start > s->max_len)
    s->max_len = ss->end - ss->start;
}

bool session_store_overlaps(session_store *s, uint64_t hash, const uint8_t *key,
                            int64_t start, int64_t end, int64_t closed_end) {
  const key_list *l = list_of(s, hash, key);
  for (session *ss = first_from(l, end); ss; ss = ss->next) {
    if (walk_ends(s, ss, start, closed_end))
      break;
    if (ss->end > closed_end && touches(ss, start, end))
      return true;
  }
  return false;
}

static void unlink_session(key_list *l, session *ss) {
  session *head = l->head;
  if (ss == head) {
    l->head = ss->next;
    if (ss->next) /* the new head's prev: the tail */
      ss->next->prev = ss->prev;
    return;
  }
  ss->prev->next = ss->next;
  if (ss->next)
    ss->next->prev = ss->prev;
  else
    head->prev = ss->prev; /* ss was the tail */
}

/* Link ss into l before `at` (NULL: at the tail). */
static void link_before(key_list *l, session *ss, session *at) {
  session *head = l->head;
  ss->next = at;
  if (!head) {
    ss->prev = ss;
    l->head = ss;
  } else if (at == head) {
    ss->prev = head->prev;
    head->prev = ss;
    l->head = ss;
  } else if (!at) {
    ss->prev = head->prev;
    head->prev->next = ss;
    head->prev = ss;
  } else {
    ss->prev = at->prev;
    at->prev->next = ss;
    at->prev = ss;
  }
}

/* Link ss into l in order of start, looking from `from` (a session of l
 * with every one before it starting later than ss) towards the tail. */
static void link_sorted(key_list *l, session *ss, session *from) {
  session *at = from;
  while (at && at->start > ss->start)
    at = at->next;
  link_before(l, ss, at);
}

session *session_store_add(session_store *s, uint64_t hash, const uint8_t *key,
                           int64_t start, int64_t end, const uint8_t *states,
                           int64_t closed_end, sl_error *err) {
  key_list *l = list_of(s, hash, key);
  session *merged = NULL;
  int64_t was_start = WM_MAX; /* merged's start when found */
  /* the sessions before first start after end: none of them touches */
  session *first = first_from(l, end);
  for (session *ss = first, *next; ss; ss = next) {
    next = ss->next;
    if (walk_ends(s, ss, start, closed_end))
      break;
    if (ss->end <= closed_end || !touches(ss, start, end))
      continue;
    if (!merged) { /* the latest it touches */
      merged = ss;
      was_start = ss->start;
      continue;
    }
    /* An earlier session touches too: fold it into the first. */
    if (sl_agg_merge(s->aggs, merged->states, ss->states, &s->keys.arena,
                     err) != SL_OK)
      return NULL;
    if (ss->start < merged->start)
      merged->start = ss->start;
    if (ss->end > merged->end)
      merged->end = ss->end;
    unlink_session(l, ss);
    ss->gen++;
    ss->next = s->free_list;
    s->free_list = ss;
    s->open--;
  }
  if (!merged) {
    /* The table's copy of the key: its long strings live in the table's
     * arena, key's may not outlive this call. */
    const uint8_t *kept = (const uint8_t *)l - s->head_set.input->width;
    merged = new_session(s, hash, kept, start, end);
    if (first)
      link_sorted(l, merged, first);
    else
      link_before(l, merged, NULL); /* all start later: the tail */
  } else {
    if (start < merged->start)
      merged->start = start;
    if (end > merged->end)
      merged->end = end;
    /* an earlier start: past the closed sessions the walk skipped */
    if (merged->next && merged->next->start > merged->start) {
      session *from = merged->next;
      unlink_session(l, merged);
      link_sorted(l, merged, from);
    }
  }
  note_len(s, merged);
  if (states && sl_agg_merge(s->aggs, merged->states, states, &s->keys.arena,
                             err) != SL_OK)
    return NULL;
  if (merged->start < was_start && was_start != WM_MAX)
    heap_push(&s->by_start, merged->start, merged);
  if (merged->start < s->min_start)
    s->min_start = merged->start;
  if (merged->end < s->min_end)
    s->min_end = merged->end;
  return merged;
}

int session_store_close(session_store *s, session_pred can_close, session_fn fn,
                        void *arg, sl_error *err) {
  (void)err;
  session_heap *h = &s->by_end;
  while (h->n) {
    session_timer t = h->v[0];
    session *ss = t.ss;
    if (t.gen != ss->gen) { /* closed, or folded into another */
      heap_pop(h);
      continue;
    }
    if (t.at != ss->end) { /* it grew since: due at its end now */
      heap_pop(h);
      heap_push(h, ss->end, ss);
      continue;
    }
    if (!can_close(arg, ss))
      break;
    heap_pop(h);
    int rc = fn(arg, ss->key, ss);
    if (rc != SL_OK)
      return rc;
    unlink_session(list_of(s, ss->hash, ss->key), ss);
    ss->gen++;
    s->open--;
    if (s->reuse_closed) {
      ss->next = s->free_list;
      s->free_list = ss;
    }
  }
  s->min_end = h->n ? h->v[0].at : WM_MAX;
  s->min_start = earliest_start(&s->by_start);
  return SL_OK;
}
