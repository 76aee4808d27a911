/* stage_plan.c - the staged plan of a multi-stage query (plan.h).
 *
 * A query that one pipeline cannot run (NEXMark q5: a windowed count per
 * auction, the maximum of those counts per window, joined back; q7: bids
 * joined with the windowed maximum price; q8: two windowed aggregates
 * joined on key and window) is cut at the first operator that needs the
 * complete rows of another aggregate.  Below the cut, every maximal
 * subquery that a single pipeline can run becomes a *leaf* (built by
 * sl_plan_build_leaf, so it keeps everything the single-stage path has:
 * workers, strategies, the JIT).  Above it, the bound tree maps one to one
 * onto stages: a subquery's WHERE and select list become a SELECT stage,
 * its GROUP BY an AGGREGATE stage, ROW_NUMBER() OVER a TOPN stage, a join a
 * JOIN stage.  Expressions keep the bound tree's column numbering (a join's
 * row is the left row then the right row), so nothing is substituted.
 *
 * What makes per-window evaluation exact is checked here, with a message
 * when it does not hold: every windowed leaf has the same windows, a join of
 * two windowed inputs equates a window bound of each side, an interval join
 * bounds the stream's event time on both sides around a window bound, and
 * every aggregate or Top-N above the leaves groups or partitions by a window
 * bound.  Rows of different windows then never meet.
 */
#include <string.h>

#include "plan_int.h"
#include "sluice/expr/interpreter.h"
#include "sluice/planner/plan.h"

typedef struct stager {
  sl_arena *a;
  sl_staged_plan *sp;
  sl_error *err;
  int nleaves, cap;
  bool have_window;
  bool updating; /* a stage over streams without windows (plan.h) */
} stager;

static int refuse(stager *g, sl_span span, const char *what) {
  return sl_error_set_at(g->err, SL_EUNSUPPORTED, span.line, span.column,
                         span.offset, span.length, "not supported yet: %s",
                         what);
}

static sl_stage *new_stage(stager *g, sl_stage_kind kind, int ncols) {
  sl_stage *st = SL_ANEW(g->a, sl_stage);
  st->kind = kind;
  st->ncols = ncols;
  st->names = SL_ANEW_N(g->a, const char *, ncols > 0 ? ncols : 1);
  st->types = SL_ANEW_N(g->a, const sl_type *, ncols > 0 ? ncols : 1);
  st->wprop = SL_ANEW_N(g->a, int, ncols > 0 ? ncols : 1);
  for (int i = 0; i < ncols; i++)
    st->wprop[i] = -1;
  st->time_col = -1;
  return st;
}

/* A NULL of type t named name (a leaf column nothing computes). */
static sl_bexpr *null_column(sl_arena *a, const sl_type *t, const char *name) {
  sl_bexpr *nul = SL_ANEW(a, sl_bexpr);
  nul->kind = SL_BEXPR_LITERAL;
  nul->type = (sl_type *)t;
  nul->lit.kind = SL_LIT_NULL;
  nul->name = name;
  return nul;
}

/* Whether equal values of window bound p (SL_WPROP_*) mean the same
 * window.  The stages run once per window *end*, so an end (or the window
 * time, one unit before it) always does; a start does only where every
 * window has the same size: TUMBLE and HOP, not CUMULATE (windows that
 * share a start) or SESSION (sizes differ per key). */
static bool bound_names_window(const sl_plan_window *w, int p) {
  return p == SL_WPROP_END || p == SL_WPROP_ROWTIME ||
         (p == SL_WPROP_START &&
          (w->kind == SL_WINDOW_TUMBLE || w->kind == SL_WINDOW_HOP));
}

/* The window bound a column-reading expression is (or -1). */
static int wprop_of(const sl_stage *in, const sl_bexpr *e) {
  if (e && e->kind == SL_BEXPR_COLUMN && e->depth == 0 && e->index >= 0 &&
      e->index < in->ncols)
    return in->wprop[e->index];
  return -1;
}

static bool same_window(const sl_plan_window *x, const sl_plan_window *y) {
  return x->kind == y->kind && x->size_us == y->size_us &&
         x->slide_us == y->slide_us && x->gap_us == y->gap_us &&
         x->offset_us == y->offset_us && x->unit_us == y->unit_us &&
         x->proctime == y->proctime;
}

/* ---- leaves -------------------------------------------------------------- */

static bool all_equal(sl_bexpr *const *x, sl_bexpr *const *y, int n) {
  for (int i = 0; i < n; i++)
    if (!sl_pl_equal(x[i], y[i]))
      return false;
  return true;
}

/* Do two windowed leaves compute the same groups and aggregates from the
 * same rows (their select lists may differ)? */
static bool same_leaf(const sl_plan *x, const sl_plan *y) {
  if (x->kind != SL_PLAN_AGGREGATE || y->kind != SL_PLAN_AGGREGATE ||
      !x->windowed || !y->windowed || x->ninputs != y->ninputs ||
      !same_window(&x->window, &y->window) ||
      !sl_pl_equal(x->window.time, y->window.time) ||
      !sl_pl_equal(x->watermark, y->watermark) ||
      !sl_pl_equal(x->filter, y->filter) ||
      !sl_pl_equal(x->post_join_filter, y->post_join_filter) ||
      !sl_pl_equal(x->having, y->having) || x->njoin_keys != y->njoin_keys ||
      x->nkeys != y->nkeys || x->naggs != y->naggs)
    return false;
  for (int j = 0; j < x->ninputs; j++)
    if (x->inputs[j].table != y->inputs[j].table)
      return false;
  if (!all_equal(x->keys, y->keys, x->nkeys) ||
      !all_equal(x->join_stream_keys, y->join_stream_keys, x->njoin_keys) ||
      !all_equal(x->join_table_keys, y->join_table_keys, x->njoin_keys))
    return false;
  for (int i = 0; i < x->naggs; i++) {
    const sl_plan_agg *a = &x->aggs[i], *b = &y->aggs[i];
    if (a->op != b->op || a->distinct != b->distinct ||
        !sl_type_equal(a->type, b->type) || !sl_pl_equal(a->arg, b->arg) ||
        !sl_pl_equal(a->filter, b->filter))
      return false;
  }
  return true;
}

/* Leaf `into` computes what `leaf` (for query q) would: append leaf's
 * columns to its output (before the hidden window_end) and give q a
 * SELECT of them over the shared leaf's rows. */
static int share_leaf(stager *g, int into, const sl_plan *leaf,
                      const sl_bquery *q, sl_stage **out) {
  sl_plan *lp = g->sp->leaves[into];
  int na = lp->nout - 1, nb = leaf->nout - 1;
  sl_bexpr **outs = SL_ANEW_N(g->a, sl_bexpr *, na + nb + 1);
  const char **names = SL_ANEW_N(g->a, const char *, na + nb + 1);
  const sl_type **types = SL_ANEW_N(g->a, const sl_type *, na + nb + 1);
  int *col = SL_ANEW_N(g->a, int, nb > 0 ? nb : 1);
  for (int i = 0; i < na; i++) {
    outs[i] = lp->out[i];
    names[i] = lp->out_names[i];
    types[i] = lp->out_types[i];
  }
  int n = na;
  for (int i = 0; i < nb; i++) { /* a column computed already is reused */
    col[i] = -1;
    for (int k = 0; k < n && col[i] < 0; k++)
      if (sl_pl_equal(outs[k], leaf->out[i]) &&
          sl_type_equal(types[k], leaf->out_types[i]))
        col[i] = k;
    if (col[i] < 0) {
      outs[n] = leaf->out[i];
      names[n] = leaf->out_names[i];
      types[n] = leaf->out_types[i];
      col[i] = n++;
    }
  }
  outs[n] = lp->out[na]; /* the hidden window_end, last */
  names[n] = lp->out_names[na];
  types[n] = lp->out_types[na];
  lp->out = outs;
  lp->out_names = names;
  lp->out_types = types;
  lp->nout = n + 1;
  int nk = lp->nkeys, nagg = lp->naggs;
  sl_stage *all = new_stage(g, SL_STAGE_LEAF, n);
  all->leaf = into;
  for (int i = 0; i < n; i++) {
    all->names[i] = names[i];
    all->types[i] = types[i];
    const sl_bexpr *e = outs[i];
    if (e->kind == SL_BEXPR_COLUMN && e->index >= nk + nagg &&
        e->index < nk + nagg + 3)
      all->wprop[i] = e->index - nk - nagg;
  }
  sl_stage *sel = new_stage(g, SL_STAGE_SELECT, nb);
  sel->input = all;
  sel->nexprs = nb;
  sel->exprs = SL_ANEW_N(g->a, sl_bexpr *, nb > 0 ? nb : 1);
  for (int i = 0; i < nb; i++) {
    sel->exprs[i] = sl_pl_column(g->a, col[i], types[col[i]], q->cols[i].name);
    sel->names[i] = q->cols[i].name;
    sel->types[i] = q->cols[i].type;
    sel->wprop[i] = all->wprop[col[i]];
  }
  *out = sel;
  return SL_OK;
}

static int add_leaf(stager *g, sl_plan *leaf, const sl_bquery *q,
                    sl_stage **out) {
  sl_staged_plan *sp = g->sp;
  if (leaf->norder > 0 || leaf->limit >= 0 || leaf->offset > 0)
    return refuse(g, q->span,
                  "ORDER BY, LIMIT or OFFSET in a subquery that feeds "
                  "another operator");
  bool rows = leaf->window_rows;
  bool windowed = (leaf->kind == SL_PLAN_AGGREGATE && leaf->windowed) || rows;
  if (leaf->kind == SL_PLAN_AGGREGATE && !windowed)
    return refuse(g, q->span,
                  "a GROUP BY without a window feeding another operator "
                  "(its result changes forever; updating queries come "
                  "later)");
  if (windowed) {
    if (!g->have_window) {
      sp->window = leaf->window;
      g->have_window = true;
    } else if (!same_window(&sp->window, &leaf->window)) {
      return refuse(g, q->span,
                    "windowed inputs with different windows (every "
                    "windowed subquery of the query must use the same "
                    "window, e.g. TUMBLE of 10 seconds on both sides)");
    }
  }
  /* The same computation as a leaf already there (q5 counts bids per
   * auction and window twice): share it, with this one's columns added. */
  for (int i = 0; i < g->nleaves; i++)
    if (same_leaf(sp->leaves[i], leaf))
      return share_leaf(g, i, leaf, q, out);
  if (g->nleaves == g->cap) {
    int cap = g->cap ? g->cap * 2 : 4;
    sl_plan **l = SL_ANEW_N(g->a, sl_plan *, cap);
    for (int i = 0; i < g->nleaves; i++)
      l[i] = sp->leaves[i];
    sp->leaves = l;
    g->cap = cap;
  }
  int idx = g->nleaves++;
  sp->leaves[idx] = leaf;
  sp->nleaves = g->nleaves;
  /* Window rows: the input's columns (not the hidden last one), then the
   * window's three. */
  int nrow = rows ? leaf->nout - 1 : leaf->nout;
  int ncols = rows ? nrow + 3 : windowed ? leaf->nout - 1 : leaf->nout;
  sl_stage *st = new_stage(g, SL_STAGE_LEAF, ncols);
  st->leaf = idx;
  st->stream = !windowed;
  int nk = leaf->nkeys, na = leaf->naggs;
  for (int i = 0; i < ncols; i++) {
    st->names[i] = q->cols[i].name;
    st->types[i] = q->cols[i].type;
    if (rows) {
      if (i >= nrow)
        st->wprop[i] = i - nrow; /* START, END, ROWTIME */
      else if (st->time_col < 0 &&
               leaf->out_types[i]->time_attr == SL_TIME_ROWTIME)
        st->time_col = i; /* kept: the store assigns windows by it (the
                           * TVF's own column is no time attribute) */
    } else if (windowed) {
      const sl_bexpr *e = leaf->out[i];
      if (e->kind == SL_BEXPR_COLUMN && e->index >= nk + na &&
          e->index < nk + na + 3)
        st->wprop[i] = e->index - nk - na; /* START, END, ROWTIME */
    } else if (st->time_col < 0 &&
               q->cols[i].type->time_attr == SL_TIME_ROWTIME) {
      st->time_col = i;
    }
  }
  *out = st; /* a stream without event time: see streams_have_time */
  return SL_OK;
}

/* ---- expressions --------------------------------------------------------- */

/* A copy of e with every COLUMN index moved by delta. */
static sl_bexpr *shifted_column(sl_arena *a, const sl_bexpr *e, void *arg) {
  if (e->kind != SL_BEXPR_COLUMN || e->depth != 0)
    return NULL;
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  c->index += *(const int *)arg;
  return c;
}

static sl_bexpr *shift(sl_arena *a, const sl_bexpr *e, int delta) {
  return sl_pl_map(a, e, shifted_column, &delta);
}

/* Post-aggregation expression -> COLUMNs of the aggregate stage's row
 * (group keys, then aggregates). */
static int to_agg_row(stager *g, const sl_bexpr *e, int ngroups,
                      sl_bexpr **out) {
  *out = NULL;
  if (!e)
    return SL_OK;
  if (e->kind == SL_BEXPR_GROUP_REF) {
    *out = sl_pl_column(g->a, e->index, e->type, e->name);
    return SL_OK;
  }
  if (e->kind == SL_BEXPR_AGG_REF) {
    *out = sl_pl_column(g->a, ngroups + e->index, e->type, e->name);
    return SL_OK;
  }
  if (e->kind == SL_BEXPR_WINDOW_PROP || e->kind == SL_BEXPR_WINDOW_REF ||
      e->kind == SL_BEXPR_SUBQUERY)
    return refuse(g, e->span,
                  "this expression over the result of another aggregate");
  if (e->nargs == 0) {
    *out = (sl_bexpr *)e;
    return SL_OK;
  }
  sl_bexpr *c = SL_ANEW(g->a, sl_bexpr);
  *c = *e;
  c->args = SL_ANEW_N(g->a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++) {
    int rc = to_agg_row(g, e->args[i], ngroups, &c->args[i]);
    if (rc != SL_OK)
      return rc;
  }
  *out = c;
  return SL_OK;
}

static int check_plain(stager *g, const sl_bexpr *e) {
  if (!e)
    return SL_OK;
  if (e->kind == SL_BEXPR_WINDOW_PROP || e->kind == SL_BEXPR_SUBQUERY ||
      e->kind == SL_BEXPR_GROUP_REF || e->kind == SL_BEXPR_AGG_REF)
    return refuse(g, e->span,
                  "this expression over the result of another aggregate");
  if (e->kind == SL_BEXPR_COLUMN && e->depth != 0)
    return refuse(g, e->span, "correlated subqueries");
  for (int i = 0; i < e->nargs; i++) {
    int rc = check_plain(g, e->args[i]);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* A constant INTERVAL day-time expression's value in microseconds,
 * evaluated by the interpreter (the reference semantics, as constant
 * folding does). */
static bool interval_us(const sl_bexpr *e, int64_t *us) {
  if (!e || e->type->kind != SL_TYPE_INTERVAL_DAY_TIME ||
      !sl_pl_columns_within(e, 0, 0))
    return false;
  sl_arena scratch;
  sl_arena_init(&scratch, 0);
  sl_error err = {0};
  sl_expr_prog *prog = NULL;
  sl_expr_ctx *ctx = sl_expr_ctx_new();
  sl_expr_value v;
  bool ok = sl_expr_compile(&scratch, e, NULL, NULL, &prog, &err) == SL_OK &&
            sl_expr_eval_row(prog, NULL, 0, &v, ctx, &err) == SL_OK && !v.null;
  if (ok)
    *us = v.i64 * 1000; /* day-time intervals are milliseconds */
  sl_expr_ctx_free(ctx);
  sl_error_clear(&err);
  sl_arena_free(&scratch);
  return ok;
}

/* e is `X`, `X - INTERVAL`, or `X + INTERVAL` with X reading the window
 * side's bound column: the bound's offset from the window end, plus the
 * interval, in microseconds. */
static bool window_relative(const sl_stage *w, int wbase,
                            const sl_plan_window *win, const sl_bexpr *e,
                            int64_t *off) {
  int64_t iv = 0;
  if (e->kind == SL_BEXPR_BINARY &&
      (e->op == SL_OP_SUB || e->op == SL_OP_ADD) &&
      interval_us(e->args[1], &iv)) {
    if (e->op == SL_OP_SUB)
      iv = -iv;
    e = e->args[0];
  }
  if (e->kind != SL_BEXPR_COLUMN || e->depth != 0)
    return false;
  int c = e->index - wbase;
  if (c < 0 || c >= w->ncols || w->wprop[c] < 0)
    return false;
  if (!bound_names_window(win, w->wprop[c]))
    return false; /* a start's distance from the end is not fixed */
  int64_t base = w->wprop[c] == SL_WPROP_END     ? 0
                 : w->wprop[c] == SL_WPROP_START ? -win->size_us
                                                 : -win->unit_us;
  *off = base + iv;
  return true;
}

static bool is_stream_time(const sl_stage *s, int sbase, const sl_bexpr *e) {
  return e->kind == SL_BEXPR_COLUMN && e->depth == 0 &&
         e->index - sbase == s->time_col;
}

/* ---- joins --------------------------------------------------------------- */

static int stage_query(stager *g, const sl_bquery *q, sl_stage **out);

static int stage_from(stager *g, const sl_bfrom *f, sl_bexpr *extra,
                      sl_stage **out);

/* e without the day-time intervals added to or taken from it: the
 * column it reads (NULL when it is not a column plus or minus constant
 * intervals), their sum in *off (microseconds). */
static const sl_bexpr *column_plus(const sl_bexpr *e, int64_t *off) {
  *off = 0;
  while (e->kind == SL_BEXPR_BINARY &&
         (e->op == SL_OP_ADD || e->op == SL_OP_SUB)) {
    int64_t iv;
    if (interval_us(e->args[1], &iv)) {
      *off += e->op == SL_OP_SUB ? -iv : iv;
      e = e->args[0];
    } else if (e->op == SL_OP_ADD && interval_us(e->args[0], &iv)) {
      *off += iv;
      e = e->args[1];
    } else {
      return NULL;
    }
  }
  return e->kind == SL_BEXPR_COLUMN && e->depth == 0 ? e : NULL;
}

/* Record u <= v (or u < v), two expressions over a regular join's row, as
 * a bound (sl_stage.bounds) when u is side Y's event time plus a constant
 * cu and v a TIMESTAMP column of the other side X plus a constant cv.
 *
 * The rule.  Y's leaves drop their late rows: a row of Y that reaches the
 * join after Y's watermark W has event time t > W (a row at or before the
 * watermark is late).  Such a row meets a stored row x of X only if
 * t + cu <= x.v + cv, i.e. t <= x.v + (cv - cu).  Once
 * x.v + (cv - cu) <= W, every later t is > W >= x.v + (cv - cu): no later
 * row of Y can meet x, and x leaves the state.  The same holds for u < v
 * (a strict bound only fails sooner; dropping 1 microsecond later than it
 * could is kept for the one rule), and for u = v (it implies u <= v).
 * A NULL x.v meets no row (the comparison is unknown) and is dropped at
 * the first sweep.  Of two bounds by the same column the earlier one
 * decides. */
static void add_bound(stager *g, sl_stage *j, const sl_bexpr *u,
                      const sl_bexpr *v) {
  int64_t cu, cv;
  u = column_plus(u, &cu);
  v = column_plus(v, &cv);
  if (!u || !v)
    return;
  int nl = j->left->ncols;
  int us = u->index < nl ? 0 : 1, vs = v->index < nl ? 0 : 1;
  const sl_stage *a = us ? j->right : j->left;
  int ucol = u->index - (us ? nl : 0), vcol = v->index - (vs ? nl : 0);
  if (us == vs || ucol != a->time_col ||
      (v->type->kind != SL_TYPE_TIMESTAMP &&
       v->type->kind != SL_TYPE_TIMESTAMP_LTZ))
    return;
  int64_t off;
  if (__builtin_sub_overflow(cv, cu, &off))
    return;
  for (int k = 0; k < j->nbounds; k++)
    if (j->bounds[k].side == us && j->bounds[k].col == vcol) {
      if (off < j->bounds[k].offset_us)
        j->bounds[k].offset_us = off;
      return;
    }
  struct sl_stage_bound *b =
      SL_ANEW_N(g->a, struct sl_stage_bound, j->nbounds + 1);
  if (j->nbounds)
    memcpy(b, j->bounds, sizeof *b * (size_t)j->nbounds);
  b[j->nbounds].side = us;
  b[j->nbounds].col = vcol;
  b[j->nbounds].offset_us = off;
  j->bounds = b;
  j->nbounds++;
}

/* The bounds of a regular join's conditions (add_bound): x BETWEEN a AND
 * b is a <= x and x <= b; x < y and x <= y, the same turned around, and
 * x = y both ways.  Each is tried with either side's event time left. */
static void join_bounds(stager *g, sl_stage *j, sl_bexpr *const *parts, int n) {
  for (int i = 0; i < n; i++) {
    const sl_bexpr *c = parts[i];
    if (c->kind == SL_BEXPR_BETWEEN && !c->negated) {
      add_bound(g, j, c->args[1], c->args[0]);
      add_bound(g, j, c->args[0], c->args[2]);
    } else if (c->kind == SL_BEXPR_BINARY &&
               (c->op == SL_OP_LE || c->op == SL_OP_LT)) {
      add_bound(g, j, c->args[0], c->args[1]);
    } else if (c->kind == SL_BEXPR_BINARY &&
               (c->op == SL_OP_GE || c->op == SL_OP_GT)) {
      add_bound(g, j, c->args[1], c->args[0]);
    } else if (c->kind == SL_BEXPR_BINARY && c->op == SL_OP_EQ) {
      add_bound(g, j, c->args[0], c->args[1]);
      add_bound(g, j, c->args[1], c->args[0]);
    }
  }
}

/* Every stream leaf under st has an event-time column (what stages over
 * windows need of a stream; updating stages do not). */
static bool streams_have_time(const stager *g, const sl_stage *st) {
  if (!st)
    return true;
  if (st->kind == SL_STAGE_LEAF && st->stream &&
      (!g->sp->leaves[st->leaf]->rowtime || st->time_col < 0))
    return false;
  return streams_have_time(g, st->input) && streams_have_time(g, st->left) &&
         streams_have_time(g, st->right);
}

/* The leaves under st: keep_late as given. */
static void set_keep_late(stager *g, const sl_stage *st, bool keep) {
  if (!st)
    return;
  if (st->kind == SL_STAGE_LEAF)
    g->sp->leaves[st->leaf]->keep_late = keep;
  set_keep_late(g, st->input, keep);
  set_keep_late(g, st->left, keep);
  set_keep_late(g, st->right, keep);
}

/* The leaves under the side of each bounded join whose watermark drops
 * the other side's rows drop their own late rows. */
static void drop_late_under_bounds(stager *g, const sl_stage *st) {
  if (!st)
    return;
  for (int k = 0; k < st->nbounds; k++)
    set_keep_late(g, st->bounds[k].side ? st->right : st->left, false);
  drop_late_under_bounds(g, st->input);
  drop_late_under_bounds(g, st->left);
  drop_late_under_bounds(g, st->right);
}

/* A SELECT keeping the rows of st where cond holds, every column as is. */
static sl_stage *filter_stage(stager *g, sl_stage *st, sl_bexpr *cond) {
  sl_stage *sel = new_stage(g, SL_STAGE_SELECT, st->ncols);
  sel->input = st;
  sel->stream = st->stream;
  sel->time_col = st->time_col;
  sel->filter = cond;
  sel->nexprs = st->ncols;
  sel->exprs = SL_ANEW_N(g->a, sl_bexpr *, st->ncols > 0 ? st->ncols : 1);
  for (int i = 0; i < st->ncols; i++) {
    sel->exprs[i] = sl_pl_column(g->a, i, st->types[i], st->names[i]);
    sel->names[i] = st->names[i];
    sel->types[i] = st->types[i];
    sel->wprop[i] = st->wprop[i];
  }
  return sel;
}

static int stage_join(stager *g, const sl_bfrom *f, sl_bexpr *extra,
                      sl_stage **out) {
  if (f->u.join.kind != SL_JOIN_INNER && f->u.join.kind != SL_JOIN_CROSS)
    return refuse(g, f->span, "outer joins of windowed results");
  if (f->u.join.lookup)
    return refuse(g, f->span, "FOR SYSTEM_TIME AS OF above an aggregate");
  sl_stage *l, *r;
  int rc = stage_from(g, f->u.join.left, NULL, &l);
  if (rc == SL_OK)
    rc = stage_from(g, f->u.join.right, NULL, &r);
  if (rc != SL_OK)
    return rc;
  int nl = l->ncols, nr = r->ncols;
  sl_stage *j = new_stage(g, SL_STAGE_JOIN, nl + nr);
  j->left = l;
  j->right = r;
  for (int i = 0; i < nl; i++) {
    j->names[i] = l->names[i];
    j->types[i] = l->types[i];
    j->wprop[i] = l->wprop[i];
  }
  for (int i = 0; i < nr; i++) {
    j->names[nl + i] = r->names[i];
    j->types[nl + i] = r->types[i];
    j->wprop[nl + i] = r->wprop[i];
  }
  /* A regular join of two streams: state for both sides, rows as they
   * arrive (updating stages). */
  bool regular = l->stream && r->stream;
  if (regular) {
    g->updating = true;
    j->stream = true;
  }
  sl_pl_parts conj = {0}, lparts = {0}, rparts = {0}, residual = {0};
  sl_pl_conjuncts(g->a, f->u.join.on, &conj);
  sl_pl_conjuncts(g->a, extra, &conj);
  sl_bexpr **parts = conj.v;
  int n = conj.n;
  j->lkeys = SL_ANEW_N(g->a, sl_bexpr *, n > 0 ? n : 1);
  j->rkeys = SL_ANEW_N(g->a, sl_bexpr *, n > 0 ? n : 1);
  bool aligned = false;
  sl_bexpr *lfilter = NULL, *rfilter = NULL;
  for (int i = 0; i < n; i++) {
    sl_bexpr *c = parts[i];
    rc = check_plain(g, c);
    if (rc != SL_OK)
      return rc;
    if (c->kind == SL_BEXPR_BINARY && c->op == SL_OP_EQ) {
      sl_bexpr *x = c->args[0], *y = c->args[1];
      if (sl_pl_columns_within(x, nl, nl + nr) &&
          sl_pl_columns_within(y, 0, nl)) {
        sl_bexpr *t = x;
        x = y;
        y = t;
      }
      if (sl_pl_columns_within(x, 0, nl) &&
          sl_pl_columns_within(y, nl, nl + nr) &&
          sl_type_equal(x->type, y->type)) {
        int px = wprop_of(j, x), py = wprop_of(j, y);
        if (px >= 0 && px == py && bound_names_window(&g->sp->window, px))
          aligned = true;
        j->lkeys[j->nkeys] = x;
        j->rkeys[j->nkeys++] = shift(g->a, y, -nl);
        continue;
      }
    }
    /* A regular join keeps every row it stores: a condition on one side
     * alone filters that side before the join (q20's A.category = 10
     * keeps a fifth of the auctions). */
    if (regular && sl_pl_columns_within(c, 0, nl) && c->nargs > 0) {
      sl_pl_parts_add(g->a, &lparts, c);
      continue;
    }
    if (regular && sl_pl_columns_within(c, nl, nl + nr) && c->nargs > 0) {
      sl_pl_parts_add(g->a, &rparts, shift(g->a, c, -nl));
      continue;
    }
    sl_pl_parts_add(g->a, &residual, c);
  }
  /* gathered, then ANDed once: flat, and linear in the conjuncts */
  lfilter = sl_pl_and_parts(g->a, &lparts);
  rfilter = sl_pl_and_parts(g->a, &rparts);
  j->residual = sl_pl_and(g->a, j->residual, sl_pl_and_parts(g->a, &residual));
  if (regular) {
    if (lfilter)
      j->left = filter_stage(g, j->left, lfilter);
    if (rfilter)
      j->right = filter_stage(g, j->right, rfilter);
    join_bounds(g, j, parts, n);
    *out = j;
    return SL_OK;
  }
  if (!l->stream && !r->stream) {
    if (!aligned)
      return refuse(g, f->span,
                    "a join of two windowed results that does not equate "
                    "their windows; add L.window_start = R.window_start AND "
                    "L.window_end = R.window_end (or the same for the "
                    "columns holding TUMBLE_START/TUMBLE_END; for SESSION "
                    "and CUMULATE windows the ends must be equated)");
    *out = j;
    return SL_OK;
  }
  /* An interval join: the stream side's event time bounded on both sides
   * by a window bound of the other side (plus or minus an interval). */
  bool left_stream = l->stream;
  const sl_stage *s = left_stream ? l : r, *w = left_stream ? r : l;
  int sbase = left_stream ? 0 : nl, wbase = left_stream ? nl : 0;
  bool have_lo = false, have_hi = false;
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < n; i++) {
    sl_bexpr *c = parts[i];
    int64_t off;
    if (c->kind == SL_BEXPR_BETWEEN && !c->negated &&
        is_stream_time(s, sbase, c->args[0]) &&
        window_relative(w, wbase, &g->sp->window, c->args[1], &off)) {
      int64_t off2;
      if (window_relative(w, wbase, &g->sp->window, c->args[2], &off2)) {
        lo = have_lo && lo > off ? lo : off;
        hi = have_hi && hi < off2 ? hi : off2;
        have_lo = have_hi = true;
      }
      continue;
    }
    if (c->kind != SL_BEXPR_BINARY)
      continue;
    sl_bexpr *x = c->args[0], *y = c->args[1];
    sl_op op = c->op;
    if (!is_stream_time(s, sbase, x)) { /* put the stream's time left */
      sl_bexpr *t = x;
      x = y;
      y = t;
      op = op == SL_OP_LT   ? SL_OP_GT
           : op == SL_OP_LE ? SL_OP_GE
           : op == SL_OP_GT ? SL_OP_LT
           : op == SL_OP_GE ? SL_OP_LE
                            : op;
    }
    if (!is_stream_time(s, sbase, x) ||
        !window_relative(w, wbase, &g->sp->window, y, &off))
      continue;
    int64_t unit = g->sp->window.unit_us;
    if (op == SL_OP_GE || op == SL_OP_GT) {
      int64_t v = op == SL_OP_GT ? off + unit : off;
      lo = have_lo && lo > v ? lo : v;
      have_lo = true;
    } else if (op == SL_OP_LE || op == SL_OP_LT) {
      int64_t v = op == SL_OP_LT ? off - unit : off;
      hi = have_hi && hi < v ? hi : v;
      have_hi = true;
    } else if (op == SL_OP_EQ) {
      lo = hi = off;
      have_lo = have_hi = true;
    }
  }
  if (!have_lo || !have_hi)
    return refuse(g, f->span,
                  "a join of a stream with windowed results needs the "
                  "stream's event time bounded on both sides by the "
                  "window's time (e.g. S.ts BETWEEN W.window_time - "
                  "INTERVAL '10' SECOND AND W.window_time)");
  if (hi < lo)
    return refuse(g, f->span, "an interval join whose interval is empty");
  j->lo_us = lo;
  j->hi_us = hi;
  *out = j;
  return SL_OK;
}

/* SELECT every column of a FROM item, as a query (a leaf's input). */
static const sl_bquery *select_all(sl_arena *a, const sl_bfrom *f) {
  sl_bquery *q = SL_ANEW(a, sl_bquery);
  sl_bselect *s = SL_ANEW(a, sl_bselect);
  q->kind = SL_BQUERY_SELECT;
  q->span = f->span;
  q->ncols = f->ncols;
  q->cols = f->cols;
  q->select = s;
  q->limit = -1;
  s->from = (sl_bfrom *)f;
  s->nexprs = f->ncols;
  s->exprs = SL_ANEW_N(a, sl_bexpr *, f->ncols > 0 ? f->ncols : 1);
  for (int i = 0; i < f->ncols; i++)
    s->exprs[i] = sl_pl_column(a, i, f->cols[i].type, f->cols[i].name);
  return q;
}

/* The rows of a window TVF themselves (Flink's window Top-N and window
 * join are written over them): a leaf reads the TVF's input as a stream,
 * and the stage store puts each row into its window (into each of its
 * windows under HOP and CUMULATE, as Flink's TVF does). */
static int stage_window_rows(stager *g, const sl_bfrom *f, sl_stage **out) {
  const sl_bwindow *w = &f->u.tvf.window;
  if (w->kind == SL_WINDOW_SESSION || w->time_attr != SL_TIME_ROWTIME)
    return refuse(g, f->span,
                  "window table function rows (without an aggregate) "
                  "feeding another operator, other than TUMBLE, HOP or "
                  "CUMULATE in event time; aggregate them first");
  const sl_bfrom *in = f->u.tvf.input;
  const sl_bquery *q =
      in->kind == SL_BFROM_VIEW || in->kind == SL_BFROM_SUBQUERY
          ? in->u.sub.query
          : select_all(g->a, in);
  sl_plan *leaf = NULL;
  int rc = sl_plan_build_leaf(g->a, q, &leaf, g->err);
  if (rc != SL_OK)
    return rc;
  if (leaf->kind != SL_PLAN_STATELESS)
    return refuse(g, f->span, "a window table function over an aggregate");
  leaf->window_rows = true;
  /* A hidden last column: NULL, or the end of the first window of the
   * row's that had not fired when the row came (exec/worker.c). */
  int n = leaf->nout;
  sl_bexpr **cols = SL_ANEW_N(g->a, sl_bexpr *, n + 1);
  const char **names = SL_ANEW_N(g->a, const char *, n + 1);
  const sl_type **types = SL_ANEW_N(g->a, const sl_type *, n + 1);
  for (int i = 0; i < n; i++) {
    cols[i] = leaf->out[i];
    names[i] = leaf->out_names[i];
    types[i] = leaf->out_types[i];
  }
  sl_bexpr *live =
      null_column(g->a, sl_type_new(g->a, SL_TYPE_BIGINT), "$live_from");
  cols[n] = live;
  names[n] = live->name;
  types[n] = live->type;
  leaf->out = cols;
  leaf->out_names = names;
  leaf->out_types = types;
  leaf->nout = n + 1;
  sl_plan_window *pw = &leaf->window;
  pw->kind = w->kind;
  pw->size_us = w->size_ms * 1000;
  pw->slide_us = w->slide_ms * 1000; /* TUMBLE: the size */
  pw->offset_us = w->offset_ms * 1000;
  const sl_type *tt = in->cols[w->time_column].type;
  int prec = tt->precision < 0 ? 6 : tt->precision;
  pw->unit_us = 1;
  for (int i = prec; i < 6; i++)
    pw->unit_us *= 10;
  pw->time = leaf->rowtime;
  return add_leaf(g, leaf, select_all(g->a, f), out);
}

static int stage_from(stager *g, const sl_bfrom *f, sl_bexpr *extra,
                      sl_stage **out) {
  sl_stage *st = NULL;
  int rc;
  switch (f->kind) {
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    rc = stage_query(g, f->u.sub.query, &st);
    break;
  case SL_BFROM_JOIN:
    return stage_join(g, f, extra, out);
  case SL_BFROM_SCAN:
    /* A table read as it is: the leaf is SELECT * over it. */
    rc = stage_query(g, select_all(g->a, f), &st);
    break;
  case SL_BFROM_WINDOW_TVF:
    rc = stage_window_rows(g, f, &st);
    break;
  default:
    return refuse(g, f->span,
                  "a table or window function read directly next to "
                  "another aggregate; wrap it in a subquery or view");
  }
  if (rc != SL_OK)
    return rc;
  if (extra) {
    rc = check_plain(g, extra);
    if (rc != SL_OK)
      return rc;
    st = filter_stage(g, st, extra);
  }
  *out = st;
  return SL_OK;
}

/* ---- queries ------------------------------------------------------------- */

static int stage_aggregate(stager *g, const sl_bselect *s, sl_stage *in,
                           sl_stage **out) {
  if (s->group_window)
    return refuse(g, s->group_window->span,
                  "a window over the result of another aggregate");
  /* Over the rows of a join of streams (or another updating aggregate):
   * an updating aggregate, its groups kept for as long as the query runs.
   * A stream leaf is never the input here: its GROUP BY is a leaf. */
  bool updating = in->stream;
  if (updating)
    g->updating = true;
  sl_stage *ag = new_stage(g, SL_STAGE_AGGREGATE, s->ngroups + s->naggs);
  ag->stream = updating;
  ag->input = in;
  ag->ngroups = s->ngroups;
  ag->groups = SL_ANEW_N(g->a, sl_bexpr *, s->ngroups > 0 ? s->ngroups : 1);
  bool aligned = false;
  for (int i = 0; i < s->ngroups; i++) {
    int rc = check_plain(g, s->groups[i]);
    if (rc != SL_OK)
      return rc;
    ag->groups[i] = s->groups[i];
    ag->names[i] = s->groups[i]->name ? s->groups[i]->name : "group";
    ag->types[i] = s->groups[i]->type;
    ag->wprop[i] = wprop_of(in, s->groups[i]);
    aligned |=
        ag->wprop[i] >= 0 && bound_names_window(&g->sp->window, ag->wprop[i]);
  }
  if (!aligned && !updating)
    return refuse(g, s->from->span,
                  "an aggregate over windowed results that does not group "
                  "by their window (add window_start, window_end or the "
                  "columns holding them to GROUP BY; for SESSION and "
                  "CUMULATE windows, the end)");
  ag->naggs = s->naggs;
  ag->aggs = SL_ANEW_N(g->a, sl_plan_agg, s->naggs > 0 ? s->naggs : 1);
  for (int i = 0; i < s->naggs; i++) {
    const sl_bagg *ba = &s->aggs[i];
    sl_plan_agg *pa = &ag->aggs[i];
    if (!sl_pl_agg(g->a, ba, NULL, pa))
      return refuse(g, ba->span, "this aggregate function");
    int rc = check_plain(g, pa->arg);
    if (rc == SL_OK)
      rc = check_plain(g, pa->filter);
    if (rc != SL_OK)
      return rc;
    ag->names[s->ngroups + i] = ba->fn->name;
    ag->types[s->ngroups + i] = ba->type;
  }
  *out = ag;
  return SL_OK;
}

static int stage_topn(stager *g, const sl_bselect *s, sl_stage *in,
                      sl_stage **out) {
  if (s->nwindows != 1 || strcmp(s->windows[0].fn->name, "ROW_NUMBER") != 0)
    return refuse(g, s->windows[0].span,
                  "OVER other than one ROW_NUMBER() (window Top-N)");
  const sl_bwinfunc *wf = &s->windows[0];
  if (in->stream) /* Top-N or deduplication over a stream */
    g->updating = true;
  sl_stage *t = new_stage(g, SL_STAGE_TOPN, in->ncols + 1);
  t->input = in;
  for (int i = 0; i < in->ncols; i++) {
    t->names[i] = in->names[i];
    t->types[i] = in->types[i];
    t->wprop[i] = in->wprop[i];
  }
  t->names[in->ncols] = "ROW_NUMBER";
  t->types[in->ncols] = wf->type;
  bool aligned = false;
  t->npartition = wf->npartition;
  t->partition = wf->partition;
  for (int i = 0; i < wf->npartition; i++) {
    int rc = check_plain(g, wf->partition[i]);
    if (rc != SL_OK)
      return rc;
    int p = wprop_of(in, wf->partition[i]);
    aligned |= p >= 0 && bound_names_window(&g->sp->window, p);
  }
  t->stream = in->stream;
  t->topn_limit = -1;
  if (!aligned && !in->stream)
    return refuse(g, wf->span,
                  "ROW_NUMBER over windowed results not partitioned by "
                  "their window (PARTITION BY window_start, window_end)");
  t->norder = wf->norder;
  t->order = wf->order;
  t->order_desc = wf->order_desc;
  t->order_nulls = wf->order_nulls;
  for (int i = 0; i < wf->norder; i++) {
    int rc = check_plain(g, wf->order[i]);
    if (rc != SL_OK)
      return rc;
  }
  *out = t;
  return SL_OK;
}

/* Select-list expression over the TOPN stage's row: the window function
 * becomes its column. */
static sl_bexpr *winref_column(sl_arena *a, const sl_bexpr *e, void *arg) {
  return e->kind == SL_BEXPR_WINDOW_REF
             ? sl_pl_column(a, *(const int *)arg, e->type, e->name)
             : NULL;
}

static sl_bexpr *winref_to_column(sl_arena *a, const sl_bexpr *e, int col) {
  return sl_pl_map(a, e, winref_column, &col);
}

/* The stages of a SELECT whose FROM needs stages (or that has OVER):
 * FROM (with WHERE pushed into a join, or a filter), then GROUP BY or
 * ROW_NUMBER, then HAVING and the select list.  top: the query's own
 * SELECT, where LIMIT and OFFSET are allowed (the plan applies them). */
static int stage_select(stager *g, const sl_bquery *q, bool top,
                        sl_stage **out) {
  const sl_bselect *s = q->select;
  if (!top && (q->norder > 0 || q->limit >= 0))
    return refuse(g, q->span,
                  "ORDER BY or LIMIT in a subquery that feeds another "
                  "operator");
  if (s->distinct)
    return refuse(g, q->span, "SELECT DISTINCT over windowed results");
  if (s->aggregate && s->nwindows > 0)
    return refuse(g, s->windows[0].span,
                  "OVER and GROUP BY in the same SELECT");
  /* WHERE goes into a join below (the interval condition of q7 is in the
   * WHERE), or filters the input. */
  int rc = check_plain(g, s->where);
  sl_stage *in = NULL;
  if (rc == SL_OK)
    rc = stage_from(g, s->from, s->where, &in);
  if (rc != SL_OK)
    return rc;
  sl_stage *body = in;
  if (s->aggregate)
    rc = stage_aggregate(g, s, in, &body);
  else if (s->nwindows > 0)
    rc = stage_topn(g, s, in, &body);
  if (rc != SL_OK)
    return rc;
  sl_stage *sel = new_stage(g, SL_STAGE_SELECT, s->nexprs);
  sel->input = body;
  sel->stream = body->stream;
  sel->nexprs = s->nexprs;
  sel->exprs = SL_ANEW_N(g->a, sl_bexpr *, s->nexprs > 0 ? s->nexprs : 1);
  if (s->aggregate) {
    rc = to_agg_row(g, s->having, s->ngroups, &sel->filter);
    if (rc != SL_OK)
      return rc;
  }
  for (int i = 0; i < s->nexprs; i++) {
    sl_bexpr *e = s->exprs[i];
    if (s->aggregate)
      rc = to_agg_row(g, e, s->ngroups, &e);
    else if (s->nwindows > 0)
      e = winref_to_column(g->a, e, in->ncols);
    else
      rc = check_plain(g, e);
    if (rc != SL_OK)
      return rc;
    sel->exprs[i] = e;
    sel->names[i] = q->cols[i].name;
    sel->types[i] = q->cols[i].type;
    sel->wprop[i] = wprop_of(body, e);
    if (body->stream && e->kind == SL_BEXPR_COLUMN &&
        e->index == body->time_col && sel->time_col < 0)
      sel->time_col = i;
  }
  if (sel->stream && sel->time_col < 0 && !g->updating)
    return refuse(g, q->span,
                  "a stream feeding an interval join must keep its "
                  "event-time column");
  *out = sel;
  return SL_OK;
}

static int stage_query(stager *g, const sl_bquery *q, sl_stage **out) {
  /* A part one pipeline can run is a leaf. */
  sl_plan *leaf = NULL;
  sl_error leaf_err = {0};
  int rc = sl_plan_build_leaf(g->a, q, &leaf, &leaf_err);
  /* A GROUP BY without a window under another operator is not a leaf:
   * its result changes as rows arrive, so it is an updating aggregate
   * stage over its input's stream (the operator above takes its rows
   * back). */
  bool updating_agg = rc == SL_OK && leaf->kind == SL_PLAN_AGGREGATE &&
                      !leaf->windowed && !leaf->window_rows &&
                      q->kind == SL_BQUERY_SELECT && q->select->from;
  if (rc == SL_OK && !updating_agg) {
    sl_error_clear(&leaf_err);
    return add_leaf(g, leaf, q, out);
  }
  if (updating_agg) {
    sl_error_clear(&leaf_err);
    return stage_select(g, q, false, out);
  }
  if (rc != SL_EUNSUPPORTED || q->kind != SL_BQUERY_SELECT ||
      !q->select->from) {
    sl_error_move(g->err, &leaf_err);
    return rc;
  }
  sl_error_clear(&leaf_err);
  return stage_select(g, q, false, out);
}

/* ---- which leaf columns the stages read ------------------------------ */

static void mark_columns(const sl_bexpr *e, bool *used, int lo, int n) {
  if (!e)
    return;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0 && e->index >= lo &&
      e->index < lo + n)
    used[e->index - lo] = true;
  for (int i = 0; i < e->nargs; i++)
    mark_columns(e->args[i], used, lo, n);
}

static void mark_all(sl_bexpr *const *es, int k, bool *used, int lo, int n) {
  for (int i = 0; i < k; i++)
    mark_columns(es[i], used, lo, n);
}

/* used[i]: output column i of st is read above.  Leaves' unread columns
 * become NULL constants and their plans are pruned again, so a leaf's
 * source produces (and the stage store keeps) only what the stages read:
 * q7's bids keep auction, price, bidder, dateTime and extra, not url. */
static void prune_stage(sl_arena *a, bool **leaf_used, sl_stage *st,
                        const bool *used) {
  int in_n = st->input ? st->input->ncols : 0;
  bool *u = SL_ANEW_N(a, bool, (in_n > 0 ? in_n : 0) + 1);
  switch (st->kind) {
  case SL_STAGE_LEAF:
    /* Several stages may read one (shared) leaf: gather, apply later. */
    for (int i = 0; i < st->ncols; i++)
      if (used[i] || i == st->time_col || st->wprop[i] >= 0)
        leaf_used[st->leaf][i] = true;
    return;
  case SL_STAGE_SELECT:
    mark_columns(st->filter, u, 0, in_n);
    for (int i = 0; i < st->nexprs; i++)
      if (used[i])
        mark_columns(st->exprs[i], u, 0, in_n);
    break;
  case SL_STAGE_AGGREGATE:
    mark_all(st->groups, st->ngroups, u, 0, in_n);
    for (int i = 0; i < st->naggs; i++) {
      mark_columns(st->aggs[i].arg, u, 0, in_n);
      mark_columns(st->aggs[i].filter, u, 0, in_n);
    }
    break;
  case SL_STAGE_TOPN:
    for (int i = 0; i < in_n; i++)
      u[i] = used[i];
    mark_all(st->partition, st->npartition, u, 0, in_n);
    mark_all(st->order, st->norder, u, 0, in_n);
    break;
  case SL_STAGE_JOIN: {
    int nl = st->left->ncols, nr = st->right->ncols;
    bool *ul = SL_ANEW_N(a, bool, nl + 1), *ur = SL_ANEW_N(a, bool, nr + 1);
    for (int i = 0; i < nl; i++)
      ul[i] = used[i];
    for (int i = 0; i < nr; i++)
      ur[i] = used[nl + i];
    mark_all(st->lkeys, st->nkeys, ul, 0, nl);
    mark_all(st->rkeys, st->nkeys, ur, 0, nr);
    mark_columns(st->residual, ul, 0, nl);
    mark_columns(st->residual, ur, nl, nr);
    prune_stage(a, leaf_used, st->left, ul);
    prune_stage(a, leaf_used, st->right, ur);
    return;
  }
  }
  prune_stage(a, leaf_used, st->input, u);
}

/* A leaf's columns no stage reads become NULL constants (the hidden
 * window_end stays); a stream leaf's source then reads less. */
static void prune_leaf(sl_arena *a, sl_plan *lp, const bool *used) {
  bool windowed = lp->kind == SL_PLAN_AGGREGATE && lp->windowed;
  /* The hidden last column stays (window_end; window rows' $live_from). */
  int n = windowed || lp->window_rows ? lp->nout - 1 : lp->nout;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    if (used[i])
      continue;
    lp->out[i] = null_column(a, lp->out_types[i], lp->out_names[i]);
    changed = true;
  }
  if (changed && lp->kind == SL_PLAN_STATELESS)
    sl_plan_prune_leaves(a, lp);
}

/* Does a stage of this tree keep rows across a window (a join, an
 * aggregate, a Top-N)? */
/* ---- updating Top-N: its bound --------------------------------------- */

/* The N of `c <= N`, `c < N + 1`, `c = 1` (and mirrored) where c is column
 * col of the filtered rows; -1 if e is none of them. */
static int64_t bound_of(const sl_bexpr *e, int col) {
  if (e->kind != SL_BEXPR_BINARY)
    return -1;
  const sl_bexpr *x = e->args[0], *y = e->args[1];
  sl_op op = e->op;
  if (y->kind == SL_BEXPR_COLUMN && x->kind == SL_BEXPR_LITERAL) {
    const sl_bexpr *t = x;
    x = y;
    y = t;
    op = op == SL_OP_GE ? SL_OP_LE : op == SL_OP_GT ? SL_OP_LT : op;
  }
  if (x->kind != SL_BEXPR_COLUMN || x->index != col ||
      y->kind != SL_BEXPR_LITERAL || y->lit.kind != SL_LIT_INTEGER)
    return -1;
  int64_t v = y->lit.i64;
  if (op == SL_OP_LE)
    return v;
  if (op == SL_OP_LT)
    return v - 1;
  if (op == SL_OP_EQ && v == 1)
    return 1;
  return -1;
}

/* Set each updating Top-N's topn_limit from the filter above it: a SELECT
 * whose filter bounds the ROW_NUMBER column, read directly or through one
 * SELECT that passes the column on. */
static void find_topn_limits(sl_stage *st) {
  if (!st)
    return;
  if (st->kind == SL_STAGE_SELECT && st->filter && st->input) {
    sl_stage *t = st->input, *via = NULL;
    if (t->kind == SL_STAGE_SELECT && t->input) {
      via = t;
      t = t->input;
    }
    if (t->kind == SL_STAGE_TOPN && t->stream) {
      int rn = t->ncols - 1;
      for (int c = 0; c < (via ? via->ncols : t->ncols); c++) {
        bool is_rn = via ? via->exprs[c]->kind == SL_BEXPR_COLUMN &&
                               via->exprs[c]->index == rn && !via->filter
                         : c == rn;
        if (!is_rn)
          continue;
        sl_arena tmp;
        sl_arena_init(&tmp, 0);
        sl_pl_parts parts = {0};
        sl_pl_conjuncts(&tmp, st->filter, &parts);
        for (int i = 0; i < parts.n; i++) {
          int64_t b = bound_of(parts.v[i], c);
          if (b >= 0 && (t->topn_limit < 0 || b < t->topn_limit))
            t->topn_limit = b;
        }
        sl_arena_free(&tmp);
      }
    }
  }
  find_topn_limits(st->input);
  find_topn_limits(st->left);
  find_topn_limits(st->right);
}

/* The first updating Top-N without a bound, or NULL. */
static const sl_stage *unbounded_topn(const sl_stage *st) {
  if (!st)
    return NULL;
  if (st->kind == SL_STAGE_TOPN && st->stream && st->topn_limit < 0)
    return st;
  const sl_stage *u = unbounded_topn(st->input);
  if (!u)
    u = unbounded_topn(st->left);
  return u ? u : unbounded_topn(st->right);
}

/* Does an updating stage (a Top-N or aggregate over a stream) feed these
 * rows, so that they may be taken back? */
static bool updates(const sl_stage *st) {
  if (!st)
    return false;
  if ((st->kind == SL_STAGE_TOPN || st->kind == SL_STAGE_AGGREGATE) &&
      st->stream)
    return true;
  return updates(st->input) || updates(st->left) || updates(st->right);
}

/* Updating stages take only streams.  A join, Top-N or aggregate over an
 * updating result is marked retracting (its state then keeps what taking
 * rows back needs). */
static int check_updating(stager *g, sl_stage *st, sl_span span) {
  if (!st)
    return SL_OK;
  if (st->kind == SL_STAGE_LEAF && !st->stream)
    return refuse(g, span,
                  "a join or ROW_NUMBER over streams without windows mixed "
                  "with windowed results in one query");
  if (st->kind == SL_STAGE_JOIN || st->kind == SL_STAGE_TOPN ||
      (st->kind == SL_STAGE_AGGREGATE && st->stream))
    st->retracting =
        updates(st->input) || updates(st->left) || updates(st->right);
  int rc = check_updating(g, st->input, span);
  if (rc == SL_OK)
    rc = check_updating(g, st->left, span);
  if (rc == SL_OK)
    rc = check_updating(g, st->right, span);
  return rc;
}

static bool holds_state(const sl_stage *st) {
  if (!st)
    return false;
  if (st->kind == SL_STAGE_JOIN || st->kind == SL_STAGE_AGGREGATE ||
      st->kind == SL_STAGE_TOPN)
    return true;
  return holds_state(st->input) || holds_state(st->left) ||
         holds_state(st->right);
}

int sl_stage_plan_build(sl_arena *a, const sl_bquery *q, sl_plan *plan,
                        sl_error *err) {
  stager g = {a, SL_ANEW(a, sl_staged_plan), err, 0, 0, false, false};
  plan->kind = SL_PLAN_STAGED;
  plan->staged = g.sp;
  /* The query itself is never a leaf: it would have run as one pipeline. */
  sl_stage *top;
  int rc = stage_select(&g, q, true, &top);
  if (rc != SL_OK)
    return rc;
  if (top->stream && !g.updating)
    return refuse(&g, q->span, "a stream on its own in a staged query");
  if (!g.updating && !streams_have_time(&g, top))
    return refuse(&g, q->span,
                  "a stream without an event-time column (WATERMARK) "
                  "joined with windowed results");
  if (g.updating) {
    find_topn_limits(top);
    const sl_stage *u = unbounded_topn(top);
    if (u)
      return refuse(&g, q->span,
                    "ROW_NUMBER over a stream without a window that the "
                    "query does not bound (WHERE rownum <= N around it): "
                    "every row would be kept and renumbered for as long as "
                    "the query runs");
    rc = check_updating(&g, top, q->span);
    if (rc != SL_OK)
      return rc;
    if (q->norder > 0 || q->limit >= 0 || q->offset > 0)
      return refuse(&g, q->span,
                    "ORDER BY, LIMIT or OFFSET over a join or ROW_NUMBER "
                    "of streams without windows");
    g.sp->updating = true;
    plan->changelog = updates(top);
    for (int j = 0; j < g.sp->nleaves; j++)
      g.sp->leaves[j]->keep_late = true;
    drop_late_under_bounds(&g, top);
  }
  g.sp->top = top;
  g.sp->at_once = !holds_state(top);
  bool *all = SL_ANEW_N(a, bool, top->ncols + 1);
  for (int i = 0; i < top->ncols; i++)
    all[i] = true;
  bool **leaf_used = SL_ANEW_N(a, bool *, g.sp->nleaves);
  for (int j = 0; j < g.sp->nleaves; j++)
    leaf_used[j] = SL_ANEW_N(a, bool, g.sp->leaves[j]->nout + 3);
  prune_stage(a, leaf_used, top, all);
  for (int j = 0; j < g.sp->nleaves; j++)
    prune_leaf(a, g.sp->leaves[j], leaf_used[j]);
  plan->nout = top->ncols;
  plan->out_names = top->names;
  plan->out_types = top->types;
  plan->limit = q->limit;
  plan->offset = q->offset;
  plan->windowed = !g.updating;
  plan->window = g.sp->window;
  if (q->norder > 0) {
    /* A sort needs the whole result: every leaf's input must end. */
    for (int j = 0; j < g.sp->nleaves; j++) {
      int rc2 = sl_pl_order_bounded(g.sp->leaves[j], q, err);
      if (rc2 != SL_OK)
        return rc2;
    }
    plan->norder = q->norder;
    plan->order = q->order;
  }
  return SL_OK;
}
