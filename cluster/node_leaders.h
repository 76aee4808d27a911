/* node_leaders.h - a node's side of late merge at partition leaders: the
 * channels to and from every other node, the threads that receive state
 * parts and watermarks, and shipping a partial state split by partition.
 * The pure parts (partition, split, store, vector clock) are
 * partition_leader.h's.  Internal to runtime/.
 *
 * Messages on a leader channel (node s -> node o), one or more slots each:
 *   a part    [window start i64][end i64][group table wire form], chunked
 *             over as many slots as it needs (SL_NODE_LEADERS_F_MORE on all
 *             but the last; F_PART on all)
 *   the footer's watermark, on a message's last slot: s's vector clock
 *   entry once the message is merged (every change of a window ending at
 *   or before it has been sent); an empty slot without F_PART carries only
 *   that (a "watermark only" message at a window boundary)
 *   end of stream: s has sent everything (its entry becomes +infinity)
 *
 * Threading: ship/watermark/finish are called by the node's coordinator
 * thread only (the producer side of every outgoing channel); one receiver
 * thread per incoming channel merges into the store.  A worker never waits
 * for a transfer.
 *
 * Ownership: sl_node_leaders_open returns an object the caller frees with
 * sl_node_leaders_close after the query (it joins the receivers and
 * destroys the channels). */
#ifndef SLUICE_NODE_LEADERS_H
#define SLUICE_NODE_LEADERS_H

#include "../exec/executor_int.h"
#include "partition_leader.h"
#include "sluice/exec/exec_nodes.h"

#define SL_NODE_LEADERS_F_MORE (SL_CHANNEL_F_USER << 0)
#define SL_NODE_LEADERS_F_PART (SL_CHANNEL_F_USER << 1)

typedef struct sl_node_leaders sl_node_leaders;

/* Open this node's leader channels (shm between forked nodes, tcp between
 * daemons, as nodes->exchange_transport says) and start the receivers.
 * wake is broadcast when something arrives. */
int sl_node_leaders_open(exec_query *q, const sl_exec_nodes *nodes,
                         exec_shared *wake, sl_node_leaders **out,
                         sl_error *err);

/* The store this node leads (its partition's windows). */
sl_leader_store *sl_node_leaders_store(sl_node_leaders *l);

/* Split t (window [start, end)) by partition: this node's part into the
 * store, every other part to its leader.  The message's watermark is
 * not advanced (see sl_node_leaders_watermark). */
int sl_node_leaders_ship(sl_node_leaders *l, int64_t start, int64_t end,
                         const sl_group_table *t, sl_error *err);

/* Every change of a window ending at or before wm has been shipped: tell
 * every leader (its own store too).  wm INT64_MAX: this node is done, the
 * outgoing channels are closed. */
int sl_node_leaders_watermark(sl_node_leaders *l, int64_t wm, sl_error *err);

/* SL_OK, or the error a receiver met (a peer died, corrupt state). */
int sl_node_leaders_status(sl_node_leaders *l, sl_error *err);

/* Counters for EXPLAIN ANALYZE: ship rounds that sent something to
 * another node, and state bytes sent to other nodes. */
void sl_node_leaders_counts(sl_node_leaders *l, uint64_t *epochs,
                            uint64_t *bytes);
void sl_node_leaders_epoch_done(sl_node_leaders *l);

/* Stop: break every channel (after an error or a cancel). */
void sl_node_leaders_abort(sl_node_leaders *l);
void sl_node_leaders_close(sl_node_leaders *l);

#endif
