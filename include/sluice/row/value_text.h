/* value_text.h - one field of a row as text, and text into a field.
 *
 * Formatting follows what Flink's SQL client prints, so results can be
 * compared with Flink's byte for byte:
 *   BOOLEAN        TRUE / FALSE
 *   integers       decimal digits, '-' for negatives
 *   DECIMAL(p, s)  exactly s digits after the point: 908.000, -0.5, 0.05
 *   DOUBLE, FLOAT  Java's Double.toString / Float.toString: the shortest
 *                  digits that round-trip, plain notation for 1e-3 <= |x| <
 *                  1e7 (1.0, 0.5, 123.25), else scientific (1.0E7,
 *                  1.2345E-5); NaN, Infinity, -Infinity, -0.0
 *   strings        the bytes as they are
 *   DATE           yyyy-MM-dd
 *   TIME(p)        HH:mm:ss plus min(p, 3) fractional digits
 *   TIMESTAMP(p)   yyyy-MM-dd HH:mm:ss plus exactly p fractional digits
 *                  (TIMESTAMP(3): 2015-07-15 00:00:00.000); digits beyond
 *                  the stored microseconds print as 0.  TIMESTAMP_LTZ is
 *                  printed in UTC (sessions have no time zone yet).
 *   INTERVAL d-t   +D HH:mm:ss.fff (Flink's INTERVAL DAY TO SECOND(3)):
 *                  INTERVAL '10' SECOND is +0 00:00:10.000
 *   INTERVAL y-m   +Y-MM (INTERVAL '18' MONTH is +1-06)
 *
 * Parsing (CSV input) accepts what formatting produces and a little more:
 *   - leading/trailing blanks are ignored for every non-string type;
 *   - integers: optional sign, digits; out of range is an error;
 *   - DECIMAL: optional sign, digits, point, exponent (1.5E3); more
 *     fractional digits than the scale are rounded HALF_UP as Flink's
 *     DecimalData.fromBigDecimal does; more integer digits than p - s is an
 *     error (Flink would yield NULL; we prefer to say so);
 *   - DOUBLE/FLOAT: what strtod accepts, plus Java's NaN/Infinity;
 *   - BOOLEAN: true/false in any case (also 1/0);
 *   - TIMESTAMP: yyyy-MM-dd HH:mm:ss[.f...] or with 'T' between date and
 *     time, an optional trailing 'Z'; a bare date means midnight; fraction
 *     digits beyond microseconds are truncated;
 *   - DATE yyyy-MM-dd, TIME HH:mm:ss[.fff];
 *   - INTERVAL: the formats above, or a plain integer (milliseconds /
 *     months).
 * Errors say what was expected: "expected a BIGINT, got 'abc'".
 */
#ifndef SLUICE_VALUE_TEXT_H
#define SLUICE_VALUE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/row/row.h"

/* Room enough for the text of any non-string value, with its NUL. */
#define SL_VALUE_TEXT_MAX 64

/* Write the text of a non-string, non-NULL value of physical type p and SQL
 * type t stored at field into out (SL_VALUE_TEXT_MAX bytes); returns the
 * length.  For SL_P_STR it writes nothing and returns -1. */
int sl_value_format_scalar(char *out, const sl_type *t, sl_ptype p,
                           const void *field);

/* Append the text of field i of row (which must not be NULL) to b. */
void sl_value_append(sl_strbuf *b, const sl_row_layout *layout,
                     const uint8_t *row, int i);

/* Parse text[0..len) into field i of row (and clear its NULL bit).  Long
 * strings are copied into buf's heap: the caller makes sure there is room
 * (sl_buffer_has_room(buf, len)).  On error returns SL_EINVAL with a
 * message like "expected a BIGINT, got 'abc'" (err may be NULL). */
int sl_value_parse(const char *text, size_t len, const sl_row_layout *layout,
                   uint8_t *row, int i, sl_buffer *buf, sl_error *err);

/* 'yyyy-MM-dd[ HH:mm:ss[.fff]]' into microseconds since the epoch. */
bool sl_value_parse_timestamp(const char *text, size_t len, int64_t *us);

/* Calendar helpers, shared with the generators and the executor. */
int64_t sl_days_from_civil(int64_t year, int month, int day);
void sl_civil_from_days(int64_t days, int64_t *year, int *month, int *day);
/* The text of the date `days` after 1970-01-01: yyyy-MM-dd for the years
 * 0000..9999 (Flink's range for DATE and TIMESTAMP), ISO 8601's expanded
 * form outside it (a sign and at least four digits: -0001-12-31,
 * +10000-01-01, as Java's LocalDate prints them); returns the length
 * (out: at least 32 bytes). */
int sl_format_date(char *out, int64_t days);

#endif
