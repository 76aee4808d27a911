/* shell.c - the shell's state: the session, where output goes, the .timer
 * and .bail switches, and how errors are reported and counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "signals_int.h"
#include "sluice/shell/shell.h"

sl_shell *sl_shell_new(FILE *console, FILE *errors, sl_output_mode mode,
                       bool headers, bool bail, bool interactive) {
  sl_shell *sh = calloc(1, sizeof *sh);
  if (!sh)
    return NULL;
  sh->session = sl_session_new();
  if (!sh->session) {
    free(sh);
    return NULL;
  }
  sh->console = console;
  sh->errors = errors;
  sh->bail = bail;
  sh->interactive = interactive;
  sl_cancel_init(&sh->cancel, NULL);
  sl_session_set_cancel(sh->session, &sh->cancel);
  sl_output_init(&sh->out, console, mode, headers);
  sh->out.notices = errors;
  sh->out.stop = &sh->cancel;
  return sh;
}

void sl_shell_free(sl_shell *sh) {
  if (!sh)
    return;
  sl_signals_forget(&sh->cancel);
  sl_shell_set_output(sh, NULL, NULL);
  sl_output_free(&sh->out);
  sl_session_free(sh->session);
  free(sh);
}

bool sl_shell_set_output(sl_shell *sh, const char *path, sl_error *err) {
  FILE *fp = NULL;
  if (path) {
    fp = fopen(path, "w");
    if (!fp) {
      sl_error_set(err, SL_EIO, "cannot open \"%s\" for writing: %s", path,
                   strerror(errno));
      return false;
    }
  }
  if (sh->out_file) {
    /* A failure while closing loses buffered rows: say so. */
    if (fclose(sh->out_file) != 0 && sh->errors)
      fprintf(sh->errors, "Error: writing to \"%s\" failed: %s\n", sh->out_path,
              strerror(errno));
  } else {
    fflush(sh->console);
  }
  free(sh->out_path);
  sh->out_file = fp;
  sh->out_path = path ? strdup(path) : NULL;
  sh->out.fp = fp ? fp : sh->console;
  sh->out.write_errno = 0;
  return true;
}

void sl_shell_report(sl_shell *sh, const char *source, int stmt_line,
                     const sl_error *err, const char *text, size_t len,
                     int first_line) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_error_render(&b, source, stmt_line, err, text, len, first_line);
  /* Results first, so stdout and stderr interleave in order. */
  fflush(sh->out.fp);
  fputs(sl_strbuf_cstr(&b), sh->errors);
  fflush(sh->errors);
  sl_strbuf_free(&b);
  sh->nerrors++;
}

int sl_shell_where(const sl_shell *sh, const char *source, int line) {
  return source || !sh->interactive ? line : 0;
}

void sl_shell_errorf(sl_shell *sh, const char *source, int line,
                     const char *fmt, ...) {
  sl_error err = {0};
  err.offset = -1;
  sl_strbuf msg = SL_STRBUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  sl_strbuf_vprintf(&msg, fmt, ap);
  va_end(ap);
  err.code = SL_EINVAL;
  err.message = sl_strbuf_detach(&msg);
  sl_shell_report(sh, source, sl_shell_where(sh, source, line), &err, NULL, 0,
                  0);
  sl_error_clear(&err);
}

bool sl_shell_check_output(sl_shell *sh, const char *source, int line) {
  if (!sh->out.write_errno && fflush(sh->out.fp) != 0)
    sh->out.write_errno = errno ? errno : EIO;
  int e = sh->out.write_errno;
  if (!e)
    return false;
  sh->out.write_errno = 0;
  clearerr(sh->out.fp);
  if (sh->out_path)
    sl_shell_errorf(sh, source, line, "cannot write to \"%s\": %s",
                    sh->out_path, strerror(e));
  else
    sl_shell_errorf(sh, source, line, "cannot write to standard output: %s",
                    strerror(e));
  return true;
}
