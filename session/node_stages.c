/* node_stages.c - a node's side of a query the coordinator's scheduler
 * (scheduler.c) sent it: the statement's text planned again here, then
 * the plan or the part of a staged plan this node runs: a leaf, a join's
 * side whose rows go over links to the stage nodes, or the stages
 * themselves over this node's rows and what the links bring.  Apart from
 * the scheduler because it runs on the other end of the connection. */
#include <pthread.h>
#include <stdlib.h>

#include "../session/session_int.h"
#include "sluice/binder/binder.h"
#include "sluice/cluster/distribution.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"

/* A node of a join's side (the stages run on other nodes): its rows go
 * over links to the stage nodes, each to the node leading its join key's
 * partition (repartition, late merge; under late merge this leaf's own
 * leaders are split by the join key too, so leader p's rows all go to
 * node p) or to every one (broadcast). */
/* Where a node's staged run sends what it makes: per[k] the nodes of leaf
 * k (NULL: not here); the rest as its coordinator gave it. */
static sl_staged_run staged_run_of(const sl_exec_nodes *nodes,
                                   const sl_exec_nodes **per) {
  return (sl_staged_run){per,
                         nodes->feeds,
                         {nodes->coordinator_fd, nodes->coordinator_lock,
                          nodes->coordinator_credit},
                         nodes->cancel,
                         nodes->dist};
}

static int side_to_stage_nodes(sl_staged_plan *sp, int leaf,
                               const sl_exec_nodes *nodes, sl_session *s,
                               sl_query_stats *stats, sl_error *err) {
  /* Placed as the coordinator said (sl_staged_place_on_node): the route
   * is the side's join key columns, or under a repartition of every leaf
   * its key route; a broadcast sends every row to each stage node. */
  sl_join_strategy join = sp->join_strategy;
  bool keyed = join == SL_JOIN_REPARTITION || join == SL_JOIN_LATE_MERGE;
  bool every = sl_join_routes_both(join);
  int nroute = keyed ? sp->nroute : every ? sp->key_nroute[leaf] : 0;
  const int *route = keyed   ? sp->route_cols
                     : every ? sp->key_route[leaf]
                             : NULL;
  sl_plan *lp = sp->leaves[leaf];
  sl_stage_link_spec spec = {leaf,
                             nodes->nstage,
                             nodes->stage_addrs,
                             nroute,
                             route,
                             s->run_config.buffer_size,
                             NULL,
                             -1,
                             -1,
                             false,
                             0,
                             nodes->secret};
  if (join == SL_JOIN_LATE_MERGE_ROWS && lp->kind != SL_PLAN_AGGREGATE) {
    /* Rows wait, by the time their leaf stage keeps, for the first window
     * that needs them: window rows their first (live) window, an interval
     * join's stream rows the first window whose interval reaches them.
     * (An aggregate side's groups come at their trigger anyway.) */
    const sl_stage *js = sp->join_stage;
    const sl_stage *side =
        js->left->kind == SL_STAGE_LEAF && js->left->leaf == leaf ? js->left
                                                                  : js->right;
    if (side->time_col < 0 || (!lp->window_rows && !side->stream))
      return sl_error_set(err, SL_EINTERNAL,
                          "a late merge of rows without their time: do the "
                          "coordinator and the node run one build?");
    spec.time_field = side->time_col;
    if (lp->window_rows) {
      spec.live_field = lp->nout - 1;
      spec.hold = &lp->window;
    } else {
      spec.stream = true;
      spec.hi_us = js->hi_us;
      spec.hold = &sp->window;
    }
  }
  lp->sink = &sl_sink_to_stage_nodes;
  lp->sink_arg = &spec;
  lp->sink_table = NULL;
  session_set_jit(s, lp);
  sl_exec_nodes here = *nodes;
  here.rows_to_sink = true;
  return sl_execute(lp, session_run(s, &here), NULL, stats, err);
}

/* The plan of a query's text, as the coordinator planned it: with late
 * records to a table, every leaf reads every column and sends its late
 * records to the coordinator, which writes them. */
static int plan_text(sl_session *s, sl_arena *arena, const char *text,
                     size_t len, sl_bound_stmt **b, sl_plan **plan,
                     sl_error *err) {
  sl_stmt *stmt = NULL;
  char *stmt_text = sl_arena_strndup(arena, text, len);
  int rc = sl_parse_one(arena, stmt_text, len, 1, &stmt, err);
  if (rc == SL_OK && stmt->kind != SL_STMT_QUERY &&
      stmt->kind != SL_STMT_INSERT)
    rc = sl_error_set(err, SL_EINVAL, "a node runs queries and INSERTs only");
  if (rc == SL_OK)
    rc = sl_bind(arena, s->catalog, stmt, stmt_text, 1, b, err);
  if (rc == SL_OK)
    rc = sl_plan_build(arena, *b, plan, err);
  if (rc == SL_OK)
    rc = sl_plan_route_late_records(arena, *plan, s->catalog, s->settings, err);
  if (rc == SL_OK)
    sl_plan_set_idle_timeout(*plan, s->settings);
  /* as the coordinator's choose_strategy does: the same codes here */
  if (rc == SL_OK)
    sl_plan_use_codes(arena, *plan, s->settings);
  return rc;
}

/* This node's share of leaf `leaf`, sent over links by the join key
 * (shuffle_stages_here). */
typedef struct own_sender {
  sl_session *s;
  sl_arena arena;
  sl_bound_stmt *b;
  sl_plan *plan; /* a plan of its own: the stage runner sets up its copy */
  int leaf, join, strategy;
  const sl_exec_nodes *nodes;
  sl_query_stats stats;
  sl_error err;
  int rc;
} own_sender;

static void *own_sender_main(void *arg) {
  own_sender *o = arg;
  o->rc = sl_staged_place_on_node(&o->arena, o->plan, o->leaf, -1, true,
                                  (sl_join_strategy)o->join,
                                  (sl_strategy)o->strategy, &o->err);
  if (o->rc == SL_OK)
    o->rc = side_to_stage_nodes(o->plan->staged, o->leaf, o->nodes, o->s,
                                &o->stats, &o->err);
  /* A sender that failed before its links were up would leave the stages
   * waiting for it: stop them (its error is the cause). */
  if (o->rc != SL_OK)
    sl_stage_feed_close(o->nodes->feeds[o->leaf]);
  return NULL;
}

/* A repartition of every leaf (SL_JOIN_SHUFFLE) with the stages here:
 * this node's rows of leaf `leaf` go over links to the node their join
 * key names (this one, one time in n), as the other leaves' nodes send
 * theirs; the stages run over what the links bring of every leaf. */
static int shuffle_stages_here(sl_session *s, sl_plan *plan, const char *text,
                               size_t len, int leaf, int fed, int join,
                               int strategy, const sl_exec_nodes *nodes,
                               sl_query_stats *stats, sl_error *err) {
  /* (Updating stages over one stream: the only leaf is fed by its own
   * nodes, fed == leaf.) */
  int nleaves = plan->staged->nleaves;
  bool linked =
      nodes->nstage > 0 && nodes->feeds && (nleaves > 1 || fed == leaf);
  for (int k = 0; k < nleaves && linked; k++)
    linked = nodes->feeds[k] != NULL;
  if (!linked)
    return sl_error_set(err, SL_EINTERNAL,
                        "a repartition of every leaf sent here without the "
                        "links of each: do the coordinator and the node run "
                        "one build?");
  own_sender o = {0};
  o.s = s;
  o.leaf = leaf;
  o.join = join;
  o.strategy = strategy;
  o.nodes = nodes;
  sl_arena_init(&o.arena, 0);
  int rc = plan_text(s, &o.arena, text, len, &o.b, &o.plan, err);
  if (rc == SL_OK && o.plan->kind != SL_PLAN_STAGED)
    rc = sl_error_set(err, SL_EINTERNAL, "no staged plan twice");
  pthread_t t;
  bool started = false;
  if (rc == SL_OK) {
    started = pthread_create(&t, NULL, own_sender_main, &o) == 0;
    if (!started)
      rc = sl_error_set(err, SL_EINTERNAL, "cannot start the link sender");
  }
  const sl_exec_nodes **per = calloc((size_t)nleaves, sizeof *per);
  if (!per)
    abort();
  sl_staged_run run = staged_run_of(nodes, per);
  if (rc == SL_OK)
    rc = sl_execute_staged(plan, session_run(s, NULL), &run, NULL, stats, err);
  free(per);
  if (started) {
    if (rc != SL_OK)
      sl_stage_feed_close(nodes->feeds[leaf]); /* not needed any more */
    pthread_join(t, NULL);
    /* The sender's own failure is the cause of the stages' "links
     * broke"; its "stopped" after the stages failed is a consequence. */
    if (o.rc != SL_OK && (rc == SL_OK || rc == SL_ECANCELLED) &&
        o.rc != SL_ECANCELLED) {
      sl_error_clear(err);
      sl_error_move(err, &o.err);
      rc = o.rc;
    } else if (o.rc != SL_OK && rc == SL_OK) {
      sl_error_move(err, &o.err);
      rc = o.rc;
    }
    /* What the sender did (the stages' own work is in stats already). */
    if (o.stats.events > stats->events)
      stats->events = o.stats.events;
    stats->workers += o.stats.workers;
    stats->rows_filtered += o.stats.rows_filtered;
    stats->late_dropped += o.stats.late_dropped;
    stats->exchange_rows += o.stats.exchange_rows;
    stats->exchange_bytes += o.stats.exchange_bytes;
  }
  sl_error_clear(&o.err);
  if (o.b)
    sl_bound_stmt_release(o.b);
  sl_arena_free(&o.arena);
  return rc;
}

int sl_session_run_on_node(sl_session *s, const char *text, size_t len,
                           int leaf, int fed, int join, int strategy,
                           const sl_exec_nodes *nodes, sl_query_stats *stats,
                           sl_error *err) {
  sl_arena arena;
  sl_arena_init(&arena, 0);
  sl_bound_stmt *b = NULL;
  sl_plan *plan = NULL;
  /* The query's settings, read once for every layer that runs it. */
  int rc = sl_run_config_resolve(&s->run_config, s->settings, err);
  if (rc == SL_OK)
    rc = plan_text(s, &arena, text, len, &b, &plan, err);
  /* The coordinator's placement, applied to this node's plan of the
   * same text. */
  if (rc == SL_OK && leaf >= 0)
    rc = sl_staged_place_on_node(
        &arena, plan, leaf, fed, fed < 0 && nodes->nstage > 0,
        (sl_join_strategy)join, (sl_strategy)strategy, err);
  if (rc == SL_OK && leaf >= 0) {
    if (fed >= 0 && sl_join_routes_both((sl_join_strategy)join)) {
      rc = shuffle_stages_here(s, plan, text, len, leaf, fed, join, strategy,
                               nodes, stats, err);
      plan = NULL;
    } else if (fed >= 0) {
      /* A broadcast join: the stages here, over this node's rows of the
       * local leaf and the other leaf's from the coordinator. */
      session_set_jit(s, plan->staged->leaves[leaf]);
      sl_exec_nodes here = *nodes;
      here.rows_to_sink = true;
      const sl_exec_nodes *per[2] = {NULL, NULL};
      per[leaf] = &here;
      sl_staged_run run = staged_run_of(nodes, per);
      rc =
          sl_execute_staged(plan, session_run(s, NULL), &run, NULL, stats, err);
      plan = NULL;
    } else if (nodes->nstage > 0) {
      rc = side_to_stage_nodes(plan->staged, leaf, nodes, s, stats, err);
      plan = NULL;
    } else
      plan = plan->staged->leaves[leaf];
  }
  if (rc == SL_OK && plan && plan->kind == SL_PLAN_STAGED)
    rc = sl_error_set(err, SL_EINTERNAL,
                      "a multi-stage query reached a node whole");
  if (rc == SL_OK && plan) {
    plan->strategy = (sl_strategy)strategy;
    session_set_jit(s, plan);
  }
  if (rc == SL_OK && plan)
    rc = sl_execute(plan, session_run(s, nodes), NULL, stats, err);
  if (b)
    sl_bound_stmt_release(b);
  sl_arena_free(&arena);
  return rc;
}
