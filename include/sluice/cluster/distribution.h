/* distribution.h - the cluster's implementation of the executor's
 * distribution seam (exec/distribution.h): whoever starts a query on
 * nodes (the session) puts &sl_cluster_distribution in sl_exec_nodes.dist
 * and sl_staged_run.dist. */
#ifndef SLUICE_CLUSTER_DISTRIBUTION_H
#define SLUICE_CLUSTER_DISTRIBUTION_H

typedef struct sl_distribution sl_distribution;
extern const sl_distribution sl_cluster_distribution;

#endif
