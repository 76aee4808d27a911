/* output_table.c - the boxed output modes: table (ASCII), box (Unicode box
 * drawing) and markdown (GitHub pipe tables).
 *
 * All three print a group of buffered rows at once, sized to the widest
 * cell of each column (in terminal columns, so CJK text and emoji line up).
 * Numbers are right-aligned, everything else left-aligned, headers
 * centered.  Control characters inside a cell would break the grid, so
 * they are shown escaped (\n, \t, \r, \xNN; a NUL character \x00, as
 * DuckDB shows one escaped); NULL is shown as NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/common/clock.h"
#include "sluice/shell/shell.h"

/* The pieces of a frame: left edge, fill, junction, right edge for the top,
 * the header separator and the bottom lines, and the vertical bar. */
typedef struct frame {
  const char *top[3], *mid[3], *bottom[3]; /* left, junction, right */
  const char *fill;
  const char *bar;
  bool has_top, has_bottom;
} frame;

static const frame ascii_frame = {
    {"+", "+", "+"}, {"+", "+", "+"}, {"+", "+", "+"}, "-", "|", true, true};
static const frame box_frame = {
    {"┌", "┬", "┐"}, {"├", "┼", "┤"}, {"└", "┴", "┘"}, "─", "│", true, true};
static const frame markdown_frame = {
    {"", "", ""}, {"|", "|", "|"}, {"", "", ""}, "-", "|", false, false};

/* The cell as shown: control characters escaped, '|' escaped in markdown. */
static void render_cell(sl_strbuf *b, const char *cell, bool markdown) {
  sl_strbuf_reset(b);
  if (!cell) {
    sl_strbuf_append(b, "NULL");
    return;
  }
  for (const char *p = cell; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '\n')
      sl_strbuf_append(b, "\\n");
    else if (c == '\r')
      sl_strbuf_append(b, "\\r");
    else if (c == '\t')
      sl_strbuf_append(b, "\\t");
    else if (c == (unsigned char)SL_CELL_NUL[0] && p[1] == SL_CELL_NUL[1] &&
             ++p)
      sl_strbuf_append(b, "\\x00"); /* a NUL character (session.h) */
    else if (c < 0x20 || c == 0x7F)
      sl_strbuf_printf(b, "\\x%02X", c);
    else if (c == '|' && markdown)
      sl_strbuf_append(b, "\\|");
    else
      sl_strbuf_appendc(b, (char)c);
  }
  if (!b->data)
    sl_strbuf_append(b, ""); /* an empty cell still needs a string */
}

/* A horizontal rule: left, then per column fill * (width + 2), junctions
 * between columns, right. */
static void rule(sl_output *o, const frame *f, const char *const parts[3],
                 const int *widths) {
  sl_out_puts(o, parts[0]);
  for (int i = 0; i < o->ncols; i++) {
    if (i > 0)
      sl_out_puts(o, parts[1]);
    for (int k = 0; k < widths[i] + 2; k++)
      sl_out_puts(o, f->fill);
  }
  sl_out_puts(o, parts[2]);
  sl_out_putc(o, '\n');
}

/* Markdown's separator row marks numeric columns right-aligned (---:). */
static void markdown_rule(sl_output *o, const int *widths) {
  sl_out_putc(o, '|');
  for (int i = 0; i < o->ncols; i++) {
    for (int k = 0; k < widths[i] + 1; k++)
      sl_out_putc(o, '-');
    sl_out_putc(o, o->numeric[i] ? ':' : '-');
    sl_out_putc(o, '|');
  }
  sl_out_putc(o, '\n');
}

typedef enum align { ALIGN_LEFT, ALIGN_RIGHT, ALIGN_CENTER } align;

static void padded(sl_output *o, const char *s, int width, align a) {
  int pad = width - sl_text_width(s, strlen(s));
  if (pad < 0)
    pad = 0;
  int left = a == ALIGN_RIGHT ? pad : a == ALIGN_CENTER ? pad / 2 : 0;
  sl_out_spaces(o, left);
  sl_out_puts(o, s);
  sl_out_spaces(o, pad - left);
}

static void header_row(sl_output *o, const frame *f, const int *widths,
                       sl_strbuf *b, bool markdown) {
  for (int i = 0; i < o->ncols; i++) {
    sl_out_puts(o, f->bar);
    sl_out_putc(o, ' ');
    render_cell(b, o->names[i], markdown);
    padded(o, b->data, widths[i], ALIGN_CENTER);
    sl_out_putc(o, ' ');
  }
  sl_out_puts(o, f->bar);
  sl_out_putc(o, '\n');
}

static void data_row(sl_output *o, const frame *f, const int *widths,
                     char *const *cells, sl_strbuf *b, bool markdown) {
  for (int i = 0; i < o->ncols; i++) {
    sl_out_puts(o, f->bar);
    sl_out_putc(o, ' ');
    render_cell(b, cells[i], markdown);
    padded(o, b->data, widths[i], o->numeric[i] ? ALIGN_RIGHT : ALIGN_LEFT);
    sl_out_putc(o, ' ');
  }
  sl_out_puts(o, f->bar);
  sl_out_putc(o, '\n');
}

/* Whether to leave out the rest of the rows: the statement was stopped
 * (Ctrl-C, .timeout) at least 200 ms ago.  Rows keep going out until then,
 * so a terminal shows every row produced; a slow reader (a pipe) is not
 * waited for, and the prompt comes back at once. */
static bool stop_printing(sl_output *o) {
  if (!sl_cancel_pending(o->stop))
    return false;
  double now = sl_clock_seconds();
  if (o->stop_by == 0)
    o->stop_by = now + 0.2;
  return now >= o->stop_by;
}

/* The last table of a result set: its bottom rule, and how many rows were
 * left out. */
static void close_table(sl_output *o, const frame *f, const int *widths) {
  if (f->has_bottom)
    rule(o, f, f->bottom, widths);
  if (o->not_shown > 0) {
    char note[96];
    snprintf(note, sizeof note,
             "(%zu more row%s not shown: the statement was stopped)\n",
             o->not_shown, o->not_shown == 1 ? "" : "s");
    sl_out_puts(o, note);
  }
}

size_t sl_out_print_boxed(sl_output *o, bool final) {
  bool markdown = o->mode == SL_MODE_MARKDOWN;
  const frame *f = o->mode == SL_MODE_BOX ? &box_frame
                   : markdown             ? &markdown_frame
                                          : &ascii_frame;
  /* A result with no rows still shows its columns, once. */
  if (o->nrows == 0 && !(final && o->nprinted == 0 && o->headers)) {
    if (final && o->open_widths) {
      close_table(o, f, o->open_widths);
      free(o->open_widths);
      o->open_widths = NULL;
    }
    return 0;
  }
  sl_strbuf b = SL_STRBUF_INIT;
  int *widths = calloc((size_t)o->ncols, sizeof *widths);
  if (!widths)
    abort();
  for (int i = 0; i < o->ncols; i++) {
    widths[i] = 1;
    if (o->headers) {
      render_cell(&b, o->names[i], markdown);
      int w = sl_text_width(b.data, b.len);
      if (w > widths[i])
        widths[i] = w;
    }
    for (size_t r = 0; r < o->nrows; r++) {
      render_cell(&b, o->cells[r * (size_t)o->ncols + (size_t)i], markdown);
      int w = sl_text_width(b.data, b.len);
      if (w > widths[i])
        widths[i] = w;
    }
  }

  /* Rows that fit the open table continue it; otherwise it is closed and a
   * new one starts. */
  bool fits = o->open_widths != NULL;
  for (int i = 0; fits && i < o->ncols; i++)
    fits = widths[i] <= o->open_widths[i];
  if (fits) {
    free(widths);
    widths = o->open_widths;
  } else {
    if (o->open_widths) {
      if (f->has_bottom)
        rule(o, f, f->bottom, o->open_widths);
      free(o->open_widths);
    }
    o->open_widths = NULL;
    if (f->has_top)
      rule(o, f, f->top, widths);
    if (o->headers) {
      header_row(o, f, widths, &b, markdown);
      if (markdown)
        markdown_rule(o, widths);
      else if (o->nrows > 0) /* no rows: the bottom rule closes the header */
        rule(o, f, f->mid, widths);
    }
  }
  size_t r = 0;
  for (; r < o->nrows && !stop_printing(o); r++)
    data_row(o, f, widths, o->cells + r * (size_t)o->ncols, &b, markdown);
  o->not_shown += o->nrows - r;
  if (final) {
    close_table(o, f, widths);
    free(widths);
    o->open_widths = NULL;
  } else {
    o->open_widths = widths;
  }
  sl_strbuf_free(&b);
  return r;
}
