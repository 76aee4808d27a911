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
#include "stage_int.h"

int sl_stg_refuse(stager *g, sl_span span, const char *what) {
  return sl_error_set_at(g->err, SL_EUNSUPPORTED, span.line, span.column,
                         span.offset, span.length, "not supported yet: %s",
                         what);
}

sl_stage *sl_stg_new_stage(stager *g, sl_stage_kind kind, int ncols) {
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
sl_bexpr *sl_stg_null_column(sl_arena *a, const sl_type *t, const char *name) {
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
bool sl_stg_bound_names_window(const sl_plan_window *w, int p) {
  return p == SL_WPROP_END || p == SL_WPROP_ROWTIME ||
         (p == SL_WPROP_START &&
          (w->kind == SL_WINDOW_TUMBLE || w->kind == SL_WINDOW_HOP));
}

/* The window bound a column-reading expression is (or -1). */
int sl_stg_wprop_of(const sl_stage *in, const sl_bexpr *e) {
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
  sl_stage *all = sl_stg_new_stage(g, SL_STAGE_LEAF, n);
  all->leaf = into;
  for (int i = 0; i < n; i++) {
    all->names[i] = names[i];
    all->types[i] = types[i];
    const sl_bexpr *e = outs[i];
    if (e->kind == SL_BEXPR_COLUMN && e->index >= nk + nagg &&
        e->index < nk + nagg + 3)
      all->wprop[i] = e->index - nk - nagg;
  }
  sl_stage *sel = sl_stg_new_stage(g, SL_STAGE_SELECT, nb);
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
    return sl_stg_refuse(g, q->span,
                         "ORDER BY, LIMIT or OFFSET in a subquery that feeds "
                         "another operator");
  bool rows = leaf->window_rows;
  bool windowed = (leaf->kind == SL_PLAN_AGGREGATE && leaf->windowed) || rows;
  if (leaf->kind == SL_PLAN_AGGREGATE && !windowed)
    return sl_stg_refuse(g, q->span,
                         "a GROUP BY without a window feeding another operator "
                         "(its result changes forever; updating queries come "
                         "later)");
  if (windowed) {
    if (!g->have_window) {
      sp->window = leaf->window;
      g->have_window = true;
    } else if (!same_window(&sp->window, &leaf->window)) {
      return sl_stg_refuse(g, q->span,
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
  sl_stage *st = sl_stg_new_stage(g, SL_STAGE_LEAF, ncols);
  st->leaf = idx;
  st->stream = !windowed;
  int nk = sl_plan_nkeys(leaf), na = sl_plan_naggs(leaf);
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

sl_bexpr *sl_stg_shift(sl_arena *a, const sl_bexpr *e, int delta) {
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
    return sl_stg_refuse(
        g, e->span, "this expression over the result of another aggregate");
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

int sl_stg_check_plain(stager *g, const sl_bexpr *e) {
  if (!e)
    return SL_OK;
  if (e->kind == SL_BEXPR_WINDOW_PROP || e->kind == SL_BEXPR_SUBQUERY ||
      e->kind == SL_BEXPR_GROUP_REF || e->kind == SL_BEXPR_AGG_REF)
    return sl_stg_refuse(
        g, e->span, "this expression over the result of another aggregate");
  if (e->kind == SL_BEXPR_COLUMN && e->depth != 0)
    return sl_stg_refuse(g, e->span, "correlated subqueries");
  for (int i = 0; i < e->nargs; i++) {
    int rc = sl_stg_check_plain(g, e->args[i]);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* ---- FROM items (a join: stage_join.c) ---------------------------------- */

static int stage_query(stager *g, const sl_bquery *q, sl_stage **out);

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

/* A SELECT keeping the rows of st where cond holds, every column as is. */
sl_stage *sl_stg_filter(stager *g, sl_stage *st, sl_bexpr *cond) {
  sl_stage *sel = sl_stg_new_stage(g, SL_STAGE_SELECT, st->ncols);
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
    return sl_stg_refuse(g, f->span,
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
    return sl_stg_refuse(g, f->span,
                         "a window table function over an aggregate");
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
      sl_stg_null_column(g->a, sl_type_new(g->a, SL_TYPE_BIGINT), "$live_from");
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

int sl_stg_from(stager *g, const sl_bfrom *f, sl_bexpr *extra, sl_stage **out) {
  sl_stage *st = NULL;
  int rc;
  switch (f->kind) {
  case SL_BFROM_VIEW:
  case SL_BFROM_SUBQUERY:
    rc = stage_query(g, sl_stg_push_into_join_view(g, f->u.sub.query, &extra),
                     &st);
    break;
  case SL_BFROM_JOIN:
    return sl_stg_join(g, f, extra, out);
  case SL_BFROM_SCAN:
    /* A table read as it is: the leaf is SELECT * over it. */
    rc = stage_query(g, select_all(g->a, f), &st);
    break;
  case SL_BFROM_WINDOW_TVF:
    rc = stage_window_rows(g, f, &st);
    break;
  default:
    return sl_stg_refuse(g, f->span,
                         "a table or window function read directly next to "
                         "another aggregate; wrap it in a subquery or view");
  }
  if (rc != SL_OK)
    return rc;
  if (extra) {
    rc = sl_stg_check_plain(g, extra);
    if (rc != SL_OK)
      return rc;
    st = sl_stg_filter(g, st, extra);
  }
  *out = st;
  return SL_OK;
}

/* ---- queries ------------------------------------------------------------- */

static int stage_aggregate(stager *g, const sl_bselect *s, sl_stage *in,
                           sl_stage **out) {
  if (s->group_window)
    return sl_stg_refuse(g, s->group_window->span,
                         "a window over the result of another aggregate");
  /* Over the rows of a join of streams (or another updating aggregate):
   * an updating aggregate, its groups kept for as long as the query runs.
   * A stream leaf is never the input here: its GROUP BY is a leaf. */
  bool updating = in->stream;
  if (updating)
    g->updating = true;
  sl_stage *ag = sl_stg_new_stage(g, SL_STAGE_AGGREGATE, s->ngroups + s->naggs);
  ag->stream = updating;
  ag->input = in;
  ag->ngroups = s->ngroups;
  ag->groups = SL_ANEW_N(g->a, sl_bexpr *, s->ngroups > 0 ? s->ngroups : 1);
  bool aligned = false;
  for (int i = 0; i < s->ngroups; i++) {
    int rc = sl_stg_check_plain(g, s->groups[i]);
    if (rc != SL_OK)
      return rc;
    ag->groups[i] = s->groups[i];
    ag->names[i] = s->groups[i]->name ? s->groups[i]->name : "group";
    ag->types[i] = s->groups[i]->type;
    ag->wprop[i] = sl_stg_wprop_of(in, s->groups[i]);
    aligned |= ag->wprop[i] >= 0 &&
               sl_stg_bound_names_window(&g->sp->window, ag->wprop[i]);
  }
  if (!aligned && !updating)
    return sl_stg_refuse(
        g, s->from->span,
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
      return sl_stg_refuse(g, ba->span, "this aggregate function");
    int rc = sl_stg_check_plain(g, pa->arg);
    if (rc == SL_OK)
      rc = sl_stg_check_plain(g, pa->filter);
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
    return sl_stg_refuse(g, s->windows[0].span,
                         "OVER other than one ROW_NUMBER() (window Top-N)");
  const sl_bwinfunc *wf = &s->windows[0];
  if (in->stream) /* Top-N or deduplication over a stream */
    g->updating = true;
  sl_stage *t = sl_stg_new_stage(g, SL_STAGE_TOPN, in->ncols + 1);
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
    int rc = sl_stg_check_plain(g, wf->partition[i]);
    if (rc != SL_OK)
      return rc;
    int p = sl_stg_wprop_of(in, wf->partition[i]);
    aligned |= p >= 0 && sl_stg_bound_names_window(&g->sp->window, p);
  }
  t->stream = in->stream;
  t->topn_limit = -1;
  if (!aligned && !in->stream)
    return sl_stg_refuse(
        g, wf->span,
        "ROW_NUMBER over windowed results not partitioned by "
        "their window (PARTITION BY window_start, window_end)");
  t->norder = wf->norder;
  t->order = wf->order;
  t->order_desc = wf->order_desc;
  t->order_nulls = wf->order_nulls;
  for (int i = 0; i < wf->norder; i++) {
    int rc = sl_stg_check_plain(g, wf->order[i]);
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
    return sl_stg_refuse(g, q->span,
                         "ORDER BY or LIMIT in a subquery that feeds another "
                         "operator");
  if (s->distinct)
    return sl_stg_refuse(g, q->span, "SELECT DISTINCT over windowed results");
  if (s->aggregate && s->nwindows > 0)
    return sl_stg_refuse(g, s->windows[0].span,
                         "OVER and GROUP BY in the same SELECT");
  /* WHERE goes into a join below (the interval condition of q7 is in the
   * WHERE), or filters the input. */
  int rc = sl_stg_check_plain(g, s->where);
  sl_stage *in = NULL;
  if (rc == SL_OK)
    rc = sl_stg_from(g, s->from, s->where, &in);
  if (rc != SL_OK)
    return rc;
  sl_stage *body = in;
  if (s->aggregate)
    rc = stage_aggregate(g, s, in, &body);
  else if (s->nwindows > 0)
    rc = stage_topn(g, s, in, &body);
  if (rc != SL_OK)
    return rc;
  sl_stage *sel = sl_stg_new_stage(g, SL_STAGE_SELECT, s->nexprs);
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
      rc = sl_stg_check_plain(g, e);
    if (rc != SL_OK)
      return rc;
    sel->exprs[i] = e;
    sel->names[i] = q->cols[i].name;
    sel->types[i] = q->cols[i].type;
    sel->wprop[i] = sl_stg_wprop_of(body, e);
    if (body->stream && e->kind == SL_BEXPR_COLUMN &&
        e->index == body->time_col && sel->time_col < 0)
      sel->time_col = i;
  }
  if (sel->stream && sel->time_col < 0 && !g->updating)
    return sl_stg_refuse(g, q->span,
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

/* Set each Top-N's topn_limit from the filter above it: a SELECT whose
 * filter bounds the ROW_NUMBER column, read directly or through one SELECT
 * that passes the column on.  An updating Top-N keeps only those rows; a
 * window's numbers only those (the filter stays above either way). */
static void find_topn_limits(sl_stage *st) {
  if (!st)
    return;
  if (st->kind == SL_STAGE_SELECT && st->filter && st->input) {
    sl_stage *t = st->input, *via = NULL;
    if (t->kind == SL_STAGE_SELECT && t->input) {
      via = t;
      t = t->input;
    }
    if (t->kind == SL_STAGE_TOPN) {
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
    return sl_stg_refuse(
        g, span,
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

/* Does a stage of this tree keep rows across a window (a join, an
 * aggregate, a Top-N)? */
/* Does a stage of this tree keep rows across a window (a join, an
 * aggregate, a Top-N)? */
static bool holds_state(const sl_stage *st) {
  if (!st)
    return false;
  if (st->kind == SL_STAGE_JOIN || st->kind == SL_STAGE_AGGREGATE ||
      st->kind == SL_STAGE_TOPN)
    return true;
  return holds_state(st->input) || holds_state(st->left) ||
         holds_state(st->right);
}

/* The leaves are final (shared ones merged): their filters go into their
 * sources where that is safe (sl_plan_push_into_sources; a leaf is built
 * without, as its watermark needs the connector's guarantee).  The notes
 * go to the staged plan too, which is what EXPLAIN prints. */
static void push_into_leaf_sources(sl_arena *a, sl_plan *plan,
                                   sl_staged_plan *sp) {
  for (int j = 0; j < sp->nleaves; j++) {
    sl_plan *lp = sp->leaves[j];
    int noted = lp->nrewrites,
        pushed = lp->ninputs ? lp->inputs[0].nfilters : 0;
    sl_plan_push_into_sources(a, lp);
    for (int i = noted; i < lp->nrewrites; i++)
      sl_plan_note(a, plan, "leaf %d: %s", j + 1, lp->rewrites[i]);
    if (lp->ninputs && lp->inputs[0].nfilters != pushed)
      sl_plan_prune_leaves(a, lp); /* the filter may read less now */
    /* A stream leaf whose rows are never late (sl_pl_no_late_rows) need
     * not compute each row's event time to check: its workers only fold
     * the watermark, in the compiled loop that projects the rows. */
    if (lp->kind == SL_PLAN_STATELESS && lp->track_watermark &&
        !lp->keep_late && !lp->window_rows && !lp->late_table && lp->rowtime &&
        sl_pl_no_late_rows(lp)) {
      lp->keep_late = true;
      sl_plan_note(a, plan,
                   "leaf %d: no lateness check: the source's event time "
                   "never decreases and the watermark trails it, so no row "
                   "can be late",
                   j + 1);
    }
  }
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
    return sl_stg_refuse(&g, q->span, "a stream on its own in a staged query");
  if (!g.updating && !streams_have_time(&g, top))
    return sl_stg_refuse(&g, q->span,
                         "a stream without an event-time column (WATERMARK) "
                         "joined with windowed results");
  if (g.updating) {
    find_topn_limits(top);
    const sl_stage *u = unbounded_topn(top);
    if (u)
      return sl_stg_refuse(
          &g, q->span,
          "ROW_NUMBER over a stream without a window that the "
          "query does not bound (WHERE rownum <= N around it): "
          "every row would be kept and renumbered for as long as "
          "the query runs");
    rc = check_updating(&g, top, q->span);
    if (rc != SL_OK)
      return rc;
    if (q->norder > 0 || q->limit >= 0 || q->offset > 0)
      return sl_stg_refuse(
          &g, q->span,
          "ORDER BY, LIMIT or OFFSET over a join or ROW_NUMBER "
          "of streams without windows");
    g.sp->updating = true;
    plan->changelog = updates(top);
    for (int j = 0; j < g.sp->nleaves; j++)
      g.sp->leaves[j]->keep_late = true;
    sl_stg_drop_late_under_bounds(&g, top);
  }
  if (!g.updating)
    find_topn_limits(top);
  g.sp->top = top;
  g.sp->at_once = !holds_state(top);
  push_into_leaf_sources(a, plan, g.sp);
  sl_stg_prune_columns(a, g.sp, top);
  if (!g.updating)
    sl_stg_keep_extremes(a, plan, g.sp);
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
  sl_stg_place(a, g.sp);
  return SL_OK;
}
