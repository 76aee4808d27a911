/* ast.h - the abstract syntax tree the parser produces.
 *
 * The AST mirrors what the user wrote (Flink SQL spellings), with a source
 * span on every node so later stages can point at the offending text.  It
 * knows nothing about the catalog: names are unresolved strings.  The binder
 * (binder.h) turns it into a typed, resolved tree.
 *
 * Ownership: every node, list and string lives in the arena passed to the
 * parser; free the arena to free the tree.
 */
#ifndef SLUICE_AST_H
#define SLUICE_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/arena.h"
#include "sluice/common/types.h"

/* A span of source text: 1-based line/column of its first byte, 0-based byte
 * offset and length.  All zero when unknown. */
typedef struct sl_span {
  int line;
  int column;
  int offset;
  int length;
} sl_span;

/* Growable array of pointers, arena-backed. */
typedef struct sl_list {
  int n;
  int cap;
  void **items;
} sl_list;

sl_list *sl_list_new(sl_arena *a);
void sl_list_push(sl_arena *a, sl_list *l, void *item);
#define SL_LIST_LEN(l) ((l) ? (l)->n : 0)
#define SL_LIST_AT(l, i) ((l)->items[(i)])

/* A possibly qualified name: parts[0].parts[1]...  (catalog.db.table,
 * alias.column, column.field).  Quoted (`x`) parts keep their exact
 * spelling; unquoted parts too (Flink identifiers are case-sensitive). */
typedef struct sl_qname {
  int nparts;
  const char **parts;
  sl_span span;
} sl_qname;

/* ---- expressions ------------------------------------------------------ */

typedef enum sl_expr_kind {
  SL_EXPR_LITERAL,
  SL_EXPR_NAME,     /* column or field reference: qname */
  SL_EXPR_STAR,     /* `*` or `t.*` (qualifier in star_qualifier) */
  SL_EXPR_UNARY,    /* op + one operand */
  SL_EXPR_BINARY,   /* op + two operands (never AND / OR) */
  SL_EXPR_LOGICAL,  /* AND / OR of two or more operands, flattened:
                     * a AND b AND c is one node of three */
  SL_EXPR_BETWEEN,  /* operand BETWEEN low AND high, negated */
  SL_EXPR_IN_LIST,  /* operand [NOT] IN (list) */
  SL_EXPR_LIKE,     /* operand [NOT] LIKE pattern [ESCAPE esc] */
  SL_EXPR_IS,       /* operand IS [NOT] NULL | TRUE | FALSE */
  SL_EXPR_CASE,     /* CASE [operand] WHEN .. THEN .. [ELSE ..] END */
  SL_EXPR_CAST,     /* CAST(operand AS type), TRY_CAST */
  SL_EXPR_CALL,     /* function call, aggregate, window function */
  SL_EXPR_SUBQUERY, /* (SELECT ...) as a scalar, EXISTS, IN (SELECT) */
  SL_EXPR_FIELD,    /* expr.field where expr is not a plain name, e.g. f(x).a */
} sl_expr_kind;

typedef enum sl_literal_kind {
  SL_LIT_NULL,
  SL_LIT_BOOL,      /* bool_value */
  SL_LIT_INTEGER,   /* text: digits, fits the binder's choice of
                       INT/BIGINT/DECIMAL */
  SL_LIT_DECIMAL,   /* text: digits with a '.', e.g. 0.908 -> DECIMAL(3,3) */
  SL_LIT_DOUBLE,    /* text: with an exponent, e.g. 1e3 */
  SL_LIT_STRING,    /* text: the value with quotes removed and '' unescaped */
  SL_LIT_INTERVAL,  /* text: the quoted value, e.g. "10"; unit / to_unit */
  SL_LIT_TIMESTAMP, /* TIMESTAMP '2020-01-01 00:00:00' ; text = the string */
  SL_LIT_DATE,      /* DATE '2020-01-01' */
  SL_LIT_TIME,      /* TIME '12:00:00' */
} sl_literal_kind;

typedef enum sl_interval_unit {
  SL_UNIT_NONE = 0,
  SL_UNIT_YEAR,
  SL_UNIT_MONTH,
  SL_UNIT_DAY,
  SL_UNIT_HOUR,
  SL_UNIT_MINUTE,
  SL_UNIT_SECOND,
  SL_UNIT_MILLISECOND,
} sl_interval_unit;

typedef enum sl_op {
  /* unary */
  SL_OP_NEG,
  SL_OP_PLUS,
  SL_OP_NOT,
  /* binary */
  SL_OP_ADD,
  SL_OP_SUB,
  SL_OP_MUL,
  SL_OP_DIV,
  SL_OP_MOD,    /* % */
  SL_OP_CONCAT, /* || */
  SL_OP_EQ,
  SL_OP_NE, /* <> and != */
  SL_OP_LT,
  SL_OP_LE,
  SL_OP_GT,
  SL_OP_GE,
  SL_OP_AND,
  SL_OP_OR,
} sl_op;

typedef enum sl_is_what {
  SL_IS_NULL,
  SL_IS_TRUE,
  SL_IS_FALSE,
  SL_IS_UNKNOWN,
} sl_is_what;

typedef enum sl_subquery_kind {
  SL_SUBQ_SCALAR, /* (SELECT x ...) */
  SL_SUBQ_EXISTS, /* EXISTS (SELECT ...) */
  SL_SUBQ_IN,     /* operand [NOT] IN (SELECT ...) */
} sl_subquery_kind;

typedef struct sl_expr sl_expr;
typedef struct sl_query sl_query;
typedef struct sl_type_ast sl_type_ast;

/* ORDER BY item (queries and OVER clauses). */
typedef struct sl_order_item {
  sl_expr *expr;
  bool desc;
  int nulls; /* 0 = default, 1 = NULLS FIRST, 2 = NULLS LAST */
} sl_order_item;

/* OVER (PARTITION BY ... ORDER BY ...) of a window function. */
typedef struct sl_over {
  sl_list *partition_by; /* sl_expr*, may be NULL */
  sl_list *order_by;     /* sl_order_item*, may be NULL */
  sl_span span;
} sl_over;

/* WHEN cond THEN result */
typedef struct sl_when {
  sl_expr *when;
  sl_expr *then;
} sl_when;

struct sl_expr {
  sl_expr_kind kind;
  sl_span span;
  union {
    struct {
      sl_literal_kind kind;
      const char *text; /* see sl_literal_kind; NULL for NULL/BOOL */
      bool bool_value;
      sl_interval_unit unit;    /* INTERVAL '10' SECOND -> SECOND */
      sl_interval_unit to_unit; /* INTERVAL '1:30' MINUTE TO SECOND */
      int precision;            /* INTERVAL '1' SECOND(3): 3, else -1 */
      bool negative;            /* INTERVAL -'5' SECOND */
    } lit;
    sl_qname name; /* SL_EXPR_NAME */
    struct {
      sl_qname *qualifier; /* NULL for a bare `*` */
    } star;
    struct {
      sl_op op;
      sl_expr *operand;
    } unary;
    struct {
      sl_op op;
      sl_expr *left, *right;
    } binary;
    struct {
      sl_op op;      /* SL_OP_AND or SL_OP_OR */
      sl_list *args; /* sl_expr*, two or more, none of them the same op */
    } logical;
    struct {
      sl_expr *operand, *low, *high;
      bool negated;
      bool symmetric; /* BETWEEN SYMMETRIC */
    } between;
    struct {
      sl_expr *operand;
      sl_list *values; /* sl_expr* */
      bool negated;
    } in_list;
    struct {
      sl_expr *operand, *pattern, *escape; /* escape may be NULL */
      bool negated;
      bool similar; /* SIMILAR TO instead of LIKE */
    } like;
    struct {
      sl_expr *operand;
      sl_is_what what;
      bool negated;
    } is;
    struct {
      sl_expr *operand;   /* simple CASE x WHEN ...; NULL for searched CASE */
      sl_list *whens;     /* sl_when* */
      sl_expr *else_expr; /* may be NULL */
    } case_;
    struct {
      sl_expr *operand;
      sl_type *type; /* target type, arena-allocated */
      bool try_cast;
    } cast;
    struct {
      sl_qname name;   /* function name as written (may be qualified) */
      sl_list *args;   /* sl_expr*; NULL or empty for f() */
      bool star;       /* COUNT(*) */
      bool distinct;   /* COUNT(DISTINCT x) */
      sl_expr *filter; /* FILTER (WHERE ...), may be NULL */
      sl_over *over;   /* OVER (...), may be NULL */
      /* Special call forms, kept as plain calls with extra fields:
       *   SUBSTRING(s FROM a [FOR b]) -> args s,a[,b]
       *   EXTRACT(unit FROM x)        -> name EXTRACT, unit, args x
       *   TRIM([BOTH|LEADING|TRAILING] [c] FROM s) -> name TRIM, trim_side
       *   POSITION(a IN b)            -> args a,b */
      sl_interval_unit unit; /* EXTRACT */
      int trim_side;         /* 0 both, 1 leading, 2 trailing */
    } call;
    struct {
      sl_subquery_kind kind;
      sl_query *query;
      sl_expr *operand; /* SL_SUBQ_IN */
      bool negated;     /* NOT IN / NOT EXISTS */
    } subquery;
    struct {
      sl_expr *base;
      const char *field;
    } field;
  } u;
};

/* ---- FROM clause -------------------------------------------------------- */

typedef enum sl_table_ref_kind {
  SL_TREF_NAME,     /* a table or view by name */
  SL_TREF_SUBQUERY, /* (SELECT ...) [AS] alias */
  SL_TREF_TVF,      /* TABLE(TUMBLE(...)) and other table functions */
  SL_TREF_JOIN,     /* left JOIN right ON/USING, or a comma (cross) */
} sl_table_ref_kind;

typedef enum sl_join_kind {
  SL_JOIN_INNER,
  SL_JOIN_LEFT,
  SL_JOIN_RIGHT,
  SL_JOIN_FULL,
  SL_JOIN_CROSS, /* CROSS JOIN and the comma */
} sl_join_kind;

/* One argument of a table-valued function call:
 *   TABLE t [PARTITION BY k, ...]   (table_arg set)
 *   DESCRIPTOR(col [, col])         (descriptor set)
 *   an expression                   (expr set)
 * optionally named:  DATA => TABLE t,  SIZE => INTERVAL '1' SECOND. */
typedef struct sl_tvf_arg {
  const char *name;      /* named argument, or NULL */
  sl_qname *table_arg;   /* TABLE name */
  sl_list *partition_by; /* sl_expr*, with TABLE t PARTITION BY k */
  sl_list *descriptor;   /* sl_qname*, DESCRIPTOR(...) */
  sl_expr *expr;         /* plain expression */
  sl_span span;
} sl_tvf_arg;

typedef struct sl_table_ref sl_table_ref;
struct sl_table_ref {
  sl_table_ref_kind kind;
  sl_span span;
  const char *alias;       /* AS alias, or NULL */
  sl_list *column_aliases; /* AS alias(c1, c2): const char*, or NULL */
  union {
    struct {
      sl_qname name;
      sl_expr *system_time; /* FOR SYSTEM_TIME AS OF expr, or NULL */
    } name;
    struct {
      sl_query *query;
      bool lateral;
    } subquery;
    struct {
      sl_qname func; /* TUMBLE, HOP, CUMULATE, SESSION, ... */
      sl_list *args; /* sl_tvf_arg* */
    } tvf;
    struct {
      sl_join_kind kind;
      sl_table_ref *left, *right;
      sl_expr *on;     /* ON condition, or NULL */
      sl_list *using_; /* USING (c, ...): const char*, or NULL */
      bool natural;
      bool comma; /* written as `a, b` */
    } join;
  } u;
};

/* ---- queries ------------------------------------------------------------ */

typedef struct sl_select_item {
  sl_expr *expr;     /* SL_EXPR_STAR for * and t.* */
  const char *alias; /* AS alias, or NULL */
  sl_span span;
} sl_select_item;

typedef struct sl_select {
  bool distinct;
  sl_list *items;     /* sl_select_item* */
  sl_table_ref *from; /* NULL for SELECT without FROM */
  sl_expr *where;
  sl_list *group_by; /* sl_expr*; may contain TUMBLE(ts, INTERVAL ...) calls */
  sl_expr *having;
  sl_span span;
} sl_select;

typedef enum sl_setop_kind {
  SL_SETOP_NONE = 0, /* a plain SELECT */
  SL_SETOP_UNION,
  SL_SETOP_INTERSECT,
  SL_SETOP_EXCEPT,
  SL_SETOP_VALUES, /* VALUES (..), (..) */
} sl_setop_kind;

/* A query body: a SELECT, a VALUES list, a parenthesised query, or a set
 * operation of two bodies. */
typedef struct sl_query_body sl_query_body;
struct sl_query_body {
  sl_setop_kind kind;
  sl_select *select;   /* SL_SETOP_NONE */
  sl_list *values;     /* SL_SETOP_VALUES: sl_list* of sl_expr* per row */
  sl_query_body *left; /* set operations */
  sl_query_body *right;
  bool all;         /* UNION ALL ... */
  sl_query *nested; /* ( query ) used as a body, with its own ORDER/LIMIT */
  sl_span span;
};

/* WITH name [(c, ...)] AS (query) */
typedef struct sl_cte {
  const char *name;
  sl_list *columns; /* const char*, or NULL */
  sl_query *query;
  sl_span span;
} sl_cte;

struct sl_query {
  sl_list *ctes; /* sl_cte*, or NULL */
  sl_query_body *body;
  sl_list *order_by; /* sl_order_item*, or NULL */
  sl_expr *limit;    /* or NULL */
  sl_expr *offset;   /* or NULL */
  sl_span span;
};

/* ---- statements --------------------------------------------------------- */

typedef enum sl_stmt_kind {
  SL_STMT_QUERY,  /* SELECT / WITH / VALUES */
  SL_STMT_INSERT, /* INSERT INTO t [(cols)] query */
  SL_STMT_CREATE_TABLE,
  SL_STMT_CREATE_VIEW,
  SL_STMT_CREATE_FUNCTION,
  SL_STMT_DROP,     /* DROP TABLE | VIEW | FUNCTION */
  SL_STMT_SHOW,     /* SHOW TABLES | VIEWS | FUNCTIONS | CREATE TABLE x */
  SL_STMT_DESCRIBE, /* DESCRIBE | DESC name */
  SL_STMT_SET,      /* SET ['k' = 'v'] */
  SL_STMT_RESET,    /* RESET ['k'] */
  SL_STMT_EXPLAIN,  /* EXPLAIN [ANALYZE] [(FORMAT ...)] stmt */
} sl_stmt_kind;

/* A column of CREATE TABLE: a physical column (type set) or a computed
 * column (`name AS expr`, expr set). */
typedef struct sl_column_def {
  const char *name;
  sl_type *type;     /* physical column, or NULL */
  sl_expr *computed; /* computed column, or NULL */
  const char *comment;
  bool primary_key; /* column-level PRIMARY KEY NOT ENFORCED */
  sl_span span;
} sl_column_def;

/* WATERMARK FOR column AS expr */
typedef struct sl_watermark_def {
  sl_qname column; /* may be a nested field path */
  sl_expr *expr;
  sl_span span;
} sl_watermark_def;

/* 'key' = 'value' in WITH (...) and SET */
typedef struct sl_option {
  const char *key;
  const char *value;
  sl_span span;
} sl_option;

typedef enum sl_object_kind {
  SL_OBJ_TABLE,
  SL_OBJ_VIEW,
  SL_OBJ_FUNCTION,
} sl_object_kind;

typedef enum sl_show_kind {
  SL_SHOW_TABLES,
  SL_SHOW_VIEWS,
  SL_SHOW_FUNCTIONS,
  SL_SHOW_CREATE_TABLE,
  SL_SHOW_CREATE_VIEW,
} sl_show_kind;

typedef enum sl_explain_format {
  SL_EXPLAIN_TEXT,
  SL_EXPLAIN_JSON,
} sl_explain_format;

typedef struct sl_stmt sl_stmt;
struct sl_stmt {
  sl_stmt_kind kind;
  sl_span span; /* the whole statement, without the trailing ';' */
  union {
    sl_query *query; /* SL_STMT_QUERY */
    struct {
      sl_qname table;
      sl_list *columns; /* const char*, or NULL */
      sl_query *query;
      bool overwrite; /* INSERT OVERWRITE */
    } insert;
    struct {
      sl_qname name;
      bool temporary;
      bool if_not_exists;
      sl_list *columns;            /* sl_column_def* */
      sl_watermark_def *watermark; /* or NULL */
      sl_list *primary_key;        /* const char*, or NULL */
      sl_list *partitioned_by;     /* const char*, or NULL */
      sl_list *options;            /* sl_option*, WITH (...) */
      const char *comment;
    } create_table;
    struct {
      sl_qname name;
      bool temporary;
      bool if_not_exists;
      sl_list *columns; /* const char*, or NULL */
      sl_query *query;
      /* the text of the query as written, for SHOW CREATE VIEW */
      sl_span query_span;
    } create_view;
    struct {
      sl_qname name;
      bool temporary;
      bool if_not_exists;
      const char *class_name; /* AS 'com.example.Udf' */
      const char *language;   /* LANGUAGE JAVA | PYTHON | SQL, or NULL */
    } create_function;
    struct {
      sl_object_kind what;
      sl_qname name;
      bool temporary;
      bool if_exists;
    } drop;
    struct {
      sl_show_kind what;
      sl_qname name; /* SHOW CREATE TABLE name */
    } show;
    struct {
      sl_qname name;
    } describe;
    struct {
      const char *key; /* NULL: SET alone lists the settings */
      const char *value;
    } set;
    struct {
      const char *key; /* NULL: RESET alone resets everything */
    } reset;
    struct {
      bool analyze;
      sl_explain_format format;
      sl_stmt *stmt;
    } explain;
  } u;
};

/* How deeply a statement may nest.  Each expression node is one level
 * below its parent (a chain a + b + c + ... of N terms is N levels deep;
 * AND / OR chains and IN lists are flat, one level for any length), and
 * so is each subquery, set operation and join.  The parser refuses a
 * statement deeper than this, so that every recursive walker of the trees
 * built from it (binder, planner, interpreter, JIT, EXPLAIN) stays within
 * a small, bounded stack; SQLite's SQLITE_MAX_EXPR_DEPTH is the same. */
#define SL_MAX_EXPR_DEPTH 1000

/* The nesting depth of s as defined above (0 for a statement without
 * expressions or queries), found without recursion.  When it exceeds
 * limit, *deepest (may be NULL) is the span of the first node found below
 * the limit. */
int sl_stmt_depth(const sl_stmt *s, int limit, sl_span *deepest);

/* Helpers the parser and tests use. */
sl_expr *sl_expr_new(sl_arena *a, sl_expr_kind kind, sl_span span);
const char *sl_op_symbol(sl_op op);                    /* "+", "AND", ... */
const char *sl_interval_unit_name(sl_interval_unit u); /* "SECOND" */
const char *sl_stmt_kind_name(sl_stmt_kind k);         /* "CREATE TABLE" */

/* Print an expression back as SQL (fully parenthesised where it matters).
 * Used by EXPLAIN, error messages and the parser's round-trip tests. */
void sl_expr_format(sl_strbuf *b, const sl_expr *e);
void sl_qname_format(sl_strbuf *b, const sl_qname *q);

/* A debugging dump of a whole statement as an S-expression-like tree,
 * stable enough for golden tests of the grammar. */
void sl_stmt_dump(sl_strbuf *b, const sl_stmt *s);

#endif
