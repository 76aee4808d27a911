/* stage_eval.c - the operators of a staged plan, evaluated one window at a
 * time (plan.h, "multi-stage plans").
 *
 * Every stage above the leaves is window-aligned (the planner checked it),
 * so the rows of one window are a small batch query: a SELECT filters and
 * projects with the vectorized interpreter, a JOIN builds a hash table on
 * its right side's key rows and probes it with the left's, an AGGREGATE
 * folds into a group table with the same partial states (aggregate.h) the
 * leaves use, a TOPN sorts each partition and numbers its rows.  Rows are
 * copied field by field into each operator's output layout; their long
 * strings keep pointing at the rows they came from, which live until the
 * window's rows are written (stage_eval_release).
 */
#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "stage_int.h"

/* ---- relations ----------------------------------------------------------- */

/* Keep r with the window's relations (freed at stage_eval_release). */
static void adopt_rel(stage_eval *ev, rel *r) {
  if (ev->nrels == ev->caprels) {
    ev->caprels = ev->caprels ? ev->caprels * 2 : 16;
    rel **g = realloc(ev->rels, sizeof *g * (size_t)ev->caprels);
    if (!g)
      abort();
    ev->rels = g;
  }
  ev->rels[ev->nrels++] = r;
}

/* A relation the evaluation of stage s makes (its bytes count as s's). */
rel *stage_rel_new(stage_eval *ev, const stage_rt *s,
                   const sl_row_layout *layout) {
  rel *r = calloc(1, sizeof *r);
  if (!r)
    abort();
  r->layout = layout;
  r->stage = s->id;
  adopt_rel(ev, r);
  return r;
}

/* The window's evaluation holds `bytes` more: reported to the memory
 * account; true once that took the query over its limit (the error is in
 * ev->err; a buffer or two may be allocated past it, none more). */
static bool eval_grew(stage_eval *ev, uint64_t bytes) {
  ev->held += bytes;
  uint64_t total;
  if (!ev->memory || ev->over ||
      !sl_memory_grew_over(ev->memory, &ev->charged, ev->held, &total))
    return ev->over;
  ev->over = true;
  sl_memory_over_error(
      ev->err, ev->memory, ev->held, total,
      "use shorter windows or a join condition that matches fewer rows",
      "one window's evaluation of the stages above the leaves (its joined "
      "rows, hash tables and groups) holds");
  return true;
}

/* bytes more held by stage s for this window. */
void stage_window_holds(stage_eval *ev, const stage_rt *s, uint64_t bytes) {
  if (s->id >= 0 && s->id < SL_STATS_STAGES)
    ev->window_bytes[s->id] += bytes;
  eval_grew(ev, bytes);
}

/* One more buffer slot at the end of r (not initialized). */
static sl_buffer *rel_new_slot(rel *r) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 4;
    sl_buffer *g = realloc(r->bufs, sizeof *g * (size_t)r->cap);
    if (!g)
      abort();
    r->bufs = g;
  }
  return &r->bufs[r->n++];
}

#define REL_FIRST_BUFFER 4096u

/* Open another buffer at the end of r. */
static sl_buffer *rel_new_buffer(stage_eval *ev, rel *r, uint32_t heap) {
  sl_buffer *b = rel_new_slot(r);
  /* Small first, doubling up to the buffer size: a window of a few rows
   * (most stages' output: a window's groups, a Top-N's rows) holds a few
   * KiB per stage, not a buffer each. */
  uint32_t size = r->next_size ? r->next_size : REL_FIRST_BUFFER;
  if (size > ev->buffer_size)
    size = ev->buffer_size;
  r->next_size = size < ev->buffer_size / 2 ? size * 2 : ev->buffer_size;
  uint32_t need = r->layout->width + heap + 64;
  sl_buffer_init(b, r->layout, need > size ? need : size);
  b->borrow_strings = true;
  eval_grew(ev, b->cap);
  return b;
}

/* A buffer of r with room for one more row (a new one if needed). */
sl_buffer *stage_rel_room(stage_eval *ev, rel *r, uint32_t heap) {
  sl_buffer *b = r->n ? &r->bufs[r->n - 1] : NULL;
  if (b && sl_buffer_has_room(b, heap))
    return b;
  return rel_new_buffer(ev, r, heap);
}

static void rel_free(rel *r) {
  if (!r->borrowed)
    for (int i = 0; i < r->n; i++)
      sl_buffer_free(&r->bufs[i]);
  if (!r->borrowed)
    free(r->bufs);
  free(r);
}

void stage_eval_release(stage_eval *ev) {
  for (int i = 0; i < ev->nrels; i++) {
    const rel *r = ev->rels[i];
    if (!r->borrowed && r->stage >= 0 && r->stage < SL_STATS_STAGES)
      for (int b = 0; b < r->n; b++)
        ev->window_bytes[r->stage] += r->bufs[b].cap;
    rel_free(ev->rels[i]);
  }
  ev->nrels = 0;
  for (int i = 0; i < SL_STATS_STAGES; i++) {
    if (ev->window_bytes[i] > ev->peak_bytes[i])
      ev->peak_bytes[i] = ev->window_bytes[i];
    ev->window_bytes[i] = 0;
  }
  for (int i = 0; i < ev->ntables; i++)
    sl_group_table_free(&ev->tables[i]);
  ev->ntables = 0;
  ev->held = 0;
  ev->over = false;
  if (ev->memory)
    sl_memory_charge(ev->memory, &ev->charged, 0);
}

/* Evaluate progs over the rows sel of b into r (as many buffers as it
 * takes). */
int stage_eval_into(stage_eval *ev, sl_expr_prog *const *progs, int nprogs,
                    const sl_buffer *b, const uint32_t *sel, uint32_t n,
                    rel *r) {
  uint32_t done = 0;
  while (done < n) {
    sl_buffer *out = stage_rel_room(ev, r, 0);
    int k = sl_exec_eval_rows(progs, nprogs, b, sel + done, n - done, out,
                              ev->ctx, ev->err);
    if (k < 0)
      return k;
    if (k == 0) {
      if (out->nrows == 0)
        return sl_error_set(ev->err, SL_EINVAL,
                            "a row is larger than a buffer; raise SET "
                            "'sluice.buffer-size'");
      rel_new_buffer(ev, r, 0); /* full: go on in another buffer */
      continue;
    }
    done += (uint32_t)k;
  }
  return SL_OK;
}

/* Kernel k (filter and outputs, or outputs) over rows sel[0..n) of b into
 * r.  SL_OK when it did them all; else the interpreter is to do rows
 * sel[*done..n) (k handed them back: an error to report, a row that does
 * not fit), the rows before that being in r. */
static int compiled_into(stage_eval *ev, const sl_jit_kernel *k,
                         const sl_buffer *b, const uint32_t *sel, uint32_t n,
                         rel *r, uint32_t *done) {
  uint32_t *passed = malloc(sizeof *passed * (n > 0 ? n : 1));
  if (!passed)
    abort();
  *done = 0;
  int rc = SL_OK;
  while (*done < n) {
    sl_buffer *out = stage_rel_room(ev, r, 0);
    uint32_t nout, next;
    rc = sl_jit_run(k, b, sel + *done, n - *done, passed, &nout, out, &next,
                    ev->ctx);
    if (rc != SL_OK)
      break;
    if (next == 0) {
      if (out->nrows == 0) { /* not one row fits a buffer */
        rc = SL_JIT_RETRY;
        break;
      }
      rel_new_buffer(ev, r, 0); /* full: go on in another buffer */
      continue;
    }
    *done += next;
  }
  free(passed);
  ev->rows_compiled += *done;
  ev->rows_interpreted += n - *done;
  return rc == SL_OK ? SL_OK : SL_JIT_RETRY;
}

/* ---- building the runtime tree ------------------------------------------- */

static const int *identity(sl_arena *a, int n) {
  int *m = SL_ANEW_N(a, int, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    m[i] = i;
  return m;
}

static int compile(sl_arena *a, const sl_bexpr *e, const sl_row_layout *l,
                   sl_expr_prog **out, sl_error *err) {
  *out = NULL;
  if (!e)
    return SL_OK;
  return sl_expr_compile(a, e, l, identity(a, l->nfields), out, err);
}

static int compile_all(sl_arena *a, sl_bexpr *const *es, int n,
                       const sl_row_layout *l, sl_expr_prog ***out,
                       sl_error *err) {
  *out = SL_ANEW_N(a, sl_expr_prog *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    int rc = compile(a, es[i], l, &(*out)[i], err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

static const sl_row_layout *layout_of(sl_arena *a, int n, sl_bexpr *const *es) {
  const sl_type **types = SL_ANEW_N(a, const sl_type *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    types[i] = es[i]->type;
  return sl_row_layout_new(a, n, NULL, types);
}

/* The columns of `in` that keys es[0..n) are, when every one is a plain
 * column of the key's own type; else NULL. */
static const int *key_columns(sl_arena *a, sl_bexpr *const *es, int n,
                              const sl_row_layout *keys,
                              const sl_row_layout *in) {
  int *cols = SL_ANEW_N(a, int, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    const sl_bexpr *e = es[i];
    if (e->kind != SL_BEXPR_COLUMN || e->depth != 0 || e->index < 0 ||
        e->index >= in->nfields ||
        in->fields[e->index].ptype != keys->fields[i].ptype ||
        in->fields[e->index].size != keys->fields[i].size)
      return NULL;
    cols[i] = e->index;
  }
  return cols;
}

/* st's number in pre-order over the stages under root that are not
 * leaves (stage_rt.id), counting from *next; -1 if not under root. */
static int preorder_id(const sl_stage *root, const sl_stage *st, int *next) {
  if (!root || root->kind == SL_STAGE_LEAF)
    return -1;
  int id = (*next)++;
  if (root == st)
    return id;
  const sl_stage *kids[3] = {root->input, root->left, root->right};
  for (int i = 0; i < 3; i++) {
    int found = preorder_id(kids[i], st, next);
    if (found >= 0)
      return found;
  }
  return -1;
}

int stage_rt_build(sl_arena *a, const sl_stage *st, const sl_staged_plan *sp,
                   stage_rt **out, sl_error *err) {
  stage_rt *s = SL_ANEW(a, stage_rt);
  s->st = st;
  s->stream_side = -1;
  int next = 0;
  s->id = preorder_id(sp->top, st, &next);
  int rc = SL_OK;
  if (st->kind == SL_STAGE_LEAF) {
    /* The leaf executor's own output layout (its hidden window_end too),
     * or for window rows the stage's columns (the window's added). */
    const sl_plan *lp = sp->leaves[st->leaf];
    s->leaf = st->leaf;
    s->layout =
        lp->window_rows
            ? sl_row_layout_new(a, st->ncols, st->names, st->types)
            : sl_row_layout_new(a, lp->nout, lp->out_names, lp->out_types);
    *out = s;
    return SL_OK;
  }
  s->layout = sl_row_layout_new(a, st->ncols, st->names, st->types);
  if (st->input)
    rc = stage_rt_build(a, st->input, sp, &s->input, err);
  if (rc == SL_OK && st->left)
    rc = stage_rt_build(a, st->left, sp, &s->left, err);
  if (rc == SL_OK && st->right)
    rc = stage_rt_build(a, st->right, sp, &s->right, err);
  if (rc != SL_OK)
    return rc;
  switch (st->kind) {
  case SL_STAGE_SELECT:
    rc = compile(a, st->filter, s->input->layout, &s->filter, err);
    if (rc == SL_OK)
      rc = compile_all(a, st->exprs, st->nexprs, s->input->layout, &s->exprs,
                       err);
    break;
  case SL_STAGE_JOIN:
    s->stream_side = st->left->stream ? 0 : st->right->stream ? 1 : -1;
    s->key_layout = layout_of(a, st->nkeys, st->lkeys);
    rc = compile_all(a, st->lkeys, st->nkeys, s->left->layout, &s->lkeys, err);
    if (rc == SL_OK)
      rc = compile_all(a, st->rkeys, st->nkeys, s->right->layout, &s->rkeys,
                       err);
    if (rc == SL_OK)
      rc = compile(a, st->residual, s->layout, &s->residual, err);
    s->lcols =
        key_columns(a, st->lkeys, st->nkeys, s->key_layout, s->left->layout);
    s->rcols =
        key_columns(a, st->rkeys, st->nkeys, s->key_layout, s->right->layout);
    s->flat_keys = s->lcols && s->rcols && s->key_layout->width % 8 == 0;
    for (int i = 0; i < s->key_layout->nfields; i++)
      s->flat_keys &= s->key_layout->fields[i].ptype != SL_P_STR;
    break;
  case SL_STAGE_AGGREGATE: {
    int n = st->ngroups;
    for (int i = 0; i < st->naggs; i++)
      n += (st->aggs[i].arg != NULL) + (st->aggs[i].filter != NULL);
    sl_bexpr **tmp = SL_ANEW_N(a, sl_bexpr *, n > 0 ? n : 1);
    sl_agg_desc *descs =
        SL_ANEW_N(a, sl_agg_desc, st->naggs > 0 ? st->naggs : 1);
    int k = 0;
    for (int i = 0; i < st->ngroups; i++)
      tmp[k++] = st->groups[i];
    for (int i = 0; i < st->naggs; i++) {
      const sl_plan_agg *pa = &st->aggs[i];
      descs[i].op = pa->op;
      descs[i].distinct = pa->distinct;
      descs[i].out_type = pa->type;
      descs[i].in_field = -1;
      descs[i].filter_field = -1;
      if (pa->arg) {
        descs[i].in_field = k;
        tmp[k++] = pa->arg;
      }
      if (pa->filter) {
        descs[i].filter_field = k;
        tmp[k++] = pa->filter;
      }
    }
    s->ntmp = n;
    s->tmp_layout = layout_of(a, n, tmp);
    s->group_layout = layout_of(a, st->ngroups, st->groups);
    rc = compile_all(a, tmp, n, s->input->layout, &s->tmp_progs, err);
    if (rc == SL_OK)
      rc = sl_agg_set_init(a, &s->aggs, st->naggs, descs, s->tmp_layout, err);
    break;
  }
  case SL_STAGE_TOPN: {
    int n = st->npartition + st->norder;
    sl_bexpr **keys = SL_ANEW_N(a, sl_bexpr *, n > 0 ? n : 1);
    s->sort_order = SL_ANEW_N(a, sl_border, n > 0 ? n : 1);
    for (int i = 0; i < st->npartition; i++) {
      keys[i] = st->partition[i];
      s->sort_order[i].column = i;
    }
    for (int i = 0; i < st->norder; i++) {
      int k = st->npartition + i;
      keys[k] = st->order[i];
      s->sort_order[k].column = k;
      s->sort_order[k].desc = st->order_desc[i];
      s->sort_order[k].nulls = st->order_nulls ? st->order_nulls[i] : 0;
    }
    s->nsort = n;
    s->part_fields = SL_ANEW_N(a, int, n > 0 ? n : 1);
    for (int i = 0; i < st->npartition; i++) {
      const sl_bexpr *e = keys[i];
      bool bound = e->kind == SL_BEXPR_COLUMN && e->depth == 0 &&
                   st->input->wprop && e->index < st->input->ncols &&
                   st->input->wprop[e->index] >= 0;
      if (!bound)
        s->part_fields[s->npart_fields++] = i;
    }
    const sl_type **types = SL_ANEW_N(a, const sl_type *, n + 1);
    for (int i = 0; i < n; i++)
      types[i] = keys[i]->type;
    types[n] = sl_type_new(a, SL_TYPE_BIGINT); /* the input row's place */
    s->sort_layout = sl_row_layout_new(a, n + 1, NULL, types);
    s->sort_cols = key_columns(a, keys, n, s->sort_layout, s->input->layout);
    rc = compile_all(a, keys, n, s->input->layout, &s->sort_progs, err);
    if (rc == SL_OK) { /* one more, NULL: the place is filled by hand */
      sl_expr_prog **p = SL_ANEW_N(a, sl_expr_prog *, n + 1);
      for (int i = 0; i < n; i++)
        p[i] = s->sort_progs[i];
      s->sort_progs = p;
    }
    break;
  }
  case SL_STAGE_LEAF:
    break;
  }
  *out = s;
  return rc;
}

/* ---- operators ------------------------------------------------------------
 */

keyed_rows *leaf_store_find(const leaf_store *ls, int64_t key) {
  int lo = 0, hi = ls->nkeys - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (ls->keys[mid].key == key)
      return &ls->keys[mid];
    if (ls->keys[mid].key < key)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

uint32_t *stage_selection(uint32_t n) {
  uint32_t *sel = malloc(sizeof *sel * (n > 0 ? n : 1));
  if (!sel)
    abort();
  for (uint32_t i = 0; i < n; i++)
    sel[i] = i;
  return sel;
}

static int eval_leaf(stage_eval *ev, const stage_rt *s, int64_t end,
                     const rel **out) {
  rel *r = stage_rel_new(ev, s, s->layout);
  r->borrowed = true;
  keyed_rows *k = leaf_store_find(&ev->leaves[s->leaf], end);
  if (k) {
    r->bufs = k->rows.bufs;
    r->n = k->rows.nbufs;
  }
  *out = r;
  return SL_OK;
}

static int eval_select(stage_eval *ev, const stage_rt *s, const rel *in,
                       const rel **out) {
  rel *r = stage_rel_new(ev, s, s->layout);
  int rc = SL_OK;
  for (int i = 0; i < in->n && rc == SL_OK; i++) {
    const sl_buffer *b = &in->bufs[i];
    uint32_t n = b->nrows, done = 0;
    uint32_t *sel = stage_selection(n);
    /* compiled: filter and exprs in one loop; what it hands back (and
     * without a kernel, everything) the interpreter does */
    if (!s->k_exprs)
      ev->rows_interpreted += n;
    if (!s->k_exprs ||
        compiled_into(ev, s->k_exprs, b, sel, n, r, &done) != SL_OK) {
      uint32_t left = n - done;
      if (s->filter)
        rc = sl_expr_filter(s->filter, b, sel + done, &left, ev->ctx, ev->err);
      if (rc == SL_OK)
        rc = stage_eval_into(ev, s->exprs, s->st->nexprs, b, sel + done, left,
                             r);
    }
    free(sel);
  }
  *out = r;
  return rc;
}

/* Key rows of every row of in (one rel, row for row); has_null[i]: the
 * key of row i has a NULL (it matches nothing). */
static int key_rows(stage_eval *ev, const stage_rt *s, sl_expr_prog **progs,
                    const rel *in, rel **keys) {
  rel *k = stage_rel_new(ev, s, s->key_layout);
  int rc = SL_OK;
  for (int i = 0; i < in->n && rc == SL_OK; i++) {
    const sl_buffer *b = &in->bufs[i];
    uint32_t *sel = stage_selection(b->nrows);
    rc = stage_eval_into(ev, progs, s->st->nkeys, b, sel, b->nrows, k);
    free(sel);
  }
  *keys = k;
  return rc;
}

static bool key_has_null(const sl_row_layout *l, const uint8_t *k) {
  for (int i = 0; i < l->nfields; i++)
    if (sl_row_is_null(k, i))
      return true;
  return false;
}

/* Row pointers of a relation, in order. */
const uint8_t **stage_rel_rows(const rel *r, size_t *n) {
  size_t total = 0;
  for (int i = 0; i < r->n; i++)
    total += r->bufs[i].nrows;
  const uint8_t **v = malloc(sizeof *v * (total > 0 ? total : 1));
  if (!v)
    abort();
  size_t k = 0;
  for (int i = 0; i < r->n; i++)
    for (uint32_t j = 0; j < r->bufs[i].nrows; j++)
      v[k++] = sl_buffer_row(&r->bufs[i], j);
  *n = total;
  return v;
}

static void join_row(stage_eval *ev, const stage_rt *s, rel *r,
                     const uint8_t *lrow, const uint8_t *rrow) {
  const sl_row_layout *ll = s->left->layout, *rl = s->right->layout;
  int nl = s->st->left->ncols, nr = s->st->right->ncols;
  sl_buffer *o = stage_rel_room(ev, r, 0);
  uint8_t *dst = sl_buffer_append(o);
  for (int f = 0; f < nl; f++)
    sl_row_copy_field(ll, lrow, f, s->layout, dst, f);
  for (int f = 0; f < nr; f++)
    sl_row_copy_field(rl, rrow, f, s->layout, dst, nl + f);
}

/* A join key's hash and equality: word by word for flat keys
 * (stage_rt.flat_keys), else sl_key_hash and sl_key_equal. */
static uint64_t join_key_hash(const stage_rt *s, const uint8_t *k) {
  const sl_row_layout *kl = s->key_layout;
  if (!s->flat_keys)
    return sl_key_hash(kl, k);
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (uint32_t i = 0; i < kl->width; i += 8) {
    uint64_t x;
    memcpy(&x, k + i, 8);
    h = sl_mix64(h ^ x);
  }
  return h;
}

static bool join_keys_equal(const stage_rt *s, const uint8_t *a,
                            const uint8_t *b) {
  const sl_row_layout *kl = s->key_layout;
  if (!s->flat_keys)
    return sl_key_equal(kl, a, b);
  uint64_t d = 0;
  for (uint32_t i = 0; i < kl->width; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    d |= x ^ y;
  }
  return d == 0;
}

/* A chained hash table over the build side's key rows (without keys:
 * just its rows, every one matching).  A build row's hash, chain link,
 * row and key share one entry: a probe that misses the cache misses once
 * per candidate, not once per array. */
typedef struct join_entry {
  uint64_t hash;
  int64_t next;
  const uint8_t *row, *key;
} join_entry;

typedef struct join_table {
  size_t cap, n;
  int64_t *head;
  join_entry *e;
  const uint8_t **rows, **keys;
  uint8_t *keybuf; /* the key rows read from columns (cols), or NULL */
} join_table;

/* Row `row`'s key, read from its columns cols into dst (one key row). */
static void key_from_columns(const stage_rt *s, const int *cols,
                             const sl_row_layout *rl, const uint8_t *row,
                             uint8_t *dst) {
  const sl_row_layout *kl = s->key_layout;
  memset(dst, 0, kl->width);
  for (int i = 0; i < kl->nfields; i++)
    sl_row_copy_field(rl, row, cols[i], kl, dst, i);
}

static int build_table(stage_eval *ev, const stage_rt *s, const rel *in,
                       sl_expr_prog **progs, const int *cols, join_table *t) {
  memset(t, 0, sizeof *t);
  t->rows = stage_rel_rows(in, &t->n);
  if (s->st->nkeys == 0)
    return SL_OK;
  if (cols) { /* keys read from their columns */
    uint32_t kw = s->key_layout->width;
    t->keybuf = malloc((size_t)kw * (t->n > 0 ? t->n : 1));
    t->keys = malloc(sizeof *t->keys * (t->n > 0 ? t->n : 1));
    if (!t->keybuf || !t->keys)
      abort();
    const sl_row_layout *rl =
        cols == s->lcols ? s->left->layout : s->right->layout;
    for (size_t j = 0; j < t->n; j++) {
      key_from_columns(s, cols, rl, t->rows[j], t->keybuf + j * kw);
      t->keys[j] = t->keybuf + j * kw;
    }
  } else {
    rel *k;
    int rc = key_rows(ev, s, progs, in, &k);
    if (rc != SL_OK)
      return rc;
    size_t nk;
    t->keys = stage_rel_rows(k, &nk);
  }
  t->cap = 16;
  while (t->cap < t->n * 2)
    t->cap *= 2;
  t->head = malloc(sizeof *t->head * t->cap);
  t->e = malloc(sizeof *t->e * (t->n + 1));
  if (!t->head || !t->e)
    abort();
  for (size_t i = 0; i < t->cap; i++)
    t->head[i] = -1;
  for (size_t j = 0; j < t->n; j++) {
    if (key_has_null(s->key_layout, t->keys[j]))
      continue; /* NULL never equals anything */
    uint64_t h = join_key_hash(s, t->keys[j]);
    size_t b = h & (t->cap - 1);
    t->e[j] = (join_entry){h, t->head[b], t->rows[j], t->keys[j]};
    t->head[b] = (int64_t)j;
  }
  return SL_OK;
}

static uint64_t table_bytes(const stage_rt *s, const join_table *t) {
  if (!t->head) /* no keys: just the row pointers */
    return sizeof *t->rows * t->n;
  return sizeof *t->head * t->cap + sizeof *t->e * (t->n + 1) +
         (sizeof *t->rows + sizeof *t->keys) * t->n +
         (t->keybuf ? (uint64_t)s->key_layout->width * t->n : 0);
}

static void free_table(join_table *t) {
  free(t->head);
  free(t->e);
  free(t->rows);
  free(t->keys);
  free(t->keybuf);
}

/* Probe rows looked up PROBE_BATCH at a time: every row's hash and chain
 * head are prefetched before the first is followed, so the cache misses
 * of a table larger than the cache overlap (a probe of a 60,000-row
 * window stalled on the chain heads half of its time). */
#define PROBE_BATCH 16

/* The matches of probe rows rows[0..n) (n <= PROBE_BATCH) whose keys are
 * keys[0..n), in row order: every match becomes a joined row, the left
 * side's fields first whichever side probes. */
static void probe_batch(stage_eval *ev, const stage_rt *s, const join_table *t,
                        bool probe_left, const uint8_t *const *rows,
                        const uint8_t *const *keys, uint32_t n, rel *out) {
  const sl_row_layout *kl = s->key_layout;
  uint64_t h[PROBE_BATCH];
  int64_t m[PROBE_BATCH];
  size_t mask = t->cap - 1;
  for (uint32_t i = 0; i < n; i++) {
    m[i] = key_has_null(kl, keys[i]) ? -1 : 0; /* NULL matches nothing */
    if (m[i] < 0)
      continue;
    /* the key of the row before, byte for byte (a window's rows often
     * share their window's bounds as the key): its hash */
    if (i > 0 && m[i - 1] >= 0 &&
        (s->flat_keys ? join_keys_equal(s, keys[i], keys[i - 1])
                      : memcmp(keys[i], keys[i - 1], kl->width) == 0))
      h[i] = h[i - 1];
    else
      h[i] = join_key_hash(s, keys[i]);
    __builtin_prefetch(&t->head[h[i] & mask]);
  }
  for (uint32_t i = 0; i < n; i++)
    if (m[i] >= 0 && (m[i] = t->head[h[i] & mask]) >= 0)
      __builtin_prefetch(&t->e[m[i]]);
  for (uint32_t i = 0; i < n && !ev->over; i++)
    for (int64_t x = m[i]; x >= 0 && !ev->over; x = t->e[x].next) {
      const join_entry *e = &t->e[x];
      if (e->hash == h[i] && join_keys_equal(s, keys[i], e->key)) {
        if (probe_left)
          join_row(ev, s, out, rows[i], e->row);
        else
          join_row(ev, s, out, e->row, rows[i]);
      }
    }
}

static int probe(stage_eval *ev, const stage_rt *s, const join_table *t,
                 sl_expr_prog **progs, const int *cols, bool probe_left,
                 const sl_buffer *b, const uint32_t *sel, uint32_t n,
                 rel *out) {
  if (n == 0 || t->n == 0)
    return SL_OK;
  if (s->st->nkeys == 0) {
    for (uint32_t i = 0; i < n && !ev->over; i++)
      for (size_t m = 0; m < t->n && !ev->over; m++) {
        const uint8_t *row = sl_buffer_row(b, sel[i]);
        if (probe_left)
          join_row(ev, s, out, row, t->rows[m]);
        else
          join_row(ev, s, out, t->rows[m], row);
      }
    return ev->over ? SL_ENOMEM : SL_OK;
  }
  const uint8_t *rows[PROBE_BATCH], *keys[PROBE_BATCH];
  if (cols) { /* keys read from their columns, a batch at a time */
    uint32_t kw = s->key_layout->width;
    uint8_t *kb = malloc((size_t)kw * PROBE_BATCH);
    if (!kb)
      abort();
    const sl_row_layout *pl = probe_left ? s->left->layout : s->right->layout;
    for (uint32_t i = 0; i < n && !ev->over; i += PROBE_BATCH) {
      uint32_t k = n - i < PROBE_BATCH ? n - i : PROBE_BATCH;
      for (uint32_t j = 0; j < k; j++) {
        uint8_t *key = kb + (size_t)j * kw;
        rows[j] = sl_buffer_row(b, sel[i + j]);
        keys[j] = key;
        key_from_columns(s, cols, pl, rows[j], key);
      }
      probe_batch(ev, s, t, probe_left, rows, keys, k, out);
    }
    free(kb);
    return ev->over ? SL_ENOMEM : SL_OK;
  }
  rel *kr = stage_rel_new(ev, s, s->key_layout);
  int rc = stage_eval_into(ev, progs, s->st->nkeys, b, sel, n, kr);
  if (rc != SL_OK)
    return rc;
  uint32_t i = 0, k = 0;
  for (int kb = 0; kb < kr->n && !ev->over; kb++)
    for (uint32_t j = 0; j < kr->bufs[kb].nrows && !ev->over; j++, i++) {
      rows[k] = sl_buffer_row(b, sel[i]);
      keys[k++] = sl_buffer_row(&kr->bufs[kb], j);
      if (k == PROBE_BATCH) {
        probe_batch(ev, s, t, probe_left, rows, keys, k, out);
        k = 0;
      }
    }
  if (k > 0 && !ev->over)
    probe_batch(ev, s, t, probe_left, rows, keys, k, out);
  return ev->over ? SL_ENOMEM : SL_OK;
}

/* Keep the rows of r from row *frow of buffer *fb on that pass the
 * residual, moved down in place (strings are borrowed, so only the rows
 * move); the cursor then points past r's last row.  A probe filters what
 * it made after every item, so a window whose candidates mostly fail
 * (q5: every auction of a window meets the window's one maximum) never
 * holds them all. */
static int apply_residual(stage_eval *ev, const stage_rt *s, rel *r, int *fb,
                          uint32_t *frow) {
  int rc = SL_OK;
  for (int i = *fb; i < r->n && rc == SL_OK; i++) {
    sl_buffer *b = &r->bufs[i];
    uint32_t from = i == *fb ? *frow : 0;
    if (from >= b->nrows)
      continue;
    uint32_t n = b->nrows - from, next = 0, nout = 0;
    uint32_t *sel = stage_selection(n);
    for (uint32_t k = 0; k < n; k++)
      sel[k] += from;
    if (s->k_residual &&
        sl_jit_run(s->k_residual, b, sel, n, sel, &nout, NULL, &next,
                   ev->ctx) == SL_OK &&
        next == n) {
      ev->rows_compiled += n;
      n = nout; /* compiled: the rows that passed are in sel */
    } else {
      for (uint32_t k = 0; k < n; k++)
        sel[k] = from + k; /* (a kernel handing back may have written some) */
      ev->rows_interpreted += n;
      rc = sl_expr_filter(s->residual, b, sel, &n, ev->ctx, ev->err);
    }
    if (rc == SL_OK) {
      uint32_t w = s->layout->width;
      for (uint32_t k = 0; k < n; k++)
        if (sel[k] != from + k)
          memcpy(b->data + (size_t)(from + k) * w, b->data + (size_t)sel[k] * w,
                 w);
      b->nrows = from + n;
    }
    free(sel);
  }
  *fb = r->n > 0 ? r->n - 1 : 0;
  *frow = r->n > 0 ? r->bufs[r->n - 1].nrows : 0;
  return rc;
}

/* One buffer of the probe side: every row of it, or (ranged) those whose
 * event time is in the job's [lo, hi]. */
typedef struct probe_item {
  const sl_buffer *b;
  bool ranged;
} probe_item;

/* A window's probe, cut into parts by rows (stage_pool.c runs them): part
 * p probes items [first[p], first[p + 1]) into out[p] with an evaluation
 * state of its own (pev[p]: its expression context, its relations), and
 * applies the residual to its rows. */
typedef struct probe_job {
  const stage_rt *s;
  const join_table *t;
  sl_expr_prog **progs;
  const int *cols;
  bool probe_left;
  const probe_item *items;
  int64_t lo, hi;
  const sl_row_layout *tl; /* the ranged items' layout; tf its time */
  int tf;
  int *first;
  stage_eval *pev;
  rel **out;
  sl_error *errs;
  int *rcs;
} probe_job;

static int probe_items(stage_eval *ev, const probe_job *j, int from, int to,
                       rel *out) {
  int rc = SL_OK;
  int fb = out->n > 0 ? out->n - 1 : 0; /* the residual's cursor */
  uint32_t frow = out->n > 0 ? out->bufs[out->n - 1].nrows : 0;
  for (int i = from; i < to && rc == SL_OK; i++) {
    const sl_buffer *b = j->items[i].b;
    uint32_t *sel = stage_selection(b->nrows), n = b->nrows;
    if (j->items[i].ranged) {
      n = 0;
      for (uint32_t x = 0; x < b->nrows; x++) {
        const uint8_t *row = sl_buffer_row(b, x);
        if (sl_row_is_null(row, j->tf))
          continue;
        int64_t v = SL_FIELD(row, j->tl, j->tf, int64_t);
        if (v >= j->lo && v <= j->hi)
          sel[n++] = x;
      }
    }
    rc =
        probe(ev, j->s, j->t, j->progs, j->cols, j->probe_left, b, sel, n, out);
    free(sel);
    if (rc == SL_OK && j->s->residual)
      rc = apply_residual(ev, j->s, out, &fb, &frow);
  }
  return rc;
}

static void probe_part(void *arg, int part) {
  probe_job *j = arg;
  j->rcs[part] = probe_items(&j->pev[part], j, j->first[part],
                             j->first[part + 1], j->out[part]);
}

/* Probe table t with items[0..n) into r: in parts on the stage pool's
 * threads when there are enough rows, their rows in r in item order. */
static int run_probe(stage_eval *ev, probe_job *j, int n, rel *r) {
  uint64_t total = 0;
  for (int i = 0; i < n; i++)
    total += j->items[i].b->nrows;
  int nparts = total >= SL_STAGE_PARALLEL_ROWS ? stage_pool_parts(ev->pool) : 1;
  if (nparts > n)
    nparts = n > 0 ? n : 1;
  if (nparts == 1)
    return probe_items(ev, j, 0, n, r);
  int first[nparts + 1];
  stage_eval pev[nparts];
  rel *out[nparts];
  sl_error errs[nparts];
  int rcs[nparts];
  /* parts of about total / nparts rows each, in item order */
  uint64_t acc = 0;
  int p = 0;
  first[0] = 0;
  for (int i = 0; i < n && p < nparts - 1; i++) {
    acc += j->items[i].b->nrows;
    if (acc * (uint64_t)nparts >= total * (uint64_t)(p + 1))
      first[++p] = i + 1;
  }
  while (p < nparts)
    first[++p] = n;
  for (int k = 0; k < nparts; k++) {
    pev[k] = *ev;
    pev[k].rows_compiled = pev[k].rows_interpreted = 0;
    pev[k].ctx = k ? sl_expr_ctx_new() : ev->ctx;
    pev[k].rels = NULL;
    pev[k].nrels = pev[k].caprels = 0;
    pev[k].tables = NULL;
    pev[k].ntables = pev[k].captables = 0;
    /* each part reports what it makes; ev takes it over at the end */
    pev[k].held = pev[k].charged = 0;
    pev[k].over = false;
    memset(&errs[k], 0, sizeof errs[k]);
    pev[k].err = &errs[k];
    out[k] = stage_rel_new(&pev[k], j->s, r->layout);
  }
  j->first = first;
  j->pev = pev;
  j->out = out;
  j->errs = errs;
  j->rcs = rcs;
  stage_pool_run(ev->pool, nparts, probe_part, j);
  int rc = SL_OK;
  for (int k = 0; k < nparts; k++) {
    if (rcs[k] != SL_OK && rc == SL_OK) {
      rc = rcs[k];
      sl_error_move(ev->err, &errs[k]);
    }
    sl_error_clear(&errs[k]);
    /* the part's rows move to r; its relations live until ev's release */
    for (int b = 0; b < out[k]->n; b++) {
      sl_buffer *dst = rel_new_slot(r);
      *dst = out[k]->bufs[b];
    }
    out[k]->n = 0;
    for (int i = 0; i < pev[k].nrels; i++)
      adopt_rel(ev, pev[k].rels[i]);
    ev->rows_compiled += pev[k].rows_compiled;
    ev->rows_interpreted += pev[k].rows_interpreted;
    ev->held += pev[k].held;
    ev->charged += pev[k].charged;
    ev->over |= pev[k].over;
    free(pev[k].rels);
    if (k)
      sl_expr_ctx_free(pev[k].ctx);
  }
  return rc;
}

/* The probe side's buffers for one window: a stream leaf's rows with
 * event time in [lo, hi], read where the store keeps them (its time
 * buckets, each buffer's span skipped, taken whole or checked), or every
 * row of a relation. */
static probe_item *stream_items(const stage_eval *ev, const stage_rt *leaf,
                                int64_t lo, int64_t hi, int *n) {
  const leaf_store *ls = &ev->leaves[leaf->leaf];
  int cap = 16;
  probe_item *items = malloc(sizeof *items * (size_t)cap);
  if (!items)
    abort();
  *n = 0;
  for (int i = 0; i < ls->nkeys; i++) {
    int64_t b0 = ls->keys[i].key * ls->bucket_us;
    if (b0 + ls->bucket_us <= lo || b0 > hi)
      continue;
    const keyed_rows *k = &ls->keys[i];
    for (int j = 0; j < k->rows.nbufs; j++) {
      bool spanned = j < k->span;
      if (spanned && (k->tmin[j] > hi || k->tmax[j] < lo))
        continue;
      if (*n == cap) {
        cap *= 2;
        items = realloc(items, sizeof *items * (size_t)cap);
        if (!items)
          abort();
      }
      /* no stored row lacks its event time: inside its span, all match */
      items[(*n)++] = (probe_item){
          &k->rows.bufs[j], !(spanned && k->tmin[j] >= lo && k->tmax[j] <= hi)};
    }
  }
  return items;
}

static probe_item *rel_items(const rel *in, int *n) {
  probe_item *items = malloc(sizeof *items * (size_t)(in->n ? in->n : 1));
  if (!items)
    abort();
  for (int i = 0; i < in->n; i++)
    items[i] = (probe_item){&in->bufs[i], false};
  *n = in->n;
  return items;
}

/* The window's join: a hash table on the windowed side's key rows (the
 * right side's when neither is a stream), probed by the other side, in
 * parts on the stage pool's threads. */
static int eval_join(stage_eval *ev, const stage_rt *s, int64_t end,
                     const rel **out) {
  rel *r = stage_rel_new(ev, s, s->layout);
  *out = r;
  bool build_left = s->stream_side == 1;
  const stage_rt *bs = build_left ? s->left : s->right;
  const stage_rt *ps = build_left ? s->right : s->left;
  const rel *build;
  int rc = stage_eval_window(ev, bs, end, &build);
  if (rc != SL_OK)
    return rc;
  join_table t;
  rc = build_table(ev, s, build, build_left ? s->lkeys : s->rkeys,
                   build_left ? s->lcols : s->rcols, &t);
  probe_job j = {s,
                 &t,
                 build_left ? s->rkeys : s->lkeys,
                 build_left ? s->rcols : s->lcols,
                 !build_left,
                 NULL,
                 0,
                 0,
                 NULL,
                 -1,
                 NULL,
                 NULL,
                 NULL,
                 NULL,
                 NULL};
  probe_item *items = NULL;
  int n = 0;
  if (rc == SL_OK && s->stream_side >= 0) {
    const leaf_store *ls = &ev->leaves[ps->leaf];
    j.lo = end + s->st->lo_us;
    j.hi = end + s->st->hi_us;
    j.tl = ls->layout;
    j.tf = ls->time_field;
    items = stream_items(ev, ps, j.lo, j.hi, &n);
  } else if (rc == SL_OK) {
    const rel *p;
    rc = stage_eval_window(ev, ps, end, &p);
    if (rc == SL_OK)
      items = rel_items(p, &n);
  }
  j.items = items;
  if (rc == SL_OK && t.n > 0)
    rc = run_probe(ev, &j, n, r);
  stage_window_holds(ev, s, table_bytes(s, &t) + sizeof *items * (uint64_t)n);
  free(items);
  free_table(&t);
  return rc;
}

static int eval_aggregate(stage_eval *ev, const stage_rt *s, const rel *in,
                          const rel **out) {
  const sl_stage *st = s->st;
  if (ev->ntables == ev->captables) {
    /* Tables are freed together at release; they never move while in use
     * (one aggregate at a time is filled, then only read). */
    ev->captables = ev->captables ? ev->captables * 2 : 4;
    sl_group_table *g = realloc(ev->tables, sizeof *g * (size_t)ev->captables);
    if (!g)
      abort();
    ev->tables = g;
  }
  sl_group_table *t = &ev->tables[ev->ntables++];
  sl_group_table_init(t, s->group_layout, &s->aggs, 64);
  rel *tmp = stage_rel_new(ev, s, s->tmp_layout);
  int rc = SL_OK;
  for (int i = 0; i < in->n && rc == SL_OK; i++) {
    const sl_buffer *b = &in->bufs[i];
    uint32_t *sel = stage_selection(b->nrows), done = 0;
    if (!s->k_exprs)
      ev->rows_interpreted += b->nrows;
    if (!s->k_exprs ||
        compiled_into(ev, s->k_exprs, b, sel, b->nrows, tmp, &done) != SL_OK)
      rc = stage_eval_into(ev, s->tmp_progs, s->ntmp, b, sel + done,
                           b->nrows - done, tmp);
    free(sel);
  }
  /* key: this row's group key; last: the one before, whose state is
   * state (rows of one group often come together: a window's rows all
   * share its bounds, q5's MAX per window has no other key) */
  uint32_t kw = s->group_layout->width;
  uint8_t *key = calloc(2, kw), *last = key + kw;
  if (!key)
    abort();
  uint8_t *state = NULL;
  for (int i = 0; i < tmp->n && rc == SL_OK; i++) {
    const sl_buffer *b = &tmp->bufs[i];
    for (uint32_t j = 0; j < b->nrows && rc == SL_OK; j++) {
      const uint8_t *row = sl_buffer_row(b, j);
      memset(key, 0, kw);
      for (int g = 0; g < st->ngroups; g++)
        sl_row_copy_field(s->tmp_layout, row, g, s->group_layout, key, g);
      /* (an upsert may move every state: only the last one's is known) */
      if (!state || memcmp(key, last, kw) != 0) {
        state =
            sl_group_table_upsert(t, sl_key_hash(s->group_layout, key), key);
        memcpy(last, key, kw);
      }
      rc = sl_agg_update(&s->aggs, state, row, &t->arena, ev->err);
    }
  }
  free(key);
  stage_window_holds(ev, s, sl_group_table_bytes(t));
  rel *r = stage_rel_new(ev, s, s->layout);
  for (uint32_t i = 0; i < t->cap && rc == SL_OK; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    const uint8_t *k = sl_group_table_key(t, i);
    for (int attempt = 0; attempt < 2; attempt++) {
      sl_buffer *o = stage_rel_room(ev, r, 0);
      uint8_t *dst = sl_buffer_append(o);
      for (int g = 0; g < st->ngroups; g++)
        sl_row_copy_field(s->group_layout, k, g, s->layout, dst, g);
      int frc = SL_OK;
      for (int a = 0; a < st->naggs && frc == SL_OK; a++)
        frc = sl_agg_finalize(&s->aggs, a, sl_group_table_states(t, i), o, dst,
                              st->ngroups + a, ev->err);
      if (frc == 1 && attempt == 0) { /* heap full: next buffer */
        o->nrows--;
        rel_new_buffer(ev, r, 0);
        continue;
      }
      rc = frc == 1 ? sl_error_set(ev->err, SL_EINVAL,
                                   "an aggregate row is larger than a "
                                   "buffer; raise SET 'sluice.buffer-size'")
                    : frc;
      break;
    }
  }
  *out = r;
  return rc;
}

static int eval_stage(stage_eval *ev, const stage_rt *s, int64_t end,
                      const rel **out) {
  const rel *in = NULL;
  int rc = SL_OK;
  switch (s->st->kind) {
  case SL_STAGE_LEAF:
    return eval_leaf(ev, s, end, out);
  case SL_STAGE_JOIN:
    return eval_join(ev, s, end, out);
  case SL_STAGE_SELECT:
  case SL_STAGE_AGGREGATE:
  case SL_STAGE_TOPN:
    rc = stage_eval_window(ev, s->input, end, &in);
    break;
  }
  if (rc != SL_OK)
    return rc;
  switch (s->st->kind) {
  case SL_STAGE_SELECT:
    return eval_select(ev, s, in, out);
  case SL_STAGE_AGGREGATE:
    return eval_aggregate(ev, s, in, out);
  case SL_STAGE_TOPN:
    return stage_eval_topn(ev, s, in, out);
  default:
    return sl_error_set(ev->err, SL_EINTERNAL, "unknown stage");
  }
}

int stage_eval_window(stage_eval *ev, const stage_rt *s, int64_t end,
                      const rel **out) {
  int rc = eval_stage(ev, s, end, out);
  /* over the memory limit: the error says so, whatever a stage made of
   * its partial rows */
  return ev->over ? SL_ENOMEM : rc;
}
