/* constant_fold.c - evaluate constant subexpressions once, at plan time.
 *
 * A subexpression without columns, aggregates, window properties,
 * subqueries or clock reads (`10 * 1000`, `CAST('2024-01-01' AS
 * TIMESTAMP(3))`, `UPPER('a') || 'b'`) has the same value for every
 * record; the planner evaluates it once with the interpreter (the
 * reference semantics, so the folded value is exactly what every record
 * would have computed) and replaces it with a literal of the same type.
 *
 * Not folded, deliberately:
 *   - anything whose evaluation fails (`1 / 0`, an overflow): it stays, so
 *     the error is raised where and when the interpreter raises it (a
 *     guarded branch of a CASE may never run it);
 *   - functions without arguments: they read the clock (NOW(), PROCTIME(),
 *     CURRENT_TIMESTAMP, UNIX_TIMESTAMP()) and must run per record;
 *   - values no literal can spell: intervals, ROW values, and strings with
 *     a NUL byte.
 */
#include <stdio.h>
#include <string.h>

#include "sluice/common/cancel.h"
#include "sluice/common/strbuf.h"
#include "sluice/expr/interpreter.h"
#include "sluice/planner/plan.h"
#include "sluice/row/value_text.h"

typedef struct folder {
  sl_arena *a;
  sl_expr_ctx *ctx;
  sl_plan *plan;
  int folded;
} folder;

/* The kinds that compute a value from their arguments alone. */
static bool computes(const sl_bexpr *e) {
  switch (e->kind) {
  case SL_BEXPR_UNARY:
  case SL_BEXPR_BINARY:
  case SL_BEXPR_CAST:
  case SL_BEXPR_CASE:
  case SL_BEXPR_BETWEEN:
  case SL_BEXPR_IN_LIST:
  case SL_BEXPR_LIKE:
  case SL_BEXPR_IS:
    return true;
  case SL_BEXPR_CALL:
    return e->nargs > 0 && e->fn;
  default:
    return false;
  }
}

static char *text_of(sl_arena *a, const sl_type *t, sl_ptype p,
                     const void *field) {
  char buf[SL_VALUE_TEXT_MAX];
  int n = sl_value_format_scalar(buf, t, p, field);
  return n < 0 ? NULL : sl_arena_strndup(a, buf, (size_t)n);
}

/* The literal for value v of e's type, or NULL when none can spell it. */
static sl_bexpr *literal_of(folder *f, const sl_bexpr *e,
                            const sl_expr_value *v) {
  sl_bexpr *l = SL_ANEW(f->a, sl_bexpr);
  l->kind = SL_BEXPR_LITERAL;
  l->type = e->type;
  l->span = e->span;
  sl_bliteral *lit = &l->lit;
  if (v->null) {
    lit->kind = SL_LIT_NULL;
    return l;
  }
  sl_ptype p = sl_ptype_of(e->type);
  switch (p) {
  case SL_P_BOOL:
    lit->kind = SL_LIT_BOOL;
    lit->i64 = v->i64 != 0;
    return l;
  case SL_P_I8:
  case SL_P_I16:
  case SL_P_I32:
  case SL_P_I64:
    lit->kind = SL_LIT_INTEGER;
    lit->i64 = v->i64;
    lit->text = text_of(f->a, e->type, SL_P_I64, &v->i64);
    return l;
  case SL_P_F32:
  case SL_P_F64: {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v->f64);
    lit->kind = SL_LIT_DOUBLE;
    lit->f64 = v->f64;
    lit->text = sl_arena_strdup(f->a, buf);
    return l;
  }
  case SL_P_DEC64:
  case SL_P_DEC128: {
    __int128 d = v->dec;
    lit->kind = SL_LIT_DECIMAL;
    lit->text = text_of(f->a, e->type, SL_P_DEC128, &d);
    return l;
  }
  case SL_P_STR:
    if (memchr(sl_str_data(&v->str), 0, v->str.len))
      return NULL;
    lit->kind = SL_LIT_STRING;
    lit->text = sl_arena_strndup(f->a, sl_str_data(&v->str), v->str.len);
    return l;
  case SL_P_DATE: {
    int32_t days = (int32_t)v->i64;
    lit->kind = SL_LIT_DATE;
    lit->text = text_of(f->a, e->type, p, &days);
    return l;
  }
  case SL_P_TIME: {
    int32_t ms = (int32_t)v->i64;
    lit->kind = SL_LIT_TIME;
    lit->text = text_of(f->a, e->type, p, &ms);
    return l;
  }
  case SL_P_TS: {
    /* At the type's precision unless that would lose digits. */
    sl_type full = *e->type;
    if (full.precision < 3 || v->i64 % 1000 != 0)
      full.precision = 6;
    lit->kind = SL_LIT_TIMESTAMP;
    lit->text = text_of(f->a, &full, p, &v->i64);
    return l;
  }
  default:
    return NULL;
  }
}

/* Evaluate e (all of whose arguments are literals) and return its literal,
 * or NULL to keep e as it is. */
static __attribute__((noinline)) sl_bexpr *evaluate(folder *f,
                                                    const sl_bexpr *e) {
  sl_arena scratch;
  sl_arena_init(&scratch, 0);
  sl_error err = {0};
  sl_expr_prog *prog = NULL;
  sl_bexpr *out = NULL;
  sl_expr_value v;
  if (sl_expr_compile(&scratch, e, NULL, NULL, &prog, &err) == SL_OK &&
      sl_expr_eval_row(prog, NULL, 0, &v, f->ctx, &err) == SL_OK) {
    out = literal_of(f, e, &v); /* copies strings out of the context */
  }
  sl_error_clear(&err);
  sl_arena_free(&scratch);
  return out;
}

static sl_bexpr *fold(folder *f, sl_bexpr *e) {
  if (!e || e->nargs == 0 || sl_cancel_current_pending())
    return e; /* cancelled: planning returns SL_ECANCELLED */
  sl_bexpr **args = NULL;
  bool all_literal = true;
  int noted = f->plan->nrewrites;
  for (int i = 0; i < e->nargs; i++) {
    sl_bexpr *x = fold(f, e->args[i]);
    if (x != e->args[i]) {
      if (!args) {
        args = SL_ANEW_N(f->a, sl_bexpr *, e->nargs);
        memcpy(args, e->args, sizeof *args * (size_t)e->nargs);
      }
      args[i] = x;
    }
    if (!x || x->kind != SL_BEXPR_LITERAL)
      all_literal = false;
  }
  sl_bexpr *c = e;
  if (args) {
    c = SL_ANEW(f->a, sl_bexpr);
    *c = *e;
    c->args = args;
  }
  if (!all_literal || !computes(c))
    return c;
  sl_bexpr *l = evaluate(f, c);
  if (!l)
    return c;
  /* Report the largest folded expressions only, not their parts. */
  f->folded -= f->plan->nrewrites - noted;
  f->plan->nrewrites = noted;
  f->folded++;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "constant folding: ");
  sl_bexpr_format(&b, e);
  sl_strbuf_append(&b, " -> ");
  sl_bexpr_format(&b, l);
  sl_plan_note(f->a, f->plan, "%s", sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return l;
}

int sl_plan_fold_constants(sl_arena *a, sl_plan *p) {
  folder f = {a, sl_expr_ctx_new(), p, 0};
  p->filter = fold(&f, p->filter);
  p->post_join_filter = fold(&f, p->post_join_filter);
  for (int i = 0; i < p->njoin_keys; i++) {
    p->join_stream_keys[i] = fold(&f, p->join_stream_keys[i]);
    p->join_table_keys[i] = fold(&f, p->join_table_keys[i]);
  }
  p->rowtime = fold(&f, p->rowtime);
  p->watermark = fold(&f, p->watermark);
  if (p->windowed)
    p->window.time = fold(&f, p->window.time);
  if (p->kind == SL_PLAN_AGGREGATE) {
    for (int i = 0; i < p->nkeys; i++)
      p->keys[i] = fold(&f, p->keys[i]);
    for (int i = 0; i < p->naggs; i++) {
      p->aggs[i].arg = fold(&f, p->aggs[i].arg);
      p->aggs[i].filter = fold(&f, p->aggs[i].filter);
    }
    p->having = fold(&f, p->having);
  }
  for (int i = 0; i < p->nout; i++)
    p->out[i] = fold(&f, p->out[i]);
  sl_expr_ctx_free(f.ctx);
  return f.folded;
}
