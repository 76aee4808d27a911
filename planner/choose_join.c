/* choose_join.c - how a staged plan's join meets when its leaves run on
 * several nodes (plan.h, sl_join_strategy).
 *
 *   single     every leaf's rows go to the coordinator, which runs the
 *              stages: the bytes moved are both sides' rows;
 *   broadcast  the stages run on the nodes of the larger side's leaf, each
 *              over its own share of that leaf's rows (they never move),
 *              and the smaller side's rows go once to each node (through
 *              the coordinator): nodes x the smaller side's bytes.
 *
 * 'auto' estimates each side's rows per window from the sampled
 * statistics of its leaf's source (the cost model's sampler): a stream
 * leaf's rows are its filtered event rate times the window's length; an
 * aggregate leaf's are its groups per window (one without a group key has
 * one row).  Bytes are rows times the leaf's row width.  Broadcast is
 * chosen when nodes x small < large, i.e. when it moves fewer bytes than
 * sending the larger side to the coordinator.
 */
#include <string.h>

#include "sluice/cost_model.h"
#include "sluice/row.h"

bool sl_staged_join_leaves(const sl_staged_plan *sp, int *left, int *right) {
  const sl_stage *st = sp->top;
  while (st && st->kind == SL_STAGE_SELECT)
    st = st->input;
  if (!st || st->kind != SL_STAGE_JOIN || sp->nleaves != 2)
    return false;
  if (st->left->kind != SL_STAGE_LEAF || st->right->kind != SL_STAGE_LEAF ||
      st->left->leaf == st->right->leaf)
    return false;
  *left = st->left->leaf;
  *right = st->right->leaf;
  return true;
}

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

int sl_plan_choose_join(sl_plan *plan, const sl_strategy_inputs *in, int nodes,
                        sl_arena *arena, sl_error *err) {
  (void)err;
  sl_staged_plan *sp = plan->staged;
  sp->join_strategy = SL_JOIN_SINGLE;
  sp->local_leaf = sp->bcast_leaf = -1;
  sp->join_why = NULL;
  if (nodes <= 1)
    return SL_OK;
  const char *want = sl_settings_get(in->settings, "sluice.join-strategy");
  const char *strategy = sl_settings_get(in->settings, "sluice.strategy");
  bool forced = (want && !strcmp(want, "broadcast")) ||
                (strategy && !strcmp(strategy, "broadcast"));
  if (want && !strcmp(want, "single")) {
    sp->join_why = "forced by SET 'sluice.join-strategy'";
    return SL_OK;
  }
  int l, r;
  if (!sl_staged_join_leaves(sp, &l, &r)) {
    sp->join_why = "broadcast needs the stages to be one join of two leaves "
                   "(with projections and filters above it)";
    return SL_OK;
  }
  const char *late = sl_settings_get(in->settings, "sluice.late-merge");
  if (late && !strcmp(late, "coordinator")) {
    sp->join_why = "broadcast needs every leaf's rows finished on the nodes "
                   "(SET 'sluice.late-merge' = 'coordinator' merges them "
                   "here)";
    return SL_OK;
  }
  double window_s = (double)sp->window.size_us / 1e6;
  if (window_s <= 0)
    window_s = 1;
  const char *why_l = NULL, *why_r = NULL;
  double rows_l = leaf_rows(sp->leaves[l], in, window_s, &why_l);
  double rows_r = leaf_rows(sp->leaves[r], in, window_s, &why_r);
  double bytes_l = rows_l * leaf_width(arena, sp->leaves[l]);
  double bytes_r = rows_r * leaf_width(arena, sp->leaves[r]);
  bool known = rows_l >= 0 && rows_r >= 0;
  /* The smaller side is broadcast; unknown sizes: the aggregate side, or
   * the right one. */
  bool right_small = known ? bytes_r <= bytes_l
                           : !(sp->leaves[l]->kind == SL_PLAN_AGGREGATE &&
                               sp->leaves[r]->kind != SL_PLAN_AGGREGATE);
  int small = right_small ? r : l, large = right_small ? l : r;
  double sb = right_small ? bytes_r : bytes_l;
  double lb = right_small ? bytes_l : bytes_r;
  double sr = right_small ? rows_r : rows_l;
  double lr = right_small ? rows_l : rows_r;
  sl_strbuf b = SL_STRBUF_INIT;
  if (known) {
    sl_strbuf_printf(&b, "estimates per %g s window: leaf %d %.0f rows (",
                     window_s, small + 1, sr);
    human_bytes(&b, sb);
    sl_strbuf_printf(&b, "), leaf %d %.0f rows (", large + 1, lr);
    human_bytes(&b, lb);
    sl_strbuf_printf(&b, "); broadcast moves %d x ", nodes);
    human_bytes(&b, sb);
    sl_strbuf_append(&b, ", single ");
    human_bytes(&b, sb + lb);
  } else
    sl_strbuf_printf(&b, "no estimates (%s)", why_l ? why_l : why_r);
  bool choose = forced || (known && nodes * sb < lb);
  if (choose) {
    sp->join_strategy = SL_JOIN_BROADCAST;
    sp->local_leaf = large;
    sp->bcast_leaf = small;
  }
  sp->join_why = sl_arena_printf(arena, "%s%s%s", forced ? "forced: " : "",
                                 sl_strbuf_cstr(&b),
                                 forced   ? ""
                                 : choose ? ": broadcast"
                                          : ": single");
  sl_strbuf_free(&b);
  return SL_OK;
}
