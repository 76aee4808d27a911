/* topn_rows.h - the rows of one Top-N partition, in order (update_stages.c).
 *
 * Over an updating input a Top-N keeps every row of a partition (the next
 * moves up when one of the first N is taken back), and a partition may
 * hold many: a global Top-N over a GROUP BY holds one row per group, and
 * every change of a group takes its old row out and puts its new one in.
 * One sorted array would move half the partition per change; here the
 * rows are kept in chunks, each a sorted array of at most TOPN_CHUNK rows
 * (the leaf level of a B-tree): a change moves rows within one chunk, and
 * finding a place is a binary search over the chunks' last rows, then
 * within one chunk.  A place's rank (its row number - 1) counts the rows
 * of the chunks before it, which only the first N places need.
 *
 * Ownership: each entry is one malloc'd block (`sort`, with its row and
 * long strings), owned by the partition: freed by topn_rows_free (or by
 * the caller, for an entry it took out).  *bytes arguments are the
 * caller's count of the bytes held, kept up to date.
 */
#ifndef SLUICE_TOPN_ROWS_H
#define SLUICE_TOPN_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/binder/binder.h"
#include "sluice/row/row.h"

#define TOPN_CHUNK 128

typedef struct tentry {
  uint8_t *sort; /* the sort row: partition and order values */
  uint8_t *row;  /* the input row (sort's block holds both) */
  size_t size;   /* of the block */
} tentry;

typedef struct topn_chunk {
  int n, cap;
  tentry *e;
} topn_chunk;

typedef struct topn_rows {
  int n; /* rows in all chunks */
  int nchunks, capchunks;
  topn_chunk *chunks;
} topn_rows;

/* How rows sort: the sort rows' first norder fields by order. */
typedef struct topn_order {
  const sl_row_layout *layout;
  const sl_border *order;
  int norder;
} topn_order;

/* A place: chunk, offset in it, and rank among all rows. */
typedef struct topn_pos {
  int chunk, off, rank;
} topn_pos;

/* The place of the first row that sorts after `sort` (after) or not
 * before it (!after): where a new row goes, or where equal ones start. */
topn_pos topn_rows_place(const topn_rows *r, const topn_order *o,
                         const uint8_t *sort, bool after);

/* The row at pos (pos.rank < r->n), and the place after it. */
tentry *topn_rows_get(topn_rows *r, topn_pos pos);
topn_pos topn_rows_next(const topn_rows *r, topn_pos pos);

/* The place of the last row (r->n > 0). */
topn_pos topn_rows_last(const topn_rows *r);

/* The row of rank `rank` (< r->n): walks the chunks from the first, so
 * for the first places only. */
tentry *topn_rows_at(topn_rows *r, int rank);

/* Put e at pos (from topn_rows_place; it then has pos.rank). */
void topn_rows_insert(topn_rows *r, topn_pos pos, tentry e, uint64_t *bytes);

/* Take the row at pos out (the caller frees its block). */
tentry topn_rows_remove(topn_rows *r, topn_pos pos, uint64_t *bytes);

/* Free every row and the chunks. */
void topn_rows_free(topn_rows *r, uint64_t *bytes);

#endif
