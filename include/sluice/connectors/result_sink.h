/* result_sink.h - where a statement's results go: the interface between
 * the engine and whoever shows or keeps them (the shell's output modes, a
 * node's link back to its coordinator, tests).  The shell sink connector
 * (connectors/sinks/sink_shell.c) turns rows into text cells for it; the
 * executor reports progress through it.  Below the session, so that the
 * layers that produce results need not include the session. */
#ifndef SLUICE_RESULT_SINK_H
#define SLUICE_RESULT_SINK_H

#include <stdbool.h>

#include "sluice/common/types.h"

/* Where results go.  Every callback returns SL_OK or an error code (which
 * stops the statement).  A statement produces zero or more result sets
 * (begin, row*, flush*, end) and zero or more text blocks, in order. */
typedef struct sl_result_sink {
  void *ctx;
  /* A result set with ncols columns begins. */
  int (*begin)(void *ctx, int ncols, const char *const *names,
               const sl_type *const *types);
  /* One row; cells[i] is the text of column i, or NULL for SQL NULL.  A
   * cell is a C string, so a NUL character inside a value (a STRING may
   * hold one, as Flink's does) comes as SL_CELL_NUL; each output mode
   * shows it its own way (shell/output*.c). */
  int (*row)(void *ctx, const char *const *cells);
  /* The rows so far form a complete group (e.g. a fired window): a buffering
   * output mode may print them now.  Optional (may be NULL). */
  int (*flush)(void *ctx);
  /* The result set is complete. */
  int (*end)(void *ctx);
  /* Free-form text, e.g. EXPLAIN output: printed as is. */
  int (*text)(void *ctx, const char *text);
  /* A notice for the user (not a result): "[INFO] Table has been created.",
   * warnings.  The shell prints these on stderr. Optional. */
  int (*notice)(void *ctx, const char *text);
  /* A one-line status of a running query (events/s, watermark, ...),
   * called a few times a second; NULL clears it.  A terminal redraws it in
   * place; it is never part of the results.  Optional. */
  int (*progress)(void *ctx, const char *line);
  /* An updating result shown as a table redraws its current state.
   * erase = false: may it show intermediate states at all (SL_OK on a
   * terminal; anything else: only the final state is printed)?  erase =
   * true: the next result set replaces the one this result printed last,
   * which the output erases when it still can (nothing printed after it,
   * and it fits on the screen).  Optional (NULL: cannot). */
  int (*replace)(void *ctx, bool erase);
} sl_result_sink;

/* U+0000 inside a cell: the two bytes Java's "modified UTF-8" (JNI,
 * DataOutput.writeUTF) spells it with, which valid UTF-8 never holds (an
 * overlong form), so a cell stays a C string and no text is ambiguous. */
#define SL_CELL_NUL "\xC0\x80"

#endif
