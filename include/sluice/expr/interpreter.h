/* interpreter.h - the vectorized expression interpreter.
 *
 * Evaluates bound scalar expressions (sl_bexpr, binder.h) over buffers of
 * fixed-width rows (row.h).  It is the reference semantics of Sluice: the
 * JIT (issue 5) is tested against it, so every corner case decided here
 * (overflow, rounding, NULLs, string functions) is THE behaviour.
 *
 * Two steps:
 *   sl_expr_compile   once per query: the bound tree becomes a program with
 *                     explicit coercions (INT + BIGINT, DECIMAL * BIGINT,
 *                     DATE vs TIMESTAMP ...), resolved column offsets,
 *                     pre-compiled LIKE patterns, regexes and DATE_FORMAT
 *                     patterns when they are constants.
 *   sl_expr_filter /  per buffer: the program runs column-at-a-time over
 *   sl_expr_eval_into vectors of up to SL_EXPR_VECTOR rows, never a tree walk
 *                     per row.
 *
 * Input columns.  SL_BEXPR_COLUMN index i reads layout field column_map[i]
 * (the executor decides where bound columns live).  A ROW column is
 * flattened by the executor into one field per leaf; a FIELD chain over a
 * COLUMN (bid.price, person.address.city) is resolved BY NAME: the
 * interpreter builds "<column name>.<field>[.<field>...]" from the
 * bexpr's names and looks for a layout field with exactly that name
 * (sl_field.name).  When the executor's layout uses other names, it passes a
 * resolver to sl_expr_compile_ex instead.
 *
 * Not handled here (compile returns an error): GROUP_REF, AGG_REF,
 * WINDOW_REF, WINDOW_PROP (SL_EINTERNAL: the executor rewrites
 * post-aggregation expressions into COLUMN references over its own layout
 * first); SUBQUERY (SL_EUNSUPPORTED); correlated columns (depth > 0) and
 * whole ROW values (SL_EUNSUPPORTED).
 *
 * Semantics (documented where they differ from, or are finer than, Flink):
 *   - three-valued logic; NULL in -> NULL out for operators and functions
 *     (except COALESCE, CONCAT_WS, IS, AND/OR, CASE, IF, NULLIF);
 *   - AND, OR, CASE, IF, COALESCE evaluate their later operands only for
 *     the rows that need them, so CASE WHEN b <> 0 THEN a / b END is safe;
 *   - integer overflow in arithmetic, ABS, negation and narrowing CASTs is
 *     an error (SL_EINVAL "integer overflow in (a + b)"), checked against
 *     the result type's range (TINYINT..BIGINT); integer and DECIMAL
 *     division or MOD by zero is an error; DOUBLE follows IEEE;
 *   - DECIMAL arithmetic is exact in 128 bits, rounded HALF_UP to the bound
 *     result type's scale; a result beyond its precision is an error
 *     ("decimal overflow");
 *   - strings compare by bytes (UTF-8 binary order); lengths, positions,
 *     SUBSTRING, LEFT/RIGHT, LPAD/RPAD count code points; UPPER/LOWER
 *     change ASCII letters only (other UTF-8 passes through unchanged);
 *   - time zone: UTC everywhere (TIMESTAMP_LTZ is stored in UTC and
 *     formatted as UTC until the session gets a time zone setting);
 *   - regular expressions are PCRE2 (close to Java's syntax); a constant
 *     invalid pattern is a compile error, a non-constant one that does not
 *     compile gives NULL (as Flink does);
 *   - REGEXP_EXTRACT(s, re) returns group 0 (the whole match, as Flink's
 *     SqlFunctionUtils.regexpExtract); no match or a bad group index -> NULL;
 *   - PROCTIME(), NOW(), CURRENT_TIMESTAMP, LOCALTIMESTAMP read
 *     CLOCK_REALTIME once per call of filter/eval_into.
 *
 * Ownership and threading.  A program lives in the arena passed to compile
 * (it points into the bound tree too: keep both alive while it is used) and
 * is immutable after compile: any number of threads may run it at once,
 * each with its own sl_expr_ctx.  A context is per worker thread (scratch
 * vectors, a per-batch string arena, PCRE2 match data, a small cache of
 * compiled non-constant regexes); it is reset by every call, needs no
 * locks, and must not be shared between threads.  Nothing is allocated per
 * row: the context grows its scratch to the largest batch seen.
 */
#ifndef SLUICE_INTERPRETER_H
#define SLUICE_INTERPRETER_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/binder/binder.h"
#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/row/row.h"

/* Rows per vector: evaluation proceeds this many rows at a time. */
#define SL_EXPR_VECTOR 1024

/* Returned by sl_expr_eval_into when the output buffer's string heap cannot
 * hold the long strings of the requested rows.  Nothing of this call stays
 * in the heap (heap_used is restored); rows before out_first_row are
 * untouched.  The caller flushes (or evaluates fewer rows) and retries.
 * Positive so that it is never mistaken for an SL_E* error code. */
#define SL_EXPR_HEAP_FULL 1

typedef struct sl_expr_prog sl_expr_prog;
typedef struct sl_expr_ctx sl_expr_ctx;

/* Maps a FIELD chain over a ROW column to a layout field: column is the
 * bound column index, path[0..depth) the field indexes from the outermost
 * ROW inwards.  Returns the layout field index, or -1 if it is not there. */
typedef int (*sl_expr_field_resolver)(void *arg, int column, const int *path,
                                      int depth);

/* Compile e over rows of layout `input`.  column_map[i] is the layout field
 * of bound column i (-1: not present, e.g. a flattened ROW column; only
 * FIELDs of it may be used).  input and column_map may be NULL for an
 * expression without columns (constant folding).  On success *out lives in
 * a. */
int sl_expr_compile(sl_arena *a, const sl_bexpr *e, const sl_row_layout *input,
                    const int *column_map, sl_expr_prog **out, sl_error *err);

/* The same with an explicit FIELD resolver (NULL: by name, see above). */
int sl_expr_compile_ex(sl_arena *a, const sl_bexpr *e,
                       const sl_row_layout *input, const int *column_map,
                       sl_expr_field_resolver resolve, void *resolve_arg,
                       sl_expr_prog **out, sl_error *err);

/* The SQL result type of the program (the bound expression's type). */
const sl_type *sl_expr_type(const sl_expr_prog *p);
/* How many nodes the program has (what the JIT would generate code for). */
int sl_expr_nodes(const sl_expr_prog *p);

/* A per-worker evaluation context (heap).  Never returns NULL (aborts on
 * out of memory like the arena). */
sl_expr_ctx *sl_expr_ctx_new(void);
void sl_expr_ctx_free(sl_expr_ctx *c);

/* The clock (NOW(), CURRENT_TIMESTAMP, PROCTIME(), UNIX_TIMESTAMP()) read
 * once for every program evaluated until unpinned: the several programs
 * of one batch's rows (a select list, the JIT's subtrees run through the
 * interpreter) see one instant, so CURRENT_TIMESTAMP = NOW() holds.
 * Unpinned, each evaluation reads it anew. */
void sl_expr_ctx_pin_now(sl_expr_ctx *c);
void sl_expr_ctx_unpin_now(sl_expr_ctx *c);

/* Keep the rows where the BOOLEAN predicate p is TRUE.  On entry
 * sel[0..*nsel) are candidate row indexes of `in` (any order, any subset);
 * on return sel[0..*nsel) are those for which p is TRUE, in the same order
 * (NULL and FALSE drop).  On error *nsel is unspecified. */
int sl_expr_filter(const sl_expr_prog *p, const sl_buffer *in, uint32_t *sel,
                   uint32_t *nsel, sl_expr_ctx *ctx, sl_error *err);

/* Evaluate p for rows sel[0..nsel) of `in` and store the value of row
 * sel[k] into field out_field of row out_first_row + k of `out`, with its
 * null bit.  The rows must already exist (out->nrows >= out_first_row +
 * nsel), so that the string heap's room check accounts for them.  The out
 * field's physical type must be the expression type's (sl_ptype_of); long
 * strings are copied into out's heap.  Returns SL_OK, SL_EXPR_HEAP_FULL
 * (see above), or an SL_E* error. */
int sl_expr_eval_into(const sl_expr_prog *p, const sl_buffer *in,
                      const uint32_t *sel, uint32_t nsel, sl_buffer *out,
                      uint32_t out_first_row, int out_field, sl_expr_ctx *ctx,
                      sl_error *err);

/* One value, for the scalar entry point.  Which member holds it follows
 * the physical type of `type`: i64 for BOOLEAN, integers, DATE (days), TIME
 * (ms), TIMESTAMP (microseconds), intervals (ms / months); f64 for FLOAT and
 * DOUBLE; dec (unscaled, scale = type->scale) for DECIMAL; str for strings
 * (its bytes live in the context until its next call, or in the row). */
typedef struct sl_expr_value {
  const sl_type *type;
  bool null;
  int64_t i64;
  double f64;
  __int128 dec;
  sl_str str;
} sl_expr_value;

/* Evaluate p on row `row` of `in` (in may be NULL for a program without
 * columns: constant folding). */
int sl_expr_eval_row(const sl_expr_prog *p, const sl_buffer *in, uint32_t row,
                     sl_expr_value *out, sl_expr_ctx *ctx, sl_error *err);

#endif
