/* node_messages.h - the messages of a cluster's connections (node_frames.h),
 * encoded and decoded in one place.
 *
 * Every payload that arrives from the network goes through one of the
 * decoders below before any of it is used: its length is checked against
 * what the message must hold, every count and index against its bounds
 * and against the payload, every offset against the bytes that are there.
 * A payload that fails is SL_EINVAL with a message naming the message and
 * what is wrong; the connection is then out of step and the caller drops
 * it.  The decoders never allocate more than the payload's size implies
 * (plus a bounded table), so a hostile peer cannot make a node allocate
 * gigabytes with a short message.  tests/fuzz/fuzz_messages.c feeds them
 * arbitrary bytes under AddressSanitizer.
 *
 * Ownership: decoded structures point into the caller's payload (valid as
 * long as it is) unless a field says otherwise.
 */
#ifndef SLUICE_NODE_MESSAGES_H
#define SLUICE_NODE_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/row/row.h"

/* The most nodes a cluster may have: bounds the tables a node sizes by
 * the node count a message gives (node_count^2 channel addresses). */
#define SL_NODE_MAX 1024
/* The most leaves of a staged plan whose rows come to a node over links. */
#define SL_NODE_MAX_FED 8
/* The most workers a node says it has (HELLO). */
#define SL_NODE_MAX_WORKERS 4096

/* QUERY (node_frames.h): what a node runs. */
typedef struct sl_query_msg {
  int node_index, node_count; /* 0 <= node_index < node_count */
  int strategy;               /* sl_strategy (plan.h) */
  int transport;              /* sl_exchange_transport between nodes */
  uint64_t query_id;
  int leaf;          /* -1: the whole plan; k: leaf k of the staged plan */
  int fed;           /* -1, or the leaf whose rows come over links */
  int nfed;          /* 0, or: the rows of leaves 0 .. nfed - 1 all come so */
  int join;          /* sl_join_strategy (plan.h) */
  const char *addrs; /* every node's XADDR lines (not NUL-terminated) */
  size_t addrs_len;
  const char *sql; /* the statement (not NUL-terminated) */
  size_t sql_len;
} sl_query_msg;

/* The payload's fixed part and the address lines (the statement follows
 * as the frame's second part, sl_frame_send). */
void sl_query_msg_encode(const sl_query_msg *m, sl_strbuf *out);
int sl_query_msg_decode(const void *payload, size_t len, sl_query_msg *m,
                        sl_error *err);

/* XLISTEN: listen for the channels of a query. */
typedef struct sl_xlisten_msg {
  int node_index, node_count;
  int what;      /* 1: exchange between workers, 2: leaders, 3: links */
  int transport; /* SL_XPORT_TCP or SL_XPORT_VERBS */
} sl_xlisten_msg;

void sl_xlisten_msg_encode(const sl_xlisten_msg *m, sl_strbuf *out);
int sl_xlisten_msg_decode(const void *payload, size_t len, sl_xlisten_msg *m,
                          sl_error *err);

/* XADDR lines of one kind -> a table of cells addresses (malloc'd, each
 * entry malloc'd or NULL; free with sl_xaddr_free): kind 0 "sender owner
 * host:port" (the exchange between workers; cell sender * n + owner, n
 * members), 'L' "L sender leader host:port" (the partition leaders'; n
 * nodes, the same cells), 'S' "S node host:port" (a join's links; cell
 * node).  Lines of other kinds, malformed lines and indexes out of range
 * are skipped; *found counts the lines taken.  n must be at most
 * SL_NODE_MAX * SL_NODE_MAX_WORKERS (the caller's own bound). */
char **sl_xaddr_parse(const char *text, size_t len, int n, char kind,
                      int *found);
void sl_xaddr_free(char **addrs, int n, char kind);

/* HELLO: [workers u32][version]["\nrdma " device line].  version and
 * device are copied, NUL-terminated and cut to their sizes; device is the
 * RDMA device ("rxe0 10.0.2.15 1 Ethernet") when *rdma, else why there is
 * none. */
int sl_hello_msg_decode(const void *payload, size_t len, int *workers,
                        char *version, size_t version_size, bool *rdma,
                        char *device, size_t device_size, sl_error *err);

/* ERROR: [code i32][message].  *code is a negative SL_E* code (anything
 * else becomes SL_EINTERNAL); message points into the payload. */
int sl_error_msg_decode(const void *payload, size_t len, int *code,
                        const char **message, int *message_len, sl_error *err);

/* WM and STAGE_WM: [watermark i64]. */
int sl_wm_msg_decode(const void *payload, size_t len, int64_t *wm,
                     sl_error *err);

/* STAGE_HELLO: [leaf u32], which must be below nleaves. */
int sl_stage_hello_decode(const void *payload, size_t len, int nleaves,
                          int *leaf, sl_error *err);

/* PARTIAL: [window start i64][end i64][group table wire form]: the window
 * (start < end) and the table's bytes (aggregate.h decodes them). */
int sl_partial_msg_decode(const void *payload, size_t len, int64_t *start,
                          int64_t *end, const uint8_t **table,
                          size_t *table_len, sl_error *err);

/* DONE: [sl_query_stats] of this build, exactly; jit_status is
 * NUL-terminated. */
struct sl_query_stats;
int sl_stats_msg_decode(const void *payload, size_t len,
                        struct sl_query_stats *st, sl_error *err);

/* ROWS (and STAGE_ROWS): [rows u32][heap bytes u32][the sender's buffer
 * size u32] + the rows and the string heap, strings swizzled (row.h).
 * sl_rows_msg_check reads and checks the header against the payload and
 * the layout (h: rows, heap, size); sl_rows_msg_fill fills a buffer of
 * exactly h[2] bytes of that layout and unswizzles it, refusing strings
 * outside its heap.  sl_rows_msg_decode does both into out, re-sizing it
 * when its size differs. */
int sl_rows_msg_check(const void *payload, size_t len,
                      const sl_row_layout *layout, uint32_t h[3],
                      sl_error *err);
int sl_rows_msg_fill(const void *payload, const uint32_t h[3], sl_buffer *b,
                     sl_error *err);
int sl_rows_msg_decode(const void *payload, size_t len,
                       const sl_row_layout *layout, sl_buffer *out,
                       sl_error *err);

#endif
