/* session_int.h - what the shell's session files share: the session
 * itself, and the part of running statements that concerns nodes
 * (session_nodes.c).  Internal to shell/.
 *
 * Ownership: the session owns its catalog, settings, caches, clusters and
 * statement log; sl_session_free frees them all. */
#ifndef SLUICE_SHELL_SESSION_INT_H
#define SLUICE_SHELL_SESSION_INT_H

#include "sluice/cluster/cluster_client.h"
#include "sluice/exec/run_config.h"
#include "sluice/planner/cost_model.h"
#include "sluice/planner/plan.h"
#include "sluice/planner/statistics.h"
#include "sluice/session/session.h"

struct sl_session {
  sl_catalog *catalog;
  sl_settings *settings;
  const sl_cancel *cancel; /* stops its statements (sl_session_set_cancel) */
  /* The settings of the statement being run, resolved once when it starts
   * to run (session_execute, sl_session_run_on_node): what its run reads
   * (session_run). */
  sl_run_config run_config;
  sl_stats_cache *stats;   /* samples of sources, for the cost model */
  sl_cost_constants costs; /* loaded or measured at the first choice */
  bool costs_fresh;        /* measured by this session ('fresh') */
  /* Clusters (cluster_client.h): the nodes queries run on, and every statement
   * that changed the catalog or settings, in order, to bring new nodes up to
   * date.  A node's own session has neither (is_node). */
  bool is_node;
  sl_cluster *cluster;
  /* A staged query's leaves run at once, each on a cluster of its own
   * (node_frames.h: one query per control connection): leaf 1 on cluster, leaf
   * k + 1 on leaf_clusters[k - 1], started or joined like cluster at the
   * first query that needs them, kept in step by session_replicate. */
  sl_cluster **leaf_clusters;
  int nleaf_clusters;
  char *cluster_list; /* the daemons' "host:port,..." (--cluster) */
  sl_secret secret;   /* what they are joined with (--secret-file) */
  char **log;
  size_t *log_len;
  int nlog, caplog;
  /* How many nodes the query being run was placed on (run_query): a node
   * lost between planning and running makes it refuse to start rather
   * than run a placement the nodes left cannot hold. */
  int planned_nodes;
};

/* A statement that changed the catalog or settings: remember it for nodes
 * that start later, and apply it on the current ones. */
int session_replicate(sl_session *s, const char *text, size_t len,
                      sl_error *err);
/* Free the session's clusters (at its end). */
void session_free_clusters(sl_session *s);
/* The nodes the next query runs on, made ready before it is planned: a
 * joined cluster mended (a node gone since the last statement is joined
 * again or dropped), nodes forked for SET 'sluice.nodes'.  The planner
 * then places the query on the nodes that will really run it. */
int session_ready_nodes(sl_session *s, sl_result_sink *sink, sl_error *err);
/* Run a planned query or INSERT: on this process, or on the session's
 * nodes (a staged plan's leaves each on a cluster of nodes). */
int session_execute(sl_session *s, sl_plan *plan, const char *text, size_t len,
                    sl_result_sink *sink, sl_query_stats *st, sl_error *err);
/* EXPLAIN's "== Nodes ==" block (nothing on one node). */
/* How many nodes the next query runs on: a cluster joined with --cluster
 * has its own count; nodes forked on this host follow SET 'sluice.nodes'
 * (forked again at the next query when it changed). */
int session_node_count(const sl_session *s);
void session_explain_nodes(sl_session *s, const sl_plan *plan,
                           const sl_query_stats *st, sl_strbuf *out);
/* An updating result shown as a table (changelog_fold.c): a sink that
 * folds the changelog rows it gets (column 0 the op) into the current
 * result, redraws it through inner where inner can redraw in place, and
 * prints the final table at the end.  The fold owns nothing of inner. */
typedef struct sl_changelog_fold sl_changelog_fold;
sl_changelog_fold *sl_changelog_fold_new(sl_result_sink *inner);
sl_result_sink sl_changelog_fold_sink(sl_changelog_fold *f);
/* After the query succeeded: print the final table. */
int sl_changelog_fold_finish(sl_changelog_fold *f);
uint64_t sl_changelog_fold_rows(const sl_changelog_fold *f);
uint64_t sl_changelog_fold_changes(const sl_changelog_fold *f);
/* Why the fold refused a row (a contradictory changelog), or NULL. */
const char *sl_changelog_fold_error(const sl_changelog_fold *f);
void sl_changelog_fold_free(sl_changelog_fold *f);
/* A result that is only inserted, shown as a changelog (result mode
 * 'changelog'): a sink adding the op column, +I on every row, before
 * inner's columns; *state is freed by sl_insert_only_changelog_free. */
sl_result_sink sl_insert_only_changelog_sink(sl_result_sink *inner,
                                             void **state);
void sl_insert_only_changelog_free(void *state);

/* The JIT settings into a plan (and a staged plan's leaves). */
void session_set_jit(sl_session *s, sl_plan *plan);

/* The run a session's statement executes with (sl_run: its run
 * configuration, resolved when the statement started to run, its Ctrl-C
 * token, and the nodes, or NULL for this process): a compound literal,
 * alive to the end of the caller's block. */
#define session_run(s, nodes)                                                  \
  (&(sl_run){&(s)->run_config, (s)->cancel, (nodes)})

#endif
