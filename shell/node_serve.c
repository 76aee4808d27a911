/* node_serve.c - a node process: one coordinator's control connection
 * (node.h), served with a session of its own.
 *
 * EXEC statements change the node's catalog and settings; a QUERY runs on
 * this node's share of the sources while a watcher thread reads the
 * connection for CANCEL (or its end, which cancels too); the end of the
 * connection ends the loop.  A daemon (sluice node --listen) serves each
 * connection in a process of its own. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster.h"
#include "sluice/channel.h"
#include "sluice/executor.h"
#include "sluice/node.h"
#include "sluice/plan.h"
#include "sluice/session.h"
#include "sluice/shell.h"

/* The most leaves whose rows come to one node's stages over links. */
#define NODE_MAX_FED 8

typedef struct watcher {
  int fd;
  atomic_bool cancel, stop;
  atomic_bool sync; /* a SYNC arrived during the query */
  /* Per leaf of a join whose stages run here: where the link reader puts
   * its rows (the side's; under a repartition of every leaf all of
   * theirs, this node's own leaf's too), or NULL. */
  sl_stage_feed *feeds[NODE_MAX_FED];
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
    for (int k = 0; k < NODE_MAX_FED; k++)
      if (w->feeds[k])
        sl_stage_feed_close(w->feeds[k]);
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

/* The exchange between daemons (node.h, XLISTEN): this node's listening
 * sockets, one per channel it will consume, until the next query ends. */
typedef struct exchange_listen {
  int members; /* node count x workers; 0: none */
  int *fds;    /* members x members, -1 where none */
  /* Late merge at partition leaders: one channel per pair of nodes. */
  int nodes;       /* node count; 0: none */
  int *leader_fds; /* nodes x nodes: [sender * nodes + this node] */
  /* A join's stages here: the links from the other side's nodes. */
  int link_fd; /* -1: none */
} exchange_listen;

static void exchange_listen_close(exchange_listen *x) {
  if (x->link_fd >= 0)
    close(x->link_fd);
  x->link_fd = -1;
  for (int i = 0; x->fds && i < x->members * x->members; i++)
    if (x->fds[i] >= 0)
      close(x->fds[i]);
  free(x->fds);
  x->fds = NULL;
  x->members = 0;
  for (int i = 0; x->leader_fds && i < x->nodes * x->nodes; i++)
    if (x->leader_fds[i] >= 0)
      close(x->leader_fds[i]);
  free(x->leader_fds);
  x->leader_fds = NULL;
  x->nodes = 0;
}

/* XLISTEN for the partition leaders: a channel from every other node to
 * this one, announced as "L sender leader host:port" lines. */
static int xlisten_leaders(exchange_listen *x, int me, int nodes,
                           const char *transport, const char *host,
                           sl_strbuf *lines, sl_error *err) {
  x->nodes = nodes;
  x->leader_fds = malloc(sizeof(int) * (size_t)nodes * (size_t)nodes);
  if (!x->leader_fds)
    abort();
  for (int i = 0; i < nodes * nodes; i++)
    x->leader_fds[i] = -1;
  char addr[INET6_ADDRSTRLEN + 8];
  snprintf(addr, sizeof addr, "%s:0", host);
  int rc = SL_OK;
  for (int snd = 0; snd < nodes && rc == SL_OK; snd++) {
    if (snd == me)
      continue;
    char bound[128];
    rc = sl_channel_listen(transport, addr, &x->leader_fds[snd * nodes + me],
                           bound, sizeof bound, err);
    if (rc == SL_OK)
      sl_strbuf_printf(lines, "L %d %d %s\n", snd, me, bound);
  }
  return rc;
}

/* Where this node listens for channels: its address on the control
 * connection (the one the coordinator reached), 127.0.0.1 for tcp when that
 * is a unix socket (nodes forked on this host); verbs needs an address of
 * the RDMA device, the control connection's unless that is not IPv4 or is
 * loopback (soft-RoCE and RoCE devices sit on an Ethernet interface, never
 * on lo). */
static int listen_host(int fd, int transport, char *host, size_t size,
                       sl_error *err) {
  snprintf(host, size, "127.0.0.1");
  struct sockaddr_storage sa;
  socklen_t salen = sizeof sa;
  bool have = false;
  if (getsockname(fd, (struct sockaddr *)&sa, &salen) == 0 &&
      sa.ss_family == AF_INET) {
    struct sockaddr_in *in = (struct sockaddr_in *)&sa;
    inet_ntop(AF_INET, &in->sin_addr, host, (socklen_t)size);
    have = (ntohl(in->sin_addr.s_addr) >> 24) != 127;
  }
  if (transport != SL_XPORT_VERBS || have)
    return SL_OK;
  sl_verbs_device d;
  int rc = sl_channel_verbs_probe(&d, err);
  if (rc == SL_OK)
    snprintf(host, size, "%.*s", (int)(size - 1), d.address);
  return rc;
}

/* XLISTEN: listen on this node's address (listen_host) for each channel
 * from another node's worker to one of ours, and answer with "sender owner
 * host:port" lines. */
static int xlisten(sl_session *s, int fd, const sl_strbuf *p,
                   exchange_listen *x) {
  sl_error err = {0};
  /* [2]: 1 exchange, 2 leaders, 3 links; [3]: the transport (node.h) */
  uint32_t h[4] = {0, 0, 1, SL_XPORT_TCP};
  int rc = SL_OK;
  char host[INET6_ADDRSTRLEN + 2];
  if (p->len < 2 * sizeof(uint32_t))
    rc = sl_error_set(&err, SL_EIO, "an XLISTEN message was cut short");
  sl_strbuf lines = SL_STRBUF_INIT;
  if (rc == SL_OK)
    memcpy(h, p->data, p->len < sizeof h ? p->len / 4 * 4 : sizeof h);
  /* Links come after the query's other channels: they keep those. */
  if (h[2] != 3)
    exchange_listen_close(x);
  else if (x->link_fd >= 0) {
    close(x->link_fd);
    x->link_fd = -1;
  }
  if (rc == SL_OK && h[3] != SL_XPORT_TCP && h[3] != SL_XPORT_VERBS)
    rc = sl_error_set(&err, SL_EINVAL,
                      "XLISTEN asked for transport %u (tcp or verbs only)",
                      h[3]);
  const char *transport = sl_exchange_transport_name((int)h[3]);
  if (rc == SL_OK)
    rc = listen_host(fd, (int)h[3], host, sizeof host, &err);
  if (rc == SL_OK && h[2] == 2)
    rc =
        xlisten_leaders(x, (int)h[0], (int)h[1], transport, host, &lines, &err);
  else if (rc == SL_OK && h[2] == 3) {
    char addr[INET6_ADDRSTRLEN + 8], bound[128];
    snprintf(addr, sizeof addr, "%s:0", host);
    rc = sl_channel_listen("tcp", addr, &x->link_fd, bound, sizeof bound, &err);
    if (rc == SL_OK)
      sl_strbuf_printf(&lines, "S %u %s\n", h[0], bound);
  } else if (rc == SL_OK) {
    int w = (int)sl_settings_get_int(sl_session_settings(s),
                                     "parallelism.default", 1);
    if (w < 1)
      w = 1;
    int me = (int)h[0], n = (int)h[1] * w;
    x->members = n;
    x->fds = malloc(sizeof(int) * (size_t)n * (size_t)n);
    if (!x->fds)
      abort();
    for (int i = 0; i < n * n; i++)
      x->fds[i] = -1;
    char addr[INET6_ADDRSTRLEN + 8];
    snprintf(addr, sizeof addr, "%s:0", host);
    for (int snd = 0; snd < n && rc == SL_OK; snd++)
      for (int own = 0; own < n && rc == SL_OK; own++) {
        if (own / w != me || snd / w == me)
          continue;
        char bound[128];
        rc = sl_channel_listen(transport, addr, &x->fds[snd * n + own], bound,
                               sizeof bound, &err);
        if (rc == SL_OK)
          sl_strbuf_printf(&lines, "%d %d %s\n", snd, own, bound);
      }
  }
  if (rc == SL_OK)
    rc =
        sl_frame_send(fd, SL_FRAME_XADDR, lines.data, lines.len, NULL, 0, &err);
  else {
    exchange_listen_close(x);
    rc = send_error(fd, &err);
  }
  sl_strbuf_free(&lines);
  sl_error_clear(&err);
  return rc;
}

/* XADDR lines of one kind -> addrs: "sender owner host:port" for the
 * exchange between workers (kind 0; addrs[sender * n + owner], n members),
 * "L sender leader host:port" for the partition leaders' channels ('L';
 * n nodes, the same), "S node host:port" for a join's links ('S';
 * addrs[node], n nodes).  *found: how many lines there were. */
static char **parse_addrs(const char *text, size_t len, int n, char kind,
                          int *found) {
  int cells = kind == 'S' ? n : n * n;
  char **addrs = calloc((size_t)cells, sizeof *addrs);
  char *copy = malloc(len + 1);
  if (!addrs || !copy)
    abort();
  memcpy(copy, text, len);
  copy[len] = '\0';
  *found = 0;
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
    int at = kind == 'S' ? snd : snd * n + rcv;
    free(addrs[at]);
    addrs[at] = strdup(where);
    (*found)++;
  }
  free(copy);
  return addrs;
}

static void free_addrs(char **addrs, int cells) {
  for (int i = 0; addrs && i < cells; i++)
    free(addrs[i]);
  free(addrs);
}

static int run_query(sl_session *s, int fd, const sl_strbuf *p,
                     exchange_listen *x, const sl_secret *secret) {
  sl_error err = {0};
  uint32_t h[9] = {0}; /* node.h, QUERY */
  if (p->len >= sizeof h)
    memcpy(h, p->data, sizeof h);
  if (p->len < sizeof h || p->len - sizeof h < h[6]) {
    sl_error_set(&err, SL_EIO, "a query message was cut short");
    send_error(fd, &err);
    sl_error_clear(&err);
    exchange_listen_close(x);
    return SL_EIO;
  }
  const char *addr_text = p->data + sizeof h;
  const char *sql = addr_text + h[6];
  size_t sql_len = p->len - sizeof h - h[6];
  /* h[7], h[8]: the leaf to run; the leaf whose rows come over links, how
   * many leaves all come so (a repartition of every leaf: this leaf's rows
   * too), and the join strategy. */
  int leaf = (int)h[7] - 1, fed = (int)(h[8] & 0xff) - 1;
  int nfed = (int)((h[8] >> 8) & 0xff);
  int join = (int)(h[8] >> 16);
  int found0 = 0;
  char **link_addrs = parse_addrs(addr_text, h[6], (int)h[1], 'S', &found0);
  watcher w = {fd, false, false, false, {NULL}};
  if (fed >= 0 && fed < NODE_MAX_FED)
    w.feeds[fed] = sl_stage_feed_new();
  for (int k = 0; k < nfed && k < NODE_MAX_FED && fed >= 0; k++)
    if (!w.feeds[k])
      w.feeds[k] = sl_stage_feed_new();
  pthread_t t;
  bool watching = pthread_create(&t, NULL, watch, &w) == 0;
  sl_query_stats st;
  sl_exec_nodes nodes = {0};
  nodes.node_index = (int)h[0];
  nodes.node_count = (int)h[1];
  nodes.coordinator_fd = fd;
  nodes.cancel = &w.cancel;
  nodes.exchange_between_nodes = h[3] != 0;
  nodes.exchange_transport = (int)h[3];
  nodes.query_id = (uint64_t)h[4] | (uint64_t)h[5] << 32;
  nodes.feeds = w.feeds;
  nodes.secret = secret;
  char **addrs = NULL, **leader_addrs = NULL;
  int found = 0;
  bool listened = h[3] == SL_XPORT_TCP || h[3] == SL_XPORT_VERBS;
  if (listened && x->members > 0) {
    addrs = parse_addrs(addr_text, h[6], x->members, 0, &found);
    nodes.listen_fds = x->fds;
    nodes.peer_addrs = (const char *const *)addrs;
  }
  if (listened && x->nodes > 0) {
    leader_addrs = parse_addrs(addr_text, h[6], x->nodes, 'L', &found);
    nodes.leader_listen_fds = x->leader_fds;
    nodes.leader_addrs = (const char *const *)leader_addrs;
  }
  /* A join's side: where its rows go.  Its stages: the links from the
   * side's nodes (as many as this cluster has), and under a repartition
   * of both sides from this cluster's nodes too. */
  nodes.nstage = found0 > 0 ? (int)h[1] : 0;
  nodes.stage_addrs = (const char *const *)link_addrs;
  sl_stage_links *links = NULL;
  int rc = SL_OK;
  if (fed >= 0 &&
      (x->link_fd < 0 || fed >= NODE_MAX_FED || nfed > NODE_MAX_FED))
    rc = sl_error_set(&err, SL_EINTERNAL,
                      "the stages of a join were sent here without a link "
                      "listener (XLISTEN 3), or with more than %d leaves: do "
                      "the coordinator and the node run one build?",
                      NODE_MAX_FED);
  else if (fed >= 0) {
    int senders[NODE_MAX_FED];
    for (int k = 0; k < NODE_MAX_FED; k++)
      senders[k] = (int)h[1];
    rc = sl_stage_links_start(x->link_fd, NODE_MAX_FED, senders, w.feeds,
                              secret, &links, &err);
  }
  if (rc == SL_OK)
    rc = sl_session_run_on_node(s, sql, sql_len, leaf, fed, join, (int)h[2],
                                &nodes, &st, &err);
  sl_stage_links_stop(links);
  free_addrs(link_addrs, (int)h[1]);
  atomic_store(&w.stop, true);
  if (watching)
    pthread_join(t, NULL);
  for (int k = 0; k < NODE_MAX_FED; k++)
    sl_stage_feed_free(w.feeds[k]);
  free_addrs(addrs, x->members * x->members);
  free_addrs(leader_addrs, x->nodes * x->nodes);
  exchange_listen_close(x);
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

int sl_node_serve(int fd, const sl_secret *secret) {
  sl_session *s = sl_session_new();
  sl_session_set_node(s);
  sl_error err = {0};
  uint32_t workers = (uint32_t)sl_settings_get_int(sl_session_settings(s),
                                                   "parallelism.default", 1);
  /* The version, and whether this node can take verbs channels (the
   * coordinator picks verbs only when every node can). */
  sl_strbuf about = SL_STRBUF_INIT;
  sl_strbuf_append(&about, sl_shell_version());
  sl_verbs_device d;
  sl_error why = {0};
  if (sl_channel_verbs_probe(&d, &why) == SL_OK)
    sl_strbuf_printf(&about, "\nrdma %s %s %d %s", d.name, d.address, d.port,
                     d.link);
  else
    sl_strbuf_printf(&about, "\nrdma - %s",
                     why.message ? why.message : "no RDMA device");
  sl_error_clear(&why);
  int rc = sl_frame_send(fd, SL_FRAME_HELLO, &workers, sizeof workers,
                         about.data, about.len, &err);
  sl_strbuf_free(&about);
  sl_strbuf p = SL_STRBUF_INIT;
  exchange_listen x = {0, NULL, 0, NULL, -1};
  while (rc == SL_OK) {
    uint32_t type;
    rc = sl_frame_recv(fd, &type, &p, -1, &err);
    if (rc == SL_EINVAL) { /* a frame no Sluice peer sends: drop it */
      fprintf(stderr, "sluice node: dropped the connection: %s\n", err.message);
      break;
    }
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
    } else if (type == SL_FRAME_XLISTEN) {
      rc = xlisten(s, fd, &p, &x);
    } else if (type == SL_FRAME_QUERY) {
      rc = run_query(s, fd, &p, &x, secret);
    } else if (type == SL_FRAME_SYNC) {
      rc = sl_frame_send(fd, SL_FRAME_SYNC_ACK, NULL, 0, NULL, 0, &err);
    }
    /* Anything else (a CANCEL that arrived after its query ended) is
     * ignored. */
  }
  exchange_listen_close(&x);
  sl_strbuf_free(&p);
  sl_error_clear(&err);
  sl_session_free(s);
  close(fd);
  return rc;
}

int sl_node_listen(const char *address, const sl_secret *secret,
                   sl_error *err) {
  /* The channels' listener: address parsing, SO_REUSEADDR, messages. */
  int fd;
  char bound[128];
  int rc = sl_channel_listen("tcp", address, &fd, bound, sizeof bound, err);
  if (rc != SL_OK)
    return rc;
  fprintf(stderr, "sluice node listening on %s\n", bound);
  /* Every connection is served by a process of its own, as a database
   * server serves its clients: a shell runs a multi-stage query's leaves
   * on connections of their own at once, and two shells can share the
   * daemons.  Children are reaped by the kernel. */
  signal(SIGCHLD, SIG_IGN);
  int one = 1;
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c < 0)
      continue;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(fd);
      /* Nothing is read from a peer before it proves the secret; the
       * handshake is in the child, so a slow or silent peer holds up no
       * one else. */
      sl_error aerr = {0};
      if (sl_auth_accept(c, secret, 10000, &aerr) != SL_OK) {
        char who[128];
        sl_channel_describe_peer(c, who, sizeof who);
        fprintf(stderr, "sluice node: refused %s: %s\n", who, aerr.message);
        sl_error_clear(&aerr);
        close(c);
        _exit(1);
      }
      int rc = sl_node_serve(c, secret);
      _exit(rc == SL_OK ? 0 : 1);
    }
    if (pid < 0)
      fprintf(stderr, "sluice node: cannot serve a connection: %s\n",
              strerror(errno));
    close(c);
  }
}
