/* distribution.c - the cluster's side of the executor's work
 * (exec/distribution.h): a node's frames to its coordinator, the
 * coordinator's node links, and late merge at partition leaders. */
#include "sluice/cluster/distribution.h"

#include "../exec/distribution.h"

#include "node_leaders.h"
#include "node_link.h"

static sl_leader_window *leaders_take(sl_node_leaders *l) {
  return sl_leader_store_take(sl_node_leaders_store(l));
}

static int64_t leaders_clock(sl_node_leaders *l) {
  return sl_leader_store_clock(sl_node_leaders_store(l));
}

static bool leaders_finished(sl_node_leaders *l) {
  return sl_leader_store_finished(sl_node_leaders_store(l));
}

const sl_distribution sl_cluster_distribution = {
    .send_partial = sl_node_send_partial,
    .send_wm = sl_node_send_wm,
    .send_rows = sl_node_send_rows,
    .send_bulk = sl_node_send_bulk,
    .can_send = sl_node_can_send,
    .encode_rows = sl_node_encode_rows,
    .sink_to_coordinator = &sl_sink_to_coordinator,
    .link_main = sl_node_link_main,
    .link_credit = sl_node_link_credit,
    .leaders_open = sl_node_leaders_open,
    .leaders_ship = sl_node_leaders_ship,
    .leaders_watermark = sl_node_leaders_watermark,
    .leaders_epoch_done = sl_node_leaders_epoch_done,
    .leaders_status = sl_node_leaders_status,
    .leaders_take = leaders_take,
    .window_free = sl_leader_window_free,
    .leaders_clock = leaders_clock,
    .leaders_finished = leaders_finished,
    .leaders_counts = sl_node_leaders_counts,
    .leaders_abort = sl_node_leaders_abort,
    .leaders_close = sl_node_leaders_close,
};
