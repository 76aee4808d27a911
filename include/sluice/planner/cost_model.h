/* cost_model.h - the planner's choice of a distribution strategy
 * (planner/cost_model.c has the model).
 *
 * Ownership: plain values; nothing allocated. */
#ifndef SLUICE_COST_MODEL_H
#define SLUICE_COST_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/planner/plan.h"
#include "sluice/planner/statistics.h"

/* Constants measured on this machine (a few hundred ms, once per
 * session). */
typedef struct sl_cost_constants {
  bool calibrated;
  double update_hot_ns;  /* group-table update, table in cache */
  double update_cold_ns; /* group-table update, 1M groups */
  double merge_hot_ns;   /* merging one group into a table, in cache */
  double merge_ns;       /* the same, about 1M groups */
  double route_ns;       /* hashing and copying a record to its owner */
  double ship_ns;        /* one group of a partial state to another
                          * process: copied into its window's delta,
                          * encoded, decoded and merged there */
  double cache_groups;   /* groups up to which updates stay hot */
} sl_cost_constants;

void sl_cost_calibrate(sl_cost_constants *k);

/* The calibration cache: a small text file per machine user, by default
 * $SLUICE_CACHE_DIR, else $XDG_CACHE_HOME/sluice, else ~/.cache/sluice,
 * file "calibration".  It records the machine it was measured on (CPU
 * model and count); a file from another machine, another format version
 * or with a missing value is ignored.  sl_cost_cache_path writes the path
 * into buf (false when no directory is known). */
bool sl_cost_cache_path(char *buf, size_t cap);
bool sl_cost_load(sl_cost_constants *k, const char *path);
/* Writes atomically (a temporary file renamed), creating the directory;
 * SL_EIO with a message on failure. */
int sl_cost_save(const sl_cost_constants *k, const char *path, sl_error *err);

/* Load the cached constants, or calibrate and save them (fresh: always
 * calibrate, then save).  A cache that cannot be written is not an error:
 * the constants are still measured. */
void sl_cost_calibrate_cached(sl_cost_constants *k, bool fresh);

typedef struct sl_strategy_choice {
  sl_strategy strategy;
  double records_per_slice;
  double groups;            /* per slice, all workers */
  double groups_per_worker; /* per slice, one worker's share */
  double top_share;         /* the heaviest key's share */
  double cost_late_merge_s;
  double cost_repartition_s;
  int nodes;                /* the nodes the plan runs on (1: this process) */
  double windows_per_slice; /* windows a slice's delta goes to (HOP) */
  /* the groups one worker's table holds per slice under the chosen
   * strategy: its share of the keys when repartitioned, else the groups
   * its share of the records meets (sizes its first tables) */
  double table_groups;
} sl_strategy_choice;

/* Choose for an aggregate plan run by `workers` workers on each of
 * `nodes` nodes: groups = the statistics of its group key (the composite
 * key when there are several), pairs = of group key plus DISTINCT
 * arguments (NULL without DISTINCT); to_coordinator: late merge across
 * nodes merges at the coordinator (SET 'sluice.late-merge' =
 * 'coordinator'), not at partition leaders. */
void sl_cost_choose(const sl_plan *p, const sl_table_stats *st,
                    const sl_key_stats *groups, const sl_key_stats *pairs,
                    int workers, int nodes, bool to_coordinator,
                    const sl_cost_constants *k, sl_strategy_choice *out);

/* What the strategy choice reads and keeps between statements (the
 * session owns all of it). */
typedef struct sl_strategy_inputs {
  const sl_settings *settings; /* sluice.strategy, parallelism.default,
                                * sluice.calibration */
  sl_stats_cache *stats;       /* sampled statistics, per table and keys */
  sl_cost_constants *costs;    /* loaded or measured at the first choice */
  bool *costs_fresh;           /* measured by this session ('fresh') */
  bool staged_leaf;            /* a leaf of a staged plan: sluice.strategy =
                                * 'broadcast' is its join's, the leaf's is auto */
  int nodes;                   /* the nodes the plan runs on (1: this
                                * process alone, or a node itself) */
} sl_strategy_inputs;

/* Set plan->strategy for its stateful operator (planner/
 * choose_strategy.c): forced by SET 'sluice.strategy', or for 'auto'
 * chosen by the cost model from sampled statistics.  *why (in arena, or
 * static) says why for EXPLAIN; NULL for plans without state.  A strategy
 * that cannot run this plan is SL_EUNSUPPORTED with a message. */
int sl_plan_choose_strategy(sl_plan *plan, const sl_strategy_inputs *in,
                            sl_arena *arena, const char **why, sl_error *err);

/* A staged plan on `nodes` nodes: how its join meets (plan.h,
 * sl_join_strategy), forced by SET 'sluice.join-strategy' (or
 * 'sluice.strategy' = 'broadcast'), or for 'auto' broadcast when sending
 * the smaller side's rows to every node moves fewer bytes than sending
 * the larger side's to the coordinator (estimates from sampled
 * statistics: rows per window of each leaf times its row width).  Sets
 * join_strategy, local_leaf, bcast_leaf and join_why (in arena). */
int sl_plan_choose_join(sl_plan *plan, const sl_strategy_inputs *in, int nodes,
                        sl_arena *arena, sl_error *err);

/* One line for EXPLAIN: the estimates, both costs, the choice. */
void sl_cost_format(sl_strbuf *b, const sl_strategy_choice *c,
                    const sl_cost_constants *k);

#endif
