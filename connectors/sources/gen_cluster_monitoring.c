/* gen_cluster_monitoring.c - the Cluster Monitoring workload: task events
 * shaped like the Google cluster trace's task_events table (as Slash's CM
 * benchmark uses them; the query is "mean CPU per job per 2 s window").
 *
 *   timestamp    TIMESTAMP(3)  event time, events.per-second apart (1M/s)
 *   job_id       BIGINT        one of 'cm.jobs' (default 10000) jobs, zipf
 *                              with z = 0.5 so a few jobs are busy
 *   task_id      BIGINT        task index within the job, 0..'cm.tasks'-1
 *                              (default 100)
 *   machine_id   BIGINT        one of 'cm.machines' (default 12500)
 *   event_type   INT           0 SUBMIT .. 8 UPDATE_RUNNING; mostly 1
 *                              SCHEDULE, 4 FINISH and 8 UPDATE_RUNNING
 *   user_id      BIGINT        the job's owner: one of 1000 users (fixed
 *                              per job)
 *   category     INT           scheduling class 0..3 (fixed per job)
 *   priority     INT           0..11 (fixed per job)
 *   cpu          DOUBLE        normalised CPU request, 0..1: a per-job
 *                              level plus noise, so job means differ
 *   ram          DOUBLE        normalised memory request, 0..1
 *   disk         DOUBLE        normalised local disk request, 0..0.1
 *   constraints  INT           1 if the task must run on a different
 *                              machine than its job's other tasks (10%)
 */
#include "gen_common.h"
#include "generators.h"

enum {
  CM_TIMESTAMP,
  CM_JOB,
  CM_TASK,
  CM_MACHINE,
  CM_EVENT_TYPE,
  CM_USER,
  CM_CATEGORY,
  CM_PRIORITY,
  CM_CPU,
  CM_RAM,
  CM_DISK,
  CM_CONSTRAINTS,
  CM_NCOLS
};

static const gen_column cm_columns[] = {
    {"timestamp", GEN_TS, "TIMESTAMP(3)"}, {"job_id", GEN_INT, "BIGINT"},
    {"task_id", GEN_INT, "BIGINT"},        {"machine_id", GEN_INT, "BIGINT"},
    {"event_type", GEN_INT, "INT"},        {"user_id", GEN_INT, "BIGINT"},
    {"category", GEN_INT, "INT"},          {"priority", GEN_INT, "INT"},
    {"cpu", GEN_DOUBLE, "DOUBLE"},         {"ram", GEN_DOUBLE, "DOUBLE"},
    {"disk", GEN_DOUBLE, "DOUBLE"},        {"constraints", GEN_INT, "INT"},
};

static const char *const cm_options[] = {GEN_COMMON_OPTION_NAMES,
                                         "events.per-second",
                                         "cm.jobs",
                                         "cm.tasks",
                                         "cm.machines",
                                         NULL};

/* Event types by weight (out of 100): trace-like, dominated by scheduling,
 * finishing and running updates. */
static const uint8_t event_type_of[100] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 10% SUBMIT */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 30% SCHEDULE */
    2, 2,                                        /* 2% EVICT */
    3,                                           /* 1% FAIL */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 25% FINISH */
    5, 5,                         /* 2% KILL */
    6,                            /* 1% LOST */
    7, 7, 7, 7,                   /* 4% UPDATE_PENDING */
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
    8, 8, 8, 8, 8, 8, 8, 8, 8, 8, /* 25% UPDATE_RUNNING */
};

typedef struct cm_config {
  gen_options common;
  int64_t jobs, tasks, machines;
  gen_zipf jobs_zf;
} cm_config;

static int positive(const sl_table_def *t, const char *key, int64_t fallback,
                    int64_t *out, sl_error *err) {
  int rc = sl_option_int(t, key, fallback, out, err);
  if (rc == SL_OK && *out <= 0)
    return sl_error_set(err, SL_EINVAL, "table '%s': '%s' must be > 0", t->name,
                        key);
  return rc;
}

static int cm_parse(const sl_table_def *t, cm_config *c, sl_error *err) {
  int rc = gen_check_option_names(t, "cm", cm_options, NULL, err);
  if (rc == SL_OK)
    rc = gen_parse_common(t, 1000000, &c->common, err);
  if (rc == SL_OK)
    rc = positive(t, "cm.jobs", 10000, &c->jobs, err);
  if (rc == SL_OK)
    rc = positive(t, "cm.tasks", 100, &c->tasks, err);
  if (rc == SL_OK)
    rc = positive(t, "cm.machines", 12500, &c->machines, err);
  if (rc == SL_OK)
    gen_zipf_init(&c->jobs_zf, (uint64_t)c->jobs, 0.5);
  if (rc == SL_OK)
    rc = gen_check_pregenerate(t, &c->common, err);
  return rc;
}

static int cm_validate(const sl_table_def *t, sl_error *err) {
  cm_config c;
  int rc = cm_parse(t, &c, err);
  if (rc == SL_OK)
    rc = gen_check_columns(t, "cm", cm_columns, CM_NCOLS, err);
  return rc;
}

static void cm_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                    uint8_t *row) {
  const cm_config *c = g->impl;
  const sl_row_layout *l = g->layout;
  uint64_t key = gen_event_key(g->seed, i);
  (void)buf;
  /* The job decides the per-job columns; draw it only when needed. */
  int64_t job = -1;
  uint64_t jh = 0;
  for (int j = 0; j < l->nfields; j++) {
    int col = g->col[j];
    if (job < 0 && (col == CM_JOB || col == CM_USER || col == CM_CATEGORY ||
                    col == CM_PRIORITY || col == CM_CPU || col == CM_RAM)) {
      gen_rng r = gen_rng_at(key, CM_JOB);
      job = (int64_t)gen_zipf_sample(&c->jobs_zf, &r) - 1;
      /* Job ids look like the trace's: large, sparse numbers. */
      jh = gen_mix64((uint64_t)job + g->seed * 31);
    }
    const sl_field *f = &l->fields[j];
    uint64_t r = gen_rand(key, (uint32_t)col);
    switch (col) {
    case CM_TIMESTAMP:
      gen_put_ts(row, f, gen_time_of(&g->clock, i));
      break;
    case CM_JOB:
      gen_put_int(row, f, 6000000000 + job * 1000);
      break;
    case CM_TASK:
      gen_put_int(row, f, (int64_t)gen_below(r, (uint64_t)c->tasks));
      break;
    case CM_MACHINE:
      gen_put_int(row, f, (int64_t)gen_below(r, (uint64_t)c->machines));
      break;
    case CM_EVENT_TYPE:
      gen_put_int(row, f, event_type_of[gen_below(r, 100)]);
      break;
    case CM_USER:
      gen_put_int(row, f, (int64_t)gen_below(jh, 1000));
      break;
    case CM_CATEGORY:
      gen_put_int(row, f, (int64_t)((jh >> 10) & 3));
      break;
    case CM_PRIORITY:
      gen_put_int(row, f, (int64_t)gen_below(jh >> 12 | jh << 52, 12));
      break;
    case CM_CPU: {
      /* per-job level in [0.05, 0.45], noise +-0.05 */
      double level = 0.05 + 0.4 * gen_unit(gen_mix64(jh + 1));
      gen_put_double(row, f, level + 0.1 * (gen_unit(r) - 0.5));
      break;
    }
    case CM_RAM: {
      double level = 0.02 + 0.3 * gen_unit(gen_mix64(jh + 2));
      gen_put_double(row, f, level + 0.04 * (gen_unit(r) - 0.5));
      break;
    }
    case CM_DISK:
      gen_put_double(row, f, 0.1 * gen_unit(r) * gen_unit(r * 7 + 1));
      break;
    case CM_CONSTRAINTS:
      gen_put_int(row, f, gen_below(r, 10) == 0);
      break;
    }
  }
}

static int cm_open(const sl_source_spec *spec, sl_source **out, sl_error *err) {
  cm_config c;
  gen_source *g;
  int rc = cm_parse(spec->table, &c, err);
  if (rc == SL_OK)
    rc = gen_begin(&g, spec, "cm", cm_columns, CM_NCOLS, &c.common, err);
  if (rc != SL_OK)
    return rc;
  cm_config *impl = SL_ANEW(&g->arena, cm_config);
  *impl = c;
  g->impl = impl;
  g->fill = cm_fill;
  g->clock.per_second = c.common.per_second;
  g->max_heap = 0;
  rc = gen_ready(g, &c.common, err);
  *out = rc == SL_OK ? (sl_source *)g : NULL;
  return rc;
}

const sl_source_connector sl_source_cm = {
    .name = "cm",
    .description = "Cluster Monitoring: task events shaped like the Google "
                   "cluster trace",
    .validate = cm_validate,
    .open = cm_open,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
