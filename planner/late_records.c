/* late_records.c - SET 'sluice.late-records' = 'side-output': where the
 * records later than the watermark go instead of being dropped.
 *
 * The late records of a query are those of its stream (input 0) that a
 * window has already fired for when they arrive.  With side-output they
 * are written, whole and unchanged, to the sink table named by
 * 'sluice.late-records.table', whose columns must be the stream table's
 * leaves (its physical columns, a ROW column's fields flattened) in order
 * and of the same types: the record as the source read it, so it can be
 * read back or replayed.  Because the whole record is written, every leaf
 * of the stream is read (projection pruning keeps them all).
 *
 * Which plans drop late records: a windowed aggregate of event time, and a
 * staged plan's stream leaves that drop rows before the stages (window
 * rows, interval joins).  Under SESSION windows whether a record is late
 * depends on the open sessions of its key: the fold decides, where only
 * late merge still has the source row (the runtime refuses sessions under
 * repartitioning).
 */
#include <string.h>
#include <strings.h>

#include "sluice/common/strbuf.h"
#include "sluice/planner/plan.h"

/* Does this single-stage plan drop records later than the watermark? */
static bool drops_late(const sl_plan *p) {
  if (p->kind == SL_PLAN_AGGREGATE)
    return p->windowed && !p->window.proctime && p->watermark;
  return p->kind == SL_PLAN_STATELESS && p->track_watermark && p->rowtime &&
         p->watermark && !p->keep_late;
}

/* A leaf's type as a CREATE TABLE would write it (no *ROWTIME*). */
static const char *type_name(sl_arena *a, const sl_type *t) {
  sl_type *plain = sl_type_copy(a, t);
  plain->time_attr = SL_TIME_NONE;
  return sl_type_name(a, plain);
}

static bool same_column_type(const sl_type *a, const sl_type *b) {
  bool sa = a->kind == SL_TYPE_CHAR || a->kind == SL_TYPE_VARCHAR;
  bool sb = b->kind == SL_TYPE_CHAR || b->kind == SL_TYPE_VARCHAR;
  return sa && sb ? true : sl_type_equal(a, b);
}

/* The late table's physical columns must be the stream's leaves. */
static int check_columns(sl_arena *a, const sl_plan *p,
                         const sl_table_def *late, sl_error *err) {
  const sl_plan_input *in = &p->inputs[0];
  int n = 0;
  for (int c = 0; c < late->ncolumns; c++)
    if (!late->columns[c].computed_sql)
      n++;
  sl_strbuf want = SL_STRBUF_INIT;
  for (int i = 0; i < in->leaves.n; i++) {
    sl_strbuf_printf(&want, "%s%s %s", i ? ", " : "", in->leaves.names[i],
                     type_name(a, in->leaves.types[i]));
  }
  int rc = SL_OK;
  if (n != in->leaves.n) {
    rc = sl_error_set(err, SL_EINVAL,
                      "late records of '%s' cannot go to table '%s': it has "
                      "%d columns, and a record of '%s' has %d (%s); create "
                      "it with these columns",
                      in->table->name, late->name, n, in->table->name,
                      in->leaves.n, sl_strbuf_cstr(&want));
  }
  for (int c = 0, i = 0; rc == SL_OK && c < late->ncolumns; c++) {
    const sl_column *col = &late->columns[c];
    if (col->computed_sql)
      continue;
    const sl_type *lt = in->leaves.types[i];
    if (!same_column_type(col->type, lt)) {
      const char *got = type_name(a, col->type);
      const char *exp = type_name(a, lt);
      rc = sl_error_set(err, SL_EINVAL,
                        "late records of '%s' cannot go to table '%s': its "
                        "column %d '%s' is %s, and field %d of a record, "
                        "'%s', is %s; the columns must be (%s)",
                        in->table->name, late->name, i + 1, col->name, got,
                        i + 1, in->leaves.names[i], exp, sl_strbuf_cstr(&want));
    }
    i++;
  }
  sl_strbuf_free(&want);
  return rc;
}

/* Route p's late records (p drops late records). */
static int route(sl_arena *a, sl_plan *p, const sl_table_def *late,
                 const sl_sink_connector *sink, sl_error *err) {
  if (p->inputs[0].table == late)
    return sl_error_set(err, SL_EINVAL,
                        "late records of '%s' cannot go to '%s' itself; "
                        "name another table in 'sluice.late-records.table'",
                        late->name, late->name);
  int rc = check_columns(a, p, late, err);
  if (rc != SL_OK)
    return rc;
  /* The whole record is written: the source produces every leaf. */
  sl_plan_input *in = &p->inputs[0];
  in->used_leaf = SL_ANEW_N(a, int, in->leaves.n + 1);
  for (int i = 0; i < in->leaves.n; i++)
    in->used_leaf[i] = i;
  in->nused = in->leaves.n;
  /* EXPLAIN's rewrite log said how many leaves pruning kept. */
  const char *pruned =
      sl_arena_printf(a, "projection pruning: %s produces", in->table->name);
  for (int i = 0; i < p->nrewrites; i++)
    if (strncmp(p->rewrites[i], pruned, strlen(pruned)) == 0)
      p->rewrites[i] = sl_arena_printf(
          a,
          "projection pruning: none (late records of %s are written "
          "whole to %s)",
          in->table->name, late->name);
  p->late_table = late;
  p->late_sink = sink;
  return SL_OK;
}

int sl_plan_route_late_records(sl_arena *a, sl_plan *plan,
                               const sl_catalog *catalog,
                               const sl_settings *settings, sl_error *err) {
  const char *mode = sl_settings_get(settings, "sluice.late-records");
  if (!mode || strcasecmp(mode, "side-output") != 0)
    return SL_OK;
  int nplans = plan->kind == SL_PLAN_STAGED ? plan->staged->nleaves : 1;
  sl_plan **plans = plan->kind == SL_PLAN_STAGED ? plan->staged->leaves : &plan;
  bool any = false;
  for (int i = 0; i < nplans; i++)
    any = any || drops_late(plans[i]);
  if (!any)
    return SL_OK; /* no record of this query can be late */
  const char *name = sl_settings_get(settings, "sluice.late-records.table");
  if (!name || !*name)
    return sl_error_set(err, SL_EINVAL,
                        "'sluice.late-records' is 'side-output' but no table "
                        "is named for the late records; SET "
                        "'sluice.late-records.table' = '<a sink table>'");
  const sl_table_def *late = sl_catalog_find(catalog, name);
  if (!late)
    return sl_error_set(err, SL_EINVAL,
                        "'sluice.late-records.table' names table '%s', which "
                        "does not exist; CREATE TABLE it with a sink "
                        "connector, or SET another",
                        name);
  const char *c = sl_table_def_option(late, "connector");
  const sl_sink_connector *sink =
      late->kind == SL_TABLE_CONNECTOR && c ? sl_sink_connector_find(c) : NULL;
  if (!sink)
    return sl_error_set(err, SL_EINVAL,
                        "'sluice.late-records.table' names '%s', which "
                        "cannot be written (connector '%s'); sinks are: %s",
                        name, c ? c : "(none)", sl_sink_connector_names());
  for (int i = 0; i < nplans; i++) {
    if (!drops_late(plans[i]))
      continue;
    int rc = route(a, plans[i], late, sink, err);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}
