/* node_serve.c - a node process: one coordinator's control connection
 * (node.h), served with a session of its own.
 *
 * EXEC statements change the node's catalog and settings; a QUERY runs on
 * this node's share of the sources while a watcher thread reads the
 * connection for CANCEL (or its end, which cancels too); the end of the
 * connection ends the loop. */
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster.h"
#include "sluice/node.h"
#include "sluice/plan.h"
#include "sluice/session.h"
#include "sluice/shell.h"

typedef struct watcher {
  int fd;
  atomic_bool cancel, stop;
  atomic_bool sync; /* a SYNC arrived during the query */
} watcher;

static void *watch(void *arg) {
  watcher *w = arg;
  sl_strbuf p = SL_STRBUF_INIT;
  sl_error err = {0};
  while (!atomic_load(&w->stop)) {
    uint32_t type;
    int rc = sl_frame_recv(w->fd, &type, &p, 50, &err);
    if (rc == SL_FRAME_TIMEOUT)
      continue;
    /* CANCEL, SYNC, or the coordinator is gone: stop the query. */
    atomic_store(&w->cancel, true);
    if (rc == SL_OK && type == SL_FRAME_SYNC)
      atomic_store(&w->sync, true);
    if (rc != SL_OK || type == SL_FRAME_CANCEL || type == SL_FRAME_SYNC)
      break;
  }
  sl_error_clear(&err);
  sl_strbuf_free(&p);
  return NULL;
}

static int send_error(int fd, const sl_error *e) {
  int32_t code = e->code ? e->code : SL_EINTERNAL;
  const char *m = e->message ? e->message : "failed";
  sl_error err = {0};
  int rc =
      sl_frame_send(fd, SL_FRAME_ERROR, &code, sizeof code, m, strlen(m), &err);
  sl_error_clear(&err);
  return rc;
}

static int run_query(sl_session *s, int fd, const sl_strbuf *p) {
  sl_error err = {0};
  uint32_t h[6];
  if (p->len < sizeof h) {
    sl_error_set(&err, SL_EIO, "a query message was cut short");
    send_error(fd, &err);
    sl_error_clear(&err);
    return SL_EIO;
  }
  memcpy(h, p->data, sizeof h);
  watcher w = {fd, false, false, false};
  pthread_t t;
  bool watching = pthread_create(&t, NULL, watch, &w) == 0;
  sl_query_stats st;
  sl_exec_nodes nodes = {0};
  nodes.node_index = (int)h[0];
  nodes.node_count = (int)h[1];
  nodes.coordinator_fd = fd;
  nodes.cancel = &w.cancel;
  nodes.exchange_between_nodes = h[3] != 0;
  nodes.query_id = (uint64_t)h[4] | (uint64_t)h[5] << 32;
  int rc = sl_session_run_on_node(s, p->data + sizeof h, p->len - sizeof h,
                                  (int)h[2], &nodes, &st, &err);
  atomic_store(&w.stop, true);
  if (watching)
    pthread_join(t, NULL);
  int src;
  if (rc == SL_ECANCELLED && atomic_load(&w.cancel))
    rc = SL_OK; /* stopped as asked: what it did counts */
  if (rc == SL_OK)
    src = sl_frame_send(fd, SL_FRAME_DONE, &st, sizeof st, NULL, 0, &err);
  else
    src = send_error(fd, &err);
  if (src == SL_OK && atomic_load(&w.sync))
    src = sl_frame_send(fd, SL_FRAME_SYNC_ACK, NULL, 0, NULL, 0, &err);
  sl_error_clear(&err);
  return src;
}

int sl_node_serve(int fd) {
  sl_session *s = sl_session_new();
  sl_session_set_node(s);
  sl_error err = {0};
  uint32_t workers = (uint32_t)sl_settings_get_int(sl_session_settings(s),
                                                   "parallelism.default", 1);
  const char *v = sl_shell_version();
  int rc = sl_frame_send(fd, SL_FRAME_HELLO, &workers, sizeof workers, v,
                         strlen(v), &err);
  sl_strbuf p = SL_STRBUF_INIT;
  while (rc == SL_OK) {
    uint32_t type;
    rc = sl_frame_recv(fd, &type, &p, -1, &err);
    if (rc != SL_OK) {
      rc = SL_OK; /* the coordinator closed the connection: done */
      break;
    }
    if (type == SL_FRAME_EXEC) {
      sl_result_sink quiet = sl_result_sink_discard(NULL);
      sl_error e = {0};
      int erc = sl_session_execute(s, p.data, p.len, 1, &quiet, &e);
      rc = erc == SL_OK ? sl_frame_send(fd, SL_FRAME_OK, NULL, 0, NULL, 0, &err)
                        : send_error(fd, &e);
      sl_error_clear(&e);
    } else if (type == SL_FRAME_QUERY) {
      rc = run_query(s, fd, &p);
    } else if (type == SL_FRAME_SYNC) {
      rc = sl_frame_send(fd, SL_FRAME_SYNC_ACK, NULL, 0, NULL, 0, &err);
    }
    /* Anything else (a CANCEL that arrived after its query ended) is
     * ignored. */
  }
  sl_strbuf_free(&p);
  sl_error_clear(&err);
  sl_session_free(s);
  close(fd);
  return rc;
}

int sl_node_listen(const char *address, sl_error *err) {
  char host[256];
  const char *colon = strrchr(address, ':');
  if (!colon || (size_t)(colon - address) >= sizeof host)
    return sl_error_set(err, SL_EINVAL,
                        "--listen wants HOST:PORT (e.g. 0.0.0.0:7070), got "
                        "'%s'",
                        address);
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = '\0';
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
  if (g != 0)
    return sl_error_set(err, SL_EIO, "cannot resolve '%s': %s", address,
                        gai_strerror(g));
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  int one = 1;
  if (fd >= 0)
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
      listen(fd, 4) != 0) {
    freeaddrinfo(res);
    if (fd >= 0)
      close(fd);
    return sl_error_set(err, SL_EIO, "cannot listen on %s: %m", address);
  }
  freeaddrinfo(res);
  fprintf(stderr, "sluice node listening on %s\n", address);
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c < 0)
      continue;
    setsockopt(c, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
    sl_node_serve(c); /* one coordinator at a time */
  }
}
