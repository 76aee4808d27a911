/* binder.h - name resolution and typing: AST -> bound tree.
 *
 * sl_bind checks one parsed statement against the catalog and produces a
 * bound statement: every name resolved (tables to catalog entries, columns
 * to input column indexes), every expression typed by Flink's rules, views
 * expanded, window functions and aggregates collected per query block.  The
 * planner consumes the bound tree; EXPLAIN prints it (explain.h).
 *
 * The binder never mutates the catalog.  For CREATE TABLE / CREATE VIEW it
 * builds a ready sl_table_def that the caller adds to the catalog.
 *
 * Ownership: the bound tree lives in the arena passed to sl_bind (the
 * statement's arena, the same one holding the AST), EXCEPT
 * sl_bound_stmt.new_table, which is heap-allocated with its own arena: on
 * success the caller must either hand it to sl_catalog_add (which takes
 * ownership; then set new_table to NULL) or free it: sl_bound_stmt_release
 * frees whatever new_table is still set, also inside EXPLAIN.  On failure
 * nothing needs freeing but the arena.  The bound tree points into the catalog
 * (sl_bfrom.u.scan.table, sl_bound_stmt.table): keep the catalog entries
 * alive (do not drop them) while using the tree.
 *
 * How a query block (sl_bselect) evaluates, in order:
 *   from      rows with from->ncols columns (the "input row")
 *   where     a BOOLEAN over the input row
 *   aggregate if select->aggregate: group by groups[] (+ group_window), and
 *             compute aggs[]; both are expressions over the input row.  The
 *             row after this step is "groups..., aggs..." and every later
 *             expression refers to it only through GROUP_REF, AGG_REF and
 *             WINDOW_PROP nodes (never COLUMN).
 *   having    a BOOLEAN over the post-aggregation row
 *   windows   window functions (ROW_NUMBER() OVER ...) over that row
 *   exprs     the select list (may use WINDOW_REF)
 *   distinct
 * then the enclosing sl_bquery applies ORDER BY / LIMIT / OFFSET to the
 * output columns.
 */
#ifndef SLUICE_BINDER_H
#define SLUICE_BINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/catalog/catalog.h"
#include "sluice/catalog/functions.h"
#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/types.h"
#include "sluice/parser/ast.h"

typedef struct sl_bexpr sl_bexpr;
typedef struct sl_bquery sl_bquery;
typedef struct sl_bfrom sl_bfrom;

/* ---- expressions ------------------------------------------------------ */

typedef enum sl_bexpr_kind {
  SL_BEXPR_LITERAL,     /* lit */
  SL_BEXPR_COLUMN,      /* input column `index`, `depth` scopes out (0 = this
                         * block's FROM; >0 = a correlated outer reference) */
  SL_BEXPR_FIELD,       /* field `index` of ROW-typed args[0] */
  SL_BEXPR_UNARY,       /* op args[0]: NEG, PLUS, NOT */
  SL_BEXPR_BINARY,      /* args[0] op args[1]: arithmetic, ||, comparison.
                         * AND and OR have two or more args (a chain is one
                         * flat node; an arg may still be another AND).
                         * Timestamp +/- interval is ADD/SUB. */
  SL_BEXPR_CALL,        /* scalar function fn(args) */
  SL_BEXPR_CAST,        /* CAST(args[0] AS type); try_cast in `negated` */
  SL_BEXPR_CASE,        /* searched CASE: args = when0, then0, when1, then1,
                         * ..., else (always present, NULL literal when
                         * omitted).  A simple CASE x WHEN v is rewritten to
                         * WHEN x = v. */
  SL_BEXPR_BETWEEN,     /* args[0] [NOT] BETWEEN args[1] AND args[2] */
  SL_BEXPR_IN_LIST,     /* args[0] [NOT] IN (args[1..]) */
  SL_BEXPR_LIKE,        /* args[0] [NOT] LIKE args[1] [ESCAPE args[2]];
                         * `similar` for SIMILAR TO */
  SL_BEXPR_IS,          /* args[0] IS [NOT] NULL/TRUE/FALSE/UNKNOWN */
  SL_BEXPR_GROUP_REF,   /* group key `index` (post-aggregation row) */
  SL_BEXPR_AGG_REF,     /* aggregate `index` of the block */
  SL_BEXPR_WINDOW_REF,  /* window function `index` of the block */
  SL_BEXPR_WINDOW_PROP, /* TUMBLE_START(...) etc.: `prop` of the block's
                         * group window (fn = the aux function) */
  SL_BEXPR_SUBQUERY,    /* scalar / EXISTS / IN subquery: subquery, and
                         * args[0] the IN operand */
} sl_bexpr_kind;

typedef struct sl_bliteral {
  sl_literal_kind kind; /* from the AST */
  const char *text;     /* as written (string value unescaped); NULL for
                         * NULL and booleans */
  /* Decoded values: BOOL (0/1) and INTEGER in i64; DOUBLE in f64;
   * INTERVAL: day-time in milliseconds, year-month in months, in i64 (sign
   * applied).  DECIMAL keeps its text (exact). */
  int64_t i64;
  double f64;
} sl_bliteral;

struct sl_bexpr {
  sl_bexpr_kind kind;
  sl_type *type; /* never NULL */
  sl_span span;  /* the source text it came from */
  int nargs;
  sl_bexpr **args;
  sl_op op;                 /* UNARY, BINARY */
  const sl_function *fn;    /* CALL, WINDOW_PROP */
  int index;                /* COLUMN, FIELD, GROUP_REF, AGG_REF, WINDOW_REF */
  int depth;                /* COLUMN */
  const char *qualifier;    /* COLUMN: the table alias when the query wrote
                             * it (B.price), for printing; else NULL */
  const char *name;         /* COLUMN/FIELD: the column or field name;
                             * *_REF: the referenced key/call as SQL text */
  bool negated;             /* BETWEEN, IN_LIST, LIKE, IS, SUBQUERY (NOT IN,
                             * NOT EXISTS), CAST (TRY_CAST) */
  bool similar;             /* LIKE: SIMILAR TO */
  sl_is_what is_what;       /* IS */
  sl_interval_unit unit;    /* EXTRACT: the unit; INTERVAL literal: unit */
  sl_interval_unit to_unit; /* INTERVAL literal: MINUTE TO SECOND etc. */
  int trim_side;            /* TRIM: 0 both, 1 leading, 2 trailing */
  sl_window_prop prop;      /* WINDOW_PROP */
  sl_subquery_kind subquery_kind; /* SUBQUERY */
  sl_bquery *subquery;            /* SUBQUERY */
  sl_bliteral lit;                /* LITERAL */
  /* CALL of the planner's code -> string lookup (sl_plan_use_codes): the
   * dictionary (row/dictionary.h) whose code args[0] is; NULL otherwise. */
  const struct sl_dictionary *dictionary;
};

/* An output or input column as the binder sees it. */
typedef struct sl_bcolumn {
  const char *name;
  sl_type *type;
  /* The table name or alias that qualifies it in this scope (t in t.c), or
   * NULL (e.g. subquery without alias). */
  const char *qualifier;
  /* 1, 2, 3 when this is window_start, window_end, window_time of a window
   * TVF (also through projections that select it unchanged), else 0. */
  int window_col;
  sl_span span; /* where it was defined (select item), for messages */
} sl_bcolumn;

typedef struct sl_border {
  int column; /* output column index */
  bool desc;
  int nulls; /* 0 default, 1 NULLS FIRST, 2 NULLS LAST */
  sl_span span;
} sl_border;

/* ---- windows ----------------------------------------------------------- */

/* A window: the TABLE(TUMBLE(...)) TVF or the legacy GROUP BY TUMBLE(...). */
typedef struct sl_bwindow {
  sl_window_kind kind;
  int time_column;        /* input column index of the time attribute */
  sl_time_attr time_attr; /* ROWTIME or PROCTIME */
  int64_t size_ms;        /* TUMBLE, HOP, CUMULATE (max size) */
  int64_t slide_ms;       /* HOP slide, CUMULATE step; TUMBLE: = size */
  int64_t gap_ms;         /* SESSION */
  int64_t offset_ms;      /* optional OFFSET argument, else 0 */
  int npartition;         /* SESSION TVF: TABLE t PARTITION BY keys */
  int *partition_columns; /* input column indexes */
  sl_span span;
} sl_bwindow;

/* An aggregate call of a block. */
typedef struct sl_bagg {
  const sl_function *fn;
  int nargs;
  sl_bexpr **args; /* over the input row; none for COUNT(*) */
  bool star;       /* COUNT(*) */
  bool distinct;
  sl_bexpr *filter; /* FILTER (WHERE ...) over the input row, or NULL */
  sl_type *type;
  sl_agg_state state; /* mergeable state class (DISTINCT -> GSET) */
  sl_span span;
} sl_bagg;

/* A window function call (ROW_NUMBER() OVER (...), or an aggregate with
 * OVER).  Arguments, partition keys and order keys are expressions over the
 * block's row at that point (post-aggregation row when the block
 * aggregates, else the input row). */
typedef struct sl_bwinfunc {
  const sl_function *fn;
  int nargs;
  sl_bexpr **args;
  bool star;
  bool distinct;
  int npartition;
  sl_bexpr **partition;
  int norder;
  sl_bexpr **order; /* with order_desc[i] / order_nulls[i] */
  bool *order_desc;
  int *order_nulls;
  sl_type *type;
  sl_span span;
} sl_bwinfunc;

/* ---- FROM --------------------------------------------------------------- */

typedef enum sl_bfrom_kind {
  SL_BFROM_SCAN,       /* a connector table */
  SL_BFROM_VIEW,       /* a view, expanded: u.sub.query */
  SL_BFROM_SUBQUERY,   /* (SELECT ...) alias, or a CTE reference */
  SL_BFROM_WINDOW_TVF, /* TABLE(TUMBLE(TABLE input, DESCRIPTOR(ts), ...)) */
  SL_BFROM_JOIN,
} sl_bfrom_kind;

struct sl_bfrom {
  sl_bfrom_kind kind;
  sl_span span;
  const char *alias; /* the qualifier of its columns (alias or name) */
  int ncols;
  sl_bcolumn *cols; /* the output row of this node */
  union {
    struct {
      const sl_table_def *table;
      /* Per table column: the bound computed-column expression (over this
       * scan's own columns) or NULL for a physical column. */
      sl_bexpr **computed;
      int rowtime_column;  /* -1 if none */
      sl_bexpr *watermark; /* over this scan's columns, or NULL */
      /* FOR SYSTEM_TIME AS OF expr: a lookup (temporal) table.  The
       * expression is over the enclosing join's left input. */
      sl_bexpr *system_time;
    } scan;
    struct {
      const char *name; /* view or CTE name; NULL for an inline subquery */
      sl_bquery *query;
    } sub;
    struct {
      sl_bfrom *input; /* columns: input's, then window_start, window_end,
                        * window_time (indexes input->ncols + 0..2) */
      sl_bwindow window;
    } tvf;
    struct {
      sl_join_kind kind;
      sl_bfrom *left, *right; /* columns: left's then right's */
      sl_bexpr *on;           /* over the joined row, or NULL (cross) */
      bool lookup;            /* right side is FOR SYSTEM_TIME AS OF */
    } join;
  } u;
};

/* ---- queries ------------------------------------------------------------ */

typedef struct sl_bselect {
  sl_bfrom *from; /* NULL: SELECT without FROM (one row of no columns) */
  sl_bexpr *where;
  bool aggregate; /* GROUP BY, aggregates or HAVING present */
  int ngroups;
  sl_bexpr **groups;        /* group keys over the input row */
  sl_bwindow *group_window; /* GROUP BY TUMBLE(ts, ...) or NULL; not counted
                             * in groups */
  /* A window aggregate over a window TVF: the group keys include
   * window_start and window_end of a TVF in from (window_time stays a time
   * attribute). */
  bool window_aggregate;
  int naggs;
  sl_bagg *aggs;
  sl_bexpr *having;
  int nwindows;
  sl_bwinfunc *windows;
  int nexprs;
  sl_bexpr **exprs; /* the select list, one per output column */
  bool distinct;
} sl_bselect;

typedef enum sl_bquery_kind {
  SL_BQUERY_SELECT,
  SL_BQUERY_VALUES,
  SL_BQUERY_SETOP,
} sl_bquery_kind;

struct sl_bquery {
  sl_bquery_kind kind;
  sl_span span;
  int ncols;
  sl_bcolumn *cols;   /* the output schema (names as Flink derives them) */
  sl_bselect *select; /* SELECT */
  int nrows;          /* VALUES: nrows rows of ncols constant expressions */
  sl_bexpr ***rows;
  sl_setop_kind setop; /* SETOP: UNION / INTERSECT / EXCEPT */
  bool all;
  sl_bquery *left, *right;
  int norder;
  sl_border *order; /* ORDER BY over the output columns */
  int64_t limit;    /* -1: none */
  int64_t offset;   /* 0: none */
};

/* ---- statements --------------------------------------------------------- */

typedef struct sl_bound_stmt sl_bound_stmt;
struct sl_bound_stmt {
  sl_stmt_kind kind;
  const sl_stmt *ast;
  const char *text; /* the statement text (arena copy) */

  /* QUERY: the query.  INSERT: the source query.  CREATE VIEW: the body. */
  sl_bquery *query;

  /* CREATE TABLE / CREATE VIEW: the new entry, owned by the caller (see
   * the top of this file).  if_not_exists / temporary copied from the AST. */
  sl_table_def *new_table;
  bool if_not_exists;

  /* INSERT: target; DESCRIBE, SHOW CREATE TABLE/VIEW, DROP: the entry (NULL
   * for DROP ... IF EXISTS of a missing one). */
  const sl_table_def *table;
  /* INSERT: target column index for each source output column
   * (query->ncols entries). */
  int *insert_columns;

  /* EXPLAIN: the bound inner statement. */
  sl_bound_stmt *inner;
};

/* Bind one statement.  stmt_text is the statement's source text: stmt's
 * span offsets are relative to it, and it is where CREATE statements take
 * the SQL text they store (create_sql, view_sql, computed_sql,
 * watermark_sql).  first_line is the line of stmt_text's first byte (as
 * passed to sl_parse).  Errors are SL_EBIND (names and types),
 * SL_ECATALOG (object exists/missing for DDL), SL_EUNSUPPORTED, with the
 * position of the offending text. */
int sl_bind(sl_arena *a, const sl_catalog *cat, const sl_stmt *stmt,
            const char *stmt_text, int first_line, sl_bound_stmt **out,
            sl_error *err);

/* Free the new_table of s (and of an EXPLAIN's inner statement) if it is
 * still set.  Call it once when done with a bound statement. */
void sl_bound_stmt_release(sl_bound_stmt *s);

/* How deeply the binder may recurse, views expanded (each expression and
 * each query block one level): twice the parser's limit, so any statement
 * the parser takes binds, and a chain of views each as deep as allowed is
 * refused with a message instead of overflowing the stack. */
#define SL_MAX_BIND_DEPTH (2 * SL_MAX_EXPR_DEPTH)

/* How tall an expression may be once the planner has substituted views'
 * columns into it (physical_plan.c), and how many nodes substitution may
 * add by using a view's column more than once (each use is compiled
 * separately by the interpreter and the JIT, so nested views that each use
 * a column twice would double it per level). */
#define SL_MAX_PLAN_EXPR_DEPTH (2 * SL_MAX_EXPR_DEPTH)
#define SL_MAX_PLAN_EXPR_COPIES 1000000

/* The height of e (1 for a leaf), found without recursion in time linear
 * in e's distinct nodes; *tree_size (may be NULL) its number of nodes
 * counting a shared subtree once per use (saturating), *copies (may be
 * NULL) how many of those are repeats of a shared subtree (shared leaves
 * aside).  -1 when out of memory, -2 when Ctrl-C / .timeout stopped it. */
int sl_bexpr_height(const sl_bexpr *e, int64_t *tree_size, int64_t *copies);

/* Helpers for the planner and tests. */
const char *sl_bexpr_kind_name(sl_bexpr_kind k);
/* Print a bound expression as SQL (used by EXPLAIN and messages).  Column
 * references print their name; GROUP_REF / AGG_REF / WINDOW_REF print the
 * text of the key or call they refer to (kept in sl_bexpr.name). */
void sl_bexpr_format(sl_strbuf *b, const sl_bexpr *e);

#endif
