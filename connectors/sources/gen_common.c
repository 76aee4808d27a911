/* gen_common.c - the machinery shared by the event generators: zipf
 * sampling, typed stores, option and column checks, and the source driver
 * (worker split, wall-clock pacing, pre-generation, statistics).
 * See gen_common.h for the determinism and event-time rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#include "gen_common.h"
#include "sluice/common/clock.h"
#include "sluice/common/strbuf.h"

/* ---- zipf by rejection-inversion ----------------------------------------- */

/* log1p(x)/x and expm1(x)/x, accurate near 0. */
static double helper1(double x) {
  if (fabs(x) > 1e-8)
    return log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
static double helper2(double x) {
  if (fabs(x) > 1e-8)
    return expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

/* h(x) = x^-z, H is an integral of h, Hinv its inverse. */
static double zipf_h(const gen_zipf *zf, double x) {
  return exp(-zf->z * log(x));
}
static double zipf_H(const gen_zipf *zf, double x) {
  double lx = log(x);
  return helper2((1.0 - zf->z) * lx) * lx;
}
static double zipf_Hinv(const gen_zipf *zf, double x) {
  double t = x * (1.0 - zf->z);
  if (t < -1.0)
    t = -1.0; /* rounding guard */
  return exp(helper1(t) * x);
}

void gen_zipf_init(gen_zipf *zf, uint64_t n, double z) {
  zf->n = (double)n;
  zf->z = z;
  zf->h_x1 = zipf_H(zf, 1.5) - 1.0;
  zf->h_n = zipf_H(zf, zf->n + 0.5);
  zf->s = 2.0 - zipf_Hinv(zf, zipf_H(zf, 2.5) - zipf_h(zf, 2.0));
}

uint64_t gen_zipf_sample(const gen_zipf *zf, gen_rng *r) {
  for (;;) {
    double u = zf->h_n + gen_unit(gen_rng_next(r)) * (zf->h_x1 - zf->h_n);
    double x = zipf_Hinv(zf, u);
    double k = floor(x + 0.5);
    if (k < 1.0)
      k = 1.0;
    else if (k > zf->n)
      k = zf->n;
    /* Most draws are accepted by the cheap squeeze test. */
    if (k - x <= zf->s || u >= zipf_H(zf, k + 0.5) - zipf_h(zf, k))
      return (uint64_t)k;
  }
}

/* ---- typed stores ----------------------------------------------------- */

bool gen_type_fits(gen_class cls, const sl_type *t) {
  if (t->kind == SL_TYPE_ROW || t->kind == SL_TYPE_NULL)
    return false;
  sl_ptype p = sl_ptype_of(t);
  switch (cls) {
  case GEN_INT:
    return p == SL_P_I8 || p == SL_P_I16 || p == SL_P_I32 || p == SL_P_I64 ||
           p == SL_P_F32 || p == SL_P_F64 || p == SL_P_DEC64 ||
           p == SL_P_DEC128;
  case GEN_DOUBLE:
    return p == SL_P_F32 || p == SL_P_F64 || p == SL_P_DEC64 ||
           p == SL_P_DEC128;
  case GEN_STR:
    return p == SL_P_STR;
  case GEN_TS:
    return p == SL_P_TS;
  case GEN_ANY:
    return true;
  }
  return false;
}

void gen_put_int(uint8_t *row, const sl_field *f, int64_t v) {
  uint8_t *p = row + f->offset;
  switch (f->ptype) {
  case SL_P_BOOL:
  case SL_P_I8:
  case SL_P_I16:
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
  case SL_P_I64:
  case SL_P_TS:
  case SL_P_IV_DT:
    sl_int_store(p, f->ptype, v);
    break;
  case SL_P_F32:
    *(float *)p = (float)v;
    break;
  case SL_P_F64:
    *(double *)p = (double)v;
    break;
  case SL_P_DEC64: {
    int s = f->type->scale;
    *(int64_t *)p = v * (s >= 0 && s <= 18 ? sl_pow10_i64[s] : 1);
    break;
  }
  case SL_P_DEC128: {
    __int128 x = v;
    for (int s = 0; s < f->type->scale; s++)
      x *= 10;
    memcpy(p, &x, sizeof x);
    break;
  }
  case SL_P_STR:
    break; /* not an integer column: gen_type_fits keeps us out */
  }
}

void gen_put_double(uint8_t *row, const sl_field *f, double v) {
  uint8_t *p = row + f->offset;
  switch (f->ptype) {
  case SL_P_F32:
    *(float *)p = (float)v;
    break;
  case SL_P_F64:
    *(double *)p = v;
    break;
  case SL_P_DEC64: {
    int s = f->type->scale;
    *(int64_t *)p =
        llround(v * (double)(s >= 0 && s <= 18 ? sl_pow10_i64[s] : 1));
    break;
  }
  case SL_P_DEC128: {
    double scaled = v;
    for (int s = 0; s < f->type->scale; s++)
      scaled *= 10.0;
    __int128 x = (__int128)llround(scaled);
    memcpy(p, &x, sizeof x);
    break;
  }
  default:
    gen_put_int(row, f, (int64_t)v);
    break;
  }
}

void gen_put_ts(uint8_t *row, const sl_field *f, int64_t us) {
  int prec = f->type->precision;
  if (prec >= 0 && prec < 6) {
    int64_t unit = sl_pow10_i64[6 - prec];
    /* floor, also for times before 1970 */
    int64_t q = us / unit;
    if (us % unit < 0)
      q--;
    us = q * unit;
  }
  *(int64_t *)(row + f->offset) = us;
}

int gen_utoa(char *out, uint64_t v) {
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  return n;
}

/* ---- options ------------------------------------------------------------- */

int gen_check_option_names(const sl_table_def *t, const char *connector,
                           const char *const *known,
                           bool (*extra)(const char *key), sl_error *err) {
  for (int i = 0; i < t->noptions; i++) {
    const char *key = t->options[i].key;
    bool ok = extra && extra(key);
    for (int k = 0; !ok && known[k]; k++)
      ok = strcmp(known[k], key) == 0;
    if (ok)
      continue;
    sl_strbuf b = SL_STRBUF_INIT;
    for (int k = 0; known[k]; k++)
      sl_strbuf_printf(&b, "%s'%s'", k ? ", " : "", known[k]);
    sl_error_set(err, SL_EINVAL,
                 "table '%s': unsupported option '%s' for the '%s' connector; "
                 "supported options: %s",
                 t->name, key, connector, sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
    return SL_EINVAL;
  }
  return SL_OK;
}

int gen_parse_common(const sl_table_def *t, int64_t default_eps, gen_options *o,
                     sl_error *err) {
  int64_t seed, num, eps = 0;
  double rate;
  bool pregen;
  int rc;
  if ((rc = sl_option_int(t, "seed", 0, &seed, err)) ||
      (rc = sl_option_int(t, "events.num", 0, &num, err)) ||
      (rc = sl_option_double(t, "events.rate", 0, &rate, err)) ||
      (rc = sl_option_bool(t, "pregenerate", false, &pregen, err)))
    return rc;
  if (default_eps > 0 &&
      (rc = sl_option_int(t, "events.per-second", default_eps, &eps, err)))
    return rc;
  if (num < 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'events.num' must be >= 0 (0 or absent: "
                        "unbounded), not %lld",
                        t->name, (long long)num);
  if (!(rate >= 0) || isinf(rate))
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'events.rate' must be a finite number >= "
                        "0 (0: as fast as possible)",
                        t->name);
  if (default_eps > 0 && eps <= 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'events.per-second' must be > 0, not %lld",
                        t->name, (long long)eps);
  o->seed = (uint64_t)seed;
  o->num = num > 0 ? (uint64_t)num : UINT64_MAX;
  o->rate = rate;
  o->pregenerate = pregen;
  o->per_second = eps;
  return SL_OK;
}

int gen_check_pregenerate(const sl_table_def *t, const gen_options *o,
                          sl_error *err) {
  if (o->pregenerate && o->num == UINT64_MAX)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'pregenerate' needs a bounded run: set "
                        "'events.num'",
                        t->name);
  return SL_OK;
}

static void list_columns(sl_strbuf *b, const gen_column *cols, int n) {
  for (int k = 0; k < n; k++)
    sl_strbuf_printf(b, "%s%s %s", k ? ", " : "", cols[k].name, cols[k].sql);
}

static int find_column(const gen_column *cols, int n, const char *name) {
  for (int k = 0; k < n; k++)
    if (strcmp(cols[k].name, name) == 0)
      return k;
  for (int k = 0; k < n; k++)
    if (strcasecmp(cols[k].name, name) == 0)
      return k;
  return -1;
}

/* The error for leaf `name` of type `type` (k < 0: unknown name). */
static int column_error(const sl_table_def *t, const char *connector,
                        const gen_column *cols, int n, const char *name,
                        const sl_type *type, int k, sl_error *err) {
  sl_strbuf b = SL_STRBUF_INIT;
  list_columns(&b, cols, n);
  if (k < 0) {
    sl_error_set(err, SL_EINVAL,
                 "table '%s': column '%s' is not produced by the '%s' "
                 "connector; its columns are: %s",
                 t->name, name, connector, sl_strbuf_cstr(&b));
  } else {
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_error_set(err, SL_EINVAL,
                 "table '%s': column '%s' is declared %s, but the '%s' "
                 "connector produces %s values for it",
                 t->name, name, sl_type_name(&a, type), connector, cols[k].sql);
    sl_arena_free(&a);
  }
  sl_strbuf_free(&b);
  return SL_EINVAL;
}

int gen_check_columns(const sl_table_def *t, const char *connector,
                      const gen_column *cols, int n, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns leaves;
  sl_table_leaf_columns(&a, t, &leaves);
  int rc = SL_OK;
  for (int i = 0; i < leaves.n && rc == SL_OK; i++) {
    int k = find_column(cols, n, leaves.names[i]);
    if (k < 0 || !gen_type_fits(cols[k].cls, leaves.types[i]))
      rc = column_error(t, connector, cols, n, leaves.names[i], leaves.types[i],
                        k, err);
  }
  sl_arena_free(&a);
  return rc;
}

/* ---- the driver ------------------------------------------------------------
 */

int gen_begin(gen_source **out, const sl_source_spec *spec,
              const char *connector, const gen_column *cols, int ncols,
              const gen_options *o, sl_error *err) {
  *out = NULL;
  if (spec->nworkers < 1 || spec->worker < 0 || spec->worker >= spec->nworkers)
    return sl_error_set(err, SL_EINTERNAL,
                        "'%s' source opened as worker %d of %d", connector,
                        spec->worker, spec->nworkers);
  gen_source *g = calloc(1, sizeof *g);
  if (!g)
    return sl_error_set(err, SL_ENOMEM, "out of memory");
  sl_arena_init(&g->arena, 0);
  const sl_row_layout *l = spec->layout;
  g->layout = l;
  g->col = SL_ANEW_N(&g->arena, int, l->nfields > 0 ? l->nfields : 1);

  sl_leaf_columns leaves;
  sl_table_leaf_columns(&g->arena, spec->table, &leaves);
  for (int j = 0; j < l->nfields; j++) {
    int leaf = spec->leaf_index[j];
    if (leaf < 0 || leaf >= leaves.n) {
      sl_error_set(err, SL_EINTERNAL, "'%s' source: leaf %d out of range",
                   connector, leaf);
      gen_close((sl_source *)g);
      return SL_EINTERNAL;
    }
    int k = find_column(cols, ncols, leaves.names[leaf]);
    if (spec->as_code && spec->as_code[j]) {
      /* the planner asks for codes only of leaves the generator gave a
       * dictionary for: a string column, read into an INT field */
      if (k < 0 || cols[k].cls != GEN_STR || l->fields[j].ptype != SL_P_I32) {
        sl_error_set(err, SL_EINTERNAL,
                     "'%s' source: leaf '%s' asked for as a code", connector,
                     leaves.names[leaf]);
        gen_close((sl_source *)g);
        return SL_EINTERNAL;
      }
      g->col[j] = k | GEN_CODE;
      continue;
    }
    if (k < 0 || !gen_type_fits(cols[k].cls, l->fields[j].type)) {
      int rc = column_error(spec->table, connector, cols, ncols,
                            leaves.names[leaf], l->fields[j].type, k, err);
      gen_close((sl_source *)g);
      return rc;
    }
    g->col[j] = k;
  }
  g->seed = o->seed;
  g->sample = spec->sample;
  g->next = (uint64_t)spec->worker * GEN_BLOCK;
  g->end = o->num;
  g->step = (uint32_t)spec->nworkers;
  g->rate = o->rate / spec->nworkers;
  g->clock.base_us = GEN_BASE_TIME_US;
  g->clock.per_second = o->per_second > 0 ? o->per_second : 1000000;
  *out = g;
  return SL_OK;
}

/* This instance's next event: the next of its block, else the first of
 * its next block.  Past the largest event number, none. */
static void next_event(gen_source *g) {
  uint64_t was = g->next++;
  if (g->next % GEN_BLOCK == 0)
    g->next += (uint64_t)(g->step - 1) * GEN_BLOCK;
  if (g->next < was) /* wrapped around: nothing more to give */
    g->end = 0;
}

/* Generate events of this instance into buf until it is full, the run
 * ends, or `most` events (kept or skipped) were produced. */
static void produce(gen_source *g, sl_buffer *buf, uint64_t most) {
  /* Skipped events still take their place in the sequence (and in
   * pacing); a call returns after this many, so that a filter nothing
   * passes does not keep the worker from noticing a cancel. */
  uint32_t skipped = 0;
  for (uint64_t k = 0;
       k < most && g->next < g->end && sl_buffer_has_room(buf, g->max_heap) &&
       skipped < 1u << 16;
       k++) {
    bool keep = !g->keep || g->keep(g, g->next);
    if (!keep && g->carry_every && ++g->skip_run >= g->carry_every)
      keep = true; /* a time carrier */
    if (keep) {
      uint8_t *row = sl_buffer_append(buf);
      g->fill(g, g->next, buf, row);
      g->skip_run = 0;
    } else {
      skipped++;
    }
    next_event(g);
    g->emitted++;
  }
}

#define GEN_CHUNK_BYTES (64u * 1024u)
/* Chunks per slab: 4 MiB slabs, above malloc's mmap threshold, so each is
 * mapped on its own.  (Chunks malloc'd one by one from the workers' thread
 * arenas measured 10-15% more resident memory than the input's bytes.) */
#define GEN_SLAB_CHUNKS 64u
/* Slabs start on a huge-page boundary and ask for transparent huge pages:
 * a scan of hundreds of MiB then misses the TLB 512 times less often, and
 * filling and releasing the input maps 2 MiB pages instead of 4 KiB ones
 * (releasing 860 MiB of 4 KiB pages was a tenth of NEXMark q7's run). */
#define GEN_SLAB_ALIGN (2u * 1024u * 1024u)

static unsigned char *new_slab(void) {
  size_t bytes = (size_t)GEN_SLAB_CHUNKS * GEN_CHUNK_BYTES;
  unsigned char *slab = aligned_alloc(GEN_SLAB_ALIGN, bytes);
#ifdef MADV_HUGEPAGE
  if (slab) /* advice only: without huge pages the slab works as well */
    (void)madvise(slab, bytes, MADV_HUGEPAGE);
#endif
  return slab;
}

int gen_ready(gen_source *g, const gen_options *o, sl_error *err) {
  if (g->max_heap + g->layout->width > GEN_CHUNK_BYTES / 2) {
    sl_error_set(err, SL_EINVAL,
                 "generated rows are too wide (%u bytes of strings per row): "
                 "make string lengths smaller",
                 g->max_heap + g->layout->width);
    gen_close((sl_source *)g);
    return SL_EINVAL;
  }
  if (!o->pregenerate || g->sample) /* a sample reads a few buffers */
    return SL_OK;
  uint32_t cap = 0;
  while (g->next < g->end) {
    if (g->nchunks == cap) {
      cap = cap ? cap * 2 : 16;
      sl_buffer *c = realloc(g->chunks, cap * sizeof *c);
      if (!c) {
        sl_error_set(err, SL_ENOMEM, "out of memory pre-generating events");
        gen_close((sl_source *)g);
        return SL_ENOMEM;
      }
      g->chunks = c;
    }
    if (g->nchunks % GEN_SLAB_CHUNKS == 0) {
      unsigned char **sl = realloc(g->slabs, (g->nslabs + 1) * sizeof *sl);
      unsigned char *slab = sl ? new_slab() : NULL;
      if (sl)
        g->slabs = sl;
      if (!slab) {
        sl_error_set(err, SL_ENOMEM, "out of memory pre-generating events");
        gen_close((sl_source *)g);
        return SL_ENOMEM;
      }
      g->slabs[g->nslabs++] = slab;
    }
    sl_buffer *b = &g->chunks[g->nchunks];
    sl_buffer_wrap(b, g->layout,
                   g->slabs[g->nslabs - 1] +
                       (size_t)(g->nchunks % GEN_SLAB_CHUNKS) * GEN_CHUNK_BYTES,
                   GEN_CHUNK_BYTES);
    g->nchunks++;
    do
      produce(g, b, UINT64_MAX);
    while (g->next < g->end && sl_buffer_has_room(b, g->max_heap));
  }
  g->emitted = 0;
  return SL_OK;
}

/* Copy pre-generated rows into buf.  A whole chunk that fits is copied
 * with two memcpys and its long-string pointers moved by the distance
 * between the two heaps; otherwise rows are copied one at a time. */
static void replay(gen_source *g, sl_buffer *buf) {
  const sl_row_layout *l = g->layout;
  while (g->chunk_at < g->nchunks) {
    sl_buffer *c = &g->chunks[g->chunk_at];
    size_t rows_bytes = (size_t)c->nrows * l->width;
    if (g->row_at == 0 && buf->nrows == 0 && buf->heap_used == 0 &&
        rows_bytes + c->heap_used <= buf->cap) {
      memcpy(buf->data, c->data, rows_bytes);
      memcpy(buf->data + buf->cap - c->heap_used,
             c->data + c->cap - c->heap_used, c->heap_used);
      buf->nrows = c->nrows;
      buf->heap_used = c->heap_used;
      const char *old_end = (const char *)c->data + c->cap;
      char *new_end = (char *)buf->data + buf->cap;
      for (int j = 0; j < l->nfields; j++) {
        if (l->fields[j].ptype != SL_P_STR)
          continue;
        for (uint32_t r = 0; r < buf->nrows; r++) {
          sl_str *s = (sl_str *)(sl_buffer_row(buf, r) + l->fields[j].offset);
          if (s->len > SL_STR_INLINE)
            s->u.ptr = new_end - (old_end - s->u.ptr);
        }
      }
      g->chunk_at++;
      return;
    }
    while (g->row_at < c->nrows && sl_buffer_has_room(buf, g->max_heap)) {
      const uint8_t *src = sl_buffer_row(c, g->row_at++);
      uint8_t *dst = sl_buffer_append(buf);
      memcpy(dst, src, l->width);
      for (int j = 0; j < l->nfields; j++) {
        sl_str *s = (sl_str *)(dst + l->fields[j].offset);
        if (l->fields[j].ptype == SL_P_STR && s->len > SL_STR_INLINE)
          sl_buffer_put_str(buf, s, s->u.ptr, s->len);
      }
    }
    if (g->row_at < c->nrows)
      return; /* buf is full */
    g->chunk_at++;
    g->row_at = 0;
  }
}

int gen_lend(sl_source *s, uint32_t max_rows, const sl_buffer **out, bool *done,
             sl_error *err) {
  (void)err;
  gen_source *g = (gen_source *)s;
  *out = NULL;
  *done = false;
  if (!g->chunks || g->chunk_at >= g->nchunks || g->row_at != 0 ||
      g->chunks[g->chunk_at].nrows > max_rows)
    return SL_OK;
  const sl_buffer *c = &g->chunks[g->chunk_at++];
  *out = c;
  *done = g->chunk_at >= g->nchunks;
  g->rows += c->nrows;
  g->bytes += (uint64_t)c->nrows * g->layout->width + c->heap_used;
  return SL_OK;
}

int gen_next(sl_source *s, sl_buffer *buf, bool *done, sl_error *err) {
  gen_source *g = (gen_source *)s;
  uint32_t rows0 = buf->nrows, heap0 = buf->heap_used;
  if (g->chunks) {
    replay(g, buf);
    *done = g->chunk_at >= g->nchunks;
  } else if (g->rate > 0) {
    /* Pacing: the k-th event of this instance (k = 1, 2, ...) is due
     * (k - 1) / rate seconds after the first call, so floor(due) events
     * are due by now.  When the next one is not due yet, sleep (at most
     * 50 ms, so a cancelled query is noticed) and return what is ready:
     * a fraction of an event due is nothing to return, and returning
     * nothing without sleeping made the worker spin. */
    uint64_t t = (uint64_t)sl_clock_ns();
    if (g->start_ns == 0)
      g->start_ns = t;
    double due = (double)(t - g->start_ns) * 1e-9 * g->rate + 1.0;
    if ((double)g->emitted + 1.0 > due) {
      double wait_s = ((double)g->emitted + 1.0 - due) / g->rate;
      if (wait_s > 0.05)
        wait_s = 0.05;
      struct timespec ts = {0, (long)(wait_s * 1e9)};
      nanosleep(&ts, NULL);
      t = (uint64_t)sl_clock_ns();
      due = (double)(t - g->start_ns) * 1e-9 * g->rate + 1.0;
    }
    if ((double)g->emitted < due) {
      produce(g, buf, (uint64_t)(due - (double)g->emitted));
    }
    *done = g->next >= g->end;
  } else {
    produce(g, buf, UINT64_MAX);
    *done = g->next >= g->end;
  }
  g->rows += buf->nrows - rows0;
  g->bytes += (uint64_t)(buf->nrows - rows0) * g->layout->width +
              (buf->heap_used - heap0);
  /* An empty buffer that cannot take even one row would loop forever. */
  if (!*done && rows0 == 0 && buf->nrows == 0 &&
      !sl_buffer_has_room(buf, g->max_heap))
    return sl_error_set(err, SL_EINVAL,
                        "buffer of %u bytes is too small for one generated "
                        "row",
                        buf->cap);
  return SL_OK;
}

void gen_stats(const sl_source *s, sl_source_stats *out) {
  const gen_source *g = (const gen_source *)s;
  out->rows = g->rows;
  out->bytes = g->bytes;
  out->skipped_rows = 0;
}

void gen_close(sl_source *s) {
  gen_source *g = (gen_source *)s;
  if (!g)
    return;
  free(g->chunks); /* their memory is the slabs' */
  for (uint32_t i = 0; i < g->nslabs; i++)
    free(g->slabs[i]);
  free(g->slabs);
  sl_arena_free(&g->arena);
  free(g);
}
