/* statistics.c - sampling a source for the cost model (statistics.h).
 *
 * The sampler opens the table's connector the way a one-worker query
 * would (worker 0 of 1, only the leaves the expressions read), runs the
 * optional filter and the key / rowtime expressions through the
 * interpreter into a scratch buffer, and folds each value into a
 * HyperLogLog and a space-saving counter.  It stops at max_records, at the
 * end of a bounded source, or at the wall-clock budget: a paced generator
 * returns (possibly empty) buffers at least every 50 ms, so the budget is
 * honoured within that.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/connectors/connector.h"
#include "sluice/expr/interpreter.h"
#include "sluice/planner/statistics.h"
#include "sluice/row/value_text.h"

#include "plan_int.h"

#define DEFAULT_MAX_RECORDS 100000
#define DEFAULT_MAX_SECONDS 0.2
#define DEFAULT_TOP 10
#define DEFAULT_BUFFER (64 * 1024)
#define FIRST_CHECKPOINT 1024
#define MAX_CURVE 64

/* ---- expressions over the table's row ------------------------------------ */

/* Replace reads of computed columns by their expressions (which are over
 * the same row), so only physical leaves are read from the source. */
static int inline_computed(sl_arena *a, const sl_table_def *t,
                           sl_bexpr *const *computed, const sl_bexpr *e,
                           int depth, sl_bexpr **out, sl_error *err) {
  *out = (sl_bexpr *)e;
  if (!e)
    return SL_OK;
  if (depth > 64)
    return sl_error_set(err, SL_EINVAL, "computed columns nest too deeply");
  if (e->kind == SL_BEXPR_COLUMN && e->depth == 0) {
    if (e->index < 0 || e->index >= t->ncolumns)
      return sl_error_set(err, SL_EINVAL,
                          "statistics: column %d is not a column of table "
                          "'%s'",
                          e->index, t->name);
    if (!t->columns[e->index].computed_sql)
      return SL_OK;
    if (!computed || !computed[e->index])
      return sl_error_set(err, SL_EINVAL,
                          "statistics: '%s' of table '%s' is a computed "
                          "column; pass its bound expression",
                          t->columns[e->index].name, t->name);
    return inline_computed(a, t, computed, computed[e->index], depth + 1, out,
                           err);
  }
  if (e->nargs == 0)
    return SL_OK;
  sl_bexpr *c = SL_ANEW(a, sl_bexpr);
  *c = *e;
  c->args = SL_ANEW_N(a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++) {
    int rc =
        inline_computed(a, t, computed, e->args[i], depth, &c->args[i], err);
    if (rc != SL_OK)
      return rc;
  }
  *out = c;
  return SL_OK;
}

/* The leaves e reads: a COLUMN, or a FIELD chain over one, names a leaf
 * ("bid.auction"), as the interpreter resolves it. */
static void collect(const sl_table_def *t, const sl_leaf_columns *lc,
                    bool *need, const sl_bexpr *e, const char *const *names) {
  if (!e)
    return;
  char name[512];
  int c = sl_leaf_of(e, names, name, sizeof name);
  if (c >= 0) {
    if (c < t->ncolumns)
      sl_leaf_mark(lc, need, name);
    return;
  }
  for (int i = 0; i < e->nargs; i++)
    collect(t, lc, need, e->args[i], names);
}

static char *expr_text(sl_arena *a, const sl_bexpr *e) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_bexpr_format(&b, e);
  char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

/* ---- per-key accumulation ------------------------------------------------ */

typedef struct key_acc {
  sl_hll *hll;
  sl_hh *hh;
  uint64_t nonnull, nulls;
  uint64_t next_checkpoint;
  int ncurve;
  uint64_t curve_n[MAX_CURVE];
  double curve_d[MAX_CURVE];
} key_acc;

static void acc_init(sl_arena *a, key_acc *k, const sl_stats_options *o) {
  memset(k, 0, sizeof *k);
  k->hll = sl_hll_new(a, o->hll_p);
  k->hh = sl_hh_new(a, o->hh_k);
  k->next_checkpoint = FIRST_CHECKPOINT;
}

static void acc_add(key_acc *k, uint64_t h, const void *label, size_t len) {
  sl_hll_add_hash(k->hll, h);
  sl_hh_add(k->hh, h, label, len);
  if (++k->nonnull == k->next_checkpoint && k->ncurve < MAX_CURVE - 1) {
    k->curve_n[k->ncurve] = k->nonnull;
    k->curve_d[k->ncurve++] = sl_hll_estimate(k->hll);
    k->next_checkpoint *= 2;
  }
}

/* The hash of a non-NULL field; label and len: the bytes to show it by. */
static uint64_t field_hash(const uint8_t *row, const sl_field *f,
                           const void **label, size_t *len) {
  const uint8_t *p = row + f->offset;
  *label = p;
  *len = f->size;
  switch (f->ptype) {
  case SL_P_STR: {
    const sl_str *s = (const sl_str *)p;
    *label = sl_str_data(s);
    *len = s->len;
    return sl_stats_hash_bytes(sl_str_data(s), s->len);
  }
  case SL_P_F32:
  case SL_P_F64: {
    double d =
        f->ptype == SL_P_F32 ? (double)*(const float *)p : *(const double *)p;
    if (d == 0)
      d = 0; /* -0.0 and 0.0 are one value */
    if (isnan(d))
      d = NAN;
    int64_t bits;
    memcpy(&bits, &d, 8);
    return sl_stats_hash_i64(bits);
  }
  case SL_P_DEC128:
    return sl_stats_hash_bytes(p, 16);
  default:
    return sl_stats_hash_i64(sl_int_load(p, f->ptype));
  }
}

/* ---- declared distributions ---------------------------------------------- */

/* H(R, z) = sum_{k=1..R} k^-z: exact for the first terms, the rest by the
 * integral (Euler-Maclaurin to first order), which is accurate there. */
static double harmonic(double r, double z) {
  const double exact = 1e6;
  double h = 0;
  double upto = r < exact ? r : exact;
  for (double k = 1; k <= upto; k++)
    h += pow(k, -z);
  if (r > upto) {
    double a = upto + 0.5, b = r + 0.5;
    h += fabs(z - 1) < 1e-12 ? log(b / a)
                             : (pow(b, 1 - z) - pow(a, 1 - z)) / (1 - z);
  }
  return h;
}

/* The physical column a key reads, if it is a plain column (through
 * CASTs), else -1. */
static int plain_column(const sl_bexpr *e) {
  while (e && e->kind == SL_BEXPR_CAST)
    e = e->args[0];
  return e && e->kind == SL_BEXPR_COLUMN && e->depth == 0 ? e->index : -1;
}

static void declare_uniform(sl_key_stats *k, double range) {
  k->declared = true;
  k->declared_distinct = range;
  k->declared_distribution = "uniform";
  k->declared_top_share = range > 0 ? 1.0 / range : 0;
}

/* Fill the declared distribution of key e when the generator says it:
 * ro's `key` ('key.range', 'key.distribution', 'zipf.z'), datagen's integer
 * columns with 'fields.<c>.min' and 'max', or a sequence. */
static void declared_distribution(const sl_table_def *t, const char *conn,
                                  const sl_bexpr *e, sl_key_stats *k) {
  int c = plain_column(e);
  if (c < 0 || c >= t->ncolumns)
    return;
  const char *col = t->columns[c].name;
  sl_error err = {0};
  if (strcasecmp(conn, "ro") == 0 && strcasecmp(col, "key") == 0) {
    int64_t range = 100000000;
    double z = 1.0;
    if (sl_option_int(t, "key.range", range, &range, &err) != SL_OK ||
        sl_option_double(t, "zipf.z", z, &z, &err) != SL_OK || range <= 0) {
      sl_error_clear(&err);
      return;
    }
    const char *dist = sl_table_def_option(t, "key.distribution");
    if (dist && strcasecmp(dist, "zipf") == 0 && z > 0) {
      k->declared = true;
      k->declared_distinct = (double)range;
      k->declared_distribution = "zipf";
      k->declared_zipf_z = z;
      k->declared_top_share = 1.0 / harmonic((double)range, z);
    } else {
      declare_uniform(k, (double)range);
    }
    return;
  }
  if (strcasecmp(conn, "datagen") == 0 && t->columns[c].type &&
      sl_type_is_integer(t->columns[c].type)) {
    char key[256];
    snprintf(key, sizeof key, "fields.%s.kind", col);
    const char *kind = sl_table_def_option(t, key);
    const char *lo_key = "min", *hi_key = "max";
    if (kind && strcasecmp(kind, "sequence") == 0) {
      lo_key = "start";
      hi_key = "end";
    }
    int64_t lo, hi;
    char kl[256], kh[256];
    snprintf(kl, sizeof kl, "fields.%s.%s", col, lo_key);
    snprintf(kh, sizeof kh, "fields.%s.%s", col, hi_key);
    if (!sl_table_def_option(t, kl) || !sl_table_def_option(t, kh))
      return;
    if (sl_option_int(t, kl, 0, &lo, &err) != SL_OK ||
        sl_option_int(t, kh, 0, &hi, &err) != SL_OK || hi < lo) {
      sl_error_clear(&err);
      return;
    }
    declare_uniform(k, (double)hi - (double)lo + 1);
  }
}

/* ---- finishing a key's statistics ---------------------------------------- */

static double growth_exponent(const sl_key_stats *k) {
  if (k->ncurve == 0)
    return 1;
  uint64_t n = k->curve_n[k->ncurve - 1];
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (int i = 0; i < k->ncurve; i++) {
    if (k->curve_n[i] * 4 < n || k->curve_d[i] <= 0)
      continue;
    double x = log((double)k->curve_n[i]), y = log(k->curve_d[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    m++;
  }
  double b;
  if (m >= 2 && m * sxx - sx * sx > 1e-12)
    b = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  else if (n > 1 && k->curve_d[k->ncurve - 1] >= 1)
    b = log(k->curve_d[k->ncurve - 1]) / log((double)n); /* through (1, 1) */
  else
    b = 1;
  return b < 0 ? 0 : b > 1 ? 1 : b;
}

static void format_label(char *out, size_t cap, const sl_field *f,
                         const sl_hh_item *it) {
  if (!f) {
    snprintf(out, cap, "#%016llx", (unsigned long long)it->key);
    return;
  }
  if (f->ptype == SL_P_STR) {
    bool cut = it->label_len >= SL_HH_LABEL_MAX;
    snprintf(out, cap, "%.*s%s", (int)it->label_len, (const char *)it->label,
             cut ? "..." : "");
    return;
  }
  uint8_t raw[16] = {0};
  memcpy(raw, it->label, it->label_len < 16 ? it->label_len : 16);
  char text[SL_VALUE_TEXT_MAX];
  sl_value_format_scalar(text, f->type, f->ptype, raw);
  snprintf(out, cap, "%s", text);
}

static void finish_key(sl_arena *a, const key_acc *acc, const sl_field *f,
                       const sl_stats_options *o, sl_key_stats *k) {
  k->nonnull = acc->nonnull;
  k->nulls = acc->nulls;
  uint64_t all = acc->nonnull + acc->nulls;
  k->null_fraction = all ? (double)acc->nulls / (double)all : 0;
  k->hll = acc->hll;
  k->distinct = acc->nonnull ? sl_hll_estimate(acc->hll) : 0;
  k->distinct_stderr = sl_hll_std_error(sl_hll_p(acc->hll));

  int ncurve = acc->ncurve;
  uint64_t *cn = SL_ANEW_N(a, uint64_t, ncurve + 1);
  double *cd = SL_ANEW_N(a, double, ncurve + 1);
  memcpy(cn, acc->curve_n, sizeof(uint64_t) * (size_t)ncurve);
  memcpy(cd, acc->curve_d, sizeof(double) * (size_t)ncurve);
  if (acc->nonnull && (ncurve == 0 || cn[ncurve - 1] != acc->nonnull)) {
    cn[ncurve] = acc->nonnull;
    cd[ncurve++] = k->distinct;
  }
  k->ncurve = ncurve;
  k->curve_n = cn;
  k->curve_d = cd;
  k->growth_exponent = growth_exponent(k);

  sl_hh_item *top = SL_ANEW_N(a, sl_hh_item, o->hh_k);
  int n = sl_hh_top(acc->hh, top, o->top);
  k->items = SL_ANEW_N(a, sl_stats_item, n + 1);
  k->nitems = n;
  double total = (double)acc->nonnull;
  for (int i = 0; i < n; i++) {
    char label[SL_VALUE_TEXT_MAX + SL_HH_LABEL_MAX + 8];
    format_label(label, sizeof label, f, &top[i]);
    sl_stats_item *it = &k->items[i];
    it->value = sl_arena_strdup(a, label);
    it->count = top[i].count;
    it->share = total > 0 ? (double)(top[i].count - top[i].error) / total : 0;
    it->share_max = total > 0 ? (double)top[i].count / total : 0;
  }
  /* Skew from the guaranteed lower bounds: with uniform keys the counts of
   * space-saving sit near n/k but their lower bounds near 0.  Ranks
   * beyond the reported items are counted too. */
  sl_hh_item *best = SL_ANEW_N(a, sl_hh_item, o->hh_k);
  int nbest = sl_hh_top(acc->hh, best, 10);
  for (int i = 0; i < nbest; i++) {
    double s = total > 0 ? (double)(best[i].count - best[i].error) / total : 0;
    if (i == 0)
      k->top1_share = s;
    k->top10_share += s;
  }
  k->hh_error_share = o->hh_k > 0 ? 1.0 / o->hh_k : 1;
}

/* ---- the sampler --------------------------------------------------------- */

typedef struct sampler {
  sl_arena scratch; /* layouts, programs: freed at the end */
  const sl_source_connector *conn;
  sl_source *src;
  sl_buffer in, tmp;
  bool in_init, tmp_init;
  sl_expr_ctx *ctx;
  uint32_t *sel;
  uint32_t sel_cap;
  sl_source_spec spec; /* must outlive the source instance */
} sampler;

static void sampler_done(sampler *s) {
  if (s->src)
    s->conn->close(s->src);
  if (s->in_init)
    sl_buffer_free(&s->in);
  if (s->tmp_init)
    sl_buffer_free(&s->tmp);
  if (s->ctx)
    sl_expr_ctx_free(s->ctx);
  free(s->sel);
  sl_arena_free(&s->scratch);
}

/* Evaluate every program into the scratch buffer's fields 0..nprogs-1 for
 * the selected rows, growing the buffer's string heap when it is full. */
static int eval_all(sampler *s, sl_expr_prog *const *progs, int nprogs,
                    uint32_t nsel, sl_error *err) {
  for (;;) {
    sl_buffer_clear(&s->tmp);
    bool room = true;
    for (uint32_t r = 0; r < nsel && room; r++)
      room = sl_buffer_append(&s->tmp) != NULL;
    int rc = room ? SL_OK : SL_EXPR_HEAP_FULL;
    for (int j = 0; j < nprogs && rc == SL_OK; j++)
      if (progs[j])
        rc = sl_expr_eval_into(progs[j], &s->in, s->sel, nsel, &s->tmp, 0, j,
                               s->ctx, err);
    if (rc != SL_EXPR_HEAP_FULL)
      return rc;
    if (s->tmp.cap >= (1u << 30))
      return sl_error_set(err, SL_EINVAL,
                          "statistics: key values too long to sample");
    uint32_t cap = s->tmp.cap * 2;
    const sl_row_layout *l = s->tmp.layout;
    sl_buffer_free(&s->tmp);
    sl_buffer_init(&s->tmp, l, cap);
  }
}

static void set_defaults(sl_stats_options *o, const sl_stats_options *in) {
  if (in)
    *o = *in;
  else
    memset(o, 0, sizeof *o);
  if (o->max_records == 0)
    o->max_records = DEFAULT_MAX_RECORDS;
  if (!(o->max_seconds > 0))
    o->max_seconds = DEFAULT_MAX_SECONDS;
  if (o->hll_p == 0)
    o->hll_p = SL_HLL_DEFAULT_P;
  if (o->hh_k == 0)
    o->hh_k = SL_HH_DEFAULT_K;
  if (o->top <= 0)
    o->top = DEFAULT_TOP;
  if (o->buffer_size == 0)
    o->buffer_size = DEFAULT_BUFFER;
}

static int check_options(const sl_stats_options *o, sl_error *err) {
  if (o->hll_p < SL_HLL_MIN_P || o->hll_p > SL_HLL_MAX_P)
    return sl_error_set(err, SL_EINVAL,
                        "statistics: HyperLogLog precision must be %d..%d, "
                        "not %d",
                        SL_HLL_MIN_P, SL_HLL_MAX_P, o->hll_p);
  if (o->hh_k < 1 || o->hh_k > SL_HH_MAX_K)
    return sl_error_set(err, SL_EINVAL,
                        "statistics: heavy-hitter counters must be 1..%d, "
                        "not %d",
                        SL_HH_MAX_K, o->hh_k);
  if (o->top > o->hh_k)
    return sl_error_set(err, SL_EINVAL,
                        "statistics: cannot report %d heavy hitters with %d "
                        "counters",
                        o->top, o->hh_k);
  if (o->buffer_size < 1024)
    return sl_error_set(err, SL_EINVAL,
                        "statistics: buffer size %u is below 1024 bytes",
                        o->buffer_size);
  return SL_OK;
}

static const sl_source_connector *
find_connector(const sl_table_def *t, const char **name, sl_error *err) {
  const char *c = sl_table_def_option(t, "connector");
  if (!c)
    c = sl_table_def_option(t, "connector.type");
  *name = c ? c : "";
  const sl_source_connector *conn = c ? sl_source_connector_find(c) : NULL;
  if (!conn || t->kind != SL_TABLE_CONNECTOR)
    sl_error_set(err, SL_EUNSUPPORTED,
                 "statistics: table '%s' has no readable source (connector "
                 "'%s'; sources are: %s)",
                 t->name, c ? c : "(none)", sl_source_connector_names());
  return conn;
}

/* One record's keys, from row r of the scratch buffer. */
static void add_record(sl_table_stats *st, key_acc *accs, key_acc *comb,
                       const sl_row_layout *tl, const uint8_t *row,
                       int rowtime_field) {
  uint64_t ch = 0x6a09e667f3bcc909ULL;
  for (int j = 0; j < st->nkeys; j++) {
    uint64_t h;
    if (sl_row_is_null(row, j)) {
      accs[j].nulls++;
      h = 0x9b05688c2b3e6c1fULL; /* NULL is one group for the composite */
    } else {
      const void *label;
      size_t len;
      h = field_hash(row, &tl->fields[j], &label, &len);
      acc_add(&accs[j], h, label, len);
    }
    ch = sl_mix64(ch * 31 + h);
  }
  if (comb)
    acc_add(comb, ch, NULL, 0);
  if (rowtime_field >= 0 && !sl_row_is_null(row, rowtime_field)) {
    int64_t ts = SL_FIELD(row, tl, rowtime_field, int64_t);
    if (!st->has_event_rate) {
      st->min_ts = st->max_ts = ts;
      st->has_event_rate = true; /* provisional: at least one timestamp */
    } else if (ts < st->min_ts) {
      st->min_ts = ts;
    } else if (ts > st->max_ts) {
      st->max_ts = ts;
    }
  }
}

/* Conjunct e as a filter the source applies itself (`col = n` or `col IN
 * (n, ...)` over an integer column it can filter), as the plan's pushdown
 * makes (rewrite.c): NEXMark's `event_type = 0` then makes only persons,
 * where without it the sample made every event to keep one in fifty. */
static bool sample_source_filter(const sl_source_connector *conn,
                                 const sl_table_def *t,
                                 const sl_leaf_columns *lc, const sl_bexpr *e,
                                 sl_source_filter *f) {
  const sl_bexpr *col = sl_pl_int_filter(e, f);
  return col && col->index >= 0 && col->index < t->ncolumns &&
         !t->columns[col->index].computed_sql &&
         sl_pl_filter_leaf(conn, t, lc, t->columns[col->index].name, f);
}

/* Open the source and compile the programs: everything before the loop. */
static int prepare(sampler *s, const sl_table_def *t, int nkeys,
                   const sl_bexpr *const *keys, const sl_bexpr *rowtime,
                   const sl_stats_options *o, sl_expr_prog **progs,
                   sl_expr_prog **filter, sl_row_layout **tmp_layout,
                   sl_table_stats *st, sl_error *err) {
  sl_arena *sa = &s->scratch;
  const char *cname;
  s->conn = find_connector(t, &cname, err);
  if (!s->conn)
    return err->code;
  int nprogs = nkeys + (rowtime ? 1 : 0);
  const sl_bexpr **exprs = SL_ANEW_N(sa, const sl_bexpr *, nprogs + 2);
  sl_bexpr *fexpr = NULL;
  int rc = inline_computed(sa, t, o->computed, o->filter, 0, &fexpr, err);
  for (int j = 0; j < nprogs && rc == SL_OK; j++) {
    const sl_bexpr *e = j < nkeys ? keys[j] : rowtime;
    if (!e)
      return sl_error_set(err, SL_EINVAL, "statistics: key %d is NULL", j);
    sl_bexpr *x;
    rc = inline_computed(sa, t, o->computed, e, 0, &x, err);
    exprs[j] = x;
  }
  if (rc != SL_OK)
    return rc;

  /* The leaves to read, and the layout the source fills. */
  sl_leaf_columns lc;
  sl_table_leaf_columns(sa, t, &lc);
  if (lc.n == 0)
    return sl_error_set(err, SL_EINVAL, "statistics: table '%s' has no columns",
                        t->name);
  bool *need = SL_ANEW_N(sa, bool, lc.n);
  const char **colnames = SL_ANEW_N(sa, const char *, t->ncolumns + 1);
  for (int c = 0; c < t->ncolumns; c++)
    colnames[c] = t->columns[c].name;
  for (int j = 0; j < nprogs; j++)
    collect(t, &lc, need, exprs[j], colnames);
  collect(t, &lc, need, fexpr, colnames);
  int nused = 0;
  for (int i = 0; i < lc.n; i++)
    nused += need[i];
  if (nused == 0) { /* COUNT(*)-like: read the narrowest thing there is */
    need[0] = true;
    nused = 1;
  }
  int *leaf_index = SL_ANEW_N(sa, int, nused);
  const char **names = SL_ANEW_N(sa, const char *, nused);
  const sl_type **types = SL_ANEW_N(sa, const sl_type *, nused);
  for (int i = 0, k = 0; i < lc.n; i++)
    if (need[i]) {
      leaf_index[k] = i;
      names[k] = lc.names[i];
      types[k++] = lc.types[i];
    }
  sl_row_layout *layout = sl_row_layout_new(sa, nused, names, types);
  st->record_width = layout->width;
  st->full_width = sl_row_layout_new(sa, lc.n, lc.names, lc.types)->width;

  /* Bound column i -> layout field (ROW columns: -1, read by FIELD). */
  int *map = SL_ANEW_N(sa, int, t->ncolumns + 1);
  for (int c = 0; c < t->ncolumns; c++) {
    map[c] = -1;
    for (int f = 0; f < layout->nfields; f++)
      if (strcmp(layout->fields[f].name, t->columns[c].name) == 0)
        map[c] = f;
  }
  if (fexpr)
    rc = sl_expr_compile(sa, fexpr, layout, map, filter, err);
  const sl_type **ktypes = SL_ANEW_N(sa, const sl_type *, nprogs + 1);
  for (int j = 0; j < nprogs && rc == SL_OK; j++) {
    rc = sl_expr_compile(sa, exprs[j], layout, map, &progs[j], err);
    if (rc == SL_OK)
      ktypes[j] = sl_expr_type(progs[j]);
  }
  if (rc != SL_OK)
    return rc;
  if (rowtime && sl_ptype_of(ktypes[nkeys]) != SL_P_TS)
    return sl_error_set(err, SL_EINVAL,
                        "statistics: the rowtime expression must be a "
                        "TIMESTAMP");
  *tmp_layout = sl_row_layout_new(sa, nprogs, NULL, ktypes);

  /* The filter's pushable conjuncts go to the source too; the whole
   * filter is still applied below. */
  sl_pl_parts parts = {0};
  sl_source_filter *filters = NULL;
  int nfilters = 0;
  if (fexpr) {
    sl_pl_conjuncts(sa, fexpr, &parts);
    filters = SL_ANEW_N(sa, sl_source_filter, parts.n + 1);
    for (int i = 0; i < parts.n; i++)
      if (sample_source_filter(s->conn, t, &lc, parts.v[i], &filters[nfilters]))
        nfilters++;
  }
  sl_source_spec spec0 = {t,        layout,  leaf_index, 0,   1,
                          nfilters, filters, true,       NULL};
  s->spec = spec0;
  rc = s->conn->open(&s->spec, &s->src, err);
  if (rc != SL_OK) {
    s->src = NULL;
    return rc;
  }
  sl_buffer_init(&s->in, layout, o->buffer_size);
  s->in_init = true;
  sl_buffer_init(&s->tmp, *tmp_layout,
                 o->buffer_size * 2 + (*tmp_layout)->width * 4096);
  s->tmp_init = true;
  s->ctx = sl_expr_ctx_new();
  return SL_OK;
}

int sl_stats_sample(sl_arena *a, const sl_table_def *t, int nkeys,
                    const sl_bexpr *const *keys, const sl_bexpr *rowtime,
                    const sl_stats_options *opt, sl_table_stats **out,
                    sl_error *err) {
  *out = NULL;
  sl_stats_options o;
  set_defaults(&o, opt);
  int rc = check_options(&o, err);
  if (rc != SL_OK)
    return rc;
  if (nkeys < 0 || (nkeys > 0 && !keys))
    return sl_error_set(err, SL_EINVAL, "statistics: bad key list");

  sl_table_stats *st = SL_ANEW(a, sl_table_stats);
  st->table = sl_arena_strdup(a, t->name);
  st->nkeys = nkeys;
  st->keys = SL_ANEW_N(a, sl_key_stats, nkeys + 1);

  sampler s;
  memset(&s, 0, sizeof s);
  sl_arena_init(&s.scratch, 0);
  int nprogs = nkeys + (rowtime ? 1 : 0);
  sl_expr_prog **progs = SL_ANEW_N(&s.scratch, sl_expr_prog *, nprogs + 1);
  sl_expr_prog *filter = NULL;
  sl_row_layout *tl = NULL;
  rc = prepare(&s, t, nkeys, keys, rowtime, &o, progs, &filter, &tl, st, err);
  if (rc != SL_OK) {
    sampler_done(&s);
    return rc;
  }

  key_acc *accs = SL_ANEW_N(&s.scratch, key_acc, nkeys + 1);
  for (int j = 0; j < nkeys; j++)
    acc_init(a, &accs[j], &o);
  key_acc *comb = NULL;
  if (nkeys >= 2) {
    comb = SL_ANEW(&s.scratch, key_acc);
    acc_init(a, comb, &o);
  }

  double t0 = sl_clock_seconds();
  bool done = false, cut = false;
  while (rc == SL_OK && !done && st->records < o.max_records) {
    if (sl_cancel_current_pending()) { /* Ctrl-C, .timeout */
      rc = sl_error_set(err, SL_ECANCELLED, "query cancelled");
      break;
    }
    if (sl_clock_seconds() - t0 >= o.max_seconds) {
      st->stopped_by_time = true;
      break;
    }
    sl_buffer_clear(&s.in);
    rc = s.conn->next(s.src, &s.in, &done, err);
    if (rc != SL_OK || s.in.nrows == 0)
      continue;
    uint32_t n = s.in.nrows;
    st->records_read += n;
    if (n > s.sel_cap) {
      free(s.sel);
      s.sel_cap = n;
      s.sel = malloc(sizeof(uint32_t) * n);
      if (!s.sel) {
        rc = sl_error_set(err, SL_ENOMEM, "statistics: out of memory");
        break;
      }
    }
    uint32_t nsel = n;
    for (uint32_t i = 0; i < n; i++)
      s.sel[i] = i;
    if (filter)
      rc = sl_expr_filter(filter, &s.in, s.sel, &nsel, s.ctx, err);
    if (rc != SL_OK)
      break;
    if (nsel > o.max_records - st->records) {
      nsel = (uint32_t)(o.max_records - st->records);
      cut = true;
    }
    if (nsel == 0)
      continue;
    rc = eval_all(&s, progs, nprogs, nsel, err);
    for (uint32_t r = 0; r < nsel && rc == SL_OK; r++)
      add_record(st, accs, comb, tl, sl_buffer_row(&s.tmp, r),
                 rowtime ? nkeys : -1);
    st->records += nsel;
  }
  st->seconds = sl_clock_seconds() - t0;
  /* Ended only if the last read reported the end and nothing was cut off
   * by max_records. */
  st->source_ended = rc == SL_OK && done && !cut;
  if (rc != SL_OK) {
    sampler_done(&s);
    return rc;
  }

  st->wall_rate = st->seconds > 0 ? (double)st->records_read / st->seconds : 0;
  if (st->has_event_rate && st->max_ts > st->min_ts && st->records >= 2)
    st->event_rate =
        (double)(st->records - 1) / ((double)(st->max_ts - st->min_ts) * 1e-6);
  else
    st->has_event_rate = false;

  const char *cname = sl_table_def_option(t, "connector");
  if (!cname)
    cname = sl_table_def_option(t, "connector.type");
  for (int j = 0; j < nkeys; j++) {
    sl_key_stats *k = &st->keys[j];
    finish_key(a, &accs[j], &tl->fields[j], &o, k);
    k->expr = expr_text(a, keys[j]);
    k->source_ended = st->source_ended;
    declared_distribution(t, cname ? cname : "", keys[j], k);
  }
  if (comb) {
    st->combined = SL_ANEW(a, sl_key_stats);
    finish_key(a, comb, NULL, &o, st->combined);
    sl_strbuf b = SL_STRBUF_INIT;
    for (int j = 0; j < nkeys; j++)
      sl_strbuf_printf(&b, "%s%s", j ? ", " : "(", st->keys[j].expr);
    sl_strbuf_append(&b, ")");
    st->combined->expr = sl_arena_strdup(a, sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
    st->combined->source_ended = st->source_ended;
  }
  sampler_done(&s); /* after finish_key: accs and the layout live there */
  *out = st;
  return SL_OK;
}

/* ---- extrapolation ------------------------------------------------------- */

static double distinct_uncapped(const sl_key_stats *k, double n_records);

double sl_key_stats_distinct_for(const sl_key_stats *k, double n_records) {
  double d = distinct_uncapped(k, n_records);
  return k->max_distinct > 0 && d > k->max_distinct ? k->max_distinct : d;
}

static double distinct_uncapped(const sl_key_stats *k, double n_records) {
  double n = n_records * (1 - k->null_fraction);
  if (!(n > 0) || k->ncurve == 0)
    return 0;
  double nmax = (double)k->curve_n[k->ncurve - 1];
  double dmax = k->curve_d[k->ncurve - 1];
  double d;
  if (n <= nmax) {
    /* On the measured curve: log-log interpolation between checkpoints,
     * from (1, 1) below the first one. */
    double x0 = 1, y0 = 1;
    int i = 0;
    while (i < k->ncurve && (double)k->curve_n[i] < n) {
      x0 = (double)k->curve_n[i];
      y0 = k->curve_d[i] > 1 ? k->curve_d[i] : 1;
      i++;
    }
    double x1 = (double)k->curve_n[i],
           y1 = k->curve_d[i] > 1 ? k->curve_d[i] : 1;
    if (x1 <= x0)
      d = y1;
    else
      d = exp(log(y0) +
              (log(y1) - log(y0)) * (log(n) - log(x0)) / (log(x1) - log(x0)));
  } else if (k->source_ended) {
    d = dmax; /* the sample was the whole input */
  } else if (k->declared && k->declared_distribution &&
             strcmp(k->declared_distribution, "uniform") == 0 &&
             k->declared_distinct > 0) {
    /* n uniform draws from R values: R * (1 - (1 - 1/R)^n). */
    double r = k->declared_distinct;
    d = -r * expm1(n * log1p(-1.0 / r));
  } else {
    d = dmax * pow(n / nmax, k->growth_exponent);
  }
  if (d > n)
    d = n;
  if (k->declared && k->declared_distinct > 0 && d > k->declared_distinct)
    d = k->declared_distinct;
  return d;
}

/* ---- display ------------------------------------------------------------- */

static void format_key(sl_strbuf *b, const sl_key_stats *k) {
  sl_strbuf_printf(b, "  key %s: ~%.0f distinct in sample (+-%.1f%%)", k->expr,
                   k->distinct, 100 * k->distinct_stderr);
  if (k->nulls)
    sl_strbuf_printf(b, ", %.1f%% NULL", 100 * k->null_fraction);
  sl_strbuf_printf(b, ", top 1 %.1f%%, top 10 %.1f%%, growth n^%.2f",
                   100 * k->top1_share, 100 * k->top10_share,
                   k->growth_exponent);
  if (k->declared) {
    sl_strbuf_printf(b, ", declared %s over %.0f", k->declared_distribution,
                     k->declared_distinct);
    if (k->declared_zipf_z > 0)
      sl_strbuf_printf(b, " (z = %g)", k->declared_zipf_z);
  }
  sl_strbuf_append(b, "\n");
  int shown = 0;
  for (int i = 0; i < k->nitems && shown < 3; i++) {
    if (k->items[i].share < 0.01)
      break;
    sl_strbuf_printf(b, "%s%s %.1f%%",
                     shown ? ", " : "    heavy: ", k->items[i].value,
                     100 * k->items[i].share);
    shown++;
  }
  if (shown)
    sl_strbuf_append(b, "\n");
}

void sl_table_stats_format(sl_strbuf *b, const sl_table_stats *s) {
  sl_strbuf_printf(b,
                   "table %s: %llu records sampled (%llu read) in %.3f s%s%s, "
                   "%u bytes/record (%u all columns)",
                   s->table, (unsigned long long)s->records,
                   (unsigned long long)s->records_read, s->seconds,
                   s->source_ended ? ", source ended" : "",
                   s->stopped_by_time ? ", stopped by time" : "",
                   s->record_width, s->full_width);
  if (s->has_event_rate)
    sl_strbuf_printf(b, ", %.0f events/s of event time", s->event_rate);
  sl_strbuf_append(b, "\n");
  for (int j = 0; j < s->nkeys; j++)
    format_key(b, &s->keys[j]);
  if (s->combined)
    format_key(b, s->combined);
}
