/* cost_model.c - choosing between late merge and repartitioning.
 *
 * The cost of one window slice (the unit of state: a tumbling window, a
 * hopping window's slide, a session gap) under each strategy, in seconds of
 * the critical path, from:
 *   W   records per slice = event rate x slice length (statistics),
 *   g   groups one worker sees in a slice = distinct(W / n),
 *   G   groups in a slice = distinct(W)   (HyperLogLog growth curve),
 *   s1  the heaviest key's share (space-saving heavy hitters),
 * and constants measured on this machine by sl_cost_calibrate (group-table
 * updates into a small and a large table, merging, routing a record):
 *
 *   late merge   (W/n) u(g) + (n-1) g m
 *                every worker folds its share; the coordinator merges n
 *                partials of g groups each
 *   repartition  (W/n) r + W max(1/n, s1) u(G/n)
 *                every worker routes its share; the busiest owner folds
 *                its keys; the owners' partials are disjoint, so the
 *                coordinator emits them without merging
 *
 * u(x) is the update cost into a table of x groups (small tables stay in
 * cache, large ones miss), m the merge cost per group, r the routing cost
 * per record.  A DISTINCT aggregate keeps a set per group, so its (key,
 * value) pairs count as groups for merging.  Repartitioning is chosen
 * only when it is cheaper by 5% and by more than a millisecond per slice;
 * the estimates and both costs are shown by EXPLAIN.
 *
 * On N nodes of w workers each, n = N w, and state crosses processes:
 *
 *   late merge   (W/n) u(g) + (w-1) g m + k gN s
 *                each node merges its workers' partials, then sends its
 *                gN = distinct(W/N) groups to the partition leaders once
 *                per window the slice belongs to (k: a hopping window's
 *                size / slide), and as a leader takes as many; at the
 *                coordinator (sluice.late-merge = 'coordinator') one
 *                process takes all N nodes' groups
 *   repartition  the same as above, plus (N-1)/N of each worker's records
 *                copied once more into the channel to another node,
 *                counted as a second routing
 *
 * s is the cost of one group crossing: copied into its window's delta,
 * encoded, decoded and merged into the receiver's table (measured).  In
 * one process a slice's partial is merged once and never encoded, so a
 * plan whose late merge is cheap on one node can be dearer on several:
 * q5's HOP count per auction (5 windows per slice) ran at 0.90 s under
 * late merge at leaders and 0.60 s repartitioned on 2 nodes (the
 * end-to-end cost of a crossing there was about twice s).
 *
 * Finalizing and emitting the G groups costs the same under both and is
 * left out.  Known limit: memory is not modelled yet.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/planner/cost_model.h"
#include "sluice/state/aggregate.h"

static uint64_t rnd(uint64_t *s) {
  *s += 0x9e3779b97f4a7c15ULL;
  return sl_mix64(*s);
}

/* ns per COUNT(*) update into a table of `keys` BIGINT groups. */
static double time_updates(sl_arena *a, uint64_t keys, uint64_t updates,
                           uint64_t seed, sl_group_table *keep) {
  const sl_type *t[1] = {sl_type_new(a, SL_TYPE_BIGINT)};
  sl_row_layout *kl = sl_row_layout_new(a, 1, NULL, t);
  sl_agg_desc d = {.op = SL_AGG_COUNT_STAR,
                   .in_field = -1,
                   .filter_field = -1,
                   .out_type = t[0]};
  sl_agg_set *set = SL_ANEW(a, sl_agg_set);
  sl_error err = {0};
  sl_agg_set_init(a, set, 1, &d, kl, &err);
  sl_group_table_init(keep, kl, set, 16);
  uint8_t key[16] = {0};
  double t0 = sl_clock_seconds();
  for (uint64_t i = 0; i < updates; i++) {
    if ((i & 65535) == 0 && sl_cancel_current_pending())
      break; /* Ctrl-C: sl_cost_calibrate gives up */
    SL_FIELD(key, kl, 0, int64_t) = (int64_t)(rnd(&seed) % keys);
    uint8_t *st = sl_group_table_upsert(keep, sl_key_hash(kl, key), key);
    (*(int64_t *)st)++;
  }
  return (sl_clock_seconds() - t0) * 1e9 / (double)updates;
}

/* ns per group to merge `from` into `into` (which then owns the sum). */
static double time_merge(sl_group_table *into, const sl_group_table *from) {
  sl_error err = {0};
  double t0 = sl_clock_seconds();
  sl_group_table_merge(into, from, &err);
  return (sl_clock_seconds() - t0) * 1e9 /
         (double)(from->count ? from->count : 1);
}

typedef struct half_of {
  const sl_row_layout *kl;
  uint64_t half;
} half_of;

/* The key's half of the partitions (as a node splits its partial for two
 * leaders: the key hashed again for each part). */
static bool in_half(void *arg, const uint8_t *key) {
  const half_of *h = arg;
  return (sl_key_hash(h->kl, key) >> 63) == h->half;
}

/* ns per group for a late-merge partial to reach another process: copied
 * into a window's fresh table (a hopping slice's delta goes to each of its
 * windows), split by key into two leaders' parts and encoded, then each
 * part decoded and merged into a table that grows from empty as a
 * leader's window table does. */
static double time_ship(const sl_group_table *from) {
  sl_error err = {0};
  sl_strbuf wire[2] = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  sl_group_table copy, into[2];
  double t0 = sl_clock_seconds();
  sl_group_table_init(&copy, from->key_layout, from->aggs, from->count);
  sl_group_table_merge(&copy, from, &err);
  for (int p = 0; p < 2; p++) {
    half_of h = {from->key_layout, (uint64_t)p};
    sl_group_table_encode_where(&copy, in_half, &h, &wire[p]);
  }
  for (int p = 0; p < 2; p++) {
    sl_group_table_init(&into[p], from->key_layout, from->aggs, 16);
    sl_group_table_decode_merge(&into[p], (const uint8_t *)wire[p].data,
                                wire[p].len, &err);
  }
  double ns =
      (sl_clock_seconds() - t0) * 1e9 / (double)(from->count ? from->count : 1);
  sl_error_clear(&err);
  sl_group_table_free(&copy);
  for (int p = 0; p < 2; p++) {
    sl_group_table_free(&into[p]);
    sl_strbuf_free(&wire[p]);
  }
  return ns;
}

void sl_cost_calibrate(sl_cost_constants *k) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_group_table small, small2, mid, big, big2;
  k->update_hot_ns = time_updates(&a, 1000, 2000000, 1, &small);
  k->update_cold_ns = time_updates(&a, 1 << 20, 2000000, 1, &big);
  /* Merging as the coordinator does it: one worker's partial into
   * another's over the same keys (mostly lookups of keys already there),
   * in cache (1000 groups, repeated) and not (about 870K groups). */
  time_updates(&a, 1000, 20000, 2, &small2);
  double hot = 0;
  for (int rep = 0; rep < 200; rep++)
    hot += time_merge(&small2, &small);
  k->merge_hot_ns = hot / 200;
  /* A node's partial of about 8000 groups crossing (q5's nodes send
   * 6000 per window), the median of 25: the first ones fault their
   * memory in, which a node's pools then reuse. */
  time_updates(&a, 8192, 40000, 3, &mid);
  double ship[25];
  for (int rep = 0; rep < 25; rep++) {
    ship[rep] = time_ship(&mid);
    for (int i = rep; i > 0 && ship[i] < ship[i - 1]; i--) {
      double t = ship[i];
      ship[i] = ship[i - 1];
      ship[i - 1] = t;
    }
  }
  k->ship_ns = ship[12];
  time_updates(&a, 1 << 20, 2000000, 2, &big2);
  k->merge_ns = time_merge(&big2, &big);
  /* Routing: hash a 48-byte record and copy it into an outgoing buffer. */
  static uint8_t src[48 * 4096], dst[48 * 4096];
  memset(src, 7, sizeof src);
  uint64_t h = 0;
  double t0 = sl_clock_seconds();
  for (int rep = 0; rep < 500; rep++)
    for (int i = 0; i < 4096; i++) {
      h += sl_hash_bytes(src + i * 48, 16);
      memcpy(dst + (h % 4096) * 48, src + i * 48, 48);
    }
  volatile uint64_t keep_h = h; /* the loop's work must not be elided */
  (void)keep_h;
  /* Plus one hot update: the owner builds and hashes the key again (the
   * sender did so to route it) before its own table update, which the
   * model counts separately.  Measured end to end on the RO sweep, the
   * extra per-record cost of repartitioning was about copy + one update. */
  k->route_ns =
      (sl_clock_seconds() - t0) * 1e9 / (500.0 * 4096) + k->update_hot_ns;
  /* Not measured: the group count up to which a table's slots (tens of
   * bytes each) stay in a 2-core machine's caches, about 64K groups; the
   * hot and cold update costs above are measured on either side of it. */
  k->cache_groups = 1 << 16;
  /* Ctrl-C or .timeout during the measurement (a few seconds, once per
   * machine): the figures are cut short, so they are not kept */
  k->calibrated = !sl_cancel_current_pending();
  sl_group_table_free(&small);
  sl_group_table_free(&small2);
  sl_group_table_free(&mid);
  sl_group_table_free(&big);
  sl_group_table_free(&big2);
  sl_arena_free(&a);
}

static double update_ns(const sl_cost_constants *k, double groups) {
  return groups <= k->cache_groups ? k->update_hot_ns : k->update_cold_ns;
}

static double merge_ns(const sl_cost_constants *k, double groups) {
  return groups <= k->cache_groups ? k->merge_hot_ns : k->merge_ns;
}

static double distinct_for(const sl_key_stats *ks, double n) {
  double d = sl_key_stats_distinct_for(ks, n);
  return d < 1 ? 1 : d;
}

/* Windows a slice's partial is sent to: a hopping window's slice belongs
 * to size / slide windows, a cumulating window's step to half its steps on
 * average; a tumbling window or session is its own slice. */
static double windows_per_slice(const sl_plan *p) {
  const sl_plan_window *w = &p->window;
  if (!p->windowed || w->slide_us <= 0 || w->kind == SL_WINDOW_SESSION ||
      w->kind == SL_WINDOW_TUMBLE)
    return 1;
  double steps = (double)w->size_us / (double)w->slide_us;
  if (w->kind == SL_WINDOW_CUMULATE)
    return (steps + 1) / 2;
  return steps < 1 ? 1 : steps;
}

void sl_cost_choose(const sl_plan *p, const sl_table_stats *st,
                    const sl_key_stats *groups, const sl_key_stats *pairs,
                    int workers, int nodes, bool to_coordinator,
                    const sl_cost_constants *k, sl_strategy_choice *out) {
  memset(out, 0, sizeof *out);
  out->strategy = SL_STRATEGY_LATE_MERGE;
  double w = workers < 1 ? 1 : workers, N = nodes < 1 ? 1 : nodes;
  double n = w * N;
  out->nodes = (int)N;
  out->windows_per_slice = windows_per_slice(p);
  /* Records per slice of state. */
  double slice_s = 1.0;
  if (p->windowed) {
    const sl_plan_window *pw = &p->window;
    double us = pw->kind == SL_WINDOW_SESSION  ? (double)pw->gap_us
                : pw->kind == SL_WINDOW_TUMBLE ? (double)pw->size_us
                                               : (double)pw->slide_us;
    slice_s = us / 1e6;
  }
  double W = st->has_event_rate && st->event_rate > 0
                 ? st->event_rate * slice_s
                 : (double)(st->records ? st->records : 1);
  if (!p->windowed)
    W = (double)(st->records ? st->records : 1);
  out->records_per_slice = W;
  out->groups = groups ? distinct_for(groups, W) : 1;
  out->groups_per_worker = groups ? distinct_for(groups, W / n) : 1;
  double merge_units_w = out->groups_per_worker;
  if (pairs) /* DISTINCT: every (key, value) pair is merged */
    merge_units_w = distinct_for(pairs, W / n);
  out->top_share = groups ? groups->top1_share : 0;
  double lm = (W / n) * update_ns(k, out->groups_per_worker) +
              (w - 1) * merge_units_w * merge_ns(k, merge_units_w);
  double busiest = fmax(1.0 / n, out->top_share);
  double rp =
      (W / n) * k->route_ns + W * busiest * update_ns(k, out->groups / n);
  if (N > 1) {
    /* A node's partial (its workers' merged) crosses once per window. */
    const sl_key_stats *units = pairs ? pairs : groups;
    double per_node = units ? distinct_for(units, W / N) : 1;
    lm += per_node * out->windows_per_slice * (to_coordinator ? N : 1) *
          k->ship_ns;
    rp += (W / n) * (N - 1) / N * k->route_ns;
  }
  if (n <= 1)
    rp = lm * 2; /* nothing to repartition over */
  out->cost_late_merge_s = lm / 1e9;
  out->cost_repartition_s = rp / 1e9;
  /* Repartitioning must win (by 5%, and by over a millisecond per slice):
   * near a tie, late merge keeps no channels and is robust to skew. */
  if (rp < 0.95 * lm && lm > 1e6)
    out->strategy = SL_STRATEGY_REPARTITION;
  out->table_groups = out->strategy == SL_STRATEGY_REPARTITION
                          ? out->groups / n
                          : out->groups_per_worker;
}

void sl_cost_format(sl_strbuf *b, const sl_strategy_choice *c,
                    const sl_cost_constants *k) {
  sl_strbuf_printf(
      b,
      "estimates per state slice: %.0f records, %.0f groups (%.0f per "
      "worker), heaviest key %.1f%%; cost: late merge %.3f ms, repartition "
      "%.3f ms -> %s; calibrated: update %.0f ns (hot) / %.0f ns (cold), "
      "merge %.0f / %.0f ns per group, route %.0f ns per record; a "
      "worker's first tables sized for %.0f groups",
      c->records_per_slice, c->groups, c->groups_per_worker, 100 * c->top_share,
      c->cost_late_merge_s * 1e3, c->cost_repartition_s * 1e3,
      c->strategy == SL_STRATEGY_REPARTITION ? "repartition" : "late merge",
      k->update_hot_ns, k->update_cold_ns, k->merge_hot_ns, k->merge_ns,
      k->route_ns, c->table_groups);
  if (c->nodes > 1)
    sl_strbuf_printf(b,
                     "; on %d nodes: a node's partial crosses to other "
                     "processes %.0f time%s per slice, %.0f ns per group",
                     c->nodes, c->windows_per_slice,
                     c->windows_per_slice == 1 ? "" : "s", k->ship_ns);
}
