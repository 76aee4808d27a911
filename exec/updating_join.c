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

static void side_grow(jside *t) {
  uint32_t cap = t->cap ? t->cap * 2 : 1024;
  jrow **b = calloc(cap, sizeof *b);
  if (!b)
    abort();
  t->bytes += sizeof *b * (size_t)(cap - t->cap); /* the buckets */
  for (uint32_t i = 0; i < t->cap; i++)
    for (jrow *r = t->buckets[i], *next; r; r = next) {
      next = r->next;
      r->next = b[r->hash & (cap - 1)];
      b[r->hash & (cap - 1)] = r;
    }
  free(t->buckets);
  t->buckets = b;
  t->cap = cap;
}

static void side_add(jside *t, uint64_t hash, const sl_row_layout *kl,
                     const uint8_t *key, const sl_row_layout *rl,
                     const uint8_t *row, double now) {
  if (t->count + 1 > t->cap)
    side_grow(t);
  size_t kh = sl_row_long_bytes(kl, key), rh = sl_row_long_bytes(rl, row);
  size_t size = sizeof(jrow) + kl->width + rl->width + kh + rh;
  jrow *r = malloc(size);
  if (!r)
    abort();
  r->hash = hash;
  r->size = size;
  r->born = now;
  r->key = (uint8_t *)(r + 1);
  r->row = r->key + kl->width;
  char *heap = (char *)(r->row + rl->width);
  heap = sl_row_copy_deep(kl, key, r->key, heap);
  sl_row_copy_deep(rl, row, r->row, heap);
  r->next = t->buckets[hash & (t->cap - 1)];
  t->buckets[hash & (t->cap - 1)] = r;
  t->count++;
  t->added++;
  t->bytes += size;
}

/* Take back one row equal to row under key: false when none is held. */
static bool side_take(jside *t, uint64_t hash, const sl_row_layout *kl,
                      const uint8_t *key, const sl_row_layout *rl,
                      const uint8_t *row) {
  if (!t->cap)
    return false;
  for (jrow **p = &t->buckets[hash & (t->cap - 1)]; *p; p = &(*p)->next) {
    jrow *r = *p;
    if (r->hash != hash || !sl_key_equal(kl, r->key, key) ||
        !sl_key_equal(rl, r->row, row))
      continue;
    *p = r->next;
    t->count--;
    t->bytes -= r->size;
    free(r);
    return true;
  }
  return false;
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
        side_add(mine, h, kl, key, il, row, u->now);
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

/* Drop the rows of side t for which gone(r, arg) holds; returns how many. */
static uint64_t side_remove_if(jside *t, bool (*gone)(const jrow *, void *),
                               void *arg) {
  uint64_t n = 0;
  for (uint32_t b = 0; b < t->cap; b++)
    for (jrow **p = &t->buckets[b]; *p;) {
      jrow *r = *p;
      if (!gone(r, arg)) {
        p = &r->next;
        continue;
      }
      *p = r->next;
      t->count--;
      t->bytes -= r->size;
      free(r);
      n++;
    }
  return n;
}

/* A row whose column at byte offset `off` (field `col`) plus `plus` is at
 * or before the watermark, or NULL (it meets no row: the condition is
 * unknown).  A sum past the int64 range is past every watermark when the
 * offset is positive, before every one when it is negative. */
typedef struct bound_test {
  int col;
  uint32_t off;
  int64_t plus;
  int64_t wm;
} bound_test;

static bool passed_bound(const jrow *r, void *arg) {
  const bound_test *b = arg;
  if (sl_row_is_null(r->row, b->col))
    return true;
  int64_t t;
  if (__builtin_add_overflow(*(const int64_t *)(r->row + b->off), b->plus, &t))
    return b->plus < 0;
  return t <= b->wm;
}

static bool born_before(const jrow *r, void *arg) {
  return r->born < *(const double *)arg;
}

/* Drop from a join's state the rows no later row can meet: for each bound
 * (plan.h, sl_stage.bounds), the other side's rows whose bounding column
 * plus the bound's offset is at or before this side's watermark (the rule
 * is planner/stage_join.c's add_bound). */
void ustage_join_sweep(ustage *s, const int64_t *leaf_wm) {
  const sl_stage *st = s->rt->st;
  for (int k = 0; k < st->nbounds; k++) {
    int a = st->bounds[k].side;
    int64_t wm = INT64_MAX;
    for (int i = 0; i < s->nside_leaves[a]; i++)
      if (leaf_wm[s->side_leaves[a][i]] < wm)
        wm = leaf_wm[s->side_leaves[a][i]];
    jside *other = &s->sides[1 - a];
    if (wm == INT64_MIN ||
        (wm <= s->swept[k] && other->added == s->swept_added[k]))
      continue;
    s->swept[k] = wm;
    s->swept_added[k] = other->added;
    const sl_row_layout *l = a ? s->rt->left->layout : s->rt->right->layout;
    int col = st->bounds[k].col;
    bound_test bt = {col, l->fields[col].offset, st->bounds[k].offset_us, wm};
    s->evicted += side_remove_if(other, passed_bound, &bt);
  }
}

/* 'table.exec.state.ttl': the rows of either side that came before
 * oldest go. */
void ustage_join_expire(ustage *s, double oldest) {
  for (int k = 0; k < 2; k++)
    side_remove_if(&s->sides[k], born_before, &oldest);
}

void ustage_join_free(ustage *s) {
  sl_buffer_free(&s->keys);
  free(s->side_leaves[0]);
  free(s->side_leaves[1]);
  free(s->swept);
  free(s->swept_added);
  for (int k = 0; k < 2; k++) {
    for (uint32_t b = 0; b < s->sides[k].cap; b++)
      for (jrow *r = s->sides[k].buckets[b], *next; r; r = next) {
        next = r->next;
        free(r);
      }
    free(s->sides[k].buckets);
  }
}
