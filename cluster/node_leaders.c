/* node_leaders.c - the channels between nodes for late merge at partition
 * leaders, their receiver threads, and shipping split partial states
 * (node_leaders.h). */
#include "node_leaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sl_node_leaders;

typedef struct receiver {
  struct sl_node_leaders *l;
  int from;
  pthread_t thread;
  bool started;
} receiver;

struct sl_node_leaders {
  exec_query *q;
  exec_shared *wake;
  int me, n;
  const sl_cancel *cancel; /* the node's query token: the coordinator asked
                            * to stop */
  atomic_bool stop;        /* ours: the query is over, receivers leave */
  sl_channel **out;        /* [n]: to node p's leader (NULL for me) */
  sl_channel **in;         /* [n]: from node p (NULL for me) */
  receiver *rx;
  sl_leader_store store;
  int64_t *sent_wm; /* per peer: the watermark it last got from us */
  bool shipped;     /* something went to another node this round */
  uint64_t epochs, bytes_out;
  sl_strbuf *parts;     /* [n] scratch for the split */
  pthread_mutex_t lock; /* rc, err */
  int rc;
  sl_error err;
};

static void wake(sl_node_leaders *l) {
  pthread_mutex_lock(&l->wake->lock);
  pthread_cond_broadcast(&l->wake->cond);
  pthread_mutex_unlock(&l->wake->lock);
}

static void fail(sl_node_leaders *l, int rc, sl_error *err) {
  pthread_mutex_lock(&l->lock);
  if (l->rc == SL_OK) {
    l->rc = rc;
    sl_error_move(&l->err, err);
  }
  pthread_mutex_unlock(&l->lock);
  sl_error_clear(err);
  wake(l);
}

static int channel_broke(sl_channel *ch, const char *dir, int peer, int rc,
                         sl_error *err) {
  sl_error why = {0};
  int code = sl_channel_error(ch, &why);
  if (code == SL_OK)
    code = rc < 0 ? rc : SL_EIO;
  sl_error_set(err, code, "the partition leader channel %s node %d broke%s%s",
               dir, peer, why.message ? ": " : "",
               why.message ? why.message : "");
  sl_error_clear(&why);
  return code;
}

/* ---- receiving -------------------------------------------------------- */

static void *receive_main(void *arg) {
  receiver *r = arg;
  sl_node_leaders *l = r->l;
  sl_channel *ch = l->in[r->from];
  sl_strbuf msg = SL_STRBUF_INIT;
  sl_error err = {0};
  int idle = 0;
  for (;;) {
    if (atomic_load(&l->stop))
      break;
    const sl_channel_slot *s = sl_channel_poll(ch);
    if (s)
      idle = 0;
    if (!s) {
      int st = sl_channel_status(ch);
      if (st == SL_CHANNEL_END) {
        /* The sender has sent everything (its last watermark was +inf
         * already; closing says so again, for a sender that failed). */
        sl_leader_store_advance(&l->store, r->from, INT64_MAX);
        wake(l);
        break;
      }
      if (st != SL_OK) {
        fail(l, channel_broke(ch, "from", r->from, st, &err), &err);
        break;
      }
      /* State arrives once per epoch: after a short wait (the rest of a
       * chunked part), nap 1 ms between looks instead of the channel's
       * back-off, whose naps of at most 200 us would take thousands of
       * wake-ups a second from the workers on a busy host.  A leader
       * fires a window 1 ms later at worst. */
      int w = sl_channel_wait_slot(ch, idle < 4 ? 200 * 1000 : 0);
      if (w < 0 && w != SL_CHANNEL_TIMEOUT && !atomic_load(&l->stop)) {
        fail(l, channel_broke(ch, "from", r->from, w, &err), &err);
        break;
      }
      if (w == SL_CHANNEL_TIMEOUT && ++idle >= 4) {
        struct timespec nap = {0, 1000 * 1000};
        nanosleep(&nap, NULL);
      }
      continue;
    }
    uint32_t flags = s->hdr.flags;
    int64_t wm = s->hdr.watermark;
    if (flags & SL_NODE_LEADERS_F_PART)
      sl_strbuf_appendn(&msg, s->payload, s->len);
    sl_channel_release(ch);
    if (flags & SL_NODE_LEADERS_F_MORE)
      continue;
    int rc = SL_OK;
    if (flags & SL_NODE_LEADERS_F_PART) {
      int64_t se[2];
      if (msg.len < sizeof se) {
        rc = sl_error_set(&err, SL_EIO,
                          "a state part from node %d was cut short", r->from);
      } else {
        memcpy(se, msg.data, sizeof se);
        rc = sl_leader_store_merge(&l->store, se[0], se[1],
                                   (const uint8_t *)msg.data + sizeof se,
                                   msg.len - sizeof se, &err);
      }
      sl_strbuf_reset(&msg);
    }
    if (rc != SL_OK) {
      fail(l, rc, &err);
      break;
    }
    sl_leader_store_advance(&l->store, r->from, wm);
    wake(l);
  }
  sl_strbuf_free(&msg);
  sl_error_clear(&err);
  return NULL;
}

/* ---- sending ---------------------------------------------------------- */

/* The next slot to node p, waiting for a credit (the peer's receiver
 * thread always drains, so a wait ends unless the peer is gone). */
static void *acquire(sl_node_leaders *l, int p, sl_error *err, int *rc) {
  sl_channel *ch = l->out[p];
  for (;;) {
    void *slot = sl_channel_acquire(ch);
    if (slot)
      return slot;
    int st = sl_channel_status(ch);
    if (st != SL_OK) {
      *rc = channel_broke(ch, "to", p, st, err);
      return NULL;
    }
    if (atomic_load(&l->stop) || sl_cancel_pending(l->cancel)) {
      *rc = sl_error_set(err, SL_ECANCELLED, "query cancelled");
      return NULL;
    }
    int w = sl_channel_wait_credit(ch, 20 * 1000000);
    if (w < 0) {
      *rc = channel_broke(ch, "to", p, w, err);
      return NULL;
    }
  }
}

/* One message to node p: bytes (may be empty) over as many slots as
 * needed, the watermark on the last. */
static int send_message(sl_node_leaders *l, int p, const char *bytes,
                        size_t len, bool part, int64_t wm, sl_error *err) {
  sl_channel *ch = l->out[p];
  uint32_t room = sl_channel_payload_size(ch);
  size_t off = 0;
  do {
    int rc = SL_OK;
    uint8_t *slot = acquire(l, p, err, &rc);
    if (!slot)
      return rc;
    uint32_t k = len - off > room ? room : (uint32_t)(len - off);
    if (k) /* a watermark-only message has no bytes (bytes may be NULL) */
      memcpy(slot, bytes + off, k);
    off += k;
    sl_channel_header h = {0, 0, INT64_MIN};
    if (part)
      h.flags |= SL_NODE_LEADERS_F_PART;
    if (off < len)
      h.flags |= SL_NODE_LEADERS_F_MORE;
    else
      h.watermark = wm;
    rc = sl_channel_publish(ch, k, &h);
    if (rc != SL_OK)
      return channel_broke(ch, "to", p, rc, err);
  } while (off < len);
  return SL_OK;
}

int sl_node_leaders_ship(sl_node_leaders *l, int64_t start, int64_t end,
                         const sl_group_table *t, sl_error *err) {
  int64_t se[2] = {start, end};
  for (int p = 0; p < l->n; p++) {
    sl_strbuf_reset(&l->parts[p]);
    sl_strbuf_appendn(&l->parts[p], (const char *)se, sizeof se);
  }
  sl_leader_split(t, l->n, l->q->plan->npartition_keys,
                  l->q->plan->partition_keys, l->parts, NULL);
  int rc = SL_OK;
  for (int p = 0; p < l->n && rc == SL_OK; p++) {
    sl_strbuf *b = &l->parts[p];
    if (b->len <= sizeof se)
      continue; /* no group of this partition */
    if (p == l->me) {
      rc = sl_leader_store_merge(&l->store, start, end,
                                 (const uint8_t *)b->data + sizeof se,
                                 b->len - sizeof se, err);
      continue;
    }
    /* The watermark does not move with a part: it moves once the whole
     * round is sent (sl_node_leaders_watermark). */
    rc = send_message(l, p, b->data, b->len, true, INT64_MIN, err);
    l->bytes_out += b->len;
    l->shipped = true;
  }
  return rc;
}

int sl_node_leaders_watermark(sl_node_leaders *l, int64_t wm, sl_error *err) {
  int rc = SL_OK;
  for (int p = 0; p < l->n && rc == SL_OK; p++) {
    if (p == l->me || wm <= l->sent_wm[p])
      continue;
    rc = send_message(l, p, NULL, 0, false, wm, err);
    if (rc == SL_OK) {
      l->sent_wm[p] = wm;
      if (wm == INT64_MAX)
        sl_channel_close(l->out[p]);
    }
  }
  if (rc == SL_OK)
    sl_leader_store_advance(&l->store, l->me, wm);
  return rc;
}

void sl_node_leaders_epoch_done(sl_node_leaders *l) {
  if (l->shipped)
    l->epochs++;
  l->shipped = false;
}

int sl_node_leaders_status(sl_node_leaders *l, sl_error *err) {
  pthread_mutex_lock(&l->lock);
  int rc = l->rc;
  if (rc != SL_OK)
    sl_error_set(err, rc, "%s", l->err.message ? l->err.message : "failed");
  pthread_mutex_unlock(&l->lock);
  return rc;
}

void sl_node_leaders_counts(sl_node_leaders *l, uint64_t *epochs,
                            uint64_t *bytes) {
  *epochs = l->epochs;
  *bytes = l->bytes_out;
}

sl_leader_store *sl_node_leaders_store(sl_node_leaders *l) {
  return &l->store;
}

/* ---- set-up ----------------------------------------------------------- */

int sl_node_leaders_open(exec_query *q, const sl_exec_nodes *nodes,
                         exec_shared *wk, sl_node_leaders **out,
                         sl_error *err) {
  sl_node_leaders *l = calloc(1, sizeof *l);
  if (!l)
    abort();
  int n = nodes->node_count, me = nodes->node_index;
  l->q = q;
  l->wake = wk;
  l->me = me;
  l->n = n;
  l->cancel = nodes->cancel;
  atomic_init(&l->stop, false);
  l->out = calloc((size_t)n, sizeof *l->out);
  l->in = calloc((size_t)n, sizeof *l->in);
  l->rx = calloc((size_t)n, sizeof *l->rx);
  l->sent_wm = malloc(sizeof(int64_t) * (size_t)n);
  l->parts = calloc((size_t)n, sizeof *l->parts);
  if (!l->out || !l->in || !l->rx || !l->sent_wm || !l->parts)
    abort();
  for (int p = 0; p < n; p++)
    l->sent_wm[p] = INT64_MIN;
  pthread_mutex_init(&l->lock, NULL);
  sl_leader_store_init(&l->store, n,
                       q->plan->windowed ? q->plan->window.unit_us : 0,
                       q->agg.key_layout, &q->agg.aggs, q->agg.slot_pool);
  l->store.memory = q->memory;
  *out = l;

  /* tcp or verbs: at the addresses of the listeners XLISTEN opened. */
  bool by_address = nodes->exchange_transport == SL_XPORT_TCP ||
                    nodes->exchange_transport == SL_XPORT_VERBS;
  uint32_t slot_size = (q->buffer_size + 63u) & ~63u;
  int *listen_fd = malloc(sizeof(int) * (size_t)n);
  if (!listen_fd)
    abort();
  sl_accepting a = {by_address
                        ? sl_exchange_transport_name(nodes->exchange_transport)
                        : "shm",
                    n,
                    0,
                    0,
                    listen_fd,
                    l->in,
                    slot_size,
                    nodes->secret,
                    nodes->cancel,
                    SL_OK,
                    {0},
                    0,
                    false};
  int rc = SL_OK;
  /* Listen for every peer first, so that their connects find us. */
  for (int p = 0; p < n; p++) {
    listen_fd[p] = -1;
    if (p == me || rc != SL_OK)
      continue;
    if (by_address) {
      listen_fd[p] =
          nodes->leader_listen_fds ? nodes->leader_listen_fds[p * n + me] : -1;
      if (listen_fd[p] < 0)
        rc = sl_error_set(err, SL_EINTERNAL,
                          "no listening socket for the partition leader "
                          "channel from node %d",
                          p);
      continue;
    }
    char name[96], bound[128];
    snprintf(name, sizeof name, "@sluice-%llx-L%d-%d",
             (unsigned long long)nodes->query_id, p, me);
    rc =
        sl_channel_listen("shm", name, &listen_fd[p], bound, sizeof bound, err);
  }
  if (rc == SL_OK)
    rc = sl_accepting_start(&a, "partition leaders' channels", err);
  sl_channel_config cfg = {0, slot_size};
  for (int p = 0; p < n && rc == SL_OK; p++) {
    if (p == me)
      continue;
    char name[96];
    snprintf(name, sizeof name, "@sluice-%llx-L%d-%d",
             (unsigned long long)nodes->query_id, me, p);
    const char *to = name;
    if (by_address)
      to = nodes->leader_addrs ? nodes->leader_addrs[me * n + p] : NULL;
    if (!to) {
      rc = sl_error_set(err, SL_EINTERNAL,
                        "no address for the partition leader channel to "
                        "node %d",
                        p);
      break;
    }
    sl_channel_endpoint ep = {a.transport,
                              SL_CHANNEL_PRODUCER,
                              SL_CHANNEL_VIA_CONNECT,
                              -1,
                              to,
                              0,
                              a.secret,
                              a.cancel};
    rc = sl_channel_open_end(&ep, &cfg, &l->out[p], err);
    if (rc != SL_OK)
      sl_channel_failed(err, rc, me, p, 0);
  }
  rc = sl_accepting_join(&a, rc, err);
  for (int p = 0; p < n && !by_address; p++)
    if (listen_fd[p] >= 0)
      close(listen_fd[p]);
  free(listen_fd);
  for (int p = 0; p < n && rc == SL_OK; p++) {
    if (p == me)
      continue;
    l->rx[p].l = l;
    l->rx[p].from = p;
    if (pthread_create(&l->rx[p].thread, NULL, receive_main, &l->rx[p]) != 0)
      rc = sl_error_set(err, SL_EINTERNAL,
                        "cannot start the receiver of node %d's state", p);
    else
      l->rx[p].started = true;
  }
  return rc;
}

void sl_node_leaders_abort(sl_node_leaders *l) {
  if (!l)
    return;
  for (int p = 0; p < l->n; p++) {
    if (l->out[p])
      sl_channel_abort(l->out[p], SL_ECANCELLED);
    if (l->in[p])
      sl_channel_abort(l->in[p], SL_ECANCELLED);
  }
}

void sl_node_leaders_close(sl_node_leaders *l) {
  if (!l)
    return;
  atomic_store(&l->stop, true);
  for (int p = 0; p < l->n; p++)
    if (l->rx[p].started)
      pthread_join(l->rx[p].thread, NULL);
  for (int p = 0; p < l->n; p++) {
    sl_channel_destroy(l->out[p]);
    sl_channel_destroy(l->in[p]);
    sl_strbuf_free(&l->parts[p]);
  }
  sl_leader_store_free(&l->store);
  free(l->out);
  free(l->in);
  free(l->rx);
  free(l->sent_wm);
  free(l->parts);
  pthread_mutex_destroy(&l->lock);
  sl_error_clear(&l->err);
  free(l);
}
