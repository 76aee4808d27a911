/* jit.h - the LLVM JIT: a query's pipeline steps compiled to machine code.
 *
 * What it compiles.  A *kernel* is one loop over the selected rows of an
 * input buffer that evaluates an optional filter predicate and, for every
 * row that passes, a list of output expressions written straight into the
 * rows of an output buffer (typed stores at the layout's offsets, null bits
 * as row.h sets them).  The executor builds, per query, the kernels its
 * pipeline needs: filter + aggregate "tmp" fields (or filter + output
 * fields) fused into one loop; for a lookup join, the stream filter +
 * join keys, and post-join filter + tmp/output fields; the WATERMARK of
 * every source row in the first of those loops.  Kernels are compiled
 * from the interpreter's programs (interpreter.h), whose coercions are
 * explicit and whose columns are resolved, so the JIT computes exactly
 * what the interpreter computes.
 * Phase 2 (sl_jit_add_fold, below) compiles the window state update too
 * for the common window aggregates; the rest of it, and the lookup join's
 * hash probe, stay in C (exec/worker.c).
 *
 * Fallback.  sl_jit_supports() says whether every node of a program
 * compiles to native code and, if not, why ("JIT does not handle
 * REGEXP_REPLACE").  Such a subtree (regexes, DATE_FORMAT, string
 * building, ...) is evaluated by the interpreter from inside the compiled
 * loop, one row at a time, with the caller's expression context; the rest
 * of the pipeline stays compiled, and EXPLAIN names what goes through the
 * interpreter.  At run time a kernel that meets an error (overflow, division by
 * zero, a cast that fails, a full output buffer's string heap) stops and
 * returns SL_JIT_RETRY *without side effects outside its output rows*; the
 * caller then redoes that same step with the interpreter, which gives the
 * exact error message (or handles the full buffer) as it always did.
 *
 * Ownership and threading.  An sl_jit is per query: it owns one ORC LLJIT
 * instance, its LLVM context and the compiled code; kernels live until
 * sl_jit_free.  Building and compiling (sl_jit_new .. sl_jit_compile) is
 * done by one thread, before the workers start; after that, sl_jit_run of
 * the same kernel may be called by any number of threads at once (kernels
 * keep no state: everything per call is on the caller's stack).  The only
 * process-wide state is LLVM's native target initialization, done once
 * behind pthread_once.  The programs a kernel was built from must outlive
 * it (constants and patterns are referenced, not copied).
 */
#ifndef SLUICE_JIT_H
#define SLUICE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/expr/interpreter.h"
#include "sluice/planner/plan.h"
#include "sluice/row/row.h"

/* sl_jit_run: redo this step with the interpreter (positive, so never an
 * SL_E* code; distinct from SL_EXPR_HEAP_FULL). */
#define SL_JIT_RETRY 2

typedef struct sl_jit sl_jit;
typedef struct sl_jit_kernel sl_jit_kernel;

/* true if every node of p can be compiled; otherwise false and a reason in
 * why (why may be NULL). */
bool sl_jit_supports(const sl_expr_prog *p, char *why, size_t whylen);

/* A new, empty JIT with the named optimization pipeline: "default" (or
 * NULL: the chosen one, see jit_engine.c), "O0", "O1", "O2", "O3",
 * "light" or "fast" (SET 'sluice.jit.passes'); or SL_JIT_BROKEN_PASSES,
 * a pipeline LLVM refuses when compiling (SET 'sluice.debug.jit-fail':
 * tests of what happens when LLVM fails). */
#define SL_JIT_BROKEN_PASSES "debug-broken"
int sl_jit_new(sl_jit **out, const char *passes, sl_error *err);
void sl_jit_free(sl_jit *j);
bool sl_jit_pipeline_known(const char *name);

/* One kernel over rows of layout `in`: rows where filter (BOOLEAN, may be
 * NULL) is TRUE get progs[0..nprogs) evaluated into fields 0..nprogs-1 of
 * an output row of layout `out` (a NULL prog leaves its field zero; out
 * may be NULL when nprogs == 0).  borrow: the output buffer is a borrowing
 * one (row.h), so a string column copied unchanged keeps pointing at the
 * input.  Every program must be supported.  *k is valid after
 * sl_jit_compile. */
int sl_jit_add_kernel(sl_jit *j, const sl_expr_prog *filter,
                      sl_expr_prog *const *progs, int nprogs,
                      const sl_row_layout *in, const sl_row_layout *out,
                      bool borrow, sl_jit_kernel **k, sl_error *err);

/* The same with a "pre" expression (may be NULL), evaluated for EVERY row
 * sel[k], before the filter, into field 0 of row k of a second output
 * buffer (sl_jit_run_pre's pre_out, layout pre_layout): the WATERMARK,
 * which counts every source row, in the same loop as the filter.  Its
 * value must not be a string. */
int sl_jit_add_kernel_pre(sl_jit *j, const sl_expr_prog *pre,
                          const sl_row_layout *pre_layout,
                          const sl_expr_prog *filter,
                          sl_expr_prog *const *progs, int nprogs,
                          const sl_row_layout *in, const sl_row_layout *out,
                          bool borrow, sl_jit_kernel **k, sl_error *err);

/* A gate: a C function the loop calls for each row that passed the filter,
 * with the values of two of its integer output programs (a value and an
 * event time); the row goes on to the output only when it returns
 * nonzero.  Its state comes with each run (sl_jit_run_gated), since a
 * kernel is shared by threads and the state is not.  A stream leaf's
 * MAX/MIN pruning is one (exec/op_keep_extremes.c): a bid that cannot be
 * its window's highest is never copied out. */
typedef int32_t (*sl_jit_gate_fn)(void *state, int64_t value,
                                  int32_t value_null, int64_t time,
                                  int32_t time_null);
typedef struct sl_jit_gate {
  sl_jit_gate_fn fn;
  int value_prog, time_prog; /* indexes into progs, each an integer */
  /* Where the gate's quick answer is (running_extremes.h, sl_extremes_bar):
   * bytes from the gate's state, or -1 for none.  A row it drops is not
   * passed to fn. */
  ptrdiff_t bar_offset;
  /* The bar's direction, fixed for the gate's life (sl_extremes_bar's
   * max, which set_bar copies from the stage): true when a row below the
   * bar is dropped (a MAX), false when one above it is (a MIN). */
  bool bar_max;
} sl_jit_gate;

/* sl_jit_add_kernel_pre with a gate (NULL: none); SL_EUNSUPPORTED when its
 * programs are missing or not integers (the caller goes without). */
int sl_jit_add_kernel_gated(sl_jit *j, const sl_expr_prog *pre,
                            const sl_row_layout *pre_layout,
                            const sl_expr_prog *filter, const sl_jit_gate *gate,
                            sl_expr_prog *const *progs, int nprogs,
                            const sl_row_layout *in, const sl_row_layout *out,
                            bool borrow, sl_jit_kernel **k, sl_error *err);

/* A lookup-join kernel: the stream filter, the join keys, the probe of
 * the bounded table's hash table, the post-join filter and the output
 * fields in one loop, with no joined row ever built:
 *
 *   for k in 0..n: row = in[sel[k]]; pre; stream filter;
 *     key row (key_progs; any NULL key: no match); h = sl_key_hash;
 *     for each table row with an equal key, in probe order:
 *       post filter over (row, table row); output fields; sel_out = sel[k]
 *
 * So sel_out[i] is the input row of output row i (one per match).  The
 * post filter and the output programs are compiled over `joined` (stream
 * fields, then table fields: sl_plan_joined_layout).  Join keys must be
 * strings or at most 8 bytes wide (sl_jit_lookup_supported). */
typedef struct sl_jit_lookup {
  sl_expr_prog *const *key_progs; /* over the stream rows */
  int nkeys;
  const sl_row_layout *key_layout;
  const sl_expr_prog *post_filter; /* over joined rows, or NULL */
  const sl_row_layout *joined, *table;
} sl_jit_lookup;

/* The join table, as exec/query_setup.c builds it: open addressing over
 * mask + 1 slots, hash[j] = sl_key_hash of the key (0: empty), slot_row[j]
 * its table row, whose key row (key_layout) is keys[r] and whose row
 * (table layout) is rows[r].  unique: no two rows have equal keys, so a
 * probe stops at its first match.  direct (or NULL): a table with one
 * integer key whose values are unique and dense is also indexed by value,
 * direct[v - direct_lo] the row of key v for v - direct_lo < direct_n, or
 * -1, and probed so instead of by hash. */
typedef struct sl_jit_lookup_table {
  const uint64_t *hash;
  const uint32_t *slot_row;
  uint8_t *const *keys;
  uint8_t *const *rows;
  uint32_t mask;
  uint32_t unique;
  const int32_t *direct;
  int64_t direct_lo;
  uint64_t direct_n;
} sl_jit_lookup_table;

bool sl_jit_lookup_supported(const sl_row_layout *key_layout);
/* NULL if the pipeline of plan p (compiled at all) has its lookup join
 * probed in a lookup kernel, else why not (EXPLAIN and the executor). */
const char *sl_jit_lookup_status(const sl_plan *p);

int sl_jit_add_lookup_kernel(sl_jit *j, const sl_expr_prog *pre,
                             const sl_row_layout *pre_layout,
                             const sl_expr_prog *filter,
                             const sl_jit_lookup *lookup,
                             sl_expr_prog *const *progs, int nprogs,
                             const sl_row_layout *in, const sl_row_layout *out,
                             bool borrow, sl_jit_kernel **k, sl_error *err);

/* sl_jit_run_pre for a lookup kernel over table t.  A row whose matches do
 * not all fit in out is not started (*next is that row).  *passed: rows
 * that passed the stream filter (when every row was done). */
int sl_jit_run_lookup(const sl_jit_kernel *k, const sl_jit_lookup_table *t,
                      const sl_buffer *in, const uint32_t *sel, uint32_t n,
                      uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
                      sl_buffer *pre_out, uint32_t *next, uint32_t *passed,
                      sl_expr_ctx *ctx);

/* Optimize and compile every kernel added so far (once; no kernel can be
 * added after).  ir (may be NULL): receives the optimized IR as a malloc'd
 * string (free it). */
int sl_jit_compile(sl_jit *j, char **ir, sl_error *err);

/* Seconds spent building IR, optimizing and generating code so far. */
double sl_jit_seconds(const sl_jit *j);

/* Run kernel k over rows sel[0..n) of in.  Rows that pass the filter are
 * counted in *nout; with a filter their indexes go to sel_out[0..*nout)
 * (sel_out may be sel itself); with outputs, their output rows are appended
 * to out (zeroed first).  Stops early when out has no room for another row
 * (long strings included): *next is the position in sel to continue from
 * (n when all were done).  Returns SL_OK, or SL_JIT_RETRY (see above)
 * with out unchanged.  ctx: the calling thread's expression context, for
 * the subtrees the kernel interprets (may be NULL when there are none:
 * such a row then goes back to the interpreter). */
int sl_jit_run(const sl_jit_kernel *k, const sl_buffer *in, const uint32_t *sel,
               uint32_t n, uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
               uint32_t *next, sl_expr_ctx *ctx);
/* The same for a kernel with a pre expression: pre_out gets rows 0..n
 * (cleared first; SL_JIT_RETRY if they do not fit).  When the kernel stops
 * early (*next < n), pre_out's rows are not all there: pre_out->nrows is
 * set to n only when *next == n. */
int sl_jit_run_pre(const sl_jit_kernel *k, const sl_buffer *in,
                   const uint32_t *sel, uint32_t n, uint32_t *sel_out,
                   uint32_t *nout, sl_buffer *out, sl_buffer *pre_out,
                   uint32_t *next, sl_expr_ctx *ctx);
/* The same for a gated kernel, its gate called with gate_state (a gated
 * kernel run without one, or by sl_jit_run_pre: SL_JIT_RETRY). */
int sl_jit_run_gated(const sl_jit_kernel *k, const sl_buffer *in,
                     const uint32_t *sel, uint32_t n, uint32_t *sel_out,
                     uint32_t *nout, sl_buffer *out, sl_buffer *pre_out,
                     uint32_t *next, void *gate_state, sl_expr_ctx *ctx);

/* ---- plans ----------------------------------------------------------------
 * The rows a plan's pipeline runs over, shared by the executor (which runs
 * it) and EXPLAIN (which says whether it would be compiled). */

/* The layout of the leaves of input j the plan reads, in the plan's order
 * (also the source spec's leaf_index). */
const sl_row_layout *sl_plan_input_layout(sl_arena *a, const sl_plan *plan,
                                          int j);
/* column_map (interpreter.h) over base columns for a layout made of input
 * layouts concatenated: input j's fields start at field_base[j] (-1:
 * absent). */
int *sl_plan_column_map(sl_arena *a, const sl_plan *plan,
                        const sl_row_layout *const *in_layouts,
                        const int *field_base);

/* Stream fields, then table fields: the rows after a lookup join. */
const sl_row_layout *sl_plan_joined_layout(sl_arena *a,
                                           const sl_row_layout *stream,
                                           const sl_row_layout *table);

/* Whether the pipeline of plan p runs compiled: NULL if so, otherwise the
 * reason it runs interpreted ("sluice.jit = off"), in a. */
const char *sl_jit_plan_status(sl_arena *a, const sl_plan *p, bool jit_on);
/* What of a compiled pipeline the compiled code hands to the interpreter
 * per row ("REGEXP_EXTRACT, DATE_FORMAT"), or NULL: nothing. */
const char *sl_jit_plan_interpreted(sl_arena *a, const sl_plan *p);

/* ---- phase 2: the fold of tmp rows into window state ----------------------
 * One compiled function per query that does, for a batch of tmp rows, what
 * sl_worker_fold_row (exec/worker.c) does for each: advance the
 * watermark over the input rows before it, lateness, slice, key hash (equal
 * to sl_key_hash), the probe of the slice's group table and, on a hit, the
 * aggregate updates inline; a new group is inserted by a direct call to
 * sl_group_table_upsert.  Anything rare (another slice than the last one,
 * a NULL event time, an integer SUM overflow) stops
 * the loop *before touching that row* and returns SL_JIT_RETRY with pos at
 * it: the caller folds that row with sl_worker_fold_row (which reports
 * errors exactly as the interpreter path does) and calls again from
 * pos + 1.  Only for late-merge event-time TUMBLE/HOP windows whose keys
 * are not DECIMAL(>18) (strings are hashed and compared by content, as
 * group_table.c does) and whose aggregates are
 * COUNT(*), COUNT, SUM, AVG, MIN, MAX without DISTINCT over integer or
 * floating arguments (sl_jit_fold_status). */

struct sl_group_table;
struct sl_agg_set;

/* What the fold function reads and updates (C fills, the code reads at
 * offsetof() offsets). */
typedef struct sl_jit_fold_call {
  const uint8_t *tmp;           /* tmp rows */
  const uint32_t *sel;          /* tmp row r comes from row sel[r] */
  const uint32_t *origin;       /* NULL, or sel -> input row (a join) */
  const uint8_t *wm_rows;       /* WATERMARK per input row, or NULL */
  struct sl_group_table *table; /* the slice last used, or NULL */
  int64_t slice_start;          /* its start */
  int64_t local_wm;             /* in/out: the worker's watermark */
  int64_t next_end;             /* in/out */
  uint64_t late, rows_state;    /* out: added to */
  uint32_t pos, n;              /* in: first row; out: where it stopped */
  uint32_t wm_next, wm_nrows;   /* in/out: first input row not folded */
} sl_jit_fold_call;

typedef struct sl_jit_fold_spec {
  const sl_plan_window *window;
  const sl_row_layout *tmp; /* layout of the tmp rows (= aggs->input) */
  int tmp_time, tmp_keys;   /* fields: event time, first key */
  const sl_row_layout *key_layout;
  const struct sl_agg_set *aggs;
  const sl_row_layout *wm_layout; /* WATERMARK rows, or NULL */
} sl_jit_fold_spec;

/* NULL if plan p's state update can be compiled, else why not. */
const char *sl_jit_fold_status(const sl_plan *p);

/* Add the fold function for spec (everything it points to must outlive
 * the JIT).  *k is valid after sl_jit_compile. */
int sl_jit_add_fold(sl_jit *j, const sl_jit_fold_spec *spec, sl_jit_kernel **k,
                    sl_error *err);

/* Run it from c->pos: SL_OK when every row up to c->n is done, or
 * SL_JIT_RETRY with c->pos at the row C must fold (see above). */
int sl_jit_fold_run(const sl_jit_kernel *k, sl_jit_fold_call *c);

/* ---- repartition: the owner of each tmp row ------------------------------
 * One compiled function per query that computes, for a batch of tmp rows,
 * the exchange member owning each row's key: (sl_key_hash of the key row
 * >> 32) % owners, exactly as exec/worker.c does in C.  For aggregates
 * that repartition (sl_jit_route_status NULL); the copy into the
 * outgoing slot stays a memcpy in C. */

const char *sl_jit_route_status(const sl_plan *p);

/* spec's tmp, tmp_keys and key_layout are used (they must outlive the
 * JIT); owners > 0. */
int sl_jit_add_route(sl_jit *j, const sl_jit_fold_spec *spec, int owners,
                     sl_jit_kernel **k, sl_error *err);

/* dest[r] for tmp rows 0..n of the buffer at tmp. */
void sl_jit_route_run(const sl_jit_kernel *k, const uint8_t *tmp, uint32_t n,
                      uint32_t *dest);

#endif
