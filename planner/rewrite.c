/* rewrite.c - plan rewrites that need no statistics.
 *
 * Constant propagation from the filter: a conjunct `column = constant` in
 * the filter of the stream holds for every row that reaches the rest of the
 * plan, so the column can be replaced by the constant in every expression
 * evaluated after the filter, and the result folded.  The case that
 * matters: NEXMark's `bid` view filters `event_type = 2` over a table whose
 * event time is `CASE WHEN event_type = 0 THEN person.dateTime WHEN
 * event_type = 1 THEN auction.dateTime ELSE bid.dateTime END`; after the
 * rewrite the event time is just `bid.dateTime`, so the source no longer
 * produces the person and auction leaves and no CASE runs per record.
 *
 * Folding is deliberately small: comparisons of two integer or boolean
 * literals, NOT, AND, OR with a constant side, and CASE branches whose
 * condition became constant.  Everything else is left as it was.
 */
#include <stdarg.h>
#include <string.h>

#include "plan_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/planner/plan.h"

typedef struct fact {
  int column;
  const sl_bexpr *value; /* an integer or boolean literal */
} fact;

typedef struct rewriter {
  sl_arena *a;
  int nfacts;
  fact facts[16];
} rewriter;

static bool is_int_lit(const sl_bexpr *e) {
  return e && e->kind == SL_BEXPR_LITERAL &&
         (e->lit.kind == SL_LIT_INTEGER || e->lit.kind == SL_LIT_BOOL);
}

static sl_bexpr *bool_lit(rewriter *r, bool v, const sl_bexpr *like) {
  sl_bexpr *e = SL_ANEW(r->a, sl_bexpr);
  e->kind = SL_BEXPR_LITERAL;
  e->type = sl_type_new(r->a, SL_TYPE_BOOLEAN);
  e->span = like->span;
  e->lit.kind = SL_LIT_BOOL;
  e->lit.i64 = v;
  return e;
}

static bool is_bool_lit(const sl_bexpr *e, bool v) {
  return e && e->kind == SL_BEXPR_LITERAL && e->lit.kind == SL_LIT_BOOL &&
         (e->lit.i64 != 0) == v;
}

/* Collect `column = literal` conjuncts of a filter. */
static void collect_fact(rewriter *r, const sl_bexpr *e) {
  if (!e || e->kind != SL_BEXPR_BINARY || e->op != SL_OP_EQ || r->nfacts == 16)
    return;
  const sl_bexpr *x = e->args[0], *y = e->args[1];
  if (is_int_lit(x)) {
    const sl_bexpr *t = x;
    x = y;
    y = t;
  }
  if (x->kind == SL_BEXPR_COLUMN && x->depth == 0 && is_int_lit(y) &&
      sl_type_is_integer(x->type)) {
    r->facts[r->nfacts].column = x->index;
    r->facts[r->nfacts].value = y;
    r->nfacts++;
  }
}

static void collect_facts(rewriter *r, sl_bexpr *e) {
  sl_pl_parts parts = {0};
  sl_pl_conjuncts(r->a, e, &parts);
  for (int i = 0; i < parts.n && r->nfacts < 16; i++)
    collect_fact(r, parts.v[i]);
}

/* AND / OR with operands that became literals: a decisive literal (FALSE
 * for AND, TRUE for OR) decides; the other kind is dropped. */
static sl_bexpr *fold_andor(rewriter *r, sl_bexpr *c) {
  bool decisive = c->op == SL_OP_OR;
  int n = 0;
  for (int i = 0; i < c->nargs; i++) {
    if (is_bool_lit(c->args[i], decisive))
      return bool_lit(r, decisive, c);
    if (!is_bool_lit(c->args[i], !decisive))
      c->args[n++] = c->args[i]; /* c->args is c's own copy */
  }
  if (n == 0)
    return bool_lit(r, !decisive, c);
  if (n == 1)
    return c->args[0];
  c->nargs = n;
  return c;
}

static int compare(int64_t x, int64_t y) {
  return (x > y) - (x < y);
}

/* Fold a comparison of two integer literals; NULL if it is not one. */
static sl_bexpr *fold_compare(rewriter *r, const sl_bexpr *e) {
  if (!is_int_lit(e->args[0]) || !is_int_lit(e->args[1]))
    return NULL;
  int c = compare(e->args[0]->lit.i64, e->args[1]->lit.i64);
  switch (e->op) {
  case SL_OP_EQ:
    return bool_lit(r, c == 0, e);
  case SL_OP_NE:
    return bool_lit(r, c != 0, e);
  case SL_OP_LT:
    return bool_lit(r, c < 0, e);
  case SL_OP_LE:
    return bool_lit(r, c <= 0, e);
  case SL_OP_GT:
    return bool_lit(r, c > 0, e);
  case SL_OP_GE:
    return bool_lit(r, c >= 0, e);
  default:
    return NULL;
  }
}

static sl_bexpr *rewrite(rewriter *r, sl_bexpr *e) {
  if (!e)
    return NULL;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0) {
    for (int i = 0; i < r->nfacts; i++)
      if (r->facts[i].column == e->index)
        return (sl_bexpr *)r->facts[i].value;
    return e;
  }
  if (e->nargs == 0)
    return e;
  sl_bexpr *c = SL_ANEW(r->a, sl_bexpr);
  *c = *e;
  c->args = SL_ANEW_N(r->a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++)
    c->args[i] = rewrite(r, e->args[i]);
  switch (c->kind) {
  case SL_BEXPR_BINARY:
    if (c->op == SL_OP_AND || c->op == SL_OP_OR) {
      return fold_andor(r, c);
    } else {
      sl_bexpr *f = fold_compare(r, c);
      if (f)
        return f;
    }
    return c;
  case SL_BEXPR_UNARY:
    if (c->op == SL_OP_NOT && c->args[0]->kind == SL_BEXPR_LITERAL &&
        c->args[0]->lit.kind == SL_LIT_BOOL)
      return bool_lit(r, c->args[0]->lit.i64 == 0, c);
    return c;
  case SL_BEXPR_CASE: {
    /* args: when0, then0, ..., else.  Drop FALSE branches; a TRUE branch
     * ends the CASE. */
    int n = 0;
    sl_bexpr **kept = SL_ANEW_N(r->a, sl_bexpr *, c->nargs);
    for (int i = 0; i + 1 < c->nargs; i += 2) {
      if (is_bool_lit(c->args[i], false))
        continue;
      if (is_bool_lit(c->args[i], true)) {
        if (n == 0)
          return c->args[i + 1];
        kept[n++] = c->args[i + 1]; /* becomes the ELSE */
        c->args = kept;
        c->nargs = n;
        return c;
      }
      kept[n++] = c->args[i];
      kept[n++] = c->args[i + 1];
    }
    if (n == 0) /* only the ELSE is left; keep the CASE's type */
      return c->args[c->nargs - 1]->type->kind == c->type->kind
                 ? c->args[c->nargs - 1]
                 : c;
    kept[n++] = c->args[c->nargs - 1];
    c->args = kept;
    c->nargs = n;
    return c;
  }
  default:
    return c;
  }
}

void sl_plan_note(sl_arena *a, sl_plan *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  /* The array doubles when its length reaches a power of two (a rewrite
   * per conjunct of a 100,000-term WHERE must not copy it each time); a
   * length cut back by constant folding stays within what was allocated. */
  int n = p->nrewrites;
  if (n == 0 || (n & (n - 1)) == 0) {
    const char **grown = SL_ANEW_N(a, const char *, n ? 2 * n : 4);
    if (n)
      memcpy(grown, p->rewrites, sizeof *grown * (size_t)n);
    p->rewrites = grown;
  }
  p->rewrites[p->nrewrites++] = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
}

void sl_plan_propagate_constants(sl_arena *a, sl_plan *p) {
  rewriter r = {a, 0, {{0, NULL}}};
  collect_facts(&r, p->filter);
  if (r.nfacts == 0)
    return;
  for (int i = 0; i < r.nfacts; i++)
    sl_plan_note(a, p,
                 "constant propagation: %s = %s holds after the filter; "
                 "substituted in what is evaluated after it",
                 p->base_names[r.facts[i].column],
                 sl_pl_sql(a, r.facts[i].value));
  /* Everything evaluated after the stream's filter. */
  p->post_join_filter = rewrite(&r, p->post_join_filter);
  for (int i = 0; i < p->njoin_keys; i++)
    p->join_stream_keys[i] = rewrite(&r, p->join_stream_keys[i]);
  if (p->kind == SL_PLAN_AGGREGATE) {
    if (p->windowed && p->window.time)
      p->window.time = rewrite(&r, p->window.time);
    for (int i = 0; i < p->nkeys; i++)
      p->keys[i] = rewrite(&r, p->keys[i]);
    for (int i = 0; i < p->naggs; i++) {
      p->aggs[i].arg = rewrite(&r, p->aggs[i].arg);
      p->aggs[i].filter = rewrite(&r, p->aggs[i].filter);
    }
  } else {
    for (int i = 0; i < p->nout; i++)
      p->out[i] = rewrite(&r, p->out[i]);
  }
  /* Not the watermark: it is computed over every row of the source, before
   * the filter, as the table declares it. */
}

/* ---- HAVING on group keys below the aggregate ---------------------------- */

/* Whether e reads only the first nkeys fields of the aggregate row and
 * nothing that changes between a record's arrival and the window's firing
 * (functions without arguments read the clock). */
static bool over_keys_only(const sl_bexpr *e, int nkeys) {
  if (!e)
    return true;
  switch (e->kind) {
  case SL_BEXPR_COLUMN:
    return e->depth == 0 && e->index < nkeys;
  case SL_BEXPR_LITERAL:
    return true;
  case SL_BEXPR_CALL:
    if (e->nargs == 0)
      return false;
    break;
  case SL_BEXPR_GROUP_REF:
  case SL_BEXPR_AGG_REF:
  case SL_BEXPR_WINDOW_REF:
  case SL_BEXPR_WINDOW_PROP:
  case SL_BEXPR_SUBQUERY:
    return false;
  default:
    break;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!over_keys_only(e->args[i], nkeys))
      return false;
  return true;
}

/* e over the aggregate row -> the same over the base row. */
static sl_bexpr *keys_to_base(sl_arena *a, const sl_bexpr *e,
                              sl_bexpr *const *keys) {
  if (e->kind == SL_BEXPR_COLUMN)
    return keys[e->index];
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  if (e->nargs) {
    c->args = SL_ANEW_N(a, sl_bexpr *, e->nargs);
    for (int i = 0; i < e->nargs; i++)
      c->args[i] = keys_to_base(a, e->args[i], keys);
  }
  return c;
}

static bool reads_input1(const sl_plan *p, const sl_bexpr *e) {
  if (!e)
    return false;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0)
    return sl_plan_input_of(p, e->index) == 1;
  for (int i = 0; i < e->nargs; i++)
    if (reads_input1(p, e->args[i]))
      return true;
  return false;
}

/* Offer each conjunct of e to move (which returns NULL for one it took
 * elsewhere, else the conjunct); what stays, ANDed again, or NULL. */
typedef sl_bexpr *(*conjunct_mover)(sl_arena *a, sl_plan *p, sl_bexpr *e);

static sl_bexpr *move_conjuncts(sl_arena *a, sl_plan *p, sl_bexpr *e,
                                conjunct_mover move) {
  sl_pl_parts parts = {0}, kept = {0};
  sl_pl_conjuncts(a, e, &parts);
  if (parts.n == 1)
    return move(a, p, e);
  for (int i = 0; i < parts.n; i++)
    sl_pl_parts_add(a, &kept, move(a, p, parts.v[i]));
  if (kept.n == parts.n)
    return e; /* nothing moved: keep the node as it was */
  return sl_pl_and_parts(a, &kept);
}

static sl_bexpr *push(sl_arena *a, sl_plan *p, sl_bexpr *e) {
  if (!over_keys_only(e, p->nkeys))
    return e; /* stays in HAVING */
  sl_bexpr *below = keys_to_base(a, e, p->keys);
  if (p->join && reads_input1(p, below))
    p->post_join_filter = sl_pl_and(a, p->post_join_filter, below);
  else
    p->filter = sl_pl_and(a, p->filter, below);
  sl_plan_note(a, p,
               "filter pushdown: HAVING %s is over group keys only; "
               "evaluated before the aggregate as %s",
               sl_pl_sql(a, e), sl_pl_sql(a, below));
  return NULL;
}

void sl_plan_push_having(sl_arena *a, sl_plan *p) {
  if (p->kind != SL_PLAN_AGGREGATE || !p->having || p->nkeys == 0)
    return;
  p->having = move_conjuncts(a, p, p->having, push);
}

/* ---- filters into sources ------------------------------------------------ */

static bool int_literal(const sl_bexpr *e, int64_t *v) {
  if (!e || e->kind != SL_BEXPR_LITERAL || e->lit.kind != SL_LIT_INTEGER)
    return false;
  *v = e->lit.i64;
  return true;
}

const sl_bexpr *sl_pl_int_filter(const sl_bexpr *e, sl_source_filter *f) {
  const sl_bexpr *col = NULL;
  memset(f, 0, sizeof *f);
  if (e->kind == SL_BEXPR_BINARY && e->op == SL_OP_EQ) {
    const sl_bexpr *x = e->args[0], *y = e->args[1];
    if (x->kind != SL_BEXPR_COLUMN) {
      const sl_bexpr *t = x;
      x = y;
      y = t;
    }
    if (x->kind != SL_BEXPR_COLUMN || !int_literal(y, &f->values[0]))
      return NULL;
    col = x;
    f->nvalues = 1;
  } else if (e->kind == SL_BEXPR_IN_LIST && !e->negated &&
             e->args[0]->kind == SL_BEXPR_COLUMN &&
             e->nargs - 1 <= SL_SOURCE_FILTER_VALUES) {
    col = e->args[0];
    for (int i = 1; i < e->nargs; i++)
      if (!int_literal(e->args[i], &f->values[f->nvalues++]))
        return NULL;
  } else {
    return NULL;
  }
  return col->depth == 0 && sl_type_is_integer(col->type) ? col : NULL;
}

/* The source filter for conjunct e over input in, if it is one. */
static bool as_source_filter(const sl_plan *p, const sl_plan_input *in,
                             const sl_bexpr *e, sl_source_filter *f) {
  const sl_bexpr *col = sl_pl_int_filter(e, f);
  if (!col || sl_plan_input_of(p, col->index) != 0)
    return false;
  return sl_pl_filter_leaf(in->connector, in->table, &in->leaves,
                           p->base_names[col->index], f);
}

bool sl_pl_filter_leaf(const sl_source_connector *conn, const sl_table_def *t,
                       const sl_leaf_columns *lc, const char *name,
                       sl_source_filter *f) {
  f->leaf = -1;
  for (int i = 0; i < lc->n; i++)
    if (strcmp(lc->names[i], name) == 0)
      f->leaf = i;
  return f->leaf >= 0 && conn->can_filter && conn->can_filter(t, name);
}

/* Record f (conjunct e) as one more filter of the source of input 0. */
static void add_source_filter(sl_arena *a, sl_plan_input *in,
                              const sl_source_filter *f, const char *sql) {
  sl_source_filter *fs = SL_ANEW_N(a, sl_source_filter, in->nfilters + 1);
  const char **sqls = SL_ANEW_N(a, const char *, in->nfilters + 1);
  if (in->nfilters) {
    memcpy(fs, in->filters, sizeof *fs * (size_t)in->nfilters);
    memcpy(sqls, in->filter_sql, sizeof *sqls * (size_t)in->nfilters);
  }
  fs[in->nfilters] = *f;
  sqls[in->nfilters] = sql;
  in->filters = fs;
  in->filter_sql = sqls;
  in->nfilters++;
}

static sl_bexpr *push_source(sl_arena *a, sl_plan *p, sl_bexpr *e) {
  sl_plan_input *in = &p->inputs[0];
  sl_source_filter f;
  if (!as_source_filter(p, in, e, &f))
    return e;
  add_source_filter(a, in, &f, sl_pl_sql(a, e));
  sl_plan_note(a, p,
               "filter pushdown: %s is applied by the %s source of %s, which "
               "then never produces the other rows",
               sl_pl_sql(a, e), in->connector->name, in->table->name);
  return NULL;
}

/* The same for a plan with a watermark (sl_pl_no_late_rows): the conjunct stays
 * in the filter too, which drops the source's time carriers. */
static sl_bexpr *push_source_rechecked(sl_arena *a, sl_plan *p, sl_bexpr *e) {
  sl_plan_input *in = &p->inputs[0];
  sl_source_filter f;
  if (!as_source_filter(p, in, e, &f))
    return e;
  f.rechecked = true;
  add_source_filter(a, in, &f, sl_pl_sql(a, e));
  sl_plan_note(a, p,
               "filter pushdown: %s is applied by the %s source of %s, which "
               "then generates the other rows only as time carriers (at most "
               "one in %d, dropped by this filter, which stays); safe with a "
               "watermark: the source's event time never decreases and the "
               "watermark trails it by at least a time unit, so no row is "
               "late either way, and the watermark only lags",
               sl_pl_sql(a, e), in->connector->name, in->table->name,
               SL_SOURCE_CARRY_EVERY);
  return e;
}

/* Whether every value e takes on a row is NULL or the value of one of that
 * row's leaves whose order the connector guarantees (time_ordered). */
static bool of_ordered_time(const sl_plan *p, const sl_plan_input *in,
                            const sl_bexpr *e) {
  if (!e)
    return false;
  if (e->kind == SL_BEXPR_LITERAL)
    return e->lit.kind == SL_LIT_NULL;
  if (e->kind == SL_BEXPR_CASE) { /* when0, then0, ..., else */
    for (int i = 1; i < e->nargs; i += 2)
      if (!of_ordered_time(p, in, e->args[i]))
        return false;
    return of_ordered_time(p, in, e->args[e->nargs - 1]);
  }
  char leaf[256];
  int col = sl_leaf_of(e, p->base_names, leaf, sizeof leaf);
  return col >= 0 && sl_plan_input_of(p, col) == 0 &&
         in->connector->time_ordered(in->table, leaf);
}

/* The watermark's delay in microseconds (a lower bound for months) when
 * it is `t - INTERVAL` with t of_ordered_time; else -1. */
static int64_t watermark_delay(const sl_plan *p, const sl_plan_input *in) {
  const sl_bexpr *w = p->watermark;
  if (w->kind != SL_BEXPR_BINARY || w->op != SL_OP_SUB || w->nargs != 2 ||
      !of_ordered_time(p, in, w->args[0]))
    return -1;
  const sl_bexpr *d = w->args[1];
  if (d->kind != SL_BEXPR_LITERAL || d->lit.kind != SL_LIT_INTERVAL ||
      d->lit.i64 <= 0 || d->lit.i64 > INT64_C(1) << 30)
    return -1;
  return d->type->kind == SL_TYPE_INTERVAL_YEAR_MONTH
             ? d->lit.i64 * INT64_C(28) * 86400 * 1000000
             : d->lit.i64 * 1000;
}

/* Whether rows the filter drops may be left out of what the source
 * produces for plan p, which has state or computes a watermark.  Without a
 * watermark nothing depends on them.  With one, today's watermark before a
 * row r is the largest `time - delay` of the rows before r, all of them
 * (the watermark is computed before the filter).  When the connector
 * guarantees that the time leaves never decrease, and the rowtime, the
 * window's time and the watermark's time are such leaves, that is at most
 * r's time - delay, so with delay >= the window's time unit no window of r
 * has fired and r is not late; leaving rows out only lowers the watermark,
 * so no row is late then either.  Every row counts the same, every window
 * fires at the end of a bounded input: the results are the same; the
 * watermark only lags, by the events skipped since the last row produced,
 * which time carriers bound (SL_SOURCE_CARRY_EVERY). */
bool sl_pl_no_late_rows(const sl_plan *p) {
  const sl_plan_input *in = &p->inputs[0];
  if (!in->connector->time_ordered || (p->windowed && p->window.proctime))
    return false;
  if (!p->watermark)
    return true;
  int64_t delay = watermark_delay(p, in);
  if (delay <= 0 || delay < p->window.unit_us)
    return false;
  if (p->rowtime && !of_ordered_time(p, in, p->rowtime))
    return false;
  return !(p->windowed || p->window_rows) ||
         of_ordered_time(p, in, p->window.time);
}

void sl_plan_push_into_sources(sl_arena *a, sl_plan *p) {
  if (!p->filter || p->ninputs < 1 || !p->inputs[0].connector)
    return;
  /* The watermark matters to windows of event time and to stream leaves
   * (exec's prepare_event_time computes it for those only). */
  bool event_time = p->watermark && ((p->windowed && !p->window.proctime) ||
                                     p->track_watermark);
  if (p->kind == SL_PLAN_STATELESS && !event_time) {
    p->filter = move_conjuncts(a, p, p->filter, push_source);
    return;
  }
  if (sl_pl_no_late_rows(p))
    p->filter = move_conjuncts(a, p, p->filter, push_source_rechecked);
}
