/* connector.h - sources and sinks: the `'connector' = '...'` of a table.
 *
 * A connector is found by name in the process-wide registry (with the
 * function registry, the only global table; read-only).  A source instance
 * produces rows for ONE worker: a query with N workers opens N instances
 * with worker = 0..N-1, and together they produce each event exactly once
 * (generators split the event sequence, the CSV reader splits the file).
 * A sink instance consumes rows from the query's output.
 *
 * Columns.  A table's physical columns are flattened to leaves: a ROW column
 * `person ROW<id BIGINT, ...>` becomes `person.id`, ...  (computed columns
 * are not physical: the pipeline evaluates them).  A source is asked for a
 * subset of those leaves, in the order of the layout it must fill, so a
 * query that reads two columns of a wide table pays for two.
 *
 * Time.  Generators give every event a deterministic event time derived
 * from its sequence number and the configured rate, so results do not
 * depend on the machine's speed; 'events.rate' > 0 additionally paces the
 * emission against the wall clock (for latency measurements).
 *
 * Ownership: the spec and everything it points to belong to the caller and
 * outlive the instance; instances are freed by close().
 */
#ifndef SLUICE_CONNECTOR_H
#define SLUICE_CONNECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/catalog/catalog.h"
#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/connectors/result_sink.h"
#include "sluice/row/dictionary.h"
#include "sluice/row/row.h"

/* The flattened physical columns of a table (leaves of ROW columns, in
 * declaration order, computed columns left out).  Arrays in arena a. */
typedef struct sl_leaf_columns {
  int n;
  const char **names;    /* "event_type", "person.id", ... */
  const sl_type **types; /* never ROW */
} sl_leaf_columns;

void sl_table_leaf_columns(sl_arena *a, const sl_table_def *t,
                           sl_leaf_columns *out);

struct sl_bexpr;

/* The leaf an expression reads when it is a column or a FIELD chain over
 * one (`bid.price`, `person.address.city`): writes the leaf's name (the
 * column's name from column_names, then ".field" per step) into buf and
 * returns the column index; -1 when e is neither.  The interpreter resolves
 * FIELD chains by the same names. */
int sl_leaf_of(const struct sl_bexpr *e, const char *const *column_names,
               char *buf, size_t cap);

/* Mark in need[] the leaf called name, or every leaf below it ("name.x"). */
void sl_leaf_mark(const sl_leaf_columns *lc, bool *need, const char *name);

/* ---- sources ---------------------------------------------------------- */

/* A condition a source applies itself (predicate pushdown): keep only the
 * rows whose integer leaf `leaf` (an index into sl_table_leaf_columns) is
 * one of values[0..nvalues).  The leaf need not be among those produced.
 *
 * rechecked: the pipeline checks the condition again, because the plan
 * computes a watermark over the source's rows (a plan with state, a stream
 * leaf of a staged plan).  The source (one whose time_ordered said yes)
 * must then also hand over, of every SL_SOURCE_CARRY_EVERY consecutive
 * rows it skips, the last: a time carrier, dropped by the pipeline, whose
 * event time keeps the watermark advancing when the kept rows are rare (or
 * never come to this instance). */
#define SL_SOURCE_FILTER_VALUES 8
#define SL_SOURCE_CARRY_EVERY 1024
typedef struct sl_source_filter {
  int leaf;
  int nvalues;
  int64_t values[SL_SOURCE_FILTER_VALUES];
  bool rechecked;
} sl_source_filter;

typedef struct sl_source_spec {
  const sl_table_def *table; /* options via sl_table_def_option */
  /* The rows to produce: layout->fields[i] is the table leaf
   * leaf_index[i] (an index into sl_table_leaf_columns of table). */
  const sl_row_layout *layout;
  const int *leaf_index;
  int worker; /* 0 .. nworkers-1 */
  int nworkers;
  /* Pushed-down conditions (all must hold), only ever on leaves for which
   * the connector's can_filter said yes; the source must apply them. */
  int nfilters;
  const sl_source_filter *filters;
  /* Opened to read a prefix of the stream (the planner's statistics): a
   * source skips work done for the whole stream at open ('pregenerate'). */
  bool sample;
  /* NULL, or per layout field: true when the field is the dictionary code
   * (an INT field) of string leaf leaf_index[i] rather than its string;
   * only ever for leaves whose connector's dictionary() gave one. */
  const bool *as_code;
} sl_source_spec;

typedef struct sl_source sl_source; /* an instance, connector-defined */

typedef struct sl_source_stats {
  uint64_t rows;         /* rows produced so far */
  uint64_t bytes;        /* input bytes consumed (files) or generated */
  uint64_t skipped_rows; /* malformed rows skipped (csv.ignore-parse-errors) */
} sl_source_stats;

typedef struct sl_source_connector {
  const char *name; /* 'connector' value */
  const char *description;
  /* Check a CREATE TABLE's options and columns; SL_EINVAL with a message
   * naming the option (or column) otherwise.  May be NULL. */
  int (*validate)(const sl_table_def *t, sl_error *err);
  int (*open)(const sl_source_spec *spec, sl_source **out, sl_error *err);
  /* Whether the source can apply a sl_source_filter on the leaf called
   * leaf_name itself, more cheaply than producing the rows (a generator
   * that need not generate them).  May be NULL: no pushdown. */
  bool (*can_filter)(const sl_table_def *t, const char *leaf_name);
  /* May be NULL: no guarantee, and then filters go into the source only
   * of plans without a watermark or state.  The event-time guarantee that
   * lets a plan with a watermark have its filters pushed (planner/
   * rewrite.c says why that is safe): over the rows one instance produces,
   * the non-NULL values of all leaves for which this says yes, taken
   * together, never decrease (no value of a later row is below a value of
   * an earlier row, whichever of those leaves hold them), also when
   * pushed-down filters thin the rows out; and the source honours
   * sl_source_filter.rechecked (time carriers). */
  bool (*time_ordered)(const sl_table_def *t, const char *leaf_name);
  /* May be NULL.  The fixed set every value of the string leaf leaf_name
   * comes from (row/dictionary.h), or NULL: the planner may then have the
   * source produce the leaf's code instead (sl_source_spec.as_code).  Two
   * leaves (of any tables) with the same dictionary pointer share codes.
   * The dictionary lives as long as the process. */
  const sl_dictionary *(*dictionary)(const sl_table_def *t,
                                     const char *leaf_name);
  /* Append rows to buf (already cleared by the caller) until it is full or
   * the input ends.  Sets *done when no row will ever come again (a
   * bounded source reached its end).  Rows must be produced in
   * non-decreasing event time per instance where the connector can (all
   * generators do), so watermarks advance smoothly. */
  int (*next)(sl_source *s, sl_buffer *buf, bool *done, sl_error *err);
  /* May be NULL.  The next rows without copying them: *out points at a
   * buffer of the source's own (same layout, read-only, valid until the
   * next call to lend or next, or close) of at most max_rows rows, or is
   * NULL when the source cannot lend the next rows (the caller then calls
   * next).  *done as for next.  Pre-generated input is lent, so that a
   * benchmark's source costs nothing: its copy was a sixth of YSB's
   * compiled time. */
  int (*lend)(sl_source *s, uint32_t max_rows, const sl_buffer **out,
              bool *done, sl_error *err);
  void (*stats)(const sl_source *s, sl_source_stats *out);
  void (*close)(sl_source *s);
} sl_source_connector;

/* ---- sinks ------------------------------------------------------------- */

typedef struct sl_sink_spec {
  const sl_table_def *table;   /* INSERT INTO target, or NULL for the shell */
  const sl_row_layout *layout; /* the rows the query produces */
  const char *const *names;    /* column names, layout->nfields of them */
  sl_result_sink *shell;       /* the shell's sink when table is NULL */
  void *arg; /* an internal sink's object (sl_plan.sink_arg), or NULL */
  /* The rows are a changelog: column 0 is each row's kind (changelog.h),
   * the table's columns follow. */
  bool changelog;
  /* INSERT OVERWRITE: the rows replace the table's (only for a bounded
   * query, only by a connector with can_overwrite); else they are added
   * to what the table holds. */
  bool overwrite;
  /* The query never ends by itself (a streaming INSERT): the sink makes
   * its rows visible as it goes (commit(), and about once a second by the
   * clock), and a close with ok = false keeps what was complete. */
  bool unbounded;
} sl_sink_spec;

typedef struct sl_sink sl_sink;

typedef struct sl_sink_connector {
  const char *name;
  const char *description;
  int (*validate)(const sl_table_def *t, sl_error *err); /* may be NULL */
  int (*open)(const sl_sink_spec *spec, sl_sink **out, sl_error *err);
  /* Rows of the result; called from one thread only. */
  int (*write)(sl_sink *s, const sl_buffer *rows, sl_error *err);
  /* Optional: write rows, perhaps keeping their buffer rather than
   * copying it (a stage sink holding a stream's rows until their windows
   * fire).  When it keeps it, rows->data is NULL on return and the caller
   * makes a new buffer.  Only for buffers whose long strings are in their
   * own heap (not borrow_strings). */
  int (*write_owned)(sl_sink *s, sl_buffer *rows, sl_error *err);
  /* The rows written since the last commit form a complete unit (a fired
   * window, or the end of a bounded query): the SQLite sink commits its
   * transaction, the shell flushes a table. */
  int (*commit)(sl_sink *s, sl_error *err);
  /* ok = false: the query failed or was cancelled; discard what is not
   * committed (the CSV sink removes its temporary file). */
  int (*close)(sl_sink *s, bool ok, sl_error *err);
  uint64_t (*rows_written)(const sl_sink *s);
  /* Optional, for sinks that feed another stage: every row whose window
   * ends at or before watermark + one time unit (windowed results) or
   * whose event time is at or before watermark (a stream) has been
   * written.  Called by the coordinator every round (about every 20 ms,
   * and once with INT64_MAX at the end of the input); an error return
   * stops the query.  Between rounds every row written is a whole result
   * row (a fired window's rows all written and committed), so sinks also
   * use it as their clock: time-based rolls and commits, and the point up
   * to which an unbounded query's rows are kept when it is stopped. */
  int (*watermark)(sl_sink *s, int64_t watermark, sl_error *err);
  /* Call watermark after each window fired, too, not only once a round:
   * the stage above a leaf starts on a window while the leaf's
   * coordinator merges the next ones (a round that fires many windows
   * had held them all back until its end). */
  bool watermark_each_window;
  /* The sink can replace a table's rows (INSERT OVERWRITE). */
  bool can_overwrite;
} sl_sink_connector;

/* ---- the registry ------------------------------------------------------ */

const sl_source_connector *sl_source_connector_find(const char *name);
const sl_sink_connector *sl_sink_connector_find(const char *name);
/* The sink that hands rows to the shell (formatting values as text). */
const sl_sink_connector *sl_shell_sink_connector(void);
/* For messages: "nexmark, ysb, cm, ro, datagen, filesystem". */
const char *sl_source_connector_names(void);
const char *sl_sink_connector_names(void);

/* Close a sink after a run that ended with rc: kept (committed) when rc is
 * SL_OK, discarded otherwise.  Returns rc, or, when rc was SL_OK, the
 * close's own error (then in err): the first error is the one reported. */
int sl_sink_close_after(const sl_sink_connector *sc, sl_sink *sink, int rc,
                        sl_error *err);

/* Common option parsing for connectors: a missing option gives fallback;
 * a malformed one is SL_EINVAL naming table, option and value. */
int sl_option_int(const sl_table_def *t, const char *key, int64_t fallback,
                  int64_t *out, sl_error *err);
int sl_option_double(const sl_table_def *t, const char *key, double fallback,
                     double *out, sl_error *err);
int sl_option_bool(const sl_table_def *t, const char *key, bool fallback,
                   bool *out, sl_error *err);
/* '1 min', '500 ms', '2 h' (a bare number is milliseconds, as in Flink)
 * into milliseconds; '128MB', '64 kb' into bytes. */
int sl_option_duration_ms(const sl_table_def *t, const char *key,
                          int64_t fallback, int64_t *out, sl_error *err);
int sl_option_size(const sl_table_def *t, const char *key, int64_t fallback,
                   int64_t *out, sl_error *err);

#endif
