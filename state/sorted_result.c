/* sorted_result.c - collect, sort and write a bounded query's result for
 * ORDER BY (see sorted_result.h).
 *
 * Order of values: numbers and times by value, strings by bytes (as the
 * interpreter compares them), DOUBLE NaN above every number (as Java's
 * Double.compare).  NULLs: NULLS FIRST / NULLS LAST as written; by default
 * NULL sorts as the smallest value (first ascending, last descending), as
 * in Flink and SQLite.  The sort is a merge sort of row references, so it
 * is stable and costs O(n log n) comparisons whatever the input order.
 */
#include "sluice/state/sorted_result.h"

#include <stdlib.h>
#include <string.h>

void sorted_result_init(sorted_result *r, const sl_row_layout *layout,
                        uint32_t buffer_size) {
  memset(r, 0, sizeof *r);
  r->layout = layout;
  r->buffer_size = buffer_size;
  r->next_size = buffer_size;
}

void sorted_result_init_growing(sorted_result *r, const sl_row_layout *layout,
                                uint32_t buffer_size) {
  sorted_result_init(r, layout, buffer_size);
  r->next_size = buffer_size < 1024 ? buffer_size : 1024;
}

/* Room for one more buffer in r->bufs. */
static void room_for_buffer(sorted_result *r) {
  if (r->nbufs == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 16;
    sl_buffer *grown = realloc(r->bufs, sizeof *grown * (size_t)r->cap);
    if (!grown)
      abort();
    r->bufs = grown;
  }
}

static sl_buffer *new_buffer(sorted_result *r, uint32_t need) {
  room_for_buffer(r);
  uint32_t size = r->next_size < need ? need : r->next_size;
  r->next_size = size >= r->buffer_size / 2 ? r->buffer_size : size * 2;
  sl_buffer *b = &r->bufs[r->nbufs++];
  sl_buffer_init(b, r->layout, size);
  return b;
}

void sorted_result_adopt(sorted_result *r, sl_buffer *b) {
  room_for_buffer(r);
  r->bufs[r->nbufs] = *b;
  /* b's layout may be its maker's (freed with it): the store's is the same */
  r->bufs[r->nbufs++].layout = r->layout;
  r->rows += b->nrows;
  r->next_size = r->buffer_size; /* rows come in whole buffers here */
  memset(b, 0, sizeof *b);
}

int sorted_result_add_row(sorted_result *r, const uint8_t *row, sl_error *err) {
  const sl_row_layout *l = r->layout;
  sl_buffer *b = r->nbufs ? &r->bufs[r->nbufs - 1] : NULL;
  if (!b || !sl_buffer_append_copy(b, row)) {
    uint32_t heap = (uint32_t)sl_row_long_bytes(l, row);
    b = new_buffer(r, l->width + heap + 64);
    if (!sl_buffer_append_copy(b, row))
      return sl_error_set(err, SL_ENOMEM,
                          "a result row of %u bytes does "
                          "not fit a sort buffer",
                          l->width + heap);
  }
  r->rows++;
  return SL_OK;
}

int sorted_result_add(sorted_result *r, const sl_buffer *src, sl_error *err) {
  for (uint32_t i = 0; i < src->nrows; i++) {
    int rc = sorted_result_add_row(r, sl_buffer_row(src, i), err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

size_t sorted_result_bytes(const sorted_result *r) {
  size_t n = 0;
  for (int i = 0; i < r->nbufs; i++)
    n += r->bufs[i].cap;
  return n;
}

static int cmp_double(double x, double y) {
  if (x != x || y != y) /* NaN above everything, equal to itself */
    return (x != x) - (y != y);
  return (x > y) - (x < y);
}

/* Compare non-NULL values of field f. */
static int cmp_value(const sl_field *f, const uint8_t *a, const uint8_t *b) {
  a += f->offset;
  b += f->offset;
  switch (f->ptype) {
  case SL_P_F32:
    return cmp_double(*(const float *)a, *(const float *)b);
  case SL_P_F64:
    return cmp_double(*(const double *)a, *(const double *)b);
  case SL_P_DEC128: {
    __int128 x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
  }
  case SL_P_STR:
    return sl_str_compare((const sl_str *)a, (const sl_str *)b);
  default: {
    int64_t x = sl_int_load(a, f->ptype), y = sl_int_load(b, f->ptype);
    return (x > y) - (x < y);
  }
  }
}

typedef struct sorter {
  const sl_row_layout *layout;
  const sl_border *order;
  int norder;
} sorter;

static int cmp_rows(const sorter *s, const uint8_t *a, const uint8_t *b) {
  return sorted_result_compare(s->layout, s->order, s->norder, a, b);
}

int sorted_result_compare(const sl_row_layout *layout, const sl_border *order,
                          int norder, const uint8_t *a, const uint8_t *b) {
  const sorter st = {layout, order, norder};
  const sorter *s = &st;
  for (int k = 0; k < s->norder; k++) {
    const sl_border *o = &s->order[k];
    const sl_field *f = &s->layout->fields[o->column];
    bool na = sl_row_is_null(a, o->column), nb = sl_row_is_null(b, o->column);
    int c;
    if (na || nb) {
      if (na && nb)
        continue;
      /* NULLS FIRST puts a NULL before any value whatever the direction. */
      bool nulls_first = o->nulls == 1 || (o->nulls == 0 && !o->desc);
      c = na ? -1 : 1;
      if (!nulls_first)
        c = -c;
      return c;
    }
    c = cmp_value(f, a, b);
    if (c)
      return o->desc ? -c : c;
  }
  return 0;
}

/* Stable merge sort of row pointers (tmp: scratch of the same size). */
static void merge_sort(const sorter *s, const uint8_t **v, const uint8_t **tmp,
                       size_t n) {
  if (n < 2)
    return;
  size_t h = n / 2;
  merge_sort(s, v, tmp, h);
  merge_sort(s, v + h, tmp, n - h);
  if (cmp_rows(s, v[h - 1], v[h]) <= 0)
    return; /* already in order */
  memcpy(tmp, v, sizeof *v * n);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n)
    v[k++] = cmp_rows(s, tmp[j], tmp[i]) < 0 ? tmp[j++] : tmp[i++];
  while (i < h)
    v[k++] = tmp[i++];
  while (j < n)
    v[k++] = tmp[j++];
}

void sorted_result_sort(const sl_row_layout *layout, const sl_border *order,
                        int norder, const uint8_t **rows, size_t n) {
  if (n < 2)
    return;
  const uint8_t **tmp = malloc(sizeof *tmp * n);
  if (!tmp)
    abort();
  sorter s = {layout, order, norder};
  merge_sort(&s, rows, tmp, n);
  free(tmp);
}

int sorted_result_emit(sorted_result *r, const sl_border *order, int norder,
                       sorted_result_write write, void *arg, const bool *stop,
                       sl_error *err) {
  size_t n = (size_t)r->rows;
  if (n == 0)
    return SL_OK;
  const uint8_t **v = malloc(sizeof *v * n * 2);
  if (!v)
    return sl_error_set(err, SL_ENOMEM, "out of memory sorting %zu result rows",
                        n);
  size_t k = 0;
  for (int i = 0; i < r->nbufs; i++)
    for (uint32_t j = 0; j < r->bufs[i].nrows; j++)
      v[k++] = sl_buffer_row(&r->bufs[i], j);
  sorter s = {r->layout, order, norder};
  merge_sort(&s, v, v + n, n);
  /* Rows go out by copy; their long strings stay where the store keeps
   * them, which outlives the write. */
  sl_buffer out;
  sl_buffer_init(&out, r->layout, r->buffer_size);
  out.borrow_strings = true;
  int rc = SL_OK;
  for (size_t i = 0; i < n && rc == SL_OK && !(stop && *stop); i++) {
    uint8_t *row = sl_buffer_append(&out);
    if (!row) {
      rc = write(arg, &out);
      sl_buffer_clear(&out);
      if (rc != SL_OK || (stop && *stop))
        break;
      row = sl_buffer_append(&out);
    }
    memcpy(row, v[i], r->layout->width);
  }
  if (rc == SL_OK && out.nrows && !(stop && *stop))
    rc = write(arg, &out);
  sl_buffer_free(&out);
  free(v);
  return rc;
}

void sorted_result_free(sorted_result *r) {
  for (int i = 0; i < r->nbufs; i++)
    sl_buffer_free(&r->bufs[i]);
  free(r->bufs);
  memset(r, 0, sizeof *r);
}
