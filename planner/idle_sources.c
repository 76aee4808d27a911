/* idle_sources.c - SET 'table.exec.source.idle-timeout' (Flink's name):
 * how long a worker's share of the stream may give no row before the
 * worker counts as idle.  The plan carries it, so that EXPLAIN shows it and
 * a node that plans a query's text runs it as the shell would; the
 * runtime decides what idle means (exec/worker.c, advance_if_idle). */
#include "sluice/common/settings.h"
#include "sluice/planner/plan.h"

void sl_plan_set_idle_timeout(sl_plan *plan, const sl_settings *settings) {
  double s =
      sl_settings_get_seconds(settings, "table.exec.source.idle-timeout", 0);
  int64_t us = s > 0 ? (int64_t)(s * 1e6) : 0;
  plan->idle_timeout_us = us;
  if (plan->kind == SL_PLAN_STAGED)
    for (int i = 0; i < plan->staged->nleaves; i++)
      plan->staged->leaves[i]->idle_timeout_us = us;
}
