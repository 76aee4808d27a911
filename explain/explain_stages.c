/* explain_stages.c - EXPLAIN of a staged plan (plan.h, "multi-stage
 * plans"): the stages evaluated per window, and under them each leaf's own
 * pipeline as explain_plan.c prints a single-stage plan (its strategy
 * chosen on its own). */
#include <stdio.h>
#include <string.h>

#include "explain_tree.h"
#include "sluice/explain/explain.h"
#include "sluice/planner/plan.h"

static const char *list(sl_arena *a, int n, sl_bexpr *const *e) {
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < n; i++)
    sl_strbuf_printf(&b, "%s%s", i ? ", " : "", sl_explain_expr(a, e[i]));
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

static const char *offset_str(sl_arena *a, int64_t us) {
  if (us == 0)
    return "window end";
  return sl_arena_printf(a, "window end %s %s", us < 0 ? "-" : "+",
                         sl_explain_duration(a, (us < 0 ? -us : us) / 1000));
}

/* What the stage tree printer carries: leaves already shown (a shared
 * leaf is printed once). */
typedef struct printer {
  const sl_plan *p;
  int workers;
  bool *shown;
  const sl_query_stats *st; /* EXPLAIN ANALYZE's, or NULL */
  int next_stage; /* the next stage's id (sl_query_stats.stage_peak) */
} printer;

/* The first node named name under n (n itself included), or NULL. */
static xnode *find_node(xnode *n, const char *name) {
  if (!n || strcmp(n->name, name) == 0)
    return n;
  for (int i = 0; i < n->nkids; i++) {
    xnode *f = find_node(n->kids[i], name);
    if (f)
      return f;
  }
  return NULL;
}

/* After a run: what leaf k's pipeline did with the JIT, on its Pipeline
 * line, as a single pipeline's says it (explain_plan.c). */
static void leaf_jit_actuals(sl_arena *a, const printer *pr, int k,
                             xnode *leaf) {
  const sl_query_stats *st = pr->st;
  xnode *pipe = find_node(leaf, "Pipeline");
  if (!st || k >= st->nleaves || !pipe || !pr->p->staged->leaves[k]->jit)
    return;
  const sl_leaf_stats *l = &st->leaf[k];
  if (l->jit_status[0]) {
    pipe->detail =
        sl_arena_printf(a, "[interpreted: %s, %d worker%s]", l->jit_status,
                        pr->workers, pr->workers == 1 ? "" : "s");
    sl_xnode_attr(a, pipe, "interpreted_because", l->jit_status);
    return;
  }
  sl_xnode_actual(a, pipe, "JIT compile time",
                  sl_arena_printf(a, "%.1f ms", l->jit_seconds * 1000));
  sl_xnode_actual(a, pipe, "buffers compiled",
                  sl_explain_count(a, l->jit_buffers));
  sl_xnode_actual(a, pipe, "rows compiled", sl_explain_count(a, l->jit_rows));
  sl_xnode_actual(a, pipe, "buffers handed back",
                  sl_explain_count(a, l->jit_back_buffers));
  sl_xnode_actual(a, pipe, "rows handed back",
                  sl_explain_count(a, l->jit_back_rows));
}

/* "a.b + 10 s": column col of a side's rows plus an offset, as EXPLAIN
 * shows a bound. */
static const char *plus_offset(sl_arena *a, const char *col, int64_t us) {
  if (us == 0)
    return col;
  uint64_t m = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
  char frac[16] = "";
  if (m % 1000000) {
    snprintf(frac, sizeof frac, ".%06llu", (unsigned long long)(m % 1000000));
    for (size_t k = strlen(frac); frac[k - 1] == '0'; k--)
      frac[k - 1] = '\0';
  }
  return sl_arena_printf(a, "%s %c %llu%s s", col, us < 0 ? '-' : '+',
                         (unsigned long long)(m / 1000000), frac);
}

/* How long a regular join keeps the rows of side `side` (0 left, 1 right):
 * until the other side's watermark passes a bound (stage_plan.c's
 * add_bound), or for as long as the query runs, and why. */
static const char *join_side_state(sl_arena *a, const sl_stage *st, int side) {
  const char *me = side ? "right" : "left", *other = side ? "left" : "right";
  const sl_stage *mine = side ? st->right : st->left;
  const sl_stage *theirs = side ? st->left : st->right;
  sl_strbuf b = SL_STRBUF_INIT;
  for (int k = 0; k < st->nbounds; k++) {
    const struct sl_stage_bound *bd = &st->bounds[k];
    if (bd->side == side)
      continue; /* a bound by this side's watermark drops the other's */
    sl_strbuf_printf(&b, "%s%s", b.len ? " or its " : "",
                     plus_offset(a, mine->names[bd->col], bd->offset_us));
    /* A join below has a watermark per time column: say whose. */
    if (bd->time_col != theirs->time_col)
      sl_strbuf_printf(&b, " (the watermark of the %s side's column %d, %s)",
                       other, bd->time_col + 1, theirs->names[bd->time_col]);
  }
  const char *r =
      b.len ? sl_arena_printf(a,
                              "a %s row is dropped once the %s side's "
                              "watermark passes its %s (the %s side's late "
                              "rows are dropped)",
                              me, other, sl_strbuf_cstr(&b), other)
            : sl_arena_printf(a,
                              "a %s row is kept for as long as the query "
                              "runs: no condition bounds the %s side's event "
                              "time from above by a TIMESTAMP column of the "
                              "%s row (plus or minus an interval)",
                              me, other, me);
  sl_strbuf_free(&b);
  return r;
}

static xnode *stage_node(sl_arena *a, printer *pr, const sl_stage *st);
static xnode *stage_node_of(sl_arena *a, printer *pr, const sl_stage *st);

static xnode *leaf_node(sl_arena *a, printer *pr, const sl_stage *st) {
  const sl_plan *lp = pr->p->staged->leaves[st->leaf];
  int workers = pr->workers;
  /* A leaf without state (a stream, window TVF rows) has no strategy:
   * each worker passes its own share on. */
  const char *strategy = lp->kind != SL_PLAN_AGGREGATE ? "none (no state)"
                         : lp->strategy == SL_STRATEGY_REPARTITION
                             ? "repartition"
                             : "late-merge";
  if (pr->shown[st->leaf]) {
    xnode *n = sl_xnode(a, "Leaf");
    n->detail = sl_arena_printf(
        a, "%d { shared: the leaf above, computed once }", st->leaf + 1);
    sl_xnode_attr(a, n, "leaf", sl_arena_printf(a, "%d", st->leaf + 1));
    return n;
  }
  pr->shown[st->leaf] = true;
  xnode *n = sl_explain_plan_tree(a, lp, workers, strategy, NULL);
  leaf_jit_actuals(a, pr, st->leaf, n);
  n->name = "Leaf";
  n->detail = sl_arena_printf(
      a, "%d { %s, strategy: %s }", st->leaf + 1,
      pr->p->staged->updating
          ? "every row to the stages above as it arrives, however late"
      : st->stream ? "every row to the stages above, kept until no later "
                     "window can need it"
                   : "each window's rows to the stages above when the "
                     "leaf's watermark passes the window end",
      strategy);
  sl_xnode_attr(a, n, "leaf", sl_arena_printf(a, "%d", st->leaf + 1));
  sl_xnode_attr(a, n, "strategy", strategy);
  if (lp->late_table && lp->kind != SL_PLAN_AGGREGATE) {
    const char *late = sl_arena_printf(a,
                                       "written whole to table '%s' (SET "
                                       "'sluice.late-records')",
                                       lp->late_table->name);
    size_t len = strlen(n->detail);
    n->detail = sl_arena_printf(a, "%.*s, late records: %s }", (int)(len - 2),
                                n->detail, late);
    sl_xnode_attr(a, n, "late records", late);
  }
  /* (updating stages take rows as they come: the store holds none) */
  if (pr->st && !pr->p->staged->updating && st->leaf < pr->st->nleaves)
    sl_xnode_actual(a, n, "peak bytes held for the stages",
                    sl_explain_count(a, pr->st->leaf[st->leaf].held_peak));
  const sl_stage_extreme *x =
      pr->p->staged->extremes ? pr->p->staged->extremes[st->leaf] : NULL;
  if (pr->st && x && st->leaf < pr->st->nleaves)
    sl_xnode_actual(a, n,
                    x->max ? "rows not kept (below their windows' MAX so far)"
                           : "rows not kept (above their windows' MIN so far)",
                    sl_explain_count(a, pr->st->leaf[st->leaf].not_kept));
  return n;
}

/* A stage's node; the stage up to which the nodes run split updating
 * stages says so (sl_staged_plan.spread_top). */
static xnode *stage_node(sl_arena *a, printer *pr, const sl_stage *st) {
  xnode *n = stage_node_of(a, pr, st);
  const sl_staged_plan *sp = pr->p->staged;
  if (sp->updating && sp->join_strategy == SL_JOIN_SHUFFLE && st != sp->top &&
      st == sp->spread_top)
    n->detail = sl_arena_printf(
        a,
        "%s%s[on the nodes: this stage and those below it, each node "
        "over the keys routed to it; the stages above run in this "
        "process over their changes]",
        n->detail ? n->detail : "", n->detail ? " " : "");
  return n;
}

/* A SELECT stage: Project over Filter over its input. */
static xnode *select_node(sl_arena *a, printer *pr, const sl_stage *st) {
  xnode *n = sl_xnode(a, "Project");
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < st->nexprs; i++) {
    const char *e = sl_explain_expr(a, st->exprs[i]);
    if (strcmp(e, st->names[i]) != 0)
      sl_strbuf_printf(&b, "%s%s := %s", i ? ", " : "", st->names[i], e);
    else
      sl_strbuf_printf(&b, "%s%s", i ? ", " : "", e);
  }
  n->detail = sl_arena_printf(a, "[%s]", sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  xnode *below = n;
  if (st->filter) {
    xnode *f = sl_xnode(a, "Filter");
    f->detail = sl_explain_expr(a, st->filter);
    sl_xnode_kid(a, n, f);
    below = f;
  }
  sl_xnode_kid(a, below, stage_node(a, pr, st->input));
  return n;
}

/* The first leaf under st (the runtime names a join's stats by it). */
static int first_leaf(const sl_stage *st) {
  while (st->kind != SL_STAGE_LEAF)
    st = st->input ? st->input : st->left;
  return st->leaf;
}

/* After a run: the most state the join held, per side. */
static void join_state_actuals(sl_arena *a, const printer *pr,
                               const sl_stage *st, xnode *n) {
  int l = first_leaf(st->left), r = first_leaf(st->right);
  for (int i = 0; pr->st && i < pr->st->njoins && i < SL_STATS_JOINS; i++) {
    const sl_join_stats *j = &pr->st->join[i];
    if (j->left_leaf != l || j->right_leaf != r)
      continue;
    for (int k = 0; k < 2; k++) {
      const char *side = k ? "right" : "left";
      sl_xnode_actual(a, n, sl_arena_printf(a, "%s peak rows held", side),
                      sl_explain_count(a, j->peak_rows[k]));
      sl_xnode_actual(a, n, sl_arena_printf(a, "%s peak bytes held", side),
                      sl_explain_count(a, j->peak_bytes[k]));
    }
    return;
  }
}

/* A regular join of updating stages (streams without windows). */
static xnode *updating_join_node(sl_arena *a, printer *pr, const sl_stage *st) {
  bool shuffled = pr->p->staged->join_strategy == SL_JOIN_SHUFFLE;
  xnode *n = sl_xnode(a, "Join");
  n->detail = sl_arena_printf(
      a,
      "%s { regular join: every row of either side is kept under its "
      "join key and probes the other side's rows%s, %s%s%sjoined rows "
      "inserted%s; strategy: %s }",
      st->nkeys > 0 ? sl_arena_printf(a, "[hash on %s = %s]",
                                      list(a, st->nkeys, st->lkeys),
                                      list(a, st->nkeys, st->rkeys))
                    : "[nested loop]",
      st->nbounds ? ""
                  : " (state for both sides for as long as the query "
                    "runs: no condition bounds either side's event time "
                    "from above by a column of the other side's rows)",
      st->residual ? "condition: " : "",
      st->residual ? sl_explain_expr(a, st->residual) : "",
      st->residual ? ", " : "",
      st->retracting ? ", and deleted when a row they joined is taken "
                       "back"
                     : "",
      !shuffled ? "single: in this process, as rows arrive"
      : pr->p->staged->nleaves > 2
          ? sl_arena_printf(
                a,
                "repartition: every row of every leaf goes to the node "
                "its join key's hash names (leaf %d's nodes run the "
                "stages), joined there as it arrives",
                pr->p->staged->local_leaf + 1)
          : sl_arena_printf(
                a,
                "repartition: every row of leaves %d and %d goes to the "
                "node its join key's hash names (leaf %d's nodes run the "
                "stages), joined there as it arrives",
                pr->p->staged->local_leaf + 1, pr->p->staged->bcast_leaf + 1,
                pr->p->staged->local_leaf + 1));
  if (st->nbounds)
    n->detail =
        sl_arena_printf(a, "%s (state: %s; %s)", n->detail,
                        join_side_state(a, st, 0), join_side_state(a, st, 1));
  join_state_actuals(a, pr, st, n);
  sl_xnode_attr(a, n, "strategy", shuffled ? "repartition" : "single");
  sl_xnode_kid(a, n, stage_node(a, pr, st->left));
  sl_xnode_kid(a, n, stage_node(a, pr, st->right));
  return n;
}

/* How a join of windowed inputs runs (sl_staged_plan.join_strategy). */
static void window_join_strategy(sl_strbuf *b, const sl_staged_plan *sp,
                                 int workers) {
  bool bcast = sp->join_strategy == SL_JOIN_BROADCAST;
  bool rep = sp->join_strategy == SL_JOIN_REPARTITION;
  bool late = sp->join_strategy == SL_JOIN_LATE_MERGE ||
              sp->join_strategy == SL_JOIN_LATE_MERGE_ROWS;
  bool shuffle = sp->join_strategy == SL_JOIN_SHUFFLE;
  if (sp->join_strategy == SL_JOIN_LATE_MERGE_ROWS)
    sl_strbuf_printf(b,
                     "strategy: late merge: every node holds its rows of "
                     "leaves %d and %d per window (a set of rows per join "
                     "key) until its watermark passes the first window "
                     "that needs them, then sends each partition's rows "
                     "to the node its join key's hash names (leaf %d's "
                     "nodes run the stages), which concatenates every "
                     "node's and probes",
                     sp->local_leaf + 1, sp->bcast_leaf + 1,
                     sp->local_leaf + 1);
  else if (shuffle)
    sl_strbuf_printf(b,
                     "strategy: repartition: every row of leaves %d and "
                     "%d goes to the node its join key's hash names (leaf "
                     "%d's nodes run the stages), joined there per window "
                     "once both sides have passed it",
                     sp->local_leaf + 1, sp->bcast_leaf + 1,
                     sp->local_leaf + 1);
  else if (bcast)
    sl_strbuf_printf(b,
                     "strategy: broadcast: every row of leaf %d to each "
                     "node, joined there per window with the node's own "
                     "rows of leaf %d once both sides have passed it",
                     sp->bcast_leaf + 1, sp->local_leaf + 1);
  else if (rep)
    sl_strbuf_printf(b,
                     "strategy: repartition: leaf %d's partition leaders "
                     "split its groups by the join key, each row of leaf "
                     "%d goes to the node leading its join key, joined "
                     "there per window once both sides have passed it",
                     sp->local_leaf + 1, sp->bcast_leaf + 1);
  else if (late)
    sl_strbuf_printf(b,
                     "strategy: late merge: leaves %d and %d both split "
                     "their groups by the join key at partition leaders; "
                     "leader p of each finishes partition p of a window "
                     "at its trigger and leaf %d's hands it to leaf %d's "
                     "node p, which probes",
                     sp->local_leaf + 1, sp->bcast_leaf + 1, sp->bcast_leaf + 1,
                     sp->local_leaf + 1);
  else
    sl_strbuf_append(b, "strategy: single: per window in this process, "
                        "once both sides have passed it");
  /* exec/stage_pool.c: wherever a window is joined, its probe side is cut
   * into parts for the process's workers. */
  if (workers > 1)
    sl_strbuf_printf(b,
                     ", its probe side's rows in %d parts on %d threads "
                     "(from %d rows on)",
                     workers, workers, SL_STAGE_PARALLEL_ROWS);
}

static const char *window_join_strategy_name(const sl_staged_plan *sp) {
  switch (sp->join_strategy) {
  case SL_JOIN_BROADCAST:
    return "broadcast";
  case SL_JOIN_REPARTITION:
  case SL_JOIN_SHUFFLE:
    return "repartition";
  case SL_JOIN_LATE_MERGE:
  case SL_JOIN_LATE_MERGE_ROWS:
    return "late-merge";
  default:
    return "single";
  }
}

/* A join per window: of two windowed inputs, or of a stream with one
 * (an interval join). */
static xnode *window_join_node(sl_arena *a, printer *pr, const sl_stage *st) {
  bool interval = st->left->stream || st->right->stream;
  xnode *n = sl_xnode(a, interval ? "IntervalJoin" : "WindowJoin");
  sl_strbuf b = SL_STRBUF_INIT;
  if (st->nkeys > 0)
    sl_strbuf_printf(&b, "[hash on %s = %s]", list(a, st->nkeys, st->lkeys),
                     list(a, st->nkeys, st->rkeys));
  else
    sl_strbuf_append(&b, "[nested loop]");
  sl_strbuf_append(&b, " { ");
  if (interval)
    sl_strbuf_printf(&b,
                     "stream rows with event time in [%s, %s] meet the "
                     "window's rows, ",
                     offset_str(a, st->lo_us), offset_str(a, st->hi_us));
  if (st->residual)
    sl_strbuf_printf(&b, "condition: %s, ", sl_explain_expr(a, st->residual));
  const sl_staged_plan *sp = pr->p->staged;
  window_join_strategy(&b, sp, pr->workers);
  sl_strbuf_append(&b, "; state freed when the window fires }");
  n->detail = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  sl_xnode_attr(a, n, "strategy", window_join_strategy_name(sp));
  sl_xnode_kid(a, n, stage_node(a, pr, st->left));
  sl_xnode_kid(a, n, stage_node(a, pr, st->right));
  return n;
}

/* An aggregate stage (its input is the caller's to add). */
static xnode *aggregate_node(sl_arena *a, const sl_stage *st) {
  xnode *n =
      sl_xnode(a, st->stream ? "GroupAggregate" : "WindowGroupAggregate");
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < st->naggs; i++)
    sl_strbuf_printf(
        &b, "%s%s(%s%s)", i ? ", " : "", st->names[st->ngroups + i],
        st->aggs[i].distinct ? "DISTINCT " : "",
        st->aggs[i].arg ? sl_explain_expr(a, st->aggs[i].arg) : "*");
  n->detail = sl_arena_printf(
      a, "{ keys: [%s], aggs: [%s], %s }", list(a, st->ngroups, st->groups),
      sl_strbuf_cstr(&b),
      !st->stream ? "per window of the rows below"
      : st->retracting
          ? "groups kept for as long as the query runs, updated as rows "
            "arrive; a row taken back is taken out of its group (MIN, "
            "MAX and DISTINCT keep every value with its count)"
          : "groups kept for as long as the query runs, updated as rows "
            "arrive");
  sl_strbuf_free(&b);
  return n;
}

/* A Top-N stage (its input is the caller's to add). */
static xnode *topn_node(sl_arena *a, const sl_stage *st) {
  xnode *n = sl_xnode(a, st->stream ? "TopN" : "WindowTopN");
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < st->norder; i++)
    sl_strbuf_printf(&b, "%s%s%s", i ? ", " : "",
                     sl_explain_expr(a, st->order[i]),
                     st->order_desc[i] ? " DESC" : "");
  n->detail =
      st->stream
          ? sl_arena_printf(
                a,
                "{ ROW_NUMBER() partition: [%s], order: [%s], first %lld "
                "rows of each partition shown (%s)%s; a row entering or "
                "leaving them renumbers those after it: -U/+U per "
                "changed place }",
                list(a, st->npartition, st->partition), sl_strbuf_cstr(&b),
                (long long)st->topn_limit,
                st->topn_limit == 1 ? "deduplication" : "Top-N",
                st->retracting ? ", every row kept as the input takes "
                                 "rows back"
                               : ", only they kept")
      : st->topn_limit >= 0
          ? sl_arena_printf(
                a,
                "{ ROW_NUMBER() partition: [%s], order: [%s], per window; "
                "only the first %lld rows of each partition numbered (the "
                "filter above), each kept in a heap of the best so far }",
                list(a, st->npartition, st->partition), sl_strbuf_cstr(&b),
                (long long)st->topn_limit)
          : sl_arena_printf(
                a, "{ ROW_NUMBER() partition: [%s], order: [%s], per window }",
                list(a, st->npartition, st->partition), sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return n;
}

/* After a run of stages per window: the most bytes one window's
 * evaluation held at stage id (exec/stage_eval.c numbers them in the
 * same pre-order). */
static void window_stage_actuals(sl_arena *a, const printer *pr, int id,
                                 xnode *n) {
  if (!pr->st || pr->p->staged->updating || id >= SL_STATS_STAGES)
    return;
  sl_xnode_actual(a, n, "peak bytes of one window",
                  sl_explain_count(a, pr->st->stage_peak[id]));
}

static xnode *stage_node_of(sl_arena *a, printer *pr, const sl_stage *st) {
  if (st->kind == SL_STAGE_LEAF)
    return leaf_node(a, pr, st);
  int id = pr->next_stage++;
  xnode *n = NULL;
  switch (st->kind) {
  case SL_STAGE_LEAF:
    break;
  case SL_STAGE_SELECT:
    n = select_node(a, pr, st);
    break;
  case SL_STAGE_JOIN:
    n = pr->p->staged->updating ? updating_join_node(a, pr, st)
                                : window_join_node(a, pr, st);
    break;
  case SL_STAGE_AGGREGATE:
    n = aggregate_node(a, st);
    sl_xnode_kid(a, n, stage_node(a, pr, st->input));
    break;
  case SL_STAGE_TOPN:
    n = topn_node(a, st);
    sl_xnode_kid(a, n, stage_node(a, pr, st->input));
    break;
  }
  window_stage_actuals(a, pr, id, n);
  return n;
}

xnode *sl_explain_staged_tree(sl_arena *a, const sl_plan *p, int workers,
                              const sl_query_stats *st) {
  xnode *sink = sl_explain_sink_node(a, p, st);
  xnode *above = sink;
  if (p->limit >= 0 || p->offset > 0) {
    xnode *lim = sl_xnode(a, "Limit");
    lim->detail = sl_arena_printf(a, "%lld rows after skipping %lld",
                                  (long long)p->limit, (long long)p->offset);
    sl_xnode_kid(a, sink, lim);
    above = lim;
  }
  xnode *stages = sl_xnode(a, "Stages");
  stages->detail =
      p->staged->updating
          ? sl_arena_printf(a,
                            "{ %d lea%s, each its own pipeline; updating "
                            "stages over streams: rows go through them as "
                            "they arrive, and none is late }",
                            p->staged->nleaves,
                            p->staged->nleaves == 1 ? "f" : "ves")
      : p->staged->at_once
          ? sl_arena_printf(a,
                            "{ %d leaf, its own pipeline; no stage above "
                            "holds state: rows go out as they arrive, "
                            "each with its window }",
                            p->staged->nleaves)
          : sl_arena_printf(
                a,
                "{ %d lea%s, each its own pipeline; the stages above run "
                "once per window, when every leaf has passed its end }",
                p->staged->nleaves, p->staged->nleaves == 1 ? "f" : "ves");
  if (st) {
    sl_xnode_actual(a, stages, "windows evaluated",
                    sl_explain_count(a, st->stage_windows));
    sl_xnode_actual(a, stages, "late stream rows dropped",
                    sl_explain_count(a, st->stage_late));
    sl_xnode_actual(a, stages, "peak bytes of leaf rows held",
                    sl_explain_count(a, st->stage_state_peak));
    if (!p->staged->updating) {
      /* exec/stage_jit.c: the stages' expressions, compiled or not */
      sl_xnode_actual(a, stages, "stage rows compiled",
                      sl_explain_count(a, st->stage_rows_compiled));
      sl_xnode_actual(a, stages, "stage rows interpreted",
                      sl_explain_count(a, st->stage_rows_interpreted));
      if (st->stage_jit_status[0])
        sl_xnode_actual(a, stages, "stages interpreted because",
                        st->stage_jit_status);
    }
    sl_xnode_actual(a, stages, "leaf records dropped as late",
                    sl_explain_count(a, st->late_dropped));
    if (st->late_written)
      sl_xnode_actual(a, stages, "leaf late records written",
                      sl_explain_count(a, st->late_written));
    /* Each leaf reads its own copy of its stream: the bytes of all. */
    if (st->input_bytes)
      sl_xnode_actual(a, stages, "leaf input bytes",
                      sl_explain_count(a, st->input_bytes));
    if (p->staged->updating) {
      sl_xnode_actual(a, stages, "join rows dropped by time bounds",
                      sl_explain_count(a, st->state_evicted));
      sl_xnode_actual(a, stages, "join rows held at the end",
                      sl_explain_count(a, st->state_rows_end));
    }
  }
  sl_xnode_kid(a, above, stages);
  printer pr = {
      p, workers,
      SL_ANEW_N(a, bool, p->staged->nleaves > 0 ? p->staged->nleaves : 1), st,
      0};
  sl_xnode_kid(a, stages, stage_node(a, &pr, p->staged->top));
  if (p->changelog)
    sl_explain_mark_changelog_staged(a, sink);
  return sink;
}
