/* functions.c - the built-in function registry (functions.h).
 *
 * One const table, sorted by name, is the whole registry: it is the only
 * global of the front end and is never written.  Each entry's return-type
 * rule checks argument types and computes the result type with Flink's
 * rules (bind_types.c); evaluation lives in the runtime.
 */
#include "sluice/catalog/functions.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/catalog/type_rules.h"

/* ---- helpers for the rules ---------------------------------------------- */

static bool any_nullable(int n, const sl_type *const *args) {
  for (int i = 0; i < n; i++)
    if (!args[i]->not_null)
      return true;
  return false;
}

static sl_type *fail(sl_arena *a, sl_fn_check *chk, int arg, const char *what,
                     const sl_type *got) {
  chk->bad_arg = arg;
  chk->message = sl_arena_printf(a, "%s, got %s", what, sl_tp_msg(a, got));
  return NULL;
}

/* Check that every argument in [from, to) satisfies pred (NULL passes). */
#define REQUIRE(pred, from, to, what)                                          \
  do {                                                                         \
    for (int i_ = (from); i_ < (to) && i_ < nargs; i_++)                       \
      if (args[i_]->kind != SL_TYPE_NULL && !pred(args[i_]))                   \
        return fail(a, chk, i_, what, args[i_]);                               \
  } while (0)

static sl_type *result(sl_arena *a, sl_type_kind k, int nargs,
                       const sl_type *const *args) {
  return sl_tp(a, k, !any_nullable(nargs, args));
}

static bool is_exact(const sl_type *t) {
  return sl_type_is_integer(t) || t->kind == SL_TYPE_DECIMAL;
}
static bool is_ts(const sl_type *t) {
  return t->kind == SL_TYPE_TIMESTAMP || t->kind == SL_TYPE_TIMESTAMP_LTZ ||
         t->kind == SL_TYPE_DATE;
}
static bool is_ts_or_string(const sl_type *t) {
  return is_ts(t) || sl_type_is_string(t);
}
static bool is_bool(const sl_type *t) {
  return t->kind == SL_TYPE_BOOLEAN;
}
static bool is_any(const sl_type *t) {
  (void)t;
  return true;
}

/* ---- return-type rules -------------------------------------------------- */

/* MOD: Calcite's rule, the type of the second argument. */
static sl_type *rt_mod(sl_arena *a, int nargs, const sl_type *const *args,
                       sl_fn_check *chk) {
  REQUIRE(is_exact, 0, 2, "expects exact numeric arguments");
  const sl_type *r = args[1]->kind == SL_TYPE_NULL ? args[0] : args[1];
  return sl_tp_nullable(a, sl_tp_plain(a, r), !any_nullable(nargs, args));
}

static sl_type *rt_same_numeric(sl_arena *a, int nargs,
                                const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_numeric, 0, nargs, "expects a numeric argument");
  sl_type *t = sl_tp_plain(a, args[0]);
  t->not_null = !any_nullable(nargs, args);
  return t;
}

/* FLOOR/CEIL: DECIMAL(p, s) -> DECIMAL(p, 0); also FLOOR(ts TO unit). */
static sl_type *rt_floor(sl_arena *a, int nargs, const sl_type *const *args,
                         sl_fn_check *chk) {
  if (args[0]->kind != SL_TYPE_NULL && !sl_type_is_numeric(args[0]) &&
      !sl_type_is_temporal(args[0]))
    return fail(a, chk, 0, "expects a numeric or temporal argument", args[0]);
  sl_type *t = sl_tp_plain(a, args[0]);
  if (t->kind == SL_TYPE_DECIMAL)
    t->scale = 0;
  t->not_null = !any_nullable(nargs, args);
  return t;
}

/* ROUND(x [, n]): Flink's findRoundDecimalType with n unknown keeps the
 * decimal's type; ROUND(d) is DECIMAL(p - s + 1, 0). */
static sl_type *rt_round(sl_arena *a, int nargs, const sl_type *const *args,
                         sl_fn_check *chk) {
  REQUIRE(sl_type_is_numeric, 0, 1, "expects a numeric argument");
  REQUIRE(sl_type_is_integer, 1, 2, "expects an integer scale");
  sl_type *t = sl_tp_plain(a, args[0]);
  if (t->kind == SL_TYPE_DECIMAL && nargs == 1 && t->scale > 0) {
    t->precision = t->precision - t->scale + 1;
    if (t->precision > 38)
      t->precision = 38;
    t->scale = 0;
  }
  t->not_null = !any_nullable(nargs, args);
  return t;
}

static sl_type *rt_double(sl_arena *a, int nargs, const sl_type *const *args,
                          sl_fn_check *chk) {
  REQUIRE(sl_type_is_numeric, 0, nargs, "expects numeric arguments");
  return result(a, SL_TYPE_DOUBLE, nargs, args);
}

/* LOWER/UPPER/TRIM/LEFT/RIGHT/SUBSTRING: a VARCHAR as long as the input. */
static sl_type *rt_string_same(sl_arena *a, int nargs,
                               const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, 1, "expects a string argument");
  REQUIRE(sl_type_is_integer, 1, nargs, "expects integer arguments");
  int len = args[0]->kind == SL_TYPE_NULL ? -1 : args[0]->precision;
  sl_type *t = sl_type_varchar(a, len);
  t->not_null = !any_nullable(nargs, args);
  return t;
}

static sl_type *rt_trim(sl_arena *a, int nargs, const sl_type *const *args,
                        sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  const sl_type *s = args[0]; /* the string; then the characters to trim */
  sl_type *t = sl_type_varchar(a, s->kind == SL_TYPE_NULL ? -1 : s->precision);
  t->not_null = !any_nullable(nargs, args);
  return t;
}

/* Any number of string arguments -> STRING (nullable if any is). */
static sl_type *rt_strings_to_string(sl_arena *a, int nargs,
                                     const sl_type *const *args,
                                     sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  return result(a, SL_TYPE_VARCHAR, nargs, args);
}

/* CONCAT: VARCHAR of the summed lengths, STRING if any is unbounded. */
static sl_type *rt_concat(sl_arena *a, int nargs, const sl_type *const *args,
                          sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  int len = 0;
  for (int i = 0; i < nargs && len >= 0; i++) {
    if (args[i]->kind == SL_TYPE_NULL || args[i]->precision < 0)
      len = -1;
    else
      len += args[i]->precision;
  }
  sl_type *t = sl_type_varchar(a, len);
  t->not_null = !any_nullable(nargs, args);
  return t;
}

/* CONCAT_WS skips NULL values: only a NULL separator gives NULL. */
static sl_type *rt_concat_ws(sl_arena *a, int nargs, const sl_type *const *args,
                             sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  return sl_tp(a, SL_TYPE_VARCHAR, args[0]->not_null);
}

/* LPAD(s, n, pad) / SPLIT_INDEX(s, sep, i) / REGEXP_EXTRACT(s, re [, i]):
 * string, integer/string mixes, always nullable STRING. */
static sl_type *rt_pad(sl_arena *a, int nargs, const sl_type *const *args,
                       sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, 1, "expects a string first argument");
  REQUIRE(sl_type_is_integer, 1, 2, "expects an integer length");
  REQUIRE(sl_type_is_string, 2, 3, "expects a string padding");
  return sl_tp(a, SL_TYPE_VARCHAR, false);
}

static sl_type *rt_split_index(sl_arena *a, int nargs,
                               const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, 2, "expects string arguments");
  REQUIRE(sl_type_is_integer, 2, 3, "expects an integer index");
  return sl_tp(a, SL_TYPE_VARCHAR, false);
}

static sl_type *rt_regexp_extract(sl_arena *a, int nargs,
                                  const sl_type *const *args,
                                  sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, 2, "expects string arguments");
  REQUIRE(sl_type_is_integer, 2, 3, "expects a group index");
  return sl_tp(a, SL_TYPE_VARCHAR, false);
}

static sl_type *rt_regexp(sl_arena *a, int nargs, const sl_type *const *args,
                          sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  return result(a, SL_TYPE_BOOLEAN, nargs, args);
}

static sl_type *rt_int_of_string(sl_arena *a, int nargs,
                                 const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects string arguments");
  return result(a, SL_TYPE_INT, nargs, args);
}

static sl_type *rt_date_format(sl_arena *a, int nargs,
                               const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(is_ts_or_string, 0, 1, "expects a TIMESTAMP or a string to format");
  REQUIRE(sl_type_is_string, 1, 2, "expects a format string");
  return result(a, SL_TYPE_VARCHAR, nargs, args);
}

/* HOUR(ts), YEAR(d), ... and EXTRACT(unit FROM ts): BIGINT. */
static sl_type *rt_time_part(sl_arena *a, int nargs, const sl_type *const *args,
                             sl_fn_check *chk) {
  REQUIRE(sl_type_is_temporal, 0, nargs, "expects a DATE, TIME or TIMESTAMP");
  return result(a, SL_TYPE_BIGINT, nargs, args);
}

static sl_type *rt_extract(sl_arena *a, int nargs, const sl_type *const *args,
                           sl_fn_check *chk) {
  if (args[0]->kind != SL_TYPE_NULL && !sl_type_is_temporal(args[0]) &&
      !sl_type_is_interval(args[0]))
    return fail(a, chk, 0, "expects a temporal value or an interval", args[0]);
  return result(a, SL_TYPE_BIGINT, nargs, args);
}

static sl_type *rt_to_timestamp(sl_arena *a, int nargs,
                                const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects strings");
  sl_type *t = sl_type_timestamp(a, 3);
  t->not_null = false; /* unparsable input gives NULL */
  return t;
}

static sl_type *rt_unix_timestamp(sl_arena *a, int nargs,
                                  const sl_type *const *args,
                                  sl_fn_check *chk) {
  REQUIRE(sl_type_is_string, 0, nargs, "expects strings");
  return sl_tp(a, SL_TYPE_BIGINT, nargs == 0);
}

static sl_type *rt_from_unixtime(sl_arena *a, int nargs,
                                 const sl_type *const *args, sl_fn_check *chk) {
  REQUIRE(sl_type_is_integer, 0, 1, "expects epoch seconds");
  REQUIRE(sl_type_is_string, 1, 2, "expects a format string");
  return result(a, SL_TYPE_VARCHAR, nargs, args);
}

static sl_type *rt_proctime(sl_arena *a, int nargs, const sl_type *const *args,
                            sl_fn_check *chk) {
  (void)nargs, (void)args, (void)chk;
  sl_type *t = sl_tp(a, SL_TYPE_TIMESTAMP_LTZ, true);
  t->precision = 3;
  t->time_attr = SL_TIME_PROCTIME;
  return t;
}

static sl_type *rt_now_ltz(sl_arena *a, int nargs, const sl_type *const *args,
                           sl_fn_check *chk) {
  (void)nargs, (void)args, (void)chk;
  sl_type *t = sl_tp(a, SL_TYPE_TIMESTAMP_LTZ, true);
  t->precision = 3;
  return t;
}

static sl_type *rt_localtimestamp(sl_arena *a, int nargs,
                                  const sl_type *const *args,
                                  sl_fn_check *chk) {
  (void)nargs, (void)args, (void)chk;
  sl_type *t = sl_type_timestamp(a, 3);
  t->not_null = true;
  return t;
}

static sl_type *common_or_fail(sl_arena *a, int n, const sl_type *const *types,
                               sl_fn_check *chk) {
  sl_type *t = sl_tp_common(a, n, types);
  if (!t) {
    chk->bad_arg = -1;
    sl_strbuf b = SL_STRBUF_INIT;
    for (int i = 0; i < n; i++) {
      if (i)
        sl_strbuf_append(&b, ", ");
      sl_strbuf_append(&b, sl_tp_msg(a, types[i]));
    }
    chk->message = sl_arena_printf(a, "arguments have no common type: %s",
                                   sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
  }
  return t;
}

/* COALESCE: common type, NOT NULL if any argument is. */
static sl_type *rt_coalesce(sl_arena *a, int nargs, const sl_type *const *args,
                            sl_fn_check *chk) {
  sl_type *t = common_or_fail(a, nargs, args, chk);
  if (t) {
    t->not_null = false;
    for (int i = 0; i < nargs; i++)
      if (args[i]->not_null)
        t->not_null = true;
  }
  return t;
}

static sl_type *rt_nullif(sl_arena *a, int nargs, const sl_type *const *args,
                          sl_fn_check *chk) {
  if (!sl_tp_comparable(args[0], args[1]))
    return fail(a, chk, 1, "arguments must be comparable", args[1]);
  (void)nargs;
  return sl_tp_nullable(a, sl_tp_plain(a, args[0]), false);
}

static sl_type *rt_if(sl_arena *a, int nargs, const sl_type *const *args,
                      sl_fn_check *chk) {
  REQUIRE(is_bool, 0, 1, "expects a BOOLEAN condition");
  return common_or_fail(a, 2, args + 1, chk);
}

static sl_type *rt_hash_code(sl_arena *a, int nargs, const sl_type *const *args,
                             sl_fn_check *chk) {
  REQUIRE(is_any, 0, nargs, "");
  return result(a, SL_TYPE_INT, nargs, args);
}

static sl_type *rt_count(sl_arena *a, int nargs, const sl_type *const *args,
                         sl_fn_check *chk) {
  (void)nargs, (void)args, (void)chk;
  return sl_tp(a, SL_TYPE_BIGINT, true);
}

static sl_type *rt_sum(sl_arena *a, int nargs, const sl_type *const *args,
                       sl_fn_check *chk) {
  REQUIRE(sl_type_is_numeric, 0, nargs, "expects a numeric argument");
  return sl_tp_sum(a, args[0]);
}

static sl_type *rt_avg(sl_arena *a, int nargs, const sl_type *const *args,
                       sl_fn_check *chk) {
  REQUIRE(sl_type_is_numeric, 0, nargs, "expects a numeric argument");
  return sl_tp_avg(a, args[0]);
}

static bool is_orderable(const sl_type *t) {
  return t->kind != SL_TYPE_ROW;
}

static sl_type *rt_minmax(sl_arena *a, int nargs, const sl_type *const *args,
                          sl_fn_check *chk) {
  REQUIRE(is_orderable, 0, nargs, "MIN/MAX expect a comparable argument");
  return sl_tp_nullable(a, sl_tp_plain(a, args[0]), false);
}

static sl_type *rt_rank(sl_arena *a, int nargs, const sl_type *const *args,
                        sl_fn_check *chk) {
  (void)nargs, (void)args, (void)chk;
  return sl_tp(a, SL_TYPE_BIGINT, true);
}

/* TUMBLE_START(ts, size) etc.: the binder replaces the type by the group
 * window's (TIMESTAMP(3), or *ROWTIME* / *PROCTIME* for the *_ROWTIME /
 * *_PROCTIME variants); this rule only checks the time argument. */
static sl_type *rt_group_aux(sl_arena *a, int nargs, const sl_type *const *args,
                             sl_fn_check *chk) {
  REQUIRE(is_ts, 0, 1, "expects the group window's time attribute");
  sl_type *t = sl_type_timestamp(a, 3);
  t->not_null = true;
  return t;
}

/* ---- the table ---------------------------------------------------------- */

#define SCALAR(n, lo, hi, rt, sig, desc)                                       \
  { n, SL_FN_SCALAR, lo, hi, rt, sig, desc, SL_AGG_STATE_NONE, 0, 0 }
#define AGG(n, lo, hi, rt, state, sig, desc)                                   \
  { n, SL_FN_AGGREGATE, lo, hi, rt, sig, desc, state, 0, 0 }
#define RANKING(n, sig, desc)                                                  \
  { n, SL_FN_WINDOW, 0, 0, rt_rank, sig, desc, SL_AGG_STATE_NONE, 0, 0 }
#define TVF(n, lo, hi, w, sig, desc)                                           \
  { n, SL_FN_WINDOW_TVF, lo, hi, NULL, sig, desc, SL_AGG_STATE_NONE, w, 0 }
#define AUX(n, lo, hi, w, p, desc)                                             \
  {                                                                            \
    n, SL_FN_GROUP_AUX, lo, hi, rt_group_aux, n "(time_attr, ...)", desc,      \
        SL_AGG_STATE_NONE, w, p                                                \
  }

/* Sorted by name as strcasecmp orders them ('_' sorts before letters);
 * the unit test checks it. */
static const sl_function registry[] = {
    SCALAR("ABS", 1, 1, rt_same_numeric, "ABS(n)", "absolute value of n"),
    AGG("AVG", 1, 1, rt_avg, SL_AGG_STATE_SUM_COUNT, "AVG([DISTINCT] n)",
        "average of n (BIGINT for integer input, as in Flink)"),
    SCALAR("CEIL", 1, 2, rt_floor, "CEIL(n)",
           "smallest integer not less than n"),
    SCALAR("CHAR_LENGTH", 1, 1, rt_int_of_string, "CHAR_LENGTH(s)",
           "number of characters in s"),
    SCALAR("CHARACTER_LENGTH", 1, 1, rt_int_of_string, "CHARACTER_LENGTH(s)",
           "number of characters in s"),
    SCALAR("COALESCE", 1, -1, rt_coalesce, "COALESCE(v1, v2, ...)",
           "the first argument that is not NULL"),
    SCALAR("CONCAT", 1, -1, rt_concat, "CONCAT(s1, s2, ...)",
           "the strings concatenated (NULL if any is NULL)"),
    SCALAR("CONCAT_WS", 2, -1, rt_concat_ws, "CONCAT_WS(sep, s1, s2, ...)",
           "the strings joined by sep, skipping NULLs"),
    AGG("COUNT", 0, 1, rt_count, SL_AGG_STATE_COUNTER,
        "COUNT(*) | COUNT([DISTINCT] x)",
        "number of rows (or of non-NULL x) in the group"),
    TVF("CUMULATE", 3, 5, SL_WINDOW_CUMULATE,
        "CUMULATE(TABLE t, DESCRIPTOR(ts), step, size)",
        "window TVF: windows growing by step up to size"),
    SCALAR("CURRENT_TIMESTAMP", 0, 0, rt_now_ltz, "CURRENT_TIMESTAMP",
           "the current time as TIMESTAMP_LTZ(3)"),
    SCALAR("DATE_FORMAT", 2, 2, rt_date_format, "DATE_FORMAT(ts, 'yyyy-MM-dd')",
           "format a timestamp with a Java date pattern"),
    SCALAR("DAYOFMONTH", 1, 1, rt_time_part, "DAYOFMONTH(d)",
           "day of the month (1-31)"),
    RANKING("DENSE_RANK", "DENSE_RANK() OVER (...)",
            "rank within the partition, without gaps"),
    SCALAR("EXP", 1, 1, rt_double, "EXP(n)", "e raised to the power n"),
    SCALAR("EXTRACT", 1, 1, rt_extract, "EXTRACT(unit FROM ts)",
           "a field (YEAR, MONTH, DAY, HOUR, ...) of a timestamp"),
    SCALAR("FLOOR", 1, 2, rt_floor, "FLOOR(n)",
           "largest integer not greater than n"),
    SCALAR("FROM_UNIXTIME", 1, 2, rt_from_unixtime,
           "FROM_UNIXTIME(seconds [, format])",
           "epoch seconds formatted as a string"),
    SCALAR("HASH_CODE", 1, 1, rt_hash_code, "HASH_CODE(x)", "an INT hash of x"),
    TVF("HOP", 4, 5, SL_WINDOW_HOP,
        "HOP(TABLE t, DESCRIPTOR(ts), slide, size) | GROUP BY HOP(ts, slide, "
        "size)",
        "hopping (sliding) windows of size every slide"),
    AUX("HOP_END", 3, 3, SL_WINDOW_HOP, SL_WPROP_END,
        "end of the GROUP BY HOP window"),
    AUX("HOP_PROCTIME", 3, 3, SL_WINDOW_HOP, SL_WPROP_PROCTIME,
        "proctime attribute of the GROUP BY HOP window"),
    AUX("HOP_ROWTIME", 3, 3, SL_WINDOW_HOP, SL_WPROP_ROWTIME,
        "rowtime attribute of the GROUP BY HOP window"),
    AUX("HOP_START", 3, 3, SL_WINDOW_HOP, SL_WPROP_START,
        "start of the GROUP BY HOP window"),
    SCALAR("HOUR", 1, 1, rt_time_part, "HOUR(ts)", "hour of the day (0-23)"),
    SCALAR("IF", 3, 3, rt_if, "IF(cond, a, b)", "a if cond is TRUE, else b"),
    SCALAR("LEFT", 2, 2, rt_string_same, "LEFT(s, n)",
           "the leftmost n characters of s"),
    SCALAR("LN", 1, 1, rt_double, "LN(n)", "natural logarithm"),
    SCALAR("LOCALTIMESTAMP", 0, 0, rt_localtimestamp, "LOCALTIMESTAMP",
           "the current local time as TIMESTAMP(3)"),
    SCALAR("LOG10", 1, 1, rt_double, "LOG10(n)", "base-10 logarithm"),
    SCALAR("LOWER", 1, 1, rt_string_same, "LOWER(s)", "s in lower case"),
    SCALAR("LPAD", 3, 3, rt_pad, "LPAD(s, n, pad)",
           "s left-padded with pad to n characters"),
    AGG("MAX", 1, 1, rt_minmax, SL_AGG_STATE_SEMILATTICE, "MAX(x)",
        "largest x in the group"),
    AGG("MIN", 1, 1, rt_minmax, SL_AGG_STATE_SEMILATTICE, "MIN(x)",
        "smallest x in the group"),
    SCALAR("MINUTE", 1, 1, rt_time_part, "MINUTE(ts)", "minute (0-59)"),
    SCALAR("MOD", 2, 2, rt_mod, "MOD(a, b)", "remainder of a divided by b"),
    SCALAR("MONTH", 1, 1, rt_time_part, "MONTH(d)", "month (1-12)"),
    SCALAR("NOW", 0, 0, rt_now_ltz, "NOW()",
           "the current time as TIMESTAMP_LTZ(3)"),
    SCALAR("NULLIF", 2, 2, rt_nullif, "NULLIF(a, b)", "NULL if a = b, else a"),
    SCALAR("POSITION", 2, 2, rt_int_of_string, "POSITION(s1 IN s2)",
           "1-based position of s1 in s2, 0 if absent"),
    SCALAR("POWER", 2, 2, rt_double, "POWER(a, b)", "a raised to the power b"),
    SCALAR("PROCTIME", 0, 0, rt_proctime, "PROCTIME()",
           "processing-time attribute (TIMESTAMP_LTZ(3) *PROCTIME*)"),
    RANKING("RANK", "RANK() OVER (...)",
            "rank within the partition, with gaps"),
    SCALAR("REGEXP", 2, 2, rt_regexp, "REGEXP(s, regex)",
           "TRUE if s matches the regular expression"),
    SCALAR("REGEXP_EXTRACT", 2, 3, rt_regexp_extract,
           "REGEXP_EXTRACT(s, regex [, group])",
           "the text of a regex group in s"),
    SCALAR("REGEXP_REPLACE", 3, 3, rt_strings_to_string,
           "REGEXP_REPLACE(s, regex, replacement)",
           "s with every match of regex replaced"),
    SCALAR("REPLACE", 3, 3, rt_strings_to_string, "REPLACE(s, from, to)",
           "s with every occurrence of from replaced by to"),
    SCALAR("RIGHT", 2, 2, rt_string_same, "RIGHT(s, n)",
           "the rightmost n characters of s"),
    SCALAR("ROUND", 1, 2, rt_round, "ROUND(n [, d])",
           "n rounded to d decimal places"),
    RANKING("ROW_NUMBER", "ROW_NUMBER() OVER (...)",
            "sequential number of the row within the partition"),
    SCALAR("RPAD", 3, 3, rt_pad, "RPAD(s, n, pad)",
           "s right-padded with pad to n characters"),
    SCALAR("SECOND", 1, 1, rt_time_part, "SECOND(ts)", "second (0-59)"),
    TVF("SESSION", 3, 3, SL_WINDOW_SESSION,
        "SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), gap) | GROUP BY "
        "SESSION(ts, gap)",
        "session windows closed by a gap of inactivity"),
    AUX("SESSION_END", 2, 2, SL_WINDOW_SESSION, SL_WPROP_END,
        "end of the GROUP BY SESSION window"),
    AUX("SESSION_PROCTIME", 2, 2, SL_WINDOW_SESSION, SL_WPROP_PROCTIME,
        "proctime attribute of the GROUP BY SESSION window"),
    AUX("SESSION_ROWTIME", 2, 2, SL_WINDOW_SESSION, SL_WPROP_ROWTIME,
        "rowtime attribute of the GROUP BY SESSION window"),
    AUX("SESSION_START", 2, 2, SL_WINDOW_SESSION, SL_WPROP_START,
        "start of the GROUP BY SESSION window"),
    SCALAR("SPLIT_INDEX", 3, 3, rt_split_index, "SPLIT_INDEX(s, sep, i)",
           "the i-th (0-based) piece of s split at sep, or NULL"),
    SCALAR("SQRT", 1, 1, rt_double, "SQRT(n)", "square root"),
    SCALAR("SUBSTR", 2, 3, rt_string_same, "SUBSTR(s, start [, len])",
           "part of s from 1-based start"),
    SCALAR("SUBSTRING", 2, 3, rt_string_same,
           "SUBSTRING(s FROM start [FOR len])", "part of s from 1-based start"),
    AGG("SUM", 1, 1, rt_sum, SL_AGG_STATE_COUNTER, "SUM([DISTINCT] n)",
        "sum of n in the group"),
    SCALAR("TO_TIMESTAMP", 1, 2, rt_to_timestamp, "TO_TIMESTAMP(s [, format])",
           "parse s ('yyyy-MM-dd HH:mm:ss' by default) as TIMESTAMP(3)"),
    SCALAR("TRIM", 1, 2, rt_trim, "TRIM([BOTH|LEADING|TRAILING] [c] FROM s)",
           "s without leading/trailing c (default space)"),
    TVF("TUMBLE", 3, 4, SL_WINDOW_TUMBLE,
        "TUMBLE(TABLE t, DESCRIPTOR(ts), size) | GROUP BY TUMBLE(ts, size)",
        "tumbling (fixed, non-overlapping) windows of size"),
    AUX("TUMBLE_END", 2, 2, SL_WINDOW_TUMBLE, SL_WPROP_END,
        "end of the GROUP BY TUMBLE window"),
    AUX("TUMBLE_PROCTIME", 2, 2, SL_WINDOW_TUMBLE, SL_WPROP_PROCTIME,
        "proctime attribute of the GROUP BY TUMBLE window"),
    AUX("TUMBLE_ROWTIME", 2, 2, SL_WINDOW_TUMBLE, SL_WPROP_ROWTIME,
        "rowtime attribute of the GROUP BY TUMBLE window"),
    AUX("TUMBLE_START", 2, 2, SL_WINDOW_TUMBLE, SL_WPROP_START,
        "start of the GROUP BY TUMBLE window"),
    SCALAR("UNIX_TIMESTAMP", 0, 2, rt_unix_timestamp,
           "UNIX_TIMESTAMP([s [, format]])",
           "epoch seconds, now or of the time string s"),
    SCALAR("UPPER", 1, 1, rt_string_same, "UPPER(s)", "s in upper case"),
    SCALAR("YEAR", 1, 1, rt_time_part, "YEAR(d)", "the year"),
};

#define NFUNCTIONS ((int)(sizeof registry / sizeof registry[0]))

const sl_function *sl_function_find(const char *name) {
  if (!name)
    return NULL;
  int lo = 0, hi = NFUNCTIONS - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = strcasecmp(name, registry[mid].name);
    if (c == 0)
      return &registry[mid];
    if (c < 0)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return NULL;
}

int sl_function_count(void) {
  return NFUNCTIONS;
}

const sl_function *sl_function_at(int i) {
  return (i >= 0 && i < NFUNCTIONS) ? &registry[i] : NULL;
}

const char *sl_function_suggest(const char *name) {
  const char *names[NFUNCTIONS];
  for (int i = 0; i < NFUNCTIONS; i++)
    names[i] = registry[i].name;
  return sl_closest_name(name, names, NFUNCTIONS);
}

sl_agg_state sl_function_agg_state(const sl_function *fn, bool distinct) {
  if (!fn || fn->kind != SL_FN_AGGREGATE)
    return SL_AGG_STATE_NONE;
  return distinct ? SL_AGG_STATE_GSET : fn->state;
}

const char *sl_agg_state_name(sl_agg_state s) {
  switch (s) {
  case SL_AGG_STATE_COUNTER:
    return "counter";
  case SL_AGG_STATE_SEMILATTICE:
    return "semilattice";
  case SL_AGG_STATE_SUM_COUNT:
    return "sum+count";
  case SL_AGG_STATE_GSET:
    return "grow-only set";
  case SL_AGG_STATE_NOT_MERGEABLE:
    return "not mergeable";
  default:
    return "";
  }
}

const char *sl_window_kind_name(sl_window_kind k) {
  switch (k) {
  case SL_WINDOW_TUMBLE:
    return "TUMBLE";
  case SL_WINDOW_HOP:
    return "HOP";
  case SL_WINDOW_CUMULATE:
    return "CUMULATE";
  default:
    return "SESSION";
  }
}

int sl_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) /* names are short; avoid big buffers */
    return (int)(la > lb ? la : lb);
  int prev[65], cur[65];
  for (size_t j = 0; j <= lb; j++)
    prev[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cost =
          tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1])
              ? 0
              : 1;
      int best = prev[j - 1] + cost;
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      cur[j] = best;
    }
    memcpy(prev, cur, sizeof(int) * (lb + 1));
  }
  return prev[lb];
}

const char *sl_closest_name(const char *name, const char *const *candidates,
                            int n) {
  if (!name)
    return NULL;
  int len = (int)strlen(name);
  int limit = len / 3 > 1 ? len / 3 : 1;
  const char *best = NULL;
  int best_d = limit + 1;
  for (int i = 0; i < n; i++) {
    if (!candidates[i])
      continue;
    int d = sl_edit_distance(name, candidates[i]);
    if (d < best_d) {
      best_d = d;
      best = candidates[i];
    }
  }
  return best;
}
