/* functions.h - the registry of built-in functions.
 *
 * Sluice has built-in functions only (no UDFs).  The registry is one
 * process-wide, read-only table (the only global in the front end): for each
 * function its name, kind, arity, a rule that checks the argument types and
 * computes the result type, and a one-line description for SHOW FUNCTIONS
 * and the shell's help.  Aggregates also say which conflict-free replicated
 * state their partial results have, because the planner's "late merge"
 * strategy is only possible when every aggregate's state is mergeable.
 *
 * The binder uses the registry to resolve calls; it does not evaluate
 * anything (the runtime implements the functions by name).
 *
 * Ownership: entries are static and live for the whole process.  Types
 * returned by a return-type rule are allocated in the caller's arena.
 */
#ifndef SLUICE_FUNCTIONS_H
#define SLUICE_FUNCTIONS_H

#include <stdbool.h>

#include "sluice/common/arena.h"
#include "sluice/common/types.h"

typedef enum sl_function_kind {
  SL_FN_SCALAR,     /* MOD, UPPER, DATE_FORMAT, ... */
  SL_FN_AGGREGATE,  /* COUNT, SUM, AVG, MIN, MAX (also usable with OVER) */
  SL_FN_WINDOW,     /* ROW_NUMBER, RANK, DENSE_RANK: only with OVER (...) */
  SL_FN_WINDOW_TVF, /* TUMBLE, HOP, CUMULATE, SESSION: TABLE(f(TABLE t, ...))
                     * and, for TUMBLE/HOP/SESSION, the legacy group window
                     * GROUP BY f(ts, ...) */
  SL_FN_GROUP_AUX,  /* TUMBLE_START, HOP_END, SESSION_ROWTIME, ...: a
                     * property of the GROUP BY group window */
} sl_function_kind;

/* The partial state of an aggregate, as a CRDT (see the design brief):
 * whether and how partial results computed on different nodes merge. */
typedef enum sl_agg_state {
  SL_AGG_STATE_NONE = 0,      /* not an aggregate */
  SL_AGG_STATE_COUNTER,       /* COUNT, SUM: per-node counter vector, merged by
                               * per-slot max */
  SL_AGG_STATE_SEMILATTICE,   /* MIN, MAX: merge = min/max */
  SL_AGG_STATE_SUM_COUNT,     /* AVG: a (sum, count) pair of counters */
  SL_AGG_STATE_GSET,          /* DISTINCT aggregates, holistic state: a
                               * grow-only set, merge = union */
  SL_AGG_STATE_NOT_MERGEABLE, /* only exact per-key state works: the planner
                               * must repartition */
} sl_agg_state;

/* Which property of a group window an SL_FN_GROUP_AUX function returns. */
typedef enum sl_window_prop {
  SL_WPROP_START,
  SL_WPROP_END,
  SL_WPROP_ROWTIME,
  SL_WPROP_PROCTIME,
} sl_window_prop;

/* The window kinds (window TVFs and legacy group windows). */
typedef enum sl_window_kind {
  SL_WINDOW_TUMBLE,
  SL_WINDOW_HOP,
  SL_WINDOW_CUMULATE,
  SL_WINDOW_SESSION,
} sl_window_kind;

/* Result of a return-type rule that rejects its arguments. */
typedef struct sl_fn_check {
  int bad_arg;         /* index of the offending argument, or -1 */
  const char *message; /* arena string without the function name or
                        * position: "expects exact numeric arguments, got
                        * VARCHAR" (the binder prefixes the name) */
} sl_fn_check;

/* Computes the result type from the argument types (nargs already checked
 * against min_args/max_args), or returns NULL and fills *chk.  args[i] is
 * never NULL; a NULL literal has kind SL_TYPE_NULL. */
typedef sl_type *(*sl_return_type_fn)(sl_arena *a, int nargs,
                                      const sl_type *const *args,
                                      sl_fn_check *chk);

typedef struct sl_function {
  const char *name; /* canonical, upper case */
  sl_function_kind kind;
  int min_args;
  int max_args;                  /* -1: variadic */
  sl_return_type_fn return_type; /* NULL for SL_FN_WINDOW_TVF (the binder
                                  * types window TVFs itself) */
  const char *signature;   /* "MOD(a INT|BIGINT, b INT|BIGINT)" for help */
  const char *description; /* one line */
  sl_agg_state state;      /* aggregates: state without DISTINCT */
  /* SL_FN_WINDOW_TVF and SL_FN_GROUP_AUX: which window; GROUP_AUX: which
   * property. */
  sl_window_kind window;
  sl_window_prop prop;
} sl_function;

/* Lookup by name, case-insensitive.  NULL if there is no such function. */
const sl_function *sl_function_find(const char *name);

/* All functions in name order (for SHOW FUNCTIONS and completion). */
int sl_function_count(void);
const sl_function *sl_function_at(int i);

/* The closest function name to `name` (edit distance), or NULL. */
const char *sl_function_suggest(const char *name);

/* The state class of an aggregate call: GSET when DISTINCT, else fn->state. */
sl_agg_state sl_function_agg_state(const sl_function *fn, bool distinct);

/* "counter", "semilattice", "sum+count", "grow-only set", "not mergeable",
 * "" for NONE. */
const char *sl_agg_state_name(sl_agg_state s);

/* "TUMBLE", "HOP", "CUMULATE", "SESSION". */
const char *sl_window_kind_name(sl_window_kind k);

/* Edit distance (Levenshtein, case-insensitive) used for every "did you
 * mean" suggestion; and the pick of the closest candidate, or NULL if none
 * is close enough (distance <= max(1, len/3)). */
int sl_edit_distance(const char *a, const char *b);
const char *sl_closest_name(const char *name, const char *const *candidates,
                            int n);

#endif
