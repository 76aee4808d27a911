/* stage_output.c - a staged query's output rows (stage_int.h), written by
 * the stage runner (stage_runner.c) and the coordinator of stages on the
 * nodes (cluster/stage_broadcast.c): OFFSET and LIMIT over everything
 * written so far, ORDER BY's rows kept and sorted at the end, a commit per
 * window, and the updating stages' changes with their kind first.  Apart
 * from the runner because both of them write through it. */
#include <stdlib.h>

#include "executor_int.h"
#include "sluice/session/changelog.h"
#include "sluice/state/sorted_result.h"
#include "stage_int.h"

/* Write a window's result rows (OFFSET, LIMIT) and commit the window. */
static int write_ordered(stage_output *o, const sl_buffer *in, sl_error *err);

int stage_output_write(stage_output *o, const sl_buffer *in, sl_error *err) {
  if (!o->sorted)
    return write_ordered(o, in, err);
  int rc = sorted_result_add(o->sorted, in, err);
  /* Reported as the kept buffers grow (a buffer of rows at a time). */
  uint64_t held = sorted_result_bytes(o->sorted), total;
  if (o->memory && rc == SL_OK &&
      sl_memory_grew_over(o->memory, &o->sorted_charged, held, &total))
    rc = sl_memory_over_error(
        err, o->memory, held, total, "add a LIMIT",
        "ORDER BY's rows (kept until the input ends, to be sorted) hold");
  return rc;
}

void stage_output_free_sorted(stage_output *o) {
  if (!o->sorted)
    return;
  if (o->memory)
    sl_memory_charge(o->memory, &o->sorted_charged, 0);
  sorted_result_free(o->sorted);
  o->sorted = NULL;
}

int stage_output_window_end(stage_output *o, sl_error *err) {
  /* Sorted rows are committed once, at the end. */
  return !o->sorted && o->sc->commit ? o->sc->commit(o->sink, err) : SL_OK;
}

static int emit_sorted(void *arg, sl_buffer *b) {
  stage_output *o = arg;
  return write_ordered(o, b, o->emit_err);
}

int stage_output_finish(stage_output *o, sl_error *err) {
  if (!o->sorted)
    return SL_OK;
  o->emit_err = err;
  int rc = sorted_result_emit(o->sorted, o->order, o->norder, emit_sorted, o,
                              &o->limit_reached, err);
  if (rc == SL_OK && o->sc->commit)
    rc = o->sc->commit(o->sink, err);
  return rc;
}

static int write_ordered(stage_output *o, const sl_buffer *in, sl_error *err) {
  if (o->limit_reached)
    return SL_OK;
  sl_buffer b = *in; /* a copy whose row count may shrink */
  if (o->skipped < (uint64_t)o->offset && b.nrows) {
    uint64_t drop = (uint64_t)o->offset - o->skipped;
    if (drop > b.nrows)
      drop = b.nrows;
    b.data += drop * b.layout->width; /* heap stays where it is */
    b.nrows -= (uint32_t)drop;
    b.cap -= (uint32_t)(drop * b.layout->width);
    o->skipped += drop;
  }
  if (o->limit >= 0 && o->written + b.nrows >= (uint64_t)o->limit) {
    b.nrows = (uint32_t)((uint64_t)o->limit - o->written);
    o->limit_reached = true;
  }
  int rc = b.nrows ? o->sc->write(o->sink, &b, err) : SL_OK;
  o->written += b.nrows;
  return rc;
}

int stage_write_updates(void *arg, const sl_buffer *in, const uint8_t *ops,
                        sl_error *err) {
  update_output *uo = arg;
  if (!uo->changelog) /* only inserts */
    return uo->o->limit_reached ? SL_OK : stage_output_write(uo->o, in, err);
  const sl_row_layout *il = in->layout, *ol = uo->rows.layout;
  int rc = SL_OK;
  for (uint32_t r = 0; r < in->nrows && rc == SL_OK; r++) {
    uint8_t *dst = sl_buffer_append(&uo->rows);
    if (!dst) {
      rc = stage_output_write(uo->o, &uo->rows, err);
      sl_buffer_clear(&uo->rows);
      dst = sl_buffer_append(&uo->rows);
    }
    const uint8_t *src = sl_buffer_row(in, r);
    sl_exec_set_op(ol, dst, (sl_changelog_op)ops[r]);
    for (int f = 0; f < il->nfields; f++)
      sl_row_copy_field(il, src, f, ol, dst, f + 1);
  }
  if (rc == SL_OK && uo->rows.nrows)
    rc = stage_output_write(uo->o, &uo->rows, err);
  sl_buffer_clear(&uo->rows);
  return rc;
}
