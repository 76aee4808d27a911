/* bexpr_depth.c - the height of a bound expression, without recursion
 * (sl_bexpr_height, binder.h).
 *
 * The parser bounds how deeply a statement nests (ast.h), but the planner
 * composes bound trees: a view's column expression is substituted into
 * every expression that uses it, so nested views stack their depths.  The
 * planner measures each composed expression with this walk before any
 * recursive walker sees it.  After substitution a bound tree is a DAG (a
 * view column used twice is one shared node), so heights are memoized per
 * node in an open-addressing table: the walk is linear in the distinct
 * nodes, and the stack it uses is on the heap.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sluice/binder/binder.h"
#include "sluice/common/cancel.h"

typedef struct memo_slot {
  const sl_bexpr *key;
  int height;
  int64_t size;
} memo_slot;

typedef struct memo {
  memo_slot *slots;
  size_t cap, n;
} memo;

static size_t slot_of(const memo *m, const sl_bexpr *e) {
  uintptr_t h = (uintptr_t)e;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 7) & (m->cap - 1);
  while (m->slots[i].key && m->slots[i].key != e)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static const memo_slot *memo_find(const memo *m, const sl_bexpr *e) {
  if (!m->cap)
    return NULL;
  const memo_slot *s = &m->slots[slot_of(m, e)];
  return s->key ? s : NULL;
}

static bool memo_put(memo *m, const sl_bexpr *e, int height, int64_t size) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    memo_slot *old = m->slots;
    size_t ocap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
      m->slots = old;
      return false;
    }
    m->cap = cap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].key)
        m->slots[slot_of(m, old[i].key)] = old[i];
    free(old);
  }
  memo_slot *s = &m->slots[slot_of(m, e)];
  if (!s->key)
    m->n++;
  s->key = e;
  s->height = height;
  s->size = size;
  return true;
}

typedef struct frame {
  const sl_bexpr *e;
  int next; /* the next argument to visit */
} frame;

int sl_bexpr_height(const sl_bexpr *e, int64_t *tree_size,
                    int64_t *copies_out) {
  if (tree_size)
    *tree_size = 0;
  if (copies_out)
    *copies_out = 0;
  int64_t copies = 0;
  if (!e)
    return 0;
  memo m = {0};
  frame *st = NULL;
  int n = 0, cap = 0;
  int result = -1;
  unsigned steps = 0;
  if (e->nargs == 0) {
    if (tree_size)
      *tree_size = 1;
    return 1;
  }
  if (!(st = malloc(sizeof *st * 64)))
    return -1;
  cap = 64;
  st[n++] = (frame){e, 0};
  while (n > 0) {
    frame *f = &st[n - 1];
    if (f->next < f->e->nargs) {
      const sl_bexpr *c = f->e->args[f->next++];
      /* leaves (a million IN literals) need no entry: height 1, size 1 */
      if (!c || c->nargs == 0)
        continue;
      const memo_slot *seen = memo_find(&m, c);
      if (seen) { /* a shared subtree, compiled once more per use */
        copies =
            copies > INT64_MAX - seen->size ? INT64_MAX : copies + seen->size;
        continue;
      }
      if ((++steps & 65535) == 0 && sl_cancel_current_pending()) {
        result = -2;
        goto out;
      }
      if (n == cap) {
        frame *grown = realloc(st, sizeof *st * (size_t)cap * 2);
        if (!grown)
          goto out;
        st = grown;
        cap *= 2;
      }
      st[n++] = (frame){c, 0};
      continue;
    }
    int h = 0;
    int64_t size = 1;
    for (int i = 0; i < f->e->nargs; i++) {
      const sl_bexpr *c = f->e->args[i];
      if (!c)
        continue;
      if (c->nargs == 0) {
        h = h > 1 ? h : 1;
        size = size == INT64_MAX ? size : size + 1;
        continue;
      }
      const memo_slot *s = memo_find(&m, c);
      if (s->height > h)
        h = s->height;
      size = size > INT64_MAX - s->size ? INT64_MAX : size + s->size;
    }
    if (!memo_put(&m, f->e, h + 1, size))
      goto out;
    n--;
  }
  {
    const memo_slot *s = memo_find(&m, e);
    result = s->height;
    if (tree_size)
      *tree_size = s->size;
    if (copies_out)
      *copies_out = copies;
  }
out:
  free(st);
  free(m.slots);
  return result;
}
