/* node_frames.h - what a coordinator and its node processes say to each
 * other while running one query: the frames of their control connection,
 * heartbeats, credits, the exchange transports (net/node_frames.c,
 * node_credit.c).  How a plan runs over them: exec/exec_nodes.h.
 *
 * A cluster is a coordinator (the shell's process) and N nodes: processes
 * started by `sluice --nodes N` (forked on this host) or daemons started
 * with `sluice node --listen ADDR:PORT` on any host and joined with
 * `sluice --cluster host:port,...`.  Each node is connected to the
 * coordinator by one control connection (a stream socket) that carries
 * framed messages:
 *
 *   frame  [type u32][length u32][payload: length bytes]
 *
 *   coordinator -> node
 *     EXEC    statement text (CREATE, DROP, SET, RESET): the node applies it
 *             to its own session and answers OK or ERROR, so every node
 *             has the coordinator's catalog and settings
 *     QUERY   [node index u32][node count u32][strategy u32][exchange
 *             between nodes u32: sl_exchange_transport][query id u64]
 *             [address list length u32][leaf u32][fed leaf u8 | fed
 *             leaves u8 << 8 | join strategy u16 << 16 (plan.h)][every
 *             node's XADDR lines][text]: plan and run the query on this
 *             node's share of every source (leaf k > 0: only leaf k - 1 of
 *             its staged plan, plan.h, whose rows the coordinator's stages
 *             take; with fed leaf f > 0 too, the stages run here over this
 *             node's rows of leaf k - 1 and leaf f - 1's rows, which that
 *             leaf's nodes send over links; fed leaves m > 0: under a
 *             repartition of every leaf, the rows of leaves 0 .. m - 1
 *             all come over links, this node's own of leaf k - 1 too;
 *             result rows go back as ROWS);
 *             channels between nodes carry records under repartition and
 *             partial state to the partition leaders under late merge
 *     XLISTEN [node index u32][node count u32][what u32][transport u32]:
 *             before a query that moves data between nodes over tcp or
 *             verbs, listen for the channels this node will consume (what
 *             1: the repartition's between workers; 2: the partition
 *             leaders' between nodes, for late merge) on the transport
 *             (sl_exchange_transport; tcp if absent), at the address the
 *             coordinator reached (verbs: the RDMA device's address when
 *             that is not an IPv4 address); answered by
 *     XADDR   lines "sender owner host:port" (exchange members) or
 *             "L sender leader host:port" (nodes): one per channel; what
 *             3 (tcp only): one socket for the links of a join whose
 *             stages run on the nodes, answered "S node host:port"; the
 *             QUERY of the other side's nodes carries these lines
 *   node -> node, on a link (executor.h, sl_stage_link_spec)
 *     STAGE_HELLO [u32 leaf]
 *             first on every link: the leaf whose rows it carries (the
 *             side's; under a repartition of both sides the stage nodes'
 *             own leaf too, whose nodes link to each other)
 *     STAGE_ROWS, STAGE_WM
 *             from each node of a join's side to each node running its
 *             stages (whose QUERY named that side as its fed leaf): the
 *             side's rows (ROWS wire form) and its watermark [i64]
 *             (INT64_MAX: everything was sent)
 *     CANCEL  stop the running query (also: the connection closing)
 *     SYNC    after every query, whatever happened: the node stops the
 *             query if it still runs and answers SYNC_ACK once idle, and
 *             the coordinator skips everything before that answer, so the
 *             next statement starts in step even after an error
 *   node -> coordinator
 *     HELLO   [workers u32][version text]["\nrdma " device line], once,
 *             on connecting: the device line is "NAME ADDRESS PORT LINK"
 *             of the node's first active RDMA device, or "- WHY" without
 *             one (sl_channel_verbs_probe)
 *     OK / ERROR [code i32][message]
 *     PARTIAL [window start i64][end i64][group table, aggregate.h wire
 *             form]: this node's merged partial state of a window
 *     WM      [watermark i64]: every window ending at or before it has
 *             been sent (the node's vector clock entry); a node sending
 *             rows sends it too: every row of a window ending at or before
 *             it (less a time unit; of an event time at or before it, for
 *             rows without windows) has been sent
 *     ROWS    [rows u32][heap u32][cap u32] + the rows and the string heap
 *             of a result buffer, strings swizzled (row.h)
 *     READY   every worker's source is open (and pre-generated): the
 *             query's clock starts when every node is ready
 *     DONE    [sl_query_stats]: the query ended on this node
 *     HEARTBEAT  every SL_HEARTBEAT_MS while a query runs (below)
 *   coordinator -> node, during a query
 *     CREDIT  [frames u64][bytes u64]: the node's bulk frames the
 *             coordinator has taken so far (sl_node_credit, below)
 *
 * The coordinator plans once (statistics, strategy), ships the statement
 * text and the chosen strategy, and every node plans the same text against
 * the same catalog; then each node looks, to the coordinator's executor,
 * like one worker.  Late merge: by default (sluice.late-merge = leaders)
 * node k leads partition k of the keys; nodes ship their state split by
 * partition to the leaders over channels between them (node_leaders.h),
 * each leader fires its partition's windows on its vector clock and sends
 * ROWS.  With sluice.late-merge = coordinator, nodes ship their merged
 * partial per window here (PARTIAL, WM) and the coordinator merges.
 * Within a node the chosen strategy is used between its workers.
 *
 * Every node and the coordinator must run the same build (frames and
 * layouts are native, not portable across architectures or versions).
 *
 * Ownership: frames are written and read by the caller's thread; payload
 * buffers are the caller's (sl_strbuf).
 */
#ifndef SLUICE_NET_NODE_FRAMES_H
#define SLUICE_NET_NODE_FRAMES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/common/cancel.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"

typedef enum sl_frame_type {
  SL_FRAME_EXEC = 1,
  SL_FRAME_OK = 2,
  SL_FRAME_ERROR = 3,
  SL_FRAME_QUERY = 4,
  SL_FRAME_PARTIAL = 5,
  SL_FRAME_WM = 6,
  SL_FRAME_ROWS = 7,
  SL_FRAME_DONE = 8,
  SL_FRAME_CANCEL = 9,
  SL_FRAME_HELLO = 10,
  SL_FRAME_SYNC = 11,        /* coordinator: the query is over for me */
  SL_FRAME_SYNC_ACK = 12,    /* node: and for me; nothing more follows */
  SL_FRAME_READY = 13,       /* node: every source is open (pre-generated) */
  SL_FRAME_XLISTEN = 14,     /* coordinator: listen for the exchange */
  SL_FRAME_XADDR = 15,       /* node: where it listens, per channel */
  SL_FRAME_STAGE_ROWS = 16,  /* on a link: a join side's rows */
  SL_FRAME_STAGE_WM = 17,    /* on a link: and its watermark */
  SL_FRAME_STAGE_HELLO = 18, /* on a link, first: the leaf it carries */
  SL_FRAME_HEARTBEAT = 19,   /* node: still here (during a query) */
  SL_FRAME_LATE_ROWS = 20,   /* node: late records for the coordinator's
                              * late table (ROWS' form, the stream's
                              * leaves) */
  SL_FRAME_PROGRESS = 21,    /* node: events read and windows fired so far
                              * (two uint64), every 250 ms of a query */
  SL_FRAME_CREDIT = 22,      /* coordinator: bulk frames taken (below) */
} sl_frame_type;

/* During a query a node sends HEARTBEAT every SL_HEARTBEAT_MS (from a
 * thread of its own that only reads and beats, so its workers' CPU does
 * not matter; skipped while a frame is being sent, which is heard too); a
 * coordinator waiting for a node's frames that hears nothing from it, not
 * even a heartbeat, for SL_SILENCE_MS stops the query and names the node
 * (its process hangs, or its host or the network to it is gone without
 * the connection closing).  Silence counts only while the coordinator
 * listens: a node whose frames wait unread on the connection (the
 * coordinator was descheduled, busy with another node's frames, or holds
 * back this node's rows for backpressure, so the node's sends block) is
 * not silent. */
#define SL_HEARTBEAT_MS 250
#define SL_SILENCE_MS 2000
/* The silence rule, for a coordinator that last heard from the node on fd
 * at `heard` (sl_clock_seconds): SL_OK while it is shorter, or while
 * something waits to be read on fd (the caller reads it next); else SL_EIO
 * with the error (the caller names the node), and the connection is shut
 * down, so that the round trip after the query sees the node gone at once
 * rather than waiting for it again, and the node, should it wake, sees its
 * coordinator gone and stops. */
int sl_node_check_silence(int fd, double heard, sl_error *err);

/* All n bytes to a stream socket (no SIGPIPE); SL_EIO when the
 * connection broke. */
int sl_send_all(int fd, const void *p, size_t n, sl_error *err);

/* No frame is larger: a window's partial state of a huge table is sent in
 * pieces by nobody yet, so a larger length means a broken peer. */
#define SL_FRAME_MAX ((uint32_t)1 << 30)

/* Write one frame (payload = a then b, either may be empty).  SL_EIO with
 * a message when the peer is gone. */
int sl_frame_send(int fd, uint32_t type, const void *a, size_t alen,
                  const void *b, size_t blen, sl_error *err);

/* Where a node's frames to its coordinator go during a query: the control
 * socket, and the lock that keeps whole the frames of the query's threads
 * and of the heartbeat, which share it (NULL: one thread sends). */
typedef struct sl_node_credit sl_node_credit;
typedef struct sl_frame_out {
  int fd; /* -1: none */
  pthread_mutex_t *lock;
  sl_node_credit *credit; /* bulk frames wait for it (below); NULL: none */
} sl_frame_out;
int sl_frame_out_send(const sl_frame_out *o, uint32_t type, const void *a,
                      size_t alen, const void *b, size_t blen, sl_error *err);

/* Backpressure between a node and its coordinator.  A node's bulk frames
 * (ROWS, PARTIAL, LATE_ROWS) go only while fewer than
 * SL_NODE_CREDIT_FRAMES of them, and fewer than SL_NODE_CREDIT_BYTES of
 * their payload, have been sent and not yet taken by the coordinator's
 * executor; the coordinator says what it has taken with CREDIT [frames
 * u64][bytes u64] (totals since the query began) as it takes them, so a
 * slow consumer there holds the node's sender back (and with it the
 * node's workers and sources).  The coordinator never stops reading the
 * connection: heartbeats and the other frames keep coming while the node
 * waits, so the silence rule still tells a hung node from a held one.  The
 * node's watcher (the thread reading CANCEL) reads CREDIT. */
#define SL_NODE_CREDIT_FRAMES 32
#define SL_NODE_CREDIT_BYTES ((uint64_t)8 << 20)
struct sl_node_credit {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint64_t sent_frames, sent_bytes;   /* by the node's senders */
  uint64_t taken_frames, taken_bytes; /* by the coordinator (CREDIT) */
  const sl_cancel *cancel;            /* the query's: waits stop */
};
void sl_node_credit_init(sl_node_credit *c, const sl_cancel *cancel);
void sl_node_credit_destroy(sl_node_credit *c);
/* A CREDIT frame's payload: SL_EIO if it is not one. */
int sl_node_credit_grant(sl_node_credit *c, const void *payload, size_t len,
                         sl_error *err);
/* Whether a bulk frame could go now. */
bool sl_node_credit_open(sl_node_credit *c);
/* Wait until a bulk frame may go (checking the cancel token every few
 * milliseconds; SL_ECANCELLED once it is requested), then count one of
 * `bytes`. */
int sl_node_credit_take(sl_node_credit *c, size_t bytes, sl_error *err);
/* The coordinator: CREDIT with these totals. */
int sl_node_credit_send(int fd, uint64_t frames, uint64_t bytes, sl_error *err);
/* A coordinator that takes a node's bulk frames as it reads them: one
 * more of `bytes` taken (taken: its totals, frames then bytes), and CREDIT
 * sent unless the socket is full (the next one carries the totals). */
void sl_node_credit_took(int fd, uint64_t taken[2], size_t bytes);

/* Read one frame into payload (reset first).  timeout_ms < 0: wait
 * forever; on timeout returns SL_CHANNEL_TIMEOUT-like 2 with nothing read.
 * SL_EIO when the connection ended or broke (message says which);
 * SL_EINVAL for a frame longer than any peer sends (1 GiB), of which
 * nothing is read: the caller drops the connection. */
#define SL_FRAME_TIMEOUT 2
int sl_frame_recv(int fd, uint32_t *type, sl_strbuf *payload, int timeout_ms,
                  sl_error *err);

/* The channels between nodes (QUERY's exchange field): shm meets at names
 * made from the query id (nodes forked on one host); tcp and verbs at the
 * addresses the nodes gave in XADDR. */
typedef enum sl_exchange_transport {
  SL_XPORT_NONE = 0,
  SL_XPORT_SHM = 1,
  SL_XPORT_TCP = 2,
  SL_XPORT_VERBS = 3,
} sl_exchange_transport;

static inline const char *sl_exchange_transport_name(int t) {
  return t == SL_XPORT_TCP     ? "tcp"
         : t == SL_XPORT_VERBS ? "verbs"
         : t == SL_XPORT_SHM   ? "shm"
                               : "none";
}

#endif
