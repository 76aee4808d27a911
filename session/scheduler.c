/* scheduler.c - the session's clusters (cluster_client.h): starting or joining
 * nodes and keeping them in step with the session's statements, running a
 * query on them (a staged query's leaves each on a cluster of its own,
 * the stages here) and EXPLAIN's Nodes block.  A node's side of a query
 * is node_stages.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../session/session_int.h"
#include "sluice/binder/binder.h"
#include "sluice/cluster/distribution.h"
#include "sluice/exec/executor.h"
#include "sluice/net/channel.h"
#include "sluice/parser/parser.h"

/* ---- clusters ----------------------------------------------------------- */

/* Workers per node (each node runs parallelism.default). */
static int node_workers(sl_session *s) {
  int w = (int)sl_settings_get_int(s->settings, "parallelism.default", 1);
  return w < 1 ? 1 : w;
}

/* A statement that changed the catalog or settings: remember it for nodes
 * that start later, and apply it on the current ones. */
int session_replicate(sl_session *s, const char *text, size_t len,
                      sl_error *err) {
  if (s->is_node)
    return SL_OK;
  if (s->nlog == s->caplog) {
    s->caplog = s->caplog ? s->caplog * 2 : 16;
    s->log = realloc(s->log, sizeof *s->log * (size_t)s->caplog);
    s->log_len = realloc(s->log_len, sizeof *s->log_len * (size_t)s->caplog);
    if (!s->log || !s->log_len)
      abort();
  }
  s->log[s->nlog] = malloc(len + 1);
  if (!s->log[s->nlog])
    abort();
  memcpy(s->log[s->nlog], text, len);
  s->log[s->nlog][len] = '\0';
  s->log_len[s->nlog++] = len;
  /* The leaves' clusters are brought up to date from the log when they
   * are next needed, should this fail on one of them. */
  for (int k = 0; k < s->nleaf_clusters; k++) {
    sl_error e = {0};
    if (s->leaf_clusters[k] &&
        sl_cluster_exec(s->leaf_clusters[k], text, len, &e) != SL_OK) {
      sl_cluster_free(s->leaf_clusters[k]);
      s->leaf_clusters[k] = NULL;
    }
    sl_error_clear(&e);
  }
  return s->cluster ? sl_cluster_exec(s->cluster, text, len, err) : SL_OK;
}

static void free_leaf_clusters(sl_session *s) {
  for (int k = 0; k < s->nleaf_clusters; k++)
    sl_cluster_free(s->leaf_clusters[k]);
  free(s->leaf_clusters);
  s->leaf_clusters = NULL;
  s->nleaf_clusters = 0;
}

void session_free_clusters(sl_session *s) {
  free_leaf_clusters(s);
  sl_cluster_free(s->cluster);
  s->cluster = NULL;
  free(s->cluster_list);
  s->cluster_list = NULL;
  sl_secret_wipe(&s->secret);
}

/* Bring a new cluster up to date: every statement of the log, in order. */
static int replay_log(sl_session *s, sl_cluster *c, sl_error *err) {
  int rc = SL_OK;
  for (int i = 0; rc == SL_OK && i < s->nlog; i++)
    rc = sl_cluster_exec(c, s->log[i], s->log_len[i], err);
  return rc;
}

static bool cluster_healthy(const sl_cluster *c) {
  for (int i = 0; i < c->n; i++)
    if (!c->nodes[i].healthy)
      return false;
  return true;
}

/* Say something to the user, if there is a sink to say it to. */
static void tell(sl_result_sink *sink, const char *text) {
  if (sink && sink->notice)
    (void)sink->notice(sink->ctx, text);
}

/* A joined cluster with broken nodes: each is joined again (its daemon
 * serves a new connection in a fresh process) and brought up to date from
 * the log; a daemon that cannot be reached is dropped and the query runs
 * on the nodes left (every node's share is of the node count it is sent,
 * so the results stay complete), and the user is told.  No node left: an
 * error. */
static int mend_joined(sl_session *s, sl_result_sink *sink, sl_error *err) {
  sl_cluster *c = s->cluster;
  bool changed = false;
  for (int i = c->n - 1; i >= 0; i--) {
    if (c->nodes[i].healthy)
      continue;
    changed = true;
    char *address = strdup(c->nodes[i].address);
    if (!address)
      abort();
    sl_error why = {0};
    int rc = sl_cluster_rejoin(c, i, &s->secret, &why);
    for (int k = 0; rc == SL_OK && k < s->nlog; k++)
      rc = sl_cluster_exec_node(c, i, s->log[k], s->log_len[k], &why);
    if (rc == SL_OK && !c->nodes[i].healthy)
      rc = sl_error_set(&why, SL_EIO, "it broke again");
    sl_strbuf m = SL_STRBUF_INIT;
    if (rc == SL_OK) {
      sl_strbuf_printf(&m,
                       "[INFO] node %d (%s) was lost (its connection broke: "
                       "its daemon restarted, or its process died); it was "
                       "joined again.",
                       i, address);
    } else {
      sl_cluster_drop(c, i);
      sl_strbuf_printf(&m,
                       "[WARNING] node %d (%s) broke and cannot be joined "
                       "again (%s): queries run on the %d node%s left; the "
                       "cluster is degraded (.nodes).",
                       i, address, why.message ? why.message : "failed", c->n,
                       c->n == 1 ? "" : "s");
    }
    tell(sink, sl_strbuf_cstr(&m));
    sl_strbuf_free(&m);
    sl_error_clear(&why);
    free(address);
  }
  /* Daemons dropped earlier that answer again (restarted). */
  sl_strbuf back = SL_STRBUF_INIT;
  if (sl_cluster_rejoin_gone(c, &s->secret, (const char *const *)s->log,
                             s->log_len, s->nlog, &back) > 0) {
    tell(sink, sl_strbuf_cstr(&back));
    changed = true;
  }
  sl_strbuf_free(&back);
  if (!changed)
    return SL_OK;
  /* The leaves' clusters join the nodes left, afresh. */
  free_leaf_clusters(s);
  sl_strbuf list = SL_STRBUF_INIT;
  sl_cluster_addresses(c, &list);
  free(s->cluster_list);
  s->cluster_list = sl_strbuf_detach(&list);
  if (c->n == 0)
    return sl_error_set(err, SL_EIO,
                        "every node of the cluster is gone (%s): start them "
                        "again and join them with a new shell",
                        sl_strbuf_cstr(&c->gone));
  return SL_OK;
}

/* The nodes for the next query: SET 'sluice.nodes' = 'N' (N > 1) starts N
 * on this host (again, when N changed or one broke) and replays the
 * session's statements on them; a cluster joined with --cluster is mended
 * (mend_joined). */
static int ensure_cluster(sl_session *s, sl_result_sink *sink, sl_error *err) {
  if (s->is_node)
    return SL_OK;
  if (s->cluster) /* ended while idle: a node died, a daemon restarted */
    sl_cluster_check_idle(s->cluster);
  if (s->cluster && !s->cluster->spawned)
    return mend_joined(s, sink, err);
  int n = (int)sl_settings_get_int(s->settings, "sluice.nodes", 1);
  if (s->cluster && s->cluster->n == n && cluster_healthy(s->cluster))
    return SL_OK;
  if (s->cluster && s->cluster->n == n) {
    char m[160];
    snprintf(m, sizeof m,
             "[INFO] a node broke during an earlier statement; the %d "
             "nodes are started again.",
             n);
    tell(sink, m);
  }
  free_leaf_clusters(s);
  sl_cluster_free(s->cluster);
  s->cluster = NULL;
  if (n <= 1)
    return SL_OK;
  sl_cluster *c = NULL;
  /* The nodes it forks share a secret of the session's, so that theirs
   * and its later clusters' (a staged query's leaves) channels and links
   * prove it to each other. */
  if (!s->secret.set)
    sl_secret_random(&s->secret);
  int rc = sl_cluster_spawn(&c, n, &s->secret, sl_node_serve, err);
  if (rc != SL_OK)
    return rc;
  rc = replay_log(s, c, err);
  if (rc != SL_OK) {
    sl_cluster_free(c);
    return rc;
  }
  s->cluster = c;
  return SL_OK;
}

int sl_session_connect(sl_session *s, const char *list, const sl_secret *secret,
                       sl_error *err) {
  sl_cluster *c = NULL;
  int rc = sl_cluster_connect(&c, list, secret, err);
  if (rc == SL_OK)
    rc = replay_log(s, c, err);
  if (rc != SL_OK) {
    sl_cluster_free(c);
    return rc;
  }
  session_free_clusters(s);
  s->cluster = c;
  s->secret = *secret; /* for the leaves' clusters, joined later */
  s->cluster_list = strdup(list);
  if (!s->cluster_list)
    abort();
  return SL_OK;
}

/* "leaf K's nodes: MESSAGE" */
static int about_leaf(sl_error *err, int leaf) {
  char *m = strdup(err->message ? err->message : "failed");
  if (!m)
    abort();
  int code = err->code ? err->code : SL_EIO;
  sl_error_set(err, code, "leaf %d's nodes: %s", leaf + 1, m);
  free(m);
  return code;
}

/* The clusters for a staged query's leaves 2..nleaves: each the size of
 * the session's cluster, forked like it or joined at the same daemons
 * (which serve every connection in a process of its own), and brought
 * up to date from the log. */
static int ensure_leaf_clusters(sl_session *s, int nleaves, sl_error *err) {
  int need = nleaves - 1;
  if (need > s->nleaf_clusters) {
    s->leaf_clusters =
        realloc(s->leaf_clusters, sizeof *s->leaf_clusters * (size_t)need);
    if (!s->leaf_clusters)
      abort();
    for (int k = s->nleaf_clusters; k < need; k++)
      s->leaf_clusters[k] = NULL;
    s->nleaf_clusters = need;
  }
  for (int k = 0; k < need; k++) {
    sl_cluster *c = s->leaf_clusters[k];
    if (c)
      sl_cluster_check_idle(c);
    if (c && c->n == s->cluster->n && cluster_healthy(c))
      continue;
    sl_cluster_free(c);
    s->leaf_clusters[k] = NULL;
    int rc = s->cluster->spawned
                 ? sl_cluster_spawn(&c, s->cluster->n, &s->secret,
                                    sl_node_serve, err)
                 : sl_cluster_connect(&c, s->cluster_list, &s->secret, err);
    if (rc != SL_OK)
      return about_leaf(err, k + 1);
    rc = replay_log(s, c, err);
    if (rc != SL_OK) {
      sl_cluster_free(c);
      return about_leaf(err, k + 1);
    }
    c->tag = (uint32_t)(k + 1);
    s->leaf_clusters[k] = c;
  }
  return SL_OK;
}

static int notice_into(void *ctx, const char *text) {
  sl_strbuf_printf(ctx, "%s\n", text);
  return SL_OK;
}

void sl_session_describe_nodes(sl_session *s, sl_strbuf *out) {
  sl_error err = {0};
  /* What mending the cluster did goes first. */
  sl_result_sink told = {.ctx = out, .notice = notice_into};
  if (ensure_cluster(s, &told, &err) !=
      SL_OK) /* SET 'sluice.nodes' starts them */
    sl_strbuf_printf(out, "nodes could not start: %s\n", err.message);
  sl_error_clear(&err);
  if (s->cluster) {
    sl_cluster_ping(s->cluster); /* health as of now, not of the last query */
    sl_cluster_describe(s->cluster, out);
    const char *want = sl_settings_get(s->settings, "sluice.transport");
    int t;
    char device[64];
    if (sl_cluster_transport(s->cluster, want, &t, device, sizeof device,
                             &err) == SL_OK)
      sl_strbuf_printf(out,
                       "channels between nodes: %s%s%s (sluice.transport = "
                       "%s)\n",
                       sl_exchange_transport_name(t), device[0] ? " " : "",
                       device, want ? want : "auto");
    else
      sl_strbuf_printf(out, "channels between nodes: cannot open: %s\n",
                       err.message);
    sl_error_clear(&err);
  } else
    sl_strbuf_append(out, "one node: this process (SET 'sluice.nodes' = "
                          "'N' starts N nodes on this host; sluice "
                          "--cluster host:port,... joins daemons)\n");
}

/* SET 'sluice.late-merge' = 'coordinator': the shell merges, as before
 * partition leaders existed. */
static bool late_merge_at_coordinator(sl_session *s) {
  return sl_settings_is(s->settings, "sluice.late-merge", "coordinator");
}

/* "channels between nodes: ..." for EXPLAIN: how many, on which transport
 * (and device), of which shape, why that transport, and the memory their
 * rings take on the nodes (verbs: registered, so pinned). */
static void explain_channels(sl_session *s, int nodes, int channels,
                             const char *what, sl_strbuf *out) {
  const char *want = sl_settings_get(s->settings, "sluice.transport");
  if (!want)
    want = "auto";
  int t = SL_XPORT_SHM;
  char device[64] = "";
  sl_error err = {0};
  /* Forced verbs: the device is the nodes' to report, so start them now
   * (as the next query would). */
  if (!s->cluster && !strcmp(want, "verbs") &&
      ensure_cluster(s, NULL, &err) != SL_OK) {
    sl_strbuf_printf(out,
                     "channels between nodes: nodes could not start: "
                     "%s\n",
                     err.message);
    sl_error_clear(&err);
    return;
  }
  if (s->cluster && sl_cluster_transport(s->cluster, want, &t, device,
                                         sizeof device, &err) != SL_OK) {
    sl_strbuf_printf(out, "channels between nodes: cannot open: %s\n",
                     err.message);
    sl_error_clear(&err);
    return;
  }
  if (!s->cluster) /* forked at the next query: no devices known yet */
    t = !strcmp(want, "tcp")     ? SL_XPORT_TCP
        : !strcmp(want, "verbs") ? SL_XPORT_VERBS
                                 : SL_XPORT_SHM;
  int64_t bs = sl_settings_get_int(s->settings, "sluice.buffer-size", 65536);
  if (bs < 4096)
    bs = 4096;
  bs = (bs + 63) & ~63;
  int credits = t == SL_XPORT_TCP     ? SL_CHANNEL_TCP_DEFAULT_CREDITS
                : t == SL_XPORT_VERBS ? SL_CHANNEL_VERBS_DEFAULT_CREDITS
                                      : SL_CHANNEL_SHM_DEFAULT_CREDITS;
  sl_strbuf_printf(out, "channels between nodes: %d %s", channels,
                   sl_exchange_transport_name(t));
  if (t == SL_XPORT_VERBS)
    sl_strbuf_printf(out, " %s RC WRITE", device);
  if (bs % 1024 == 0)
    sl_strbuf_printf(out, " %d x %lld KiB", credits, (long long)(bs / 1024));
  else
    sl_strbuf_printf(out, " %d x %lld bytes", credits, (long long)bs);
  sl_strbuf_printf(out, " (%s; sluice.transport = %s%s)\n", what, want,
                   strcmp(want, "auto")   ? ""
                   : t == SL_XPORT_SHM    ? ": nodes on one host"
                   : t == SL_XPORT_VERBS  ? ": every node has an RDMA device"
                   : !s->cluster->spawned ? ": not every node has an RDMA "
                                            "device"
                                          : "");
  /* tcp and verbs keep a ring at each end of a channel; shm one mapping
   * (made by the consumer, mapped by the producer). */
  double ring = (double)credits * (double)bs;
  double all = ring * channels * (t == SL_XPORT_SHM ? 1 : 2);
  sl_strbuf_printf(
      out,
      "channel memory: %.1f MiB in all, %.1f MiB per node on average (%s)\n",
      all / 1048576.0, all / nodes / 1048576.0,
      t == SL_XPORT_VERBS ? "a ring at each end of every channel, registered "
                            "with the RDMA device: pinned"
      : t == SL_XPORT_TCP ? "a ring at each end of every channel"
                          : "one shared mapping per channel");
}

/* Late merge at partition leaders, for EXPLAIN's Nodes block: who leads
 * what, the epochs, and the channels between nodes (cluster/node_leaders.h);
 * with EXPLAIN ANALYZE what moved. */
static void explain_leaders(sl_session *s, const sl_plan *plan, int n,
                            const sl_query_stats *st, sl_strbuf *out) {
  sl_strbuf_append(out, "late merge at partition leaders: each node merges "
                        "its workers' partial states, splits them by "
                        "partition of the group key and sends each part to "
                        "its leader; the leader merges, fires a window when "
                        "every node's watermark (its vector clock) has "
                        "passed it, finalizes and sends result rows to this "
                        "process\nleaders:");
  for (int k = 0; k < n; k++)
    sl_strbuf_printf(out, "%s partition %d on node %d", k ? "," : "", k, k);
  const char *es = sl_settings_get(s->settings, "sluice.epoch-size");
  bool slices = plan->windowed && plan->window.kind != SL_WINDOW_TUMBLE;
  sl_strbuf_printf(out,
                   "\nepoch size: %s of input per node (open windows' "
                   "changes move as deltas%s), and at every window end\n",
                   es ? es : "64mb",
                   slices ? ": a slice's delta to each open window it "
                            "belongs to"
                          : "");
  explain_channels(s, n, n * (n - 1), "one from every node to every leader",
                   out);
  if (st)
    sl_strbuf_printf(out,
                     "(actual: epochs sent=%llu, state moved between "
                     "nodes=%llu bytes)\n",
                     (unsigned long long)st->epochs_sent,
                     (unsigned long long)st->state_moved);
}

/* How one single-stage plan's rows meet across n nodes. */
static void explain_plan_on_nodes(sl_session *s, const sl_plan *plan, int n,
                                  const sl_query_stats *st, sl_strbuf *out) {
  bool sessions = sl_plan_sessions_on_one_process(plan);
  if (sessions)
    sl_strbuf_append(out, "except that session windows under late merge run "
                          "on this process only (the nodes do not merge "
                          "session fragments; SET 'sluice.strategy' = "
                          "'auto' or 'repartition' runs them on the "
                          "nodes)\n");
  else if (plan->kind == SL_PLAN_AGGREGATE &&
           plan->strategy == SL_STRATEGY_REPARTITION) {
    sl_strbuf_printf(out,
                     "records are repartitioned between every node's "
                     "workers (channels between nodes, in-process "
                     "rings within one); each node fires and finalizes "
                     "the groups it owns and sends result rows to this "
                     "process%s\n",
                     plan->changelog ? " (each node keeps its groups' "
                                       "merged state and sends their changes)"
                                     : "");
    int w = node_workers(s);
    explain_channels(s, n, n * w * (n - 1) * w,
                     "one from every worker to every worker of another node",
                     out);
  } else if (plan->kind == SL_PLAN_AGGREGATE && plan->changelog)
    sl_strbuf_append(out, "each node merges its workers' changes of an epoch "
                          "and sends them over its control connection as "
                          "one delta; this process merges every delta into "
                          "the result as it comes and sends what changed "
                          "(late merge of updates)\n");
  else if (plan->kind == SL_PLAN_AGGREGATE && !late_merge_at_coordinator(s))
    explain_leaders(s, plan, n, st, out);
  else if (plan->kind == SL_PLAN_AGGREGATE)
    sl_strbuf_append(out, "each node merges its workers' partials and sends "
                          "one partial per window over its control "
                          "connection; this process merges them when every "
                          "node's watermark has passed the window (late "
                          "merge across nodes) and finalizes\n");
  else
    sl_strbuf_append(out, "result rows stream to this process over the "
                          "nodes' control connections\n");
}

int session_node_count(const sl_session *s) {
  if (s->cluster && !s->cluster->spawned)
    return s->cluster->n;
  return (int)sl_settings_get_int(s->settings, "sluice.nodes", 1);
}

/* EXPLAIN's "== Nodes ==" block: where the plan runs when there are
 * several nodes, and how their results meet. */
void session_explain_nodes(sl_session *s, const sl_plan *plan,
                           const sl_query_stats *st, sl_strbuf *out) {
  int n = session_node_count(s);
  if (s->is_node || n <= 1 || plan->kind == SL_PLAN_CONSTANT)
    return;
  const char *where = !s->cluster || s->cluster->n != n
                          ? "forked on this host at the next query"
                      : s->cluster->spawned ? "forked on this host"
                                            : "daemons joined with --cluster";
  if (plan->kind != SL_PLAN_STAGED) {
    sl_strbuf_printf(out,
                     "== Nodes ==\n%d nodes (%s), each running this plan "
                     "on its share of every source; ",
                     n, where);
    explain_plan_on_nodes(s, plan, n, st, out);
    return;
  }
  const sl_staged_plan *sp = plan->staged;
  if (sl_join_routes_both(sp->join_strategy) && sp->bcast_leaf < 0) {
    sl_strbuf_printf(
        out,
        "== Nodes ==\n%d nodes (%s), each running leaf %d on its share of "
        "every source and the stages over the rows whose key's hash names "
        "it: every node sends each row over links (tcp) to the node its "
        "key names (its own rows to itself too), with its watermarks; each "
        "node's changes (its keys' alone) come here and go out as each of "
        "its rounds ends\nleaf %d: each node's rows go over the links by "
        "their key\n",
        n, where, sp->local_leaf + 1, sp->local_leaf + 1);
    return;
  }
  if (sl_join_routes_both(sp->join_strategy)) {
    sl_strbuf others = SL_STRBUF_INIT;
    int nothers = sp->nleaves - 1;
    for (int k = 0, j = 0; k < sp->nleaves; k++)
      if (k != sp->local_leaf) {
        sl_strbuf_printf(&others, "%s%d",
                         j == 0             ? ""
                         : j == nothers - 1 ? " and "
                                            : ", ",
                         k + 1);
        j++;
      }
    sl_strbuf_printf(
        out,
        "== Nodes ==\n%d nodes (%s), each running leaf %d on its share of "
        "every source and the stages over the rows of %s whose join key's "
        "hash names it: %s %s %s; the nodes of every leaf send each row "
        "over links (tcp) to the node its join key names (a stage node's "
        "own rows to itself too)%s, with their watermarks; %s\n",
        n, where, sp->local_leaf + 1,
        nothers == 1 ? "both leaves" : "every leaf",
        nothers == 1 ? "leaf" : "leaves", sl_strbuf_cstr(&others),
        nothers == 1 ? "runs on node processes of its own"
                     : "each run on node processes of their own",
        sp->join_strategy == SL_JOIN_LATE_MERGE_ROWS
            ? ", a window's rows at once when the sender's watermark passes "
              "it (late merge)"
            : "",
        sp->updating ? "each stage node's changes (its keys' alone) come "
                       "here and go out as each of its rounds ends"
                     : "the stage nodes' result rows come here and go out "
                       "window by window, once every node has passed a "
                       "window");
    sl_strbuf_free(&others);
    for (int k = 0; k < sp->nleaves; k++) {
      /* The stage nodes' own leaf first. */
      int leaf = k == 0 ? sp->local_leaf : k <= sp->local_leaf ? k - 1 : k;
      const sl_plan *lp = sp->leaves[leaf];
      sl_strbuf_printf(
          out, "leaf %d: %s\n", leaf + 1,
          lp->kind != SL_PLAN_AGGREGATE
              ? "each node's rows go over the links by their join key"
          : lp->strategy == SL_STRATEGY_REPARTITION
              ? "records are repartitioned between every node's workers; "
                "each node's finished groups go over the links by their "
                "join key"
              : "late merge at partition leaders; each leader's finished "
                "groups go over the links by their join key");
    }
    return;
  }
  if (sp->join_strategy != SL_JOIN_SINGLE) {
    int l = sp->local_leaf, b = sp->bcast_leaf;
    bool rep = sp->join_strategy == SL_JOIN_REPARTITION;
    bool late = sp->join_strategy == SL_JOIN_LATE_MERGE;
    sl_strbuf_printf(out,
                     "== Nodes ==\n%d nodes (%s), each running leaf %d on "
                     "its share of every source and the stages over its "
                     "own rows of leaf %d: leaf %d runs on node processes "
                     "of its own, whose nodes send %s over links (tcp) "
                     "straight to the stage nodes, with their watermarks; "
                     "the stage nodes' result rows come here and go out "
                     "window by window, once every node has passed a "
                     "window\n",
                     n, where, l + 1, l + 1, b + 1,
                     late  ? "leader p's finished groups (join-key partition "
                             "p) to node p (late merge)"
                     : rep ? "each row to the node leading its join key's "
                             "partition (repartition)"
                           : "every row to each node (broadcast)");
    const sl_plan *lp = sp->leaves[l];
    sl_strbuf_printf(
        out, "leaf %d: %s\n", l + 1,
        lp->kind != SL_PLAN_AGGREGATE
            ? "each node's rows feed its own stages (they never move)"
        : lp->strategy == SL_STRATEGY_REPARTITION
            ? "records are repartitioned between every node's workers; "
              "each node's finished groups feed its own stages"
        : rep || late ? "late merge at partition leaders, partitioned by "
                        "the join key; each leader's finished groups feed "
                        "its own stages"
                      : "late merge at partition leaders; each leader's "
                        "finished groups feed its own stages");
    const sl_plan *bp = sp->leaves[b];
    sl_strbuf_printf(
        out, "leaf %d: %s\n", b + 1,
        bp->kind != SL_PLAN_AGGREGATE
            ? "each node's rows go over the links to the stage nodes"
        : bp->strategy == SL_STRATEGY_REPARTITION
            ? "records are repartitioned between every node's workers; "
              "each node's finished groups go over the links to the stage "
              "nodes"
        : late ? "late merge at partition leaders, partitioned by the join "
                 "key; leader p's finished groups go over a link to stage "
                 "node p"
               : "late merge at partition leaders; each leader's finished "
                 "groups go over the links to the stage nodes");
    return;
  }
  sl_strbuf_printf(out,
                   "== Nodes ==\n%d nodes (%s), each running every leaf "
                   "on its share of every source (leaf k in a node process "
                   "of its own: one query per control connection); the "
                   "leaves' rows and watermarks stream to this process, "
                   "which runs the stages above them (joins, aggregates "
                   "over windows, Top-N) once every leaf on every node has "
                   "passed a window\n",
                   n, where);
  for (int k = 0; k < sp->nleaves; k++) {
    sl_strbuf_printf(out, "leaf %d: ", k + 1);
    explain_plan_on_nodes(s, sp->leaves[k], n, NULL, out);
  }
}

/* Send plan (leaf >= 0: that leaf of the query's staged plan) to the nodes
 * of c: the channels its strategy needs between them first, then QUERY.
 * nodes (with fds, room for c->n) gets what sl_execute needs.  A join
 * on the nodes (stage_link.c): the stage nodes (fed >= 0) listen for links
 * first and their "S node host:port" lines are appended to links; the
 * side's nodes (links given, fed < 0) are sent those lines. */
static int start_on_cluster(sl_session *s, sl_cluster *c, const sl_plan *plan,
                            int leaf, int fed, int nfed, int join,
                            const char *text, size_t len, sl_strbuf *links,
                            sl_exec_nodes *nodes, int *fds, sl_error *err) {
  /* Repartitioning between nodes: records move on channels between the
   * nodes' workers. */
  bool across = plan->strategy == SL_STRATEGY_REPARTITION &&
                plan->kind == SL_PLAN_AGGREGATE;
  /* Late merge: partial state goes to partition leaders over channels
   * between the nodes (node_leaders.h), unless the shell is to merge. */
  bool leaders = !across && plan->kind == SL_PLAN_AGGREGATE && c->n > 1 &&
                 !plan->changelog && !late_merge_at_coordinator(s);
  /* shm channels meet at names; tcp and verbs at addresses the nodes give
   * first (XLISTEN). */
  int transport = SL_XPORT_NONE, rc = SL_OK;
  if (across || leaders)
    rc = sl_cluster_transport(c,
                              sl_settings_get(s->settings, "sluice.transport"),
                              &transport, NULL, 0, err);
  sl_strbuf addrs = SL_STRBUF_INIT;
  if (rc == SL_OK && (transport == SL_XPORT_TCP || transport == SL_XPORT_VERBS))
    rc = sl_cluster_xlisten(c, across ? 1 : 2, transport, &addrs, err);
  if (rc == SL_OK && links && fed >= 0)
    rc = sl_cluster_xlisten(c, 3, SL_XPORT_TCP, links, err);
  /* The side's nodes send to the stage nodes' links; under a repartition
   * of both sides the stage nodes send their own rows there too. */
  if (rc == SL_OK && links &&
      (fed < 0 || sl_join_routes_both((sl_join_strategy)join)))
    sl_strbuf_appendn(&addrs, links->data, links->len);
  if (rc == SL_OK)
    rc = sl_cluster_query(c, text, len, leaf, fed, nfed, join,
                          (int)plan->strategy, transport, &addrs, err);
  sl_strbuf_free(&addrs);
  memset(nodes, 0, sizeof *nodes);
  nodes->nnodes = c->n;
  nodes->dist = &sl_cluster_distribution;
  nodes->exchange_between_nodes = across || leaders;
  nodes->fds = sl_cluster_fds(c, fds);
  return rc;
}

/* A broadcast join on the nodes: the local leaf's cluster runs the
 * stages, each node over its own share; the broadcast leaf runs on a
 * cluster of its own, and this process sends its rows to every stage
 * node (cluster/stage_broadcast.c).  Under a repartition of more than two
 * leaves (q23) every leaf but the local one is such a side, each on a
 * cluster of its own. */
static int execute_broadcast_on_nodes(sl_session *s, sl_plan *plan,
                                      const char *text, size_t len,
                                      sl_result_sink *sink, sl_query_stats *st,
                                      sl_error *err) {
  const sl_staged_plan *sp = plan->staged;
  /* Updating stages over one stream: its nodes route their own rows to
   * each other by key and run the stages; there is no side. */
  bool one = sp->bcast_leaf < 0;
  bool every = sl_join_routes_both(sp->join_strategy);
  int nsides = one ? 0 : every ? sp->nleaves - 1 : 1;
  int rc = ensure_leaf_clusters(s, 1 + nsides, err);
  if (rc != SL_OK)
    return rc;
  int n = s->cluster->n;
  int *fds = calloc((size_t)((1 + nsides) * n), sizeof *fds);
  sl_exec_nodes *side = calloc((size_t)nsides + 1, sizeof *side);
  int *side_leaf = calloc((size_t)nsides + 1, sizeof *side_leaf);
  if (!fds || !side || !side_leaf)
    abort();
  for (int k = 0, j = 0; k < sp->nleaves && j < nsides; k++)
    if (k != sp->local_leaf && (every || k == sp->bcast_leaf))
      side_leaf[j++] = k;
  sl_exec_nodes local;
  sl_strbuf links = SL_STRBUF_INIT;
  rc = start_on_cluster(s, s->cluster, sp->leaves[sp->local_leaf],
                        sp->local_leaf, one ? sp->local_leaf : sp->bcast_leaf,
                        every ? sp->nleaves : 0, (int)sp->join_strategy, text,
                        len, &links, &local, fds, err);
  if (rc != SL_OK)
    about_leaf(err, sp->local_leaf);
  /* From here the sides' nodes may have been sent something. */
  int tried = 0;
  for (int j = 0; j < nsides && rc == SL_OK; j++) {
    tried = j + 1;
    rc = start_on_cluster(s, s->leaf_clusters[j], sp->leaves[side_leaf[j]],
                          side_leaf[j], -1, 0, (int)sp->join_strategy, text,
                          len, &links, &side[j], fds + (j + 1) * n, err);
    if (rc != SL_OK) {
      about_leaf(err, side_leaf[j]);
      /* The stage nodes and the sides started wait for a side that will
       * not come. */
      for (int i = 0; i < (j + 1) * n; i++)
        sl_frame_send(fds[i], SL_FRAME_CANCEL, NULL, 0, NULL, 0, NULL);
    }
  }
  if (rc == SL_OK)
    rc = sl_execute_broadcast(plan, session_run(s, NULL), side, side_leaf,
                              nsides, local.fds, n, sink, st, err);
  sl_cluster_sync(s->cluster);
  for (int j = 0; j < tried; j++)
    sl_cluster_sync(s->leaf_clusters[j]);
  sl_strbuf_free(&links);
  free(fds);
  free(side);
  free(side_leaf);
  if (rc == SL_OK)
    st->workers = (1 + nsides) * n * node_workers(s);
  return rc;
}

/* A staged plan on the nodes: each leaf on a cluster of its own (the
 * session's, then its leaf clusters), all at once; the stages run here on
 * the rows the leaves' nodes send. */
static int execute_staged_on_nodes(sl_session *s, sl_plan *plan,
                                   const char *text, size_t len,
                                   sl_result_sink *sink, sl_query_stats *st,
                                   sl_error *err) {
  const sl_staged_plan *sp = plan->staged;
  if (sp->join_strategy != SL_JOIN_SINGLE)
    return execute_broadcast_on_nodes(s, plan, text, len, sink, st, err);
  int rc = ensure_leaf_clusters(s, sp->nleaves, err);
  if (rc != SL_OK)
    return rc;
  int n = s->cluster->n;
  sl_exec_nodes *nodes = calloc((size_t)sp->nleaves, sizeof *nodes);
  const sl_exec_nodes **per_leaf =
      calloc((size_t)sp->nleaves, sizeof *per_leaf);
  int *fds = calloc((size_t)(sp->nleaves * n), sizeof *fds);
  if (!nodes || !per_leaf || !fds)
    abort();
  int here = 0;
  for (int k = 0; k < sp->nleaves && rc == SL_OK; k++) {
    if (sl_plan_sessions_on_one_process(sp->leaves[k])) {
      here++; /* per_leaf[k] stays NULL: the leaf runs in this process */
      continue;
    }
    sl_cluster *c = k ? s->leaf_clusters[k - 1] : s->cluster;
    rc = start_on_cluster(s, c, sp->leaves[k], k, -1, 0, 0, text, len, NULL,
                          &nodes[k], fds + k * n, err);
    if (rc != SL_OK)
      about_leaf(err, k);
    per_leaf[k] = &nodes[k]; /* sent to some nodes, maybe: they must be
                              * brought back */
  }
  if (rc == SL_OK && here > 0 && sink->notice)
    rc = sink->notice(sink->ctx,
                      "[WARNING] Session windows under late merge do not run "
                      "on several nodes: their leaves run on this process "
                      "only (SET 'sluice.strategy' = 'repartition' runs them "
                      "on the nodes).");
  const sl_staged_run run = {per_leaf, NULL, {-1, NULL, NULL}, NULL, NULL};
  if (rc == SL_OK)
    rc = sl_execute_staged(plan, session_run(s, NULL), &run, sink, st, err);
  for (int k = 0; k < sp->nleaves; k++)
    if (per_leaf[k])
      sl_cluster_sync(k ? s->leaf_clusters[k - 1] : s->cluster);
  free(nodes);
  free(per_leaf);
  free(fds);
  if (rc == SL_OK)
    st->workers =
        (sp->nleaves - here) * n * node_workers(s) + here * node_workers(s);
  return rc;
}

int session_ready_nodes(sl_session *s, sl_result_sink *sink, sl_error *err) {
  return ensure_cluster(s, sink, err);
}

int session_execute(sl_session *s, sl_plan *plan, const char *text, size_t len,
                    sl_result_sink *sink, sl_query_stats *st, sl_error *err) {
  /* The statement's settings, read once for every layer that runs it. */
  int rc = sl_run_config_resolve(&s->run_config, s->settings, err);
  if (rc != SL_OK)
    return rc;
  if (plan->kind == SL_PLAN_CONSTANT) /* no source: nothing for nodes */
    return sl_execute(plan, session_run(s, NULL), sink, st, err);
  /* session_ready_nodes made the cluster ready before the plan was made
   * (mending it again here would dial gone daemons a second time); a
   * node lost since is found when the query is sent.  The count is
   * checked for a caller that placed the plan elsewhere. */
  int n = session_node_count(s);
  if (s->planned_nodes > 0 && n != s->planned_nodes)
    return sl_error_set(
        err, SL_EIO,
        "the cluster changed while this query was planned: it was placed "
        "on %d node%s and %d %s now (said above): run it again to place it "
        "on the nodes there are",
        s->planned_nodes, s->planned_nodes == 1 ? "" : "s", n,
        n == 1 ? "is" : "are");
  /* The memory limit bounds the sum over this process and its nodes on
   * this host (they join with this pid, QUERY's query id >> 32). */
  if (s->cluster)
    sl_memory_host_join((uint64_t)getpid(), "the shell");
  if (plan->kind == SL_PLAN_STAGED)
    return s->cluster
               ? execute_staged_on_nodes(s, plan, text, len, sink, st, err)
               : sl_execute_staged(plan, session_run(s, NULL), NULL, sink, st,
                                   err);
  bool sessions = sl_plan_sessions_on_one_process(plan);
  if (s->cluster && sessions && sink->notice) {
    rc = sink->notice(sink->ctx, "[WARNING] Session windows under late "
                                 "merge do not run on several nodes: this "
                                 "query runs on this process only (SET "
                                 "'sluice.strategy' = 'repartition' runs "
                                 "it on the nodes).");
    if (rc != SL_OK)
      return rc;
  }
  if (!s->cluster || sessions)
    return sl_execute(plan, session_run(s, NULL), sink, st, err);
  int *fds = malloc(sizeof(int) * (size_t)s->cluster->n);
  if (!fds)
    abort();
  sl_exec_nodes nodes;
  rc = start_on_cluster(s, s->cluster, plan, -1, -1, 0, 0, text, len, NULL,
                        &nodes, fds, err);
  if (rc == SL_OK)
    rc = sl_execute(plan, session_run(s, &nodes), sink, st, err);
  free(fds);
  sl_cluster_sync(s->cluster);
  if (rc == SL_OK)
    st->workers = s->cluster->n * node_workers(s);
  return rc;
}
