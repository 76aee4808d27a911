/* choose_strategy.c - how a plan's stateful operator is spread over
 * workers: SET 'sluice.strategy' forces one, 'auto' asks the cost model
 * with statistics sampled from the sources.
 *
 * What 'auto' samples:
 *   - group keys over the stream alone: the stream, for its event rate and
 *     the keys' distinct counts and heavy hitters;
 *   - group keys from a lookup join's bounded table (YSB's campaign_id):
 *     the stream for the rate and the join key's skew, and the table for
 *     how many distinct group keys exist at all; the join can produce no
 *     more groups than that (a cap on the stream's growth curve).
 * Keys mixing columns of both inputs are not sampled (late merge, and
 * EXPLAIN says why).
 */
#include <string.h>

#include "sluice/common/cancel.h"
#include "sluice/common/strbuf.h"
#include "sluice/planner/cost_model.h"

/* A copy of e whose columns index `shift` places lower (an expression over
 * the base row -> over the lookup table's own columns). */
static sl_bexpr *shifted(sl_arena *a, const sl_bexpr *e, int shift) {
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0)
    c->index -= shift;
  if (e->nargs) {
    c->args = SL_ANEW_N(a, sl_bexpr *, e->nargs);
    for (int i = 0; i < e->nargs; i++)
      c->args[i] = shifted(a, e->args[i], shift);
  }
  return c;
}

/* Which inputs e reads: bit 0 the stream, bit 1 the lookup table. */
static unsigned inputs_of(const sl_plan *p, const sl_bexpr *e) {
  if (!e)
    return 0;
  unsigned m = 0;
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0) {
    int j = sl_plan_input_of(p, e->index);
    if (j >= 0)
      m |= 1u << j;
  }
  for (int i = 0; i < e->nargs; i++)
    m |= inputs_of(p, e->args[i]);
  return m;
}

static void auto_strategy(sl_plan *plan, const sl_strategy_inputs *ctx,
                          sl_arena *arena, const char **why) {
  int workers =
      (int)sl_settings_get_int(ctx->settings, "parallelism.default", 1);
  int nodes = ctx->nodes < 1 ? 1 : ctx->nodes;
  if (workers < 1)
    workers = 1;
  if (workers * nodes <= 1) {
    *why = "one worker: nothing to distribute";
    return;
  }
  const sl_plan_input *in = &plan->inputs[0];
  sl_stats_options opt;
  memset(&opt, 0, sizeof opt);
  opt.filter = plan->filter;
  const sl_bexpr *rowtime =
      plan->windowed && !plan->window.proctime ? plan->window.time : NULL;
  /* The group key, and for DISTINCT aggregates the key with the values. */
  int nk = plan->nkeys, np = nk;
  if (nk == 0) {
    *why = "no group key to partition on: late merge";
    return;
  }
  unsigned from = 0;
  const sl_bexpr **pk =
      SL_ANEW_N(arena, const sl_bexpr *, nk + plan->naggs + 1);
  for (int i = 0; i < nk; i++) {
    pk[i] = plan->keys[i];
    from |= inputs_of(plan, plan->keys[i]);
  }
  for (int i = 0; i < plan->naggs; i++)
    if (plan->aggs[i].distinct && plan->aggs[i].arg) {
      pk[np++] = plan->aggs[i].arg;
      from |= inputs_of(plan, plan->aggs[i].arg);
    }
  bool table_keys = plan->join && (from & 2u);
  if (table_keys && (from & 1u || np > nk)) {
    *why = "the group key mixes the stream's and the joined table's "
           "columns, which are not sampled together yet: late merge";
    return;
  }
  const sl_table_stats *st = NULL, *pst = NULL, *tst = NULL;
  bool hit;
  sl_error err = {0};
  int rc = SL_OK;
  if (!table_keys) {
    rc = sl_stats_cache_sample(ctx->stats, in->table, nk, pk, rowtime, &opt,
                               &st, &hit, &err);
    if (rc == SL_OK && np > nk)
      rc = sl_stats_cache_sample(ctx->stats, in->table, np, pk, rowtime, &opt,
                                 &pst, &hit, &err);
  } else {
    /* The stream on its join key; the table on the group key. */
    rc = sl_stats_cache_sample(ctx->stats, in->table, plan->njoin_keys,
                               (const sl_bexpr *const *)plan->join_stream_keys,
                               rowtime, &opt, &st, &hit, &err);
    const sl_plan_input *tin = &plan->inputs[1];
    const sl_bexpr **tk = SL_ANEW_N(arena, const sl_bexpr *, nk);
    for (int i = 0; i < nk; i++)
      tk[i] = shifted(arena, plan->keys[i], tin->first_column);
    sl_stats_options topt;
    memset(&topt, 0, sizeof topt);
    if (rc == SL_OK)
      rc = sl_stats_cache_sample(ctx->stats, tin->table, nk, tk, NULL, &topt,
                                 &tst, &hit, &err);
  }
  if (rc != SL_OK) {
    *why = sl_arena_printf(arena, "statistics unavailable (%s): late merge",
                           err.message ? err.message : "?");
    sl_error_clear(&err);
    return;
  }
  /* 'cached': the machine's calibration file (measured once per
   * machine); 'fresh': measured again by this session, and saved. */
  const char *cal = sl_settings_get(ctx->settings, "sluice.calibration");
  bool fresh = cal && strcmp(cal, "fresh") == 0;
  if (!ctx->costs->calibrated || (fresh && !*ctx->costs_fresh)) {
    sl_cost_calibrate_cached(ctx->costs, fresh);
    *ctx->costs_fresh = fresh;
  }
  const sl_key_stats *groups =
      st ? (st->nkeys == 1 ? &st->keys[0] : st->combined) : NULL;
  const sl_key_stats *pairs =
      pst ? (np == 1 ? &pst->keys[0] : pst->combined) : NULL;
  sl_key_stats capped;
  if (tst && groups) {
    /* The join maps the stream's join keys onto at most this many group
     * keys: the join key's growth curve, capped. */
    const sl_key_stats *t = nk == 1 ? &tst->keys[0] : tst->combined;
    capped = *groups;
    capped.max_distinct = t->distinct + (t->nulls > 0 ? 1 : 0);
    groups = &capped;
  }
  sl_strategy_choice c;
  /* Late merge across nodes: at partition leaders unless asked for at
   * the coordinator (sluice.late-merge). */
  sl_cost_choose(
      plan, st ? st : pst, groups, pairs, workers, nodes,
      sl_settings_is(ctx->settings, "sluice.late-merge", "coordinator"),
      ctx->costs, &c);
  plan->strategy = c.strategy;
  plan->expected_groups = c.table_groups >= 1 && c.table_groups < 1e9
                              ? (uint32_t)c.table_groups
                              : 0;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_cost_format(&b, &c, ctx->costs);
  sl_strbuf_printf(&b, "; sample: %llu records of %s",
                   (unsigned long long)(st ? st : pst)->records,
                   in->table->name);
  if (tst)
    sl_strbuf_printf(&b,
                     " (join key) and %llu of %s, with %.0f distinct group "
                     "keys",
                     (unsigned long long)tst->records,
                     plan->inputs[1].table->name, capped.max_distinct);
  *why = sl_arena_strdup(arena, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
}

int sl_plan_choose_strategy(sl_plan *plan, const sl_strategy_inputs *in,
                            sl_arena *arena, const char **why, sl_error *err) {
  const char *want = sl_settings_get(in->settings, "sluice.strategy");
  plan->strategy = SL_STRATEGY_LATE_MERGE;
  plan->buffer_size =
      (uint32_t)sl_settings_get_int(in->settings, "sluice.buffer-size", 0);
  *why = NULL;
  if (plan->kind != SL_PLAN_AGGREGATE)
    return SL_OK;
  bool join_broadcast = in->staged_leaf && want && !strcmp(want, "broadcast");
  if (!want || strcmp(want, "auto") == 0 || join_broadcast) {
    auto_strategy(plan, in, arena, why);
    /* 'broadcast' is how the stages' join meets (choose_join.c); a leaf's
     * aggregate has no broadcast, so its own strategy is chosen as for
     * 'auto' -- said here, not silently. */
    if (join_broadcast)
      *why = sl_arena_printf(
          arena,
          "auto, since 'sluice.strategy' = 'broadcast' applies to the "
          "stages' join, not to a leaf's aggregate%s%s",
          *why ? ": " : "", *why ? *why : "");
    /* sampling and calibration stop early on Ctrl-C and .timeout */
    return sl_cancel_current_pending()
               ? sl_error_set(err, SL_ECANCELLED, "query cancelled")
               : SL_OK;
  }
  if (strcmp(want, "late-merge") == 0) {
    *why = "forced by SET 'sluice.strategy'";
    return SL_OK;
  }
  if (strcmp(want, "repartition") == 0) {
    plan->strategy = SL_STRATEGY_REPARTITION;
    *why = "forced by SET 'sluice.strategy'";
    return SL_OK;
  }
  return sl_error_set(err, SL_EUNSUPPORTED,
                      "not supported yet: SET 'sluice.strategy' = '%s' for "
                      "an aggregate (use 'auto', 'late-merge' or "
                      "'repartition')",
                      want);
}
