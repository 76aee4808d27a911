/* strbuf.c - growable heap string. */
#include "sluice/common/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(sl_strbuf *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    fprintf(stderr, "sluice: out of memory (string of %zu bytes)\n", cap);
    abort();
  }
  b->data = p;
  b->cap = cap;
}

void sl_strbuf_appendn(sl_strbuf *b, const char *s, size_t n) {
  reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void sl_strbuf_append(sl_strbuf *b, const char *s) {
  sl_strbuf_appendn(b, s, strlen(s));
}

void sl_strbuf_appendc(sl_strbuf *b, char c) {
  sl_strbuf_appendn(b, &c, 1);
}

void sl_strbuf_vprintf(sl_strbuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0) {
    reserve(b, 0);
    b->data[b->len] = '\0';
    return;
  }
  reserve(b, (size_t)n);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void sl_strbuf_printf(sl_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sl_strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void sl_strbuf_indent(sl_strbuf *b, int n) {
  if (n <= 0)
    return;
  reserve(b, (size_t)n);
  memset(b->data + b->len, ' ', (size_t)n);
  b->len += (size_t)n;
  b->data[b->len] = '\0';
}

const char *sl_strbuf_cstr(const sl_strbuf *b) {
  return b->data ? b->data : "";
}

char *sl_strbuf_detach(sl_strbuf *b) {
  char *p = b->data;
  if (!p) {
    p = malloc(1);
    if (!p)
      abort();
    p[0] = '\0';
  }
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}

void sl_strbuf_reset(sl_strbuf *b) {
  b->len = 0;
  if (b->data)
    b->data[0] = '\0';
}

void sl_strbuf_free(sl_strbuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

/* A byte count for people: "1.5 MiB" (sizes in error messages). */
const char *sl_bytes_text(uint64_t bytes, char *buf, size_t n) {
  if (bytes >= (1ull << 30))
    snprintf(buf, n, "%.1f GiB", (double)bytes / (1ull << 30));
  else if (bytes >= (1ull << 20))
    snprintf(buf, n, "%.1f MiB", (double)bytes / (1ull << 20));
  else if (bytes >= (1ull << 10))
    snprintf(buf, n, "%.1f KiB", (double)bytes / (1ull << 10));
  else
    snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
  return buf;
}
