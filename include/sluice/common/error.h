/* error.h - the error record every fallible function fills.
 *
 * Functions that can fail return an int status (SL_OK == 0 on success, a
 * negative SL_E* code otherwise) and fill a caller-owned sl_error.  The
 * message says what went wrong and, where it helps, what to do about it.
 * The position (line/column, 1-based; 0 = unknown) points into the text the
 * user typed, so the shell can echo the line with a caret under it.
 *
 * Ownership: sl_error owns its message and cause strings (heap); release
 * them with sl_error_clear().  A zero-initialised sl_error is "no error".
 */
#ifndef SLUICE_ERROR_H
#define SLUICE_ERROR_H

#include <stddef.h>

enum {
  SL_OK = 0,
  SL_ESYNTAX = -1,      /* the text does not parse */
  SL_EBIND = -2,        /* parses, but names/types are wrong */
  SL_ECATALOG = -3,     /* table exists / does not exist ... */
  SL_EUNSUPPORTED = -4, /* valid SQL that Sluice does not run (yet) */
  SL_EIO = -5,          /* file or socket error */
  SL_ENOMEM = -6,       /* allocation failed */
  SL_EINVAL = -7,       /* bad argument or option value */
  SL_EINTERNAL = -8,    /* a bug in Sluice: please report */
  SL_ECANCELLED = -9,   /* the user cancelled (Ctrl-C) */
  SL_EPERM = -10,       /* refused: the peer did not prove the secret */
};

typedef struct sl_error {
  int code;      /* one of the SL_E* values; SL_OK when clear */
  char *message; /* what went wrong (heap, owned) */
  char *cause;   /* optional underlying cause, e.g. strerror (heap, owned) */
  int line;      /* 1-based line of the offending text, 0 if unknown */
  int column;    /* 1-based column (in bytes), 0 if unknown */
  int offset;    /* 0-based byte offset of the offending text, -1 if unknown */
  int length;    /* length in bytes of the offending text (for carets) */
} sl_error;

/* Set err (replacing any earlier contents) from a printf format.  Returns
 * code, so callers can write `return sl_error_set(err, SL_EBIND, ...)`.
 * err may be NULL (the error is then dropped). */
int sl_error_set(sl_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, with a source position (line, column, offset, length). */
int sl_error_set_at(sl_error *err, int code, int line, int column, int offset,
                    int length, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Attach an underlying cause (copied). */
void sl_error_set_cause(sl_error *err, const char *cause);

/* Free the strings and reset to "no error". */
void sl_error_clear(sl_error *err);

/* Move src into dst (dst cleared first); src becomes clear. */
void sl_error_move(sl_error *dst, sl_error *src);

/* A short name for a code: "syntax error", "binder error", ... */
const char *sl_error_kind(int code);

#endif
