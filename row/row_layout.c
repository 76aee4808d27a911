/* row_layout.c - field offsets for a schema, buffers of rows, strings. */
#include <stdio.h>
#include <stdlib.h>

#include "sluice/row/row.h"

const int64_t sl_pow10_i64[19] = {1,
                                  10,
                                  100,
                                  1000,
                                  10000,
                                  100000,
                                  1000000,
                                  10000000,
                                  100000000,
                                  1000000000,
                                  10000000000,
                                  100000000000,
                                  1000000000000,
                                  10000000000000,
                                  100000000000000,
                                  1000000000000000,
                                  10000000000000000,
                                  100000000000000000,
                                  1000000000000000000};

uint64_t sl_hash_bytes(const void *p, size_t n) {
  const uint8_t *d = p;
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, d, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
    d += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    memcpy(&w, d, n);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
  }
  return sl_mix64(h);
}

sl_ptype sl_ptype_of(const sl_type *t) {
  switch (t->kind) {
  case SL_TYPE_BOOLEAN:
    return SL_P_BOOL;
  case SL_TYPE_TINYINT:
    return SL_P_I8;
  case SL_TYPE_SMALLINT:
    return SL_P_I16;
  case SL_TYPE_INT:
    return SL_P_I32;
  case SL_TYPE_BIGINT:
    return SL_P_I64;
  case SL_TYPE_FLOAT:
    return SL_P_F32;
  case SL_TYPE_DOUBLE:
    return SL_P_F64;
  case SL_TYPE_DECIMAL:
    return t->precision <= 18 ? SL_P_DEC64 : SL_P_DEC128;
  case SL_TYPE_CHAR:
  case SL_TYPE_VARCHAR:
    return SL_P_STR;
  case SL_TYPE_DATE:
    return SL_P_DATE;
  case SL_TYPE_TIME:
    return SL_P_TIME;
  case SL_TYPE_TIMESTAMP:
  case SL_TYPE_TIMESTAMP_LTZ:
    return SL_P_TS;
  case SL_TYPE_INTERVAL_DAY_TIME:
    return SL_P_IV_DT;
  case SL_TYPE_INTERVAL_YEAR_MONTH:
    return SL_P_IV_YM;
  case SL_TYPE_NULL:
    return SL_P_I64; /* a NULL-only column: any width does, it is never read */
  case SL_TYPE_ROW:
    break;
  }
  return SL_P_I64; /* ROW columns are flattened before layout */
}

int sl_ptype_size(sl_ptype p) {
  switch (p) {
  case SL_P_BOOL:
  case SL_P_I8:
    return 1;
  case SL_P_I16:
    return 2;
  case SL_P_I32:
  case SL_P_F32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    return 4;
  case SL_P_I64:
  case SL_P_F64:
  case SL_P_DEC64:
  case SL_P_TS:
  case SL_P_IV_DT:
    return 8;
  case SL_P_DEC128:
  case SL_P_STR:
    return 16;
  }
  return 8;
}

int sl_str_compare(const sl_str *a, const sl_str *b) {
  uint32_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(sl_str_data(a), sl_str_data(b), n);
  if (c)
    return c;
  return (a->len > b->len) - (a->len < b->len);
}

sl_row_layout *sl_row_layout_new(sl_arena *a, int n, const char *const *names,
                                 const sl_type *const *types) {
  sl_row_layout *l = SL_ANEW(a, sl_row_layout);
  l->nfields = n;
  l->fields = SL_ANEW_N(a, sl_field, n > 0 ? n : 1);
  l->null_bytes = (uint32_t)((n + 7) / 8);
  /* Place wide fields first so that alignment padding is minimal: 16- and
   * 8-byte fields, then 4, 2, 1.  The field order seen by users does not
   * change; only offsets do. */
  uint32_t off = (l->null_bytes + 7u) & ~7u;
  static const int sizes[] = {16, 8, 4, 2, 1};
  for (int s = 0; s < 5; s++) {
    for (int i = 0; i < n; i++) {
      sl_ptype p = sl_ptype_of(types[i]);
      int size = sl_ptype_size(p);
      if (size != sizes[s])
        continue;
      sl_field *f = &l->fields[i];
      f->name = names ? names[i] : NULL;
      f->type = types[i];
      f->ptype = p;
      f->size = (uint32_t)size;
      f->offset = off;
      off += (uint32_t)size;
    }
  }
  l->width = (off + 7u) & ~7u;
  if (l->width == 0)
    l->width = 8;
  return l;
}

void sl_buffer_init(sl_buffer *b, const sl_row_layout *layout, uint32_t cap) {
  cap = (cap + 63u) & ~63u;
  b->data = aligned_alloc(64, cap);
  if (!b->data) {
    fprintf(stderr, "sluice: out of memory (buffer of %u bytes)\n", cap);
    abort();
  }
  b->cap = cap;
  b->nrows = 0;
  b->heap_used = 0;
  b->owned = true;
  b->borrow_strings = false;
  b->layout = layout;
}

void sl_buffer_wrap(sl_buffer *b, const sl_row_layout *layout, void *mem,
                    uint32_t cap) {
  b->data = mem;
  b->cap = cap;
  b->nrows = 0;
  b->heap_used = 0;
  b->owned = false;
  b->borrow_strings = false;
  b->layout = layout;
}

void sl_buffer_free(sl_buffer *b) {
  if (b->owned)
    free(b->data);
  b->data = NULL;
  b->cap = b->nrows = b->heap_used = 0;
}

uint8_t *sl_buffer_append(sl_buffer *b) {
  if (!sl_buffer_has_room(b, 0))
    return NULL;
  uint8_t *row = sl_buffer_row(b, b->nrows);
  memset(row, 0, b->layout->width);
  b->nrows++;
  return row;
}

char *sl_buffer_heap_copy(sl_buffer *b, const char *p, uint32_t len) {
  size_t rows_end = (size_t)b->nrows * b->layout->width;
  if (rows_end + b->heap_used + len > b->cap)
    return NULL;
  b->heap_used += len;
  char *dst = (char *)b->data + b->cap - b->heap_used;
  memcpy(dst, p, len);
  return dst;
}

bool sl_buffer_put_str(sl_buffer *b, sl_str *dst, const char *p, uint32_t len) {
  if (len <= SL_STR_INLINE) {
    *dst = sl_str_make(p, len);
    return true;
  }
  char *copy = sl_buffer_heap_copy(b, p, len);
  if (!copy)
    return false;
  *dst = sl_str_make(copy, len);
  return true;
}

/* ---- buffers between address spaces ---------------------------------------
 * A long string is a pointer; in a buffer that crosses into another
 * process (a shared-memory or network channel) the pointer means nothing
 * there.  Swizzling stores each long string's position as an offset from
 * the start of the buffer instead, which means the same wherever the bytes
 * land; unswizzling turns offsets back into pointers and checks that every
 * string lies inside the receiving buffer's heap, so a corrupt or hostile
 * buffer cannot make a reader wander outside it. */

bool sl_buffer_append_copy(sl_buffer *b, const uint8_t *row) {
  const sl_row_layout *l = b->layout;
  size_t heap = sl_row_long_bytes(l, row);
  if (heap > UINT32_MAX || !sl_buffer_has_room(b, (uint32_t)heap))
    return false;
  uint8_t *dst = sl_buffer_append(b);
  memcpy(dst, row, l->width);
  for (int f = 0; f < l->nfields; f++)
    if (l->fields[f].ptype == SL_P_STR && !sl_row_is_null(row, f)) {
      sl_str *x = (sl_str *)(dst + l->fields[f].offset);
      if (x->len > SL_STR_INLINE)
        sl_buffer_put_str(b, x, x->u.ptr, x->len);
    }
  return true;
}

size_t sl_row_long_bytes(const sl_row_layout *l, const uint8_t *row) {
  size_t n = 0;
  for (int f = 0; f < l->nfields; f++) {
    const sl_str *s = (const sl_str *)(row + l->fields[f].offset);
    if (l->fields[f].ptype == SL_P_STR && !sl_row_is_null(row, f) &&
        s->len > SL_STR_INLINE)
      n += s->len;
  }
  return n;
}

char *sl_row_copy_deep(const sl_row_layout *l, const uint8_t *row, uint8_t *dst,
                       char *heap) {
  memcpy(dst, row, l->width);
  for (int f = 0; f < l->nfields; f++) {
    sl_str *s = (sl_str *)(dst + l->fields[f].offset);
    if (l->fields[f].ptype == SL_P_STR && !sl_row_is_null(dst, f) &&
        s->len > SL_STR_INLINE) {
      memcpy(heap, s->u.ptr, s->len);
      s->u.ptr = heap;
      heap += s->len;
    }
  }
  return heap;
}

int sl_buffer_swizzle(sl_buffer *b, sl_error *err) {
  const sl_row_layout *l = b->layout;
  const char *heap = (const char *)b->data + b->cap - b->heap_used;
  const char *end = (const char *)b->data + b->cap;
  for (int f = 0; f < l->nfields; f++) {
    if (l->fields[f].ptype != SL_P_STR)
      continue;
    for (uint32_t r = 0; r < b->nrows; r++) {
      uint8_t *row = sl_buffer_row(b, r);
      sl_str *s = (sl_str *)(row + l->fields[f].offset);
      if (sl_row_is_null(row, f) || s->len <= SL_STR_INLINE)
        continue;
      if (s->u.ptr < heap || s->u.ptr > end ||
          (size_t)(end - s->u.ptr) < s->len)
        return sl_error_set(err, SL_EINVAL,
                            "a string of field '%s' is not in the buffer's "
                            "own heap and cannot be sent to another process",
                            l->fields[f].name ? l->fields[f].name : "?");
      s->u.ptr = (const char *)(uintptr_t)(s->u.ptr - (const char *)b->data);
    }
  }
  return SL_OK;
}

int sl_buffer_unswizzle(sl_buffer *b, sl_error *err) {
  const sl_row_layout *l = b->layout;
  size_t rows_end = (size_t)b->nrows * l->width;
  if (rows_end + b->heap_used > b->cap)
    return sl_error_set(err, SL_EINVAL,
                        "a received buffer claims %u rows and %u heap bytes, "
                        "more than its %u bytes",
                        b->nrows, b->heap_used, b->cap);
  size_t heap = b->cap - b->heap_used;
  for (int f = 0; f < l->nfields; f++) {
    if (l->fields[f].ptype != SL_P_STR)
      continue;
    for (uint32_t r = 0; r < b->nrows; r++) {
      uint8_t *row = sl_buffer_row(b, r);
      sl_str *s = (sl_str *)(row + l->fields[f].offset);
      if (sl_row_is_null(row, f) || s->len <= SL_STR_INLINE)
        continue;
      uintptr_t off = (uintptr_t)s->u.ptr;
      if (off < heap || off > b->cap || b->cap - off < s->len)
        return sl_error_set(err, SL_EINVAL,
                            "a received string of field '%s' lies outside "
                            "its buffer (row %u): the sender and this node "
                            "disagree on the layout, or the data is corrupt",
                            l->fields[f].name ? l->fields[f].name : "?", r);
      s->u.ptr = (const char *)b->data + off;
    }
  }
  return SL_OK;
}
