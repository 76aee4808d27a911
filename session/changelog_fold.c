/* changelog_fold.c - show an updating result as a table, as Flink's SQL
 * client does in its 'table' result mode
 * (SET 'sql-client.execution.result-mode' = 'table').
 *
 * The query's rows are a changelog (changelog.h): column 0 says what each
 * row does.  The fold keeps the current result, a multiset of rows in the
 * order they first appeared: +I appends its row, -U removes one equal row
 * and the +U that follows takes its place (an updated row stays where it
 * was on the screen), -D removes one.  A -U or -D of a row the result does
 * not hold is an error: the changelog contradicts itself.
 *
 * At each flush (the coordinator merged an epoch) the current table is
 * redrawn through the inner sink when it can redraw in place (a terminal;
 * at most four times a second); once the query has succeeded the final
 * table is printed (sl_changelog_fold_finish).  A query that failed prints
 * no table: what had arrived is not its result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_int.h"
#include "sluice/common/clock.h"
#include "sluice/session/changelog.h"

typedef struct fold_row {
  char *text;    /* the cells, each with a 1-byte NULL flag, then bytes, \0 */
  size_t len;    /* bytes of text */
  uint64_t hash; /* of text */
  int32_t next;  /* the next live row with the same text, or -1 */
  bool live;
} fold_row;

struct sl_changelog_fold {
  sl_result_sink *inner;
  int ncols; /* the result's columns (the op column not counted) */
  char **names;
  const sl_type **types;
  fold_row *rows; /* in display order; dead rows are skipped */
  size_t nrows, cap, nlive;
  int32_t *index; /* open addressing: first row index + 1 per text */
  size_t index_cap;
  int32_t hole; /* the row a -U just removed: its +U goes there (or -1) */
  uint64_t changes;
  double last_draw;
  bool drawn, dirty;
  bool ended; /* the changelog's end came (fold_end) */
  sl_strbuf key;
  char error[160]; /* why a row was refused, or "" */
};

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
  return h | 1; /* never 0 */
}

/* The text of cells[1..] as one key. */
static void key_of(sl_changelog_fold *f, const char *const *cells) {
  sl_strbuf_reset(&f->key);
  for (int i = 0; i < f->ncols; i++) {
    const char *c = cells[i + 1];
    sl_strbuf_appendc(&f->key, c ? 'v' : 'n');
    if (c)
      sl_strbuf_appendn(&f->key, c, strlen(c));
    sl_strbuf_appendc(&f->key, '\0');
  }
}

/* Index slot of text (its chain's head), or the empty slot for it. */
static size_t slot_of(const sl_changelog_fold *f, const char *text, size_t len,
                      uint64_t h) {
  size_t mask = f->index_cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    int32_t r = f->index[i] - 1;
    if (r < 0)
      return i;
    const fold_row *fr = &f->rows[r];
    if (fr->hash == h && fr->len == len && memcmp(fr->text, text, len) == 0)
      return i;
  }
}

/* Rebuild the index over the live rows, dropping dead ones (they are
 * compacted away when they outnumber the live ones). */
static void reindex(sl_changelog_fold *f, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < f->nrows; i++) {
    if (f->rows[i].live)
      f->rows[n++] = f->rows[i];
    else
      free(f->rows[i].text);
  }
  f->nrows = n;
  free(f->index);
  f->index_cap = cap;
  f->index = calloc(cap, sizeof *f->index);
  if (!f->index)
    abort();
  /* Chains keep display order: append each row at its chain's end. */
  int32_t *tail = calloc(cap, sizeof *tail);
  if (!tail)
    abort();
  for (size_t i = 0; i < n; i++) {
    fold_row *r = &f->rows[i];
    r->next = -1;
    size_t s = slot_of(f, r->text, r->len, r->hash);
    if (f->index[s] == 0)
      f->index[s] = (int32_t)i + 1;
    else
      f->rows[tail[s] - 1].next = (int32_t)i;
    tail[s] = (int32_t)i + 1;
  }
  free(tail);
  f->hole = -1;
}

static void add_row(sl_changelog_fold *f) {
  const char *text = f->key.data;
  size_t len = f->key.len;
  uint64_t h = hash_bytes(text, len);
  if ((f->nlive + 1) * 2 > f->index_cap)
    reindex(f, f->index_cap * 2);
  int32_t at;
  if (f->hole >= 0) { /* the +U after a -U: where the old row was */
    at = f->hole;
    f->hole = -1;
    free(f->rows[at].text);
  } else {
    if (f->nrows == f->cap) {
      f->cap = f->cap ? f->cap * 2 : 64;
      f->rows = realloc(f->rows, f->cap * sizeof *f->rows);
      if (!f->rows)
        abort();
    }
    at = (int32_t)f->nrows++;
  }
  fold_row *r = &f->rows[at];
  r->text = malloc(len);
  if (!r->text)
    abort();
  memcpy(r->text, text, len);
  r->len = len;
  r->hash = h;
  r->live = true;
  r->next = -1;
  /* Into the chain, kept in display order. */
  size_t s = slot_of(f, text, len, h);
  int32_t *link = &f->index[s];
  int32_t cur = *link - 1;
  if (cur < 0 || cur > at) {
    r->next = cur;
    *link = at + 1;
  } else {
    while (f->rows[cur].next >= 0 && f->rows[cur].next < at)
      cur = f->rows[cur].next;
    r->next = f->rows[cur].next;
    f->rows[cur].next = at;
  }
  f->nlive++;
}

/* Remove the last row equal to the key; false when there is none. */
static bool remove_row(sl_changelog_fold *f, bool update) {
  const char *text = f->key.data;
  size_t len = f->key.len;
  uint64_t h = hash_bytes(text, len);
  size_t s = slot_of(f, text, len, h);
  int32_t cur = f->index[s] - 1, prev = -1;
  if (cur < 0)
    return false;
  while (f->rows[cur].next >= 0) {
    prev = cur;
    cur = f->rows[cur].next;
  }
  if (prev >= 0)
    f->rows[prev].next = -1;
  else
    f->index[s] = 0;
  f->rows[cur].live = false;
  f->nlive--;
  if (prev < 0) {
    /* Linear probing: re-place the rows after the emptied slot. */
    size_t mask = f->index_cap - 1;
    for (size_t i = (s + 1) & mask; f->index[i]; i = (i + 1) & mask) {
      int32_t head = f->index[i];
      f->index[i] = 0;
      const fold_row *r = &f->rows[head - 1];
      f->index[slot_of(f, r->text, r->len, r->hash)] = head;
    }
  }
  /* A dead row keeps its text until a +U reuses its place or reindex. */
  f->hole = update ? cur : -1;
  if (!update && f->nrows > 64 && f->nlive * 2 < f->nrows)
    reindex(f, f->index_cap);
  return true;
}

/* Show the current table through the inner sink. */
static int draw(sl_changelog_fold *f) {
  sl_result_sink *in = f->inner;
  int rc =
      in->begin(in->ctx, f->ncols, (const char *const *)f->names, f->types);
  const char **cells = calloc((size_t)f->ncols + 1, sizeof *cells);
  if (!cells)
    abort();
  for (size_t i = 0; i < f->nrows && rc == SL_OK; i++) {
    const fold_row *r = &f->rows[i];
    if (!r->live)
      continue;
    const char *p = r->text;
    for (int c = 0; c < f->ncols; c++) {
      cells[c] = *p == 'v' ? p + 1 : NULL;
      p += strlen(p) + 1;
    }
    rc = in->row(in->ctx, cells);
  }
  free(cells);
  if (rc == SL_OK)
    rc = in->end(in->ctx);
  f->drawn = true;
  f->dirty = false;
  f->last_draw = sl_clock_seconds();
  return rc;
}

static int fold_begin(void *ctx, int ncols, const char *const *names,
                      const sl_type *const *types) {
  sl_changelog_fold *f = ctx;
  if (ncols < 1 || !names || strcmp(names[0], SL_CHANGELOG_COLUMN) != 0) {
    snprintf(f->error, sizeof f->error, "the result is not a changelog");
    return SL_EINTERNAL;
  }
  f->ncols = ncols - 1;
  f->names = calloc((size_t)ncols, sizeof *f->names);
  f->types = calloc((size_t)ncols, sizeof *f->types);
  if (!f->names || !f->types)
    abort();
  for (int i = 0; i < f->ncols; i++) {
    f->names[i] = strdup(names[i + 1] ? names[i + 1] : "");
    if (!f->names[i])
      abort();
    f->types[i] = types ? types[i + 1] : NULL;
  }
  return SL_OK;
}

static int fold_row_in(void *ctx, const char *const *cells) {
  sl_changelog_fold *f = ctx;
  sl_changelog_op op;
  if (!sl_changelog_op_parse(cells[0], &op)) {
    snprintf(f->error, sizeof f->error, "a changelog row of unknown kind '%s'",
             cells[0] ? cells[0] : "NULL");
    return SL_EINTERNAL;
  }
  key_of(f, cells);
  f->changes++;
  f->dirty = true;
  if (sl_changelog_op_adds(op)) {
    if (op != SL_OP_UPDATE_AFTER)
      f->hole = -1;
    add_row(f);
    return SL_OK;
  }
  if (remove_row(f, op == SL_OP_UPDATE_BEFORE))
    return SL_OK;
  snprintf(f->error, sizeof f->error,
           "the changelog's %s row %llu removes a row the result does not "
           "hold",
           cells[0], (unsigned long long)f->changes);
  return SL_EINTERNAL;
}

static int fold_flush(void *ctx) {
  sl_changelog_fold *f = ctx;
  sl_result_sink *in = f->inner;
  if (!f->dirty || !in->replace || sl_clock_seconds() - f->last_draw < 0.25)
    return SL_OK;
  if (in->replace(in->ctx, f->drawn) != SL_OK)
    return SL_OK; /* not a terminal: only the final table */
  return draw(f);
}

/* The end of the changelog is not yet the end of the result: only a query
 * that succeeded has a final table (sl_changelog_fold_finish); one that
 * failed leaves at most what a terminal was shown while it ran. */
static int fold_end(void *ctx) {
  sl_changelog_fold *f = ctx;
  f->ended = true;
  return SL_OK;
}

int sl_changelog_fold_finish(sl_changelog_fold *f) {
  sl_result_sink *in = f->inner;
  if (!f->ended)
    return SL_OK;
  if (f->drawn && in->replace)
    (void)in->replace(in->ctx, true);
  return draw(f);
}

static int fold_text(void *ctx, const char *text) {
  sl_changelog_fold *f = ctx;
  return f->inner->text(f->inner->ctx, text);
}

static int fold_notice(void *ctx, const char *text) {
  sl_changelog_fold *f = ctx;
  return f->inner->notice ? f->inner->notice(f->inner->ctx, text) : SL_OK;
}

static int fold_progress(void *ctx, const char *line) {
  sl_changelog_fold *f = ctx;
  return f->inner->progress ? f->inner->progress(f->inner->ctx, line) : SL_OK;
}

sl_changelog_fold *sl_changelog_fold_new(sl_result_sink *inner) {
  sl_changelog_fold *f = calloc(1, sizeof *f);
  if (!f)
    abort();
  f->inner = inner;
  f->hole = -1;
  f->index_cap = 64;
  f->index = calloc(f->index_cap, sizeof *f->index);
  if (!f->index)
    abort();
  return f;
}

sl_result_sink sl_changelog_fold_sink(sl_changelog_fold *f) {
  sl_result_sink s = {f,           fold_begin,    fold_row_in,
                      fold_flush,  fold_end,      fold_text,
                      fold_notice, fold_progress, NULL};
  return s;
}

uint64_t sl_changelog_fold_rows(const sl_changelog_fold *f) {
  return f->nlive;
}

const char *sl_changelog_fold_error(const sl_changelog_fold *f) {
  return f->error[0] ? f->error : NULL;
}

uint64_t sl_changelog_fold_changes(const sl_changelog_fold *f) {
  return f->changes;
}

void sl_changelog_fold_free(sl_changelog_fold *f) {
  if (!f)
    return;
  for (size_t i = 0; i < f->nrows; i++)
    free(f->rows[i].text);
  free(f->rows);
  free(f->index);
  for (int i = 0; i < f->ncols && f->names; i++)
    free(f->names[i]);
  free(f->names);
  free(f->types);
  sl_strbuf_free(&f->key);
  free(f);
}

/* ---- an insert-only result shown as a changelog -------------------------
 * SET 'sql-client.execution.result-mode' = 'changelog' shows every result
 * with its op column, as Flink's client does: a result that is only ever
 * inserted gets +I on every row. */

typedef struct insert_only {
  sl_result_sink *inner;
  const char **cells; /* "+I", then the row's */
  int ncols;
} insert_only;

static int io_begin(void *ctx, int ncols, const char *const *names,
                    const sl_type *const *types) {
  insert_only *io = ctx;
  const char **n = calloc((size_t)ncols + 1, sizeof *n);
  const sl_type **t = calloc((size_t)ncols + 1, sizeof *t);
  free(io->cells);
  io->cells = calloc((size_t)ncols + 1, sizeof *io->cells);
  if (!n || !t || !io->cells)
    abort();
  static const sl_type op_type = {.kind = SL_TYPE_VARCHAR, .precision = -1};
  n[0] = SL_CHANGELOG_COLUMN;
  t[0] = &op_type;
  for (int i = 0; i < ncols; i++) {
    n[i + 1] = names ? names[i] : "";
    t[i + 1] = types ? types[i] : NULL;
  }
  io->ncols = ncols;
  int rc = io->inner->begin(io->inner->ctx, ncols + 1, n, t);
  free(n);
  free(t);
  return rc;
}

static int io_row(void *ctx, const char *const *cells) {
  insert_only *io = ctx;
  io->cells[0] = sl_changelog_op_name(SL_OP_INSERT);
  for (int i = 0; i < io->ncols; i++)
    io->cells[i + 1] = cells[i];
  return io->inner->row(io->inner->ctx, io->cells);
}

static int io_flush(void *ctx) {
  insert_only *io = ctx;
  return io->inner->flush ? io->inner->flush(io->inner->ctx) : SL_OK;
}

static int io_end(void *ctx) {
  insert_only *io = ctx;
  return io->inner->end(io->inner->ctx);
}

static int io_text(void *ctx, const char *text) {
  insert_only *io = ctx;
  return io->inner->text(io->inner->ctx, text);
}

static int io_notice(void *ctx, const char *text) {
  insert_only *io = ctx;
  return io->inner->notice ? io->inner->notice(io->inner->ctx, text) : SL_OK;
}

static int io_progress(void *ctx, const char *line) {
  insert_only *io = ctx;
  return io->inner->progress ? io->inner->progress(io->inner->ctx, line)
                             : SL_OK;
}

sl_result_sink sl_insert_only_changelog_sink(sl_result_sink *inner,
                                             void **state) {
  insert_only *io = calloc(1, sizeof *io);
  if (!io)
    abort();
  io->inner = inner;
  *state = io;
  sl_result_sink s = {io,      io_begin,  io_row,      io_flush, io_end,
                      io_text, io_notice, io_progress, NULL};
  return s;
}

void sl_insert_only_changelog_free(void *state) {
  insert_only *io = state;
  if (io)
    free(io->cells);
  free(io);
}
