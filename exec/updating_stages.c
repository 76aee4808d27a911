/* updating_stages.c - updating stages over streams: the stage tree, its
 * SELECT, Top-N and AGGREGATE stages (the symmetric hash join is
 * updating_join.c), pushed rows as they arrive (see updating_stages.h).
 *
 * Each stage turns one batch of input rows (a buffer, with the kind of
 * each row) into batches of its own rows, which it hands to its parent at
 * once: the rows' long strings may point into the batch below, which lives
 * until the push returns.  What a stage keeps is copied into blocks of its
 * own (row and long strings in one malloc), freed when the row leaves the
 * state or at the end.
 */
#include "updating_stages.h"

#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/session/changelog.h"
#include "sluice/state/agg_multiset.h"
#include "sluice/state/topn_rows.h"
#include "updating_int.h"

/* ---- the stages ---------------------------------------------------------- */

static int push(update_stages *u, ustage *s, int side, const sl_buffer *in,
                const uint8_t *ops);

static uint32_t rows_room(const update_stages *u, const sl_row_layout *l) {
  return u->buffer_size / (l->width ? l->width : 1) + 2;
}

/* The leaves under rt, appended to *leaves. */
static void collect_leaves(const stage_rt *rt, int **leaves, int *n) {
  if (!rt)
    return;
  if (rt->st->kind == SL_STAGE_LEAF) {
    *leaves = realloc(*leaves, sizeof **leaves * (size_t)(*n + 1));
    if (!*leaves)
      abort();
    (*leaves)[(*n)++] = rt->leaf;
    return;
  }
  collect_leaves(rt->input, leaves, n);
  collect_leaves(rt->left, leaves, n);
  collect_leaves(rt->right, leaves, n);
}

static ustage *build(update_stages *u, const stage_rt *rt, ustage *parent,
                     int side) {
  ustage *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->rt = rt;
  s->parent = parent;
  s->side = side;
  if (u->nall == u->capall) {
    u->capall = u->capall ? u->capall * 2 : 8;
    u->all = realloc(u->all, sizeof *u->all * (size_t)u->capall);
    if (!u->all)
      abort();
  }
  u->all[u->nall++] = s;
  sl_buffer_init(&s->out, rt->layout, u->buffer_size);
  s->out.borrow_strings = true;
  s->ops = malloc(rows_room(u, rt->layout));
  s->sel = malloc(sizeof *s->sel * u->buffer_size);
  s->kinds = malloc(u->buffer_size);
  if (!s->ops || !s->sel || !s->kinds)
    abort();
  switch (rt->st->kind) {
  case SL_STAGE_JOIN:
    sl_buffer_init(&s->keys, rt->key_layout, u->buffer_size);
    s->keys.borrow_strings = true;
    s->left = build(u, rt->left, s, 0);
    s->right = build(u, rt->right, s, 1);
    for (int k = 0; k < 2; k++)
      collect_leaves(k ? rt->right : rt->left, &s->side_leaves[k],
                     &s->nside_leaves[k]);
    s->deadlines = calloc((size_t)rt->st->nbounds + 1, sizeof *s->deadlines);
    if (!s->deadlines)
      abort();
    break;
  case SL_STAGE_TOPN:
    sl_buffer_init(&s->sorts, rt->sort_layout, u->buffer_size);
    s->sorts.borrow_strings = true;
    s->limit = rt->st->topn_limit;
    s->input = build(u, rt->input, s, 0);
    break;
  case SL_STAGE_AGGREGATE: {
    sl_arena_init(&s->arena, 0);
    sl_error e = {0};
    /* Over a retracting input, MIN, MAX and DISTINCT keep their values
     * in multisets; the group states hold placeholders for them. */
    sl_agg_set base = rt->aggs;
    if (rt->st->retracting) {
      s->multi = agg_multisets_new(&s->arena, &rt->aggs, rt->group_layout);
      if (s->multi && agg_multisets_states(s->multi, &s->arena, &rt->aggs,
                                           &base, &e) != SL_OK)
        abort(); /* COUNT(*) and the accepted aggregates */
    }
    if (sl_agg_set_with_count(&s->arena, &base, &s->set, &e) != SL_OK)
      abort(); /* rt->aggs, the same but one COUNT(*), was accepted */
    /* Under 'table.exec.state.ttl' one more int64 per group: when a row
     * last came (milliseconds). */
    if (u->ttl > 0) {
      sl_agg_set rows = s->set;
      if (sl_agg_set_with_count(&s->arena, &rows, &s->set, &e) != SL_OK)
        abort();
      s->touched_off = s->set.aggs[s->set.n - 1].state_offset;
    }
    sl_group_table_init(&s->groups, rt->group_layout, &s->set, 1024);
    sl_buffer_init(&s->tmp, rt->tmp_layout, u->buffer_size);
    s->tmp.borrow_strings = true;
    s->keyrow = calloc(1, rt->group_layout->width + 8);
    if (!s->keyrow)
      abort();
    s->input = build(u, rt->input, s, 0);
    break;
  }
  case SL_STAGE_SELECT:
    s->input = build(u, rt->input, s, 0);
    break;
  case SL_STAGE_LEAF:
    break;
  }
  return s;
}

int ustage_emit(update_stages *u, ustage *s) {
  if (s->out.nrows == 0)
    return SL_OK;
  int rc = s->parent ? push(u, s->parent, s->side, &s->out, s->ops)
                     : u->out(u->arg, &s->out, s->ops, u->err);
  sl_buffer_clear(&s->out);
  return rc;
}

/* ---- SELECT -------------------------------------------------------------- */

/* A filter over changes: rows[sel[0..npass)] passed (ascending).  An
 * update's two rows (-U then +U, adjacent) become -U/+U when both pass,
 * -D of the old when only it passes, +I of the new when only it does, as
 * a GROUP BY result's HAVING does: a sink that keeps its table by key
 * (the SQLite sink skips -U) then deletes what stopped passing.  The
 * rows that go on, and their kinds (kinds[j] for sel[j]), replace sel;
 * returns how many. */
static uint32_t filter_kinds(uint32_t nrows, const uint8_t *ops, uint32_t *sel,
                             uint32_t npass, uint8_t *kinds) {
  uint32_t w = 0, p = 0; /* w <= p: sel is rewritten in place */
  for (uint32_t i = 0; i < nrows; i++) {
    bool old = p < npass && sel[p] == i;
    p += old;
    if (ops[i] == SL_OP_UPDATE_BEFORE && i + 1 < nrows &&
        ops[i + 1] == SL_OP_UPDATE_AFTER) {
      bool neu = p < npass && sel[p] == i + 1;
      p += neu;
      if (old) {
        sel[w] = i;
        kinds[w++] = neu ? SL_OP_UPDATE_BEFORE : SL_OP_DELETE;
      }
      if (neu) {
        sel[w] = i + 1;
        kinds[w++] = old ? SL_OP_UPDATE_AFTER : SL_OP_INSERT;
      }
      i++;
    } else if (old) {
      sel[w] = i;
      kinds[w++] = ops[i];
    }
  }
  return w;
}

static int push_select(update_stages *u, ustage *s, const sl_buffer *in,
                       const uint8_t *ops) {
  const stage_rt *rt = s->rt;
  uint32_t n = in->nrows;
  for (uint32_t i = 0; i < n; i++) {
    s->sel[i] = i;
    s->kinds[i] = ops[i];
  }
  if (rt->filter) {
    int rc = sl_expr_filter(rt->filter, in, s->sel, &n, u->ctx, u->err);
    if (rc != SL_OK)
      return rc;
    n = filter_kinds(in->nrows, ops, s->sel, n, s->kinds);
  }
  uint32_t done = 0;
  while (done < n) {
    uint32_t first = s->out.nrows;
    int k = sl_exec_eval_rows(rt->exprs, rt->st->nexprs, in, s->sel + done,
                              n - done, &s->out, u->ctx, u->err);
    if (k < 0)
      return k;
    if (k == 0 && first == 0)
      return sl_error_set(u->err, SL_EINVAL,
                          "a row is larger than a buffer; raise SET "
                          "'sluice.buffer-size'");
    /* An update's two rows go on in one batch (a filter above pairs
     * them). */
    uint32_t next = done + (uint32_t)k;
    if (k > 1 && next < n && s->kinds[next - 1] == SL_OP_UPDATE_BEFORE &&
        s->kinds[next] == SL_OP_UPDATE_AFTER) {
      k--;
      s->out.nrows--;
    }
    for (int j = 0; j < k; j++)
      s->ops[first + (uint32_t)j] = s->kinds[done + (uint32_t)j];
    done += (uint32_t)k;
    if (done < n) {
      int rc = ustage_emit(u, s);
      if (rc != SL_OK)
        return rc;
    }
  }
  return ustage_emit(u, s);
}

/* ---- TOPN ---------------------------------------------------------------- */

/* A row leaves a Top-N's state. */

static void parts_grow(ustage *s) {
  uint32_t cap = s->pcap ? s->pcap * 2 : 1024;
  tpart **b = calloc(cap, sizeof *b);
  if (!b)
    abort();
  s->bytes += sizeof *b * (size_t)(cap - s->pcap); /* the partitions' index */
  for (uint32_t i = 0; i < s->pcap; i++)
    for (tpart *p = s->parts[i], *next; p; p = next) {
      next = p->next;
      p->next = b[p->hash & (cap - 1)];
      b[p->hash & (cap - 1)] = p;
    }
  free(s->parts);
  s->parts = b;
  s->pcap = cap;
}

/* Append place `place` (0-based) of a partition, entry e, as kind op. */
static int topn_out(update_stages *u, ustage *s, const tentry *e, int place,
                    sl_changelog_op op) {
  const sl_row_layout *il = s->rt->input->layout, *ol = s->rt->layout;
  /* An update's two rows go out in one batch (a filter above pairs
   * them). */
  const sl_buffer *o = &s->out;
  if (op == SL_OP_UPDATE_BEFORE && o->nrows > 0 &&
      (size_t)(o->nrows + 2) * ol->width + o->heap_used > o->cap) {
    int rc = ustage_emit(u, s);
    if (rc != SL_OK)
      return rc;
  }
  uint8_t *dst = sl_buffer_append(&s->out);
  if (!dst) {
    int rc = ustage_emit(u, s);
    if (rc != SL_OK)
      return rc;
    dst = sl_buffer_append(&s->out);
  }
  for (int f = 0; f < il->nfields; f++)
    sl_row_copy_field(il, e->row, f, ol, dst, f);
  sl_int_store(dst + ol->fields[il->nfields].offset,
               ol->fields[il->nfields].ptype, place + 1);
  s->ops[s->out.nrows - 1] = (uint8_t)op;
  return SL_OK;
}

/* The partition of sort row `sort` (hash h), created if new (and create). */
static tpart *topn_part(update_stages *u, ustage *s, uint64_t h,
                        const uint8_t *sort, bool create) {
  const stage_rt *rt = s->rt;
  int npart = rt->st->npartition;
  if (create && s->pcount + 1 > s->pcap)
    parts_grow(s);
  if (!s->pcap)
    return NULL;
  tpart **slot = &s->parts[h & (s->pcap - 1)], *p = *slot;
  while (p && (p->hash != h || sorted_result_compare(
                                   rt->sort_layout, rt->sort_order, npart,
                                   topn_rows_at(&p->rows, 0)->sort, sort) != 0))
    p = p->next;
  if (!p && create) {
    p = calloc(1, sizeof *p);
    if (!p)
      abort();
    p->hash = h;
    p->next = *slot;
    *slot = p;
    s->pcount++;
    s->bytes += sizeof *p;
  }
  if (p)
    p->touched = u->now;
  return p;
}

/* A partition and its rows leave the state. */
static void part_free(ustage *s, tpart *p) {
  topn_rows_free(&p->rows, &s->bytes);
  s->bytes -= sizeof *p;
  s->pcount--;
  free(p);
}

/* Row `row` (its sort row `sort`) enters partition p. */
static int topn_insert(update_stages *u, ustage *s, tpart *p,
                       const uint8_t *sort, const uint8_t *row) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *kl = rt->sort_layout, *il = rt->input->layout;
  int limit = (int)s->limit;
  bool keep_all = rt->st->retracting;
  topn_order order = {kl, rt->sort_order, rt->nsort};
  /* Its place: after every row that sorts before or with it. */
  topn_pos at = topn_rows_place(&p->rows, &order, sort, true);
  if (at.rank >= limit && !keep_all)
    return SL_OK; /* past the first N: never shown (insert-only input) */
  int old_n = p->rows.n;
  size_t bytes = kl->width + il->width + sl_row_long_bytes(kl, sort) +
                 sl_row_long_bytes(il, row);
  uint8_t *block = malloc(bytes);
  if (!block)
    abort();
  char *heap = (char *)block + kl->width + il->width;
  heap = sl_row_copy_deep(kl, sort, block, heap);
  sl_row_copy_deep(il, row, block + kl->width, heap);
  topn_rows_insert(&p->rows, at, (tentry){block, block + kl->width, bytes},
                   &s->bytes);
  /* Over an insert-only input the row now past the first N goes for
   * good (after the rows that borrow its strings are handed on). */
  tentry evicted = {NULL, NULL, 0};
  if (!keep_all && p->rows.n > limit) {
    evicted = topn_rows_remove(&p->rows, topn_rows_last(&p->rows), &s->bytes);
  }
  /* Each shown place from `at` on now holds the row that was one above:
   * its old row (the one now one below, or the evicted) goes out as -U,
   * its new one as +U; a place that was empty gets +I. */
  int rc = SL_OK;
  for (int i = at.rank; i < limit && i < p->rows.n && rc == SL_OK; i++) {
    if (i < old_n) {
      const tentry *was =
          i + 1 < p->rows.n ? topn_rows_at(&p->rows, i + 1) : &evicted;
      rc = topn_out(u, s, was, i, SL_OP_UPDATE_BEFORE);
      if (rc == SL_OK)
        rc = topn_out(u, s, topn_rows_at(&p->rows, i), i, SL_OP_UPDATE_AFTER);
    } else {
      rc = topn_out(u, s, topn_rows_at(&p->rows, i), i, SL_OP_INSERT);
    }
  }
  if (evicted.row) {
    if (rc == SL_OK)
      rc = ustage_emit(u, s);
    free(evicted.sort);
  }
  return rc;
}

/* Row `row` (sort row `sort`) is taken back from partition p (a Top-N
 * over an updating input keeps every row, so the one after the first N
 * moves up).  *gone: p became empty (the caller frees it). */
static int topn_delete(update_stages *u, ustage *s, tpart *p,
                       const uint8_t *sort, const uint8_t *row, bool *gone) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *kl = rt->sort_layout, *il = rt->input->layout;
  int limit = (int)s->limit;
  topn_order order = {kl, rt->sort_order, rt->nsort};
  /* Among the rows that sort with it, the one equal to it. */
  topn_pos at = topn_rows_place(&p->rows, &order, sort, false);
  bool found = false;
  while (at.rank < p->rows.n) {
    const tentry *e = topn_rows_get(&p->rows, at);
    if (sorted_result_compare(kl, rt->sort_order, rt->nsort, e->sort, sort))
      break;
    if ((found = sl_key_equal(il, e->row, row)))
      break;
    at = topn_rows_next(&p->rows, at);
  }
  *gone = false;
  if (!found)
    return u->ttl > 0 ? SL_OK /* expired with its partition */
                      : sl_error_set(u->err, SL_EINTERNAL,
                                     "a Top-N's input took back a row it "
                                     "never added");
  int old_n = p->rows.n;
  tentry removed = topn_rows_remove(&p->rows, at, &s->bytes);
  /* Each shown place from `at` on now holds the row that was one below:
   * -U of the old, +U of the new; a place left empty: -D. */
  int rc = SL_OK;
  for (int i = at.rank; i < old_n && i < limit && rc == SL_OK; i++) {
    const tentry *was = i == at.rank ? &removed : topn_rows_at(&p->rows, i - 1);
    if (i < p->rows.n) {
      rc = topn_out(u, s, was, i, SL_OP_UPDATE_BEFORE);
      if (rc == SL_OK)
        rc = topn_out(u, s, topn_rows_at(&p->rows, i), i, SL_OP_UPDATE_AFTER);
    } else {
      rc = topn_out(u, s, was, i, SL_OP_DELETE);
    }
  }
  if (rc == SL_OK)
    rc = ustage_emit(u, s); /* before the removed row's strings go */
  free(removed.sort);
  *gone = p->rows.n == 0;
  return rc;
}

static int push_topn(update_stages *u, ustage *s, const sl_buffer *in,
                     const uint8_t *ops) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *kl = rt->sort_layout;
  int npart = rt->st->npartition;
  if (s->limit <= 0)
    return SL_OK; /* rownum <= 0: no row is ever shown */
  int *pfields = malloc(sizeof(int) * (size_t)(npart > 0 ? npart : 1));
  if (!pfields)
    abort();
  for (int i = 0; i < npart; i++)
    pfields[i] = i;
  uint32_t n = in->nrows, done = 0;
  int rc = SL_OK;
  while (done < n && rc == SL_OK) {
    for (uint32_t i = 0; i < n - done; i++)
      s->sel[i] = done + i;
    sl_buffer_clear(&s->sorts);
    int k = sl_exec_eval_rows(rt->sort_progs, rt->nsort + 1, in, s->sel,
                              n - done, &s->sorts, u->ctx, u->err);
    if (k <= 0) {
      rc = k < 0 ? k
                 : sl_error_set(u->err, SL_EINVAL,
                                "a sort row is larger than a buffer");
      break;
    }
    for (int j = 0; j < k && rc == SL_OK; j++) {
      const uint8_t *row = sl_buffer_row(in, done + (uint32_t)j);
      const uint8_t *sort = sl_buffer_row(&s->sorts, (uint32_t)j);
      bool adds =
          sl_changelog_op_adds((sl_changelog_op)ops[done + (uint32_t)j]);
      if (!adds && !rt->st->retracting) {
        rc = sl_error_set(u->err, SL_EINTERNAL,
                          "Top-N over a stream got a retraction (the planner "
                          "said its input only inserts)");
        break;
      }
      uint64_t h = sl_fields_hash(kl, sort, npart, pfields);
      tpart *p = topn_part(u, s, h, sort, adds);
      if (adds) {
        rc = topn_insert(u, s, p, sort, row);
        continue;
      }
      bool gone = false;
      if (p)
        rc = topn_delete(u, s, p, sort, row, &gone);
      else if (u->ttl == 0)
        rc = sl_error_set(u->err, SL_EINTERNAL,
                          "a Top-N's input took back a row of a partition "
                          "it never had");
      if (gone) { /* unlink and free the empty partition */
        tpart **pp = &s->parts[h & (s->pcap - 1)];
        while (*pp != p)
          pp = &(*pp)->next;
        *pp = p->next;
        part_free(s, p);
      }
    }
    done += (uint32_t)k;
  }
  free(pfields);
  return rc == SL_OK ? ustage_emit(u, s) : rc;
}

/* ---- AGGREGATE ----------------------------------------------------------- */

/* The output row of the group whose states are `states` into s->out.
 * 1: the buffer is full. */
static int agg_row(ustage *s, const uint8_t *states, uint64_t hash,
                   sl_error *err) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *gl = rt->group_layout, *ol = rt->layout;
  int ng = rt->st->ngroups;
  uint32_t heap = s->out.heap_used;
  uint8_t *dst = sl_buffer_append(&s->out);
  if (!dst)
    return 1;
  const uint8_t *key = states - gl->width;
  for (int g = 0; g < ng; g++)
    sl_row_copy_field(gl, key, g, ol, dst, g);
  for (int i = 0; i < rt->aggs.n; i++) {
    int rc =
        agg_multisets_has(s->multi, i)
            ? agg_multisets_finalize(s->multi, i, hash, key, &s->out, dst,
                                     ng + i, err)
            : sl_agg_finalize(&s->set, i, states, &s->out, dst, ng + i, err);
    if (rc != SL_OK) {
      s->out.nrows--;
      s->out.heap_used = heap;
      return rc;
    }
  }
  return SL_OK;
}

static int push_aggregate(update_stages *u, ustage *s, const sl_buffer *in,
                          const uint8_t *ops) {
  const stage_rt *rt = s->rt;
  const sl_row_layout *tl = rt->tmp_layout, *gl = rt->group_layout;
  int ng = rt->st->ngroups, na = rt->aggs.n;
  uint32_t count_off = s->set.aggs[na].state_offset;
  uint32_t n = in->nrows, done = 0;
  while (done < n) {
    for (uint32_t i = 0; i < n - done; i++)
      s->sel[i] = done + i;
    sl_buffer_clear(&s->tmp);
    int k = sl_exec_eval_rows(rt->tmp_progs, rt->ntmp, in, s->sel, n - done,
                              &s->tmp, u->ctx, u->err);
    if (k <= 0)
      return k < 0 ? k
                   : sl_error_set(u->err, SL_EINVAL,
                                  "an aggregate's input row is larger "
                                  "than a buffer");
    for (int j = 0; j < k; j++) {
      const uint8_t *t = sl_buffer_row(&s->tmp, (uint32_t)j);
      bool adds =
          sl_changelog_op_adds((sl_changelog_op)ops[done + (uint32_t)j]);
      for (int g = 0; g < ng; g++)
        sl_row_copy_field(tl, t, g, gl, s->keyrow, g);
      /* Room for the group's two rows, with half the heap to spare. */
      const sl_buffer *o = &s->out;
      if ((size_t)(o->nrows + 2) * o->layout->width + o->heap_used +
              o->cap / 2 >
          o->cap) {
        int rc = ustage_emit(u, s);
        if (rc != SL_OK)
          return rc;
      }
      bool created;
      uint64_t hash = sl_key_hash(gl, s->keyrow);
      uint8_t *states =
          sl_group_table_upsert_ex(&s->groups, hash, s->keyrow, &created);
      int64_t *rows = (int64_t *)(states + count_off);
      bool had = *rows > 0;
      /* Under a TTL the group a row is taken back from may have expired
       * (and come back without it): the retraction is dropped, as
       * Flink's state TTL does. */
      if (!adds && !had && u->ttl > 0)
        continue;
      if (u->ttl > 0) /* whole milliseconds are enough */
        *(int64_t *)(states + s->touched_off) = (int64_t)(u->now * 1000);
      int rc = had ? agg_row(s, states, hash, u->err) : SL_OK;
      if (rc == SL_OK)
        rc = adds ? sl_agg_update(&s->set, states, t, &s->groups.arena, u->err)
                  : sl_agg_retract(&s->set, states, t, u->err);
      if (rc == SL_OK && s->multi)
        rc = agg_multisets_update(s->multi, hash, states - gl->width, t, adds,
                                  u->ttl > 0, u->err);
      if (rc == SL_OK && *rows < 0)
        rc = sl_error_set(u->err, SL_EINTERNAL,
                          "an aggregate's input took back a row it never "
                          "added");
      bool has = *rows > 0;
      if (rc == SL_OK && has)
        rc = agg_row(s, states, hash, u->err);
      if (rc == 1)
        rc = sl_error_set(u->err, SL_EINVAL,
                          "a group's row is larger than half a buffer; "
                          "raise SET 'sluice.buffer-size'");
      if (rc != SL_OK)
        return rc;
      uint32_t last = s->out.nrows - 1;
      if (had && has) {
        if (sl_key_equal(rt->layout, sl_buffer_row(&s->out, last - 1),
                         sl_buffer_row(&s->out, last))) {
          s->out.nrows -= 2; /* unchanged: nothing to say */
        } else {
          s->ops[last - 1] = SL_OP_UPDATE_BEFORE;
          s->ops[last] = SL_OP_UPDATE_AFTER;
        }
      } else if (had) {
        s->ops[last] = SL_OP_DELETE;
      } else if (has) {
        s->ops[last] = SL_OP_INSERT;
      }
    }
    done += (uint32_t)k;
  }
  return ustage_emit(u, s);
}

/* ---- the tree ------------------------------------------------------------ */

static int push(update_stages *u, ustage *s, int side, const sl_buffer *in,
                const uint8_t *ops) {
  switch (s->rt->st->kind) {
  case SL_STAGE_SELECT:
    return push_select(u, s, in, ops);
  case SL_STAGE_JOIN:
    return ustage_join_push(u, s, side, in, ops);
  case SL_STAGE_TOPN:
    return push_topn(u, s, in, ops);
  case SL_STAGE_AGGREGATE:
    return push_aggregate(u, s, in, ops);
  default:
    return sl_error_set(u->err, SL_EINTERNAL,
                        "an updating stage of a kind not built");
  }
}

update_stages *update_stages_new(const stage_rt *top, uint32_t buffer_size,
                                 double ttl, update_stages_out_fn out,
                                 void *arg) {
  update_stages *u = calloc(1, sizeof *u);
  if (!u)
    abort();
  u->ttl = ttl;
  u->buffer_size = buffer_size;
  u->out = out;
  u->arg = arg;
  u->ctx = sl_expr_ctx_new();
  u->inserts = calloc(buffer_size + 1, 1); /* SL_OP_INSERT is 0 */
  if (!u->inserts)
    abort();
  u->top = build(u, top, NULL, 0);
  return u;
}

int update_stages_push_leaf(update_stages *u, int leaf, const sl_buffer *rows,
                            sl_error *err) {
  u->err = err;
  u->now = u->ttl > 0 ? sl_clock_seconds() : 0;
  for (int i = 0; i < u->nall; i++) {
    ustage *s = u->all[i];
    if (s->rt->st->kind != SL_STAGE_LEAF || s->rt->leaf != leaf)
      continue;
    int rc = s->parent ? push(u, s->parent, s->side, rows, u->inserts)
                       : u->out(u->arg, rows, u->inserts, err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

static ustage *stage_of(const update_stages *u, const sl_stage *st) {
  for (int i = 0; i < u->nall; i++)
    if (u->all[i]->rt->st == st)
      return u->all[i];
  return NULL;
}

const sl_row_layout *update_stages_layout(const update_stages *u,
                                          const sl_stage *st) {
  const ustage *s = stage_of(u, st);
  return s ? s->rt->layout : NULL;
}

int update_stages_push_from(update_stages *u, const sl_stage *st,
                            const sl_buffer *rows, const uint8_t *ops,
                            sl_error *err) {
  u->err = err;
  u->now = u->ttl > 0 ? sl_clock_seconds() : 0;
  ustage *s = stage_of(u, st);
  if (!s)
    return sl_error_set(err, SL_EINTERNAL, "changes of a stage not here");
  return s->parent ? push(u, s->parent, s->side, rows, ops)
                   : u->out(u->arg, rows, ops, err);
}

/* 'table.exec.state.ttl': a join's rows that came before `oldest`, a
 * Top-N's partitions no row reached since. */
/* An aggregate stage's group expired: its MIN/MAX/DISTINCT values go. */
static void group_dropped(void *arg, uint64_t hash, const uint8_t *key) {
  agg_multisets_remove(arg, hash, key);
}

static void expire(ustage *s, double oldest) {
  if (s->rt->st->kind == SL_STAGE_AGGREGATE) {
    sl_group_table_keep_since(&s->groups, s->touched_off,
                              (int64_t)(oldest * 1000), group_dropped,
                              s->multi);
  } else if (s->rt->st->kind == SL_STAGE_JOIN) {
    ustage_join_expire(s, oldest);
  } else if (s->rt->st->kind == SL_STAGE_TOPN) {
    for (uint32_t b = 0; b < s->pcap; b++)
      for (tpart **pp = &s->parts[b]; *pp;) {
        tpart *p = *pp;
        if (p->touched >= oldest) {
          pp = &p->next;
          continue;
        }
        *pp = p->next;
        part_free(s, p);
      }
  }
}

void update_stages_sweep(update_stages *u, const int64_t *leaf_wm) {
  /* The bounds every round: a sweep costs the rows it drops (each bound's
   * deadline heap), so the state stays as small as the watermarks allow. */
  for (int i = 0; i < u->nall; i++)
    if (u->all[i]->rt->st->kind == SL_STAGE_JOIN &&
        u->all[i]->rt->st->nbounds > 0)
      ustage_join_sweep(u->all[i], leaf_wm);
  /* The TTL a few times a second: an aggregate's expiry reads every
   * group. */
  double now = sl_clock_seconds();
  if (u->ttl <= 0 || now - u->last_sweep < 0.25)
    return;
  u->last_sweep = now;
  for (int i = 0; i < u->nall; i++)
    expire(u->all[i], now - u->ttl);
}

uint64_t update_stages_evicted(const update_stages *u) {
  uint64_t n = 0;
  for (int i = 0; i < u->nall; i++)
    n += u->all[i]->evicted;
  return n;
}

void update_stages_join_stats_add(sl_query_stats *t, const sl_join_stats *j) {
  int i = 0;
  while (i < t->njoins && (t->join[i].left_leaf != j->left_leaf ||
                           t->join[i].right_leaf != j->right_leaf))
    i++;
  if (i == SL_STATS_JOINS)
    return;
  if (i == t->njoins)
    t->join[t->njoins++] =
        (sl_join_stats){j->left_leaf, j->right_leaf, {0, 0}, {0, 0}};
  for (int k = 0; k < 2; k++) {
    t->join[i].peak_rows[k] += j->peak_rows[k];
    t->join[i].peak_bytes[k] += j->peak_bytes[k];
  }
}

void update_stages_join_stats(const update_stages *u, sl_query_stats *stats) {
  for (int i = 0; i < u->nall; i++) {
    const ustage *s = u->all[i];
    if (s->rt->st->kind != SL_STAGE_JOIN || !s->nside_leaves[0] ||
        !s->nside_leaves[1])
      continue;
    sl_join_stats j = {s->side_leaves[0][0],
                       s->side_leaves[1][0],
                       {s->sides[0].peak_rows, s->sides[1].peak_rows},
                       {s->sides[0].peak_bytes, s->sides[1].peak_bytes}};
    update_stages_join_stats_add(stats, &j);
  }
}

/* Bytes of one stage's state. */
static uint64_t stage_bytes(const ustage *s) {
  return s->sides[0].bytes + s->sides[1].bytes + s->bytes +
         (s->rt->st->kind == SL_STAGE_AGGREGATE
              ? sl_group_table_bytes(&s->groups) + agg_multisets_bytes(s->multi)
              : 0);
}

void update_stages_sweep_now(update_stages *u, const int64_t *leaf_wm) {
  u->last_sweep = 0;
  update_stages_sweep(u, leaf_wm);
}

uint64_t update_stages_join_rows(const update_stages *u) {
  uint64_t n = 0;
  for (int i = 0; i < u->nall; i++)
    if (u->all[i]->rt->st->kind == SL_STAGE_JOIN)
      n += u->all[i]->sides[0].count + u->all[i]->sides[1].count;
  return n;
}

uint64_t update_stages_bytes(const update_stages *u) {
  uint64_t n = 0;
  for (int i = 0; i < u->nall; i++)
    n += stage_bytes(u->all[i]);
  return n;
}

int update_stages_check_limit(const update_stages *u, sl_memory_account *memory,
                              uint64_t *charged, sl_error *err) {
  uint64_t all = update_stages_bytes(u);
  uint64_t total;
  if (!sl_memory_grew_over(memory, charged, all, &total) || u->nall == 0)
    return SL_OK;
  /* Named: the stage holding most. */
  const ustage *s = u->all[0];
  for (int i = 1; i < u->nall; i++)
    if (stage_bytes(u->all[i]) > stage_bytes(s))
      s = u->all[i];
  uint64_t held = stage_bytes(s);
  if (s->rt->st->kind == SL_STAGE_AGGREGATE)
    return sl_memory_over_error(
        err, memory, held, total, NULL,
        "the GROUP BY's state (%u groups) over the join holds",
        s->groups.count);
  if (s->rt->st->kind == SL_STAGE_JOIN && s->rt->st->nbounds > 0)
    return sl_memory_over_error(
        err, memory, held, total,
        "use a narrower interval or watermarks with less delay",
        "the interval join's state (%u rows of its left side, %u of its "
        "right, each kept until the other side's watermark passes its "
        "bound) holds",
        s->sides[0].count, s->sides[1].count);
  if (s->rt->st->kind == SL_STAGE_JOIN)
    return sl_memory_over_error(
        err, memory, held, total,
        "join within windows so that rows can be dropped",
        "the regular join's state (%u rows of its left side, %u of its "
        "right) holds",
        s->sides[0].count, s->sides[1].count);
  return sl_memory_over_error(
      err, memory, held, total, NULL,
      "the Top-N's state (%u partitions, the first %lld rows of each) holds",
      s->pcount, (long long)s->limit);
}

void update_stages_free(update_stages *u) {
  if (!u)
    return;
  for (int i = 0; i < u->nall; i++) {
    ustage *s = u->all[i];
    sl_buffer_free(&s->out);
    free(s->ops);
    free(s->sel);
    free(s->kinds);
    if (s->rt->st->kind == SL_STAGE_JOIN)
      ustage_join_free(s);
    if (s->rt->st->kind == SL_STAGE_AGGREGATE) {
      sl_group_table_free(&s->groups);
      agg_multisets_free(s->multi);
      sl_buffer_free(&s->tmp);
      free(s->keyrow);
      sl_arena_free(&s->arena);
    }
    if (s->rt->st->kind == SL_STAGE_TOPN) {
      sl_buffer_free(&s->sorts);
      for (uint32_t b = 0; b < s->pcap; b++)
        for (tpart *p = s->parts[b], *next; p; p = next) {
          next = p->next;
          part_free(s, p);
        }
      free(s->parts);
    }
    free(s);
  }
  free(u->all);
  free(u->inserts);
  sl_expr_ctx_free(u->ctx);
  free(u);
}
