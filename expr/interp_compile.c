/* interp_compile.c - bound expression -> interpreter program.
 *
 * The binder types expressions but leaves operands in their own types
 * (INT + BIGINT, DECIMAL(3, 3) * BIGINT, DATE < TIMESTAMP).  Compiling makes
 * every conversion an explicit N_CAST node, so the evaluators never look at
 * operand types beyond their representation; it also resolves columns to
 * layout offsets and pre-compiles constant patterns (LIKE, regex,
 * DATE_FORMAT) once per query.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "interp_int.h"
#include "sluice/common/cancel.h"

typedef struct cstate {
  sl_arena *a;
  const sl_row_layout *in;
  const int *map;
  sl_expr_field_resolver resolve;
  void *resolve_arg;
  int nslots;
  sl_error *err;
  int nnodes;
} cstate;

static int cerr(cstate *cs, const sl_bexpr *e, int code, const char *fmt,
                const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg ? arg : "");
  if (e)
    return sl_error_set_at(cs->err, code, e->span.line, e->span.column,
                           e->span.offset, e->span.length, "%s", msg);
  return sl_error_set(cs->err, code, "%s", msg);
}

static irep rep_of(const sl_type *t) {
  switch (t->kind) {
  case SL_TYPE_FLOAT:
  case SL_TYPE_DOUBLE:
    return R_F64;
  case SL_TYPE_DECIMAL:
    return R_DEC;
  case SL_TYPE_CHAR:
  case SL_TYPE_VARCHAR:
    return R_STR;
  default:
    return R_I64;
  }
}

static sl_type *mk_type(cstate *cs, sl_type_kind k) {
  sl_type *t = sl_type_new(cs->a, k);
  if (k == SL_TYPE_VARCHAR)
    t->precision = -1;
  return t;
}

static inode *new_node(cstate *cs, nkind kind, const sl_type *t,
                       const sl_bexpr *src, int nargs) {
  inode *n = SL_ANEW(cs->a, inode);
  n->kind = kind;
  n->type = t;
  n->rep = rep_of(t);
  n->src = src;
  n->nargs = nargs;
  n->args = SL_ANEW_N(cs->a, inode *, nargs > 0 ? nargs : 1);
  n->slot = -1; /* assign_slots */
  cs->nnodes++;
  if (n->rep == R_I64)
    ix_int_range(t, &n->lo, &n->hi);
  if (n->rep == R_DEC) {
    n->prec = t->precision;
    n->scale = t->scale;
  }
  return n;
}

static bool is_null_type(const inode *n) {
  return n->type->kind == SL_TYPE_NULL;
}

static bool fits_as_is(const inode *n, const sl_type *t);

/* Convert n to type t (no-op when the representation already fits). */
static inode *coerce(cstate *cs, inode *n, const sl_type *t) {
  if (!n)
    return NULL;
  if (t->kind == SL_TYPE_NULL)
    return n;
  if (is_null_type(n)) {
    inode *c = new_node(cs, N_CONST, t, n->src, 0);
    c->cnull = true;
    return c;
  }
  if (fits_as_is(n, t))
    return n;
  inode *c = new_node(cs, N_CAST, t, n->src, 1);
  c->args[0] = n;
  return c;
}

/* Does n's value already have type t's representation (no cast)? */
static bool fits_as_is(const inode *n, const sl_type *t) {
  irep r = rep_of(t);
  bool same = r == n->rep;
  if (same && r == R_DEC)
    same = n->scale == t->scale && n->prec <= t->precision;
  if (same && r == R_I64) {
    /* Integers of any width share int64; temporal kinds must match. */
    bool ni = sl_type_is_integer(n->type), ti = sl_type_is_integer(t);
    if (ni && ti)
      same = true;
    else if (n->type->kind == SL_TYPE_TIMESTAMP_LTZ ||
             n->type->kind == SL_TYPE_TIMESTAMP)
      same = t->kind == SL_TYPE_TIMESTAMP || t->kind == SL_TYPE_TIMESTAMP_LTZ;
    else
      same = n->type->kind == t->kind;
  }
  if (same && r == R_F64)
    same = n->type->kind == t->kind || t->kind == SL_TYPE_DOUBLE;
  return same;
}

/* DECIMAL type holding any value of integer type t exactly. */
static sl_type *decimal_of_int(cstate *cs, const sl_type *t) {
  int p = 19;
  switch (t->kind) {
  case SL_TYPE_TINYINT:
    p = 3;
    break;
  case SL_TYPE_SMALLINT:
    p = 5;
    break;
  case SL_TYPE_INT:
    p = 10;
    break;
  default:
    break;
  }
  sl_type *d = sl_type_decimal(cs->a, p, 0);
  return d;
}

/* Arithmetic operand: to the representation of the result type, keeping a
 * DECIMAL operand's own scale. */
static inode *coerce_arith(cstate *cs, inode *n, const sl_type *rt) {
  irep r = rep_of(rt);
  if (is_null_type(n))
    return coerce(cs, n, rt);
  if (r == R_DEC) {
    if (n->rep == R_DEC)
      return n;
    if (n->rep == R_I64)
      return coerce(cs, n, decimal_of_int(cs, n->type));
    return coerce(cs, n, rt);
  }
  if (r == R_F64)
    return coerce(cs, n, mk_type(cs, SL_TYPE_DOUBLE));
  return n; /* integers: int64 already */
}

/* The type two operands are compared in. */
static const sl_type *compare_type(cstate *cs, const inode *x, const inode *y) {
  const sl_type *a = x->type, *b = y->type;
  if (a->kind == SL_TYPE_NULL)
    return b;
  if (b->kind == SL_TYPE_NULL)
    return a;
  if (sl_type_is_numeric(a) && sl_type_is_numeric(b)) {
    if (x->rep == R_F64 || y->rep == R_F64)
      return mk_type(cs, SL_TYPE_DOUBLE);
    if (x->rep == R_DEC || y->rep == R_DEC) {
      int s = 0;
      if (x->rep == R_DEC && x->scale > s)
        s = x->scale;
      if (y->rep == R_DEC && y->scale > s)
        s = y->scale;
      return sl_type_decimal(cs->a, 38, s);
    }
    return mk_type(cs, SL_TYPE_BIGINT);
  }
  if (sl_type_is_string(a) && sl_type_is_string(b))
    return mk_type(cs, SL_TYPE_VARCHAR);
  if (a->kind == SL_TYPE_DATE && b->kind != SL_TYPE_DATE)
    return b;
  return a;
}

static inode *compile(cstate *cs, const sl_bexpr *e);

static inode *make_cmp(cstate *cs, const sl_bexpr *src, sl_op op, inode *x,
                       inode *y) {
  const sl_type *ct = compare_type(cs, x, y);
  sl_type *bt = mk_type(cs, SL_TYPE_BOOLEAN);
  inode *n = new_node(cs, N_CMP, bt, src, 2);
  n->op = op;
  n->args[0] = coerce(cs, x, ct);
  n->args[1] = coerce(cs, y, ct);
  return n;
}

static int unit_of_fn(const char *name, sl_interval_unit *u) {
  static const struct {
    const char *name;
    sl_interval_unit unit;
  } map[] = {{"YEAR", SL_UNIT_YEAR},      {"MONTH", SL_UNIT_MONTH},
             {"DAYOFMONTH", SL_UNIT_DAY}, {"HOUR", SL_UNIT_HOUR},
             {"MINUTE", SL_UNIT_MINUTE},  {"SECOND", SL_UNIT_SECOND}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(name, map[i].name) == 0) {
      *u = map[i].unit;
      return 1;
    }
  return 0;
}

static const struct {
  const char *name;
  ifn fn;
} fn_names[] = {
    {"ABS", F_ABS},
    {"FLOOR", F_FLOOR},
    {"CEIL", F_CEIL},
    {"ROUND", F_ROUND},
    {"POWER", F_POWER},
    {"SQRT", F_SQRT},
    {"LN", F_LN},
    {"LOG10", F_LOG10},
    {"EXP", F_EXP},
    {"LOWER", F_LOWER},
    {"UPPER", F_UPPER},
    {"CHAR_LENGTH", F_CHAR_LENGTH},
    {"CHARACTER_LENGTH", F_CHAR_LENGTH},
    {"SUBSTRING", F_SUBSTRING},
    {"SUBSTR", F_SUBSTRING},
    {"TRIM", F_TRIM},
    {"CONCAT", F_CONCAT},
    {"CONCAT_WS", F_CONCAT_WS},
    {"REPLACE", F_REPLACE},
    {"POSITION", F_POSITION},
    {"LEFT", F_LEFT},
    {"RIGHT", F_RIGHT},
    {"LPAD", F_LPAD},
    {"RPAD", F_RPAD},
    {"REGEXP_EXTRACT", F_REGEXP_EXTRACT},
    {"REGEXP_REPLACE", F_REGEXP_REPLACE},
    {"REGEXP", F_REGEXP},
    {"SPLIT_INDEX", F_SPLIT_INDEX},
    {"DATE_FORMAT", F_DATE_FORMAT},
    {"EXTRACT", F_EXTRACT},
    {"TO_TIMESTAMP", F_TO_TIMESTAMP},
    {"UNIX_TIMESTAMP", F_UNIX_TIMESTAMP},
    {"FROM_UNIXTIME", F_FROM_UNIXTIME},
    {"PROCTIME", F_NOW},
    {"NOW", F_NOW},
    {"CURRENT_TIMESTAMP", F_NOW},
    {"LOCALTIMESTAMP", F_NOW},
    {"HASH_CODE", F_HASH_CODE},
};

/* Pre-compile constant pattern arguments of string/time functions. */
static int precompile(cstate *cs, inode *n) {
  inode *pat = NULL;
  int flavour = 0;
  switch (n->fn) {
  case F_REGEXP_EXTRACT:
  case F_REGEXP_REPLACE:
  case F_REGEXP:
    pat = n->args[1];
    break;
  case F_SIMILAR:
    pat = n->args[1];
    flavour = 1;
    break;
  case F_DATE_FORMAT:
  case F_TO_TIMESTAMP:
  case F_UNIX_TIMESTAMP:
  case F_FROM_UNIXTIME:
    if (n->nargs == 2 && n->args[1]->kind == N_CONST && !n->args[1]->cnull)
      n->aux = ix_datefmt_compile(cs->a, sl_str_data(&n->args[1]->cs),
                                  n->args[1]->cs.len);
    return SL_OK;
  default:
    return SL_OK;
  }
  if (pat->kind != N_CONST || pat->cnull)
    return SL_OK;
  if (n->fn == F_SIMILAR && n->nargs > 2)
    return SL_OK; /* with ESCAPE: translated per call */
  char msg[256];
  void *code =
      ix_regex_compile(cs->a, sl_str_data(&pat->cs), pat->cs.len, flavour, msg);
  if (!code)
    return cerr(cs, pat->src, SL_EINVAL, "invalid regular expression: %s", msg);
  /* Compiled into the program's arena: freed with it. */
  n->aux = code;
  return SL_OK;
}

/* The planner's code -> string lookup (planner/dictionary_codes.c). */
static inode *compile_dictionary(cstate *cs, const sl_bexpr *e) {
  inode *code = e->nargs == 1 ? compile(cs, e->args[0]) : NULL;
  if (!code)
    return NULL;
  if (code->rep != R_I64) {
    cerr(cs, e, SL_EINTERNAL, "internal error: a dictionary code that is %s",
         "not an integer");
    return NULL;
  }
  inode *n = new_node(cs, N_DICTIONARY, e->type, e, 1);
  n->args[0] = code;
  n->aux = (void *)e->dictionary;
  return n;
}

static inode *compile_call(cstate *cs, const sl_bexpr *e) {
  if (e->dictionary)
    return compile_dictionary(cs, e);
  const char *name = e->fn->name;
  ifn fn = F_NONE;
  sl_interval_unit unit = e->unit;
  for (size_t i = 0; i < sizeof fn_names / sizeof fn_names[0]; i++)
    if (strcmp(name, fn_names[i].name) == 0)
      fn = fn_names[i].fn;
  if (fn == F_NONE && unit_of_fn(name, &unit))
    fn = F_EXTRACT;

  inode *args[64];
  if (e->nargs > 64) {
    cerr(cs, e, SL_EUNSUPPORTED, "too many arguments to %s", name);
    return NULL;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!(args[i] = compile(cs, e->args[i])))
      return NULL;

  if (strcmp(name, "MOD") == 0) {
    /* The result has the second argument's type (Calcite); the remainder
     * is computed exactly in the operands' common type, then converted. */
    const sl_type *wt = e->type;
    if (args[0]->rep == R_DEC || args[1]->rep == R_DEC) {
      int s = args[0]->rep == R_DEC ? args[0]->scale : 0;
      if (args[1]->rep == R_DEC && args[1]->scale > s)
        s = args[1]->scale;
      wt = sl_type_decimal(cs->a, 38, s);
    }
    inode *n = new_node(cs, N_ARITH, wt, e, 2);
    n->op = SL_OP_MOD;
    n->args[0] = coerce_arith(cs, args[0], wt);
    n->args[1] = coerce_arith(cs, args[1], wt);
    return coerce(cs, n, e->type);
  }
  if (strcmp(name, "COALESCE") == 0) {
    inode *n = new_node(cs, N_COALESCE, e->type, e, e->nargs);
    for (int i = 0; i < e->nargs; i++)
      n->args[i] = coerce(cs, args[i], e->type);
    return n;
  }
  if (strcmp(name, "IF") == 0) {
    inode *n = new_node(cs, N_CASE, e->type, e, 3);
    n->args[0] = coerce(cs, args[0], mk_type(cs, SL_TYPE_BOOLEAN));
    n->args[1] = coerce(cs, args[1], e->type);
    n->args[2] = coerce(cs, args[2], e->type);
    return n;
  }
  if (strcmp(name, "NULLIF") == 0) {
    inode *n = new_node(cs, N_NULLIF, e->type, e, 2);
    n->args[0] = coerce(cs, args[0], e->type);
    n->args[1] = make_cmp(cs, e, SL_OP_EQ, args[0], args[1]); /* shared */
    return n;
  }
  if (fn == F_NONE) {
    cerr(cs, e, SL_EUNSUPPORTED,
         "not supported yet: function %s in the interpreter", name);
    return NULL;
  }

  inode *n = new_node(cs, N_CALL, e->type, e, e->nargs);
  n->fn = fn;
  n->unit = unit;
  n->trim_side = e->trim_side;
  const sl_type *dbl = mk_type(cs, SL_TYPE_DOUBLE);
  const sl_type *big = mk_type(cs, SL_TYPE_BIGINT);
  const sl_type *str = mk_type(cs, SL_TYPE_VARCHAR);
  for (int i = 0; i < e->nargs; i++) {
    inode *x = args[i];
    switch (fn) {
    case F_ABS:
    case F_ROUND:
      x = i == 0 ? coerce_arith(cs, x, e->type) : coerce(cs, x, big);
      break;
    case F_FLOOR:
    case F_CEIL:
      if (x->rep == R_I64 && !sl_type_is_integer(x->type) && !is_null_type(x)) {
        n->fn = F_FLOOR_TIME;
        n->op = fn == F_CEIL;
        if (x->type->kind == SL_TYPE_DATE)
          x = coerce(cs, x, e->type);
      } else {
        x = coerce_arith(cs, x, e->type);
      }
      break;
    case F_POWER:
    case F_SQRT:
    case F_LN:
    case F_LOG10:
    case F_EXP:
      x = coerce(cs, x, dbl);
      break;
    case F_HASH_CODE:
    case F_EXTRACT:
      break; /* any type, read as is */
    case F_DATE_FORMAT:
      if (i == 0 && x->rep == R_I64)
        x = coerce(cs, x, sl_type_timestamp(cs->a, 6));
      else
        x = coerce(cs, x, str);
      break;
    case F_FROM_UNIXTIME:
      x = i == 0 ? coerce(cs, x, big) : coerce(cs, x, str);
      break;
    default:
      /* string functions: strings and integer counts */
      if (is_null_type(x))
        x = coerce(cs, x, str);
      else if (x->rep == R_I64 || x->rep == R_DEC || x->rep == R_F64)
        x = coerce(cs, x, big);
      break;
    }
    n->args[i] = x;
  }
  if (precompile(cs, n))
    return NULL;
  return n;
}

static inode *compile_column(cstate *cs, const sl_bexpr *e, int field) {
  if (!cs->in || field < 0 || field >= cs->in->nfields) {
    cerr(cs, e, SL_EINTERNAL,
         "internal error: column %s has no place in the input row",
         e->name ? e->name : "?");
    return NULL;
  }
  const sl_field *f = &cs->in->fields[field];
  inode *n = new_node(cs, N_LOAD, e->type, e, 0);
  n->field = field;
  n->ptype = f->ptype;
  n->offset = f->offset;
  if (rep_of(f->type) != n->rep ||
      (n->rep == R_DEC && f->type->scale != e->type->scale)) {
    cerr(cs, e, SL_EINTERNAL,
         "internal error: column %s has a different type in the input row",
         e->name ? e->name : "?");
    return NULL;
  }
  return n;
}

static inode *compile_field(cstate *cs, const sl_bexpr *e) {
  int path[32], depth = 0;
  const sl_bexpr *x = e;
  while (x->kind == SL_BEXPR_FIELD && depth < 32) {
    path[depth++] = x->index;
    x = x->args[0];
  }
  if (x->kind != SL_BEXPR_COLUMN || x->depth != 0) {
    cerr(cs, e, SL_EUNSUPPORTED,
         "not supported yet: field access on a computed ROW value", NULL);
    return NULL;
  }
  /* path was collected innermost first: reverse it */
  for (int i = 0; i < depth / 2; i++) {
    int t = path[i];
    path[i] = path[depth - 1 - i];
    path[depth - 1 - i] = t;
  }
  int field = -1;
  if (cs->resolve) {
    field = cs->resolve(cs->resolve_arg, x->index, path, depth);
  } else if (cs->in) {
    char name[512];
    int len = snprintf(name, sizeof name, "%s", x->name ? x->name : "");
    const sl_type *t = x->type;
    for (int i = 0; i < depth && t && t->kind == SL_TYPE_ROW; i++) {
      if (path[i] < 0 || path[i] >= t->nfields)
        break;
      len += snprintf(name + len, sizeof name - (size_t)len, ".%s",
                      t->fields[path[i]].name);
      if (len >= (int)sizeof name)
        break;
      t = t->fields[path[i]].type;
    }
    for (int i = 0; i < cs->in->nfields; i++)
      if (cs->in->fields[i].name && strcmp(cs->in->fields[i].name, name) == 0)
        field = i;
  }
  return compile_column(cs, e, field);
}

static bool lit_const(cstate *cs, const sl_bexpr *e, inode *n) {
  const sl_bliteral *l = &e->lit;
  const char *text = l->text ? l->text : "";
  size_t len = strlen(text);
  switch (l->kind) {
  case SL_LIT_NULL:
    n->cnull = true;
    return true;
  case SL_LIT_BOOL:
  case SL_LIT_INTEGER:
  case SL_LIT_INTERVAL:
    n->ci = l->i64;
    return true;
  case SL_LIT_DOUBLE:
    n->cf = l->f64;
    return true;
  case SL_LIT_DECIMAL:
    return dec_parse(text, len, n->scale, &n->cd);
  case SL_LIT_STRING: {
    char *copy = sl_arena_strndup(cs->a, text, len);
    n->cs = sl_str_make(copy, (uint32_t)len);
    return true;
  }
  case SL_LIT_TIMESTAMP:
    return ix_parse_timestamp(text, len, &n->ci);
  case SL_LIT_DATE:
    return ix_parse_date(text, len, &n->ci);
  case SL_LIT_TIME:
    return ix_parse_time(text, len, &n->ci);
  }
  return false;
}

/* A literal as a constant node on the caller's stack (no arena, no slot):
 * an IN list's million literals only pass through here into the set. */
static bool literal_node(cstate *cs, const sl_bexpr *e, inode *n) {
  memset(n, 0, sizeof *n);
  n->kind = N_CONST;
  n->type = e->type;
  n->rep = rep_of(e->type);
  n->src = e;
  n->slot = -1;
  if (n->rep == R_DEC) {
    n->prec = e->type->precision;
    n->scale = e->type->scale;
  }
  return lit_const(cs, e, n);
}

/* The constant k (of literal_node) as a value of type t in *out (an
 * int64_t, double, i128 or sl_str by t's representation): false if the
 * conversion fails (the interpreter then reports it per row, as always). */
static bool const_as(const inode *k, const sl_type *t, void *out) {
  if (fits_as_is(k, t)) {
    switch (k->rep) {
    case R_I64:
      *(int64_t *)out = k->ci;
      return true;
    case R_F64:
      *(double *)out = k->cf;
      return true;
    case R_DEC:
      *(i128 *)out = k->cd;
      return true;
    case R_STR:
      *(sl_str *)out = k->cs;
      return true;
    }
  }
  inode cast, *arg = (inode *)k;
  memset(&cast, 0, sizeof cast);
  cast.kind = N_CAST;
  cast.type = t;
  cast.rep = rep_of(t);
  cast.nargs = 1;
  cast.args = &arg;
  if (cast.rep == R_I64)
    ix_int_range(t, &cast.lo, &cast.hi);
  if (cast.rep == R_DEC) {
    cast.prec = t->precision;
    cast.scale = t->scale;
  }
  const void *from = k->rep == R_I64   ? (const void *)&k->ci
                     : k->rep == R_F64 ? (const void *)&k->cf
                     : k->rep == R_DEC ? (const void *)&k->cd
                                       : (const void *)&k->cs;
  i128 res[2]; /* room for any representation, aligned */
  if (ix_cast_one(&cast, from, res) != 0)
    return false;
  memcpy(out, res, cast.rep == R_DEC ? sizeof(i128) : 16);
  return true;
}

static bool same_type_shape(const sl_type *x, const sl_type *y) {
  return x && y && x->kind == y->kind && x->precision == y->precision &&
         x->scale == y->scale;
}

/* x IN (v1, ...): the literal values go into a hashed set (interp_inset.c)
 * of the common comparison type of the operand and every value; the other
 * values stay operands compared one by one. */
static __attribute__((noinline)) inode *
compile_in_values(cstate *cs, const sl_bexpr *e, inode *x) {
  inode **vals = SL_ANEW_N(cs->a, inode *, e->nargs);
  inode probe = *x, k;
  const sl_type *ct = x->type, *last = NULL;
  int nconst = 0, nother = 0;
  for (int i = 1; i < e->nargs; i++) {
    const sl_bexpr *v = e->args[i];
    inode *vn;
    if ((i & 4095) == 0 && sl_cancel_current_pending()) {
      sl_error_set(cs->err, SL_ECANCELLED, "query cancelled");
      return NULL;
    }
    if (v->kind == SL_BEXPR_LITERAL && literal_node(cs, v, &k)) {
      nconst++;
      if (same_type_shape(v->type, last))
        continue; /* the common type cannot change */
      last = v->type;
      vn = &k;
    } else {
      if (!(vn = vals[i] = compile(cs, v)))
        return NULL;
      nother++;
    }
    ct = compare_type(cs, &probe, vn);
    probe.type = ct;
    probe.rep = rep_of(ct);
    probe.scale = ct->scale;
  }
  ix_inset *set =
      nconst ? ix_inset_new(cs->a, rep_of(ct), (uint64_t)nconst) : NULL;
  /* literals that do not convert stay operands, to fail where they did */
  for (int i = 1; set && i < e->nargs; i++) {
    const sl_bexpr *v = e->args[i];
    if ((i & 4095) == 0 && sl_cancel_current_pending()) { /* 1M adds: 0.3 s */
      sl_error_set(cs->err, SL_ECANCELLED, "query cancelled");
      return NULL;
    }
    if (vals[i] || !literal_node(cs, v, &k))
      continue;
    if (k.type->kind == SL_TYPE_NULL || k.cnull) {
      ix_inset_add_null(set);
      continue;
    }
    i128 val[2];
    if (const_as(&k, ct, val) && ix_inset_add(set, val))
      continue;
    inode *kept = new_node(cs, N_CONST, v->type, v, 0);
    if (!lit_const(cs, v, kept))
      return NULL;
    vals[i] = kept;
    nother++;
  }
  inode *n = new_node(cs, N_IN, e->type, e, 1 + nother);
  n->negated = e->negated;
  n->aux = set;
  n->args[0] = coerce(cs, x, ct);
  for (int i = 1, j = 1; i < e->nargs; i++)
    if (vals[i])
      n->args[j++] = coerce(cs, vals[i], ct);
  return n;
}

/* The operand here, the values (with their large locals) in their own
 * frame: a chain of INs recurses through this one only. */
static inode *compile_in(cstate *cs, const sl_bexpr *e) {
  inode *x = compile(cs, e->args[0]);
  return x ? compile_in_values(cs, e, x) : NULL;
}

static inode *compile(cstate *cs, const sl_bexpr *e) {
  if (sl_cancel_current_pending()) { /* Ctrl-C, .timeout */
    sl_error_set(cs->err, SL_ECANCELLED, "query cancelled");
    return NULL;
  }
  switch (e->kind) {
  case SL_BEXPR_LITERAL: {
    inode *n = new_node(cs, N_CONST, e->type, e, 0);
    if (!lit_const(cs, e, n)) {
      cerr(cs, e, SL_EINVAL, "invalid literal '%s'", e->lit.text);
      return NULL;
    }
    return n;
  }
  case SL_BEXPR_COLUMN:
    if (e->depth != 0) {
      cerr(cs, e, SL_EUNSUPPORTED,
           "not supported yet: correlated column reference %s", e->name);
      return NULL;
    }
    if (e->type->kind == SL_TYPE_ROW) {
      cerr(cs, e, SL_EUNSUPPORTED,
           "not supported yet: ROW value %s in an expression", e->name);
      return NULL;
    }
    return compile_column(cs, e, cs->map ? cs->map[e->index] : -1);
  case SL_BEXPR_FIELD:
    if (e->type->kind == SL_TYPE_ROW) {
      cerr(cs, e, SL_EUNSUPPORTED,
           "not supported yet: ROW value %s in an expression", e->name);
      return NULL;
    }
    return compile_field(cs, e);
  case SL_BEXPR_UNARY: {
    inode *x = compile(cs, e->args[0]);
    if (!x)
      return NULL;
    if (e->op == SL_OP_PLUS)
      return coerce(cs, x, e->type);
    inode *n = new_node(cs, e->op == SL_OP_NOT ? N_NOT : N_NEG, e->type, e, 1);
    n->args[0] = coerce(cs, x, e->type);
    return n;
  }
  case SL_BEXPR_BINARY: {
    sl_op op = e->op;
    if (op == SL_OP_AND || op == SL_OP_OR) { /* two or more operands */
      inode *n =
          new_node(cs, op == SL_OP_AND ? N_AND : N_OR, e->type, e, e->nargs);
      for (int i = 0; i < e->nargs; i++) {
        inode *x = compile(cs, e->args[i]);
        if (!x)
          return NULL;
        n->args[i] = coerce(cs, x, e->type);
      }
      return n;
    }
    inode *x = compile(cs, e->args[0]);
    inode *y = x ? compile(cs, e->args[1]) : NULL;
    if (!y)
      return NULL;
    if (op >= SL_OP_EQ && op <= SL_OP_GE)
      return make_cmp(cs, e, op, x, y);
    if (op == SL_OP_CONCAT) {
      inode *n = new_node(cs, N_CONCAT, e->type, e, 2);
      n->args[0] = coerce(cs, x, e->type);
      n->args[1] = coerce(cs, y, e->type);
      return n;
    }
    const sl_type *lt = x->type, *rt = y->type;
    bool ltemp = sl_type_is_temporal(lt), rtemp = sl_type_is_temporal(rt);
    bool liv = sl_type_is_interval(lt), riv = sl_type_is_interval(rt);
    if ((ltemp && riv) || (liv && rtemp)) {
      inode *n = new_node(cs, N_TIME_ADD, e->type, e, 2);
      n->op = op;
      n->args[0] = coerce(cs, ltemp ? x : y, e->type);
      n->args[1] = ltemp ? y : x;
      return n;
    }
    if ((liv && !riv && !is_null_type(y)) ||
        (riv && !liv && !is_null_type(x))) {
      inode *n = new_node(cs, N_IV_SCALE, e->type, e, 2);
      n->op = op;
      n->args[0] = liv ? x : y;
      n->args[1] = coerce(cs, liv ? y : x, mk_type(cs, SL_TYPE_DOUBLE));
      return n;
    }
    inode *n = new_node(cs, N_ARITH, e->type, e, 2);
    n->op = op;
    if (liv || riv) { /* interval +/- interval: integer arithmetic */
      n->args[0] = coerce(cs, x, e->type);
      n->args[1] = coerce(cs, y, e->type);
    } else {
      n->args[0] = coerce_arith(cs, x, e->type);
      n->args[1] = coerce_arith(cs, y, e->type);
    }
    return n;
  }
  case SL_BEXPR_CALL:
    return compile_call(cs, e);
  case SL_BEXPR_CAST: {
    inode *x = compile(cs, e->args[0]);
    if (!x)
      return NULL;
    inode *n = new_node(cs, N_CAST, e->type, e, 1);
    n->args[0] = x;
    n->negated = e->negated;
    n->op = 1; /* explicit: CHAR(n)/VARCHAR(n) lengths apply */
    return n;
  }
  case SL_BEXPR_CASE: {
    inode *n = new_node(cs, N_CASE, e->type, e, e->nargs);
    sl_type *bt = mk_type(cs, SL_TYPE_BOOLEAN);
    for (int i = 0; i < e->nargs; i++) {
      inode *x = compile(cs, e->args[i]);
      if (!x)
        return NULL;
      bool cond = i % 2 == 0 && i < e->nargs - 1;
      n->args[i] = coerce(cs, x, cond ? bt : e->type);
    }
    return n;
  }
  case SL_BEXPR_BETWEEN: {
    inode *v[3];
    for (int i = 0; i < 3; i++)
      if (!(v[i] = compile(cs, e->args[i])))
        return NULL;
    /* the operand is one shared node (compiling it twice would double the
     * work at every level of nested BETWEENs) */
    inode *v2 = v[0];
    inode *n = new_node(cs, N_AND, e->type, e, 2);
    n->args[0] = make_cmp(cs, e, SL_OP_GE, v[0], v[1]);
    n->args[1] = make_cmp(cs, e, SL_OP_LE, v2, v[2]);
    if (!e->negated)
      return n;
    inode *neg = new_node(cs, N_NOT, e->type, e, 1);
    neg->args[0] = n;
    return neg;
  }
  case SL_BEXPR_IN_LIST:
    return compile_in(cs, e);
  case SL_BEXPR_LIKE: {
    const sl_type *st = mk_type(cs, SL_TYPE_VARCHAR);
    inode *args[3];
    for (int i = 0; i < e->nargs; i++) {
      if (!(args[i] = compile(cs, e->args[i])))
        return NULL;
      args[i] = coerce(cs, args[i], st);
    }
    inode *n;
    if (e->similar) {
      n = new_node(cs, N_CALL, e->type, e, e->nargs);
      n->fn = F_SIMILAR;
      for (int i = 0; i < e->nargs; i++)
        n->args[i] = args[i];
      if (precompile(cs, n))
        return NULL;
    } else {
      n = new_node(cs, N_LIKE, e->type, e, e->nargs);
      for (int i = 0; i < e->nargs; i++)
        n->args[i] = args[i];
      inode *p = args[1], *esc = e->nargs > 2 ? args[2] : NULL;
      if (p->kind == N_CONST && !p->cnull &&
          (!esc || (esc->kind == N_CONST && !esc->cnull && esc->cs.len == 1)))
        n->aux =
            ix_like_compile(cs->a, sl_str_data(&p->cs), p->cs.len,
                            esc ? (unsigned char)sl_str_data(&esc->cs)[0] : -1);
    }
    if (!e->negated)
      return n;
    inode *neg = new_node(cs, N_NOT, e->type, e, 1);
    neg->args[0] = n;
    return neg;
  }
  case SL_BEXPR_IS: {
    inode *x = compile(cs, e->args[0]);
    if (!x)
      return NULL;
    inode *n = new_node(cs, N_IS, e->type, e, 1);
    n->op = e->is_what;
    n->negated = e->negated;
    n->args[0] = x;
    return n;
  }
  case SL_BEXPR_SUBQUERY:
    cerr(cs, e, SL_EUNSUPPORTED, "not supported yet: subqueries in expressions",
         NULL);
    return NULL;
  case SL_BEXPR_GROUP_REF:
  case SL_BEXPR_AGG_REF:
  case SL_BEXPR_WINDOW_REF:
  case SL_BEXPR_WINDOW_PROP:
    cerr(cs, e, SL_EINTERNAL,
         "internal error: %s must be rewritten to a column reference before "
         "it is compiled",
         sl_bexpr_kind_name(e->kind));
    return NULL;
  }
  cerr(cs, e, SL_EINTERNAL, "internal error: unknown expression kind", NULL);
  return NULL;
}

/* ---- vector slots -----------------------------------------------------
 * Each node's result is a vector (17 KB) in the context; one per node would
 * make a generated chain of 100,000 conditions take gigabytes per worker.
 * A node's slot is needed only from its evaluation until its parent has
 * used it, so slots are reused like registers: the parent takes its slot
 * before its operands (they must not overwrite it while it is built); an
 * operand's slot is free again once the parent is done with it, which for
 * AND, OR, CASE and COALESCE (that read operand k before evaluating k + 1)
 * is right after that operand.  A node with several parents is evaluated
 * once per parent, so it and everything under it keep their own slots. */

typedef struct slot_pool {
  int *free;
  int nfree, cap;
  int next; /* slots used so far */
} slot_pool;

static void count_refs(inode *n) {
  if (n->refs++ > 0)
    return;
  for (int i = 0; i < n->nargs; i++)
    count_refs(n->args[i]);
}

static int take_slot(slot_pool *p) {
  return p->nfree > 0 ? p->free[--p->nfree] : p->next++;
}

static void give_slot(slot_pool *p, int slot) {
  if (p->nfree == p->cap) {
    int cap = p->cap ? p->cap * 2 : 64;
    int *grown = realloc(p->free, sizeof *grown * (size_t)cap);
    if (!grown)
      return; /* the slot stays unused: correct, only larger */
    p->free = grown;
    p->cap = cap;
  }
  p->free[p->nfree++] = slot;
}

static bool reads_operands_in_turn(const inode *n) {
  return n->kind == N_AND || n->kind == N_OR || n->kind == N_CASE ||
         n->kind == N_COALESCE;
}

static void assign_slots(slot_pool *p, inode *n, bool pinned) {
  if (n->slot >= 0)
    return; /* a shared node met again: its slots are its own */
  pinned = pinned || n->refs > 1;
  n->slot = take_slot(p);
  bool in_turn = reads_operands_in_turn(n);
  for (int i = 0; i < n->nargs; i++) {
    inode *c = n->args[i];
    bool keep = pinned || c->refs > 1;
    assign_slots(p, c, pinned);
    if (in_turn && !keep)
      give_slot(p, c->slot);
  }
  if (!in_turn)
    for (int i = 0; i < n->nargs; i++)
      if (!pinned && n->args[i]->refs <= 1)
        give_slot(p, n->args[i]->slot);
}

int sl_expr_compile_ex(sl_arena *a, const sl_bexpr *e,
                       const sl_row_layout *input, const int *column_map,
                       sl_expr_field_resolver resolve, void *resolve_arg,
                       sl_expr_prog **out, sl_error *err) {
  cstate cs = {a, input, column_map, resolve, resolve_arg, 0, err, 0};
  *out = NULL;
  inode *root = compile(&cs, e);
  if (!root)
    return err && err->code ? err->code : SL_EINTERNAL;
  /* The result has the bound type exactly (e.g. a DECIMAL operand that was
   * narrower than the CASE it is the only branch of). */
  root = coerce(&cs, root, e->type);
  count_refs(root);
  slot_pool pool = {0};
  assign_slots(&pool, root, false);
  free(pool.free);
  sl_expr_prog *p = SL_ANEW(a, sl_expr_prog);
  p->root = root;
  p->nslots = pool.next;
  p->nnodes = cs.nnodes;
  p->input = input;
  *out = p;
  return SL_OK;
}

int sl_expr_compile(sl_arena *a, const sl_bexpr *e, const sl_row_layout *input,
                    const int *column_map, sl_expr_prog **out, sl_error *err) {
  return sl_expr_compile_ex(a, e, input, column_map, NULL, NULL, out, err);
}

int sl_expr_nodes(const sl_expr_prog *p) {
  return p->nnodes;
}

const sl_type *sl_expr_type(const sl_expr_prog *p) {
  return p->root->type;
}
