/* choose_join.c - how a staged plan's join meets when its leaves run on
 * several nodes (plan.h, sl_join_strategy).
 *
 *   single       every leaf's rows go to the coordinator, which runs the
 *                stages: the bytes moved are both sides' rows;
 *   broadcast    the stages run on the nodes of the larger side's leaf,
 *                each over its own share of that leaf's rows (they never
 *                move), and the smaller side's rows go to every one of
 *                them: nodes x the smaller side's bytes;
 *   repartition  one side is a windowed aggregate grouped by the join key:
 *                its partition leaders split its groups by that key and
 *                run the stages, and each row of the other side goes to
 *                the node leading its key: the other side's bytes;
 *                When no side is such an aggregate, repartition moves
 *                both (SL_JOIN_SHUFFLE): the stages run on the larger
 *                side's nodes, and every row of either side goes to the
 *                node its join key's hash names (a row of the larger side
 *                stays where it is one time in nodes): the smaller side's
 *                bytes and (nodes - 1) / nodes of the larger's;
 *   late merge   both sides are such aggregates: both are split by the
 *                join key at their partition leaders, so leader p of each
 *                finishes the same keys and nothing moves for the join
 *                beyond the partial state late merge moves anyway.  Both
 *                sides routed by the join key (SL_JOIN_LATE_MERGE_ROWS):
 *                the repartition of both, but each node holds its rows
 *                until the first window that needs them fires (a window
 *                TVF row: its first window; an interval join's stream row:
 *                the first window whose interval reaches it) and then
 *                sends each partition's rows at once: the same bytes,
 *                moved at the trigger instead of as they come ('auto'
 *                keeps the repartition: it moves them no later).
 *
 * Updating stages (no windows; choose_updating) run on the nodes only as
 * SL_JOIN_SHUFFLE, when one key partitions them, or the lower part of
 * their chain (sl_staged_plan.spread_top; the rest runs here over that part's
 * changes): one join of two streams, or joins of more streams that one
 * key joins (q23: every stream routed by its column holding that key),
 * with Top-N partitions and groups above it that include the join key,
 * or, forced by 'repartition',
 * stages over one stream whose Top-N partitions and groups share some of
 * its columns (that stream's nodes route its rows by them to each
 * other); otherwise single.
 *
 * 'auto' estimates each side's rows per window from the sampled
 * statistics of its leaf's source (the cost model's sampler): a stream
 * leaf's rows are its filtered event rate times the window's length; an
 * aggregate leaf's are its groups per window (one without a group key has
 * one row).  Bytes are rows times the leaf's row width, and the strategy
 * moving the fewest is chosen.
 */
#include <string.h>

#include "sluice/planner/cost_model.h"
#include "sluice/row/row.h"
#include "stage_int.h"

/* A leaf's estimated rows per window; < 0 when it cannot be estimated
 * (*why says why). */
static double leaf_rows(const sl_plan *leaf, const sl_strategy_inputs *ctx,
                        double window_s, const char **why) {
  if (leaf->ninputs != 1) {
    *why = "a side with a lookup join is not sampled";
    return -1;
  }
  bool agg = leaf->kind == SL_PLAN_AGGREGATE;
  if (agg && leaf->nkeys == 0)
    return 1; /* one row per window */
  const sl_bexpr *rowtime = agg && leaf->windowed && !leaf->window.proctime
                                ? leaf->window.time
                                : leaf->rowtime;
  sl_stats_options opt;
  memset(&opt, 0, sizeof opt);
  opt.filter = leaf->filter;
  const sl_table_stats *st = NULL;
  bool hit;
  sl_error err = {0};
  int rc = sl_stats_cache_sample(
      ctx->stats, leaf->inputs[0].table, agg ? leaf->nkeys : 0,
      agg ? (const sl_bexpr *const *)leaf->keys : NULL, rowtime, &opt, &st,
      &hit, &err);
  sl_error_clear(&err);
  if (rc != SL_OK || !st->has_event_rate || st->event_rate <= 0) {
    *why = "no event rate sampled";
    return -1;
  }
  double records = st->event_rate * window_s;
  if (!agg)
    return records;
  const sl_key_stats *k = st->nkeys == 1 ? &st->keys[0] : st->combined;
  return k ? sl_key_stats_distinct_for(k, records) : records;
}

static double leaf_width(sl_arena *a, const sl_plan *leaf) {
  const sl_row_layout *l =
      sl_row_layout_new(a, leaf->nout, leaf->out_names, leaf->out_types);
  return l->width;
}

static void human_bytes(sl_strbuf *b, double v) {
  if (v >= 1 << 20)
    sl_strbuf_printf(b, "%.1f MiB", v / (1 << 20));
  else if (v >= 1 << 10)
    sl_strbuf_printf(b, "%.1f KiB", v / (1 << 10));
  else
    sl_strbuf_printf(b, "%.0f bytes", v);
}

/* Updating stages spread over the nodes when they are one join of two
 * streams, or joins of more that one key joins (q23), with, above it,
 * only Top-N partitions and groups that include the join key: every leaf
 * is routed by the join key (SL_JOIN_SHUFFLE)
 * and each node runs the stages over its keys, whose changes are its
 * own.  Otherwise (or forced 'single') they run in this process.  Rows
 * move as often either way (to the node of their key, or here); spread,
 * the stages' work and state are split between the nodes. */
static int choose_updating(sl_staged_plan *sp, const sl_strategy_inputs *in,
                           const char *want, sl_arena *arena) {
  /* Placed when the plan was built (stage_placement.c). */
  int nroute = sp->nleaves == 1 ? sp->key_nroute[0] : 0;
  const int *stream_route = sp->nleaves == 1 ? sp->key_route[0] : NULL;
  bool one = nroute > 0;
  const sl_stage *split = sp->spread_top;
  const sl_stage *join = sp->nleaves >= 2 ? sp->join_stage : NULL;
  /* Joins: every leaf routed by the join key (two streams, or more that
   * one key joins, q23's). */
  bool spread = one || join;
  for (int i = 0; i < sp->nleaves && spread && !one; i++)
    spread = sp->key_nroute[i] > 0;
  if (!spread) {
    sp->join_why = "updating stages (joins, aggregates and ROW_NUMBER "
                   "over streams without windows) run in this process, "
                   "every leaf's rows coming here as they arrive: they "
                   "spread over the nodes only when one key partitions "
                   "their lower part: one stream, or joins of streams "
                   "on plain columns that one key joins, under Top-N "
                   "partitions and groups that all include that key";
    return SL_OK;
  }
  if (strcmp(want, "auto") && strcmp(want, "repartition")) {
    sp->join_why = sl_arena_printf(
        arena,
        "forced '%s': single (updating stages run in this process or "
        "repartitioned by the join key)",
        want);
    return SL_OK;
  }
  /* Over one stream every row would cross two connections (to the node
   * of its key, then its changes here) for stages whose work per row is
   * small: measured, q18 and q19 ran at 0.55 and 0.8 times the speed of
   * 'single' on 2 nodes.  A join's state and probing are worth
   * spreading (q9 1.5 times). */
  if (one && !strcmp(want, "auto")) {
    sp->join_why = "updating stages over one stream run in this process: "
                   "spread by key, each row would cross two connections "
                   "(to the node of its key, then its changes here) for "
                   "little work per row (SET 'sluice.join-strategy' = "
                   "'repartition' spreads them)";
    return SL_OK;
  }
  /* Joins of more than two streams whose joined rows all go to the shell
   * (q23): spread, each joined row, as wide as its streams' rows
   * together, would cross a second connection, from its node to here.
   * Measured on 2 nodes, q23 ran at 0.68 times the speed of 'single';
   * with an aggregate above the join on the nodes (counts per bidder)
   * spreading was 1.13 times faster. */
  if (!one && sp->nleaves > 2 && !strcmp(want, "auto")) {
    bool reduces = false;
    for (const sl_stage *st = split; st && st != join; st = st->input)
      reduces |= st->kind == SL_STAGE_AGGREGATE || st->kind == SL_STAGE_TOPN;
    if (!reduces) {
      sp->join_why =
          "updating stages over a join of more than two streams whose "
          "joined rows all come here run in this process: spread by the "
          "key, each joined row (as wide as its streams' rows together) "
          "would cross a second connection, from its node to here (SET "
          "'sluice.join-strategy' = 'repartition' spreads them; an "
          "aggregate or Top-N over the join is spread)";
      return SL_OK;
    }
  }
  const char *what;
  if (one) {
    sl_strbuf cols = SL_STRBUF_INIT;
    for (int i = 0; i < nroute; i++)
      sl_strbuf_printf(&cols, "%s%s", i ? ", " : "",
                       sp->leaves[0]->out_names[stream_route[i]]);
    what = sl_arena_printf(
        arena,
        "over one stream whose Top-N partitions and groups all include "
        "[%s]: repartition, its rows routed by the hash of those",
        sl_strbuf_cstr(&cols));
    sl_strbuf_free(&cols);
    sp->local_leaf = 0;
    sp->bcast_leaf = -1;
  } else {
    /* The largest leaf's rows stay on their node one time in nodes; the
     * others (the sides) run on clusters of their own. */
    const char *why = NULL;
    double best = -1;
    sp->local_leaf = 0;
    for (int i = 0; i < sp->nleaves; i++) {
      double rows = leaf_rows(sp->leaves[i], in, 1, &why);
      double bytes = rows < 0 ? -1 : rows * leaf_width(arena, sp->leaves[i]);
      if (bytes > best) {
        best = bytes;
        sp->local_leaf = i;
      }
      sp->leaves[i]->npartition_keys = 0;
    }
    sp->bcast_leaf = sp->local_leaf == 0 ? 1 : 0;
    what = sp->nleaves == 2
               ? "over one join whose Top-N partitions and groups include "
                 "the join key: repartition of both sides"
               : "over joins of streams that one key joins, whose Top-N "
                 "partitions and groups include it: repartition of every "
                 "stream";
  }
  sp->leaves[sp->local_leaf]->npartition_keys = 0;
  sp->nroute = 0;
  sp->join_strategy = SL_JOIN_SHUFFLE;
  sp->join_why = sl_arena_printf(
      arena,
      "%supdating stages %s, each node running the stages%s over the keys "
      "whose hash names it and sending their changes here%s",
      strcmp(want, "auto") ? "forced: " : "", what,
      split == sp->top ? "" : " up to the highest that key partitions",
      split == sp->top ? ""
                       : ", where the stages above it (a global Top-N, or "
                         "an aggregate by other keys) run over them");
  return SL_OK;
}

/* 'sluice.strategy' = 'broadcast' asks only for this (a leaf's aggregate
 * has no broadcast, choose_strategy.c): where the join cannot honour it,
 * it is refused, never run as something else. */
static int check_broadcast_asked(const char *want, int nodes, sl_error *err) {
  if (want && strcmp(want, "auto") && strcmp(want, "broadcast"))
    return sl_error_set(
        err, SL_EUNSUPPORTED,
        "SET 'sluice.strategy' = 'broadcast' asks a multi-stage join to "
        "send its smaller side to every node, but SET "
        "'sluice.join-strategy' = '%s' asks for another: set one of them "
        "('sluice.join-strategy' = 'broadcast', or 'sluice.strategy' = "
        "'auto')",
        want);
  if (nodes <= 1)
    return sl_error_set(
        err, SL_EUNSUPPORTED,
        "SET 'sluice.strategy' = 'broadcast' sends the smaller side of a "
        "multi-stage join to every node, but this query runs on one "
        "(sluice.nodes = 1): SET 'sluice.nodes' to 2 or more, or use "
        "'auto', 'late-merge' or 'repartition'");
  return SL_OK;
}

/* Why the join of leaves l and r can only run in this process, or NULL. */
static const char *join_stays_here(const sl_staged_plan *sp,
                                   const sl_strategy_inputs *in, int l, int r) {
  if (sl_plan_sessions_on_one_process(sp->leaves[l]) ||
      sl_plan_sessions_on_one_process(sp->leaves[r]))
    return "broadcast and repartition need both leaves on the "
           "nodes, and session windows under late merge run on "
           "this process only (SET 'sluice.strategy' = "
           "'repartition' runs them on the nodes)";
  if (sl_settings_is(in->settings, "sluice.late-merge", "coordinator"))
    return "broadcast and repartition need every leaf's rows "
           "finished on the nodes (SET 'sluice.late-merge' = "
           "'coordinator' merges them here)";
  return NULL;
}

/* The two sides of a join per window: their estimated sizes, and which
 * can stay where their partition leaders finish them. */
typedef struct join_sides {
  double window_s; /* the rows' span: a window, or a session's gap */
  bool known;      /* both sizes estimated */
  const char *why_unknown;
  int small, large;      /* the leaves */
  double sb, lb, sr, lr; /* bytes and rows of each per window */
  int keep;              /* the leaf a repartition keeps in place, or -1 */
  bool both;             /* both co-partitionable: late merge possible */
  bool shuffle;          /* neither can stay: both routed by the key */
  double rep_bytes;      /* what a repartition moves */
} join_sides;

static void estimate_sides(sl_staged_plan *sp, const sl_strategy_inputs *in,
                           int l, int r, int nodes, sl_arena *arena,
                           join_sides *j) {
  /* A session lasts at least its gap: rows per window are per gap. */
  j->window_s =
      (double)(sp->window.kind == SL_WINDOW_SESSION ? sp->window.gap_us
                                                    : sp->window.size_us) /
      1e6;
  if (j->window_s <= 0)
    j->window_s = 1;
  const char *why_l = NULL, *why_r = NULL;
  double rows_l = leaf_rows(sp->leaves[l], in, j->window_s, &why_l);
  double rows_r = leaf_rows(sp->leaves[r], in, j->window_s, &why_r);
  double bytes_l = rows_l * leaf_width(arena, sp->leaves[l]);
  double bytes_r = rows_r * leaf_width(arena, sp->leaves[r]);
  j->known = rows_l >= 0 && rows_r >= 0;
  j->why_unknown = why_l ? why_l : why_r;
  /* The smaller side is broadcast; unknown sizes: the aggregate side, or
   * the right one. */
  bool right_small = j->known ? bytes_r <= bytes_l
                              : !(sp->leaves[l]->kind == SL_PLAN_AGGREGATE &&
                                  sp->leaves[r]->kind != SL_PLAN_AGGREGATE);
  j->small = right_small ? r : l;
  j->large = right_small ? l : r;
  j->sb = right_small ? bytes_r : bytes_l;
  j->lb = right_small ? bytes_l : bytes_r;
  j->sr = right_small ? rows_r : rows_l;
  j->lr = right_small ? rows_l : rows_r;
  /* Repartition keeps a co-partitionable side where its leaders finish it
   * (the larger one if both can be) and routes the other's rows; late
   * merge needs both to be. */
  bool large_ok = sl_stg_copartition(arena, sp, j->large);
  bool small_ok = sl_stg_copartition(arena, sp, j->small);
  j->keep = large_ok ? j->large : small_ok ? j->small : -1;
  j->both = large_ok && small_ok;
  /* Neither can stay: both sides routed by the key (SHUFFLE). */
  j->shuffle =
      j->keep < 0 && sp->key_nroute[j->large] && sp->key_nroute[j->small];
  j->rep_bytes = j->keep == j->large   ? j->sb
                 : j->keep == j->small ? j->lb
                                       : j->sb + j->lb * (nodes - 1) / nodes;
}

/* What each strategy would move, and what rules some out, for EXPLAIN. */
static void describe_sides(sl_strbuf *b, const sl_staged_plan *sp,
                           const join_sides *j, int nodes) {
  if (j->known) {
    sl_strbuf_printf(
        b, "estimates per %g s %s: leaf %d %.0f rows (", j->window_s,
        sp->window.kind == SL_WINDOW_SESSION ? "(the session gap)" : "window",
        j->small + 1, j->sr);
    human_bytes(b, j->sb);
    sl_strbuf_printf(b, "), leaf %d %.0f rows (", j->large + 1, j->lr);
    human_bytes(b, j->lb);
    sl_strbuf_printf(b, "); single moves ");
    human_bytes(b, j->sb + j->lb);
    sl_strbuf_printf(b, ", broadcast %d x ", nodes);
    human_bytes(b, j->sb);
    if (j->keep >= 0 || j->shuffle) {
      sl_strbuf_append(b, ", repartition ");
      human_bytes(b, j->rep_bytes);
      if (j->shuffle)
        sl_strbuf_append(b, " (both sides routed by the join key)");
    }
    if (j->both)
      sl_strbuf_append(b, ", late merge none (both sides finish each join "
                          "key's partition at the same node)");
    if (j->shuffle) /* late merge of rows: routed alike, at the trigger */
      sl_strbuf_append(b, ", late merge the same as the repartition, "
                          "each window's at its trigger");
  } else
    sl_strbuf_printf(b, "no estimates (%s)", j->why_unknown);
  if (j->keep < 0 && !j->shuffle)
    sl_strbuf_append(b, "; repartition needs join keys that are columns "
                        "of both sides of the same types, late merge both "
                        "sides to be windowed aggregates grouped by them");
  else if (j->keep >= 0 && !j->both)
    sl_strbuf_append(b, "; late merge needs both sides to be windowed "
                        "aggregates grouped by the join key");
}

/* The strategy asked for (want), or under 'auto' the one that moves the
 * least; SINGLE where the one asked for cannot run. */
static sl_join_strategy pick_join(const char *want, const join_sides *j,
                                  int nodes) {
  sl_join_strategy choice = SL_JOIN_SINGLE;
  if (!strcmp(want, "broadcast"))
    choice = SL_JOIN_BROADCAST;
  else if (!strcmp(want, "repartition"))
    choice = j->keep >= 0 ? SL_JOIN_REPARTITION
             : j->shuffle ? SL_JOIN_SHUFFLE
                          : SL_JOIN_SINGLE;
  else if (!strcmp(want, "late-merge"))
    choice = j->both      ? SL_JOIN_LATE_MERGE
             : j->shuffle ? SL_JOIN_LATE_MERGE_ROWS
                          : SL_JOIN_SINGLE;
  else if (j->known) {
    double best = j->sb + j->lb;
    if (nodes * j->sb < best) {
      best = nodes * j->sb;
      choice = SL_JOIN_BROADCAST;
    }
    if ((j->keep >= 0 || j->shuffle) && j->rep_bytes < best)
      choice = j->keep >= 0 ? SL_JOIN_REPARTITION : SL_JOIN_SHUFFLE;
    if (j->both)
      choice = SL_JOIN_LATE_MERGE;
  }
  return choice;
}

/* The leaves' roles and strategies under the chosen join strategy. */
static void place_join(sl_staged_plan *sp, sl_join_strategy choice,
                       const join_sides *j, int l, int r, sl_arena *arena) {
  int keep = j->keep;
  if (choice == SL_JOIN_BROADCAST || sl_join_routes_both(choice)) {
    sp->local_leaf = j->large;
    sp->bcast_leaf = j->small;
  } else if (choice == SL_JOIN_REPARTITION || choice == SL_JOIN_LATE_MERGE) {
    sp->local_leaf = keep;
    sp->bcast_leaf = keep == j->large ? j->small : j->large;
    /* The side's route (its join key columns) comes from the kept leaf's
     * check; under late merge the side is split by the key too. */
    sl_stg_copartition(arena, sp, sp->bcast_leaf);
    sl_stg_copartition(arena, sp, keep);
    if (choice == SL_JOIN_REPARTITION)
      sp->leaves[sp->bcast_leaf]->npartition_keys = 0;
    else
      sp->leaves[sp->bcast_leaf]->strategy = SL_STRATEGY_LATE_MERGE;
    /* Its partition leaders keep the groups: late merge at leaders. */
    sp->leaves[keep]->strategy = SL_STRATEGY_LATE_MERGE;
  }
  if (choice != SL_JOIN_REPARTITION && choice != SL_JOIN_LATE_MERGE) {
    sp->leaves[l]->npartition_keys = 0;
    sp->leaves[r]->npartition_keys = 0;
    sp->nroute = 0;
  }
  sp->join_strategy = choice;
}

int sl_plan_choose_join(sl_plan *plan, const sl_strategy_inputs *in, int nodes,
                        sl_arena *arena, sl_error *err) {
  sl_staged_plan *sp = plan->staged;
  sp->join_strategy = SL_JOIN_SINGLE;
  sp->local_leaf = sp->bcast_leaf = -1;
  sp->nroute = 0;
  sp->join_why = NULL;
  const char *want = sl_settings_get(in->settings, "sluice.join-strategy");
  const char *strategy = sl_settings_get(in->settings, "sluice.strategy");
  bool bcast = strategy && !strcmp(strategy, "broadcast");
  if (bcast) {
    int rc = check_broadcast_asked(want, nodes, err);
    if (rc != SL_OK)
      return rc;
  }
  if (nodes <= 1)
    return SL_OK;
  if (!want || !strcmp(want, "auto"))
    want = bcast ? "broadcast" : "auto";
  if (!strcmp(want, "single")) {
    sp->join_why = "forced by SET 'sluice.join-strategy'";
    return SL_OK;
  }
  if (sp->updating)
    return choose_updating(sp, in, want, arena);
  int l = sp->join_left, r = sp->join_right;
  if (l < 0) {
    sp->join_why = "broadcast and repartition need the stages to be one "
                   "join of two leaves (with projections and filters above "
                   "it)";
    return SL_OK;
  }
  sp->join_why = join_stays_here(sp, in, l, r);
  if (sp->join_why)
    return SL_OK;
  join_sides j;
  estimate_sides(sp, in, l, r, nodes, arena, &j);
  sl_strbuf b = SL_STRBUF_INIT;
  describe_sides(&b, sp, &j, nodes);
  bool forced = strcmp(want, "auto") != 0;
  sl_join_strategy choice = pick_join(want, &j, nodes);
  place_join(sp, choice, &j, l, r, arena);
  static const char *const names[] = {"single",
                                      "broadcast",
                                      "repartition",
                                      "late merge",
                                      "repartition of both sides",
                                      "late merge of rows"};
  sp->join_why = sl_arena_printf(
      arena, "%s%s: %s", forced ? "forced: " : "", sl_strbuf_cstr(&b),
      choice == SL_JOIN_SINGLE && forced && strcmp(want, "single")
          ? "single (the forced strategy cannot run this join)"
          : names[choice]);
  sl_strbuf_free(&b);
  return SL_OK;
}
