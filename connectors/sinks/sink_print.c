/* sink_print.c - 'connector' = 'print': each row as a line `+I[v1, v2]`
 * (an updating result's rows with their kind: -U[...], +U[...], -D[...]) on
 * stdout (or stderr with 'standard-error' = 'true'), prefixed by
 * "<id>> " when 'print-identifier' is set, as Flink's print connector.
 *
 * Flink prints the Java objects of the row (Row.toString), which differ
 * from the SQL client's spellings: booleans are true/false, NULL is null,
 * timestamps are LocalDateTime.toString (2015-07-15T00:00, seconds and
 * fraction only when non-zero, fraction in groups of 3 digits), intervals
 * are Duration/Period (PT10S, P1Y6M).  Those are reproduced here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sluice/connectors/io_connectors.h"
#include "sluice/row/value_text.h"

static const char *const print_options[] = {"connector", "print-identifier",
                                            "standard-error", NULL};

struct sl_sink {
  const sl_row_layout *layout;
  FILE *fp;
  const char *ident; /* or NULL */
  int first;         /* 1: a changelog, field 0 is the row kind */
  sl_strbuf line;
  uint64_t rows;
};

static int print_validate(const sl_table_def *t, sl_error *err) {
  bool e;
  int rc = sl_check_options(t, "print", print_options, err);
  return rc ? rc : sl_option_bool(t, "standard-error", false, &e, err);
}

static int print_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  *out = NULL;
  bool to_stderr = false;
  if (spec->table) {
    int rc = print_validate(spec->table, err);
    if (rc == SL_OK)
      rc =
          sl_option_bool(spec->table, "standard-error", false, &to_stderr, err);
    if (rc)
      return rc;
  }
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a sink");
  s->layout = spec->layout;
  s->first = spec->changelog ? 1 : 0;
  s->fp = to_stderr ? stderr : stdout;
  s->ident =
      spec->table ? sl_table_def_option(spec->table, "print-identifier") : NULL;
  *out = s;
  return SL_OK;
}

/* java.time.LocalTime.toString of micros of the day. */
static void java_time(sl_strbuf *b, int64_t us) {
  int64_t secs = us / 1000000, frac = us % 1000000;
  sl_strbuf_printf(b, "%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60));
  if (secs % 60 || frac) {
    sl_strbuf_printf(b, ":%02d", (int)(secs % 60));
    if (frac % 1000 == 0 && frac)
      sl_strbuf_printf(b, ".%03d", (int)(frac / 1000));
    else if (frac)
      sl_strbuf_printf(b, ".%06d", (int)frac);
  }
}

/* java.time.Duration.toString: PT8H6M12.345S, PT0S. */
static void java_duration(sl_strbuf *b, int64_t ms) {
  if (ms == 0) {
    sl_strbuf_append(b, "PT0S");
    return;
  }
  sl_strbuf_append(b, "PT");
  int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60,
          f = ms % 1000;
  if (h)
    sl_strbuf_printf(b, "%lldH", (long long)h);
  if (m)
    sl_strbuf_printf(b, "%lldM", (long long)m);
  if (s || f) {
    if (s == 0 && f < 0)
      sl_strbuf_append(b, "-");
    sl_strbuf_printf(b, "%lld", (long long)s);
    if (f) {
      char frac[8];
      snprintf(frac, sizeof frac, "%03lld", (long long)(f < 0 ? -f : f));
      for (int n = 2; n > 0 && frac[n] == '0'; n--)
        frac[n] = '\0';
      sl_strbuf_printf(b, ".%s", frac);
    }
    sl_strbuf_append(b, "S");
  }
}

static void java_value(sl_strbuf *b, const sl_row_layout *l, const uint8_t *row,
                       int i) {
  const sl_field *f = &l->fields[i];
  const void *p = row + f->offset;
  if (sl_row_is_null(row, i)) {
    sl_strbuf_append(b, "null");
    return;
  }
  switch (f->ptype) {
  case SL_P_BOOL:
    sl_strbuf_append(b, *(const uint8_t *)p ? "true" : "false");
    return;
  case SL_P_DATE: {
    char tmp[SL_VALUE_TEXT_MAX];
    sl_value_format_scalar(tmp, f->type, f->ptype, p);
    sl_strbuf_append(b, tmp);
    return;
  }
  case SL_P_TIME:
    java_time(b, (int64_t) * (const int32_t *)p * 1000);
    return;
  case SL_P_TS: {
    int64_t us = *(const int64_t *)p, day = 86400LL * 1000000;
    int64_t days = us / day - (us % day < 0);
    char date[32];
    sl_format_date(date, days);
    sl_strbuf_printf(b, "%sT", date);
    java_time(b, us - days * day);
    return;
  }
  case SL_P_IV_DT:
    java_duration(b, *(const int64_t *)p);
    return;
  case SL_P_IV_YM: {
    int32_t mo = *(const int32_t *)p;
    if (mo == 0)
      sl_strbuf_append(b, "P0D");
    else if (mo / 12 && mo % 12)
      sl_strbuf_printf(b, "P%dY%dM", mo / 12, mo % 12);
    else if (mo / 12)
      sl_strbuf_printf(b, "P%dY", mo / 12);
    else
      sl_strbuf_printf(b, "P%dM", mo);
    return;
  }
  default:
    sl_value_append(b, l, row, i);
    return;
  }
}

static int print_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  for (uint32_t r = 0; r < rows->nrows; r++) {
    const uint8_t *row = sl_buffer_row(rows, r);
    sl_strbuf_reset(&s->line);
    if (s->ident)
      sl_strbuf_printf(&s->line, "%s> ", s->ident);
    /* A changelog's row says its kind in field 0 (a 2-byte string). */
    const sl_str *op = (const sl_str *)(row + s->layout->fields[0].offset);
    sl_strbuf_appendn(&s->line, s->first ? sl_str_data(op) : "+I",
                      s->first ? op->len : 2);
    sl_strbuf_appendc(&s->line, '[');
    for (int i = s->first; i < s->layout->nfields; i++) {
      if (i > s->first)
        sl_strbuf_append(&s->line, ", ");
      java_value(&s->line, s->layout, row, i);
    }
    sl_strbuf_append(&s->line, "]\n");
    if (fwrite(s->line.data, 1, s->line.len, s->fp) != s->line.len)
      return sl_error_set(err, SL_EIO, "print sink: writing to %s failed",
                          s->fp == stderr ? "stderr" : "stdout");
    s->rows++;
  }
  return SL_OK;
}

static int print_commit(sl_sink *s, sl_error *err) {
  (void)err;
  fflush(s->fp);
  return SL_OK;
}

static int print_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok;
  (void)err;
  fflush(s->fp);
  sl_strbuf_free(&s->line);
  free(s);
  return SL_OK;
}

static uint64_t print_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_print = {
    .name = "print",
    .description = "prints rows as +I[...] lines on stdout",
    .validate = print_validate,
    .open = print_open,
    .write = print_write,
    .commit = print_commit,
    .close = print_close,
    .rows_written = print_rows,
};
