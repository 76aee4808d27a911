/* row.h - how records are laid out in memory, and the buffers that hold them.
 *
 * A record is a fixed-width binary row laid out by its schema: a null bitmap
 * (one bit per column, rounded up to whole bytes) followed by the fields at
 * offsets computed once per schema (each field aligned to its size), the
 * whole row padded to a multiple of 8 bytes.  Operators read a field with
 * one load at a constant offset; that is what the interpreter does through
 * the layout and what the JIT will bake into code.
 *
 * Physical representation per SQL type:
 *   BOOLEAN               1 byte (0/1)
 *   TINYINT..BIGINT       1, 2, 4, 8 bytes, two's complement
 *   FLOAT, DOUBLE         4, 8 bytes IEEE
 *   DECIMAL(p, s)         p <= 18: int64 unscaled value (value * 10^s);
 *                         p > 18: 16 bytes, __int128 unscaled
 *   CHAR, VARCHAR, STRING 16 bytes, sl_str (below)
 *   DATE                  int32 days since 1970-01-01
 *   TIME                  int32 milliseconds of the day
 *   TIMESTAMP[_LTZ](p)    int64 microseconds since 1970-01-01 00:00:00 (UTC
 *                         for _LTZ); precision beyond 6 is not kept
 *   INTERVAL day-time     int64 milliseconds
 *   INTERVAL year-month   int32 months
 *   ROW<...>              not stored as such: a ROW column is flattened into
 *                         one physical column per leaf field (`person.id`),
 *                         so a query reads only the leaves it uses.
 *
 * Strings (sl_str, 16 bytes): the length, then up to 12 bytes inline; a
 * longer string keeps its first 4 bytes inline (fast inequality and prefix
 * tests) and a pointer to all its bytes.  Those bytes live in the string
 * heap at the end of the buffer that holds the row (or in the arena of the
 * state that holds it): whoever keeps a row longer than its buffer copies
 * the long strings it keeps.  Crossing a process boundary (channels) turns
 * the pointer into an offset within the buffer and back.
 *
 * Buffers (default 64 KiB, SET 'sluice.buffer-size'): rows packed from the
 * start, long-string bytes packed downward from the end.  A buffer is the
 * unit every operator consumes and produces and every channel moves, so no
 * operator ever handles single heap-allocated rows.
 *
 * Ownership: a layout is built in an arena and immutable; a buffer owns its
 * memory (sl_buffer_init/free) unless it was wrapped around memory the
 * caller owns (a channel slot).
 */
#ifndef SLUICE_ROW_H
#define SLUICE_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/types.h"

typedef enum sl_ptype {
  SL_P_BOOL,
  SL_P_I8,
  SL_P_I16,
  SL_P_I32,
  SL_P_I64,
  SL_P_F32,
  SL_P_F64,
  SL_P_DEC64,  /* int64 unscaled */
  SL_P_DEC128, /* __int128 unscaled */
  SL_P_STR,    /* sl_str */
  SL_P_DATE,   /* int32 days */
  SL_P_TIME,   /* int32 ms of day */
  SL_P_TS,     /* int64 microseconds */
  SL_P_IV_DT,  /* int64 milliseconds */
  SL_P_IV_YM,  /* int32 months */
} sl_ptype;

/* The physical type of a (non-ROW) SQL type. */
sl_ptype sl_ptype_of(const sl_type *t);
/* Size in bytes of a field of that physical type (also its alignment,
 * except DEC128 and STR which align to 8). */
int sl_ptype_size(sl_ptype p);

#define SL_STR_INLINE 12

typedef struct sl_str {
  uint32_t len;
  char prefix[4]; /* the first 4 bytes */
  union {
    char rest[8];    /* len <= 12: bytes 4..11 */
    const char *ptr; /* len > 12: all len bytes */
  } u;
} sl_str;

_Static_assert(sizeof(sl_str) == 16, "sl_str must be 16 bytes");

/* The bytes: inline strings occupy bytes 4..15 of the struct. */
static inline const char *sl_str_data(const sl_str *s) {
  return s->len <= SL_STR_INLINE ? (const char *)s + 4 : s->u.ptr;
}

/* Make a string that points at (or, when short, copies) bytes that outlive
 * it. */
static inline sl_str sl_str_make(const char *p, uint32_t len) {
  sl_str s;
  memset(&s, 0, sizeof s);
  s.len = len;
  if (len <= SL_STR_INLINE) {
    memcpy((char *)&s + 4, p, len);
  } else {
    memcpy(s.prefix, p, 4);
    s.u.ptr = p;
  }
  return s;
}

static inline bool sl_str_equal(const sl_str *a, const sl_str *b) {
  /* len and prefix in one 8-byte compare: most unequal strings stop here. */
  if (memcmp(a, b, 8) != 0)
    return false;
  if (a->len <= SL_STR_INLINE)
    return memcmp(a->u.rest, b->u.rest, 8) == 0;
  return memcmp(a->u.ptr, b->u.ptr, a->len) == 0;
}

int sl_str_compare(const sl_str *a, const sl_str *b);

/* One physical column of a layout. */
typedef struct sl_field {
  const char *name; /* flattened name: "price", "bid.price" */
  const sl_type *type;
  sl_ptype ptype;
  uint32_t offset; /* byte offset within the row */
  uint32_t size;
} sl_field;

typedef struct sl_row_layout {
  int nfields;
  sl_field *fields;
  uint32_t null_bytes; /* bitmap at offset 0 */
  uint32_t width;      /* bytes per row, a multiple of 8 */
} sl_row_layout;

/* Lay out fields of the given types (names may be NULL) in that order.
 * ROW types must have been flattened by the caller. */
sl_row_layout *sl_row_layout_new(sl_arena *a, int n, const char *const *names,
                                 const sl_type *const *types);

static inline bool sl_row_is_null(const uint8_t *row, int i) {
  return (row[i >> 3] >> (i & 7)) & 1;
}
static inline void sl_row_set_null(uint8_t *row, int i, bool null) {
  if (null)
    row[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    row[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* Copy field `from` of row src (layout sl) into field `to` of dst (layout
 * dl, a field of the same type); a long string keeps pointing at src's
 * bytes (copy the row with sl_buffer_append_copy to keep it). */
static inline void sl_row_copy_field(const sl_row_layout *sl,
                                     const uint8_t *src, int from,
                                     const sl_row_layout *dl, uint8_t *dst,
                                     int to) {
  bool null = sl_row_is_null(src, from);
  sl_row_set_null(dst, to, null);
  if (null)
    return;
  const uint8_t *p = src + sl->fields[from].offset;
  uint8_t *q = dst + dl->fields[to].offset;
  /* the common sizes inline: a call to memcpy per field was most of a
   * window join's joined row */
  switch (dl->fields[to].size) {
  case 16:
    memcpy(q, p, 16);
    break;
  case 8:
    memcpy(q, p, 8);
    break;
  case 4:
    memcpy(q, p, 4);
    break;
  default:
    memcpy(q, p, dl->fields[to].size);
  }
}

/* A buffer of rows of one layout. */
typedef struct sl_buffer {
  uint8_t *data;
  uint32_t cap; /* bytes */
  uint32_t nrows;
  uint32_t heap_used; /* long-string bytes at the end of data */
  bool owned;         /* data was allocated by sl_buffer_init */
  /* A transient buffer whose rows never outlive the buffer they were
   * computed from (the runtime's per-batch key and argument rows): a
   * string copied unchanged from an input column may keep pointing at the
   * input's bytes instead of being copied into this buffer's heap. */
  bool borrow_strings;
  const sl_row_layout *layout;
} sl_buffer;

/* Allocate cap bytes (rounded up to 64) for rows of layout. */
void sl_buffer_init(sl_buffer *b, const sl_row_layout *layout, uint32_t cap);
/* Use caller-owned memory (e.g. a channel slot). */
void sl_buffer_wrap(sl_buffer *b, const sl_row_layout *layout, void *mem,
                    uint32_t cap);
void sl_buffer_free(sl_buffer *b);
static inline void sl_buffer_clear(sl_buffer *b) {
  b->nrows = 0;
  b->heap_used = 0;
}
static inline uint8_t *sl_buffer_row(const sl_buffer *b, uint32_t i) {
  return b->data + (size_t)i * b->layout->width;
}
/* Room for one more row plus extra_heap bytes of long strings? */
static inline bool sl_buffer_has_room(const sl_buffer *b, uint32_t extra_heap) {
  return (size_t)(b->nrows + 1) * b->layout->width + b->heap_used +
             extra_heap <=
         b->cap;
}
/* Append a zeroed row (all fields non-NULL); NULL when the buffer is full. */
uint8_t *sl_buffer_append(sl_buffer *b);
/* Copy bytes into the buffer's string heap; NULL when there is no room
 * (keep at least one row's room: check sl_buffer_has_room first). */
char *sl_buffer_heap_copy(sl_buffer *b, const char *p, uint32_t len);
/* A string whose long bytes are copied into b's heap; false if no room. */
bool sl_buffer_put_str(sl_buffer *b, sl_str *dst, const char *p, uint32_t len);

/* Append a copy of row (of b's layout), its long strings into b's heap;
 * false (b unchanged) when b has no room for it. */
bool sl_buffer_append_copy(sl_buffer *b, const uint8_t *row);

/* A row kept on its own (operator state): the bytes of its long strings
 * (those not inline), and a copy of it into dst with those strings into
 * heap (sl_row_long_bytes of room), returning the heap's end. */
size_t sl_row_long_bytes(const sl_row_layout *l, const uint8_t *row);
char *sl_row_copy_deep(const sl_row_layout *l, const uint8_t *row, uint8_t *dst,
                       char *heap);

/* For a buffer that goes to another process: every long string's pointer
 * becomes its offset from b->data (swizzle), and back (unswizzle, after
 * the bytes arrived, checking that each string lies inside b's heap).
 * Swizzling refuses strings outside b's own heap (borrowed ones: copy them
 * in first).  SL_EINVAL with a message naming the field. */
int sl_buffer_swizzle(sl_buffer *b, sl_error *err);
int sl_buffer_unswizzle(sl_buffer *b, sl_error *err);

/* A 64-bit hash of n bytes (8 at a time; never 0 for the caller's
 * convenience is NOT guaranteed).  Used for group keys, join keys and
 * DISTINCT sets, so equal strings hash alike everywhere. */
uint64_t sl_hash_bytes(const void *p, size_t n);
/* A strong 64-bit finalizer (murmur3's fmix64). */
static inline uint64_t sl_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* 10^0 .. 10^18, for DECIMAL scaling. */
extern const int64_t sl_pow10_i64[19];

/* A field stored as a two's-complement integer of its width (BOOLEAN,
 * TINYINT..BIGINT, DATE, TIME, TIMESTAMP, intervals, DEC64's unscaled
 * value), read as or written from an int64.  Writing narrows. */
static inline int64_t sl_int_load(const uint8_t *p, sl_ptype t) {
  switch (t) {
  case SL_P_BOOL:
  case SL_P_I8:
    return *(const int8_t *)p;
  case SL_P_I16:
    return *(const int16_t *)p;
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    return *(const int32_t *)p;
  default:
    return *(const int64_t *)p;
  }
}

static inline void sl_int_store(uint8_t *p, sl_ptype t, int64_t v) {
  switch (t) {
  case SL_P_BOOL:
    *p = v != 0;
    break;
  case SL_P_I8:
    *(int8_t *)p = (int8_t)v;
    break;
  case SL_P_I16:
    *(int16_t *)p = (int16_t)v;
    break;
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    *(int32_t *)p = (int32_t)v;
    break;
  default:
    *(int64_t *)p = v;
    break;
  }
}

/* Typed field access (no checks: the layout says what is where). */
#define SL_FIELD(row, layout, i, ctype)                                        \
  (*(ctype *)((row) + (layout)->fields[(i)].offset))

#endif
