/* error.c - filling and clearing sl_error records. */
#include "sluice/common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    n = 0;
  char *p = malloc((size_t)n + 1);
  if (!p)
    abort();
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

void sl_error_clear(sl_error *err) {
  if (!err)
    return;
  free(err->message);
  free(err->cause);
  memset(err, 0, sizeof *err);
  err->offset = -1;
}

int sl_error_set(sl_error *err, int code, const char *fmt, ...) {
  if (!err)
    return code;
  sl_error_clear(err);
  err->code = code;
  va_list ap;
  va_start(ap, fmt);
  err->message = vformat(fmt, ap);
  va_end(ap);
  return code;
}

int sl_error_set_at(sl_error *err, int code, int line, int column, int offset,
                    int length, const char *fmt, ...) {
  if (!err)
    return code;
  sl_error_clear(err);
  err->code = code;
  err->line = line;
  err->column = column;
  err->offset = offset;
  err->length = length;
  va_list ap;
  va_start(ap, fmt);
  err->message = vformat(fmt, ap);
  va_end(ap);
  return code;
}

void sl_error_set_cause(sl_error *err, const char *cause) {
  if (!err)
    return;
  free(err->cause);
  err->cause = cause ? strdup(cause) : NULL;
}

void sl_error_move(sl_error *dst, sl_error *src) {
  if (!dst) {
    sl_error_clear(src);
    return;
  }
  sl_error_clear(dst);
  *dst = *src;
  memset(src, 0, sizeof *src);
  src->offset = -1;
}

const char *sl_error_kind(int code) {
  switch (code) {
  case SL_OK:
    return "ok";
  case SL_ESYNTAX:
    return "syntax error";
  case SL_EBIND:
    return "binder error";
  case SL_ECATALOG:
    return "catalog error";
  case SL_EUNSUPPORTED:
    return "not supported";
  case SL_EIO:
    return "I/O error";
  case SL_ENOMEM:
    return "out of memory";
  case SL_EINVAL:
    return "invalid argument";
  case SL_ECANCELLED:
    return "cancelled";
  case SL_EPERM:
    return "permission denied";
  default:
    return "internal error";
  }
}
