/* late_output.h - the table late records go to (SET 'sluice.late-records'
 * = 'side-output'; sl_plan.late_table): one sink shared by every worker of
 * a query, and by every leaf of a staged plan, written under a lock (late
 * records are rare, so the lock is not contended).  Internal to runtime/.
 *
 * On a node of a cluster the late records go to the coordinator instead
 * (late_output_open_export: LATE_ROWS frames on the control connection),
 * whose late output writes them to the table.
 *
 * Ownership: whoever calls late_output_open (the executor for a single
 * plan, the stage runner for a staged one) closes it; the workers only
 * write. */
#ifndef SLUICE_LATE_OUTPUT_H
#define SLUICE_LATE_OUTPUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice/connectors/connector.h"
#include "sluice/net/node_frames.h"
#include "sluice/planner/plan.h"

typedef struct late_output {
  const sl_sink_connector *sc;
  sl_sink *sink;
  const sl_frame_out *export;         /* a node: to the coordinator (sc NULL) */
  const struct sl_distribution *dist; /* how (distribution.h) */
  const char *table;                  /* its name, for messages */
  const sl_row_layout *layout;        /* the rows written (late_output_open) */
  pthread_mutex_t lock;
  uint64_t written; /* rows written (under lock) */
  bool uncommitted; /* rows written since the last commit (under lock) */
} late_output;

/* Open plan->late_table's sink for rows of the stream's leaves (input 0,
 * every leaf, in leaf order); the layout is built in arena a. */
int late_output_open(late_output *lo, const sl_plan *plan, sl_arena *a,
                     sl_error *err);
/* A staged plan's: one output shared by every leaf that routes late
 * records (each such leaf's late_arg points at lo), to the coordinator on
 * export when that is not NULL (a node's), else the table's sink.
 * *opened: whether there was such a leaf (then the caller closes lo). */
int late_output_open_leaves(late_output *lo, const sl_staged_plan *sp,
                            const sl_frame_out *export,
                            const struct sl_distribution *dist, sl_arena *a,
                            bool *opened, sl_error *err);
/* A node's: LATE_ROWS frames to the coordinator on o. */
void late_output_open_export(late_output *lo, const sl_frame_out *o,
                             const struct sl_distribution *dist,
                             const char *table);
/* Write rows (from any thread; a node's are swizzled on the way, so the
 * caller clears them after); an error names the table. */
int late_output_write(late_output *lo, sl_buffer *rows, sl_error *err);
/* Commit what was written since the last commit (a SQLite transaction),
 * if anything was. */
int late_output_commit(late_output *lo, sl_error *err);
/* After a run that ended with rc: commit and keep when rc is SL_OK, else
 * discard what is not committed.  Returns rc, or, when rc was SL_OK, the
 * commit's or close's error (then in err). */
int late_output_close(late_output *lo, int rc, sl_error *err);

#endif
