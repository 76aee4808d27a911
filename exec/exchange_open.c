/* exchange_open.c - opening a repartitioning query's exchange: one channel
 * per (sender, owner) pair of members, an in-process ring between workers
 * of one node, shared memory between forked nodes (meeting at a name made
 * from the query id) and tcp or verbs between nodes that listened at
 * XLISTEN (at the addresses they gave).  The workers then use them
 * (exchange.c).  Also the accepting thread (sl_accepting) that the
 * partition leaders' channels use too (node_leaders.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor_int.h"

static bool local_member(const exec_query *q, int m) {
  return m >= q->exchange.xbase && m < q->exchange.xbase + q->nworkers;
}

static void *accept_ends(void *arg) {
  sl_accepting *a = arg;
  sl_channel_config cfg = {0, a->slot_size};
  for (int i = 0; i < a->n && a->rc == SL_OK; i++) {
    if (a->listen_fd[i] < 0)
      continue;
    sl_channel_endpoint ep = {a->transport,
                              SL_CHANNEL_CONSUMER,
                              SL_CHANNEL_VIA_ACCEPT,
                              a->listen_fd[i],
                              NULL,
                              0,
                              a->secret,
                              a->cancel};
    a->rc = sl_channel_open_end(&ep, &cfg, &a->ends[i], &a->err);
    if (a->rc != SL_OK)
      sl_channel_failed(&a->err, a->rc, a->width ? i / a->width : i,
                        a->width ? i % a->width : -1, a->per_node);
  }
  return NULL;
}

int sl_channel_failed(sl_error *err, int rc, int from, int to, int per_node) {
  sl_strbuf m = SL_STRBUF_INIT;
  if (per_node > 0)
    sl_strbuf_printf(&m, "the channel from worker %d (node %d) to ", from,
                     from / per_node);
  else
    sl_strbuf_printf(&m, "the channel from node %d to ", from);
  if (to < 0)
    sl_strbuf_printf(&m, "this node");
  else if (per_node > 0)
    sl_strbuf_printf(&m, "worker %d (node %d)", to, to / per_node);
  else
    sl_strbuf_printf(&m, "node %d", to);
  sl_strbuf_printf(&m, ": %s", err->message ? err->message : "failed");
  sl_error_set(err, rc, "%s", sl_strbuf_cstr(&m));
  sl_strbuf_free(&m);
  return rc;
}

int sl_accepting_start(sl_accepting *a, const char *what, sl_error *err) {
  a->rc = SL_OK;
  a->started = pthread_create(&a->thread, NULL, accept_ends, a) == 0;
  if (!a->started)
    return sl_error_set(err, SL_EINTERNAL,
                        "cannot start the %s's accepting thread", what);
  return SL_OK;
}

int sl_accepting_join(sl_accepting *a, int rc, sl_error *err) {
  if (a->started) {
    pthread_join(a->thread, NULL);
    a->started = false;
    if (rc == SL_OK && a->rc != SL_OK) {
      sl_error_move(err, &a->err);
      rc = a->rc;
    }
  }
  sl_error_clear(&a->err);
  return rc;
}

int sl_exec_open_exchange(exec_query *q, const sl_exec_nodes *nodes,
                          sl_error *err) {
  int n = q->exchange.xn;
  q->exchange.channels = calloc((size_t)n * (size_t)n, sizeof(sl_channel *));
  if (!q->exchange.channels)
    abort();
  bool remote = n > q->nworkers;
  /* Between nodes: shared memory meeting at names, or tcp / verbs at the
   * addresses of the listeners the node opened at XLISTEN (and closes). */
  bool by_address = remote && (nodes->exchange_transport == SL_XPORT_TCP ||
                               nodes->exchange_transport == SL_XPORT_VERBS);
  uint64_t query_id = remote ? nodes->query_id : 0;
  uint32_t slot_size = (q->buffer_size + 63u) & ~63u;
  int *listen_fd = NULL;
  sl_accepting a = {by_address
                        ? sl_exchange_transport_name(nodes->exchange_transport)
                        : "shm",
                    n * n,
                    n,
                    q->nworkers,
                    NULL,
                    q->exchange.channels,
                    slot_size,
                    remote ? nodes->secret : NULL,
                    remote ? nodes->cancel : NULL,
                    SL_OK,
                    {0},
                    0,
                    false};
  int rc = SL_OK;
  if (remote) {
    /* Listen for every channel this process consumes from another node
     * first, so that the other nodes' connects find us. */
    listen_fd = malloc(sizeof(int) * (size_t)n * (size_t)n);
    if (!listen_fd)
      abort();
    for (int i = 0; i < n * n; i++)
      listen_fd[i] = -1;
    for (int p = 0; p < n && rc == SL_OK; p++)
      for (int c = 0; c < n && rc == SL_OK; c++) {
        if (local_member(q, p) || !local_member(q, c))
          continue;
        if (by_address) {
          listen_fd[p * n + c] =
              nodes->listen_fds ? nodes->listen_fds[p * n + c] : -1;
          if (listen_fd[p * n + c] < 0)
            rc = sl_error_set(err, SL_EINTERNAL,
                              "no listening socket for the exchange channel "
                              "%d -> %d",
                              p, c);
          continue;
        }
        char name[96], bound[128];
        snprintf(name, sizeof name, "@sluice-%llx-%d-%d",
                 (unsigned long long)query_id, p, c);
        rc = sl_channel_listen("shm", name, &listen_fd[p * n + c], bound,
                               sizeof bound, err);
      }
    a.listen_fd = listen_fd;
    if (rc == SL_OK)
      rc = sl_accepting_start(&a, "exchange", err);
  }
  sl_channel_config cfg = {0, slot_size};
  for (int p = 0; p < n && rc == SL_OK; p++)
    for (int c = 0; c < n && rc == SL_OK; c++) {
      if (p == c || !local_member(q, p))
        continue;
      if (local_member(q, c)) {
        rc = sl_channel_open_local(0, slot_size,
                                   &q->exchange.channels[p * n + c], err);
        continue;
      }
      char name[96];
      snprintf(name, sizeof name, "@sluice-%llx-%d-%d",
               (unsigned long long)query_id, p, c);
      const char *to = name;
      if (by_address)
        to = nodes->peer_addrs ? nodes->peer_addrs[p * n + c] : NULL;
      if (!to) {
        rc = sl_error_set(err, SL_EINTERNAL,
                          "no address for the exchange channel %d -> %d", p, c);
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
      rc =
          sl_channel_open_end(&ep, &cfg, &q->exchange.channels[p * n + c], err);
      if (rc != SL_OK)
        sl_channel_failed(err, rc, p, c, q->nworkers);
    }
  if (remote) {
    rc = sl_accepting_join(&a, rc, err);
    for (int i = 0; i < n * n && !by_address; i++)
      if (listen_fd[i] >= 0)
        close(listen_fd[i]);
    free(listen_fd);
  }
  return rc;
}

void sl_exec_close_exchange(exec_exchange_state *x) {
  if (!x->channels)
    return;
  for (int i = 0; i < x->xn * x->xn; i++)
    if (x->channels[i])
      sl_channel_destroy(x->channels[i]);
  free(x->channels);
}
