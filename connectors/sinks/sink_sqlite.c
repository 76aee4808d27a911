/* sink_sqlite.c - INSERT INTO a 'connector' = 'sqlite' table: rows go into
 * a table of an SQLite database file.
 *
 * Options: 'path' (the database file, created if missing), 'table-name'
 * (default: the Sluice table's name).  The table is created if it does
 * not exist, one column per result column:
 *   BOOLEAN, TINYINT..BIGINT   INTEGER
 *   FLOAT, DOUBLE              REAL
 *   DECIMAL                    NUMERIC (bound as its exact text, so SQLite
 *                              keeps it as INTEGER/REAL when lossless)
 *   strings                    TEXT
 *   DATE, TIME, TIMESTAMP,     TEXT as Flink prints them
 *   INTERVAL                   ('2015-07-15 00:00:00.000' sorts and works
 *                              with SQLite's date functions)
 * Rows are inserted with one prepared statement and bound parameters (no
 * value ever becomes SQL text), inside one transaction per commit(): a
 * fired window appears all at once, and a failed query leaves nothing of
 * its uncommitted window behind.
 *
 * An unbounded query (a streaming INSERT) also commits by the clock: at
 * the first round boundary (the watermark call, where every row written
 * is whole) a second or more after its transaction began, or, for a query
 * without windows (no commit() ever), after the first batch written that
 * late; so a query without windows shows its rows within about a second,
 * and the write lock is never held much longer than that.  A database the sink
 * creates for it is put in WAL mode, where readers are never blocked by the
 * writer; an existing database keeps its journal mode (the sink never
 * changes a user's database file format): in rollback mode a reader may
 * wait up to about a second for a commit (or get "database is locked"
 * without a busy timeout); 'PRAGMA journal_mode=WAL' on it lifts that.
 * Stopped (Ctrl-C, a signal, an error), it commits the rows complete at
 * the last round boundary (a savepoint marks it) and drops the rest.
 *
 * INSERT OVERWRITE (bounded queries only) deletes the table's rows and
 * inserts the new ones in one transaction, committed when the query has
 * succeeded: readers see the old rows until then, never a mixture.
 *
 * An updating result (a changelog, changelog.h) is applied so that the
 * table always holds the current result, one transaction per epoch:
 *   - with PRIMARY KEY (...) NOT ENFORCED on the Sluice table, the SQLite
 *     table gets that primary key; +I and +U upsert the row (INSERT ... ON
 *     CONFLICT DO UPDATE), -D deletes by the key, -U is skipped (its +U
 *     follows and replaces the row), as Flink's upsert sinks do;
 *   - without one, +I and +U insert, -U and -D delete one row equal to
 *     theirs (NULLs equal: IS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/connectors/path_policy.h"
#include "sluice/row/value_text.h"
#include "sluice/session/changelog.h"

/* An unbounded query's transaction is committed this long after it began
 * (at the next round boundary). */
#define SQLITE_COMMIT_SECONDS 1.0

static const char *const sqlite_options[] = {"connector", "path", "table-name",
                                             NULL};

struct sl_sink {
  const sl_row_layout *layout;
  const char *table; /* the Sluice table, for messages */
  char *target;      /* the SQLite table */
  sqlite3 *db;
  sqlite3_stmt *insert;
  sqlite3_stmt *remove; /* a changelog's -D (and -U without a key) */
  int first;            /* the first column written: 1 after a changelog's op */
  int nkey;             /* a changelog's primary key columns, or 0 */
  int *key;             /* ... their fields */
  bool in_tx;
  bool unbounded, overwrite;
  bool has_safe;     /* the savepoint "whole" marks the last round's end */
  bool units;        /* commit() was called: rows come in units (windows) */
  double tx_started; /* sl_clock_seconds() at BEGIN */
  char (*text)[SL_VALUE_TEXT_MAX]; /* per-column text of the current row */
  uint64_t rows;
};

static const char *db_path(const sl_table_def *t) {
  const char *p = sl_table_def_option(t, "path");
  if (p && strncmp(p, "file://", 7) == 0)
    return p + 7;
  return p;
}

static int sqlite_validate(const sl_table_def *t, sl_error *err) {
  int rc = sl_check_options(t, "sqlite", sqlite_options, err);
  if (rc)
    return rc;
  const char *p = db_path(t);
  if (!p || !*p)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': the sqlite connector needs a database "
                        "file: add 'path' = '/some/file.db'",
                        t->name);
  const char *name = sl_table_def_option(t, "table-name");
  if (name && !*name)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'table-name' must not be empty", t->name);
  return SL_OK;
}

static const char *column_type(sl_ptype p) {
  switch (p) {
  case SL_P_BOOL:
  case SL_P_I8:
  case SL_P_I16:
  case SL_P_I32:
  case SL_P_I64:
    return "INTEGER";
  case SL_P_F32:
  case SL_P_F64:
    return "REAL";
  case SL_P_DEC64:
  case SL_P_DEC128:
    return "NUMERIC";
  default:
    return "TEXT";
  }
}

/* "name" with embedded quotes doubled. */
static void append_ident(sl_strbuf *b, const char *name) {
  sl_strbuf_appendc(b, '"');
  for (const char *p = name; *p; p++) {
    if (*p == '"')
      sl_strbuf_appendc(b, '"');
    sl_strbuf_appendc(b, *p);
  }
  sl_strbuf_appendc(b, '"');
}

static int db_error(sl_sink *s, int code, const char *doing, sl_error *err) {
  return sl_error_set(err, code, "table '%s': sqlite database: %s failed: %s",
                      s->table, doing, sqlite3_errmsg(s->db));
}

static void sqlite_free(sl_sink *s) {
  if (s->insert)
    sqlite3_finalize(s->insert);
  if (s->remove)
    sqlite3_finalize(s->remove);
  free(s->key);
  if (s->db)
    sqlite3_close(s->db);
  free(s->target);
  free(s->text);
  free(s);
}

/* The SQLite column of result field i: the Sluice table's column there
 * (INSERT writes columns by position), else the query's name for it. */
static const char *column_name(const sl_sink *s, const sl_sink_spec *spec,
                               int i) {
  const sl_table_def *t = spec->table;
  if (t->ncolumns == s->layout->nfields - s->first)
    return t->columns[i - s->first].name;
  return spec->names[i];
}

static int begin(sl_sink *s, sl_error *err) {
  if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    return db_error(s, SL_EIO, "BEGIN", err);
  s->in_tx = true;
  s->has_safe = false;
  s->tx_started = sl_clock_seconds();
  return SL_OK;
}

/* Under a changelog with a primary key: the key's columns, by position
 * (the result's columns are the table's, in order). */
static int key_columns(sl_sink *s, const sl_table_def *t, sl_error *err) {
  const sl_row_layout *l = s->layout;
  s->key = calloc((size_t)t->nprimary_key, sizeof *s->key);
  if (!s->key)
    abort();
  for (int k = 0; k < t->nprimary_key; k++)
    for (int c = 0; c < t->ncolumns && c + s->first < l->nfields; c++)
      if (strcmp(t->columns[c].name, t->primary_key[k]) == 0)
        s->key[s->nkey++] = c + s->first;
  if (s->nkey != t->nprimary_key)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': its primary key names a column the "
                        "query does not write",
                        t->name);
  return SL_OK;
}

/* The database at path, opened (created if need be). */
static int open_db(sl_sink *s, const sl_table_def *t, const char *path,
                   sl_error *err) {
  struct stat st;
  bool is_new = stat(path, &st) != 0 || st.st_size == 0;
  if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      NULL) != SQLITE_OK)
    return sl_error_set(err, SL_EIO,
                        "table '%s': cannot open the sqlite database '%s': "
                        "%s; check the table's 'path' option",
                        t->name, path,
                        s->db ? sqlite3_errmsg(s->db) : "out of memory");
  sqlite3_busy_timeout(s->db, 5000);
  /* A new database for a streaming INSERT: WAL, so that readers can read
   * while it writes (the mode stays with the file). */
  if (s->unbounded && is_new)
    sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  return SL_OK;
}

/* verb, the target table, " (" and the result's columns (with their
 * SQLite types when typed). */
static void target_columns(sl_strbuf *sql, const char *verb, const sl_sink *s,
                           const sl_sink_spec *spec, bool typed) {
  const sl_row_layout *l = s->layout;
  sl_strbuf_append(sql, verb);
  append_ident(sql, s->target);
  sl_strbuf_append(sql, " (");
  for (int i = s->first; i < l->nfields; i++) {
    if (i > s->first)
      sl_strbuf_append(sql, ", ");
    append_ident(sql, column_name(s, spec, i));
    if (typed)
      sl_strbuf_printf(sql, " %s", column_type(l->fields[i].ptype));
  }
}

/* CREATE TABLE IF NOT EXISTS for the result's columns (and key). */
static void create_sql(sl_strbuf *sql, const sl_sink *s,
                       const sl_sink_spec *spec) {
  target_columns(sql, "CREATE TABLE IF NOT EXISTS ", s, spec, true);
  for (int k = 0; k < s->nkey; k++) {
    sl_strbuf_append(sql, k ? ", " : ", PRIMARY KEY (");
    append_ident(sql, column_name(s, spec, s->key[k]));
  }
  sl_strbuf_append(sql, s->nkey ? "))" : ")");
}

/* INSERT of a row; with a key an upsert. */
static void insert_sql(sl_strbuf *sql, const sl_sink *s,
                       const sl_sink_spec *spec) {
  const sl_row_layout *l = s->layout;
  target_columns(sql, "INSERT INTO ", s, spec, false);
  sl_strbuf_append(sql, ") VALUES (");
  for (int i = s->first; i < l->nfields; i++)
    sl_strbuf_append(sql, i > s->first ? ", ?" : "?");
  sl_strbuf_append(sql, ")");
  if (!s->nkey)
    return;
  sl_strbuf_append(sql, " ON CONFLICT (");
  for (int k = 0; k < s->nkey; k++) {
    if (k)
      sl_strbuf_append(sql, ", ");
    append_ident(sql, column_name(s, spec, s->key[k]));
  }
  sl_strbuf_append(sql, ") DO ");
  int set = 0;
  for (int i = s->first; i < l->nfields; i++) {
    bool is_key = false;
    for (int k = 0; k < s->nkey; k++)
      is_key |= s->key[k] == i;
    if (is_key)
      continue;
    sl_strbuf_append(sql, set++ ? ", " : "UPDATE SET ");
    append_ident(sql, column_name(s, spec, i));
    sl_strbuf_append(sql, " = excluded.");
    append_ident(sql, column_name(s, spec, i));
  }
  if (!set)
    sl_strbuf_append(sql, "NOTHING");
}

/* Deleting a row: by its key, or one row equal to it. */
static void delete_sql(sl_strbuf *sql, const sl_sink *s,
                       const sl_sink_spec *spec) {
  const sl_row_layout *l = s->layout;
  sl_strbuf_append(sql, "DELETE FROM ");
  append_ident(sql, s->target);
  sl_strbuf_append(sql, s->nkey ? " WHERE "
                                : " WHERE rowid = (SELECT rowid "
                                  "FROM ");
  if (!s->nkey) {
    append_ident(sql, s->target);
    sl_strbuf_append(sql, " WHERE ");
  }
  int n = s->nkey ? s->nkey : l->nfields - s->first;
  for (int j = 0; j < n; j++) {
    int i = s->nkey ? s->key[j] : s->first + j;
    if (j)
      sl_strbuf_append(sql, " AND ");
    append_ident(sql, column_name(s, spec, i));
    sl_strbuf_printf(sql, " IS ?%d", j + 1);
  }
  if (!s->nkey)
    sl_strbuf_append(sql, " LIMIT 1)");
}

/* The table created if need be, the INSERT (and under a changelog the
 * DELETE) prepared. */
static int prepare_statements(sl_sink *s, const sl_sink_spec *spec,
                              const char *path, sl_error *err) {
  const sl_table_def *t = spec->table;
  int rc = SL_OK;
  sl_strbuf sql = SL_STRBUF_INIT;
  create_sql(&sql, s, spec);
  if (sqlite3_exec(s->db, sl_strbuf_cstr(&sql), NULL, NULL, NULL) !=
      SQLITE_OK) {
    rc = db_error(s, SL_EIO, "creating the table", err);
    sl_strbuf_free(&sql);
    return rc;
  }
  sl_strbuf_reset(&sql);
  insert_sql(&sql, s, spec);
  if (sqlite3_prepare_v2(s->db, sl_strbuf_cstr(&sql), -1, &s->insert, NULL) ==
          SQLITE_OK &&
      spec->changelog) {
    sl_strbuf_reset(&sql);
    delete_sql(&sql, s, spec);
    sqlite3_prepare_v2(s->db, sl_strbuf_cstr(&sql), -1, &s->remove, NULL);
  }
  if (!s->insert || (spec->changelog && !s->remove))
    rc = sl_error_set(err, SL_EINVAL,
                      "table '%s': cannot insert into table '%s' of '%s': "
                      "%s; the existing table must have the result's "
                      "columns (drop it or pick another 'table-name')",
                      t->name, s->target, path, sqlite3_errmsg(s->db));
  sl_strbuf_free(&sql);
  return rc;
}

/* INSERT OVERWRITE: the old rows go in the transaction of the new. */
static int delete_old_rows(sl_sink *s, sl_error *err) {
  int rc = begin(s, err);
  if (rc == SL_OK) {
    sl_strbuf sql = SL_STRBUF_INIT;
    sl_strbuf_append(&sql, "DELETE FROM ");
    append_ident(&sql, s->target);
    if (sqlite3_exec(s->db, sl_strbuf_cstr(&sql), NULL, NULL, NULL) !=
        SQLITE_OK)
      rc = db_error(s, SL_EIO, "deleting the old rows (INSERT OVERWRITE)", err);
    sl_strbuf_free(&sql);
  }
  if (rc != SL_OK && s->in_tx)
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static int sqlite_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  *out = NULL;
  const sl_table_def *t = spec->table;
  int rc = sqlite_validate(t, err);
  if (rc)
    return rc;
  const sl_row_layout *l = spec->layout;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a sqlite sink");
  s->layout = l;
  s->table = t->name;
  s->first = spec->changelog ? 1 : 0;
  if (spec->changelog && t->nprimary_key > 0) {
    rc = key_columns(s, t, err);
    if (rc != SL_OK) {
      sqlite_free(s);
      return rc;
    }
  }
  const char *name = sl_table_def_option(t, "table-name");
  s->target = strdup(name ? name : t->name);
  s->text = calloc((size_t)l->nfields + 1, sizeof *s->text);
  s->unbounded = spec->unbounded;
  s->overwrite = spec->overwrite;
  char *path = NULL; /* on a node daemon: inside its --data-dir */
  rc = sl_path_resolve(db_path(t), &path, err);
  if (rc == SL_OK)
    rc = open_db(s, t, path, err);
  /* (path is named in prepare_statements' error, so it lives till then) */
  if (rc == SL_OK)
    rc = prepare_statements(s, spec, path, err);
  free(path);
  if (rc == SL_OK && s->overwrite)
    rc = delete_old_rows(s, err);
  if (rc != SL_OK) {
    sqlite_free(s);
    return rc;
  }
  *out = s;
  return SL_OK;
}

/* Bind field i of row to parameter col of st. */
static int bind_field(sl_sink *s, sqlite3_stmt *st, const uint8_t *row, int i,
                      int col) {
  const sl_field *f = &s->layout->fields[i];
  const void *p = row + f->offset;
  if (sl_row_is_null(row, i))
    return sqlite3_bind_null(st, col);
  switch (f->ptype) {
  case SL_P_BOOL:
    return sqlite3_bind_int(st, col, *(const uint8_t *)p);
  case SL_P_I8:
    return sqlite3_bind_int(st, col, *(const int8_t *)p);
  case SL_P_I16:
    return sqlite3_bind_int(st, col, *(const int16_t *)p);
  case SL_P_I32:
    return sqlite3_bind_int(st, col, *(const int32_t *)p);
  case SL_P_I64:
    return sqlite3_bind_int64(st, col, *(const int64_t *)p);
  case SL_P_F32:
    return sqlite3_bind_double(st, col, *(const float *)p);
  case SL_P_F64:
    return sqlite3_bind_double(st, col, *(const double *)p);
  case SL_P_STR: {
    const sl_str *str = p;
    /* STATIC: the row outlives the step that reads it. */
    return sqlite3_bind_text(st, col, sl_str_data(str), (int)str->len,
                             SQLITE_STATIC);
  }
  default: {
    int n = sl_value_format_scalar(s->text[i], f->type, f->ptype, p);
    return sqlite3_bind_text(st, col, s->text[i], n, SQLITE_STATIC);
  }
  }
}

static int commit_now(sl_sink *s, sl_error *err);

static int sqlite_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  if (rows->nrows == 0)
    return SL_OK;
  if (!s->in_tx) {
    int rc = begin(s, err);
    if (rc != SL_OK)
      return rc;
  }
  for (uint32_t r = 0; r < rows->nrows; r++) {
    const uint8_t *row = sl_buffer_row(rows, r);
    sl_changelog_op op = SL_OP_INSERT;
    if (s->first) {
      const sl_str *name = (const sl_str *)(row + s->layout->fields[0].offset);
      char text[4] = "";
      memcpy(text, sl_str_data(name), name->len < 3 ? name->len : 3);
      if (!sl_changelog_op_parse(text, &op))
        return sl_error_set(err, SL_EINTERNAL,
                            "table '%s': a changelog row of unknown kind",
                            s->table);
    }
    if (op == SL_OP_UPDATE_BEFORE && s->nkey)
      continue; /* the +U that follows replaces the row */
    bool adds = sl_changelog_op_adds(op);
    sqlite3_stmt *st = adds ? s->insert : s->remove;
    sqlite3_reset(st);
    int n = adds || !s->nkey ? s->layout->nfields - s->first : s->nkey;
    for (int j = 0; j < n; j++) {
      int i = adds || !s->nkey ? s->first + j : s->key[j];
      if (bind_field(s, st, row, i, j + 1) != SQLITE_OK)
        return db_error(s, SL_EIO, "binding a value", err);
    }
    if (sqlite3_step(st) != SQLITE_DONE)
      return db_error(s, SL_EIO, adds ? "INSERT" : "DELETE", err);
    s->rows++;
  }
  /* A query without windows never commits a unit, and its rows are each
   * whole: after a batch is a safe point too, for when rounds are long
   * (a sink slower than the source). */
  if (s->unbounded && !s->units &&
      sl_clock_seconds() - s->tx_started >= SQLITE_COMMIT_SECONDS)
    return commit_now(s, err);
  return SL_OK;
}

static int commit_now(sl_sink *s, sl_error *err) {
  if (!s->in_tx)
    return SL_OK;
  sqlite3_reset(s->insert);
  if (s->remove)
    sqlite3_reset(s->remove);
  if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    return db_error(s, SL_EIO, "COMMIT", err);
  s->in_tx = false;
  s->has_safe = false;
  return SL_OK;
}

/* A fired window is complete (INSERT OVERWRITE commits once, at the end). */
static int sqlite_commit(sl_sink *s, sl_error *err) {
  s->units = true;
  return s->overwrite ? SL_OK : commit_now(s, err);
}

/* The clock, between rounds (every row written is whole): an unbounded
 * query commits once its transaction is a second old, else marks how far
 * its rows are whole. */
static int sqlite_tick(sl_sink *s, int64_t wm, sl_error *err) {
  (void)wm;
  if (!s->unbounded || !s->in_tx)
    return SL_OK;
  if (sl_clock_seconds() - s->tx_started >= SQLITE_COMMIT_SECONDS)
    return commit_now(s, err);
  if (s->has_safe &&
      sqlite3_exec(s->db, "RELEASE whole", NULL, NULL, NULL) != SQLITE_OK)
    return db_error(s, SL_EIO, "RELEASE", err);
  s->has_safe = false;
  if (sqlite3_exec(s->db, "SAVEPOINT whole", NULL, NULL, NULL) != SQLITE_OK)
    return db_error(s, SL_EIO, "SAVEPOINT", err);
  s->has_safe = true;
  return SL_OK;
}

static int sqlite_close(sl_sink *s, bool ok, sl_error *err) {
  int rc = SL_OK;
  if (s->in_tx) {
    sqlite3_reset(s->insert);
    if (s->remove)
      sqlite3_reset(s->remove);
    if (ok) {
      rc = commit_now(s, err);
    } else if (s->unbounded) { /* stopped: its whole rows stay */
      if (s->has_safe)
        sqlite3_exec(s->db, "ROLLBACK TO whole", NULL, NULL, NULL);
      else
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
      if (sqlite3_get_autocommit(s->db) == 0)
        commit_now(s, NULL);
      s->in_tx = false;
    }
    if (s->in_tx)
      sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  }
  sqlite_free(s);
  return rc;
}

static uint64_t sqlite_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_sqlite = {
    .name = "sqlite",
    .description = "inserts into a table of an SQLite database "
                   "('path', 'table-name')",
    .validate = sqlite_validate,
    .open = sqlite_open,
    .write = sqlite_write,
    .commit = sqlite_commit,
    .close = sqlite_close,
    .rows_written = sqlite_rows,
    .watermark = sqlite_tick,
    .can_overwrite = true,
};
