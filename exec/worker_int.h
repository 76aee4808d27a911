/* worker_int.h - a worker thread's private state, shared by worker.c (the
 * driver), its operators (op_*.c, worker_ops_int.h) and exchange.c
 * (repartitioning between workers).  Internal to exec/. */
#ifndef SLUICE_WORKER_INT_H
#define SLUICE_WORKER_INT_H

#include <time.h>

#include "executor_int.h"
#include "sluice/state/running_extremes.h"
#include "sluice/state/session_store.h"

typedef struct slice {
  int64_t start;
  sl_group_table *table;
} slice;

typedef struct worker_state {
  worker *w;
  exec_query *q;
  const sl_plan *plan;
  sl_expr_ctx *ctx;
  int64_t wm;       /* this worker's watermark */
  int64_t next_end; /* smallest window end not yet handed over (WM_MAX:
                     * none) */
  int nslices, cap;
  slice *slices;               /* sorted by start */
  int last;                    /* index of the slice used last (a cache) */
  uint32_t last_window_groups; /* groups of the last HOP/CUMULATE window
                                * merged from slices (sizes the next) */
  uint32_t last_slice_groups;  /* groups of the last slice let go (sizes a
                                * new one, with its neighbours') */
  session_store *sessions;     /* session windows */
  /* The table's WATERMARK is computed over every row the source produced,
   * before any filter (as Flink computes it at the source): wm_values holds
   * it per input row, wm_next is the first input row not yet folded into
   * wm, and origin maps the rows given to aggregate() to input rows. */
  sl_buffer wm_values;
  uint32_t wm_next;
  /* plan->keep_extremes: the MAX or MIN so far of this worker's rows per
   * window (op_keep_extremes.c) */
  sl_running_extremes extremes;
  sl_buffer rowtimes; /* q->late.rowtime_prog's values per input row */
  /* Late records to a table (q->late.output): the buffer's late records waiting
   * to be written (whole input rows), the candidates' input rows, and
   * wm_ready: this buffer's watermark values were evaluated already (the
   * pipeline then writes its own into wm_scratch, unread). */
  sl_buffer late_rows;
  uint32_t *late_sel;
  /* Session windows: the source buffer being processed and the input row
   * of the record being folded, so that a record sl_worker_fold_row finds
   * late can be written whole (under repartitioning the owner finds it in
   * the tmp row, exec_query.partial.tmp_record, where the reader copied it). */
  const sl_buffer *late_in;
  uint32_t late_input_row;
  uint8_t *late_record; /* a row of stream_layout (keep_late_tmp_record) */
  bool wm_ready;
  sl_buffer wm_scratch;
  const uint32_t *origin; /* NULL: rows are input rows */
  uint32_t *joined_origin;
  /* Late merge: wm is this worker's watermark over its own input.
   * Repartition: local_wm is that, and wm (the operator's) is the minimum
   * of input_wm[], the latest watermark seen from each worker (itself
   * included), as a Flink operator takes the minimum over its inputs. */
  int64_t local_wm;
  int64_t *input_wm;
  bool *input_done;
  sl_buffer *out_slots; /* per destination: the slot being filled */
  bool *out_active;
  int64_t *sent_wm; /* per destination: local_wm when last published */
  uint64_t noise;   /* state of the exchange-delay test knob's generator */
  sl_buffer joined, tmp;
  sl_buffer keys; /* join keys of the filtered rows (q->jit.k_join) */
  uint32_t *sel, *sel2;
  /* Window rows: per input row of the buffer, the end of its first window
   * that had not fired when it came (WM_MIN: its first window), written
   * into the leaf's hidden last column; partly_late says some row of the
   * buffer has one (the buffer then takes the interpreted path, which
   * knows which input row each output row is). */
  int64_t *live_from;
  bool partly_late;
  uint32_t *dest; /* repartition: the owner of each tmp row (k_route) */
  uint32_t *ident, nident; /* 0, 1, ...: a selection of every row */
  uint32_t *jsel; /* rows a JIT kernel kept (the input sel stays intact for
                   * the interpreter, should the kernel hand back) */
  uint8_t *keyrow;
  /* The coordinator is woken (sl_exec_signal) only when there is news for
   * it: something published since the last signal, or this worker's
   * watermark entered another slice (a window may be due).  Waking it
   * after every buffer cost a quarter of a compiled pipeline's time in
   * context switches. */
  bool news;
  int64_t signalled_wm;
  uint64_t epoch_in;       /* input bytes since this worker's last epoch */
  uint64_t epoch_rows_in;  /* ... input rows */
  double epoch_began;      /* ... when it began (sl_clock_seconds) */
  uint64_t memory_charged; /* the state last reported to q->memory */
  /* Idle sources (q->source.idle_timeout): when the source last gave rows, and
   * the worker's own watermark then. */
  double rows_at;
  int64_t wm_at_rows;
} worker_state;

static inline int64_t sl_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* For the compiled steps: the watermark over input rows before `upto`
 * (worker.c); fold (or send to their owners) the tmp rows of s->tmp, tmp
 * row r from row sel[r] of the buffer, and what follows a buffer's rows
 * folded (op_partial_aggregate.c). */
void sl_worker_advance_watermark(worker_state *s, uint32_t upto);
void sl_worker_fold_watermark_rows(worker_state *s, const sl_buffer *wm,
                                   uint32_t n);
int sl_worker_fold_tmp(worker_state *s, const uint32_t *sel);
void sl_worker_aggregate_done(worker_state *s);

/* The compiled steps (worker_compiled.c); SL_JIT_RETRY: handed back, do the
 * step with the interpreter.  fold_tmp with q->jit.k_fold; q->jit.k_main over
 * rows sel[0..n) of buf (then the fold, or the batches; *kept: rows that passed
 * the filter); q->jit.k_lookup over input rows 0..n (the join probed in the
 * loop, then the fold). */
int sl_worker_fold_tmp_compiled(worker_state *s, const uint32_t *sel);
/* The rows one slot of sender p brought (view: tmp rows), by the compiled
 * fold; *sender_wm rises to their senders' watermarks (exchange.c). */
int sl_worker_fold_received_compiled(worker_state *s, const sl_buffer *view,
                                     int64_t *sender_wm);
int sl_worker_jit_main(worker_state *s, const sl_buffer *buf,
                       const uint32_t *sel, uint32_t n, sl_buffer *wm_out,
                       uint64_t *kept);
int sl_worker_jit_lookup(worker_state *s, const sl_buffer *in, uint32_t n,
                         sl_buffer *wm_out);

/* Fold one tmp row into this worker's state (op_window_state.c). */
int sl_worker_fold_row(worker_state *s, const uint8_t *row, int64_t late_wm,
                       int64_t proc_now);
/* The same, given the hash of its key (sl_worker_fold_ahead's). */
int sl_worker_fold_row_hashed(worker_state *s, const uint8_t *row,
                              int64_t late_wm, int64_t proc_now, uint64_t hash);
/* A tmp row about to be folded: the hash of its key, with the group-table
 * slot it will land in prefetched when its slice's table is the one in
 * use.  With a million groups a fold is a cache miss; asked for
 * SL_FOLD_AHEAD rows early, the misses overlap.  (Uses s->keyrow.) */
#define SL_FOLD_AHEAD 8
uint64_t sl_worker_fold_ahead(worker_state *s, const uint8_t *row);
/* Whether that pays: the table in use is larger than the caches keep
 * (a small one costs a second key row per record for nothing). */
bool sl_worker_fold_ahead_pays(const worker_state *s);

/* Repartition (exchange.c): send a tmp row to the worker owning its key;
 * publish the slot being filled for dest; fold what other workers sent
 * here (*got: anything arrived or an input ended) and update s->wm, the
 * minimum of the inputs' watermarks. */
int sl_exchange_send(worker_state *s, int dest, const uint8_t *row);
int sl_exchange_flush(worker_state *s, int dest, bool even_empty);
int sl_exchange_drain(worker_state *s, bool *got);

#endif
