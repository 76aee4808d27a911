/* csv_scan.c - the CSV record scanner of the filesystem source
 * (source_filesystem.c): one record's field spans found in place (RFC
 * 4180), the first record start at or after an offset (a worker's range),
 * and the UTF-8 check of a field.  Apart from the source because this is
 * the byte-level hot loop (8 bytes at a time) and knows nothing of files,
 * mappings, workers or rows. */
#include <stdint.h>
#include <string.h>

#include "csv_int.h"

/* Keep only the first problem: it is the one a user fixes first. */
static void note_bad(scan_result *res, scan_error *bad, size_t offset, int col,
                     const char *why) {
  if (*res != SCAN_OK)
    return;
  *res = SCAN_BAD;
  bad->offset = offset;
  bad->col = col;
  bad->why = why;
}

/* The quoted field whose opening quote is at data[i]: fill sp and return
 * the offset just past its closing quote.  When no quote closes it, the
 * file holds no quote past its last "" pair, so resuming at the line break
 * after the opening quote is safe (every worker's scanner does the same):
 * the records after it are read, or skipped, on their own instead of
 * vanishing into one bad field. */
static size_t scan_quoted(const csv_format *f, const char *data, size_t size,
                          size_t i, csv_span *sp, bool *unterminated) {
  sp->quoted = true;
  size_t start = ++i;
  *unterminated = false;
  for (;;) {
    const char *q = memchr(data + i, f->quote, size - i);
    if (!q) {
      *unterminated = true;
      const char *nl = memchr(data + start, '\n', size - start);
      i = nl ? (size_t)(nl - data) : size;
      sp->p = data + start;
      sp->len = i - start;
      return i;
    }
    i = (size_t)(q - data);
    if (i + 1 < size && data[i + 1] == (char)f->quote) {
      sp->escaped = true;
      i += 2;
      continue;
    }
    break;
  }
  sp->p = data + start;
  sp->len = i - start;
  return i + 1; /* past the closing quote */
}

#define BYTES_01 UINT64_C(0x0101010101010101)
#define BYTES_7F UINT64_C(0x7F7F7F7F7F7F7F7F)

/* The 8 bytes at p, in memory order from the least significant byte:
 * one unaligned load on x86-64 and arm64. */
static inline uint64_t load8(const char *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

/* The high bit of every byte of w that equals the byte of b (b = c *
 * BYTES_01) set, all other bits clear; exact for every byte (no borrow
 * from one byte into the next). */
static inline uint64_t bytes_equal(uint64_t w, uint64_t b) {
  uint64_t x = w ^ b;
  return ~(((x & BYTES_7F) + BYTES_7F) | x | BYTES_7F);
}

/* The end of the unquoted field at data[i] (its delimiter, line break or
 * the end of the file), and in *stray whether it holds a quote: RFC 4180
 * wants such a field quoted (and the quote doubled), so a stray one is
 * most likely a broken quoted field.  This loop sees nearly every byte of
 * the file, so it looks for the three bytes 8 at a time; the byte loop
 * finishes the field (a stray quote, the last 7 bytes of the file). */
static size_t scan_unquoted(const csv_format *f, const char *data, size_t size,
                            size_t i, bool *stray) {
  const char delim = f->delim;
  const int quote = f->quote;
  const uint64_t d8 = BYTES_01 * (unsigned char)delim, n8 = BYTES_01 * '\n',
                 q8 = quote >= 0 ? BYTES_01 * (unsigned)quote : d8;
  while (i + 8 <= size) {
    uint64_t w = load8(data + i);
    uint64_t m = bytes_equal(w, d8) | bytes_equal(w, n8) | bytes_equal(w, q8);
    if (m) {
      i += (size_t)__builtin_ctzll(m) / 8;
      break;
    }
    i += 8;
  }
  bool q = false;
  for (; i < size; i++) {
    char c = data[i];
    if (c == delim || c == '\n')
      break;
    q |= (unsigned char)c == quote;
  }
  *stray = q;
  return i;
}

/* Scan the record at *pos: fill up to max spans (spans may be NULL to only
 * skip), count the fields in *nfields, and move *pos past the record's
 * line break.  The scanner never stops early, even on a malformed record,
 * so the next record is always found. */
scan_result sl_csv_scan_record(const csv_format *f, const char *data,
                               size_t size, size_t *pos, csv_span *spans,
                               int max, int *nfields, scan_error *bad) {
  size_t i = *pos;
  scan_result res = SCAN_OK;
  *nfields = 0;
  if (i < size && (data[i] == '\n' ||
                   (data[i] == '\r' && i + 1 < size && data[i + 1] == '\n') ||
                   (f->allow_comments && data[i] == '#'))) {
    const char *nl = memchr(data + i, '\n', size - i);
    *pos = nl ? (size_t)(nl - data) + 1 : size;
    return SCAN_SKIP;
  }
  for (;;) {
    int col = (*nfields)++;
    csv_span sp = {data + i, 0, i, false, false};
    if (f->quote >= 0 && i < size && data[i] == (char)f->quote) {
      bool open;
      i = scan_quoted(f, data, size, i, &sp, &open);
      if (open)
        note_bad(&res, bad, sp.offset, col,
                 "unterminated quoted field (a quote opens it, none closes "
                 "it)");
      else if (i < size && data[i] != f->delim && data[i] != '\n' &&
               !(data[i] == '\r' && (i + 1 == size || data[i + 1] == '\n'))) {
        note_bad(&res, bad, sp.offset, col,
                 "characters after the closing quote of a quoted field");
        while (i < size && data[i] != f->delim && data[i] != '\n')
          i++;
      }
    } else {
      size_t start = i;
      bool stray;
      i = scan_unquoted(f, data, size, i, &stray);
      if (stray)
        note_bad(&res, bad, sp.offset, col,
                 "a quote inside an unquoted field (quote the whole field "
                 "and double the quote)");
      size_t e = i;
      if (e > start && data[e - 1] == '\r' && (e == size || data[e] == '\n'))
        e--; /* CRLF */
      sp.len = e - start;
    }
    if (spans && col < max)
      spans[col] = sp;
    if (i < size && data[i] == f->delim) {
      i++;
      continue;
    }
    if (i < size && data[i] == '\r')
      i++;
    if (i < size && data[i] == '\n')
      i++;
    break;
  }
  *pos = i;
  return res;
}

/* The first record start at or after x (see the comment at the top of
 * source_filesystem.c). */
size_t sl_csv_record_start(const csv_format *f, const char *data, size_t size,
                           size_t x) {
  if (x == 0)
    return 0;
  if (x >= size)
    return size;
  size_t pos = 0;
  if (f->quote < 0 || !memchr(data, f->quote, x)) {
    /* No quote before x: the line break before x ends a record. */
    const char *nl = memrchr(data, '\n', x);
    pos = nl ? (size_t)(nl - data) + 1 : 0;
  }
  while (pos < x) {
    int n;
    scan_error bad;
    sl_csv_scan_record(f, data, size, &pos, NULL, 0, &n, &bad);
  }
  return pos;
}

/* The length of the UTF-8 sequence at p (p[0] >= 0x80, n bytes left), or
 * 0 when it is not valid (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), as PostgreSQL and DuckDB check. */
static size_t utf8_sequence(const unsigned char *p, size_t n) {
  unsigned c = p[0], lo = 0x80, hi = 0xBF; /* the second byte's range */
  size_t k;
  if (c >= 0xC2 && c <= 0xDF) {
    k = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    k = 3;
    lo = c == 0xE0 ? 0xA0 : lo; /* overlong */
    hi = c == 0xED ? 0x9F : hi; /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    k = 4;
    lo = c == 0xF0 ? 0x90 : lo; /* overlong */
    hi = c == 0xF4 ? 0x8F : hi; /* above U+10FFFF */
  } else {
    return 0;
  }
  if (n < k || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t j = 2; j < k; j++)
    if ((p[j] & 0xC0) != 0x80)
      return 0;
  return k;
}

/* No byte of the 8 at p is >= 0x80. */
static inline bool ascii8(const unsigned char *p) {
  return (load8((const char *)p) & ~BYTES_7F) == 0;
}

/* The index of the first byte of text that is not valid UTF-8, or len.
 * ASCII is skipped a word at a time, so the common all-ASCII field costs
 * one load and one test per 8 bytes; only bytes >= 0x80 are decoded. */
size_t sl_csv_utf8_invalid_at(const char *text, size_t len) {
  const unsigned char *p = (const unsigned char *)text;
  size_t i = 0;
  for (;;) {
    while (i + 8 <= len && ascii8(p + i))
      i += 8;
    while (i < len && p[i] < 0x80)
      i++;
    if (i == len)
      return len;
    size_t k = utf8_sequence(p + i, len - i);
    if (k == 0)
      return i;
    i += k;
  }
}
