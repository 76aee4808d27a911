/* updating_result.c - merge an updating GROUP BY's deltas into its result and
 * send the changelog (see update_result.h).
 *
 * A group's row before and after a merge are both finalized into `rows`,
 * adjacent, so that HAVING and the select list run over a whole buffer at
 * once (the interpreter's and the JIT's unit), and the op of each is
 * decided from the pair: the before row is dropped when the group is new.
 */
#include "updating_result.h"

#include <stdlib.h>
#include <string.h>

#include "sluice/common/clock.h"
#include "sluice/session/changelog.h"

void update_result_init(update_result *u, const exec_query *q,
                        uint32_t buffer_size, double ttl) {
  memset(u, 0, sizeof *u);
  u->q = q;
  u->ttl = ttl;
  u->last_expiry = sl_clock_seconds();
  /* q->agg.aggs and one COUNT(*) whose state holds the time of the last
   * change (merges and finalizes use q->agg.aggs). */
  sl_arena_init(&u->arena, 0);
  sl_error e = {0};
  if (sl_agg_set_with_count(&u->arena, &q->agg.aggs, &u->set, &e) != SL_OK)
    abort(); /* q->agg.aggs was accepted; the prefix lays out alike */
  u->touched_off = u->set.aggs[q->agg.aggs.n].state_offset;
  sl_group_table_init(&u->table, q->agg.key_layout, &u->set, 1024);
  u->table.budget = q->memory; /* asked before it doubles */
  sl_buffer_init(&u->rows, q->agg.agg_layout, buffer_size);
  sl_buffer_init(&u->out, q->out_layout, buffer_size);
  size_t n = buffer_size / q->agg.agg_layout->width + 2;
  u->before = malloc(n);
  u->pass = malloc(n);
  u->ops = malloc(n);
  u->sel = malloc(n * sizeof *u->sel);
  u->ctx = sl_expr_ctx_new();
  if (!u->before || !u->pass || !u->ops || !u->sel)
    abort();
}

void update_result_free(update_result *u) {
  sl_group_table_free(&u->table);
  sl_arena_free(&u->arena);
  sl_buffer_free(&u->rows);
  sl_buffer_free(&u->out);
  free(u->before);
  free(u->pass);
  free(u->ops);
  free(u->sel);
  if (u->ctx)
    sl_expr_ctx_free(u->ctx);
  memset(u, 0, sizeof *u);
}

size_t update_result_bytes(const update_result *u) {
  return sl_group_table_bytes(&u->table);
}

/* Send the changelog rows filled so far. */
static int send_out(update_result *u, update_out_fn out, void *arg) {
  if (u->out.nrows == 0)
    return SL_OK;
  u->changes += u->out.nrows;
  int rc = out(arg, &u->out);
  sl_buffer_clear(&u->out);
  return rc;
}

/* HAVING and the select list over the pairs in `rows`; the rows that go
 * out, with their op, to out(arg). */
static int send_changes(update_result *u, update_out_fn out, void *arg,
                        sl_error *err) {
  const exec_query *q = u->q;
  uint32_t n = u->rows.nrows;
  if (n == 0)
    return SL_OK;
  memset(u->pass, 1, n);
  if (q->agg.having) {
    uint32_t k = n;
    for (uint32_t i = 0; i < n; i++)
      u->sel[i] = i;
    int rc = sl_expr_filter(q->agg.having, &u->rows, u->sel, &k, u->ctx, err);
    if (rc != SL_OK)
      return rc;
    memset(u->pass, 0, n);
    for (uint32_t i = 0; i < k; i++)
      u->pass[u->sel[i]] = 1;
  }
  /* Which rows go out, as what. */
  uint32_t m = 0;
  for (uint32_t r = 0; r < n; r++) {
    if (!u->before[r]) { /* a new group */
      if (u->pass[r]) {
        u->sel[m] = r;
        u->ops[m++] = SL_OP_INSERT;
      }
      continue;
    }
    uint32_t a = r + 1; /* its row after the merge */
    bool pb = u->pass[r], pa = u->pass[a];
    if (pb && pa) {
      if (!sl_key_equal(q->agg.agg_layout, sl_buffer_row(&u->rows, r),
                        sl_buffer_row(&u->rows, a))) {
        u->sel[m] = r;
        u->ops[m++] = SL_OP_UPDATE_BEFORE;
        u->sel[m] = a;
        u->ops[m++] = SL_OP_UPDATE_AFTER;
      }
    } else if (pb) {
      u->sel[m] = r;
      u->ops[m++] = SL_OP_DELETE;
    } else if (pa) {
      u->sel[m] = a;
      u->ops[m++] = SL_OP_INSERT;
    }
    r = a;
  }
  uint32_t done = 0;
  while (done < m) {
    uint32_t first = u->out.nrows;
    int k = sl_exec_eval_rows(q->agg.final_progs, q->nout, &u->rows,
                              u->sel + done, m - done, &u->out, u->ctx, err);
    if (k < 0)
      return k;
    if (k == 0 && first == 0)
      return sl_error_set(err, SL_EINVAL,
                          "a result row is larger than a buffer; raise SET "
                          "'sluice.buffer-size'");
    for (int j = 0; j < k; j++)
      sl_exec_set_op(q->out_layout, sl_buffer_row(&u->out, first + (uint32_t)j),
                     (sl_changelog_op)u->ops[done + (uint32_t)j]);
    done += (uint32_t)k;
    if (done < m) {
      int rc = send_out(u, out, arg);
      if (rc != SL_OK)
        return rc;
    }
  }
  sl_buffer_clear(&u->rows);
  return SL_OK;
}

/* Append the aggregate row of the group whose states are `states` (its
 * key row just before them in the table).  1: the buffer is full. */
static int append_row(update_result *u, const uint8_t *states, bool before,
                      sl_error *err) {
  const exec_query *q = u->q;
  const sl_row_layout *al = q->agg.agg_layout, *kl = q->agg.key_layout;
  int nk = q->plan->nkeys, na = q->plan->naggs;
  uint32_t heap = u->rows.heap_used;
  uint8_t *row = sl_buffer_append(&u->rows);
  if (!row)
    return 1;
  const uint8_t *key = states - kl->width;
  for (int k = 0; k < nk; k++) {
    sl_row_set_null(row, k, sl_row_is_null(key, k));
    memcpy(row + al->fields[k].offset, key + kl->fields[k].offset,
           kl->fields[k].size);
  }
  for (int g = 0; g < na; g++) {
    int rc =
        sl_agg_finalize(&q->agg.aggs, g, states, &u->rows, row, nk + g, err);
    if (rc != SL_OK) {
      u->rows.nrows--;
      u->rows.heap_used = heap;
      return rc;
    }
  }
  for (int k = 0; k < 3; k++) /* no window */
    sl_row_set_null(row, nk + na + k, true);
  u->before[u->rows.nrows - 1] = before;
  return SL_OK;
}

/* Room for a group's two rows, with half the buffer's heap to spare. */
static bool pair_fits(const update_result *u) {
  const sl_buffer *b = &u->rows;
  return (size_t)(b->nrows + 2) * b->layout->width + b->heap_used +
             b->cap / 2 <=
         b->cap;
}

/* 'table.exec.state.ttl': drop the groups unchanged for that long, by
 * copying the others into a fresh table (the table cannot delete in
 * place), at most twice per ttl. */
static void expire(update_result *u, double now) {
  if (u->ttl <= 0 || now - u->last_expiry < u->ttl / 2)
    return;
  u->last_expiry = now;
  sl_group_table_keep_since(&u->table, u->touched_off,
                            (int64_t)((now - u->ttl) * 1000), NULL, NULL);
}

int update_result_merge(update_result *u, const sl_group_table *delta,
                        update_out_fn out, void *arg, sl_error *err) {
  double now = u->ttl > 0 ? sl_clock_seconds() : 0;
  expire(u, now);
  /* Visit the delta in a scattered order, as sl_group_table_merge does
   * (slot order would insert keys sorted by hash into one probe run). */
  uint32_t mask = delta->cap - 1;
  for (uint32_t s = 0; s < delta->cap; s++) {
    uint32_t i = (uint32_t)(s * 0x9E3779B1u) & mask;
    if (!sl_group_table_slot_used(delta, i))
      continue;
    if (!pair_fits(u)) {
      int rc = send_changes(u, out, arg, err);
      if (rc != SL_OK)
        return rc;
    }
    /* The merged table cannot double within the limit: stop before it
     * does (the caller reports the limit; the query ends). */
    if (sl_group_table_growth_over_budget(&u->table))
      return UPDATE_RESULT_OVER_LIMIT;
    const uint8_t *e = delta->slots + (size_t)i * delta->entry_width;
    bool created;
    uint8_t *states = sl_group_table_upsert_ex(&u->table, *(const uint64_t *)e,
                                               e + 8, &created);
    int rc = created ? SL_OK : append_row(u, states, true, err);
    if (rc == SL_OK)
      rc = sl_agg_merge(&u->q->agg.aggs, states,
                        sl_group_table_states(delta, i), &u->table.arena, err);
    if (u->ttl > 0) /* whole milliseconds are enough */
      *(int64_t *)(states + u->touched_off) = (int64_t)(now * 1000);
    if (rc == SL_OK)
      rc = append_row(u, states, false, err);
    if (rc == 1)
      rc = sl_error_set(err, SL_EINVAL,
                        "a group's result row is larger than half a buffer; "
                        "raise SET 'sluice.buffer-size'");
    if (rc != SL_OK)
      return rc;
  }
  int rc = send_changes(u, out, arg, err);
  if (rc == SL_OK)
    rc = send_out(u, out, arg);
  return rc;
}

int update_result_finish(update_result *u, update_out_fn out, void *arg,
                         sl_error *err) {
  if (u->q->plan->nkeys > 0 || u->table.count > 0)
    return SL_OK;
  sl_group_table none;
  sl_group_table_init(&none, u->q->agg.key_layout, &u->q->agg.aggs, 1);
  uint8_t key[8] = {0}; /* the empty key row */
  sl_group_table_upsert(&none, sl_key_hash(u->q->agg.key_layout, key), key);
  int rc = update_result_merge(u, &none, out, arg, err);
  sl_group_table_free(&none);
  return rc;
}
