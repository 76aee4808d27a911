/* output.c - the result sink behind every output mode.
 *
 * The session reports a result set as begin, row*, flush*, end.  Streaming
 * modes (csv, json, line) print each row as it arrives; boxed modes (table,
 * box, markdown) need every row of a group to size their columns, so they
 * buffer rows and print at flush (a fired window) and at end.  Every write
 * goes through sl_out_write, which remembers the first write error so a
 * full disk or a closed pipe becomes an error message, not silent loss.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sluice/shell/shell.h"

static const char *const mode_names[] = {
    [SL_MODE_TABLE] = "table", [SL_MODE_BOX] = "box",
    [SL_MODE_CSV] = "csv",     [SL_MODE_JSON] = "json",
    [SL_MODE_LINE] = "line",   [SL_MODE_MARKDOWN] = "markdown",
};

bool sl_output_mode_parse(const char *name, sl_output_mode *mode) {
  for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
    if (strcasecmp(name, mode_names[i]) == 0) {
      *mode = (sl_output_mode)i;
      return true;
    }
  }
  return false;
}

const char *sl_output_mode_name(sl_output_mode mode) {
  return mode_names[mode];
}

const char *sl_output_mode_names(void) {
  return "table, box, csv, json, line, markdown";
}

/* ---- Writing ---- */

void sl_out_write(sl_output *o, const char *s, size_t n) {
  if (n == 0 || o->write_errno)
    return;
  if (fwrite(s, 1, n, o->fp) != n)
    o->write_errno = errno ? errno : EIO;
  for (const char *p = memchr(s, '\n', n); p;
       p = memchr(p + 1, '\n', n - (size_t)(p + 1 - s)))
    o->lines++;
}

void sl_out_puts(sl_output *o, const char *s) {
  sl_out_write(o, s, strlen(s));
}

void sl_out_putc(sl_output *o, char c) {
  sl_out_write(o, &c, 1);
}

void sl_out_cell(sl_output *o, const char *s) {
  for (const char *nul; (nul = strstr(s, SL_CELL_NUL)) != NULL;
       s = nul + strlen(SL_CELL_NUL)) {
    sl_out_write(o, s, (size_t)(nul - s));
    sl_out_putc(o, '\0');
  }
  sl_out_puts(o, s);
}

void sl_out_spaces(sl_output *o, int n) {
  static const char blanks[] = "                                ";
  while (n > 0) {
    int k = n < 32 ? n : 32;
    sl_out_write(o, blanks, (size_t)k);
    n -= k;
  }
}

/* ---- Display width ---- */

/* Decode one UTF-8 sequence at s (n bytes available).  Returns its length
 * and the code point in *cp, or 1 and -1 for an invalid byte. */
static size_t utf8_decode(const unsigned char *s, size_t n, int32_t *cp) {
  unsigned char c = s[0];
  size_t len;
  int32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, v = c & 0x07;
  } else {
    *cp = -1;
    return 1;
  }
  if (len > n) {
    *cp = -1;
    return 1;
  }
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) {
      *cp = -1;
      return 1;
    }
    v = (v << 6) | (s[i] & 0x3F);
  }
  *cp = v;
  return len;
}

typedef struct range {
  int32_t lo, hi;
} range;

/* Combining marks and other zero-width code points (the common blocks). */
static const range zero_width[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489},   {0x0591, 0x05BD}, {0x0610, 0x061A},
    {0x064B, 0x065F}, {0x0E31, 0x0E31},   {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},
    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},   {0x200B, 0x200F}, {0x202A, 0x202E},
    {0x2060, 0x2064}, {0x20D0, 0x20FF},   {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

/* East Asian wide and fullwidth characters, and emoji. */
static const range wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},
    {0x23E9, 0x23EC},   {0x23F0, 0x23F0},   {0x23F3, 0x23F3},
    {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},
    {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},
    {0x26F2, 0x26F3},   {0x26F5, 0x26F5},   {0x26FA, 0x26FA},
    {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},
    {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},
    {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F004, 0x1F004},
    {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
    {0x1F200, 0x1F251}, {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF},
    {0x1F7E0, 0x1F7EB}, {0x1F900, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x3FFFD},
};

static bool in_ranges(int32_t cp, const range *r, size_t n) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < r[mid].lo)
      hi = mid;
    else if (cp > r[mid].hi)
      lo = mid + 1;
    else
      return true;
  }
  return false;
}

static int codepoint_width(int32_t cp) {
  if (cp < 0)
    return 1; /* an invalid byte is shown as one replacement character */
  if (in_ranges(cp, zero_width, sizeof zero_width / sizeof zero_width[0]))
    return 0;
  if (in_ranges(cp, wide, sizeof wide / sizeof wide[0]))
    return 2;
  return 1;
}

int sl_text_width(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  int width = 0;
  size_t i = 0;
  while (i < n) {
    int32_t cp;
    i += utf8_decode(p + i, n - i, &cp);
    width += codepoint_width(cp);
  }
  return width;
}

/* ---- The sink ---- */

static void clear_rows(sl_output *o) {
  for (size_t i = 0; i < o->nrows * (size_t)o->ncols; i++)
    free(o->cells[i]);
  o->nrows = 0;
  o->buffered_bytes = 0;
}

/* A boxed mode prints its buffered rows at a flush (a fired window) and at
 * the end; a result that flushes seldom or never (rows of an unbounded
 * query without windows) is printed in groups of this many rows or bytes
 * instead, so that the shell's memory stays bounded.  The table stays open
 * across groups while the rows fit its column widths. */
#define GROUP_ROWS 4096
#define GROUP_BYTES ((size_t)8 << 20)

static void clear_result(sl_output *o) {
  clear_rows(o);
  for (int i = 0; i < o->ncols; i++)
    free(o->names[i]);
  free(o->names);
  free(o->numeric);
  free(o->boolean);
  free(o->cells);
  o->names = NULL;
  o->numeric = o->boolean = NULL;
  o->cells = NULL;
  o->ncols = 0;
  o->cap = 0;
  o->nprinted = 0;
  o->stop_by = 0;
  o->not_shown = 0;
  o->in_result = false;
  free(o->open_widths); /* normally closed by the final print already */
  o->open_widths = NULL;
}

static char *dup_or_null(const char *s) {
  if (!s)
    return NULL;
  char *p = strdup(s);
  if (!p)
    abort(); /* as the arena: out of memory is not recoverable here */
  return p;
}

static bool buffers_rows(sl_output_mode mode) {
  return mode == SL_MODE_TABLE || mode == SL_MODE_BOX ||
         mode == SL_MODE_MARKDOWN;
}

static int status(const sl_output *o) {
  return o->write_errno ? SL_EIO : SL_OK;
}

static int on_begin(void *ctx, int ncols, const char *const *names,
                    const sl_type *const *types) {
  sl_output *o = ctx;
  if (o->in_result) /* the previous result set never ended: show it */
    sl_output_abort(o);
  clear_result(o);
  o->in_result = true;
  o->result_first_line = o->lines;
  o->ncols = ncols < 0 ? 0 : ncols;
  size_t n = (size_t)o->ncols;
  o->names = calloc(n ? n : 1, sizeof *o->names);
  o->numeric = calloc(n ? n : 1, sizeof *o->numeric);
  o->boolean = calloc(n ? n : 1, sizeof *o->boolean);
  if (!o->names || !o->numeric || !o->boolean)
    abort();
  for (size_t i = 0; i < n; i++) {
    o->names[i] = dup_or_null(names && names[i] ? names[i] : "");
    const sl_type *t = types ? types[i] : NULL;
    o->numeric[i] = t && sl_type_is_numeric(t);
    o->boolean[i] = t && t->kind == SL_TYPE_BOOLEAN;
  }
  if (o->mode == SL_MODE_CSV && o->headers && n > 0)
    sl_out_csv_row(o, (const char *const *)o->names);
  return status(o);
}

static void clear_progress(sl_output *o);

static void print_buffered(sl_output *o, bool final);

static int on_row(void *ctx, const char *const *cells) {
  sl_output *o = ctx;
  if (!o->in_result || o->ncols == 0)
    return status(o);
  clear_progress(o); /* streaming modes print the row now */
  switch (o->mode) {
  case SL_MODE_CSV:
    sl_out_csv_row(o, cells);
    break;
  case SL_MODE_JSON:
    sl_out_json_row(o, cells);
    break;
  case SL_MODE_LINE:
    sl_out_line_row(o, cells);
    break;
  case SL_MODE_TABLE:
  case SL_MODE_BOX:
  case SL_MODE_MARKDOWN:
    if (o->nrows == o->cap) {
      o->cap = o->cap ? o->cap * 2 : 16;
      o->cells = realloc(o->cells, o->cap * (size_t)o->ncols * sizeof(char *));
      if (!o->cells)
        abort();
    }
    for (int i = 0; i < o->ncols; i++) {
      o->cells[o->nrows * (size_t)o->ncols + (size_t)i] = dup_or_null(cells[i]);
      o->buffered_bytes += cells[i] ? strlen(cells[i]) + 1 : 0;
    }
    o->nrows++;
    if (o->nrows >= GROUP_ROWS || o->buffered_bytes >= GROUP_BYTES)
      print_buffered(o, false);
    return status(o);
  }
  o->nprinted++;
  return status(o);
}

/* Print the buffered rows (boxed modes); final: the result set is over. */
static void print_buffered(sl_output *o, bool final) {
  size_t printed = o->nrows;
  if (buffers_rows(o->mode) && o->ncols > 0)
    printed = sl_out_print_boxed(o, final);
  o->nprinted += printed;
  clear_rows(o);
}

static int on_flush(void *ctx) {
  sl_output *o = ctx;
  if (o->nrows > 0)
    clear_progress(o);
  if (!o->in_result)
    return status(o);
  if (o->nrows > 0)
    print_buffered(o, false);
  if (!o->write_errno && fflush(o->fp) != 0)
    o->write_errno = errno ? errno : EIO;
  return status(o);
}

static int on_end(void *ctx) {
  sl_output *o = ctx;
  clear_progress(o);
  if (!o->in_result)
    return status(o);
  print_buffered(o, true);
  if (o->mode == SL_MODE_JSON && o->ncols > 0)
    sl_out_json_end(o);
  clear_result(o);
  o->result_last_line = o->lines;
  if (!o->write_errno && fflush(o->fp) != 0)
    o->write_errno = errno ? errno : EIO;
  return status(o);
}

static int on_text(void *ctx, const char *text) {
  sl_output *o = ctx;
  size_t n = strlen(text);
  sl_out_write(o, text, n);
  if (n > 0 && text[n - 1] != '\n')
    sl_out_putc(o, '\n');
  return status(o);
}

/* Notices go to stderr; results printed so far go out first so that the
 * two streams interleave in the order things happened. */
/* Erase the progress line before anything else is printed. */
static void clear_progress(sl_output *o) {
  if (!o->progress_shown || !o->notices)
    return;
  fputs("\r\033[K", o->notices);
  fflush(o->notices);
  o->progress_shown = false;
}

/* The progress line: only on a terminal, redrawn in place on stderr, so it
 * never mixes into results or into output that is not a terminal. */
static int on_progress(void *ctx, const char *line) {
  sl_output *o = ctx;
  /* The runtime reports progress a few times a second while a query runs:
   * rows printed to a pipe or file go out then, rather than waiting in
   * stdio's buffer (a query without windows never flushes otherwise). */
  if (o->in_result && !o->write_errno && fflush(o->fp) != 0)
    o->write_errno = errno ? errno : EIO;
  if (!o->notices || !isatty(fileno(o->notices)))
    return SL_OK;
  if (!line) {
    clear_progress(o);
    return SL_OK;
  }
  fputs("\r\033[K", o->notices);
  /* Cut to the terminal's width: a line that wraps leaves its first part
   * behind at every redraw (the erase reaches back one line only). */
  size_t n = strlen(line);
  struct winsize ws;
  if (ioctl(fileno(o->notices), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
      n >= ws.ws_col)
    n = ws.ws_col - 1u; /* the line is ASCII (executor.c) */
  fwrite(line, 1, n, o->notices);
  fflush(o->notices);
  o->progress_shown = true;
  return SL_OK;
}

static int on_notice(void *ctx, const char *text) {
  sl_output *o = ctx;
  if (!o->notices)
    return SL_OK;
  clear_progress(o);
  if (!o->write_errno && fflush(o->fp) != 0)
    o->write_errno = errno ? errno : EIO;
  size_t n = strlen(text);
  fputs(text, o->notices);
  if (n == 0 || text[n - 1] != '\n')
    fputc('\n', o->notices);
  fflush(o->notices);
  return status(o);
}

/* Redraw an updating result's table over the last one: only on a
 * terminal, when nothing was printed after it and it still fits on the
 * screen (cursor up over it, erase to the end of the screen). */
static int on_replace(void *ctx, bool erase) {
  sl_output *o = ctx;
  if (!isatty(fileno(o->fp)))
    return SL_EUNSUPPORTED;
  if (!erase || o->result_last_line != o->lines)
    return SL_OK; /* nothing to erase: print below */
  uint64_t n = o->result_last_line - o->result_first_line;
  struct winsize ws;
  if (n == 0 || ioctl(fileno(o->fp), TIOCGWINSZ, &ws) != 0 || n >= ws.ws_row)
    return SL_OK; /* cannot reach its top: print below */
  clear_progress(o);
  char esc[32];
  snprintf(esc, sizeof esc, "\r\033[%lluA\033[J", (unsigned long long)n);
  if (!o->write_errno && fputs(esc, o->fp) == EOF)
    o->write_errno = errno ? errno : EIO;
  o->lines -= n;
  return status(o);
}

void sl_output_abort(sl_output *o) {
  if (o->in_result)
    on_end(o);
}

void sl_output_init(sl_output *o, FILE *fp, sl_output_mode mode, bool headers) {
  memset(o, 0, sizeof *o);
  o->fp = fp;
  o->mode = mode;
  o->headers = headers;
}

void sl_output_free(sl_output *o) {
  clear_result(o);
}

sl_result_sink sl_output_sink(sl_output *o) {
  sl_result_sink s = {o,       on_begin,  on_row,      on_flush,  on_end,
                      on_text, on_notice, on_progress, on_replace};
  return s;
}
