/* catalog.h - the session's tables and views.
 *
 * A catalog entry is created by the binder from a CREATE TABLE / CREATE VIEW
 * statement after it has been validated, and is self-contained: it owns its
 * own arena holding names, resolved types, option strings and the SQL *text*
 * of computed columns, the watermark expression and view bodies.  Like
 * SQLite's schema table, Sluice keeps text rather than ASTs across
 * statements; the binder re-parses that text into the arena of the statement
 * that uses the entry.  This keeps each statement's arena independent.
 *
 * Ownership: the catalog owns its entries; pointers returned by lookups stay
 * valid until the entry is dropped or the catalog is freed.
 */
#ifndef SLUICE_CATALOG_H
#define SLUICE_CATALOG_H

#include <stdbool.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/types.h"

typedef struct sl_column {
  const char *name;
  sl_type *type;            /* resolved type (computed columns too) */
  const char *computed_sql; /* `name AS <expr>`: the expr text, or NULL */
  bool primary_key;
  const char *comment; /* or NULL */
} sl_column;

typedef struct sl_table_option {
  const char *key;
  const char *value;
} sl_table_option;

typedef enum sl_table_kind {
  SL_TABLE_CONNECTOR, /* CREATE TABLE ... WITH ('connector' = ...) */
  SL_TABLE_VIEW,      /* CREATE VIEW ... AS query */
} sl_table_kind;

typedef struct sl_table_def {
  sl_table_kind kind;
  const char *name;
  bool temporary;
  int ncolumns;
  sl_column *columns;

  /* Event time: WATERMARK FOR <rowtime_column> AS <watermark_sql>.
   * rowtime_column is an index into columns, or -1 when none is declared.
   * (Views inherit the time attribute through their column types.) */
  int rowtime_column;
  const char *watermark_sql;

  int noptions;
  sl_table_option *options; /* WITH (...) in declaration order */
  int nprimary_key;
  const char **primary_key; /* PRIMARY KEY (...) NOT ENFORCED */
  int npartitioned_by;
  const char **partitioned_by;
  const char *comment;

  const char *view_sql;   /* views: the text of the query after AS */
  int view_first_line;    /* line of view_sql's first line when created */
  const char *create_sql; /* the whole CREATE statement as the user wrote it */

  sl_arena arena; /* owns every string and type of this entry */
} sl_table_def;

typedef struct sl_catalog sl_catalog;

sl_catalog *sl_catalog_new(void);
void sl_catalog_free(sl_catalog *c);

/* A new, empty entry with its own arena, not yet in any catalog.  Fill it
 * (allocating from def->arena), then sl_catalog_add or sl_table_def_free. */
sl_table_def *sl_table_def_new(sl_table_kind kind, const char *name);
void sl_table_def_free(sl_table_def *def);

/* Add def (the catalog takes ownership).  If an entry of that name exists:
 * with replace, the old one is dropped; else SL_ECATALOG ("table 'x' already
 * exists") and def is freed. */
int sl_catalog_add(sl_catalog *c, sl_table_def *def, bool replace,
                   sl_error *err);

/* Lookup: exact name first, then a unique case-insensitive match. */
const sl_table_def *sl_catalog_find(const sl_catalog *c, const char *name);

/* Remove an entry; returns false if there is none of that name. */
bool sl_catalog_drop(sl_catalog *c, const char *name);

/* Entries in name order (for SHOW TABLES, .tables, completion). */
int sl_catalog_count(const sl_catalog *c);
const sl_table_def *sl_catalog_at(const sl_catalog *c, int i);

/* The closest existing name to `name` (edit distance), for "did you mean"
 * messages, or NULL if nothing is close. */
const char *sl_catalog_suggest(const sl_catalog *c, const char *name);

/* A table option by key, or NULL. */
const char *sl_table_def_option(const sl_table_def *def, const char *key);

/* Column index by name (exact, then unique case-insensitive), or -1. */
int sl_table_def_find_column(const sl_table_def *def, const char *name);

#endif
