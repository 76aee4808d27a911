/* explain_plan.c - EXPLAIN of the physical plan (plan.h): the pipeline as
 * the runtime runs it, with the distribution strategy of the stateful
 * operator, the state each aggregate keeps, the trigger, what each source
 * reads, and whether pipelines are compiled or interpreted.  Printed after
 * the bound tree, in the same indented TEXT / JSON forms. */
#include <string.h>

#include "explain_tree.h"
#include "sluice/catalog/functions.h"
#include "sluice/explain/explain.h"
#include "sluice/jit/jit.h"
#include "sluice/net/channel.h"
#include "sluice/planner/plan.h"

/* Durations in the plan are microseconds. */
static const char *duration(sl_arena *a, int64_t us) {
  return sl_explain_duration(a, us / 1000);
}

static const char *window_str(sl_arena *a, const sl_plan_window *w) {
  const char *time = w->proctime ? "PROCTIME()" : sl_explain_expr(a, w->time);
  switch (w->kind) {
  case SL_WINDOW_TUMBLE:
    return sl_arena_printf(a, "TUMBLE(%s, size %s)", time,
                           duration(a, w->size_us));
  case SL_WINDOW_HOP:
    return sl_arena_printf(a,
                           "HOP(%s, slide %s, size %s; %lld slices per "
                           "window)",
                           time, duration(a, w->slide_us),
                           duration(a, w->size_us),
                           (long long)(w->size_us / w->slide_us));
  case SL_WINDOW_CUMULATE:
    return sl_arena_printf(a, "CUMULATE(%s, step %s, max %s)", time,
                           duration(a, w->slide_us), duration(a, w->size_us));
  case SL_WINDOW_SESSION:
    return sl_arena_printf(a, "SESSION(%s, gap %s)", time,
                           duration(a, w->gap_us));
  }
  return "?";
}

static const char *exprs_str(sl_arena *a, int n, sl_bexpr *const *e,
                             const char *const *names) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "[");
  for (int i = 0; i < n; i++) {
    if (i)
      sl_strbuf_append(&b, ", ");
    const char *text = sl_explain_expr(a, e[i]);
    if (names && names[i] && strcmp(names[i], text) != 0)
      sl_strbuf_printf(&b, "%s := %s", names[i], text);
    else
      sl_strbuf_append(&b, text);
  }
  sl_strbuf_append(&b, "]");
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

static const char *agg_op_name(sl_agg_op op) {
  switch (op) {
  case SL_AGG_COUNT_STAR:
  case SL_AGG_COUNT:
    return "COUNT";
  case SL_AGG_SUM:
    return "SUM";
  case SL_AGG_AVG:
    return "AVG";
  case SL_AGG_MIN:
    return "MIN";
  case SL_AGG_MAX:
    return "MAX";
  }
  return "?";
}

/* The CRDT of an aggregate's partial state (see aggregate.h). */
static const char *state_of(const sl_plan_agg *g) {
  if (g->distinct)
    return "grow-only set";
  switch (g->op) {
  case SL_AGG_COUNT_STAR:
  case SL_AGG_COUNT:
  case SL_AGG_SUM:
    return "counter";
  case SL_AGG_AVG:
    return "(sum, count)";
  case SL_AGG_MIN:
  case SL_AGG_MAX:
    return "semilattice";
  }
  return "?";
}

static const char *aggs_str(sl_arena *a, const sl_plan *p) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "[");
  for (int i = 0; i < p->naggs; i++) {
    const sl_plan_agg *g = &p->aggs[i];
    if (i)
      sl_strbuf_append(&b, ", ");
    sl_strbuf_printf(&b, "%s(%s%s)", agg_op_name(g->op),
                     g->distinct ? "DISTINCT " : "",
                     g->arg ? sl_explain_expr(a, g->arg) : "*");
    if (g->filter)
      sl_strbuf_printf(&b, " FILTER (WHERE %s)", sl_explain_expr(a, g->filter));
    sl_strbuf_printf(&b, " {%s}", state_of(g));
  }
  sl_strbuf_append(&b, "]");
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

/* EXPLAIN ANALYZE: a measured figure on a node, in the TEXT line and as a
 * JSON attribute. */
void sl_xnode_actual(sl_arena *a, xnode *n, const char *key,
                     const char *value) {
  /* One "(actual: k=v, k=v)" group per node, appended to. */
  size_t len = strlen(n->detail);
  if (len > 0 && strstr(n->detail, " (actual: ") && n->detail[len - 1] == ')')
    n->detail = sl_arena_printf(a, "%.*s, %s=%s)", (int)(len - 1), n->detail,
                                key, value);
  else
    n->detail = sl_arena_printf(a, "%s (actual: %s=%s)", n->detail, key, value);
  sl_xnode_attr(a, n, key, value);
}

static const char *count(sl_arena *a, uint64_t n) {
  return sl_arena_printf(a, "%llu", (unsigned long long)n);
}

static const char *secs(sl_arena *a, double s) {
  return sl_arena_printf(a, "%.3f s", s);
}

/* in: one of the plan's inputs; idle_us: the plan's idle timeout for
 * input 0 (sl_plan.idle_timeout_us), 0 for the others. */
static xnode *source_node(sl_arena *a, const sl_plan_input *in,
                          int64_t idle_us) {
  xnode *n = sl_xnode(a, "Source");
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s [connector=%s, %s, reads=[", in->table->name,
                   in->connector->name, in->bounded ? "bounded" : "unbounded");
  for (int k = 0; k < in->nused; k++)
    sl_strbuf_printf(&b, "%s%s", k ? ", " : "",
                     in->leaves.names[in->used_leaf[k]]);
  sl_strbuf_printf(&b, "] of %d leaves", in->leaves.n - in->ncodes);
  for (int k = 0; k < in->nfilters; k++)
    sl_strbuf_printf(&b, "%s%s", k ? " AND " : ", filter=", in->filter_sql[k]);
  const char *idle =
      idle_us > 0
          ? sl_arena_printf(a,
                            "after %.3g s without a row a worker is idle: its "
                            "watermark moves up to the other workers' and on "
                            "with the clock (SET "
                            "'table.exec.source.idle-timeout')",
                            (double)idle_us / 1e6)
          : NULL;
  if (idle)
    sl_strbuf_printf(&b, ", idle: %s", idle);
  sl_strbuf_append(&b, "]");
  n->detail = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  sl_xnode_attr(a, n, "table", in->table->name);
  sl_xnode_attr(a, n, "connector", in->connector->name);
  sl_xnode_attr(a, n, "bounded", in->bounded ? "true" : "false");
  if (idle)
    sl_xnode_attr(a, n, "idle", idle);
  return n;
}

/* The per-worker pipeline below the stateful operator (or the sink). */
static xnode *pipeline(sl_arena *a, const sl_plan *p, int workers, xnode *top,
                       const sl_query_stats *st) {
  xnode *pipe = sl_xnode(a, "Pipeline");
  /* compiled by the JIT, or why not (jit.h); after a run, what the run
   * did (the JIT may also fail at run time) */
  const char *why = sl_jit_plan_status(a, p, p->jit);
  if (st)
    why = st->jit_status[0] ? st->jit_status : NULL;
  /* the window state update too (phase 2), or the C fold */
  bool state = !why && p->kind == SL_PLAN_AGGREGATE && p->jit_state &&
               !sl_jit_fold_status(p);
  /* the lookup join's probe in the same loop; the exchange's routing */
  bool probe = !why && p->jit_probe && !sl_jit_lookup_status(p);
  bool route = !why && workers > 1 && !sl_jit_route_status(p);
  /* subtrees the compiled code hands to the interpreter, per row */
  const char *interp = why ? NULL : sl_jit_plan_interpreted(a, p);
  /* After a run: how many buffers really ran compiled, and how many a
   * compiled step handed back to the interpreter (worker.c) */
  const char *ran = "";
  if (st && !why)
    ran = sl_arena_printf(
        a, ", %llu of %llu buffers; %llu handed back",
        (unsigned long long)st->jit_buffers,
        (unsigned long long)(st->jit_buffers + st->jit_back_buffers),
        (unsigned long long)st->jit_back_buffers);
  pipe->detail = sl_arena_printf(
      a, "[%s%s%s%s%s%s, %d worker%s, each on its own share of the stream]",
      why ? sl_arena_printf(a, "interpreted: %s", why) : "compiled", ran,
      interp ? sl_arena_printf(a, " (%s through the interpreter)", interp) : "",
      probe ? ", join probe compiled" : "",
      state ? ", state update compiled" : "", route ? ", routing compiled" : "",
      workers, workers == 1 ? "" : "s");
  sl_xnode_attr(a, pipe, "mode", why ? "interpreted" : "compiled");
  if (!why && p->kind == SL_PLAN_AGGREGATE)
    sl_xnode_attr(a, pipe, "state_update", state ? "compiled" : "C");
  if (!why && p->join)
    sl_xnode_attr(a, pipe, "join_probe", probe ? "compiled" : "C");
  if (interp)
    sl_xnode_attr(a, pipe, "through_interpreter", interp);
  if (why)
    sl_xnode_attr(a, pipe, "interpreted_because", why);
  sl_xnode_attr(a, pipe, "workers", sl_arena_printf(a, "%d", workers));
  if (st && !why) {
    sl_xnode_actual(a, pipe, "JIT compile time",
                    sl_arena_printf(a, "%.1f ms", st->jit_seconds * 1000));
    sl_xnode_actual(a, pipe, "buffers compiled", count(a, st->jit_buffers));
    sl_xnode_actual(a, pipe, "rows compiled", count(a, st->jit_rows));
    sl_xnode_actual(a, pipe, "buffers handed back",
                    count(a, st->jit_back_buffers));
    sl_xnode_actual(a, pipe, "rows handed back", count(a, st->jit_back_rows));
    if (st->jit_fold_rows_c)
      sl_xnode_actual(a, pipe, "rows the state update handed to C",
                      count(a, st->jit_fold_rows_c));
  }
  if (st) {
    sl_xnode_actual(a, pipe, "time in operators",
                    secs(a, st->pipeline_seconds));
    sl_xnode_actual(a, pipe, "time in the source", secs(a, st->source_seconds));
  }
  xnode *cur = pipe;
  if (top) {
    sl_xnode_kid(a, cur, top);
    cur = top;
  }
  if (p->post_join_filter) {
    xnode *f = sl_xnode(a, "Filter");
    f->detail = sl_explain_expr(a, p->post_join_filter);
    if (st)
      sl_xnode_actual(a, f, "rows in", count(a, st->rows_joined));
    sl_xnode_kid(a, cur, f);
    cur = f;
  }
  if (p->join) {
    xnode *j = sl_xnode(a, "LookupJoin");
    j->detail = sl_arena_printf(
        a,
        "[hash on %s = %s] { strategy: broadcast: the bounded table %s is "
        "loaded once and shared by every worker; the stream is not moved }",
        exprs_str(a, p->njoin_keys, p->join_stream_keys, NULL),
        exprs_str(a, p->njoin_keys, p->join_table_keys, NULL),
        p->inputs[1].table->name);
    if (st) {
      sl_xnode_actual(a, j, "rows out", count(a, st->rows_joined));
      sl_xnode_actual(a, j, "table rows", count(a, st->table_rows));
      static const char *const probes[] = {
          "by hash", "by hash, to the first match (unique keys)",
          "by value (a unique, dense integer key)"};
      if (st->table_rows > 0 && st->table_probe >= 0 && st->table_probe <= 2)
        sl_xnode_actual(a, j, "probed", probes[st->table_probe]);
    }
    sl_xnode_kid(a, cur, j);
    sl_xnode_kid(a, j, source_node(a, &p->inputs[1], 0));
    cur = j;
  }
  if (p->filter) {
    xnode *f = sl_xnode(a, "Filter");
    f->detail = sl_explain_expr(a, p->filter);
    if (st)
      sl_xnode_actual(a, f, "rows out", count(a, st->rows_filtered));
    sl_xnode_kid(a, cur, f);
    cur = f;
  }
  xnode *src = source_node(a, &p->inputs[0], p->idle_timeout_us);
  if (st) {
    sl_xnode_actual(a, src, "rows", count(a, st->events));
    if (st->input_bytes)
      sl_xnode_actual(a, src, "bytes", count(a, st->input_bytes));
    if (st->skipped_rows)
      sl_xnode_actual(a, src, "malformed rows skipped",
                      count(a, st->skipped_rows));
  }
  sl_xnode_kid(a, cur, src);
  return pipe;
}

/* An updating plan: each operator's changelog mode, as Flink's EXPLAIN
 * CHANGELOG_MODE prints it.  The aggregate and everything above it update
 * their rows; HAVING also deletes the row of a group that stops passing.
 * Below the aggregate rows are only inserted. */
void sl_explain_mark_changelog(sl_arena *a, xnode *n, const char *mode) {
  bool agg =
      strcmp(n->name, "GroupAggregate") == 0 || strcmp(n->name, "TopN") == 0;
  const char *m = agg ? "[I, UB, UA]" : mode;
  n->detail =
      sl_arena_printf(a, "%s%schangelog: %s", n->detail ? n->detail : "",
                      n->detail ? " " : "", m);
  sl_xnode_attr(a, n, "changelog", m);
  for (int k = 0; k < n->nkids; k++)
    sl_explain_mark_changelog(a, n->kids[k], agg ? "[I]" : mode);
}

/* Changelog kinds as bits, and their names as Flink prints them. */
enum { K_I = 1, K_UB = 2, K_UA = 4, K_D = 8 };

static const char *kinds_text(int k) {
  static const char *const names[] = {"[I]", "[I, UB, UA]", "[I, D]",
                                      "[I, UB, UA, D]"};
  return names[((k & K_UB) ? 1 : 0) + ((k & K_D) ? 2 : 0)];
}

int sl_explain_mark_changelog_staged(sl_arena *a, xnode *n) {
  int in = 0;
  for (int k = 0; k < n->nkids; k++)
    in |= sl_explain_mark_changelog_staged(a, n->kids[k]);
  if (n->nkids == 0)
    in = K_I;
  bool takes_back = in & (K_UB | K_D);
  int out = in;
  /* Updating operators: an aggregate or Top-N updates its rows (and
   * deletes them too when its input takes rows back); a join of rows
   * that may be taken back takes back what they joined. */
  if (!strcmp(n->name, "GroupAggregate") || !strcmp(n->name, "TopN"))
    out = K_I | K_UB | K_UA | (takes_back ? K_D : 0);
  else if (!strcmp(n->name, "Join"))
    out = K_I | (takes_back ? K_D : 0);
  else if (!strcmp(n->name, "Filter") && (in & K_UB))
    out = in | K_D; /* an update that stops passing: -D of the old row */
  const char *m = kinds_text(out);
  n->detail =
      sl_arena_printf(a, "%s%schangelog: %s", n->detail ? n->detail : "",
                      n->detail ? " " : "", m);
  sl_xnode_attr(a, n, "changelog", m);
  return out;
}

xnode *sl_explain_sink_node(sl_arena *a, const sl_plan *p,
                            const sl_query_stats *st) {
  xnode *sink = sl_xnode(a, "Sink");
  sink->detail = p->sink_table
                     ? sl_arena_printf(a, "%s [connector=%s]",
                                       p->sink_table->name, p->sink->name)
                     : "shell";
  if (st) {
    sl_xnode_actual(a, sink, "rows", count(a, st->rows_out));
    sl_xnode_actual(a, sink, "wall time", secs(a, st->seconds));
    sl_xnode_actual(a, sink, "events/s",
                    sl_arena_printf(a, "%.0f",
                                    st->seconds > 0
                                        ? (double)st->events / st->seconds
                                        : 0.0));
    sl_xnode_actual(a, sink, "setup", secs(a, st->setup_seconds));
  }
  return sink;
}

const char *sl_explain_count(sl_arena *a, uint64_t n) {
  return count(a, n);
}

/* LIMIT/OFFSET and ORDER BY above the projection, under the sink;
 * returns the node the projection goes under. */
static xnode *limit_sort_nodes(sl_arena *a, const sl_plan *p, xnode *sink) {
  xnode *above = sink;
  if (p->limit >= 0 || p->offset > 0) {
    xnode *lim = sl_xnode(a, "Limit");
    lim->detail =
        p->limit >= 0 && p->offset > 0
            ? sl_arena_printf(a, "%lld rows after skipping %lld",
                              (long long)p->limit, (long long)p->offset)
        : p->limit >= 0
            ? sl_arena_printf(a, "%lld rows%s", (long long)p->limit,
                              p->norder ? "" : " (the query stops there)")
            : sl_arena_printf(a, "all rows after skipping %lld",
                              (long long)p->offset);
    sl_xnode_kid(a, above, lim);
    above = lim;
  }
  if (p->norder > 0) {
    /* single: the only place every result row meets. */
    sl_strbuf k = SL_STRBUF_INIT;
    for (int i = 0; i < p->norder; i++) {
      const sl_border *o = &p->order[i];
      sl_strbuf_printf(&k, "%s%s%s%s", i ? ", " : "", p->out_names[o->column],
                       o->desc ? " DESC" : "",
                       o->nulls == 1   ? " NULLS FIRST"
                       : o->nulls == 2 ? " NULLS LAST"
                                       : "");
    }
    xnode *sort = sl_xnode(a, "Sort");
    sort->detail = sl_arena_printf(
        a,
        "[%s] { strategy: single: every result row goes to the coordinator, "
        "sorted once the input has ended }",
        sl_strbuf_cstr(&k));
    sl_strbuf_free(&k);
    sl_xnode_kid(a, above, sort);
    above = sort;
  }
  return above;
}

/* An aggregate's node: its window, strategy, keys, trigger, state and
 * what it did. */
static xnode *aggregate_node(sl_arena *a, const sl_plan *p, int workers,
                             const char *strategy, const char *keys,
                             const sl_query_stats *st) {
  xnode *agg = sl_xnode(a, p->windowed ? "WindowAggregate" : "GroupAggregate");
  const char *trigger =
      p->windowed && !p->window.proctime
          ? sl_arena_printf(a,
                            "watermark (vector clock over %d worker%s) "
                            "passes the window end",
                            workers, workers == 1 ? "" : "s")
      : p->windowed ? "the processing-time clock passes the window end"
      : p->changelog
          ? "every epoch (a worker hands over its changes after "
            "'table.exec.mini-batch.allow-latency', or a share of "
            "'sluice.epoch-size' or 'table.exec.mini-batch.size' of "
            "input): the coordinator merges them into the result and "
            "sends what changed"
          : "end of input (bounded source)";
  const char *late = p->late_table
                         ? sl_arena_printf(a,
                                           "written whole to table '%s' (SET "
                                           "'sluice.late-records')",
                                           p->late_table->name)
                         : NULL;
  agg->detail = sl_arena_printf(
      a, "%s { strategy: %s, keys: %s, aggs: %s, trigger: %s%s%s }",
      p->windowed ? window_str(a, &p->window) : "global", strategy, keys,
      aggs_str(a, p), trigger, late ? ", late records: " : "",
      late ? late : "");
  sl_xnode_attr(a, agg, "strategy", strategy);
  sl_xnode_attr(a, agg, "state",
                p->windowed && p->window.kind == SL_WINDOW_SESSION
                    ? "per worker: sessions per key with partial states; "
                      "the coordinator merges closed sessions per key"
                : p->changelog
                    ? "per worker: partial states of its changes since its "
                      "last epoch; the coordinator keeps every group's "
                      "merged state for as long as the query runs"
                : p->strategy == SL_STRATEGY_REPARTITION
                    ? "per owning worker: complete states per (slice, key) "
                      "for the keys it owns"
                    : "per worker: partial states per (slice, key); the "
                      "coordinator merges them when the window fires");
  sl_xnode_attr(a, agg, "trigger", trigger);
  if (late)
    sl_xnode_attr(a, agg, "late records", late);
  if (st) {
    sl_xnode_actual(a, agg, "rows in", count(a, st->rows_state));
    sl_xnode_actual(a, agg, "late records dropped", count(a, st->late_dropped));
    if (p->late_table)
      sl_xnode_actual(a, agg, "late records written",
                      count(a, st->late_written));
    sl_xnode_actual(a, agg, "windows fired", count(a, st->windows_fired));
    sl_xnode_actual(a, agg, "groups out", count(a, st->groups_emitted));
    sl_xnode_actual(a, agg, "peak state of a worker",
                    sl_arena_printf(a, "%llu bytes",
                                    (unsigned long long)st->state_bytes_peak));
    sl_xnode_actual(a, agg, "merge time", secs(a, st->merge_seconds));
    sl_xnode_actual(a, agg, "finalize and sink time",
                    secs(a, st->emit_seconds));
  }
  return agg;
}

/* What each record is reduced to before it meets the state. */
static xnode *compute_node(sl_arena *a, const sl_plan *p, const char *keys) {
  xnode *assign = sl_xnode(a, "Compute");
  sl_strbuf d = SL_STRBUF_INIT;
  if (p->windowed && !p->window.proctime)
    sl_strbuf_printf(&d, "event time %s", sl_explain_expr(a, p->window.time));
  if (p->watermark && p->windowed && !p->window.proctime)
    sl_strbuf_printf(&d, "%swatermark max(%s)", d.len ? ", " : "",
                     sl_explain_expr(a, p->watermark));
  sl_strbuf_printf(&d, "%skeys %s, aggregate arguments", d.len ? ", " : "",
                   keys);
  assign->detail = sl_arena_strdup(a, sl_strbuf_cstr(&d));
  sl_strbuf_free(&d);
  return assign;
}

/* Records travel to the worker that owns their key. */
static xnode *exchange_node(sl_arena *a, const sl_plan *p, int workers,
                            const char *keys, const sl_query_stats *st) {
  xnode *ex = sl_xnode(a, "Exchange");
  uint32_t slot = p->buffer_size < 4096 ? 4096 : p->buffer_size;
  slot = (slot + 63u) & ~63u; /* as the executor opens them */
  ex->detail = sl_arena_printf(
      a,
      "{ dist: hash(%s) to the owning worker, transport: local ring %d x "
      "%s, %d channels }",
      keys, SL_CHANNEL_DEFAULT_CREDITS,
      slot % 1024 ? sl_arena_printf(a, "%u B", slot)
                  : sl_arena_printf(a, "%u KiB", slot / 1024),
      workers * (workers - 1));
  sl_xnode_attr(a, ex, "dist", sl_arena_printf(a, "hash(%s)", keys));
  sl_xnode_attr(a, ex, "transport", "local");
  if (st) {
    sl_xnode_actual(a, ex, "rows sent to other workers",
                    count(a, st->exchange_rows));
    sl_xnode_actual(a, ex, "bytes", count(a, st->exchange_bytes));
    sl_xnode_actual(a, ex, "slots", count(a, st->exchange_slots));
  }
  return ex;
}

/* A windowed or global aggregate under the projection: HAVING, the
 * aggregate, its exchange, the pipeline. */
static void aggregate_nodes(sl_arena *a, const sl_plan *p, int workers,
                            const char *strategy, const sl_query_stats *st,
                            xnode *proj) {
  xnode *cur = proj;
  if (p->having) {
    xnode *h = sl_xnode(a, "Filter");
    h->detail =
        sl_arena_printf(a, "%s [HAVING]", sl_explain_expr(a, p->having));
    sl_xnode_kid(a, cur, h);
    cur = h;
  }
  const char *keys = exprs_str(a, p->nkeys, p->keys, NULL);
  xnode *agg = aggregate_node(a, p, workers, strategy, keys, st);
  sl_xnode_kid(a, cur, agg);
  xnode *assign = compute_node(a, p, keys);
  xnode *below = agg;
  if (p->strategy == SL_STRATEGY_REPARTITION && workers > 1) {
    xnode *ex = exchange_node(a, p, workers, keys, st);
    sl_xnode_kid(a, agg, ex);
    below = ex;
  }
  sl_xnode_kid(a, below, pipeline(a, p, workers, assign, st));
}

xnode *sl_explain_plan_tree(sl_arena *a, const sl_plan *p, int workers,
                            const char *strategy, const sl_query_stats *st) {
  if (p->kind == SL_PLAN_STAGED)
    return sl_explain_staged_tree(a, p, workers, st);
  xnode *sink = sl_explain_sink_node(a, p, st);
  xnode *proj = sl_xnode(a, "Project");
  proj->detail = exprs_str(a, p->nout, p->out, p->out_names);
  sl_xnode_kid(a, limit_sort_nodes(a, p, sink), proj);
  if (p->limit >= 0)
    sl_xnode_attr(a, sink, "limit",
                  sl_arena_printf(a, "%lld", (long long)p->limit));
  if (p->kind == SL_PLAN_CONSTANT) {
    xnode *v = sl_xnode(a, "Values");
    v->detail = sl_arena_printf(
        a, "{ %d row%s of constants, evaluated once in this process%s }",
        p->nconst_rows, p->nconst_rows == 1 ? "" : "s",
        p->const_filter ? sl_arena_printf(a, ", kept where %s",
                                          sl_explain_expr(a, p->const_filter))
                        : "");
    sl_xnode_kid(a, proj, v);
  } else if (p->kind == SL_PLAN_STATELESS) {
    sl_xnode_kid(a, proj, pipeline(a, p, workers, NULL, st));
  } else if (p->kind == SL_PLAN_AGGREGATE) {
    aggregate_nodes(a, p, workers, strategy, st, proj);
  }
  if (p->changelog)
    sl_explain_mark_changelog(a, sink,
                              p->kind == SL_PLAN_AGGREGATE && p->having
                                  ? "[I, UB, UA, D]"
                                  : "[I, UB, UA]");
  return sink;
}

void sl_explain_statement(sl_strbuf *b, const sl_bound_stmt *s,
                          const sl_plan *p, const char *no_plan, int workers,
                          const char *strategy, const char *why,
                          const sl_query_stats *st, sl_explain_format fmt) {
  sl_arena a;
  sl_arena_init(&a, 0);
  xnode *bound = sl_explain_bound_tree(&a, s);
  xnode *plan = p ? sl_explain_plan_tree(&a, p, workers, strategy, st) : NULL;
  if (fmt == SL_EXPLAIN_JSON) {
    sl_strbuf_append(b, "{\"bound_tree\": ");
    sl_xnode_print_json(b, bound, 0);
    if (plan) {
      sl_strbuf_append(b, ",\n\"physical_plan\": ");
      sl_xnode_print_json(b, plan, 0);
      sl_strbuf_append(b, ",\n\"rewrites\": [");
      for (int i = 0; i < p->nrewrites; i++) {
        if (i)
          sl_strbuf_append(b, ", ");
        sl_json_string(b, p->rewrites[i]);
      }
      sl_strbuf_append(b, "]");
      if (why) {
        sl_strbuf_append(b, ",\n\"why\": ");
        sl_json_string(b, why);
      }
    } else if (no_plan) {
      sl_strbuf_append(b, ",\n\"physical_plan\": null, \"not_runnable\": ");
      sl_json_string(b, no_plan);
    }
    sl_strbuf_append(b, "}\n");
  } else {
    sl_strbuf_append(b, "== Bound tree ==\n");
    sl_xnode_print_text(b, bound, 0);
    if (plan) {
      if (p->nrewrites) {
        sl_strbuf_append(b, "== Rewrites ==\n");
        for (int i = 0; i < p->nrewrites; i++)
          sl_strbuf_printf(b, "%s\n", p->rewrites[i]);
      }
      sl_strbuf_append(b, "== Physical plan ==\n");
      sl_xnode_print_text(b, plan, 0);
      if (why)
        sl_strbuf_printf(b, "== Why %s ==\n%s\n", strategy, why);
    } else if (no_plan) {
      sl_strbuf_printf(b, "== Physical plan ==\n(none: %s)\n", no_plan);
    }
  }
  sl_arena_free(&a);
}
