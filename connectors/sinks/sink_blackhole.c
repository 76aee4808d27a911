/* sink_blackhole.c - 'connector' = 'blackhole': swallows every row and
 * counts it (for measuring a query without the cost of its output). */
#include <stdlib.h>

#include "sluice/connectors/io_connectors.h"

static const char *const blackhole_options[] = {"connector", NULL};

struct sl_sink {
  uint64_t rows;
};

static int bh_validate(const sl_table_def *t, sl_error *err) {
  return sl_check_options(t, "blackhole", blackhole_options, err);
}

static int bh_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  (void)spec;
  *out = calloc(1, sizeof **out);
  if (!*out)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a sink");
  return SL_OK;
}

static int bh_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  (void)err;
  s->rows += rows->nrows;
  return SL_OK;
}

static int bh_commit(sl_sink *s, sl_error *err) {
  (void)s;
  (void)err;
  return SL_OK;
}

static int bh_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok;
  (void)err;
  free(s);
  return SL_OK;
}

static uint64_t bh_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_blackhole = {
    .name = "blackhole",
    .description = "discards rows, counting them",
    .validate = bh_validate,
    .open = bh_open,
    .write = bh_write,
    .commit = bh_commit,
    .close = bh_close,
    .rows_written = bh_rows,
};
