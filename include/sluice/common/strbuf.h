/* strbuf.h - a growable string, for building messages, EXPLAIN text and
 * output rows.  Owns its heap buffer; release with sl_strbuf_free(). */
#ifndef SLUICE_STRBUF_H
#define SLUICE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl_strbuf {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len;
  size_t cap;
} sl_strbuf;

#define SL_STRBUF_INIT                                                         \
  { NULL, 0, 0 }

void sl_strbuf_append(sl_strbuf *b, const char *s);
void sl_strbuf_appendn(sl_strbuf *b, const char *s, size_t n);
void sl_strbuf_appendc(sl_strbuf *b, char c);
void sl_strbuf_printf(sl_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sl_strbuf_vprintf(sl_strbuf *b, const char *fmt, va_list ap);
/* Append n spaces (indentation). */
void sl_strbuf_indent(sl_strbuf *b, int n);
/* "" if nothing was appended yet; never NULL. */
const char *sl_strbuf_cstr(const sl_strbuf *b);
/* Hand the buffer to the caller (who frees it); b becomes empty. */
char *sl_strbuf_detach(sl_strbuf *b);
void sl_strbuf_reset(sl_strbuf *b);
void sl_strbuf_free(sl_strbuf *b);

/* `bytes` as people read it ("12.0 MiB", "512 bytes") in buf. */
const char *sl_bytes_text(uint64_t bytes, char *buf, size_t n);

#endif
