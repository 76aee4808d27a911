/* output_text.c - the streaming output modes: csv, json and line.
 *
 * Each prints a row as soon as it arrives, so an unbounded streaming query
 * shows results while it runs.
 *   csv   RFC 4180: a field holding , " CR or LF is quoted, quotes doubled;
 *         NULL is an empty field and the empty string is "" (so the two
 *         stay distinguishable).
 *   json  one array of objects per result set, one object per line (as
 *         sqlite3 and duckdb print it); numbers and booleans unquoted, NULL
 *         as null.
 *   line  `column = value`, names right-aligned, a blank line between rows.
 * A NUL character inside a value (SL_CELL_NUL in the cell) is written as
 * the NUL byte in csv and line, which write a value's bytes as they are
 * (so a CSV of the output reads back the same value), and as \u0000 in
 * json, which spells every control character so.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sluice/shell/shell.h"

/* ---- csv ---- */

static void csv_field(sl_output *o, const char *s) {
  if (!s)
    return;
  if (*s != '\0' && strpbrk(s, ",\"\r\n") == NULL) {
    sl_out_cell(o, s);
    return;
  }
  sl_out_putc(o, '"');
  for (const char *p = s; *p; p++) {
    if (*p == '"')
      sl_out_putc(o, '"');
    if (strncmp(p, SL_CELL_NUL, 2) == 0)
      sl_out_putc(o, *++p == SL_CELL_NUL[1] ? '\0' : *p);
    else
      sl_out_putc(o, *p);
  }
  sl_out_putc(o, '"');
}

void sl_out_csv_row(sl_output *o, const char *const *cells) {
  for (int i = 0; i < o->ncols; i++) {
    if (i > 0)
      sl_out_putc(o, ',');
    csv_field(o, cells[i]);
  }
  sl_out_putc(o, '\n');
}

/* ---- json ---- */

static void json_string(sl_output *o, const char *s) {
  sl_out_putc(o, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char buf[8];
    switch (*p) {
    case '"':
      sl_out_puts(o, "\\\"");
      break;
    case '\\':
      sl_out_puts(o, "\\\\");
      break;
    case '\n':
      sl_out_puts(o, "\\n");
      break;
    case '\r':
      sl_out_puts(o, "\\r");
      break;
    case '\t':
      sl_out_puts(o, "\\t");
      break;
    case '\b':
      sl_out_puts(o, "\\b");
      break;
    case '\f':
      sl_out_puts(o, "\\f");
      break;
    default:
      if (p[0] == (unsigned char)SL_CELL_NUL[0] &&
          p[1] == (unsigned char)SL_CELL_NUL[1]) {
        sl_out_puts(o, "\\u0000");
        p++;
      } else if (*p < 0x20 || *p == 0x7F) {
        snprintf(buf, sizeof buf, "\\u%04x", *p);
        sl_out_puts(o, buf);
      } else {
        sl_out_putc(o, (char)*p); /* UTF-8 passes through */
      }
    }
  }
  sl_out_putc(o, '"');
}

/* Is s a number as JSON spells it?  (NaN, Infinity and "1." are not.) */
static bool is_json_number(const char *s) {
  const char *p = s;
  if (*p == '-')
    p++;
  if (*p == '0')
    p++;
  else if (isdigit((unsigned char)*p))
    while (isdigit((unsigned char)*p))
      p++;
  else
    return false;
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p))
      return false;
    while (isdigit((unsigned char)*p))
      p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!isdigit((unsigned char)*p))
      return false;
    while (isdigit((unsigned char)*p))
      p++;
  }
  return *p == '\0';
}

static void json_value(sl_output *o, int col, const char *s) {
  if (!s)
    sl_out_puts(o, "null");
  else if (o->numeric[col] && is_json_number(s))
    sl_out_puts(o, s);
  else if (o->boolean[col] && strcasecmp(s, "true") == 0)
    sl_out_puts(o, "true");
  else if (o->boolean[col] && strcasecmp(s, "false") == 0)
    sl_out_puts(o, "false");
  else
    json_string(o, s);
}

void sl_out_json_row(sl_output *o, const char *const *cells) {
  sl_out_puts(o, o->nprinted == 0 ? "[{" : ",\n{");
  for (int i = 0; i < o->ncols; i++) {
    if (i > 0)
      sl_out_putc(o, ',');
    json_string(o, o->names[i]);
    sl_out_putc(o, ':');
    json_value(o, i, cells[i]);
  }
  sl_out_putc(o, '}');
}

void sl_out_json_end(sl_output *o) {
  sl_out_puts(o, o->nprinted == 0 ? "[]\n" : "]\n");
}

/* ---- line ---- */

void sl_out_line_row(sl_output *o, const char *const *cells) {
  int width = 0;
  for (int i = 0; i < o->ncols; i++) {
    int w = sl_text_width(o->names[i], strlen(o->names[i]));
    if (w > width)
      width = w;
  }
  if (o->nprinted > 0)
    sl_out_putc(o, '\n');
  for (int i = 0; i < o->ncols; i++) {
    sl_out_spaces(o, width - sl_text_width(o->names[i], strlen(o->names[i])));
    sl_out_puts(o, o->names[i]);
    sl_out_puts(o, " = ");
    sl_out_cell(o, cells[i] ? cells[i] : "NULL");
    sl_out_putc(o, '\n');
  }
}
