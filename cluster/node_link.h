/* node_link.h - the two ends of a node's control connection as the
 * executor sees them (node_link.c, sink_to_coordinator.c); the executor
 * reaches them through the distribution (exec/distribution.h). */
#ifndef SLUICE_NODE_LINK_H
#define SLUICE_NODE_LINK_H

#include "../exec/executor_int.h"

/* Clusters (node_link.c): on the coordinator, the thread that turns a
 * node's frames into what a worker publishes; on a node, what goes to the
 * coordinator instead of a sink. */
void *sl_node_link_main(void *arg);
int sl_node_send_partial(const sl_frame_out *o, int64_t start, int64_t end,
                         const sl_group_table *t, sl_error *err);
int sl_node_send_wm(const sl_frame_out *o, int64_t wm, sl_error *err);
int sl_node_send_rows(const sl_frame_out *o, sl_buffer *b, sl_error *err);
/* A bulk frame (ROWS, PARTIAL, LATE_ROWS) from a node: sent once o's
 * credits allow (node_frames.h, sl_node_credit), SL_ECANCELLED if the query stops
 * meanwhile. */
int sl_node_send_bulk(const sl_frame_out *o, uint32_t type, const void *a,
                      size_t alen, sl_error *err);
/* Whether a bulk frame from o could go now without waiting. */
bool sl_node_can_send(const sl_frame_out *o);
/* The coordinator took frames of a node link's queue: count them and, once
 * enough are owed or the queue is empty, send the node CREDIT (the link's
 * send_lock; a node whose socket is full is told later). */
void sl_node_link_credit(worker *w);
/* A buffer in the ROWS wire form (node_frames.h), appended to out; b's strings
 * must be in its own heap, and are swizzled (b is spent). */
int sl_node_encode_rows(sl_buffer *b, sl_strbuf *out, sl_error *err);
/* A node's stage results to the coordinator (sink_to_coordinator.c). */
extern const sl_sink_connector sl_sink_to_coordinator;

#endif
