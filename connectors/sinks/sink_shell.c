/* sink_shell.c - the sink behind a SELECT typed in the shell: every value
 * becomes text (value_text.h, Flink's spellings) and goes to the session's
 * sl_result_sink: begin once at open, one row() per row, flush() at each
 * commit (a fired window), end() at close.  end() is called even when the
 * query failed or was cancelled, so a table output mode can close its box
 * around the rows already shown.
 *
 * The text of a row is built in one reused strbuf (fields separated by
 * NULs), so a row costs no allocation once the buffer has grown.
 */
#include <stdlib.h>
#include <string.h>

#include "sluice/common/cancel.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/row/value_text.h"

struct sl_sink {
  sl_result_sink *out;
  const sl_row_layout *layout;
  sl_strbuf text;
  size_t *offsets;
  const char **cells;
  uint64_t rows;
  bool ended;
  /* The statement's token (its thread's scope when the sink opened): the
   * sink may write on another thread than the one that opened it. */
  const sl_cancel *cancel;
};

static int shell_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  *out = NULL;
  if (!spec->shell)
    return sl_error_set(err, SL_EINTERNAL,
                        "the shell sink needs a result sink");
  int n = spec->layout->nfields;
  sl_sink *s = calloc(1, sizeof *s);
  const sl_type **types = calloc((size_t)n + 1, sizeof *types);
  if (s) {
    s->offsets = calloc((size_t)n + 1, sizeof *s->offsets);
    s->cells = calloc((size_t)n + 1, sizeof *s->cells);
  }
  if (!s || !types || !s->offsets || !s->cells) {
    if (s) {
      free(s->offsets);
      free(s->cells);
    }
    free(s);
    free(types);
    return sl_error_set(err, SL_ENOMEM, "out of memory opening the result");
  }
  s->out = spec->shell;
  s->cancel = sl_cancel_current();
  s->layout = spec->layout;
  for (int i = 0; i < n; i++)
    types[i] = spec->layout->fields[i].type;
  int rc = s->out->begin(s->out->ctx, n, spec->names, types);
  free(types);
  if (rc != SL_OK) {
    free(s->offsets);
    free(s->cells);
    free(s);
    return sl_error_set(err, rc, "the result could not be started");
  }
  *out = s;
  return SL_OK;
}

/* The NULs of text from `from` on become SL_CELL_NUL (session.h), so the
 * cells handed on are C strings: one byte more per NUL, moved from the
 * end backwards in place. */
static void nul_to_cell_nul(sl_strbuf *text, size_t from) {
  size_t old = text->len, nuls = 0;
  for (size_t k = from; k < old; k++)
    nuls += text->data[k] == '\0';
  for (size_t k = 0; k < nuls; k++)
    sl_strbuf_appendc(text, ' ');
  char *d = text->data;
  for (size_t r = old, w = text->len; r > from;) {
    char c = d[--r];
    if (c == '\0') {
      d[--w] = SL_CELL_NUL[1];
      d[--w] = SL_CELL_NUL[0];
    } else {
      d[--w] = c;
    }
  }
}

static int shell_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  const sl_row_layout *l = s->layout;
  for (uint32_t r = 0; r < rows->nrows; r++) {
    /* A slow reader (a pipe, a terminal scrolling) can take seconds over
     * one buffer's rows: Ctrl-C and .timeout are looked at per row. */
    if (sl_cancel_pending(s->cancel))
      return sl_error_set(err, SL_ECANCELLED, "query cancelled");
    const uint8_t *row = sl_buffer_row(rows, r);
    sl_strbuf_reset(&s->text);
    for (int i = 0; i < l->nfields; i++) {
      s->offsets[i] = s->text.len;
      if (!sl_row_is_null(row, i)) {
        sl_value_append(&s->text, l, row, i);
        if (memchr(s->text.data + s->offsets[i], '\0',
                   s->text.len - s->offsets[i]))
          nul_to_cell_nul(&s->text, s->offsets[i]);
      }
      sl_strbuf_appendc(&s->text, '\0');
    }
    /* Pointers only now: appending may have moved the text. */
    for (int i = 0; i < l->nfields; i++)
      s->cells[i] =
          sl_row_is_null(row, i) ? NULL : s->text.data + s->offsets[i];
    int rc = s->out->row(s->out->ctx, s->cells);
    if (rc != SL_OK)
      return sl_error_set(err, rc, "writing a result row failed");
    s->rows++;
  }
  return SL_OK;
}

static int shell_commit(sl_sink *s, sl_error *err) {
  if (s->out->flush) {
    int rc = s->out->flush(s->out->ctx);
    if (rc != SL_OK)
      return sl_error_set(err, rc, "flushing result rows failed");
  }
  return SL_OK;
}

static int shell_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok;
  int rc = s->out->end(s->out->ctx);
  sl_strbuf_free(&s->text);
  free(s->offsets);
  free(s->cells);
  free(s);
  if (rc != SL_OK)
    return sl_error_set(err, rc, "finishing the result failed");
  return SL_OK;
}

static uint64_t shell_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_shell = {
    .name = "shell",
    .description = "the rows of a SELECT, shown by the shell",
    .validate = NULL,
    .open = shell_open,
    .write = shell_write,
    .commit = shell_commit,
    .close = shell_close,
    .rows_written = shell_rows,
};
