/* updating_join.c - the JOIN of updating stages (updating_stages.h): a
 * symmetric hash join whose sides keep every row under its join key, the
 * sweep that drops the rows no later row can meet (a regular join's time
 * bounds), and their expiry under 'table.exec.state.ttl'.  Apart from the
 * other updating stages (updating_stages.c) because its state, a hash
 * table of row blocks per side, is its own. */
#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "sluice/session/changelog.h"
#include "updating_int.h"
#include "updating_stages.h"

/* r first in the bucket at head. */
static void bucket_push(jrow **head, jrow *r) {
  r->next = *head;
  if (*head)
    (*head)->pprev = &r->next;
  *head = r;
  r->pprev = head;
}

static void side_grow(jside *t) {
  uint32_t cap = t->cap ? t->cap * 2 : 1024;
  jrow **b = calloc(cap, sizeof *b);
  if (!b)
    abort();
  t->bytes += sizeof *b * (size_t)(cap - t->cap); /* the buckets */
  for (uint32_t i = 0; i < t->cap; i++)
    for (jrow *r = t->buckets[i], *next; r; r = next) {
      next = r->next;
      bucket_push(&b[r->hash & (cap - 1)], r);
    }
  free(t->buckets);
  t->buckets = b;
  t->cap = cap;
}

/* One holder of r lets go (the hash table, or a deadline heap's entry):
 * the last frees it. */
static void row_release(jside *t, jrow *r) {
  if (--r->refs > 0)
    return;
  t->bytes -= r->size;
  free(r);
}

/* r leaves its side's state (its bucket); its holders still hold it (the
 * hash table's hold is the caller's to let go). */
static void bucket_unlink(jside *t, jrow *r) {
  *r->pprev = r->next;
  if (r->next)
    r->next->pprev = r->pprev;
  r->live = false;
  t->count--;
}

/* A heap's or the queue's entry for r has come due: r leaves the state if
 * it is still there (counted in *gone), and the entry lets go of it. */
static void entry_due(jside *t, jrow *r, uint64_t *gone) {
  if (r->live) {
    bucket_unlink(t, r);
    r->refs--; /* the hash table's; the entry still holds it */
    ++*gone;
  }
  row_release(t, r);
}

/* A copy of the row under key into side t; under a TTL (ttl) into its
 * arrival queue too. */
static jrow *side_add(jside *t, uint64_t hash, const sl_row_layout *kl,
                      const uint8_t *key, const sl_row_layout *rl,
                      const uint8_t *row, double now, bool ttl) {
  if (t->count + 1 > t->cap)
    side_grow(t);
  size_t kh = sl_row_long_bytes(kl, key), rh = sl_row_long_bytes(rl, row);
  size_t size = sizeof(jrow) + kl->width + rl->width + kh + rh;
  jrow *r = malloc(size);
  if (!r)
    abort();
  r->hash = hash;
  r->size = (uint32_t)size;
  r->born = now;
  r->refs = 1;
  r->live = true;
  r->key = (uint8_t *)(r + 1);
  r->row = r->key + kl->width;
  char *heap = (char *)(r->row + rl->width);
  heap = sl_row_copy_deep(kl, key, r->key, heap);
  sl_row_copy_deep(rl, row, r->row, heap);
  bucket_push(&t->buckets[hash & (t->cap - 1)], r);
  t->count++;
  t->bytes += size;
  if (ttl) {
    jqueue_push(&t->arrivals, r);
    r->refs++;
    t->bytes += sizeof(jrow *);
  }
  return r;
}

/* Take back one row equal to row under key: false when none is held. */
static bool side_take(jside *t, uint64_t hash, const sl_row_layout *kl,
                      const uint8_t *key, const sl_row_layout *rl,
                      const uint8_t *row) {
  if (!t->cap)
    return false;
  for (jrow *r = t->buckets[hash & (t->cap - 1)]; r; r = r->next) {
    if (r->hash != hash || !sl_key_equal(kl, r->key, key) ||
        !sl_key_equal(rl, r->row, row))
      continue;
    bucket_unlink(t, r);
    row_release(t, r);
    return true;
  }
  return false;
}

/* The time at which the watermark of bound b's side lets a row of the
 * other side go: its column at byte offset `off` (field `col`) plus the
 * bound's offset, the row going once the watermark is at or after it.  A
 * NULL meets no row (the condition is unknown): it goes at the first
 * sweep.  A sum past the int64 range is past every watermark when the
 * offset is positive (false: never), before every one when it is
 * negative. */
static bool deadline_of(const struct sl_stage_bound *b, const sl_row_layout *l,
                        const uint8_t *row, int64_t *at) {
  if (sl_row_is_null(row, b->col)) {
    *at = INT64_MIN;
    return true;
  }
  if (!__builtin_add_overflow(
          *(const int64_t *)(row + l->fields[b->col].offset), b->offset_us, at))
    return true;
  *at = INT64_MIN;
  return b->offset_us < 0;
}

/* A row just added to side `side`: into the deadline heap of each bound
 * that sweeps that side, and the side's peak. */
static void side_added(ustage *s, int side, jrow *r) {
  const sl_stage *st = s->rt->st;
  const sl_row_layout *l = side ? s->rt->right->layout : s->rt->left->layout;
  jside *t = &s->sides[side];
  for (int k = 0; k < st->nbounds; k++) {
    int64_t at;
    if (st->bounds[k].side != 1 - side ||
        !deadline_of(&st->bounds[k], l, r->row, &at))
      continue;
    jheap_push(&s->deadlines[k], at, r);
    r->refs++;
    t->bytes += sizeof(jdeadline);
  }
  if (t->count > t->peak_rows)
    t->peak_rows = t->count;
  if (t->bytes > t->peak_bytes)
    t->peak_bytes = t->bytes;
}

/* The residual over s->out, then the rows that pass to the parent. */
static int join_flush(update_stages *u, ustage *s) {
  const stage_rt *rt = s->rt;
  uint32_t n = s->out.nrows;
  if (n && rt->residual) {
    for (uint32_t i = 0; i < n; i++)
      s->sel[i] = i;
    int rc = sl_expr_filter(rt->residual, &s->out, s->sel, &n, u->ctx, u->err);
    if (rc != SL_OK)
      return rc;
    uint32_t w = s->out.layout->width;
    for (uint32_t i = 0; i < n; i++) { /* compact; strings stay put */
      if (s->sel[i] != i)
        memcpy(s->out.data + (size_t)i * w, s->out.data + (size_t)s->sel[i] * w,
               w);
      s->ops[i] = s->ops[s->sel[i]];
    }
    s->out.nrows = n;
  }
  return ustage_emit(u, s);
}

int ustage_join_push(update_stages *u, ustage *s, int side, const sl_buffer *in,
                     const uint8_t *ops) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *kl = rt->key_layout, *ol = rt->layout;
  const sl_row_layout *ll = rt->left->layout, *rl = rt->right->layout;
  const sl_row_layout *il = side ? rl : ll;
  int nl = ll->nfields, nr = rl->nfields;
  jside *mine = &s->sides[side], *other = &s->sides[1 - side];
  uint32_t n = in->nrows, done = 0;
  while (done < n) {
    for (uint32_t i = 0; i < n - done; i++)
      s->sel[i] = done + i;
    sl_buffer_clear(&s->keys);
    int k = sl_exec_eval_rows(side ? rt->rkeys : rt->lkeys, rt->st->nkeys, in,
                              s->sel, n - done, &s->keys, u->ctx, u->err);
    if (k <= 0)
      return k < 0 ? k
                   : sl_error_set(u->err, SL_EINVAL,
                                  "a join key is larger than a buffer");
    for (int j = 0; j < k; j++) {
      const uint8_t *row = sl_buffer_row(in, done + (uint32_t)j);
      const uint8_t *key = sl_buffer_row(&s->keys, (uint32_t)j);
      bool null = false;
      for (int f = 0; f < kl->nfields; f++)
        null |= sl_row_is_null(key, f);
      if (null)
        continue; /* NULL equals nothing */
      /* A row taken back (-U, -D) leaves this side's state and takes
       * back what it joined: -D of each joined row, as +I/+U added it
       * as +I (Flink's inner join).  Under a TTL or time bounds the row
       * may be gone already, and so may what it met. */
      bool adds =
          sl_changelog_op_adds((sl_changelog_op)ops[done + (uint32_t)j]);
      uint64_t h = sl_key_hash(kl, key);
      if (adds)
        side_added(s, side,
                   side_add(mine, h, kl, key, il, row, u->now, u->ttl > 0));
      else if (!side_take(mine, h, kl, key, il, row) && u->ttl == 0 &&
               rt->st->nbounds == 0)
        return sl_error_set(u->err, SL_EINTERNAL,
                            "a regular join's input took back a row it "
                            "never added");
      if (!other->cap)
        continue;
      for (jrow *m = other->buckets[h & (other->cap - 1)]; m; m = m->next) {
        if (m->hash != h || !sl_key_equal(kl, m->key, key))
          continue;
        uint8_t *dst = sl_buffer_append(&s->out);
        if (!dst) {
          int rc = join_flush(u, s);
          if (rc != SL_OK)
            return rc;
          dst = sl_buffer_append(&s->out);
        }
        const uint8_t *lrow = side ? m->row : row, *rrow = side ? row : m->row;
        for (int f = 0; f < nl; f++)
          sl_row_copy_field(ll, lrow, f, ol, dst, f);
        for (int f = 0; f < nr; f++)
          sl_row_copy_field(rl, rrow, f, ol, dst, nl + f);
        s->ops[s->out.nrows - 1] = adds ? SL_OP_INSERT : SL_OP_DELETE;
      }
    }
    done += (uint32_t)k;
  }
  return join_flush(u, s);
}

/* Drop from a join's state the rows no later row can meet: for each bound
 * (plan.h, sl_stage.bounds), the other side's rows whose bounding column
 * plus the bound's offset is at or before this side's watermark (the rule
 * is planner/stage_join.c's add_bound).  Each bound's heap gives them
 * earliest first, so a sweep costs the rows it drops (and the dead
 * entries of rows taken back or expired before their time), not the
 * state's size; a row that came after the watermark stopped moving (the
 * other side's stream ended) is past it at once and goes at the next
 * sweep. */
void ustage_join_sweep(ustage *s, const int64_t *leaf_wm) {
  const sl_stage *st = s->rt->st;
  for (int k = 0; k < st->nbounds; k++) {
    int a = st->bounds[k].side;
    int64_t wm;
    if (!sl_stage_col_watermark(a ? st->right : st->left,
                                st->bounds[k].time_col, leaf_wm, &wm) ||
        wm == INT64_MIN)
      continue;
    jside *other = &s->sides[1 - a];
    jheap *h = &s->deadlines[k];
    while (h->n > 0 && h->v[0].at <= wm) {
      other->bytes -= sizeof(jdeadline);
      entry_due(other, jheap_pop(h).row, &s->evicted);
    }
  }
}

/* 'table.exec.state.ttl': the rows of either side that came before
 * oldest go, oldest first (rows come in the order of the clock). */
void ustage_join_expire(ustage *s, double oldest) {
  for (int k = 0; k < 2; k++) {
    jside *t = &s->sides[k];
    while (t->arrivals.n > 0 &&
           t->arrivals.v[t->arrivals.head]->born < oldest) {
      uint64_t expired = 0;
      t->bytes -= sizeof(jrow *);
      entry_due(t, jqueue_pop(&t->arrivals), &expired);
    }
  }
}

/* The entry's hold on r let go at the end: a dead row whose last holder
 * it is goes (the live ones go with their buckets). */
static void drop_entry(jrow *r) {
  if (--r->refs == 0 && !r->live)
    free(r);
}

void ustage_join_free(ustage *s) {
  sl_buffer_free(&s->keys);
  free(s->side_leaves[0]);
  free(s->side_leaves[1]);
  for (int k = 0; k < s->rt->st->nbounds; k++) {
    jheap *h = &s->deadlines[k];
    for (uint32_t i = 0; i < h->n; i++)
      drop_entry(h->v[i].row);
    jheap_free(h);
  }
  free(s->deadlines);
  for (int k = 0; k < 2; k++) {
    jqueue *q = &s->sides[k].arrivals;
    for (uint32_t i = 0; i < q->n; i++)
      drop_entry(q->v[(q->head + i) % q->cap]);
    jqueue_free(q);
    for (uint32_t b = 0; b < s->sides[k].cap; b++)
      for (jrow *r = s->sides[k].buckets[b], *next; r; r = next) {
        next = r->next;
        free(r);
      }
    free(s->sides[k].buckets);
  }
}
