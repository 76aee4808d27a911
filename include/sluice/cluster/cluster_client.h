/* cluster_client.h - the shell's side of a cluster (node_frames.h): starting or
 * joining nodes, keeping their catalogs and settings in step, `.nodes`.
 *
 * Ownership: a cluster owns its sockets and, for forked nodes, the child
 * processes (sl_cluster_free closes the sockets, which ends the nodes, and
 * waits for them).  Not thread-safe: one session uses it. */
#ifndef SLUICE_SHELL_CLUSTER_H
#define SLUICE_SHELL_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/net/auth.h"

typedef struct sl_cluster_node {
  int fd;
  pid_t pid;     /* forked on this host, or 0 (a daemon elsewhere) */
  char *address; /* "local pid 1234" or "host:port" */
  int workers;   /* its parallelism.default when it said HELLO */
  bool healthy;  /* false once its connection broke */
  bool reaped;   /* forked, and its process was waited for */
  /* Its RDMA device from HELLO ("rxe0 10.0.2.15 1 Ethernet"), or why it
   * has none ("no RDMA device"). */
  bool rdma;
  char rdma_device[160];
} sl_cluster_node;

typedef struct sl_cluster {
  int n;
  sl_cluster_node *nodes;
  bool spawned;     /* started by this shell (--nodes / SET 'sluice.nodes') */
  uint32_t queries; /* queries sent so far */
  /* Which of the session's clusters this is (0, or the leaf of a staged
   * query it runs, plan.h): it keeps the shm channel names of clusters
   * running at once apart. */
  uint32_t tag;
  /* Daemons that broke and could not be joined again, dropped from nodes
   * ("host:port, ..."): the cluster is degraded. */
  sl_strbuf gone;
} sl_cluster;

/* What a forked node process runs: serve one coordinator's connection
 * (the session layer's sl_node_serve, passed down so that this layer does
 * not call up into the session). */
typedef int (*sl_node_serve_fn)(int fd, const sl_secret *secret);

/* Fork n node processes on this host, each running serve on one end of a
 * socket pair (which needs no proof: only this process holds the other
 * end); their channels and links prove secret to each other.  SL_EIO with
 * a message if one cannot start. */
int sl_cluster_spawn(sl_cluster **out, int n, const sl_secret *secret,
                     sl_node_serve_fn serve, sl_error *err);
/* Connect to daemons at "host:port,host:port,...", proving to each that
 * this side knows the cluster secret (auth.h) and checking its proof. */
int sl_cluster_connect(sl_cluster **out, const char *list,
                       const sl_secret *secret, sl_error *err);
void sl_cluster_free(sl_cluster *c);

/* Apply a statement (CREATE, DROP, SET, RESET) on every healthy node.  The
 * first node's error, naming the node, if any refuses it.  A node that
 * breaks meanwhile (no answer within 10 s, its connection gone) is marked
 * broken, which is not the statement's error: the session joins it again
 * or goes on without it before the next query (session_nodes.c), and
 * replays its statements then. */
int sl_cluster_exec(sl_cluster *c, const char *text, size_t len, sl_error *err);
/* The same on node i alone. */
int sl_cluster_exec_node(sl_cluster *c, int i, const char *text, size_t len,
                         sl_error *err);
/* A broken daemon node (not a forked one): connect to its address again
 * (the daemon serves the new connection in a fresh process), prove the
 * secret, read its HELLO.  SL_OK: node i is healthy again, with an empty
 * catalog. */
int sl_cluster_rejoin(sl_cluster *c, int i, const sl_secret *secret,
                      sl_error *err);
/* Before a statement: a node whose connection has ended while the shell
 * was idle (its process died, its daemon restarted) or that sends out of
 * turn is marked broken, so that it is joined or started again first. */
void sl_cluster_check_idle(sl_cluster *c);
/* Daemons dropped earlier (c->gone) that answer again: each is joined
 * afresh (proving the secret), brought up to date with the session's
 * statements log[0..nlog) and appended to the nodes; what to tell the
 * user goes to said.  How many came back (the last ones of c->nodes). */
int sl_cluster_rejoin_gone(sl_cluster *c, const sl_secret *secret,
                           const char *const *log, const size_t *log_len,
                           int nlog, sl_strbuf *said);
/* Remove node i (the later ones move down one index); its address is
 * kept in c->gone for `.nodes`. */
void sl_cluster_drop(sl_cluster *c, int i);
/* "host:port,host:port" of the nodes left (for the leaves' clusters). */
void sl_cluster_addresses(const sl_cluster *c, sl_strbuf *out);
/* Send QUERY to every node: node i gets index i of n; leaf >= 0: run only
 * that leaf of the query's staged plan (-1: the whole query); fed >= 0:
 * and the stages, with that leaf's rows sent over links by its own nodes
 * (join: the join strategy, plan.h sl_join_strategy); nfed > 0: under a
 * repartition of every leaf, leaves 0 .. nfed - 1 all come over links.
 * across: the transport of the channels between nodes
 * (sl_exchange_transport, node_frames.h; SL_XPORT_NONE when none): shm meets at
 * names, tcp and verbs at the addresses from sl_cluster_xlisten. */
int sl_cluster_query(sl_cluster *c, const char *text, size_t len, int leaf,
                     int fed, int nfed, int join, int strategy, int across,
                     const sl_strbuf *addrs, sl_error *err);
/* Before a query that moves data between nodes over tcp or verbs: every
 * node listens on `transport` for the channels it will consume; their
 * XADDR lines are appended to addrs.  what: 1 the exchange between workers
 * (repartition), 2 the partition leaders' channels between nodes (late
 * merge). */
int sl_cluster_xlisten(sl_cluster *c, int what, int transport, sl_strbuf *addrs,
                       sl_error *err);

/* The transport of the channels between the nodes, from `want` (the
 * sluice.transport setting): auto is shm between nodes forked on this host
 * and, between daemons, verbs when every node has an active RDMA device,
 * else tcp; shm only joins forked nodes; verbs needs a device on every node
 * (the error names the first node without one).  *transport gets an
 * sl_exchange_transport; device (if not NULL) gets node 0's device name
 * for verbs, "" otherwise. */
int sl_cluster_transport(const sl_cluster *c, const char *want, int *transport,
                         char *device, size_t device_size, sl_error *err);
/* After a query (succeeded or not): bring every node back in step (node_frames.h,
 * SYNC).  A node silent for SL_SILENCE_MS (not even a HEARTBEAT while it
 * is stopping a query) is marked broken. */
void sl_cluster_sync(sl_cluster *c);
/* The sockets, for sl_execute (valid until sl_cluster_free). */
const int *sl_cluster_fds(const sl_cluster *c, int *buf);

/* Ask every node that was healthy whether it still answers (a SYNC round
 * trip, 2 s each at most); the ones that do not are marked broken. */
void sl_cluster_ping(sl_cluster *c);

/* `.nodes`: one line per node: index, address, workers, health. */
void sl_cluster_describe(const sl_cluster *c, sl_strbuf *out);

#endif
