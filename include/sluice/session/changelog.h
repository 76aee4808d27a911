/* changelog.h - the row kinds of an updating result, as Flink spells them.
 *
 * A query whose result changes as input arrives (a GROUP BY without a
 * window) produces a changelog: every row says what it does to the result
 * table.  +I inserts a row, -U and +U are the old and the new version of
 * an updated row (always adjacent, -U first), -D deletes a row.  Folding a
 * changelog into a table: +I and +U add their row, -U and -D remove one
 * row equal to theirs.  The runtime writes the kind as the first column of
 * each result row, a short string named `op` (sl_plan.changelog).
 */
#ifndef SLUICE_CHANGELOG_H
#define SLUICE_CHANGELOG_H

#include <stdbool.h>
#include <string.h>

typedef enum sl_changelog_op {
  SL_OP_INSERT = 0,        /* +I */
  SL_OP_UPDATE_BEFORE = 1, /* -U */
  SL_OP_UPDATE_AFTER = 2,  /* +U */
  SL_OP_DELETE = 3,        /* -D */
} sl_changelog_op;

/* The column's name. */
#define SL_CHANGELOG_COLUMN "op"

static inline const char *sl_changelog_op_name(sl_changelog_op op) {
  return &"+I\0-U\0+U\0-D"[3 * (op & 3)];
}

/* The kind named by text ("+I", ...); false when it is none of them. */
static inline bool sl_changelog_op_parse(const char *text,
                                         sl_changelog_op *op) {
  for (int i = 0; i < 4; i++)
    if (text && strcmp(text, sl_changelog_op_name((sl_changelog_op)i)) == 0) {
      *op = (sl_changelog_op)i;
      return true;
    }
  return false;
}

/* Does a row of this kind add its row to the result (+I, +U), or remove
 * one equal to it (-U, -D)? */
static inline bool sl_changelog_op_adds(sl_changelog_op op) {
  return op == SL_OP_INSERT || op == SL_OP_UPDATE_AFTER;
}

#endif
