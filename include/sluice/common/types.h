/* types.h - Sluice's SQL data types.
 *
 * One sl_type describes a column, an expression result or a ROW field.  The
 * spellings follow Flink SQL (STRING is VARCHAR of unbounded length,
 * TIMESTAMP(3) is the usual event-time type, ROW<name TYPE, ...> nests).
 *
 * Ownership: types built by the parser or binder live in the statement's
 * arena; the catalog deep-copies the types it keeps (sl_type_copy into its
 * own arena).  Types are treated as immutable once built.
 */
#ifndef SLUICE_TYPES_H
#define SLUICE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/arena.h"
#include "sluice/common/strbuf.h"

typedef enum sl_type_kind {
  SL_TYPE_NULL = 0, /* the type of a bare NULL literal before coercion */
  SL_TYPE_BOOLEAN,
  SL_TYPE_TINYINT,
  SL_TYPE_SMALLINT,
  SL_TYPE_INT,
  SL_TYPE_BIGINT,
  SL_TYPE_FLOAT,
  SL_TYPE_DOUBLE,
  SL_TYPE_DECIMAL, /* precision 1..38, scale 0..precision */
  SL_TYPE_CHAR,    /* CHAR(n): precision = n */
  SL_TYPE_VARCHAR, /* VARCHAR(n); STRING = VARCHAR with precision -1 */
  SL_TYPE_DATE,
  SL_TYPE_TIME,              /* TIME(p) */
  SL_TYPE_TIMESTAMP,         /* TIMESTAMP(p), p = 0..9, default 6 as in Flink */
  SL_TYPE_TIMESTAMP_LTZ,     /* TIMESTAMP_LTZ(p) / WITH LOCAL TIME ZONE */
  SL_TYPE_INTERVAL_DAY_TIME, /* INTERVAL ... SECOND/MINUTE/HOUR/DAY */
  SL_TYPE_INTERVAL_YEAR_MONTH, /* INTERVAL ... YEAR/MONTH */
  SL_TYPE_ROW,                 /* ROW<name TYPE, ...> */
} sl_type_kind;

/* Marks a timestamp column as a time attribute (Flink's *ROWTIME* and
 * *PROCTIME*): the binder uses it to accept window functions. */
typedef enum sl_time_attr {
  SL_TIME_NONE = 0,
  SL_TIME_ROWTIME, /* event time: has a WATERMARK declared on it */
  SL_TIME_PROCTIME,
} sl_time_attr;

typedef struct sl_type sl_type;

typedef struct sl_type_field {
  const char *name;
  sl_type *type;
} sl_type_field;

struct sl_type {
  sl_type_kind kind;
  int32_t precision; /* DECIMAL/CHAR/VARCHAR/TIME/TIMESTAMP; -1 = unbounded */
  int32_t scale;     /* DECIMAL */
  bool not_null;
  sl_time_attr time_attr;
  int nfields;           /* ROW */
  sl_type_field *fields; /* ROW, nfields entries */
};

/* Constructors (arena-allocated). */
sl_type *sl_type_new(sl_arena *a, sl_type_kind kind);
sl_type *sl_type_decimal(sl_arena *a, int precision, int scale);
sl_type *sl_type_varchar(sl_arena *a, int length); /* -1: STRING */
sl_type *sl_type_timestamp(sl_arena *a, int precision);

/* Deep copy into arena a. */
sl_type *sl_type_copy(sl_arena *a, const sl_type *t);

/* Structural equality (ignores nullability and time attribute). */
bool sl_type_equal(const sl_type *x, const sl_type *y);

/* Class predicates. */
bool sl_type_is_integer(const sl_type *t); /* TINYINT..BIGINT */
bool sl_type_is_numeric(
    const sl_type *t);                    /* integers, FLOAT, DOUBLE, DECIMAL */
bool sl_type_is_string(const sl_type *t); /* CHAR, VARCHAR */
bool sl_type_is_temporal(const sl_type *t); /* DATE, TIME, TIMESTAMP[_LTZ] */
bool sl_type_is_interval(const sl_type *t);

/* Render as Flink prints it: "BIGINT", "VARCHAR(2147483647)" is printed
 * "STRING", "TIMESTAMP(3) *ROWTIME*", "ROW<`id` BIGINT, ...>", "DECIMAL(23,
 * 3)", "INT NOT NULL".  Appends to b. */
void sl_type_format(sl_strbuf *b, const sl_type *t);

/* Same, into an arena string. */
const char *sl_type_name(sl_arena *a, const sl_type *t);

/* Find a ROW field by name: exact match first, then a unique
 * case-insensitive match.  Returns the index or -1. */
int sl_type_find_field(const sl_type *row, const char *name);

#endif
