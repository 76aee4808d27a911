/* exec_nodes.h - where a plan's run meets the other processes of a
 * cluster: the control sockets, channels and links that cluster/ set up
 * for it, which the executor reads and never opens itself.  The executor
 * defines what it needs and the layer above fills it in, so no header of
 * exec/ includes one of cluster/. */
#ifndef SLUICE_EXEC_EXEC_NODES_H
#define SLUICE_EXEC_EXEC_NODES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/cancel.h"
#include "sluice/net/node_frames.h"

struct sl_stage_feed;   /* exec/stage_feed.c */
struct sl_secret;       /* auth.h */
struct sl_distribution; /* exec/distribution.h */

/* How sl_execute runs a plan in a cluster (executor.h). */
typedef struct sl_exec_nodes {
  /* On the coordinator: one control socket per node, each already sent its
   * QUERY; the nodes play the part of workers. */
  int nnodes;
  const int *fds;
  /* On a node: its index and the cluster's node count, the control socket
   * to the coordinator (partials, watermarks and rows go there instead of
   * to a sink), and the query's cancel token (cancel.h), requested when
   * the coordinator cancels. */
  int node_index, node_count;
  int coordinator_fd;
  pthread_mutex_t *coordinator_lock;  /* sl_frame_out's lock, or NULL */
  sl_node_credit *coordinator_credit; /* sl_frame_out's credit, or NULL */
  const sl_cancel *cancel;
  /* Repartitioning between the nodes' workers: each pair of workers on
   * different nodes gets a channel.  shm (nodes on this host): it meets
   * at "@sluice-<query_id>-<sender>-<owner>".  tcp (daemons): the owner's
   * end accepts on listen_fds[sender * members + owner], the sender's end
   * connects to peer_addrs[sender * members + owner] (both from XLISTEN /
   * XADDR; members = node_count x workers). */
  bool exchange_between_nodes;
  int exchange_transport; /* sl_exchange_transport */
  uint64_t query_id;
  const int *listen_fds;
  const char *const *peer_addrs;
  /* Late merge at partition leaders (exchange_between_nodes with the
   * late-merge strategy): node s's state for node o's partition goes on a
   * channel s -> o.  shm: "@sluice-<query_id>-L<s>-<o>"; tcp: o accepts on
   * leader_listen_fds[s * node_count + o], s connects to
   * leader_addrs[s * node_count + o] (XLISTEN / XADDR "L" lines). */
  const int *leader_listen_fds;
  const char *const *leader_addrs;
  /* On a node of a join whose stages run on the nodes: its share of the
   * leaf goes into the plan's sink (the stage sink on a stage node, the
   * link sink on a side's node) rather than to the coordinator, and the
   * sink's watermark hook learns how far it is complete (executor.c). */
  bool rows_to_sink;
  /* On such a node, per leaf of the join (2): where the link reader puts
   * that leaf's rows (STAGE_ROWS, STAGE_WM from every node of its
   * cluster), or NULL: the other side's; under a repartition of both
   * sides (SL_JOIN_SHUFFLE) this node's own leaf's as well. */
  struct sl_stage_feed *const *feeds;
  /* On a node of a join's side (QUERY's "S" lines): the link address of
   * each of the nstage nodes running the stages, where its rows go
   * (executor.h, sl_sink_to_stage_nodes) instead of to the coordinator. */
  int nstage;
  const char *const *stage_addrs;
  /* On a node: the cluster secret (auth.h) that channels and links
   * between nodes prove before anything crosses them; NULL: none. */
  const struct sl_secret *secret;
  /* The cluster's side of the executor's work (exec/distribution.h,
   * sl_cluster_distribution): required whenever nnodes or node_count
   * is set. */
  const struct sl_distribution *dist;
} sl_exec_nodes;

#endif
