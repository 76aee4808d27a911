/* late_output.c - writing late records to their table (late_output.h). */
#include "late_output.h"

#include "distribution.h"

#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/jit/jit.h"

/* "<doing> '<table>': <the sink's message>" */
static int name_table(sl_error *err, int rc, const char *doing,
                      const char *table) {
  char *was = err->message;
  err->message = NULL;
  sl_error_set(err, rc, "%s '%s': %s", doing, table, was ? was : "failed");
  free(was);
  return rc;
}

int late_output_open(late_output *lo, const sl_plan *plan, sl_arena *a,
                     sl_error *err) {
  memset(lo, 0, sizeof *lo);
  const sl_table_def *t = plan->late_table;
  const sl_row_layout *layout = sl_plan_input_layout(a, plan, 0);
  /* The sink names its columns after the late table. */
  const char **names = SL_ANEW_N(a, const char *, layout->nfields + 1);
  for (int c = 0, i = 0; c < t->ncolumns && i < layout->nfields; c++)
    if (!t->columns[c].computed_sql)
      names[i++] = t->columns[c].name;
  /* A stream's late records show as they come, as its results do. */
  sl_sink_spec spec = {t,    layout, names, NULL,
                       NULL, false,  false, !sl_plan_is_bounded(plan)};
  lo->sc = plan->late_sink;
  lo->table = t->name;
  lo->layout = layout;
  int rc = lo->sc->open(&spec, &lo->sink, err);
  if (rc != SL_OK)
    return name_table(err, rc, "opening the late records' table", lo->table);
  pthread_mutex_init(&lo->lock, NULL);
  return SL_OK;
}

int late_output_open_leaves(late_output *lo, const sl_staged_plan *sp,
                            const sl_frame_out *export,
                            const sl_distribution *dist, sl_arena *a,
                            bool *opened, sl_error *err) {
  *opened = false;
  for (int i = 0; i < sp->nleaves; i++) {
    sl_plan *lp = sp->leaves[i];
    if (!lp->late_table)
      continue;
    if (!*opened && export) {
      late_output_open_export(lo, export, dist, lp->late_table->name);
    } else if (!*opened) {
      int rc = late_output_open(lo, lp, a, err);
      if (rc != SL_OK)
        return rc;
    }
    *opened = true;
    lp->late_arg = lo;
  }
  return SL_OK;
}

void late_output_open_export(late_output *lo, const sl_frame_out *o,
                             const sl_distribution *dist, const char *table) {
  memset(lo, 0, sizeof *lo);
  lo->export = o;
  lo->dist = dist;
  lo->table = table;
  pthread_mutex_init(&lo->lock, NULL);
}

int late_output_write(late_output *lo, sl_buffer *rows, sl_error *err) {
  pthread_mutex_lock(&lo->lock);
  int rc;
  if (lo->export) {
    sl_strbuf b = SL_STRBUF_INIT;
    rc = lo->dist->encode_rows(rows, &b, err);
    if (rc == SL_OK)
      rc = lo->dist->send_bulk(lo->export, SL_FRAME_LATE_ROWS, b.data, b.len,
                               err);
    sl_strbuf_free(&b);
  } else {
    rc = lo->sc->write(lo->sink, rows, err);
  }
  if (rc == SL_OK) {
    lo->written += rows->nrows;
    lo->uncommitted = true;
  }
  pthread_mutex_unlock(&lo->lock);
  if (rc != SL_OK)
    return name_table(err, rc, "writing late records to", lo->table);
  return SL_OK;
}

int late_output_commit(late_output *lo, sl_error *err) {
  pthread_mutex_lock(&lo->lock);
  int rc = SL_OK;
  if (lo->uncommitted && lo->sc && lo->sc->commit)
    rc = lo->sc->commit(lo->sink, err);
  lo->uncommitted = false;
  pthread_mutex_unlock(&lo->lock);
  return rc;
}

int late_output_close(late_output *lo, int rc, sl_error *err) {
  if (rc == SL_OK)
    rc = late_output_commit(lo, err);
  if (lo->sc)
    rc = sl_sink_close_after(lo->sc, lo->sink, rc, err);
  pthread_mutex_destroy(&lo->lock);
  return rc;
}
