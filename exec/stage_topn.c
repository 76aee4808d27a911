/* stage_topn.c - a window Top-N: its rows numbered per partition, and
 * under a bound only the first rows of each partition, without sorting
 * them all.
 *
 * A window Top-N under `WHERE rownum <= N` (sl_stage.topn_limit) needs the
 * first N rows of each partition only.  Sorting every row of the window
 * first (Flink's window Top-N keeps a bounded heap instead) made Top-3
 * bids per 10 s window over 5 M NEXMark events take 6.6 s, three quarters
 * of it in the comparisons of a 920,000-row sort per window.  Here each
 * partition keeps a heap of its N best rows seen so far, the worst on
 * top; a row better than that replaces it.  The order is the sort's
 * (stage_eval.c's eval_topn): the order columns, then the row's input
 * position, so the rows chosen and their numbers are exactly those a
 * stable sort of all of them gives. */
#include <stdlib.h>
#include <string.h>

#include "stage_int.h"

typedef struct topn_part {
  uint64_t hash;
  uint32_t n, cap;
  uint32_t *heap; /* indexes into the rows, the worst first */
} topn_part;

typedef struct selector {
  const sl_row_layout *kl;
  const sl_border *order;
  int npart, nsort;
  const uint8_t **rows;
  const int *fields; /* the partition's fields (npart) */
  sl_border *porder; /* ... as an order, for equality */
  topn_part *parts;
  size_t nparts, capparts;
  int64_t *slots; /* open addressing: part index, or -1 */
  size_t nslots;
} selector;

/* rows[a] before rows[b]: by the order, then by input position. */
static int before(const selector *s, uint32_t a, uint32_t b) {
  int c =
      sorted_result_compare(s->kl, s->order, s->nsort, s->rows[a], s->rows[b]);
  if (c)
    return c;
  int64_t pa = SL_FIELD(s->rows[a], s->kl, s->nsort, int64_t);
  int64_t pb = SL_FIELD(s->rows[b], s->kl, s->nsort, int64_t);
  return pa < pb ? -1 : pa > pb;
}

static void grow_slots(selector *s) {
  size_t n = s->nslots ? s->nslots * 2 : 64;
  free(s->slots);
  s->slots = malloc(sizeof *s->slots * n);
  if (!s->slots)
    abort();
  for (size_t i = 0; i < n; i++)
    s->slots[i] = -1;
  s->nslots = n;
  for (size_t p = 0; p < s->nparts; p++) {
    size_t h = s->parts[p].hash & (n - 1);
    while (s->slots[h] >= 0)
      h = (h + 1) & (n - 1);
    s->slots[h] = (int64_t)p;
  }
}

/* The partition of rows[i] (made if new). */
static topn_part *part_of(selector *s, uint32_t i) {
  if ((s->nparts + 1) * 2 > s->nslots)
    grow_slots(s);
  uint64_t hash =
      s->npart ? sl_fields_hash(s->kl, s->rows[i], s->npart, s->fields) : 0;
  size_t h = hash & (s->nslots - 1);
  for (; s->slots[h] >= 0; h = (h + 1) & (s->nslots - 1)) {
    topn_part *p = &s->parts[s->slots[h]];
    if (p->hash == hash &&
        sorted_result_compare(s->kl, s->porder, s->npart, s->rows[p->heap[0]],
                              s->rows[i]) == 0)
      return p;
  }
  if (s->nparts == s->capparts) {
    s->capparts = s->capparts ? s->capparts * 2 : 16;
    s->parts = realloc(s->parts, sizeof *s->parts * s->capparts);
    if (!s->parts)
      abort();
  }
  s->slots[h] = (int64_t)s->nparts;
  topn_part *p = &s->parts[s->nparts++];
  *p = (topn_part){hash, 0, 0, NULL};
  return p;
}

static void swap(uint32_t *a, uint32_t *b) {
  uint32_t t = *a;
  *a = *b;
  *b = t;
}

/* Restore the heap (the worst on top) below position at. */
static void sift_down(const selector *s, uint32_t *h, uint32_t n, uint32_t at) {
  for (;;) {
    uint32_t l = 2 * at + 1, r = l + 1, worst = at;
    if (l < n && before(s, h[worst], h[l]) < 0)
      worst = l;
    if (r < n && before(s, h[worst], h[r]) < 0)
      worst = r;
    if (worst == at)
      return;
    swap(&h[at], &h[worst]);
    at = worst;
  }
}

static void offer(selector *s, topn_part *p, uint32_t i, uint32_t limit) {
  if (p->n < limit) {
    if (p->n == p->cap) {
      p->cap = p->cap ? (p->cap * 2 < limit ? p->cap * 2 : limit) : 4;
      p->heap = realloc(p->heap, sizeof *p->heap * p->cap);
      if (!p->heap)
        abort();
    }
    uint32_t at = p->n++;
    p->heap[at] = i;
    while (at > 0 && before(s, p->heap[(at - 1) / 2], p->heap[at]) < 0) {
      swap(&p->heap[(at - 1) / 2], &p->heap[at]);
      at = (at - 1) / 2;
    }
  } else if (before(s, i, p->heap[0]) < 0) {
    p->heap[0] = i;
    sift_down(s, p->heap, p->n, 0);
  }
}

size_t stage_topn_select(const sl_row_layout *kl, const sl_border *order,
                         const int *part_fields, int npart, int nsort,
                         const uint8_t **rows, size_t n, int64_t limit) {
  if (limit <= 0 || n == 0)
    return 0;
  uint32_t lim = limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
  selector s = {kl,   order, npart, nsort, rows, part_fields,
                NULL, NULL,  0,     0,     NULL, 0};
  s.porder = calloc((size_t)(npart > 0 ? npart : 1), sizeof *s.porder);
  if (!s.porder)
    abort();
  for (int i = 0; i < npart; i++)
    s.porder[i].column = part_fields[i];
  for (size_t i = 0; i < n; i++)
    offer(&s, part_of(&s, (uint32_t)i), (uint32_t)i, lim);
  /* Partitions in the order of their keys (as the full sort has them),
   * each one's rows in order: popped worst first into its place. */
  const uint8_t **reps = malloc(sizeof *reps * s.nparts);
  if (!reps)
    abort();
  for (size_t p = 0; p < s.nparts; p++)
    reps[p] = rows[s.parts[p].heap[0]];
  sorted_result_sort(kl, s.porder, npart, reps, s.nparts);
  uint32_t *chosen = malloc(sizeof *chosen * n);
  if (!chosen)
    abort();
  size_t k = 0;
  for (size_t r = 0; r < s.nparts; r++) {
    /* the partition whose heap top reps[r] was (tops are distinct rows) */
    uint64_t hash = npart ? sl_fields_hash(kl, reps[r], npart, s.fields) : 0;
    size_t h = hash & (s.nslots - 1);
    while (rows[s.parts[s.slots[h]].heap[0]] != reps[r])
      h = (h + 1) & (s.nslots - 1);
    topn_part *p = &s.parts[s.slots[h]];
    for (uint32_t m = p->n; m > 0; m--) {
      chosen[k + m - 1] = p->heap[0];
      p->heap[0] = p->heap[m - 1];
      sift_down(&s, p->heap, m - 1, 0);
    }
    k += p->n;
  }
  /* rows[] in their new order (read through a copy: chosen indexes the
   * old one) */
  const uint8_t **old = malloc(sizeof *old * n);
  if (!old)
    abort();
  memcpy(old, rows, sizeof *old * n);
  for (size_t i = 0; i < k; i++)
    rows[i] = old[chosen[i]];
  free(old);
  free(chosen);
  free(reps);
  for (size_t p = 0; p < s.nparts; p++)
    free(s.parts[p].heap);
  free(s.parts);
  free(s.slots);
  free(s.porder);
  return k;
}

/* ---- the stage ---------------------------------------------------------- */

int stage_eval_topn(stage_eval *ev, const stage_rt *s, const rel *in,
                    const rel **out) {
  /* Sort rows: the partition and order values, then (not compared) the
   * input row's position, filled in here. */
  rel *keys = stage_rel_new(ev, s, s->sort_layout);
  int rc = SL_OK;
  const sl_row_layout *kl = s->sort_layout, *il = s->input->layout;
  for (int i = 0; i < in->n && rc == SL_OK; i++) {
    const sl_buffer *b = &in->bufs[i];
    if (s->sort_cols) { /* plain columns: copied (strings borrowed) */
      for (uint32_t j = 0; j < b->nrows; j++) {
        const uint8_t *row = sl_buffer_row(b, j);
        uint8_t *dst = sl_buffer_append(stage_rel_room(ev, keys, 0));
        for (int k = 0; k < s->nsort; k++)
          sl_row_copy_field(il, row, s->sort_cols[k], kl, dst, k);
      }
      continue;
    }
    uint32_t *sel = stage_selection(b->nrows);
    rc = stage_eval_into(ev, s->sort_progs, s->nsort + 1, b, sel, b->nrows,
                         keys);
    free(sel);
  }
  rel *r = stage_rel_new(ev, s, s->layout);
  *out = r;
  if (rc != SL_OK)
    return rc;
  size_t n, nk;
  const uint8_t **rows = stage_rel_rows(in, &n),
                **sorts = stage_rel_rows(keys, &nk);
  for (size_t i = 0; i < nk; i++)
    SL_FIELD((uint8_t *)sorts[i], kl, s->nsort, int64_t) = (int64_t)i;
  /* Under WHERE rownum <= N only the first N of each partition. */
  if (s->st->topn_limit >= 0)
    nk = stage_topn_select(kl, s->sort_order, s->part_fields, s->npart_fields,
                           s->nsort, sorts, nk, s->st->topn_limit);
  else
    sorted_result_sort(kl, s->sort_order, s->nsort, sorts, nk);
  stage_window_holds(ev, s, (sizeof *rows + sizeof *sorts) * (uint64_t)nk);
  int npart = s->st->npartition, ncols = s->st->input->ncols;
  int64_t number = 0;
  for (size_t i = 0; i < nk; i++) {
    if (i == 0 || sorted_result_compare(kl, s->sort_order, npart, sorts[i - 1],
                                        sorts[i]) != 0)
      number = 0; /* a new partition */
    number++;
    const uint8_t *row = rows[SL_FIELD(sorts[i], kl, s->nsort, int64_t)];
    uint8_t *dst = sl_buffer_append(stage_rel_room(ev, r, 0));
    for (int f = 0; f < ncols; f++)
      sl_row_copy_field(il, row, f, s->layout, dst, f);
    sl_int_store(dst + s->layout->fields[ncols].offset,
                 s->layout->fields[ncols].ptype, number);
  }
  free(rows);
  free(sorts);
  return SL_OK;
}
