/* session.c - the driver: one statement's text through every stage.
 *
 *   text -> sl_parse_one -> sl_bind -> (catalog change | EXPLAIN | run)
 *
 * Statements that only read or change the session (SET, SHOW TABLES, ...)
 * are answered here from the catalog and settings.  Queries and INSERTs are
 * bound, planned (planner/physical_plan.c) and run by the executor
 * (exec/executor.c) until their bounded sources end, Ctrl-C, or an
 * error; a summary line follows as a notice.
 */
#include "sluice/session/session.h"

#include <stdlib.h>
#include <string.h>

#include "sluice/binder/binder.h"
#include "sluice/catalog/functions.h"
#include "sluice/common/clock.h"
#include "sluice/common/strbuf.h"
#include "sluice/connectors/connector.h"
#include "sluice/exec/executor.h"
#include "sluice/explain/explain.h"
#include "sluice/net/channel.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/cost_model.h"
#include "sluice/planner/plan.h"

#include "session_int.h"
#include "sluice/cluster/cluster_client.h"

sl_session *sl_session_new(void) {
  sl_session *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  s->catalog = sl_catalog_new();
  s->settings = sl_settings_new();
  s->stats = sl_stats_cache_new();
  return s;
}

void sl_session_free(sl_session *s) {
  if (!s)
    return;
  sl_catalog_free(s->catalog);
  sl_settings_free(s->settings);
  sl_stats_cache_free(s->stats);
  session_free_clusters(s);
  for (int i = 0; i < s->nlog; i++)
    free(s->log[i]);
  free(s->log);
  free(s->log_len);
  free(s);
}

void sl_session_set_node(sl_session *s) {
  s->is_node = true;
}

void sl_session_set_cancel(sl_session *s, const sl_cancel *cancel) {
  s->cancel = cancel;
}

sl_catalog *sl_session_catalog(sl_session *s) {
  return s->catalog;
}
sl_settings *sl_session_settings(sl_session *s) {
  return s->settings;
}

/* ---- small helpers for producing results -------------------------------- */

static int notice(sl_result_sink *sink, const char *text) {
  return sink->notice ? sink->notice(sink->ctx, text) : SL_OK;
}

/* A result set whose cells are all text columns. */
typedef struct text_result {
  sl_result_sink *sink;
  int ncols;
  int rc;
} text_result;

static void result_begin(text_result *r, sl_result_sink *sink, int ncols,
                         const char *const *names) {
  static const sl_type string_type = {.kind = SL_TYPE_VARCHAR, .precision = -1};
  const sl_type *types[16];
  for (int i = 0; i < ncols && i < 16; i++)
    types[i] = &string_type;
  r->sink = sink;
  r->ncols = ncols;
  r->rc = sink->begin(sink->ctx, ncols, names, types);
}

static void result_row(text_result *r, const char *const *cells) {
  if (r->rc == SL_OK)
    r->rc = r->sink->row(r->sink->ctx, cells);
}

static int result_end(text_result *r) {
  if (r->rc == SL_OK)
    r->rc = r->sink->end(r->sink->ctx);
  return r->rc;
}

/* ---- SHOW / DESCRIBE / SET --------------------------------------------- */

static int show_tables(sl_session *s, sl_result_sink *sink, bool views_only) {
  const char *names[] = {views_only ? "view name" : "table name"};
  text_result r;
  result_begin(&r, sink, 1, names);
  for (int i = 0; i < sl_catalog_count(s->catalog); i++) {
    const sl_table_def *t = sl_catalog_at(s->catalog, i);
    if (views_only && t->kind != SL_TABLE_VIEW)
      continue;
    const char *cells[] = {t->name};
    result_row(&r, cells);
  }
  return result_end(&r);
}

static int show_functions(sl_result_sink *sink) {
  static const char *const kinds[] = {"scalar", "aggregate", "window",
                                      "window table function",
                                      "group window property"};
  const char *names[] = {"function name", "kind", "signature", "description"};
  text_result r;
  result_begin(&r, sink, 4, names);
  for (int i = 0; i < sl_function_count(); i++) {
    const sl_function *f = sl_function_at(i);
    const char *cells[] = {f->name, kinds[f->kind], f->signature,
                           f->description};
    result_row(&r, cells);
  }
  return result_end(&r);
}

/* DESCRIBE as Flink's SQL client shows it: name, type, null, key, extras,
 * watermark. */
static int describe(const sl_table_def *t, sl_result_sink *sink) {
  const char *names[] = {"name", "type", "null", "key", "extras", "watermark"};
  text_result r;
  result_begin(&r, sink, 6, names);
  sl_strbuf type = SL_STRBUF_INIT, key = SL_STRBUF_INIT,
            extras = SL_STRBUF_INIT, wm = SL_STRBUF_INIT;
  for (int i = 0; i < t->ncolumns; i++) {
    const sl_column *c = &t->columns[i];
    sl_strbuf_reset(&type);
    sl_strbuf_reset(&key);
    sl_strbuf_reset(&extras);
    sl_strbuf_reset(&wm);
    /* NOT NULL is its own column here, as in Flink. */
    sl_type shown = *c->type;
    shown.not_null = false;
    sl_type_format(&type, &shown);
    bool pk = c->primary_key;
    for (int k = 0; k < t->nprimary_key; k++)
      if (strcmp(t->primary_key[k], c->name) == 0)
        pk = true;
    if (pk) {
      sl_strbuf_append(&key, "PRI(");
      if (t->nprimary_key > 0) {
        for (int k = 0; k < t->nprimary_key; k++)
          sl_strbuf_printf(&key, "%s%s", k ? ", " : "", t->primary_key[k]);
      } else {
        sl_strbuf_append(&key, c->name);
      }
      sl_strbuf_append(&key, ")");
    }
    if (c->computed_sql)
      sl_strbuf_printf(&extras, "AS %s", c->computed_sql);
    if (t->rowtime_column == i && t->watermark_sql)
      sl_strbuf_append(&wm, t->watermark_sql);
    const char *cells[] = {c->name,
                           sl_strbuf_cstr(&type),
                           c->type->not_null ? "FALSE" : "TRUE",
                           sl_strbuf_cstr(&key),
                           sl_strbuf_cstr(&extras),
                           sl_strbuf_cstr(&wm)};
    result_row(&r, cells);
  }
  sl_strbuf_free(&type);
  sl_strbuf_free(&key);
  sl_strbuf_free(&extras);
  sl_strbuf_free(&wm);
  return result_end(&r);
}

static int show_settings(sl_session *s, sl_result_sink *sink) {
  const char *names[] = {"key", "value"};
  text_result r;
  result_begin(&r, sink, 2, names);
  for (int i = 0; i < sl_settings_count(s->settings); i++) {
    const char *k, *v;
    sl_settings_at(s->settings, i, &k, &v);
    const char *cells[] = {k, v};
    result_row(&r, cells);
  }
  return result_end(&r);
}

static int do_set(sl_session *s, const sl_stmt *stmt, sl_result_sink *sink,
                  sl_error *err) {
  if (!stmt->u.set.key)
    return show_settings(s, sink);
  bool unknown = false;
  int rc = sl_settings_set(s->settings, stmt->u.set.key, stmt->u.set.value,
                           &unknown, err);
  if (rc != SL_OK) {
    err->line = stmt->span.line;
    err->column = stmt->span.column;
    err->offset = stmt->span.offset;
    err->length = stmt->span.length;
    return rc;
  }
  if (unknown) {
    sl_strbuf b = SL_STRBUF_INIT;
    sl_strbuf_printf(&b,
                     "[WARNING] '%s' is not a setting Sluice knows; it is "
                     "kept but has no effect (SET lists the known ones).",
                     stmt->u.set.key);
    rc = notice(sink, sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
    return rc;
  }
  return notice(sink, "[INFO] Session property has been set.");
}

/* ---- DDL ------------------------------------------------------------------
 */

/* A table must name a connector Sluice has, with options it understands,
 * so that mistakes show at CREATE TABLE rather than at the first query.  A
 * connector that is both a source and a sink (filesystem) accepts options
 * either side understands. */
static int check_connector(const sl_table_def *def, const sl_stmt *ast,
                           sl_error *err) {
  const char *name = sl_table_def_option(def, "connector");
  if (!name)
    name = sl_table_def_option(def, "connector.type");
  const sl_source_connector *src = name ? sl_source_connector_find(name) : NULL;
  const sl_sink_connector *snk = name ? sl_sink_connector_find(name) : NULL;
  int rc = SL_OK;
  if (!src && !snk) {
    rc = sl_error_set(err, SL_EINVAL,
                      "table '%s': unknown connector '%s'; sources are %s; "
                      "sinks are %s",
                      def->name, name ? name : "", sl_source_connector_names(),
                      sl_sink_connector_names());
  } else {
    sl_error sink_err = {0};
    rc = src && src->validate ? src->validate(def, err) : SL_OK;
    if (rc != SL_OK || !src) {
      int src_rc = rc;
      int snk_rc = snk && snk->validate ? snk->validate(def, &sink_err) : SL_OK;
      if (snk && snk_rc == SL_OK) {
        rc = SL_OK;
        sl_error_clear(err);
      } else if (!src) {
        sl_error_move(err, &sink_err);
        rc = snk_rc;
      } else {
        rc = src_rc; /* the source's complaint is the likelier one */
      }
    }
    sl_error_clear(&sink_err);
  }
  if (rc != SL_OK && err->line == 0) {
    err->line = ast->span.line;
    err->column = ast->span.column;
    err->offset = ast->span.offset;
    err->length = 6; /* CREATE */
  }
  return rc;
}

static int create(sl_session *s, sl_bound_stmt *b, sl_result_sink *sink,
                  sl_error *err) {
  sl_table_def *def = b->new_table;
  if (!def) /* IF NOT EXISTS and it already exists */
    return notice(sink, "[INFO] Already exists; nothing was changed.");
  b->new_table = NULL;
  if (b->if_not_exists && sl_catalog_find(s->catalog, def->name)) {
    sl_table_def_free(def);
    return notice(sink, "[INFO] Already exists; nothing was changed.");
  }
  bool view = def->kind == SL_TABLE_VIEW;
  if (!view) {
    int rc = check_connector(def, b->ast, err);
    if (rc != SL_OK) {
      sl_table_def_free(def);
      return rc;
    }
  }
  int rc = sl_catalog_add(s->catalog, def, false, err);
  if (rc != SL_OK)
    return rc;
  return notice(sink, view ? "[INFO] View has been created."
                           : "[INFO] Table has been created.");
}

static int drop(sl_session *s, const sl_stmt *stmt, sl_bound_stmt *b,
                sl_result_sink *sink) {
  if (!b->table)
    return notice(sink, "[INFO] Does not exist; nothing was dropped.");
  bool view = b->table->kind == SL_TABLE_VIEW;
  (void)stmt;
  sl_catalog_drop(s->catalog, b->table->name);
  return notice(sink, view ? "[INFO] View has been dropped."
                           : "[INFO] Table has been dropped.");
}

/* ---- queries --------------------------------------------------------------
 */

/* The distribution strategy (planner/choose_strategy.c). */
static int choose_plan_strategy(sl_session *s, sl_plan *plan, bool leaf,
                                sl_arena *arena, const char **why,
                                sl_error *err);

/* A staged plan: each leaf's strategy is chosen on its own; why says so
 * per leaf. */
static int choose_leaf_strategies(sl_session *s, sl_plan *plan, sl_arena *arena,
                                  const char **why, sl_error *err) {
  sl_staged_plan *sp = plan->staged;
  const char **whys = SL_ANEW_N(arena, const char *, sp->nleaves);
  sl_strategy *chosen = SL_ANEW_N(arena, sl_strategy, sp->nleaves);
  int rc = SL_OK;
  for (int i = 0; i < sp->nleaves && rc == SL_OK; i++) {
    rc = choose_plan_strategy(s, sp->leaves[i], true, arena, &whys[i], err);
    chosen[i] = sp->leaves[i]->strategy;
  }
  /* How the join meets on several nodes; a join met at partition leaders
   * sets its leaves' strategies (choose_join.c). */
  int nodes = session_node_count(s);
  sl_strategy_inputs in = {s->settings,     s->stats, &s->costs,
                           &s->costs_fresh, false,    nodes};
  if (rc == SL_OK && !s->is_node)
    rc = sl_plan_choose_join(plan, &in, nodes, arena, err);
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < sp->nleaves && rc == SL_OK; i++) {
    sl_strategy now = sp->leaves[i]->strategy;
    sl_strbuf_printf(&b, "%sleaf %d: %s", i ? "\n" : "", i + 1,
                     now == SL_STRATEGY_REPARTITION ? "repartition"
                                                    : "late-merge");
    if (now != chosen[i])
      sl_strbuf_printf(&b, ": the join above it meets at partition leaders, "
                           "which finish this leaf's groups (late merge); "
                           "on its own it would be");
    if (whys[i])
      sl_strbuf_printf(&b, ": %s", whys[i]);
  }
  if (rc == SL_OK && sp->join_why)
    sl_strbuf_printf(&b, "\njoin: %s", sp->join_why);
  *why = sl_arena_strdup(arena, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return rc;
}

/* The table the plan (or a leaf of it) writes its late records to, or
 * NULL. */
static const sl_table_def *late_records_table(const sl_plan *plan) {
  if (plan->kind != SL_PLAN_STAGED)
    return plan->late_table;
  for (int i = 0; i < plan->staged->nleaves; i++)
    if (plan->staged->leaves[i]->late_table)
      return plan->staged->leaves[i]->late_table;
  return NULL;
}

/* Where late records go, then how each stateful part spreads. */
static int choose_strategy(sl_session *s, sl_plan *plan, sl_arena *arena,
                           const char **why, sl_error *err) {
  int rc =
      sl_plan_route_late_records(arena, plan, s->catalog, s->settings, err);
  if (rc != SL_OK)
    return rc;
  sl_plan_set_idle_timeout(plan, s->settings);
  if (plan->kind == SL_PLAN_STAGED)
    return choose_leaf_strategies(s, plan, arena, why, err);
  rc = choose_plan_strategy(s, plan, false, arena, why, err);
  /* After the strategy, whose statistics sample reads the strings. */
  if (rc == SL_OK)
    sl_plan_use_codes(arena, plan, s->settings);
  return rc;
}

static int choose_plan_strategy(sl_session *s, sl_plan *plan, bool leaf,
                                sl_arena *arena, const char **why,
                                sl_error *err) {
  /* A node is given its coordinator's choice; the coordinator weighs
   * the nodes (state crossing between them). */
  sl_strategy_inputs in = {s->settings, s->stats,
                           &s->costs,   &s->costs_fresh,
                           leaf,        s->is_node ? 1 : session_node_count(s)};
  int rc = sl_plan_choose_strategy(plan, &in, arena, why, err);
  /* Session windows on several nodes: sessions of one key must meet on one
   * node, and only repartitioning brings them together (the nodes do not
   * merge session fragments between them). */
  int nodes = session_node_count(s);
  const char *want = sl_settings_get(s->settings, "sluice.strategy");
  if (rc == SL_OK && !s->is_node && nodes > 1 &&
      plan->kind == SL_PLAN_AGGREGATE && plan->windowed &&
      plan->window.kind == SL_WINDOW_SESSION &&
      (!want || !strcmp(want, "auto"))) {
    plan->strategy = SL_STRATEGY_REPARTITION;
    *why = "session windows on several nodes: repartition by the group key "
           "(one node sees all of a key's sessions; nodes do not merge "
           "session fragments between them)";
  }
  return rc;
}

/* The JIT settings into a plan (and a staged plan's leaves). */
void session_set_jit(sl_session *s, sl_plan *plan) {
  plan->jit = sl_settings_get_bool(s->settings, "sluice.jit", true);
  plan->jit_state =
      sl_settings_get_bool(s->settings, "sluice.jit.state-update", true);
  plan->jit_probe =
      sl_settings_get_bool(s->settings, "sluice.jit.join-probe", true);
  if (plan->kind == SL_PLAN_STAGED)
    for (int i = 0; i < plan->staged->nleaves; i++)
      session_set_jit(s, plan->staged->leaves[i]);
}

static const char *strategy_name(const sl_plan *plan) {
  if (plan->kind == SL_PLAN_STAGED)
    return "per leaf";
  return plan->strategy == SL_STRATEGY_REPARTITION ? "repartition"
                                                   : "late-merge";
}

/* EXPLAIN ANALYZE runs the query: its rows are counted, not shown. */
static int discard_begin(void *c, int n, const char *const *names,
                         const sl_type *const *types) {
  (void)c, (void)n, (void)names, (void)types;
  return SL_OK;
}
static int discard_row(void *c, const char *const *cells) {
  (void)c, (void)cells;
  return SL_OK;
}
static int count_row(void *c, const char *const *cells) {
  (void)cells;
  if (c)
    (*(uint64_t *)c)++;
  return SL_OK;
}
static int discard_end(void *c) {
  (void)c;
  return SL_OK;
}
static int discard_text(void *c, const char *t) {
  (void)c, (void)t;
  return SL_OK;
}

sl_result_sink sl_result_sink_discard(uint64_t *rows) {
  sl_result_sink sink = {rows, discard_begin, count_row,
                         NULL, discard_end,   discard_text,
                         NULL, NULL,          NULL};
  return sink;
}

static int explain(sl_session *s, sl_bound_stmt *b, sl_arena *arena,
                   sl_result_sink *sink, sl_error *err) {
  double t0 = sl_clock_seconds(); /* for the setup time EXPLAIN ANALYZE shows */
  const sl_stmt *ast = b->ast;
  const sl_bound_stmt *inner = b->inner;
  bool runnable =
      inner && (inner->kind == SL_STMT_QUERY || inner->kind == SL_STMT_INSERT);
  if (ast->u.explain.analyze && !runnable)
    return sl_error_set_at(err, SL_EUNSUPPORTED, ast->span.line,
                           ast->span.column, ast->span.offset, 7,
                           "EXPLAIN ANALYZE needs a query or an INSERT to run");
  if (!runnable) {
    sl_strbuf out = SL_STRBUF_INIT;
    sl_explain_bound(&out, b, ast->u.explain.format);
    int rc = sink->text(sink->ctx, sl_strbuf_cstr(&out));
    sl_strbuf_free(&out);
    return rc;
  }
  int workers = (int)sl_settings_get_int(s->settings, "parallelism.default", 1);
  /* On several nodes every node runs that many (the Nodes block says so). */
  int nodes = session_node_count(s);
  if (!s->is_node && nodes > 1)
    workers *= nodes;
  sl_plan *plan = NULL;
  sl_error plan_err = {0};
  if (sl_plan_build(arena, inner, &plan, &plan_err) != SL_OK) {
    /* nothing to run; Ctrl-C / .timeout while planning stops EXPLAIN */
    if (ast->u.explain.analyze || plan_err.code == SL_ECANCELLED) {
      sl_error_move(err, &plan_err);
      return err->code;
    }
    plan = NULL;
  }
  sl_query_stats st;
  bool analyzed = false;
  const char *why = NULL;
  if (plan && ast->u.explain.analyze && plan->kind != SL_PLAN_CONSTANT) {
    int rc = session_ready_nodes(s, sink, err); /* as run_query */
    if (rc != SL_OK)
      return rc;
    s->planned_nodes = session_node_count(s);
  }
  if (plan) {
    int rc = choose_strategy(s, plan, arena, &why, err);
    if (rc != SL_OK)
      return rc;
    session_set_jit(s, plan);
  }
  if (plan && ast->u.explain.analyze) {
    int rc;
    /* Results are discarded (an INSERT still writes its table); progress
     * and notices still reach the shell. */
    sl_result_sink quiet = {NULL,         discard_begin,  discard_row,
                            NULL,         discard_end,    discard_text,
                            sink->notice, sink->progress, NULL};
    quiet.ctx = sink->ctx;
    /* Nodes run the statement EXPLAIN ANALYZE is about. */
    rc = session_execute(s, plan, b->text + inner->ast->span.offset,
                         (size_t)inner->ast->span.length, &quiet, &st, err);
    if (rc != SL_OK)
      return rc;
    analyzed = true;
    /* Planning, compiling and starting; not opening the sources, where a
     * pre-generated input is made (a peer's load of its tables).  On
     * nodes their sources' opening is part of it: the coordinator sees
     * only when they are ready. */
    double setup = st.started_at - t0 - st.open_seconds;
    st.setup_seconds = setup > 0 ? setup : 0;
  }
  sl_strbuf out = SL_STRBUF_INIT;
  sl_explain_statement(&out, b, plan, plan_err.message, workers,
                       plan ? strategy_name(plan) : "late-merge", why,
                       analyzed ? &st : NULL, ast->u.explain.format);
  if (plan && ast->u.explain.format != SL_EXPLAIN_JSON)
    session_explain_nodes(s, plan, analyzed ? &st : NULL, &out);
  sl_error_clear(&plan_err);
  int rc = sink->text(sink->ctx, sl_strbuf_cstr(&out));
  sl_strbuf_free(&out);
  return rc;
}

/* Run a plan here, or on the session's nodes with this process as their
 * coordinator (text is what the nodes plan: the query or INSERT). */
/* Plan and run a query or INSERT to completion, then say what it did. */
static int run_query(sl_session *s, sl_bound_stmt *b, sl_arena *arena,
                     sl_result_sink *sink, sl_error *err) {
  sl_plan *plan = NULL;
  int rc = sl_plan_build(arena, b, &plan, err);
  if (rc != SL_OK)
    return rc;
  /* The nodes first: a node lost since the last statement changes how
   * many there are, and the plan must be for the nodes that run it (a
   * join placed on two nodes cannot run on the one left). */
  if (plan->kind != SL_PLAN_CONSTANT) {
    rc = session_ready_nodes(s, sink, err);
    if (rc != SL_OK)
      return rc;
  }
  s->planned_nodes = session_node_count(s);
  const char *why;
  rc = choose_strategy(s, plan, arena, &why, err);
  if (rc != SL_OK)
    return rc;
  session_set_jit(s, plan);
  /* An updating result for the shell: shown as its current table unless
   * the changelog itself is asked for. */
  const char *mode =
      sl_settings_get(s->settings, "sql-client.execution.result-mode");
  sl_changelog_fold *fold = NULL;
  sl_result_sink folded;
  void *inserts = NULL; /* an insert-only result shown as a changelog */
  if (plan->changelog && !plan->sink_table && !s->is_node && mode &&
      strcmp(mode, "table") == 0) {
    fold = sl_changelog_fold_new(sink);
    folded = sl_changelog_fold_sink(fold);
  } else if (!plan->changelog && !plan->sink_table && !s->is_node && mode &&
             strcmp(mode, "table") != 0) {
    folded = sl_insert_only_changelog_sink(sink, &inserts);
  }
  sl_query_stats st;
  rc = session_execute(s, plan, b->text, strlen(b->text),
                       fold || inserts ? &folded : sink, &st, err);
  sl_insert_only_changelog_free(inserts);
  if (rc == SL_OK && fold)
    rc = sl_changelog_fold_finish(fold);
  if (rc != SL_OK && fold && sl_changelog_fold_error(fold))
    sl_error_set(err, rc, "%s", sl_changelog_fold_error(fold));
  uint64_t result_rows = fold ? sl_changelog_fold_rows(fold) : 0;
  bool folded_result = fold != NULL;
  sl_changelog_fold_free(fold);
  if (rc != SL_OK)
    return rc;
  sl_strbuf msg = SL_STRBUF_INIT;
  if (plan->kind == SL_PLAN_CONSTANT) { /* no input: just the rows */
    sl_strbuf_printf(&msg, "%llu row%s", (unsigned long long)st.rows_out,
                     st.rows_out == 1 ? "" : "s");
    rc = notice(sink, sl_strbuf_cstr(&msg));
    sl_strbuf_free(&msg);
    return rc;
  }
  double rate = st.seconds > 0 ? (double)st.events / st.seconds : 0;
  /* An updating result: rows_out counts changelog rows. */
  if (folded_result)
    sl_strbuf_printf(
        &msg, "%llu row%s (after %llu change%s)",
        (unsigned long long)result_rows, result_rows == 1 ? "" : "s",
        (unsigned long long)st.rows_out, st.rows_out == 1 ? "" : "s");
  else
    sl_strbuf_printf(&msg, "%llu %s%s", (unsigned long long)st.rows_out,
                     plan->changelog ? "change" : "row",
                     st.rows_out == 1 ? "" : "s");
  sl_strbuf_printf(&msg,
                   ", %llu events in %.2f s (%.0f events/s, %d "
                   "worker%s), ",
                   (unsigned long long)st.events, st.seconds, rate, st.workers,
                   st.workers == 1 ? "" : "s");
  /* A join's stages drop a stream row no window still open can meet; its
   * leaf's check (at or before the reader's watermark) already took every
   * such row, so stage_late is 0 unless rows overtook their watermark; it
   * is counted, never hidden. */
  const sl_table_def *late = late_records_table(plan);
  if (late) {
    sl_strbuf_printf(&msg, "%llu late records written to '%s'",
                     (unsigned long long)st.late_written, late->name);
    if (st.stage_late)
      sl_strbuf_printf(&msg, ", %llu late stream rows dropped by the stages",
                       (unsigned long long)st.stage_late);
  } else {
    sl_strbuf_printf(&msg, "%llu late records dropped",
                     (unsigned long long)(st.late_dropped + st.stage_late));
  }
  if (st.skipped_rows)
    sl_strbuf_printf(&msg, ", %llu malformed rows skipped",
                     (unsigned long long)st.skipped_rows);
  rc = notice(sink, sl_strbuf_cstr(&msg));
  sl_strbuf_free(&msg);
  return rc;
}

/* ---- the driver ------------------------------------------------------------
 */

static int execute(sl_session *s, const char *text, size_t len, int first_line,
                   sl_result_sink *sink, sl_error *err) {
  sl_arena arena;
  sl_arena_init(&arena, 0);
  sl_stmt *stmt = NULL;
  int rc = sl_parse_one(&arena, text, len, first_line, &stmt, err);
  if (rc != SL_OK)
    goto done;

  switch (stmt->kind) {
  case SL_STMT_SET:
    rc = do_set(s, stmt, sink, err);
    if (rc == SL_OK)
      rc = session_replicate(s, text, len, err);
    goto done;
  case SL_STMT_RESET:
    sl_settings_reset(s->settings, stmt->u.reset.key);
    rc = notice(sink, "[INFO] Session property has been reset.");
    if (rc == SL_OK)
      rc = session_replicate(s, text, len, err);
    goto done;
  case SL_STMT_SHOW:
    if (stmt->u.show.what == SL_SHOW_TABLES) {
      rc = show_tables(s, sink, false);
      goto done;
    }
    if (stmt->u.show.what == SL_SHOW_VIEWS) {
      rc = show_tables(s, sink, true);
      goto done;
    }
    if (stmt->u.show.what == SL_SHOW_FUNCTIONS) {
      rc = show_functions(sink);
      goto done;
    }
    break; /* SHOW CREATE ... needs the binder to find the entry */
  default:
    break;
  }

  /* Everything else is bound first.  The statement text handed to the
   * binder must be NUL-terminated and start where the spans start. */
  char *stmt_text = sl_arena_strndup(&arena, text, len);
  sl_bound_stmt *b = NULL;
  rc = sl_bind(&arena, s->catalog, stmt, stmt_text, first_line, &b, err);
  if (rc != SL_OK)
    goto done;

  switch (stmt->kind) {
  case SL_STMT_CREATE_TABLE:
  case SL_STMT_CREATE_VIEW:
    rc = create(s, b, sink, err);
    if (rc == SL_OK)
      rc = session_replicate(s, text, len, err);
    break;
  case SL_STMT_DROP:
    rc = drop(s, stmt, b, sink);
    if (rc == SL_OK)
      rc = session_replicate(s, text, len, err);
    break;
  case SL_STMT_DESCRIBE:
    rc = describe(b->table, sink);
    break;
  case SL_STMT_SHOW: { /* SHOW CREATE TABLE | VIEW: the text as written */
    sl_strbuf out = SL_STRBUF_INIT;
    sl_strbuf_printf(&out, "%s;\n", b->table->create_sql);
    rc = sink->text(sink->ctx, sl_strbuf_cstr(&out));
    sl_strbuf_free(&out);
    break;
  }
  case SL_STMT_EXPLAIN:
    rc = explain(s, b, &arena, sink, err);
    break;
  case SL_STMT_QUERY:
  case SL_STMT_INSERT:
    rc = run_query(s, b, &arena, sink, err);
    break;
  default:
    rc = sl_error_set(err, SL_EUNSUPPORTED, "%s is not supported",
                      sl_stmt_kind_name(stmt->kind));
    break;
  }
  sl_bound_stmt_release(b); /* frees a new_table not handed to the catalog */

done:
  sl_arena_free(&arena);
  return rc;
}

/* Parsing, binding and planning poll the session's token through the
 * thread's scope (cancel.h); running passes it in the run context. */
int sl_session_execute(sl_session *s, const char *text, size_t len,
                       int first_line, sl_result_sink *sink, sl_error *err) {
  const sl_cancel *outer = sl_cancel_scope_enter(s->cancel);
  int rc = execute(s, text, len, first_line, sink, err);
  sl_cancel_scope_leave(outer);
  return rc;
}
