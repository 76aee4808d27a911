/* exchange_open.c - opening a repartitioning query's exchange: one channel
 * per (sender, owner) pair of members, an in-process ring between workers
 * of one node, shared memory between forked nodes (meeting at a name made
 * from the query id) and TCP between daemons (at the addresses XLISTEN
 * gave).  The workers then use them (exchange.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor_int.h"

/* The consumer ends of channels from other nodes, accepted on their own
 * listening sockets while the main thread connects the producer ends. */
typedef struct accepting {
  exec_query *q;
  const char *transport; /* "shm", "tcp" or "verbs" */
  uint64_t query_id;
  int *listen_fd; /* xn x xn, -1 where this process consumes nothing */
  int rc;
  sl_error err;
} accepting;

static bool local_member(const exec_query *q, int m) {
  return m >= q->xbase && m < q->xbase + q->nworkers;
}

static void *accept_ends(void *arg) {
  accepting *a = arg;
  exec_query *q = a->q;
  int n = q->xn;
  sl_channel_config cfg = {0, (q->buffer_size + 63u) & ~63u};
  for (int i = 0; i < n * n && a->rc == SL_OK; i++) {
    if (a->listen_fd[i] < 0)
      continue;
    sl_channel_endpoint ep = {a->transport,
                              SL_CHANNEL_CONSUMER,
                              SL_CHANNEL_VIA_ACCEPT,
                              a->listen_fd[i],
                              NULL,
                              0};
    a->rc = sl_channel_open_end(&ep, &cfg, &q->channels[i], &a->err);
  }
  return NULL;
}

int sl_exec_open_exchange(exec_query *q, const sl_exec_nodes *nodes,
                          sl_error *err) {
  int n = q->xn;
  q->channels = calloc((size_t)n * (size_t)n, sizeof(sl_channel *));
  if (!q->channels)
    abort();
  bool remote = n > q->nworkers;
  /* Between nodes: shared memory meeting at names, or tcp / verbs at the
   * addresses of the listeners the node opened at XLISTEN (and closes). */
  bool tcp = remote && (nodes->exchange_transport == SL_XPORT_TCP ||
                        nodes->exchange_transport == SL_XPORT_VERBS);
  uint64_t query_id = remote ? nodes->query_id : 0;
  accepting a = {
      q,
      tcp ? sl_exchange_transport_name(nodes->exchange_transport) : "shm",
      query_id,
      NULL,
      SL_OK,
      {0}};
  pthread_t t;
  bool accepting_started = false;
  int rc = SL_OK;
  if (remote) {
    /* Listen for every channel this process consumes from another node
     * first, so that the other nodes' connects find us. */
    a.listen_fd = malloc(sizeof(int) * (size_t)n * (size_t)n);
    if (!a.listen_fd)
      abort();
    for (int i = 0; i < n * n; i++)
      a.listen_fd[i] = -1;
    for (int p = 0; p < n && rc == SL_OK; p++)
      for (int c = 0; c < n && rc == SL_OK; c++) {
        if (local_member(q, p) || !local_member(q, c))
          continue;
        if (tcp) {
          a.listen_fd[p * n + c] =
              nodes->listen_fds ? nodes->listen_fds[p * n + c] : -1;
          if (a.listen_fd[p * n + c] < 0)
            rc = sl_error_set(err, SL_EINTERNAL,
                              "no listening socket for the exchange channel "
                              "%d -> %d",
                              p, c);
          continue;
        }
        char name[96], bound[128];
        snprintf(name, sizeof name, "@sluice-%llx-%d-%d",
                 (unsigned long long)query_id, p, c);
        rc = sl_channel_listen("shm", name, &a.listen_fd[p * n + c], bound,
                               sizeof bound, err);
      }
    if (rc == SL_OK) {
      if (pthread_create(&t, NULL, accept_ends, &a) == 0)
        accepting_started = true;
      else
        rc = sl_error_set(err, SL_EINTERNAL,
                          "cannot start the exchange's accepting thread");
    }
  }
  sl_channel_config cfg = {0, (q->buffer_size + 63u) & ~63u};
  for (int p = 0; p < n && rc == SL_OK; p++)
    for (int c = 0; c < n && rc == SL_OK; c++) {
      if (p == c || !local_member(q, p))
        continue;
      if (local_member(q, c)) {
        rc = sl_channel_open_local(0, cfg.slot_size, &q->channels[p * n + c],
                                   err);
        continue;
      }
      char name[96];
      snprintf(name, sizeof name, "@sluice-%llx-%d-%d",
               (unsigned long long)query_id, p, c);
      const char *to = name;
      if (tcp)
        to = nodes->peer_addrs ? nodes->peer_addrs[p * n + c] : NULL;
      if (!to) {
        rc = sl_error_set(err, SL_EINTERNAL,
                          "no address for the exchange channel %d -> %d", p, c);
        break;
      }
      sl_channel_endpoint ep = {
          a.transport, SL_CHANNEL_PRODUCER, SL_CHANNEL_VIA_CONNECT, -1, to, 0};
      rc = sl_channel_open_end(&ep, &cfg, &q->channels[p * n + c], err);
    }
  if (remote) {
    /* Always joined: its accepts end by themselves (the endpoints'
     * timeout) if the peers never come. */
    if (accepting_started) {
      pthread_join(t, NULL);
      if (rc == SL_OK && a.rc != SL_OK) {
        sl_error_move(err, &a.err);
        rc = a.rc;
      }
    }
    sl_error_clear(&a.err);
    for (int i = 0; i < n * n && !tcp; i++)
      if (a.listen_fd[i] >= 0)
        close(a.listen_fd[i]);
    free(a.listen_fd);
  }
  return rc;
}
