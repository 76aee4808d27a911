/* stage_join.c - the JOIN stages of a staged plan (stage_plan.c maps the
 * rest of the query).  Kept apart because a join is where the staged plan's
 * rules about time live: keys that equate two windowed inputs' windows, the
 * bounds on event time that let a regular join of two streams drop stored
 * rows (add_bound), and the interval a stream joined with windowed results
 * must lie in around a window bound. */
#include <string.h>

#include "plan_int.h"
#include "sluice/expr/interpreter.h"
#include "sluice/planner/plan.h"
#include "stage_int.h"

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
  if (!sl_stg_bound_names_window(win, w->wprop[c]))
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

/* w - off, a watermark moved back by a bound's offset: none yet and the
 * end of time stay as they are, and so does a value past the int64 range
 * (clamped). */
static int64_t wm_minus(int64_t w, int64_t off) {
  int64_t r;
  if (w == INT64_MIN || w == INT64_MAX)
    return w;
  if (__builtin_sub_overflow(w, off, &r))
    return off > 0 ? INT64_MIN : INT64_MAX;
  return r;
}

/* The join's column c of side `side` (plan.h): its side's own watermark
 * there, lowered to what the bounds holding c above the other side's time
 * allow (the highest of them, each one holding on its own). */
static bool join_col_watermark(const sl_stage *j, int side, int c,
                               const int64_t *leaf_wm, int64_t *wm) {
  const sl_stage *x = side ? j->right : j->left;
  const sl_stage *y = side ? j->left : j->right;
  int64_t own, best = INT64_MIN;
  bool met = false;
  if (!sl_stage_col_watermark(x, c, leaf_wm, &own))
    return false;
  for (int k = 0; k < j->nbounds; k++) {
    int64_t w;
    if (j->bounds[k].side != 1 - side || j->bounds[k].col != c ||
        !sl_stage_col_watermark(y, j->bounds[k].time_col, leaf_wm, &w))
      continue;
    w = wm_minus(w, j->bounds[k].offset_us);
    best = !met || w > best ? w : best;
    met = true;
  }
  *wm = own < best ? own : best;
  return met;
}

bool sl_stage_col_watermark(const sl_stage *st, int col, const int64_t *leaf_wm,
                            int64_t *wm) {
  int64_t ignored;
  if (!wm)
    wm = &ignored;
  switch (st->kind) {
  case SL_STAGE_LEAF:
    if (!st->stream || col != st->time_col)
      return false;
    *wm = leaf_wm ? leaf_wm[st->leaf] : INT64_MIN;
    return true;
  case SL_STAGE_SELECT: {
    const sl_bexpr *e = col < st->nexprs ? st->exprs[col] : NULL;
    return e && e->kind == SL_BEXPR_COLUMN && e->depth == 0 &&
           sl_stage_col_watermark(st->input, e->index, leaf_wm, wm);
  }
  case SL_STAGE_JOIN: {
    if (!st->stream) /* a regular join's rows only */
      return false;
    int nl = st->left->ncols;
    return join_col_watermark(st, col < nl ? 0 : 1, col < nl ? col : col - nl,
                              leaf_wm, wm);
  }
  default:
    return false;
  }
}

/* Record u <= v (or u < v), two expressions over a regular join's row, as
 * a bound (sl_stage.bounds) when u is side Y's event time plus a constant
 * cu and v a TIMESTAMP column of the other side X plus a constant cv.  Y's
 * "event time" is any column of Y with a watermark
 * (sl_stage_col_watermark): a leaf's, or when Y is a join of streams a
 * time column of either of its sides that its own bounds hold, so the
 * joins of three streams keep flat state too.
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
 * the first sweep.  Of two bounds by the same columns the earlier one
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
  if (us == vs || !sl_stage_col_watermark(a, ucol, NULL, NULL) ||
      (v->type->kind != SL_TYPE_TIMESTAMP &&
       v->type->kind != SL_TYPE_TIMESTAMP_LTZ))
    return;
  int64_t off;
  if (__builtin_sub_overflow(cv, cu, &off))
    return;
  for (int k = 0; k < j->nbounds; k++)
    if (j->bounds[k].side == us && j->bounds[k].col == vcol &&
        j->bounds[k].time_col == ucol) {
      if (off < j->bounds[k].offset_us)
        j->bounds[k].offset_us = off;
      return;
    }
  struct sl_stage_bound *b =
      SL_ANEW_N(g->a, struct sl_stage_bound, j->nbounds + 1);
  if (j->nbounds)
    memcpy(b, j->bounds, sizeof *b * (size_t)j->nbounds);
  b[j->nbounds].side = us;
  b[j->nbounds].time_col = ucol;
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
void sl_stg_drop_late_under_bounds(stager *g, const sl_stage *st) {
  if (!st)
    return;
  for (int k = 0; k < st->nbounds; k++)
    set_keep_late(g, st->bounds[k].side ? st->right : st->left, false);
  sl_stg_drop_late_under_bounds(g, st->input);
  sl_stg_drop_late_under_bounds(g, st->left);
  sl_stg_drop_late_under_bounds(g, st->right);
}

/* The JOIN stage over l and r: l's columns, then r's. */
static sl_stage *join_stage(stager *g, sl_stage *l, sl_stage *r) {
  int nl = l->ncols, nr = r->ncols;
  sl_stage *j = sl_stg_new_stage(g, SL_STAGE_JOIN, nl + nr);
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
  return j;
}

/* The join's conditions sorted out: equalities of a left and a right
 * expression become keys (*aligned when one equates a window bound of each
 * side); for a regular join a condition on one side alone goes to that
 * side's filter; the rest stays a residual. */
static int split_conditions(stager *g, sl_stage *j, bool regular,
                            sl_bexpr *const *parts, int n, bool *aligned,
                            sl_pl_parts *lparts, sl_pl_parts *rparts,
                            sl_pl_parts *residual) {
  int nl = j->left->ncols, nr = j->right->ncols;
  j->lkeys = SL_ANEW_N(g->a, sl_bexpr *, n > 0 ? n : 1);
  j->rkeys = SL_ANEW_N(g->a, sl_bexpr *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    sl_bexpr *c = parts[i];
    int rc = sl_stg_check_plain(g, c);
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
        int px = sl_stg_wprop_of(j, x), py = sl_stg_wprop_of(j, y);
        if (px >= 0 && px == py &&
            sl_stg_bound_names_window(&g->sp->window, px))
          *aligned = true;
        j->lkeys[j->nkeys] = x;
        j->rkeys[j->nkeys++] = sl_stg_shift(g->a, y, -nl);
        continue;
      }
    }
    /* A regular join keeps every row it stores: a condition on one side
     * alone filters that side before the join (q20's A.category = 10
     * keeps a fifth of the auctions). */
    if (regular && sl_pl_columns_within(c, 0, nl) && c->nargs > 0) {
      sl_pl_parts_add(g->a, lparts, c);
      continue;
    }
    if (regular && sl_pl_columns_within(c, nl, nl + nr) && c->nargs > 0) {
      sl_pl_parts_add(g->a, rparts, sl_stg_shift(g->a, c, -nl));
      continue;
    }
    sl_pl_parts_add(g->a, residual, c);
  }
  return SL_OK;
}

/* A join of a stream with windowed results: the stream side's event time
 * must be bounded on both sides by a window bound of the other side. */
static int interval_join(stager *g, const sl_bfrom *f, sl_stage *j,
                         sl_bexpr *const *parts, int n) {
  const sl_stage *l = j->left, *r = j->right;
  int nl = l->ncols;
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
    return sl_stg_refuse(g, f->span,
                         "a join of a stream with windowed results needs the "
                         "stream's event time bounded on both sides by the "
                         "window's time (e.g. S.ts BETWEEN W.window_time - "
                         "INTERVAL '10' SECOND AND W.window_time)");
  if (hi < lo)
    return sl_stg_refuse(g, f->span,
                         "an interval join whose interval is empty");
  j->lo_us = lo;
  j->hi_us = hi;
  return SL_OK;
}

/* The conditions of conj on one side alone whose side is itself a join
 * move into that join (Flink pushes them down too): in a join of three
 * streams, `WHERE A.t BETWEEN P.t AND P.t + INTERVAL ...` is a bound of the
 * join of P and A (add_bound), where above it would only filter that
 * join's rows and both its sides would be kept for ever.  *conj keeps the
 * rest; rpush's are over the right side's own columns. */
static int push_into_side_joins(stager *g, const sl_bfrom *f, sl_pl_parts *conj,
                                sl_pl_parts *lpush, sl_pl_parts *rpush) {
  const sl_bfrom *lf = f->u.join.left, *rf = f->u.join.right;
  int nl = lf->ncols, nr = rf->ncols, kept = 0;
  for (int i = 0; i < conj->n; i++) {
    sl_bexpr *c = conj->v[i];
    int rc = sl_stg_check_plain(g, c);
    if (rc != SL_OK)
      return rc;
    if (c->nargs > 0 && lf->kind == SL_BFROM_JOIN &&
        sl_pl_columns_within(c, 0, nl))
      sl_pl_parts_add(g->a, lpush, c);
    else if (c->nargs > 0 && rf->kind == SL_BFROM_JOIN &&
             sl_pl_columns_within(c, nl, nl + nr))
      sl_pl_parts_add(g->a, rpush, sl_stg_shift(g->a, c, -nl));
    else
      conj->v[kept++] = c;
  }
  conj->n = kept;
  return SL_OK;
}

/* Every column e reads (of this block's row) is a plain column of the
 * select list exprs: a condition on them means the same under the view. */
static bool reads_plain_columns(const sl_bexpr *e, sl_bexpr *const *exprs) {
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0)
    return exprs[e->index]->kind == SL_BEXPR_COLUMN &&
           exprs[e->index]->depth == 0;
  if (e->kind == SL_BEXPR_SUBQUERY)
    return false;
  for (int i = 0; i < e->nargs; i++)
    if (!reads_plain_columns(e->args[i], exprs))
      return false;
  return true;
}

const sl_bquery *sl_stg_push_into_join_view(stager *g, const sl_bquery *q,
                                            sl_bexpr **extra) {
  const sl_bselect *s = q->select;
  if (!*extra || q->kind != SL_BQUERY_SELECT || !s->from ||
      s->from->kind != SL_BFROM_JOIN || s->aggregate || s->group_window ||
      s->nwindows > 0 || s->distinct || q->norder > 0 || q->limit >= 0 ||
      q->offset > 0)
    return q;
  sl_pl_parts conj = {0}, pushed = {0}, kept = {0};
  sl_pl_conjuncts(g->a, *extra, &conj);
  for (int i = 0; i < conj.n; i++)
    if (conj.v[i]->nargs > 0 && reads_plain_columns(conj.v[i], s->exprs))
      sl_pl_parts_add(g->a, &pushed, sl_pl_subst(g->a, conj.v[i], s->exprs));
    else
      sl_pl_parts_add(g->a, &kept, conj.v[i]);
  if (pushed.n == 0)
    return q;
  if (s->where)
    sl_pl_parts_add(g->a, &pushed, s->where);
  sl_bselect *s2 = SL_ANEW(g->a, sl_bselect);
  *s2 = *s;
  s2->where = sl_pl_and_parts(g->a, &pushed);
  sl_bquery *q2 = SL_ANEW(g->a, sl_bquery);
  *q2 = *q;
  q2->select = s2;
  *extra = sl_pl_and_parts(g->a, &kept);
  return q2;
}

int sl_stg_join(stager *g, const sl_bfrom *f, sl_bexpr *extra, sl_stage **out) {
  if (f->u.join.kind != SL_JOIN_INNER && f->u.join.kind != SL_JOIN_CROSS)
    return sl_stg_refuse(g, f->span, "outer joins of windowed results");
  if (f->u.join.lookup)
    return sl_stg_refuse(g, f->span,
                         "FOR SYSTEM_TIME AS OF above an aggregate");
  sl_pl_parts conj = {0}, lparts = {0}, rparts = {0}, residual = {0};
  sl_pl_conjuncts(g->a, f->u.join.on, &conj);
  sl_pl_conjuncts(g->a, extra, &conj);
  sl_pl_parts lpush = {0}, rpush = {0};
  int rc = push_into_side_joins(g, f, &conj, &lpush, &rpush);
  sl_stage *l, *r;
  if (rc == SL_OK)
    rc = sl_stg_from(g, f->u.join.left, sl_pl_and_parts(g->a, &lpush), &l);
  if (rc == SL_OK)
    rc = sl_stg_from(g, f->u.join.right, sl_pl_and_parts(g->a, &rpush), &r);
  if (rc != SL_OK)
    return rc;
  sl_stage *j = join_stage(g, l, r);
  /* A regular join of two streams: state for both sides, rows as they
   * arrive (updating stages). */
  bool regular = l->stream && r->stream;
  if (regular) {
    g->updating = true;
    j->stream = true;
  }
  sl_bexpr **parts = conj.v;
  int n = conj.n;
  bool aligned = false;
  rc = split_conditions(g, j, regular, parts, n, &aligned, &lparts, &rparts,
                        &residual);
  if (rc != SL_OK)
    return rc;
  /* gathered, then ANDed once: flat, and linear in the conjuncts */
  sl_bexpr *lfilter = sl_pl_and_parts(g->a, &lparts);
  sl_bexpr *rfilter = sl_pl_and_parts(g->a, &rparts);
  j->residual = sl_pl_and(g->a, j->residual, sl_pl_and_parts(g->a, &residual));
  if (regular) {
    if (lfilter)
      j->left = sl_stg_filter(g, j->left, lfilter);
    if (rfilter)
      j->right = sl_stg_filter(g, j->right, rfilter);
    join_bounds(g, j, parts, n);
    *out = j;
    return SL_OK;
  }
  if (!l->stream && !r->stream) {
    if (!aligned)
      return sl_stg_refuse(
          g, f->span,
          "a join of two windowed results that does not equate "
          "their windows; add L.window_start = R.window_start AND "
          "L.window_end = R.window_end (or the same for the "
          "columns holding TUMBLE_START/TUMBLE_END; for SESSION "
          "and CUMULATE windows the ends must be equated)");
    *out = j;
    return SL_OK;
  }
  rc = interval_join(g, f, j, parts, n);
  if (rc == SL_OK)
    *out = j;
  return rc;
}
