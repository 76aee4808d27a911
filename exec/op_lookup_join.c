/* op_lookup_join.c - the probe of a lookup join: each stream row against
 * the bounded table loaded once per query (query_setup.c), into joined
 * rows.  Separate: the rest of the pipeline only sees the joined rows. */
#include <string.h>

#include "worker_ops_int.h"

bool sl_lookup_keys_equal(const sl_row_layout *kl, const uint8_t *a,
                          const uint8_t *b) {
  for (int f = 0; f < kl->nfields; f++) {
    const sl_field *fd = &kl->fields[f];
    if (sl_row_is_null(a, f) != sl_row_is_null(b, f))
      return false;
    if (sl_row_is_null(a, f))
      continue;
    bool eq = fd->ptype == SL_P_STR
                  ? sl_str_equal((const sl_str *)(a + fd->offset),
                                 (const sl_str *)(b + fd->offset))
                  : memcmp(a + fd->offset, b + fd->offset, fd->size) == 0;
    if (!eq)
      return false;
  }
  return true;
}

/* Lookup join: for each stream row, find the table rows with equal keys
 * and build joined rows (stream fields, then table fields) in s->joined.
 * Returns the number of stream rows consumed (all, or fewer when joined is
 * full) and fills sel2 with the joined rows.  pre: the keys of the rows,
 * already computed (rows pre_first.. of pre), or NULL. */
int sl_worker_probe(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                    uint32_t n, const sl_buffer *pre, uint32_t pre_first,
                    uint32_t *consumed, uint32_t *nout) {
  const exec_lookup_state *lk = &s->q->lookup;
  const sl_row_layout *kl = lk->join_key_layout;
  const sl_row_layout *jl = lk->joined_layout;
  const sl_row_layout *sl = s->q->source.stream_layout;
  const sl_row_layout *tl = lk->table_layout;
  sl_buffer_clear(&s->joined);
  sl_buffer_clear(&s->tmp);
  /* Keys of the stream rows, evaluated into the tmp buffer's front (the
   * key layout's fields in order). */
  sl_buffer keys;
  sl_buffer_wrap(&keys, kl, s->tmp.data, s->tmp.cap);
  keys.borrow_strings = true; /* stream keys: the input outlives them */
  int k = (int)n;
  if (!pre) {
    k = sl_worker_eval_rows(s, lk->stream_key_progs, lk->nkey_progs, in, sel, n,
                            &keys);
    if (k < 0)
      return k;
  }
  uint32_t out = 0, i = 0;
  uint32_t mask = lk->table_cap - 1;
  uint32_t mark_rows = 0, mark_out = 0;
  for (; i < (uint32_t)k; i++) {
    mark_rows = s->joined.nrows;
    mark_out = out;
    const uint8_t *key =
        pre ? sl_buffer_row(pre, pre_first + i) : sl_buffer_row(&keys, i);
    bool null_key = false;
    for (int f = 0; f < kl->nfields; f++)
      null_key |= sl_row_is_null(key, f);
    if (null_key)
      continue; /* NULL never equals anything */
    int32_t direct_row = -1;
    if (lk->table_direct) {
      /* one integer key, unique and dense: indexed by value */
      const sl_field *fd = &kl->fields[0];
      uint64_t at = (uint64_t)sl_int_load(key + fd->offset, fd->ptype) -
                    (uint64_t)lk->table_direct_lo;
      if (at >= lk->table_direct_n || lk->table_direct[at] < 0)
        continue;
      direct_row = lk->table_direct[at];
    }
    uint64_t h = direct_row >= 0 ? 0 : sl_key_hash(kl, key);
    for (uint32_t j = (uint32_t)h & mask; direct_row >= 0 || lk->table_hash[j];
         j = (j + 1) & mask) {
      uint32_t tr;
      if (direct_row >= 0) {
        tr = (uint32_t)direct_row;
      } else {
        if (lk->table_hash[j] != h)
          continue;
        tr = lk->table_slot_row[j];
        if (!sl_lookup_keys_equal(kl, key, lk->table_keys[tr]))
          continue;
      }
      uint8_t *jr = sl_buffer_append(&s->joined);
      if (!jr)
        goto full;
      const uint8_t *sr = sl_buffer_row(in, sel[i]);
      const uint8_t *trow = lk->table_rows[tr];
      /* Strings keep pointing into the input buffer or the loaded table,
       * both of which outlive the joined rows. */
      for (int f = 0; f < sl->nfields; f++) {
        sl_row_set_null(jr, f, sl_row_is_null(sr, f));
        memcpy(jr + jl->fields[f].offset, sr + sl->fields[f].offset,
               sl->fields[f].size);
      }
      for (int f = 0; f < tl->nfields; f++) {
        int jf = sl->nfields + f;
        sl_row_set_null(jr, jf, sl_row_is_null(trow, f));
        memcpy(jr + jl->fields[jf].offset, trow + tl->fields[f].offset,
               tl->fields[f].size);
      }
      s->joined_origin[s->joined.nrows - 1] = sel[i];
      s->sel2[out++] = s->joined.nrows - 1;
      if (lk->table_unique)
        break; /* no other row has this key */
    }
  }
  *consumed = i;
  *nout = out;
  return SL_OK;
full:
  /* A stream row whose matches did not all fit is done again next round:
   * drop the matches it has so far. */
  s->joined.nrows = mark_rows;
  out = mark_out;
  *consumed = i;
  *nout = out;
  return SL_OK;
}
