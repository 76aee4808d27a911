/* node_messages.c - encoding and checked decoding of the messages between
 * a coordinator and its nodes and between nodes (node_messages.h).
 *
 * The rule: nothing read from a socket is used before a function here has
 * checked it against the payload's length and its own bounds.  Counts that
 * size tables (nodes, workers, leaves) are bounded so that a short message
 * cannot ask for a huge allocation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/net/node_frames.h"
#include "sluice/net/node_messages.h"
#include "sluice/planner/plan.h"

static int bad(sl_error *err, const char *what, const char *why) {
  return sl_error_set(err, SL_EINVAL,
                      "a %s message is malformed (%s): is the other side a "
                      "Sluice node of this build?",
                      what, why);
}

/* ---- QUERY ----------------------------------------------------------------
 */

/* [node index][node count][strategy][transport][query id lo][hi][address
 * list length][leaf + 1][fed + 1 (u8) | nfed (u8) << 8 | join << 16] */
enum { QUERY_HEAD = 9 };

void sl_query_msg_encode(const sl_query_msg *m, sl_strbuf *out) {
  uint32_t h[QUERY_HEAD] = {(uint32_t)m->node_index,
                            (uint32_t)m->node_count,
                            (uint32_t)m->strategy,
                            (uint32_t)m->transport,
                            (uint32_t)m->query_id,
                            (uint32_t)(m->query_id >> 32),
                            (uint32_t)m->addrs_len,
                            (uint32_t)(m->leaf + 1),
                            ((uint32_t)(m->fed + 1) & 0xff) |
                                ((uint32_t)m->nfed & 0xff) << 8 |
                                (uint32_t)m->join << 16};
  sl_strbuf_appendn(out, (const char *)h, sizeof h);
  if (m->addrs_len)
    sl_strbuf_appendn(out, m->addrs, m->addrs_len);
}

int sl_query_msg_decode(const void *payload, size_t len, sl_query_msg *m,
                        sl_error *err) {
  uint32_t h[QUERY_HEAD];
  memset(m, 0, sizeof *m);
  if (len < sizeof h)
    return bad(err, "QUERY", "cut short");
  memcpy(h, payload, sizeof h);
  if (h[1] < 1 || h[1] > SL_NODE_MAX)
    return bad(err, "QUERY", "node count out of range");
  if (h[0] >= h[1])
    return bad(err, "QUERY", "node index not below the node count");
  if (h[2] > SL_STRATEGY_REPARTITION)
    return bad(err, "QUERY", "unknown strategy");
  if (h[3] > SL_XPORT_VERBS)
    return bad(err, "QUERY", "unknown transport");
  if (h[6] > len - sizeof h)
    return bad(err, "QUERY", "the address list runs past the message");
  uint32_t fed = h[8] & 0xff, nfed = (h[8] >> 8) & 0xff, join = h[8] >> 16;
  if (fed > SL_NODE_MAX_FED || nfed > SL_NODE_MAX_FED)
    return bad(err, "QUERY", "more fed leaves than a node takes");
  if (h[7] > 64)
    return bad(err, "QUERY", "leaf out of range");
  if (join > SL_JOIN_LATE_MERGE_ROWS)
    return bad(err, "QUERY", "unknown join strategy");
  if (nfed > 0 && fed == 0)
    return bad(err, "QUERY", "fed leaves without a fed leaf");
  m->node_index = (int)h[0];
  m->node_count = (int)h[1];
  m->strategy = (int)h[2];
  m->transport = (int)h[3];
  m->query_id = (uint64_t)h[4] | (uint64_t)h[5] << 32;
  m->addrs_len = h[6];
  m->leaf = (int)h[7] - 1;
  m->fed = (int)fed - 1;
  m->nfed = (int)nfed;
  m->join = (int)join;
  m->addrs = (const char *)payload + sizeof h;
  m->sql = m->addrs + m->addrs_len;
  m->sql_len = len - sizeof h - m->addrs_len;
  return SL_OK;
}

/* ---- XLISTEN and XADDR -----------------------------------------------------
 */

void sl_xlisten_msg_encode(const sl_xlisten_msg *m, sl_strbuf *out) {
  uint32_t h[4] = {(uint32_t)m->node_index, (uint32_t)m->node_count,
                   (uint32_t)m->what, (uint32_t)m->transport};
  sl_strbuf_appendn(out, (const char *)h, sizeof h);
}

int sl_xlisten_msg_decode(const void *payload, size_t len, sl_xlisten_msg *m,
                          sl_error *err) {
  uint32_t h[4];
  memset(m, 0, sizeof *m);
  if (len != sizeof h)
    return bad(err, "XLISTEN", "not 16 bytes");
  memcpy(h, payload, sizeof h);
  if (h[1] < 1 || h[1] > SL_NODE_MAX || h[0] >= h[1])
    return bad(err, "XLISTEN", "node index or count out of range");
  if (h[2] < 1 || h[2] > 3)
    return bad(err, "XLISTEN", "unknown kind of channel");
  if (h[3] != SL_XPORT_TCP && h[3] != SL_XPORT_VERBS)
    return sl_error_set(err, SL_EINVAL,
                        "XLISTEN asked for transport %u (tcp or verbs only)",
                        h[3]);
  if (h[2] == 3 && h[3] != SL_XPORT_TCP)
    return bad(err, "XLISTEN", "links are tcp only");
  m->node_index = (int)h[0];
  m->node_count = (int)h[1];
  m->what = (int)h[2];
  m->transport = (int)h[3];
  return SL_OK;
}

static size_t xaddr_cells(int n, char kind) {
  return kind == 'S' ? (size_t)n : (size_t)n * (size_t)n;
}

char **sl_xaddr_parse(const char *text, size_t len, int n, char kind,
                      int *found) {
  *found = 0;
  if (n < 1)
    return NULL;
  size_t cells = xaddr_cells(n, kind);
  char **addrs = calloc(cells, sizeof *addrs);
  char *copy = malloc(len + 1);
  if (!addrs || !copy)
    abort();
  if (len) /* text may be NULL then (an empty payload) */
    memcpy(copy, text, len);
  copy[len] = '\0';
  char *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    int snd, rcv = 0;
    char where[160];
    bool ok = kind == 'S' ? sscanf(line, "S %d %159s", &snd, where) == 2
              : kind == 'L'
                  ? sscanf(line, "L %d %d %159s", &snd, &rcv, where) == 3
                  : sscanf(line, "%d %d %159s", &snd, &rcv, where) == 3;
    if (!ok || snd < 0 || rcv < 0 || snd >= n || rcv >= n)
      continue;
    size_t at = kind == 'S' ? (size_t)snd : (size_t)snd * (size_t)n + rcv;
    free(addrs[at]);
    addrs[at] = strdup(where);
    if (!addrs[at])
      abort();
    (*found)++;
  }
  free(copy);
  return addrs;
}

void sl_xaddr_free(char **addrs, int n, char kind) {
  if (!addrs || n < 1)
    return;
  size_t cells = xaddr_cells(n, kind);
  for (size_t i = 0; i < cells; i++)
    free(addrs[i]);
  free(addrs);
}

/* ---- HELLO, ERROR, WM, STAGE_HELLO, PARTIAL, DONE --------------------------
 */

int sl_hello_msg_decode(const void *payload, size_t len, int *workers,
                        char *version, size_t version_size, bool *rdma,
                        char *device, size_t device_size, sl_error *err) {
  uint32_t w;
  if (len < sizeof w)
    return bad(err, "HELLO", "cut short");
  memcpy(&w, payload, sizeof w);
  if (w < 1 || w > SL_NODE_MAX_WORKERS)
    return bad(err, "HELLO", "worker count out of range");
  *workers = (int)w;
  /* "version\nrdma NAME ADDRESS PORT LINK" or "version\nrdma - WHY" */
  const char *text = (const char *)payload + sizeof w;
  const char *end = (const char *)payload + len;
  const char *line = memchr(text, '\n', (size_t)(end - text));
  const char *vend = line ? line : end;
  snprintf(version, version_size, "%.*s", (int)(vend - text), text);
  *rdma = false;
  snprintf(device, device_size, "not reported");
  if (line && end - line > 6 && memcmp(line, "\nrdma ", 6) == 0) {
    line += 6;
    *rdma = *line != '-';
    if (!*rdma && end - line >= 2)
      line += 2;
    snprintf(device, device_size, "%.*s", (int)(end - line), line);
  }
  return SL_OK;
}

int sl_error_msg_decode(const void *payload, size_t len, int *code,
                        const char **message, int *message_len, sl_error *err) {
  int32_t c;
  if (len < sizeof c)
    return bad(err, "ERROR", "cut short");
  if (len - sizeof c > (size_t)1 << 20)
    return bad(err, "ERROR", "a message longer than 1 MiB");
  memcpy(&c, payload, sizeof c);
  *code = c < 0 && c >= SL_EPERM ? c : SL_EINTERNAL;
  *message = (const char *)payload + sizeof c;
  *message_len = (int)(len - sizeof c);
  return SL_OK;
}

int sl_wm_msg_decode(const void *payload, size_t len, int64_t *wm,
                     sl_error *err) {
  if (len != sizeof *wm)
    return bad(err, "watermark", "not 8 bytes");
  memcpy(wm, payload, sizeof *wm);
  return SL_OK;
}

int sl_stage_hello_decode(const void *payload, size_t len, int nleaves,
                          int *leaf, sl_error *err) {
  uint32_t l;
  if (len != sizeof l)
    return bad(err, "STAGE_HELLO", "not 4 bytes");
  memcpy(&l, payload, sizeof l);
  if (l >= (uint32_t)nleaves)
    return bad(err, "STAGE_HELLO", "not a leaf of this query");
  *leaf = (int)l;
  return SL_OK;
}

int sl_partial_msg_decode(const void *payload, size_t len, int64_t *start,
                          int64_t *end, const uint8_t **table,
                          size_t *table_len, sl_error *err) {
  int64_t se[2];
  if (len < sizeof se)
    return bad(err, "PARTIAL", "cut short");
  memcpy(se, payload, sizeof se);
  if (se[0] >= se[1])
    return bad(err, "PARTIAL", "a window that ends before it starts");
  *start = se[0];
  *end = se[1];
  *table = (const uint8_t *)payload + sizeof se;
  *table_len = len - sizeof se;
  return SL_OK;
}

int sl_stats_msg_decode(const void *payload, size_t len, sl_query_stats *st,
                        sl_error *err) {
  if (len != sizeof *st)
    return bad(err, "DONE", "not the statistics of this build");
  memcpy(st, payload, sizeof *st);
  st->jit_status[sizeof st->jit_status - 1] = '\0';
  if (st->workers < 0 || st->workers > SL_NODE_MAX_WORKERS)
    return bad(err, "DONE", "worker count out of range");
  return SL_OK;
}

/* ---- ROWS ------------------------------------------------------------------
 */

int sl_rows_msg_check(const void *payload, size_t len,
                      const sl_row_layout *layout, uint32_t h[3],
                      sl_error *err) {
  if (len < 3 * sizeof(uint32_t))
    return sl_error_set(err, SL_EIO, "a result buffer was cut short");
  memcpy(h, payload, 3 * sizeof(uint32_t));
  size_t rows_bytes = (size_t)h[0] * layout->width;
  if (len != 3 * sizeof(uint32_t) + rows_bytes + h[1])
    return sl_error_set(err, SL_EIO, "a result buffer has the wrong size");
  if (h[2] < rows_bytes + h[1])
    return sl_error_set(err, SL_EIO, "a result buffer does not fit");
  /* The size is the sender's buffer's, which sl_buffer_init made (a
   * multiple of 64) and which no frame exceeds: anything else would have
   * this side allocate what the message does not carry. */
  if (h[2] > SL_FRAME_MAX || h[2] % 64 != 0)
    return sl_error_set(err, SL_EIO,
                        "a result buffer claims a size of %u bytes", h[2]);
  return SL_OK;
}

int sl_rows_msg_fill(const void *payload, const uint32_t h[3], sl_buffer *b,
                     sl_error *err) {
  const char *p = payload;
  size_t rows_bytes = (size_t)h[0] * b->layout->width;
  if (b->cap != h[2])
    return sl_error_set(err, SL_EINTERNAL,
                        "a result buffer of %u bytes filled into one of %u",
                        h[2], b->cap);
  memcpy(b->data, p + 3 * sizeof(uint32_t), rows_bytes);
  memcpy(b->data + b->cap - h[1], p + 3 * sizeof(uint32_t) + rows_bytes, h[1]);
  b->nrows = h[0];
  b->heap_used = h[1];
  return sl_buffer_unswizzle(b, err);
}

int sl_rows_msg_decode(const void *payload, size_t len,
                       const sl_row_layout *layout, sl_buffer *out,
                       sl_error *err) {
  uint32_t h[3];
  int rc = sl_rows_msg_check(payload, len, layout, h, err);
  if (rc != SL_OK)
    return rc;
  /* The strings' offsets count from the sender's buffer of h[2] bytes,
   * whose heap ends at its end: this one must be that size. */
  if (out->cap != h[2] || out->layout != layout) {
    sl_buffer_free(out);
    sl_buffer_init(out, layout, h[2]);
  }
  return sl_rows_msg_fill(payload, h, out, err);
}
