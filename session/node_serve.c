/* node_serve.c - a node process: one coordinator's control connection
 * (node_frames.h), served with a session of its own.
 *
 * EXEC statements change the node's catalog and settings; a QUERY runs on
 * this node's share of the sources while a watcher thread reads the
 * connection for CANCEL (or its end, which cancels too); the end of the
 * connection ends the loop.  A daemon (node_daemon.c) serves each
 * connection in a process of its own. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sluice/cluster/cluster_client.h"
#include "sluice/cluster/distribution.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/common/version.h"
#include "sluice/exec/exec_nodes.h"
#include "sluice/exec/executor.h"
#include "sluice/net/channel.h"
#include "sluice/net/node_messages.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"
#include "sluice/shell/shell.h"

typedef struct watcher {
  int fd;
  pthread_mutex_t *send_lock; /* the query's frames to the coordinator */
  atomic_bool stop;
  atomic_bool sync;       /* a SYNC arrived during the query */
  sl_node_credit *credit; /* the query's bulk frames (CREDIT) */
  /* Per leaf of a join whose stages run here: where the link reader puts
   * its rows (the side's; under a repartition of every leaf all of
   * theirs, this node's own leaf's too), or NULL. */
  sl_stage_feed *feeds[SL_NODE_MAX_FED];
  /* The query's token (cancel.h), requested at CANCEL: what its run, its
   * channels and credits, and its parsing, planning and compiling poll. */
  sl_cancel token;
} watcher;

/* One HEARTBEAT, unless a frame of the query is being sent (the lock is
 * taken) or the socket has no room (the coordinator is not reading, so it
 * is not counting the silence either): the watcher must never block here,
 * or it would not read a CANCEL.  A failed send: the coordinator is gone,
 * which reading says. */
static void beat(const sl_frame_out *out) {
  if (pthread_mutex_trylock(out->lock) != 0)
    return;
  struct pollfd p = {out->fd, POLLOUT, 0};
  if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
    sl_frame_send(out->fd, SL_FRAME_HEARTBEAT, NULL, 0, NULL, 0, NULL);
  pthread_mutex_unlock(out->lock);
}

/* The watcher: reads the control connection while a query runs (CANCEL,
 * SYNC, its end), and says HEARTBEAT every SL_HEARTBEAT_MS so that the
 * coordinator can tell a busy node from a hung one (node_frames.h). */
static void *watch(void *arg) {
  watcher *w = arg;
  sl_strbuf p = SL_STRBUF_INIT;
  sl_error err = {0};
  const sl_frame_out out = {w->fd, w->send_lock, NULL};
  double next_beat = 0;
  /* After CANCEL or SYNC the node is stopping: it goes on beating (the
   * coordinator waits for its answer) but reads no more, since what
   * follows is for the main loop. */
  bool reading = true;
  while (!atomic_load(&w->stop)) {
    double now = sl_clock_seconds();
    if (now >= next_beat) {
      beat(&out);
      next_beat = now + SL_HEARTBEAT_MS / 1000.0;
    }
    if (!reading) {
      poll(NULL, 0, 50);
      continue;
    }
    uint32_t type;
    int rc = sl_frame_recv(w->fd, &type, &p, 50, &err);
    if (rc == SL_FRAME_TIMEOUT)
      continue;
    if (rc == SL_OK && type == SL_FRAME_CREDIT &&
        sl_node_credit_grant(w->credit, p.data, p.len, &err) == SL_OK)
      continue;
    /* CANCEL, SYNC, or the coordinator is gone: stop the query. */
    for (int k = 0; k < SL_NODE_MAX_FED; k++)
      if (w->feeds[k])
        sl_stage_feed_close(w->feeds[k]);
    sl_cancel_request(&w->token);
    if (rc == SL_OK && type == SL_FRAME_SYNC)
      atomic_store(&w->sync, true);
    if (rc != SL_OK)
      break; /* nobody to beat for */
    if (type == SL_FRAME_CANCEL || type == SL_FRAME_SYNC)
      reading = false;
  }
  sl_error_clear(&err);
  sl_strbuf_free(&p);
  return NULL;
}

/* The most worker-to-worker channels a node sets up for an exchange
 * between nodes (members^2 sockets' table, members = nodes x workers). */
#define NODE_MAX_MEMBERS 4096

/* The error of a statement that ended with `ended`: its code, or that when
 * error has none (an SL_ECANCELLED must stay one: the coordinator takes it
 * for a consequence of another node's failure and waits for the cause). */
static int send_error(int fd, int ended, const sl_error *e) {
  int32_t code = e->code ? e->code : ended < 0 ? ended : SL_EINTERNAL;
  const char *m = e->message ? e->message : "failed";
  sl_error err = {0};
  int rc =
      sl_frame_send(fd, SL_FRAME_ERROR, &code, sizeof code, m, strlen(m), &err);
  sl_error_clear(&err);
  return rc;
}

/* The exchange between daemons (node_frames.h, XLISTEN): this node's listening
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
  sl_xlisten_msg m;
  char host[INET6_ADDRSTRLEN + 2];
  int rc = sl_xlisten_msg_decode(p->data, p->len, &m, &err);
  sl_strbuf lines = SL_STRBUF_INIT;
  /* Links come after the query's other channels: they keep those. */
  if (rc != SL_OK || m.what != 3)
    exchange_listen_close(x);
  else if (x->link_fd >= 0) {
    close(x->link_fd);
    x->link_fd = -1;
  }
  const char *transport = sl_exchange_transport_name(m.transport);
  int w = (int)sl_settings_get_int(sl_session_settings(s),
                                   "parallelism.default", 1);
  if (w < 1)
    w = 1;
  if (rc == SL_OK && m.what == 1 &&
      (int64_t)m.node_count * w > NODE_MAX_MEMBERS)
    rc = sl_error_set(&err, SL_EUNSUPPORTED,
                      "an exchange between %d nodes of %d workers is more "
                      "than the %d workers one exchange may have: lower "
                      "parallelism.default",
                      m.node_count, w, NODE_MAX_MEMBERS);
  if (rc == SL_OK)
    rc = listen_host(fd, m.transport, host, sizeof host, &err);
  if (rc == SL_OK && m.what == 2)
    rc = xlisten_leaders(x, m.node_index, m.node_count, transport, host, &lines,
                         &err);
  else if (rc == SL_OK && m.what == 3) {
    char addr[INET6_ADDRSTRLEN + 8], bound[128];
    snprintf(addr, sizeof addr, "%s:0", host);
    rc = sl_channel_listen("tcp", addr, &x->link_fd, bound, sizeof bound, &err);
    if (rc == SL_OK)
      sl_strbuf_printf(&lines, "S %d %s\n", m.node_index, bound);
  } else if (rc == SL_OK) {
    int me = m.node_index, n = m.node_count * w;
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
    rc = send_error(fd, rc, &err);
  }
  sl_strbuf_free(&lines);
  sl_error_clear(&err);
  return rc;
}

static int run_query(sl_session *s, int fd, const sl_strbuf *p,
                     exchange_listen *x, const sl_secret *secret) {
  sl_error err = {0};
  sl_query_msg m;
  if (sl_query_msg_decode(p->data, p->len, &m, &err) != SL_OK) {
    send_error(fd, SL_EIO, &err);
    sl_error_clear(&err);
    exchange_listen_close(x);
    return SL_EIO;
  }
  int leaf = m.leaf, fed = m.fed, nfed = m.nfed, join = m.join;
  int found0 = 0;
  char **link_addrs =
      sl_xaddr_parse(m.addrs, m.addrs_len, m.node_count, 'S', &found0);
  pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
  sl_node_credit credit;
  watcher w = {fd, &send_lock, false, false, &credit, {NULL}, {0, NULL}};
  sl_node_credit_init(&credit, &w.token);
  if (fed >= 0 && fed < SL_NODE_MAX_FED)
    w.feeds[fed] = sl_stage_feed_new();
  for (int k = 0; k < nfed && k < SL_NODE_MAX_FED && fed >= 0; k++)
    if (!w.feeds[k])
      w.feeds[k] = sl_stage_feed_new();
  pthread_t t;
  bool watching = pthread_create(&t, NULL, watch, &w) == 0;
  sl_query_stats st;
  sl_exec_nodes nodes = {0};
  nodes.node_index = m.node_index;
  nodes.node_count = m.node_count;
  nodes.dist = &sl_cluster_distribution;
  nodes.coordinator_fd = fd;
  nodes.coordinator_lock = &send_lock;
  nodes.coordinator_credit = &credit;
  nodes.cancel = &w.token;
  nodes.exchange_between_nodes = m.transport != SL_XPORT_NONE;
  nodes.exchange_transport = m.transport;
  nodes.query_id = m.query_id;
  nodes.feeds = w.feeds;
  nodes.secret = secret;
  char **addrs = NULL, **leader_addrs = NULL;
  int found = 0;
  bool listened = m.transport == SL_XPORT_TCP || m.transport == SL_XPORT_VERBS;
  if (listened && x->members > 0) {
    addrs = sl_xaddr_parse(m.addrs, m.addrs_len, x->members, 0, &found);
    nodes.listen_fds = x->fds;
    nodes.peer_addrs = (const char *const *)addrs;
  }
  if (listened && x->nodes > 0) {
    leader_addrs = sl_xaddr_parse(m.addrs, m.addrs_len, x->nodes, 'L', &found);
    nodes.leader_listen_fds = x->leader_fds;
    nodes.leader_addrs = (const char *const *)leader_addrs;
  }
  /* A join's side: where its rows go.  Its stages: the links from the
   * side's nodes (as many as this cluster has), and under a repartition
   * of both sides from this cluster's nodes too. */
  nodes.nstage = found0 > 0 ? m.node_count : 0;
  nodes.stage_addrs = (const char *const *)link_addrs;
  sl_stage_links *links = NULL;
  int rc = SL_OK;
  if (fed >= 0 &&
      (x->link_fd < 0 || fed >= SL_NODE_MAX_FED || nfed > SL_NODE_MAX_FED))
    rc = sl_error_set(&err, SL_EINTERNAL,
                      "the stages of a join were sent here without a link "
                      "listener (XLISTEN 3), or with more than %d leaves: do "
                      "the coordinator and the node run one build?",
                      SL_NODE_MAX_FED);
  else if (fed >= 0) {
    int senders[SL_NODE_MAX_FED];
    for (int k = 0; k < SL_NODE_MAX_FED; k++)
      senders[k] = m.node_count;
    rc = sl_stage_links_start(x->link_fd, SL_NODE_MAX_FED, senders, w.feeds,
                              secret, &links, &err);
  }
  if (rc == SL_OK) {
    /* The query's memory on this host is summed with its shell's and its
     * other nodes' here (the shell's pid is the query id's top half). */
    char who[40];
    if (leaf > 0)
      snprintf(who, sizeof who, "node %d of leaf %d", m.node_index, leaf + 1);
    else
      snprintf(who, sizeof who, "node %d", m.node_index);
    sl_memory_host_join(m.query_id >> 32, who);
  }
  /* the coordinator's CANCEL also stops parsing, planning, compiling */
  sl_session_set_cancel(s, &w.token);
  const sl_cancel *outer = sl_cancel_scope_enter(&w.token);
  if (rc == SL_OK)
    rc = sl_session_run_on_node(s, m.sql, m.sql_len, leaf, fed, join,
                                m.strategy, &nodes, &st, &err);
  sl_cancel_scope_leave(outer);
  sl_session_set_cancel(s, NULL);
  sl_stage_links_stop(links);
  sl_xaddr_free(link_addrs, m.node_count, 'S');
  atomic_store(&w.stop, true);
  if (watching)
    pthread_join(t, NULL);
  for (int k = 0; k < SL_NODE_MAX_FED; k++)
    sl_stage_feed_free(w.feeds[k]);
  sl_node_credit_destroy(&credit);
  sl_xaddr_free(addrs, x->members, 0);
  sl_xaddr_free(leader_addrs, x->nodes, 'L');
  exchange_listen_close(x);
  int src;
  if (rc == SL_ECANCELLED && sl_cancel_pending(&w.token))
    rc = SL_OK; /* stopped as asked: what it did counts */
  if (rc == SL_OK)
    src = sl_frame_send(fd, SL_FRAME_DONE, &st, sizeof st, NULL, 0, &err);
  else
    src = send_error(fd, rc, &err);
  if (src == SL_OK && atomic_load(&w.sync))
    src = sl_frame_send(fd, SL_FRAME_SYNC_ACK, NULL, 0, NULL, 0, &err);
  sl_error_clear(&err);
  return src;
}

int sl_node_serve(int fd, const sl_secret *secret) {
  /* A node forked by a shell's statement inherits that thread's cancel
   * scope: here only the coordinator's CANCEL stops anything. */
  sl_cancel_scope_enter(NULL);
  sl_session *s = sl_session_new();
  sl_session_set_node(s);
  sl_error err = {0};
  uint32_t workers = (uint32_t)sl_settings_get_int(sl_session_settings(s),
                                                   "parallelism.default", 1);
  /* The version, and whether this node can take verbs channels (the
   * coordinator picks verbs only when every node can). */
  sl_strbuf about = SL_STRBUF_INIT;
  sl_strbuf_append(&about, sl_version());
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
      char who[128];
      sl_channel_describe_peer(fd, who, sizeof who);
      fprintf(stderr, "sluice node: dropped the connection from %s: %s\n", who,
              err.message);
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
                        : send_error(fd, erc, &e);
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
