/* partition_leader.c - the pure parts of late merge at partition leaders
 * (partition_leader.h): splitting a partial state by partition, and a
 * leader's store of windows with the vector clock that decides when one
 * fires. */
#include "partition_leader.h"

#include "../exec/executor_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct part_of {
  int p, n;
  const sl_row_layout *kl;
  int nfields;
  const int *fields;
} part_of;

static bool in_part(void *arg, const uint8_t *key) {
  const part_of *po = arg;
  /* The hash computed from the key itself, not the stored one: a compiled
   * fold's hash must not decide where a group goes. */
  uint64_t h = po->nfields > 0
                   ? sl_fields_hash(po->kl, key, po->nfields, po->fields)
                   : sl_key_hash(po->kl, key);
  return sl_leader_partition(h, po->n) == po->p;
}

void sl_leader_split(const sl_group_table *t, int n, int nfields,
                     const int *fields, sl_strbuf *out, uint32_t *groups) {
  /* One pass per partition: n is the node count (a handful), and each
   * part is written contiguously in the wire form the leader decodes. */
  for (int p = 0; p < n; p++) {
    uint32_t g = 0;
    if (t->count > 0) {
      size_t before = out[p].len;
      part_of po = {p, n, t->key_layout, nfields, fields};
      g = sl_group_table_encode_where(t, in_part, &po, &out[p]);
      if (g == 0)
        out[p].len = before; /* nothing for this leader */
    }
    if (groups)
      groups[p] = g;
  }
}

void sl_leader_window_free(sl_leader_window *w) {
  if (!w)
    return;
  sl_group_table_free(w->table);
  free(w->table);
  free(w);
}

void sl_leader_store_init(sl_leader_store *s, int n, int64_t unit_us,
                          const sl_row_layout *key_layout,
                          const sl_agg_set *aggs, sl_slot_pool *pool) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->lock, NULL);
  s->n = n;
  s->vc = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!s->vc)
    abort();
  for (int i = 0; i < n; i++)
    s->vc[i] = INT64_MIN;
  s->unit_us = unit_us;
  s->key_layout = key_layout;
  s->aggs = aggs;
  s->pool = pool;
  s->fired_end = INT64_MIN;
}

void sl_leader_store_free(sl_leader_store *s) {
  for (sl_leader_window *w = s->windows; w;) {
    sl_leader_window *next = w->next;
    sl_leader_window_free(w);
    w = next;
  }
  s->windows = NULL;
  if (s->memory)
    sl_memory_charge(s->memory, &s->charged, 0);
  free(s->vc);
  s->vc = NULL;
  pthread_mutex_destroy(&s->lock);
}

int sl_leader_store_merge(sl_leader_store *s, int64_t start, int64_t end,
                          const uint8_t *wire, size_t len, sl_error *err) {
  pthread_mutex_lock(&s->lock);
  int rc = SL_OK;
  if (end <= s->fired_end) {
    rc = sl_error_set(err, SL_EINTERNAL,
                      "a partition leader got state of a window it has "
                      "already fired (end %lld): a node's watermark ran "
                      "ahead of its state",
                      (long long)end);
    goto out;
  }
  sl_leader_window **at = &s->windows;
  while (*at && (*at)->end < end)
    at = &(*at)->next;
  sl_leader_window *w = *at;
  size_t before = 0; /* the window's bytes already in s->held */
  if (w && w->end == end) {
    before = sl_group_table_bytes(w->table);
  } else {
    w = malloc(sizeof *w);
    sl_group_table *t = malloc(sizeof *t);
    if (!w || !t)
      abort();
    sl_group_table_init_pooled(t, s->key_layout, s->aggs, 64, s->pool);
    w->start = start;
    w->end = end;
    w->table = t;
    w->next = *at;
    *at = w;
  }
  rc = sl_group_table_decode_merge(w->table, wire, len, err);
  s->merges++;
  s->bytes += len;
  s->held += sl_group_table_bytes(w->table) - before;
  uint64_t total = 0;
  if (s->memory &&
      sl_memory_grew_over(s->memory, &s->charged, s->held, &total) &&
      rc == SL_OK) {
    int open = 0;
    uint64_t groups = 0;
    for (const sl_leader_window *o = s->windows; o; o = o->next, open++)
      groups += o->table->count;
    rc = sl_memory_over_error(
        err, s->memory, s->held, total, "use shorter windows or fewer keys",
        "the partition leader's merged windows (%d open window%s, %llu "
        "groups) hold",
        open, open == 1 ? "" : "s", (unsigned long long)groups);
  }
out:
  pthread_mutex_unlock(&s->lock);
  return rc;
}

void sl_leader_store_advance(sl_leader_store *s, int node, int64_t wm) {
  pthread_mutex_lock(&s->lock);
  if (node >= 0 && node < s->n && wm > s->vc[node])
    s->vc[node] = wm;
  pthread_mutex_unlock(&s->lock);
}

static int64_t vc_min(const sl_leader_store *s) {
  int64_t m = INT64_MAX;
  for (int i = 0; i < s->n; i++)
    if (s->vc[i] < m)
      m = s->vc[i];
  return m;
}

sl_leader_window *sl_leader_store_take(sl_leader_store *s) {
  pthread_mutex_lock(&s->lock);
  sl_leader_window *w = s->windows;
  int64_t global = vc_min(s);
  /* As the coordinator's rule for workers: every entry past the window's
   * last instant; a window ending at +infinity (a global aggregate) only
   * when every node has sent everything. */
  if (w && !(global == INT64_MAX ||
             (w->end != INT64_MAX && w->end - s->unit_us <= global)))
    w = NULL;
  if (w) {
    s->windows = w->next;
    w->next = NULL;
    s->fired_end = w->end;
    s->held -= sl_group_table_bytes(w->table);
    if (s->memory)
      sl_memory_charge(s->memory, &s->charged, s->held);
  }
  pthread_mutex_unlock(&s->lock);
  return w;
}

int64_t sl_leader_store_clock(sl_leader_store *s) {
  pthread_mutex_lock(&s->lock);
  int64_t m = vc_min(s);
  pthread_mutex_unlock(&s->lock);
  return m;
}

bool sl_leader_store_finished(sl_leader_store *s) {
  pthread_mutex_lock(&s->lock);
  bool f = s->windows == NULL && vc_min(s) == INT64_MAX;
  pthread_mutex_unlock(&s->lock);
  return f;
}
