/* plan.h - the physical plan of one query, as the runtime executes it.
 *
 * The planner flattens the bound tree (binder.h) into one pipeline per
 * query: views and simple subqueries are inlined by substituting their
 * select lists into the expressions above them, so every expression of the
 * plan is over the *base row*: the leaves the source produces (and, after a
 * lookup join, the bounded table's columns).  The pipeline is
 *
 *   source -> filter -> [lookup join -> filter] -> either
 *     stateless:  project -> sink
 *     aggregate:  event time, watermark, window/slice assignment, group key,
 *                 aggregate arguments -> per-worker partial state (CRDT)
 *                 -> at the trigger: merge, finalize, HAVING, project -> sink
 *
 * Expressions of the plan are bound expressions (binder.h) whose COLUMN
 * nodes index the base row's columns (see sl_plan.base_*); the executor
 * compiles them with the interpreter (and later the JIT).  After the
 * aggregate, expressions index the *aggregate row*: group keys, then
 * aggregates, then window_start, window_end, window_time.
 *
 * Ownership: the plan lives in the statement's arena and points into the
 * bound tree and the catalog (keep both alive while the plan runs).
 */
#ifndef SLUICE_PLAN_H
#define SLUICE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/binder/binder.h"
#include "sluice/catalog/catalog.h"
#include "sluice/common/settings.h"
#include "sluice/connectors/connector.h"
#include "sluice/state/aggregate.h"

typedef enum sl_plan_kind {
  SL_PLAN_STATELESS, /* filter + project */
  SL_PLAN_AGGREGATE, /* windowed or (bounded input) global GROUP BY */
  SL_PLAN_STAGED,    /* several single-stage plans (leaves) whose rows meet
                      * in window-aligned operators (sl_staged_plan) */
  SL_PLAN_CONSTANT,  /* rows of constant expressions (SELECT without FROM,
                      * VALUES): evaluated once, no source */
} sl_plan_kind;

/* A source's part of the base row. */
typedef struct sl_plan_input {
  const sl_table_def *table;
  const sl_source_connector *connector;
  bool bounded;           /* ends by itself ('events.num', a file) */
  sl_leaf_columns leaves; /* all leaves of the table */
  int nused;
  int *used_leaf;   /* leaves read by the query, in leaf order (projection
                     * pruning: the source produces only these) */
  int first_column; /* its columns' first index in the base row */
  int ncolumns;     /* its table columns (ROW columns count once) */
  /* Conditions the source applies itself (sl_plan_push_into_sources). */
  int nfilters;
  sl_source_filter *filters;
  const char **filter_sql; /* each as SQL, for EXPLAIN */
  /* String leaves read as their dictionary codes (sl_plan_use_codes): the
   * last ncodes of `leaves` are INT leaves "<leaf>#code", code k standing
   * for string leaf code_leaf[k] of dictionary code_dict[k], and base-row
   * column code_column[k]. */
  int ncodes;
  int *code_leaf;
  int *code_column;
  const sl_dictionary **code_dict;
} sl_plan_input;

/* window_start / window_end / window_time of a window, as placeholders in
 * expressions over the base row (SL_BEXPR_WINDOW_PROP with fn == NULL). */

typedef struct sl_plan_window {
  sl_window_kind kind;
  int64_t size_us;  /* TUMBLE, HOP, CUMULATE (max) */
  int64_t slide_us; /* HOP slide, CUMULATE step, TUMBLE = size */
  int64_t gap_us;   /* SESSION */
  int64_t offset_us;
  int64_t unit_us; /* time granularity of the time attribute (1000 for
                    * TIMESTAMP(3)): a window [s, e) fires when the
                    * watermark reaches e - unit, as in Flink */
  sl_bexpr *time;  /* event time over the base row */
  bool proctime;
} sl_plan_window;

typedef struct sl_plan_agg {
  sl_agg_op op;
  bool distinct;
  sl_bexpr *arg;    /* over the base row; NULL for COUNT(*) */
  sl_bexpr *filter; /* FILTER (WHERE ...), or NULL */
  const sl_type *type;
} sl_plan_agg;

/* How a stateful operator is spread over workers (and later nodes). */
typedef enum sl_strategy {
  SL_STRATEGY_LATE_MERGE,  /* every worker keeps partial CRDT state for all
                            * keys; partials merge when a window fires */
  SL_STRATEGY_REPARTITION, /* records are hashed on the key to the worker
                            * that owns it (through channels); the owner
                            * keeps complete state for its keys */
} sl_strategy;

typedef struct sl_staged_plan sl_staged_plan;

typedef struct sl_plan {
  sl_plan_kind kind;
  /* The fields up to the union below are every plan's (a staged plan's
   * pipeline fields up to `out` are unused: each leaf has its own; its
   * sink, LIMIT and OFFSET are the query's).  A kind's own fields are in
   * the union at the end. */
  /* A leaf of a staged plan: rows go to the runtime's collector for it
   * (the executor hands it to the sink as sl_sink_spec.arg). */
  void *sink_arg;
  sl_strategy strategy; /* of the aggregate; set by whoever runs the plan
                         * (the session, from SET 'sluice.strategy') */
  /* The groups one worker's table holds per slice of state, as the cost
   * model estimated them when it chose the strategy; 0: unknown.  Sizes a
   * worker's first tables, before any slice has been seen whole. */
  uint32_t expected_groups;
  /* Late merge at partition leaders: the group keys (indexes) whose hash
   * picks a group's leader; 0: all of them.  A leaf whose join with
   * another is co-partitioned (SL_JOIN_REPARTITION) lists its join key. */
  int npartition_keys;
  int *partition_keys;
  uint32_t buffer_size; /* SET 'sluice.buffer-size' when the strategy was
                         * chosen (the exchange's slot size, for EXPLAIN);
                         * 0: not known */
  bool jit; /* compile the pipeline (SET 'sluice.jit'); set by the session,
             * read by EXPLAIN (the executor reads the setting itself) */
  bool jit_state; /* SET 'sluice.jit.state-update': compile the window
                   * state update too (jit.h, phase 2); the same */
  bool jit_probe; /* SET 'sluice.jit.join-probe': the lookup join's probe
                   * in the compiled loop (jit.h); the same */
  /* The base row: input 0 (the stream), then optionally input 1 (the
   * bounded table of a lookup join).  base_ncols columns in all, with
   * names and types (ROW columns included; their leaves are read by FIELD
   * chains). */
  int ninputs;
  sl_plan_input inputs[2];
  int base_ncols;
  const char **base_names;
  const sl_type **base_types;

  sl_bexpr *filter; /* over input 0's columns only (before the join) */
  /* Lookup join with the bounded table: stream key = table key. */
  bool join;
  int njoin_keys;
  sl_bexpr **join_stream_keys; /* over input 0 */
  sl_bexpr **join_table_keys;  /* over input 1 (base-row indexes) */
  sl_bexpr *post_join_filter;  /* over the whole base row, or NULL */

  /* Event time: the rowtime of input 0 and its watermark expression (both
   * NULL for a stream without WATERMARK). */
  sl_bexpr *rowtime;
  sl_bexpr *watermark;
  /* Compute the watermark even without a window: a stream leaf of a staged
   * plan tells the stages above how far its rows are complete. */
  bool track_watermark;
  /* A stream leaf whose rows are joined with its own windows' MAX or MIN
   * (sl_stage_extreme below; NULL: none): each worker drops the output
   * rows that cannot equal it (exec/op_keep_extremes.c). */
  const struct sl_stage_extreme *keep_extremes;
  /* A leaf of TUMBLE, HOP or CUMULATE window-TVF rows (no aggregate): its
   * rows go to the stages per window, `window` says which; a row is late
   * when its last window has fired (not when it is older than the
   * watermark), and its hidden last output column says from which window
   * on it counts. */
  bool window_rows;
  /* A leaf of updating stages: every row counts however late it is (the
   * watermark is still computed: it lets the stages drop state). */
  bool keep_late;
  /* SET 'sluice.late-records' = 'side-output' (sl_plan_route_late_records):
   * the records of input 0 later than the watermark are written whole, in
   * leaf order, to late_table through late_sink instead of being dropped,
   * so every leaf of input 0 is read.  NULL: dropped and counted. */
  const sl_table_def *late_table;
  const sl_sink_connector *late_sink;
  /* The runtime's open late output shared by a staged plan's leaves (set
   * by the stage runner), or NULL: the executor opens its own. */
  void *late_arg;
  /* SET 'table.exec.source.idle-timeout' (sl_plan_set_idle_timeout), in
   * microseconds, 0: none.  A worker whose share of input 0 gives no row
   * for this long is idle: its watermark moves on with the clock and up to
   * the largest of the query's other workers in its process. */
  int64_t idle_timeout_us;

  /* The window: of a windowed aggregate (windowed); of a window_rows
   * leaf (TUMBLE, HOP or CUMULATE rows, no aggregate: windowed false); of
   * a staged plan, the one its windowed leaves share (windowed unless its
   * stages are updating).  Not in the union: three kinds read it. */
  bool windowed;
  sl_plan_window window;

  /* The output: expressions over the base row (stateless) or the aggregate
   * row (aggregate), with names. */
  int nout;
  sl_bexpr **out;
  const char **out_names;
  const sl_type **out_types;

  /* An updating result (a GROUP BY without a window, as Flink runs it in
   * streaming mode): the coordinator keeps the merged state of every group
   * and, each time the workers hand over their changes (an epoch), sends
   * what changed as a changelog.  The runtime's result rows then carry the
   * row kind first, a column `op` (sl_changelog_op), before the nout
   * columns.  Not for a bounded input with ORDER BY or LIMIT, which gets
   * its final result once at the end (insert-only). */
  bool changelog;

  /* Where the rows go: an INSERT target, or the shell. */
  const sl_table_def *sink_table;
  const sl_sink_connector *sink;
  /* INSERT OVERWRITE (replace the table's rows; bounded queries only), and
   * whether the query never ends by itself (a streaming INSERT): what the
   * sink is opened with (sl_sink_spec). */
  bool sink_overwrite;
  bool sink_unbounded;
  int64_t limit;  /* -1: none */
  int64_t offset; /* result rows skipped before the first written */
  /* ORDER BY over the output columns (bounded inputs only): every result
   * row goes to the coordinator, which sorts once the input has ended. */
  int norder;
  const sl_border *order;

  /* What the planner's rewrites did, one line each, for EXPLAIN. */
  int nrewrites;
  const char **rewrites;

  /* The fields of one kind only, overlapping: `kind` says which part is
   * there.  A field of another kind is not a zero but the bytes of this
   * kind's (a staged plan's nkeys is part of its `staged` pointer), so
   * every read is under a check of the kind, or of a field that implies
   * it; sl_plan_nkeys and sl_plan_naggs below read 0 for a plan that is
   * not an aggregate.  A stateless plan has no part (its union stays
   * zeroed). */
  union {
    /* SL_PLAN_STAGED: the leaves and the stages over them. */
    struct {
      sl_staged_plan *staged;
    };
    /* SL_PLAN_CONSTANT: nconst_rows rows of nout expressions without
     * columns, each kept when const_filter (the WHERE of a SELECT without
     * FROM, or NULL) is TRUE. */
    struct {
      int nconst_rows;
      sl_bexpr *const *const *const_rows;
      sl_bexpr *const_filter;
    };
    /* SL_PLAN_AGGREGATE: the group keys, the aggregates and HAVING. */
    struct {
      int nkeys;
      sl_bexpr **keys; /* over the base row (window bounds are not keys) */
      int naggs;
      sl_plan_agg *aggs;
      sl_bexpr *having; /* over the aggregate row, or NULL */
    };
  };
} sl_plan;

/* The group keys and aggregates of an aggregate plan, 0 for any other
 * kind: for code that sizes the aggregate row of whatever plan it has. */
static inline int sl_plan_nkeys(const sl_plan *p) {
  return p->kind == SL_PLAN_AGGREGATE ? p->nkeys : 0;
}

static inline int sl_plan_naggs(const sl_plan *p) {
  return p->kind == SL_PLAN_AGGREGATE ? p->naggs : 0;
}

/* Session windows under late merge: the nodes do not merge session
 * fragments, so such a plan runs on one process only (the shell's). */
static inline bool sl_plan_sessions_on_one_process(const sl_plan *p) {
  return p->kind == SL_PLAN_AGGREGATE && p->windowed &&
         p->window.kind == SL_WINDOW_SESSION &&
         p->strategy != SL_STRATEGY_REPARTITION;
}

/* ---- multi-stage plans ---------------------------------------------------
 *
 * A query whose parts cannot be inlined into one pipeline (a windowed
 * aggregate feeding another aggregate or a join, a join of two windowed
 * results, ROW_NUMBER over a window) is split into *leaves*, each a
 * single-stage plan above that runs as usual (its own workers, strategy and
 * nodes), and a tree of *stages* over their result rows.  Every stateful
 * stage is window-aligned: a join equates the two sides' window bounds (or
 * bounds a stream's event time by an interval around the window), an
 * aggregate groups and a Top-N partitions by a window bound.  So the stages
 * never mix rows of different windows, and the runtime evaluates the tree
 * once per window, when every leaf has passed that window's end
 * (exec/stage_runner.c).  Expressions of a stage are over its input's
 * row (a join's: the left row then the right row), as in the bound tree.
 */
/* A window's join whose probe side has this many rows or more is probed
 * in parts, one per worker of the process running it (exec/stage_pool.c);
 * EXPLAIN says so. */
#define SL_STAGE_PARALLEL_ROWS 4096

typedef enum sl_stage_kind {
  SL_STAGE_LEAF,      /* the rows of leaves[leaf] for the window */
  SL_STAGE_SELECT,    /* filter (may be NULL), then exprs */
  SL_STAGE_JOIN,      /* inner join: hash on keys, then residual */
  SL_STAGE_AGGREGATE, /* GROUP BY groups: row = groups, then aggregates */
  SL_STAGE_TOPN,      /* input row + ROW_NUMBER() per partition, in order */
} sl_stage_kind;

typedef enum sl_join_strategy {
  SL_JOIN_SINGLE = 0,
  SL_JOIN_BROADCAST = 1,
  SL_JOIN_REPARTITION = 2,
  SL_JOIN_LATE_MERGE = 3,
  SL_JOIN_SHUFFLE = 4,         /* 'repartition' when neither side can stay */
  SL_JOIN_LATE_MERGE_ROWS = 5, /* 'late-merge' when both are routed */
} sl_join_strategy;

/* Are both sides' rows routed by the join key to the stage nodes (the
 * stage nodes' own leaf too)? */
static inline bool sl_join_routes_both(sl_join_strategy j) {
  return j == SL_JOIN_SHUFFLE || j == SL_JOIN_LATE_MERGE_ROWS;
}

typedef struct sl_stage sl_stage;
struct sl_stage {
  sl_stage_kind kind;
  int ncols;
  const char **names;
  const sl_type **types;
  int *wprop;  /* per column: the window bound it is (SL_WPROP_*), or -1 */
  bool stream; /* rows are not per window (a stream leaf's) */
  /* LEAF */
  int leaf;
  int time_col; /* a stream leaf: its event-time column */
  /* SELECT, AGGREGATE, TOPN */
  sl_stage *input;
  sl_bexpr *filter;
  int nexprs;
  sl_bexpr **exprs;
  /* JOIN */
  sl_stage *left, *right;
  int nkeys;
  sl_bexpr **lkeys, **rkeys; /* over the left / right row, equal types */
  sl_bexpr *residual;        /* over the joined row, or NULL */
  /* An interval join of a stream (the side whose stage is `stream`) with
   * per-window rows: stream rows whose time is in [e + lo_us, e + hi_us]
   * meet the rows of the window ending at e (the residual still checks the
   * exact condition). */
  int64_t lo_us, hi_us;
  /* AGGREGATE: groups over the input row, aggregates' args over it too */
  int ngroups;
  sl_bexpr **groups;
  int naggs;
  sl_plan_agg *aggs;
  /* TOPN */
  int npartition;
  sl_bexpr **partition;
  int norder;
  sl_bexpr **order;
  bool *order_desc;
  int *order_nulls; /* 0 default (NULL smallest), 1 first, 2 last */
  /* An updating Top-N (over a stream): only rows numbered up to this are
   * kept and sent (the WHERE rownum <= N above it). */
  int64_t topn_limit;
  /* Updating stages: rows of this JOIN, TOPN or AGGREGATE's input may be
   * taken back (an updating result is below it), so its state keeps what
   * a retraction needs: a Top-N every row, MIN, MAX and DISTINCT every
   * value with its count. */
  bool retracting;
  /* A regular join of two streams whose condition bounds one side's event
   * time from above by a column of the other (q9's B.dateTime BETWEEN
   * A.dateTime AND A.expires bounds B's by A.expires and A's by
   * B.dateTime): bound k says that a row of side 1 - side whose column
   * col plus offset_us is at or before side `side`'s watermark meets no
   * later row of `side`, and is dropped from the join's state (stage_plan.c
   * derives the rule).  The leaves under `side` then drop their late rows
   * (as an interval join does). */
  int nbounds;
  struct sl_stage_bound {
    int side;          /* 0 left, 1 right: whose watermark */
    int time_col;      /* ... of this column of that side (its event time,
                        * or a column of a join below with a watermark:
                        * sl_stage_col_watermark) */
    int col;           /* a TIMESTAMP column of the other side's rows */
    int64_t offset_us; /* added to col (an interval in the condition) */
  } * bounds;
};

/* A stream leaf joined with the MAX (or MIN) of its own rows per window
 * on that value (NEXMark q7: each window's highest bid): a row can meet
 * only windows whose extreme equals its value, and every row the leaf
 * sees counts in the aggregate of its own window, so a row whose value is
 * below the highest so far (above the lowest) of every window it can meet
 * never matches.  The stage store keeps per window the extreme of the
 * rows it was given and drops such rows (planner/stage_extremes.c says
 * when this holds; exec/stage_sink.c does it). */
typedef struct sl_stage_extreme {
  int col;               /* the leaf's output column compared */
  int time_col;          /* ... and its event time */
  bool max;              /* MAX: keep values >= the window's so far */
  sl_plan_window window; /* the aggregate's windows (TUMBLE) */
  int64_t lo_us, hi_us;  /* a row at t meets the windows ending in
                          * [t - hi_us, t - lo_us] (the join's interval) */
} sl_stage_extreme;

struct sl_staged_plan {
  int nleaves;
  sl_plan **leaves; /* their out: the leaf's columns, and one more,
                     * hidden: a windowed leaf's window_end; a window_rows
                     * leaf's $live_from, NULL or the end of the row's
                     * first window that had not fired when it came (its
                     * stage adds window_start, window_end and window_time
                     * to its rows itself) */
  sl_stage *top;
  /* Per leaf, or NULL: the rows its store need not keep (above). */
  sl_stage_extreme **extremes;
  /* No stage holds state (only SELECTs over one leaf, e.g. window TVF
   * rows read on their own): rows go out as they arrive, not when their
   * window closes (as Flink's window TVF emits them). */
  bool at_once;
  /* Stages over streams without windows (a regular join of two streams,
   * Top-N or deduplication by ROW_NUMBER over a stream): every stage keeps
   * state for as long as the query runs and handles rows as they arrive
   * (exec/updating_stages.c); the result is a changelog when a Top-N
   * updates its rows (sl_plan.changelog), else rows are only inserted.
   * Every leaf is a stream. */
  bool updating;
  sl_plan_window window; /* the windows every windowed leaf shares */
  /* How the join meets on several nodes (planner/choose_join.c; set by
   * the session): SINGLE, every leaf's rows to the coordinator, which
   * runs the stages; BROADCAST, the stages run on the nodes of leaf
   * local_leaf, each over its own share of that leaf's rows, and every row
   * of leaf bcast_leaf goes once to each of them (over links from its own
   * nodes, executor.h); REPARTITION, the same but local_leaf's partition
   * leaders split its groups by the join key (its partition_keys) and each
   * row of bcast_leaf goes only to the node leading its join key's
   * partition (the hash of its route_cols, the same function over the same
   * types); LATE_MERGE, both leaves are windowed aggregates grouped by the
   * join key and both run under late merge at partition leaders split by
   * it: leader p of each leaf finishes join-key partition p of every
   * window at the trigger, and bcast_leaf's leader p hands its rows to
   * local_leaf's node p, which probes; SHUFFLE (what 'repartition' is
   * when no side is grouped by the join key), the stages run on the nodes
   * of local_leaf, and every row of both leaves goes to the node its join
   * key's hash names (key_route): local_leaf's nodes route
   * their own rows too, to each other over the same links (updating
   * stages over more than two streams that one key joins, q23: every
   * leaf so, each other than local_leaf a side on nodes of its own;
   * bcast_leaf is then one of them);
   * LATE_MERGE_ROWS (what 'late-merge' is when both sides are routed by
   * the join key), as SHUFFLE, but every node holds its rows per window
   * (a grow-only set of rows per join key) until its watermark passes the
   * first window that needs them, then sends each partition's rows to its
   * node in one go, which concatenates them and probes.  join_why: the choice's
   * reason and estimates, for EXPLAIN. */
  sl_join_strategy join_strategy;
  int local_leaf, bcast_leaf;
  int nroute;
  int *route_cols;
  const char *join_why;
  /* Where the parts can run (planner/stage_placement.c), made once when
   * the plan is built; the runtime, EXPLAIN and the scheduler read them,
   * nothing computes them again.  spread_top: the stage the nodes run up
   * to: a windowed plan's top; for updating stages the highest stage
   * under a chain of single-input stages from the top that one key
   * partitions (from it down, every Top-N partition and aggregate's
   * groups include the key of one stream, or of one join of two
   * streams), NULL when there is none.  The nodes run the stages up to
   * it, each over its keys, and send its changes; the stages above it
   * (the rest of the chain: a global Top-N, an aggregate by other keys)
   * run in the coordinator over those changes.  join_stage: the join
   * under the top SELECTs (updating stages: under spread_top, when its
   * key partitions every stage down to it), or NULL; join_left and
   * join_right: its two leaves when it joins two different leaves and
   * the plan has no others (what a broadcast join could spread), else -1.
   * key_nroute[i] and key_route[i]: the columns of leaf i whose hash
   * routes its rows by the key under SL_JOIN_SHUFFLE (one stream: the
   * columns every aggregate's groups and Top-N's partition up to
   * spread_top include; a join: its join keys in key order, leaving out
   * window bounds), 0 when the rows cannot be routed so. */
  const sl_stage *spread_top;
  const sl_stage *join_stage;
  int join_left, join_right;
  int *key_nroute;
  int **key_route;
};

/* Does the plan end by itself: every source it reads (a staged plan's
 * leaves' too) is bounded? */
static inline bool sl_plan_is_bounded(const sl_plan *plan) {
  for (int i = 0; i < plan->ninputs; i++)
    if (!plan->inputs[i].bounded)
      return false;
  if (plan->kind == SL_PLAN_STAGED)
    for (int i = 0; i < plan->staged->nleaves; i++)
      if (!sl_plan_is_bounded(plan->staged->leaves[i]))
        return false;
  return true;
}

/* A node's part of a staged plan the coordinator placed: the node plans
 * the same text again, and applies the coordinator's choices sent with the
 * query (its join strategy `join`; `strategy`, leaf `leaf`'s) as the
 * coordinator applied them, into the same fields (join_strategy,
 * local_leaf, bcast_leaf, the leaves' partition_keys, route_cols).  fed >=
 * 0: the node runs the stages (fed: the leaf the links bring); else side:
 * it sends leaf's rows over links to the stage nodes; else it runs the
 * leaf for the coordinator.  SL_EINTERNAL ("do the coordinator and the
 * node run one build?") when this plan cannot be placed so. */
int sl_staged_place_on_node(sl_arena *a, sl_plan *plan, int leaf, int fed,
                            bool side, sl_join_strategy join,
                            sl_strategy strategy, sl_error *err);

/* The staged plan of a query that needs one (physical_plan.c tries a single
 * pipeline first).  SL_EUNSUPPORTED says what cannot be staged. */
int sl_stage_plan_build(sl_arena *a, const sl_bquery *q, sl_plan *plan,
                        sl_error *err);

/* A single-stage plan of query q for a leaf (its sink is the runtime's
 * collector).  No filter goes into the source here: sl_stage_plan_build
 * pushes them once the leaves are final, where the watermark allows. */
int sl_plan_build_leaf(sl_arena *a, const sl_bquery *q, sl_plan **out,
                       sl_error *err);

/* A staged plan's leaf: what its pipeline's JIT did (EXPLAIN ANALYZE
 * prints it on the leaf's Pipeline line; sl_query_stats.leaf). */
typedef struct sl_leaf_stats {
  uint64_t events, jit_buffers, jit_back_buffers, jit_rows, jit_back_rows;
  double jit_seconds;
  char jit_status[160]; /* why it ran interpreted; "" when compiled */
  uint64_t held_peak;   /* the most bytes of its rows the stages held */
  uint64_t not_kept;    /* rows that could not equal their windows' MAX or
                         * MIN, not kept (sl_stage_extreme) */
} sl_leaf_stats;
#define SL_STATS_LEAVES 8  /* leaves shown one by one; the rest summed only */
#define SL_STATS_STAGES 16 /* window stages whose peak is shown */

/* An updating JOIN stage's state at its largest, per side (0 left, 1
 * right): the join named by the first leaf under each side (plan.h's
 * leaf numbers; EXPLAIN ANALYZE finds its join by them).  Over nodes, the
 * sum of each node's peak. */
typedef struct sl_join_stats {
  int left_leaf, right_leaf;
  uint64_t peak_rows[2], peak_bytes[2];
} sl_join_stats;
#define SL_STATS_JOINS 8 /* joins shown; the rest not */

/* What running a plan measured (filled by the runtime; printed by
 * EXPLAIN ANALYZE and the shell's summary line).  Row counts are summed
 * over workers; *_seconds are summed thread time. */
typedef struct sl_query_stats {
  uint64_t events;        /* rows read from the stream source */
  uint64_t rows_filtered; /* rows left after the filter (before the join) */
  uint64_t rows_not_kept; /* a stream leaf's output rows that could not
                           * equal their windows' MAX or MIN (plan.h,
                           * keep_extremes), dropped by its workers */
  uint64_t rows_joined;   /* rows out of the lookup join */
  uint64_t rows_state;    /* rows folded into aggregate state (not late) */
  uint64_t rows_out;      /* rows written to the sink */
  uint64_t late_dropped;  /* records dropped as late */
  uint64_t late_written;  /* late records written to 'sluice.late-records.
                           * table' instead (side-output) */
  uint64_t windows_fired;
  uint64_t groups_emitted;      /* aggregate rows finalized (before HAVING) */
  uint64_t skipped_rows;        /* malformed input rows skipped */
  uint64_t input_bytes;         /* bytes the stream source handed the
                                 * pipeline: row widths of the leaves read
                                 * plus long strings (file bytes for files) */
  uint64_t state_bytes_peak;    /* largest partial state one worker held */
  uint64_t table_rows;          /* rows of the lookup join's bounded table */
  int table_probe;              /* how it was probed: 0 by hash, 1 by hash
                                 * to the first match (unique keys), 2 by
                                 * value (one unique, dense integer key) */
  uint64_t exchange_rows;       /* repartition: rows sent to other workers */
  uint64_t exchange_bytes;      /* ... their bytes (rows and long strings) */
  uint64_t exchange_slots;      /* ... channel slots published */
  uint64_t epochs_sent;         /* late merge at leaders: epochs that moved
                                 * state to another node (summed over nodes) */
  uint64_t state_moved;         /* ... partial state bytes sent between nodes */
  uint64_t stage_windows;       /* staged plans: windows the stages evaluated */
  uint64_t stage_late;          /* ... stream rows dropped as late for them */
  uint64_t stage_state_peak;    /* ... largest bytes of leaf rows held */
  uint64_t stage_rows_compiled; /* ... rows the stages' compiled */
  uint64_t stage_rows_interpreted; /* kernels did, and the interpreter */
  char stage_jit_status[160];      /* ... why no stage is compiled, or "" */
  /* ... per stage that is not a leaf, in pre-order from the top (as
   * EXPLAIN walks them, the first SL_STATS_STAGES): the most bytes one
   * window's evaluation held there (its rows, hash table, groups, sort);
   * over nodes, the sum of each node's */
  uint64_t stage_peak[SL_STATS_STAGES];
  uint64_t state_evicted;  /* updating stages: rows a bounded join
                            * dropped from its state (watermark) */
  uint64_t state_rows_end; /* ... rows the joins held at the end, after
                            * a last sweep by the leaves' watermarks */
  double source_seconds;   /* workers' time in the source */
  double pipeline_seconds; /* workers' time in filter, join, state updates */
  double merge_seconds;    /* coordinator: merging partial states */
  double emit_seconds;     /* coordinator: finalize, HAVING, project, sink */
  double seconds;          /* wall time from the first record to the end */
  double started_at;       /* the clock (clock.h) at the first record */
  double open_seconds;     /* the longest a worker took to open its source
                            * (pre-generated input is made then) */
  double setup_seconds;    /* EXPLAIN ANALYZE: the statement's time from
                            * planning to the first record, less
                            * open_seconds (set by the session) */
  double jit_seconds;      /* building and compiling the JIT's kernels */
  char jit_status[160];    /* why the pipeline ran interpreted; "" when
                            * it ran compiled */
  /* With the JIT's functions: buffers (rows) the compiled pipeline ran
   * whole, buffers (rows) a step handed back to the interpreter (a runtime
   * error to report, rows that do not fit, window rows partly late), and
   * rows the compiled state update handed to C (another slice, a NULL
   * event time, an overflow). */
  uint64_t jit_buffers, jit_rows, jit_back_buffers, jit_back_rows;
  uint64_t jit_fold_rows_c;
  int workers;
  /* Staged plans run here: each leaf's own (the first SL_STATS_LEAVES;
   * the sums above hold every leaf's). */
  int nleaves;
  sl_leaf_stats leaf[SL_STATS_LEAVES];
  int njoins; /* updating JOIN stages run here (the first SL_STATS_JOINS) */
  sl_join_stats join[SL_STATS_JOINS];
} sl_query_stats;

/* Column col of an updating plan's stage st has a watermark: every row
 * that comes out of st after it holds a later time there.  A stream leaf's
 * event time has its leaf's; a plain column of a SELECT has its input's;
 * a regular join's column c of side X has one when a bound of the join
 * holds it above the other side's time (X.c >= Y.t - off, so a row of Y
 * arriving later meets only rows of X with c past W(Y.t) - off): the
 * lower of X.c's own and that.  With leaf_wm (each leaf's watermark,
 * INT64_MIN: none yet) the watermark goes to *wm; without, only whether
 * there is one (planner/stage_join.c). */
bool sl_stage_col_watermark(const sl_stage *st, int col, const int64_t *leaf_wm,
                            int64_t *wm);

/* Build the plan of a bound query or INSERT.  SL_EUNSUPPORTED with a
 * message saying what is not supported yet ("not supported yet: a join of
 * two unbounded streams") for shapes the runtime cannot run. */
int sl_plan_build(sl_arena *a, const sl_bound_stmt *stmt, sl_plan **out,
                  sl_error *err);

/* Rewrites (planner/rewrite.c): replace columns the filter pins to a
 * constant (`event_type = 2`) in everything evaluated after the filter, and
 * fold what becomes constant (NEXMark's CASE over event_type). */
void sl_plan_propagate_constants(sl_arena *a, sl_plan *p);

/* Move HAVING conditions over group keys alone below the aggregate, into
 * the filter (planner/rewrite.c): a group whose key fails them is dropped
 * either way, and its records need not be aggregated. */
void sl_plan_push_having(sl_arena *a, sl_plan *p);

/* Evaluate constant subexpressions once (planner/constant_fold.c);
 * returns how many were replaced by literals. */
int sl_plan_fold_constants(sl_arena *a, sl_plan *p);

/* Hand filter conjuncts `leaf = integer` / `leaf IN (integers...)` on the
 * stream to its source when the source can apply them (a generator then
 * never generates the rows).  A table's watermark is computed over every
 * row the source produces, so for a plan with state or a watermark only
 * when the connector guarantees ordered event time (time_ordered) and the
 * watermark trails it by at least a time unit: no row is late either way
 * (rewrite.c says why); the conjunct then stays in the filter too, to drop
 * the source's time carriers.  stage_plan.c calls it for each leaf. */
void sl_plan_push_into_sources(sl_arena *a, sl_plan *p);

/* Append a line to the plan's rewrite log (printf-style). */
void sl_plan_note(sl_arena *a, sl_plan *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* SET 'sluice.late-records' = 'side-output' (planner/late_records.c): set
 * late_table and late_sink on the plan (a staged plan: on each leaf that
 * drops late records) from 'sluice.late-records.table', after checking
 * that it names a sink table whose columns are the stream table's leaves.
 * Nothing when the setting is 'drop'.  SL_EINVAL / SL_EUNSUPPORTED with a
 * message saying what to change. */
int sl_plan_route_late_records(sl_arena *a, sl_plan *plan,
                               const sl_catalog *catalog,
                               const sl_settings *settings, sl_error *err);

/* SET 'table.exec.source.idle-timeout' into plan (and a staged plan's
 * leaves): idle_timeout_us. */
void sl_plan_set_idle_timeout(sl_plan *plan, const sl_settings *settings);

/* The input (0 or 1) a base-row column belongs to, or -1. */
int sl_plan_input_of(const sl_plan *plan, int column);

/* Read string columns as dictionary codes where the plan only compares
 * them (planner/dictionary_codes.c; SET 'sluice.dictionary-codes'): after
 * the strategy is chosen, on the coordinator and every node alike. */
void sl_plan_use_codes(sl_arena *a, sl_plan *plan, const sl_settings *settings);

/* What a source of input `in` is asked for (sl_source_spec.leaf_index and
 * as_code) to produce its used leaves: a code leaf is its string leaf, as
 * its code.  *as_code is NULL when no leaf is a code. */
void sl_plan_source_leaves(sl_arena *a, const sl_plan_input *in,
                           const int **leaf_index, const bool **as_code);

/* The kind of aggregate, from a bound aggregate's function. */
sl_agg_op sl_plan_agg_op(const sl_bagg *agg, bool *ok);

#endif
