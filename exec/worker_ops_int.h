/* worker_ops_int.h - a worker's physical operators, each in a file of its
 * own, and what worker.c (the driver: read a buffer, run the steps over
 * it, hand over, exchange) calls in them.  Internal to exec/; the state
 * they share is worker_state (worker_int.h). */
#ifndef SLUICE_WORKER_OPS_INT_H
#define SLUICE_WORKER_OPS_INT_H

#include "worker_int.h"

/* sl_exec_eval_rows with the worker's expression context and error. */
static inline int sl_worker_eval_rows(worker_state *s,
                                      sl_expr_prog *const *progs, int nprogs,
                                      const sl_buffer *in, const uint32_t *sel,
                                      uint32_t n, sl_buffer *out) {
  return sl_exec_eval_rows(progs, nprogs, in, sel, n, out, s->ctx, &s->w->err);
}

/* The WATERMARK expression of input rows 0..n into s->wm_values (s->sel
 * is 0..n-1 here; worker.c). */
int sl_worker_eval_watermark(worker_state *s, const sl_buffer *in, uint32_t n);

/* ---- projection (op_project.c): a stateless query's output rows of rows
 * sel[0..n) of in, in batches handed to the coordinator. */
/* op_keep_extremes.c: the rows of b that cannot equal their windows' MAX
 * or MIN (plan->keep_extremes) dropped; nothing without. */
void sl_worker_keep_extremes(worker_state *s, sl_buffer *b);
int sl_worker_project(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                      uint32_t n);

/* ---- partial aggregate (op_partial_aggregate.c): the tmp rows (time,
 * keys, arguments) of rows sel[0..n) of in, folded into this worker's
 * window state or sent to their keys' owners.  (sl_worker_fold_tmp and
 * sl_worker_aggregate_done: worker_int.h.) */
int sl_worker_aggregate(worker_state *s, const sl_buffer *in,
                        const uint32_t *sel, uint32_t n);

/* ---- window state (op_window_state.c): slices and sessions, folded into
 * by sl_worker_fold_row (worker_int.h), handed to the coordinator. */

/* The group key of a tmp row into s->keyrow. */
void sl_worker_key_row_of(worker_state *s, const uint8_t *row);
/* Hand over every window that ends at or before the watermark. */
int sl_worker_hand_over_windows(worker_state *s);
/* Late merge at partition leaders: an epoch ends; hand over what changed. */
int sl_worker_hand_over_epoch(worker_state *s);

/* ---- lookup join (op_lookup_join.c): joined rows of rows sel[0..n) of in
 * into s->joined (their rows in s->sel2[0..*nout)); *consumed: the stream
 * rows done.  pre: their join keys, computed already (from row pre_first
 * of pre), or NULL. */
int sl_worker_probe(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                    uint32_t n, const sl_buffer *pre, uint32_t pre_first,
                    uint32_t *consumed, uint32_t *nout);

/* ---- late records (op_late_records.c) ---- */

/* Session windows under repartitioning: the record read rides in its tmp
 * row to the key's owner. */
void sl_worker_copy_record_into_tmp(worker_state *s, const uint8_t *record,
                                    uint8_t *tmp);
/* Input row i of in, late, to the late table (kept, then written). */
int sl_worker_keep_late_record(worker_state *s, const sl_buffer *in,
                               uint32_t i);
/* The record a tmp row carries (q->partial.tmp_record), late, to the late
 * table. */
int sl_worker_keep_late_tmp_record(worker_state *s, const uint8_t *tmp);
/* Write out the late records kept so far. */
int sl_worker_write_late_rows(worker_state *s);
/* Side-output, a windowed aggregate: take the late records out of s->sel
 * (its first *n rows) into the late table before the pipeline. */
int sl_worker_route_late_records(worker_state *s, const sl_buffer *in,
                                 uint32_t *n);
/* A stream feeding a staged plan's stages: drop the late records from
 * s->sel, folding every row into the watermark. */
int sl_worker_drop_late_rows(worker_state *s, const sl_buffer *in, uint32_t *n);

#endif
