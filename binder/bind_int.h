/* bind_int.h - what the binder's source files share (internal to parser/).
 *
 * The binder is split by purpose: bind.c (entry point, simple statements),
 * bind_ddl.c (CREATE), bind_query.c (queries and SELECT blocks),
 * bind_from.c (FROM clauses), bind_expr.c (expressions), bind_names.c
 * (column names and fields),
 * bind_window.c (window TVFs, group windows, aggregation checks),
 * bind_types.c (typing rules), bind_format.c (printing bound expressions).
 */
#ifndef SLUICE_BIND_INT_H
#define SLUICE_BIND_INT_H

#include "sluice/binder/binder.h"
#include "sluice/catalog/catalog.h"
#include "sluice/catalog/functions.h"
#include "sluice/catalog/type_rules.h"

/* Views and CTEs nest; a cycle (or absurd nesting) stops here. */
#define SL_BIND_MAX_DEPTH 32

/* CTEs visible at a point: innermost first.  A CTE's own body sees only the
 * CTEs declared before it (WITH is not recursive in Flink). */
typedef struct sl_cte_env {
  struct sl_cte_env *parent;
  const sl_cte *cte;
  struct sl_cte_env *visible; /* the environment its body is bound in */
} sl_cte_env;

/* The columns an expression can name: a FROM clause's output row, plus the
 * enclosing blocks' rows for correlated subqueries. */
typedef struct sl_scope {
  struct sl_scope *parent;
  int ncols;
  sl_bcolumn *cols;
  const bool *hidden; /* per column: not nameable here (or NULL) */
  const char *table;  /* the single table in scope, for messages, or NULL */
} sl_scope;

/* Aggregates and window functions collected while binding one SELECT. */
typedef struct sl_block {
  int naggs, aggs_cap;
  sl_bagg *aggs;
  int nwindows, windows_cap;
  sl_bwinfunc *windows;
} sl_block;

/* Where an expression is, deciding what it may contain. */
typedef struct sl_ectx {
  sl_scope *scope;
  const char *clause; /* "WHERE", "GROUP BY", ... for messages */
  sl_block *block;    /* where aggregates / window functions go */
  bool allow_agg;
  bool allow_window;
  const char *in_agg; /* the enclosing aggregate (nested aggregate error) */
} sl_ectx;

typedef struct sl_binder {
  sl_arena *a;
  const sl_catalog *cat;
  const char *text; /* the text spans refer to */
  int first_line;
  sl_error *err;
  sl_cte_env *ctes;
  int depth; /* view / CTE expansion depth */
  /* expressions being bound, views and subqueries included: bounds the
   * binder's recursion (SL_MAX_BIND_DEPTH) */
  int expr_depth;
} sl_binder;

/* Errors: position from a span; always return the code. */
int sl_bind_error(sl_binder *b, sl_span span, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The source text of a span (arena copy), or NULL if unknown. */
const char *sl_bind_span_text(sl_binder *b, sl_span span);
/* An AST expression as SQL for messages, always in parentheses when it is
 * an operation: "(B.channel = 5)". */
const char *sl_bind_expr_sql(sl_binder *b, const sl_expr *e);
/* A qname as written ("B.price"). */
const char *sl_bind_qname_sql(sl_binder *b, const sl_qname *q);

/* Arena-backed growable arrays. */
void *sl_bind_grow(sl_arena *a, void *items, int n, int *cap, size_t size);
#define SL_BIND_PUSH(a, arr, n, cap, value)                                    \
  do {                                                                         \
    (arr) = sl_bind_grow((a), (arr), (n), &(cap), sizeof(*(arr)));             \
    (arr)[(n)++] = (value);                                                    \
  } while (0)

/* ---- expressions (bind_expr.c) ------------------------------------------ */
int sl_bind_expr(sl_binder *b, sl_ectx *cx, const sl_expr *e, sl_bexpr **out);
/* Bind and require a BOOLEAN: "WHERE must be BOOLEAN, got BIGINT". */
int sl_bind_condition(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                      sl_bexpr **out);
sl_bexpr *sl_bexpr_new(sl_binder *b, sl_bexpr_kind kind, sl_type *type,
                       sl_span span);
sl_bexpr *sl_bexpr_column(sl_binder *b, const sl_scope *s, int index, int depth,
                          sl_span span);
bool sl_bexpr_equal(const sl_bexpr *x, const sl_bexpr *y);
/* Is e a constant INTERVAL (after binding)?  *ms gets its value. */
bool sl_bexpr_interval_ms(const sl_bexpr *e, int64_t *ms);
/* Resolve a column path (qname) in scope.  Fills *out (COLUMN / FIELD
 * chain); returns SL_OK, or an error; *not_found is set (when not NULL)
 * instead of failing when no column of that name exists at all. */
int sl_bind_column_ref(sl_binder *b, sl_scope *scope, const sl_qname *q,
                       sl_bexpr **out, bool *not_found);
/* Apply the field accesses q->parts[from..] to e (ROW columns). */
int sl_bind_fields(sl_binder *b, const sl_qname *q, int from, sl_bexpr *e,
                   sl_bexpr **out);
/* The output name Flink derives for a select item (alias, column or field
 * name, or EXPR$i). */
const char *sl_bind_derive_name(sl_binder *b, const sl_expr *e, int i);

/* ---- queries (bind_query.c) --------------------------------------------- */
/* parent: the scope of the enclosing block (correlated subqueries), or
 * NULL. */
int sl_bind_query(sl_binder *b, const sl_query *q, sl_scope *parent,
                  sl_bquery **out);
/* Make the output names unique the way Calcite does (x, x0, x1, ...). */
void sl_bind_uniquify(sl_binder *b, int n, sl_bcolumn *cols);

/* ---- FROM (bind_from.c) -------------------------------------------------- */
int sl_bind_from(sl_binder *b, const sl_table_ref *t, sl_scope *outer,
                 sl_bfrom **out);
/* Look up a table or view by (possibly qualified) name: its catalog entry,
 * or an "unknown table" error.  code is SL_EBIND in queries, SL_ECATALOG in
 * DDL. */
int sl_bind_find_table(sl_binder *b, const sl_qname *q, int code,
                       const sl_table_def **out);
/* The bound scan of a connector table, with computed columns and watermark
 * bound. */
int sl_bind_scan(sl_binder *b, const sl_table_def *def, const char *alias,
                 sl_span span, sl_bfrom **out);
/* The error text for a column that should be a time attribute. */
const char *sl_bind_time_attr_problem(sl_binder *b, const char *fn,
                                      const sl_bcolumn *col, const char *table);

/* ---- windows and aggregation (bind_window.c) ---------------------------- */
int sl_bind_window_tvf(sl_binder *b, const sl_table_ref *t, sl_scope *outer,
                       sl_bfrom **out);
/* GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts, gap). */
int sl_bind_group_window(sl_binder *b, sl_ectx *cx, const sl_expr *call,
                         const sl_function *fn, sl_bwindow **out);
/* Rewrite an expression bound over the input row into one over the
 * post-aggregation row (GROUP_REF / AGG_REF / WINDOW_PROP); errors for
 * columns that are neither grouped nor aggregated. */
int sl_bind_post_agg(sl_binder *b, sl_bselect *sel, sl_bexpr *e,
                     sl_bexpr **out);
/* Parse and bind a window function call (f(...) OVER (...)). */
int sl_bind_over(sl_binder *b, sl_ectx *cx, const sl_expr *e,
                 const sl_function *fn, sl_bexpr **out);

/* ---- DDL (bind_ddl.c) ---------------------------------------------------- */
int sl_bind_create_table(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs);
int sl_bind_create_view(sl_binder *b, const sl_stmt *s, sl_bound_stmt *bs);

/* Parse one stored expression (computed column or watermark text) into the
 * statement arena.  *text gets the text its spans refer to (bind with
 * b->text set to it). */
int sl_bind_parse_expr(sl_binder *b, const char *sql, sl_expr **out,
                       const char **text);

#endif
