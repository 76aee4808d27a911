/* cost_model.h - the planner's choice of a distribution strategy
 * (planner/cost_model.c has the model).
 *
 * Ownership: plain values; nothing allocated. */
#ifndef SLUICE_COST_MODEL_H
#define SLUICE_COST_MODEL_H

#include <stdbool.h>

#include "sluice/plan.h"
#include "sluice/statistics.h"
#include "sluice/strbuf.h"

/* Constants measured on this machine (a few hundred ms, once per
 * session). */
typedef struct sl_cost_constants {
  bool calibrated;
  double update_hot_ns;  /* group-table update, table in cache */
  double update_cold_ns; /* group-table update, 1M groups */
  double merge_hot_ns;   /* merging one group into a table, in cache */
  double merge_ns;       /* the same, about 1M groups */
  double route_ns;       /* hashing and copying a record to its owner */
  double cache_groups;   /* groups up to which updates stay hot */
} sl_cost_constants;

void sl_cost_calibrate(sl_cost_constants *k);

typedef struct sl_strategy_choice {
  sl_strategy strategy;
  double records_per_slice;
  double groups;            /* per slice, all workers */
  double groups_per_worker; /* per slice, one worker's share */
  double top_share;         /* the heaviest key's share */
  double cost_late_merge_s;
  double cost_repartition_s;
} sl_strategy_choice;

/* Choose for an aggregate plan: groups = the statistics of its group key
 * (the composite key when there are several), pairs = of group key plus
 * DISTINCT arguments (NULL without DISTINCT). */
void sl_cost_choose(const sl_plan *p, const sl_table_stats *st,
                    const sl_key_stats *groups, const sl_key_stats *pairs,
                    int workers, const sl_cost_constants *k,
                    sl_strategy_choice *out);

/* One line for EXPLAIN: the estimates, both costs, the choice. */
void sl_cost_format(sl_strbuf *b, const sl_strategy_choice *c,
                    const sl_cost_constants *k);

#endif
