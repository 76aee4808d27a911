/* sink_to_coordinator.c - a node's stage results (a broadcast join run on
 * the nodes, stage_runner.c), sent to the coordinator as ROWS frames.
 *
 * The rows are copied first (their long strings may live in the leaves'
 * stores) into buffers of their own, which go out in the ROWS wire form
 * (node_frames.h).  Not in the connector registry: only the stage runner opens
 * it, with an sl_sink_to_coordinator_arg. */
#include <stdlib.h>

#include "node_link.h"
#include "sluice/state/sorted_result.h"

struct sl_sink {
  sl_frame_out out;
  const sl_row_layout *layout;
  uint32_t buffer_size;
  uint64_t rows;
};

static int open_sink(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  (void)err;
  const sl_sink_to_coordinator_arg *a = spec->arg;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->out = a->out;
  s->buffer_size = a->buffer_size;
  s->layout = spec->layout;
  *out = s;
  return SL_OK;
}

static int write_rows(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  sorted_result copy;
  sorted_result_init(&copy, s->layout, s->buffer_size);
  int rc = sorted_result_add(&copy, rows, err);
  for (int i = 0; i < copy.nbufs && rc == SL_OK; i++)
    rc = sl_node_send_rows(&s->out, &copy.bufs[i], err);
  sorted_result_free(&copy);
  s->rows += rows->nrows;
  return rc;
}

static int close_sink(sl_sink *s, bool ok, sl_error *err) {
  (void)ok, (void)err;
  free(s);
  return SL_OK;
}

static uint64_t rows_written(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_to_coordinator = {
    .name = "coordinator",
    .description = "a node's stage results, to the coordinator",
    .open = open_sink,
    .write = write_rows,
    .close = close_sink,
    .rows_written = rows_written,
};
