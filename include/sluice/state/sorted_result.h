/* sorted_result.h - ORDER BY over the result of a bounded query: the
 * coordinator keeps every result row (the "single" strategy: everything
 * ends in one place), sorts once the input has ended, then writes the
 * rows in order.  Internal to runtime/.
 *
 * Ownership: the store owns copies of the rows (long strings included) in
 * buffers of its own; sorted_result_free releases them. */
#ifndef SLUICE_SORTED_RESULT_H
#define SLUICE_SORTED_RESULT_H

#include <stdint.h>

#include "sluice/binder/binder.h"
#include "sluice/common/error.h"
#include "sluice/row/row.h"

typedef struct sorted_result {
  const sl_row_layout *layout;
  uint32_t buffer_size;
  uint32_t next_size; /* of the next buffer (growing: doubles up to
                       * buffer_size) */
  sl_buffer *bufs;
  int nbufs, cap;
  uint64_t rows;
} sorted_result;

void sorted_result_init(sorted_result *r, const sl_row_layout *layout,
                        uint32_t buffer_size);
/* The same, but its buffers start at 1 KiB and double up to buffer_size:
 * for stores that hold thousands of these with a row or two each (a stage
 * leaf's rows per session end). */
void sorted_result_init_growing(sorted_result *r, const sl_row_layout *layout,
                                uint32_t buffer_size);
/* Keep buffer b (layout r->layout, its long strings in its own heap) as
 * the store's last buffer, without copying: b is the store's after (and
 * *b zeroed). */
void sorted_result_adopt(sorted_result *r, sl_buffer *b);
/* Copy the rows of src (layout r->layout) into the store. */
int sorted_result_add(sorted_result *r, const sl_buffer *src, sl_error *err);

/* Copy one row (layout r->layout, long strings included). */
int sorted_result_add_row(sorted_result *r, const uint8_t *row, sl_error *err);
/* Bytes of buffers the store holds. */
size_t sorted_result_bytes(const sorted_result *r);
/* ORDER BY's comparison of two rows of layout (order[].column indexes its
 * fields): < 0, 0, > 0. */
int sorted_result_compare(const sl_row_layout *layout, const sl_border *order,
                          int norder, const uint8_t *a, const uint8_t *b);
/* Stable sort of row pointers by order. */
void sorted_result_sort(const sl_row_layout *layout, const sl_border *order,
                        int norder, const uint8_t **rows, size_t n);

/* Called with a buffer of rows in order; it may change b->nrows (LIMIT). */
typedef int (*sorted_result_write)(void *arg, sl_buffer *b);

/* Sort the rows by order[0..norder) (stable: equal rows keep their
 * arrival order) and hand them to write in buffers of the store's size,
 * until write returns non-SL_OK or stop (if not NULL) becomes true. */
int sorted_result_emit(sorted_result *r, const sl_border *order, int norder,
                       sorted_result_write write, void *arg, const bool *stop,
                       sl_error *err);

void sorted_result_free(sorted_result *r);

#endif
