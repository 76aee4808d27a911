/* distribution.h - the seam between one process's execution (exec/) and a
 * cluster (cluster/).
 *
 * The executor runs a plan the same way on one process and on a node of a
 * cluster; what differs is where a worker's window partials, result rows
 * and watermarks go (to the coordinator over the node's control
 * connection, or to the partition leaders that merge one share of the
 * keys each) and, on the coordinator of nodes, what feeds its "workers"
 * (a thread per node link).  exec/ calls only the operations below;
 * cluster/ implements them (sl_cluster_distribution, cluster/distribution.c)
 * and the session hands them to the executor in sl_exec_nodes.dist or
 * sl_staged_run.dist.  A query on one process has none, and exec/ links
 * without cluster/ (cmake/Layers.cmake checks it). */
#ifndef SLUICE_EXEC_DISTRIBUTION_H
#define SLUICE_EXEC_DISTRIBUTION_H

#include "executor_int.h"

typedef struct sl_node_leaders sl_node_leaders; /* cluster/node_leaders.h */

/* A window whose partial state a partition leader has merged from every
 * node and may now fire (its partition's share of the keys). */
typedef struct sl_leader_window {
  int64_t start, end;
  sl_group_table *table;
  struct sl_leader_window *next;
} sl_leader_window;

typedef struct sl_distribution sl_distribution;
struct sl_distribution {
  /* ---- a node: what goes to its coordinator (node_frames.h) ---- */
  int (*send_partial)(const sl_frame_out *o, int64_t start, int64_t end,
                      const sl_group_table *t, sl_error *err);
  int (*send_wm)(const sl_frame_out *o, int64_t wm, sl_error *err);
  int (*send_rows)(const sl_frame_out *o, sl_buffer *b, sl_error *err);
  /* A bulk frame, sent once the coordinator's credits allow. */
  int (*send_bulk)(const sl_frame_out *o, uint32_t type, const void *a,
                   size_t alen, sl_error *err);
  bool (*can_send)(const sl_frame_out *o);
  /* b in the ROWS wire form, appended to out (b is spent). */
  int (*encode_rows)(sl_buffer *b, sl_strbuf *out, sl_error *err);
  /* The sink of a node's stage results (arg: sl_sink_to_coordinator_arg). */
  const sl_sink_connector *sink_to_coordinator;

  /* ---- the coordinator of nodes: one "worker" thread per node link ---- */
  void *(*link_main)(void *worker);
  /* Credits back to a node once the coordinator took its frames. */
  void (*link_credit)(worker *w);

  /* ---- a node under late merge at partition leaders ---- */
  int (*leaders_open)(exec_query *q, const sl_exec_nodes *nodes,
                      exec_shared *wake, sl_node_leaders **out, sl_error *err);
  /* Ship window [start, end)'s partial t, split by partition. */
  int (*leaders_ship)(sl_node_leaders *l, int64_t start, int64_t end,
                      const sl_group_table *t, sl_error *err);
  int (*leaders_watermark)(sl_node_leaders *l, int64_t wm, sl_error *err);
  void (*leaders_epoch_done)(sl_node_leaders *l);
  int (*leaders_status)(sl_node_leaders *l, sl_error *err);
  /* The next window of this node's partition ready to fire, or NULL; the
   * caller frees it with window_free. */
  sl_leader_window *(*leaders_take)(sl_node_leaders *l);
  void (*window_free)(sl_leader_window *w);
  /* How far this leader's vector clock has fired windows. */
  int64_t (*leaders_clock)(sl_node_leaders *l);
  /* Every node sent everything and every window here fired. */
  bool (*leaders_finished)(sl_node_leaders *l);
  void (*leaders_counts)(sl_node_leaders *l, uint64_t *epochs, uint64_t *bytes);
  void (*leaders_abort)(sl_node_leaders *l);
  void (*leaders_close)(sl_node_leaders *l);
};

#endif
