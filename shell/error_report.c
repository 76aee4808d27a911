/* error_report.c - errors that point at the spot.
 *
 *   Error: bad.sql: line 3, column 17: syntax error near "GROUPP"
 *     SELECT a FROM t GROUPP BY a
 *                     ^^^^^^
 *   Caused by: ...
 *
 * The offending line is taken from the statement text the error refers to
 * (err->offset is relative to it) and echoed with tabs expanded, so the
 * carets line up in any terminal; widths count terminal columns, so text
 * with CJK characters or emoji before the error still lines up.
 */
#include <string.h>

#include "sluice/shell/shell.h"

enum { TAB_STOP = 8, SHOW_BEFORE = 60, SHOW_AFTER = 100 };

/* Bytes in the UTF-8 sequence starting with byte c (1 for invalid bytes). */
static size_t seq_len(unsigned char c) {
  if (c >= 0xF0 && c < 0xF8)
    return 4;
  if (c >= 0xE0)
    return c < 0xF0 ? 3 : 1;
  if (c >= 0xC0)
    return 2;
  return 1;
}

/* Append s[0..n) to out (if out is not NULL) as it is shown: tabs expanded
 * to the next tab stop, other control characters as one space.  *col is
 * the display column, advanced past the text. */
static void show(sl_strbuf *out, const char *s, size_t n, int *col) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\t') {
      int to = (*col / TAB_STOP + 1) * TAB_STOP;
      if (out)
        sl_strbuf_indent(out, to - *col);
      *col = to;
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      if (out)
        sl_strbuf_appendc(out, ' ');
      (*col)++;
      i++;
    } else {
      size_t k = seq_len(c);
      if (k > n - i)
        k = n - i;
      if (out)
        sl_strbuf_appendn(out, s + i, k);
      *col += sl_text_width(s + i, k);
      i += k;
    }
  }
}

/* The byte offset in text of the error, or -1 when it cannot be placed. */
static long locate(const sl_error *err, const char *text, size_t len,
                   int first_line) {
  if (!text)
    return -1;
  if (err->offset >= 0 && (size_t)err->offset <= len)
    return err->offset;
  if (err->line < first_line || err->column < 1)
    return -1;
  /* Fall back to line/column: find the line, then the column (bytes). */
  size_t pos = 0;
  for (int l = first_line; l < err->line; l++) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    if (!nl)
      return -1;
    pos = (size_t)(nl - text) + 1;
  }
  const char *nl = memchr(text + pos, '\n', len - pos);
  size_t end = nl ? (size_t)(nl - text) : len;
  size_t at = pos + (size_t)(err->column - 1);
  return (long)(at < end ? at : end);
}

void sl_error_render(sl_strbuf *out, const char *source, int stmt_line,
                     const sl_error *err, const char *text, size_t len,
                     int first_line) {
  sl_strbuf_append(out, "Error: ");
  if (source)
    sl_strbuf_printf(out, "%s: ", source);
  if (err->line > 0 && err->column > 0)
    sl_strbuf_printf(out, "line %d, column %d: ", err->line, err->column);
  else if (err->line > 0)
    sl_strbuf_printf(out, "line %d: ", err->line);
  else if (stmt_line > 0)
    sl_strbuf_printf(out, "line %d: ", stmt_line);
  const char *msg = err->message;
  if (!msg || !*msg)
    msg = sl_error_kind(err->code);
  sl_strbuf_append(out, msg);
  sl_strbuf_appendc(out, '\n');

  long at = locate(err, text, len, first_line);
  if (at >= 0) {
    size_t off = (size_t)at;
    size_t start = off;
    while (start > 0 && text[start - 1] != '\n')
      start--;
    const char *nl = memchr(text + off, '\n', len - off);
    size_t end = nl ? (size_t)(nl - text) : len;
    /* A long line (a generated IN list or chain) is shown as a window
     * around the error, not megabytes of it. */
    const char *lead = "", *tail = "";
    if (off - start > SHOW_BEFORE) {
      start = off - SHOW_BEFORE;
      while (start < off && ((unsigned char)text[start] & 0xC0) == 0x80)
        start++;
      lead = "...";
    }
    if (end - off > SHOW_AFTER) {
      end = off + SHOW_AFTER;
      while (end > off && ((unsigned char)text[end] & 0xC0) == 0x80)
        end--;
      tail = "...";
    }
    size_t stop = err->length > 0 ? off + (size_t)err->length : off;
    if (stop > end)
      stop = end;

    sl_strbuf_append(out, "  ");
    int col = 0;
    show(out, lead, strlen(lead), &col);
    show(out, text + start, end - start, &col);
    show(out, tail, strlen(tail), &col);
    sl_strbuf_appendc(out, '\n');

    int before = (int)strlen(lead), span = 0;
    show(NULL, text + start, off - start, &before);
    span = before;
    show(NULL, text + off, stop - off, &span);
    span -= before;
    sl_strbuf_indent(out, 2 + before);
    for (int i = 0; i < (span > 0 ? span : 1); i++)
      sl_strbuf_appendc(out, '^');
    sl_strbuf_appendc(out, '\n');
  }
  if (err->cause && *err->cause)
    sl_strbuf_printf(out, "Caused by: %s\n", err->cause);
}
