/* type_rules.h - Flink's typing rules, shared by the binder and the
 * function registry (internal to parser/; see bind_types.c for the rules). */
#ifndef SLUICE_BIND_TYPES_H
#define SLUICE_BIND_TYPES_H

#include <stdbool.h>

#include "sluice/common/arena.h"
#include "sluice/common/types.h"
#include "sluice/parser/ast.h"

/* A fresh type of kind, with the given nullability. */
sl_type *sl_tp(sl_arena *a, sl_type_kind kind, bool not_null);
/* A copy of t with its time attribute removed (any computed value). */
sl_type *sl_tp_plain(sl_arena *a, const sl_type *t);
/* A copy of t with nullability set. */
sl_type *sl_tp_nullable(sl_arena *a, const sl_type *t, bool not_null);

/* The DECIMAL(p, s) an exact numeric type converts to (BIGINT ->
 * DECIMAL(19, 0)); t must be an integer or DECIMAL. */
void sl_tp_decimal_of(const sl_type *t, int *p, int *s);

/* Type of an integer literal (INT, else BIGINT) or of a decimal literal
 * (DECIMAL(digits, digits after '.')); NULL when it does not fit. */
sl_type *sl_tp_integer_literal(sl_arena *a, const char *text);
sl_type *sl_tp_decimal_literal(sl_arena *a, const char *text);

/* Result of l op r for +, -, *, /, % (and ||), or NULL when the operator
 * does not apply to those types. */
sl_type *sl_tp_arith(sl_arena *a, sl_op op, const sl_type *l, const sl_type *r);

/* May l and r be compared (=, <, ...)?  eq: only equality (ROW, BOOLEAN
 * order is still allowed as in Flink). */
bool sl_tp_comparable(const sl_type *l, const sl_type *r);

/* The least restrictive common type of n types (CASE, COALESCE, UNION,
 * VALUES, IN lists), or NULL if they have none. */
sl_type *sl_tp_common(sl_arena *a, int n, const sl_type *const *types);

/* Is CAST(from AS to) allowed?  On false, *hint may name an alternative. */
bool sl_tp_castable(const sl_type *from, const sl_type *to, const char **hint);

/* Can a value of type src be written into a column of type dst (INSERT,
 * view column lists)?  Same family, without loss being checked (Flink
 * casts implicitly within numeric and within string families). */
bool sl_tp_assignable(const sl_type *dst, const sl_type *src);

/* A type as error messages name it: no NOT NULL or time attribute, and an
 * unbounded string is "VARCHAR" (arena string). */
const char *sl_tp_msg(sl_arena *a, const sl_type *t);

/* Aggregate result types (Flink's SumAggFunction / AvgAggFunction). */
sl_type *sl_tp_sum(sl_arena *a, const sl_type *arg);
sl_type *sl_tp_avg(sl_arena *a, const sl_type *arg);

#endif
