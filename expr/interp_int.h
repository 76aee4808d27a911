/* interp_int.h - internals of the expression interpreter (interpreter.h).
 *
 * A compiled program is a tree of inodes.  Unlike the bound tree, every
 * coercion is explicit (N_CAST nodes), so each evaluator sees operands of
 * exactly the representation it expects.  Values live in four vector
 * representations, one per physical class:
 *   R_I64  BOOLEAN, TINYINT..BIGINT, DATE, TIME, TIMESTAMP[_LTZ], intervals
 *   R_F64  FLOAT (rounded to float after each operation), DOUBLE
 *   R_DEC  DECIMAL: __int128 unscaled, the scale is the node type's
 *   R_STR  CHAR/VARCHAR: sl_str
 * Each node owns one vector slot in the context; evaluation of a node fills
 * its slot for the active positions of the current vector (a position list,
 * so that CASE/AND/OR evaluate later operands only where needed).
 */
#ifndef SLUICE_INTERP_INT_H
#define SLUICE_INTERP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/expr/interpreter.h"

#define VEC SL_EXPR_VECTOR

typedef __int128 i128;

typedef enum irep { R_I64, R_F64, R_DEC, R_STR } irep;

typedef enum nkind {
  N_CONST,
  N_LOAD,
  N_CAST,       /* args[0] to type; try_cast in negated */
  N_NEG,        /* -args[0] */
  N_ARITH,      /* op: ADD SUB MUL DIV MOD */
  N_CMP,        /* op: EQ..GE; both args of one representation */
  N_AND,        /* three-valued, args[0..nargs) */
  N_OR,         /* three-valued */
  N_NOT,        /* three-valued */
  N_IS,         /* IS [NOT] NULL/TRUE/FALSE/UNKNOWN: op = sl_is_what */
  N_CASE,       /* when0, then0, ..., else */
  N_COALESCE,   /* first non-NULL */
  N_NULLIF,     /* args[0], args[1], args[2] = (args[0] = args[1]) */
  N_IN,         /* args[0] IN (args[1..]) */
  N_LIKE,       /* args: s, pattern [, escape]; aux: constant pattern */
  N_CONCAT,     /* || */
  N_TIME_ADD,   /* temporal +/- interval: args[0] temporal, args[1] interval,
                 * op ADD/SUB */
  N_IV_SCALE,   /* interval * / number: args[0] interval, args[1] DOUBLE */
  N_CALL,       /* scalar function fn (interp_fn enum) */
  N_DICTIONARY, /* the string of code args[0] in aux (an sl_dictionary) */
} nkind;

/* Scalar functions, by registry name. */
typedef enum ifn {
  F_NONE = 0,
  F_ABS,
  F_FLOOR,
  F_CEIL,
  F_ROUND,
  F_POWER,
  F_SQRT,
  F_LN,
  F_LOG10,
  F_EXP,
  F_LOWER,
  F_UPPER,
  F_CHAR_LENGTH,
  F_SUBSTRING,
  F_TRIM,
  F_CONCAT,
  F_CONCAT_WS,
  F_REPLACE,
  F_POSITION,
  F_LEFT,
  F_RIGHT,
  F_LPAD,
  F_RPAD,
  F_REGEXP_EXTRACT,
  F_REGEXP_REPLACE,
  F_REGEXP,
  F_SIMILAR, /* SIMILAR TO, compiled to a regex */
  F_SPLIT_INDEX,
  F_DATE_FORMAT,
  F_EXTRACT, /* unit in node->unit; HOUR(x) etc. map here too */
  F_TO_TIMESTAMP,
  F_UNIX_TIMESTAMP,
  F_FROM_UNIXTIME,
  F_NOW, /* PROCTIME, NOW, CURRENT_TIMESTAMP, LOCALTIMESTAMP */
  F_HASH_CODE,
  F_FLOOR_TIME, /* FLOOR/CEIL(ts TO unit): op 0 floor, 1 ceil */
} ifn;

typedef struct inode inode;
struct inode {
  nkind kind;
  irep rep;
  const sl_type *type; /* SQL type of the result */
  const sl_bexpr *src; /* for error positions and messages (may be NULL) */
  int nargs;
  inode **args;
  int slot; /* vector slot in the context (shared with nodes that are
             * never live at the same time: assign_slots) */
  int refs; /* parents (more than one: a shared operand, e.g. BETWEEN's) */
  int op;   /* sl_op (ARITH, CMP, TIME_ADD, IV_SCALE), sl_is_what (IS) */
  ifn fn;
  bool negated;          /* IN, LIKE, IS, CAST (try) */
  sl_interval_unit unit; /* EXTRACT, FLOOR(ts TO unit) */
  int trim_side;         /* TRIM */
  int64_t lo, hi;        /* R_I64 integer result range (overflow checks) */
  int prec, scale;       /* R_DEC precision and scale */
  /* N_LOAD */
  sl_ptype ptype;
  uint32_t offset;
  int field;
  /* N_CONST */
  bool cnull;
  int64_t ci;
  double cf;
  i128 cd;
  sl_str cs;
  void *aux; /* pre-compiled constant operand: LIKE matcher, pcre2_code,
              * DATE_FORMAT pattern */
};

struct sl_expr_prog {
  inode *root;
  int nslots;
  int nnodes;
  const sl_row_layout *input;
};

/* One vector slot. */
typedef struct ivec {
  uint8_t *null; /* VEC bytes, 1 = NULL */
  union {
    int64_t *i;
    double *f;
    i128 *d;
    sl_str *s;
    void *p;
  } v;
} ivec;

/* Bump allocator for intermediate strings and position lists; reset per
 * vector, blocks kept for reuse (no per-row malloc). */
typedef struct scratch_block {
  char *mem;
  size_t size, used;
} scratch_block;

#define REGEX_CACHE 8

typedef struct regex_entry {
  char *pattern; /* heap copy */
  uint32_t len;
  int flavour; /* 0 = regex, 1 = SIMILAR TO translated */
  void *code;  /* pcre2_code * */
} regex_entry;

struct sl_expr_ctx {
  int nslots;
  ivec *vecs;
  void **vec_mem;
  uint16_t ident[VEC];      /* 0, 1, ..., VEC-1 */
  const uint8_t *rows[VEC]; /* row pointers of the current vector */
  uint32_t n;               /* rows in the current vector */
  scratch_block *blocks;
  int nblocks, cur_block;
  int64_t now_us;   /* wall clock, read once per call */
  bool now_pinned;  /* ... or once until unpinned (sl_expr_ctx_pin_now) */
  void *match_data; /* pcre2_match_data * */
  regex_entry regex[REGEX_CACHE];
  int regex_next;
  sl_error *err;
};

/* ---- shared helpers (interp_eval.c) --------------------------------------
 */
void *ix_alloc(sl_expr_ctx *c, size_t size);
/* Set an error at n's source position; "%s" in fmt gets the expression's
 * SQL text.  Returns code. */
int ix_error(sl_expr_ctx *c, const inode *n, int code, const char *what);
int ix_eval(sl_expr_ctx *c, const inode *n, const uint16_t *act, uint32_t nact);
/* Evaluate all arguments and set the output's null = OR of theirs. */
int ix_eval_args_strict(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                        uint32_t nact);
static inline ivec *ix_vec(sl_expr_ctx *c, const inode *n) {
  return &c->vecs[n->slot];
}
/* A string result of len bytes: inline, or copied into scratch. */
sl_str ix_str(sl_expr_ctx *c, const char *p, uint32_t len);
char *ix_strbuf(sl_expr_ctx *c, uint32_t len);

/* ---- IN over constants (interp_inset.c) ---------------------------------
 * An N_IN node whose aux is a set: its constant values are in the set (in
 * the representation of args[0]), args[1..] are only the other values. */
typedef struct ix_inset ix_inset;
/* A set for up to `expected` values of representation rep, in a. */
ix_inset *ix_inset_new(sl_arena *a, irep rep, uint64_t expected);
/* Add one value (int64_t, double, i128 or sl_str by rep); false when the
 * set already holds `expected` values. */
bool ix_inset_add(ix_inset *s, const void *v);
void ix_inset_add_null(ix_inset *s);
bool ix_inset_has(const ix_inset *s, const void *v);
bool ix_inset_has_null(const ix_inset *s);
uint64_t ix_inset_size(const ix_inset *s);

/* ---- decimal (interp_decimal.c) ------------------------------------------
 */
i128 dec_pow10(int n); /* n in 0..38 */
/* Rescale v from scale `from` to `to` (HALF_UP when dropping digits).
 * false on overflow. */
bool dec_rescale(i128 v, int from, int to, i128 *out);
bool dec_fits(i128 v, int precision);
/* Parse decimal text (optional sign, digits, '.', digits, optional
 * exponent) to scale `scale` with HALF_UP; false if malformed/overflow. */
bool dec_parse(const char *s, size_t len, int scale, i128 *out);
/* Format to buf (>= 48 bytes); returns length. */
int dec_format(i128 v, int scale, char *buf);
double dec_to_double(i128 v, int scale);
int ix_eval_dec_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact);
/* One DECIMAL +, -, *, /, MOD (op) of u (scale s1) and v (scale s2) into
 * *out at scale s, precision p: 0, IX_DEC_DIV_ZERO or IX_DEC_OVERFLOW.
 * The interpreter's loop and the JIT's helper share it. */
#define IX_DEC_DIV_ZERO 1
#define IX_DEC_OVERFLOW 2
int ix_dec_arith1(int op, i128 u, int s1, i128 v, int s2, int s, int p,
                  i128 *out);

/* ---- arithmetic, comparison, math (interp_arith.c) ----------------------
 */
int ix_eval_arith(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                  uint32_t nact);
int ix_eval_neg(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                uint32_t nact);
int ix_eval_cmp(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                uint32_t nact);
int ix_eval_in(sl_expr_ctx *c, const inode *n, const uint16_t *act,
               uint32_t nact);
int ix_eval_math(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact);
void ix_int_range(const sl_type *t, int64_t *lo, int64_t *hi);

/* ---- casts (interp_cast.c) -----------------------------------------------
 */
int ix_eval_cast(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact);
/* Conversion classes of SQL types, for casts (interpreter and JIT). */
enum {
  K_NULL,
  K_BOOL,
  K_INT,
  K_FLT,
  K_DEC,
  K_STR,
  K_DATE,
  K_TIME,
  K_TS,
  K_IVDT,
  K_IVYM,
  K_OTHER
};
int ix_kind_class(const sl_type *t);
/* CAST of one non-NULL value for a cast node n whose target is not a
 * string: *arg and *res hold an int64, double, i128 or sl_str by the
 * representations of n->args[0] and n.  0 = done, 1 = cannot (the
 * interpreter's error, or NULL for TRY_CAST).  Used by the JIT. */
int ix_cast_one(const inode *n, const void *arg, void *res);
/* Java-like text of a DOUBLE ("1.0", "1.5E10"); returns length. */
int ix_format_double(double d, bool is_float, char *buf);

/* ---- strings (interp_string.c) -------------------------------------------
 */
int ix_eval_string_fn(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact);
int ix_eval_like(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact);
int ix_eval_concat(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                   uint32_t nact);
/* Pre-compile a constant LIKE pattern (NULL when the pattern is bad: the
 * error is then reported at run time). */
void *ix_like_compile(sl_arena *a, const char *p, uint32_t len, int esc);
/* Match s against a pattern from ix_like_compile (for the JIT). */
bool ix_like_match_str(const void *pat, const sl_str *s);
/* Compile a regex (flavour 0) or SIMILAR TO pattern (flavour 1); NULL and a
 * message in msg (>= 256 bytes) when invalid.  With an arena the pattern
 * lives in it; without, it is on the heap: free with ix_regex_free. */
void *ix_regex_compile(sl_arena *a, const char *p, uint32_t len, int flavour,
                       char *msg);
void ix_regex_free(void *code);
uint32_t ix_utf8_chars(const char *p, uint32_t len);

/* ---- time (interp_time.c) ------------------------------------------------
 */
int ix_eval_time_fn(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                    uint32_t nact);
int ix_eval_time_add(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact);
int64_t ix_days_from_civil(int64_t y, unsigned m, unsigned d);
void ix_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
/* Parse 'yyyy-MM-dd[ HH:mm:ss[.f...]]' (also 'T'): micros; false if bad. */
bool ix_parse_timestamp(const char *s, size_t len, int64_t *us);
bool ix_parse_date(const char *s, size_t len, int64_t *days);
bool ix_parse_time(const char *s, size_t len, int64_t *ms);
/* Text of a TIMESTAMP with `prec` fraction digits (0..6); returns length. */
int ix_format_timestamp(int64_t us, int prec, char *buf);
int ix_format_date(int64_t days, char *buf);
int ix_format_time(int64_t ms, int prec, char *buf);
/* EXTRACT (HOUR(x), ...) or FLOOR/CEIL(x TO unit) of one non-NULL
 * value v: 0, or 1 when the unit cannot be extracted (an error).  The
 * interpreter's loop and the JIT share it. */
int ix_time_fn1(const inode *n, int64_t v, int64_t *out);
/* Pre-compile a constant DATE_FORMAT / TO_TIMESTAMP pattern. */
void *ix_datefmt_compile(sl_arena *a, const char *p, uint32_t len);

#endif
