/* repl.c - the interactive shell: prompt, read a line, run what is
 * complete, repeat.
 *
 *   sluice> SELECT a,
 *      ...>   b FROM t;
 *
 * A statement runs once its ';' is typed; until then the continuation
 * prompt shows.  Errors are reported and the shell carries on (it never
 * exits on an error).  Ctrl-C discards the input typed so far, Ctrl-D (on
 * an empty line) exits.  Each statement, however many lines it took, is one
 * history entry.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals_int.h"
#include "sluice/common/version.h"
#include "sluice/shell/shell.h"

static const char PROMPT[] = "sluice> ";
static const char CONTINUE_PROMPT[] = "   ...> ";

typedef struct repl {
  sl_shell *sh;
  sl_shell_input *in;
} repl;

static void complete(void *ctx, const char *line, size_t cursor,
                     sl_completion *out) {
  repl *r = ctx;
  sl_complete(sl_session_catalog(r->sh->session),
              sl_strbuf_cstr(&r->in->pending), line, cursor, out);
}

/* $SLUICE_HISTORY, else ~/.sluice_history; NULL when history is off. */
static char *history_path(void) {
  const char *env = getenv("SLUICE_HISTORY");
  if (env)
    return *env ? strdup(env) : NULL;
  const char *home = getenv("HOME");
  if (!home || !*home)
    return NULL;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s/.sluice_history", home);
  return sl_strbuf_detach(&b);
}

int sl_shell_repl(sl_shell *sh) {
  sl_shell_input in;
  sl_shell_input_init(&in, NULL, true);
  repl r = {sh, &in};
  /* With stdout redirected, prompts and echo go to stderr, not the file. */
  FILE *term = isatty(STDOUT_FILENO) ? stdout : stderr;
  char *hist = history_path();
  sl_line_reader *lr = sl_line_reader_new("sluice", &sh->cancel, stdin, term,
                                          stderr, hist, complete, &r);
  free(hist);
  if (!lr) {
    sl_shell_errorf(sh, NULL, 0, "cannot start the line editor");
    sl_shell_input_free(&in);
    return sl_shell_run_stream(sh, stdin, NULL);
  }
  sl_signals_install(&sh->cancel);

  fprintf(term,
          "Sluice %s - streaming SQL.\n"
          "Enter \".help\" for usage hints; end statements with \";\".\n",
          sl_version());
  fflush(term);

  sl_strbuf entry = SL_STRBUF_INIT; /* the input since the last prompt */
  while (!sh->quit) {
    const char *line;
    size_t len;
    bool pending = sl_shell_input_pending(&in);
    int rc = sl_line_reader_read(lr, pending ? CONTINUE_PROMPT : PROMPT, &line,
                                 &len);
    if (rc == SL_LINE_EOF) {
      fputc('\n', term);
      break;
    }
    if (rc == SL_LINE_INTERRUPTED) {
      /* Ctrl-C: forget the statement being typed. */
      fputs("^C\n", term);
      fflush(term);
      sl_shell_input_discard(&in);
      sl_strbuf_reset(&entry);
      continue;
    }
    if (entry.len > 0)
      sl_strbuf_appendc(&entry, '\n');
    sl_strbuf_appendn(&entry, line, len);
    sl_shell_input_feed(sh, &in, line, len);
    if (!sl_shell_input_pending(&in)) {
      const char *text = sl_strbuf_cstr(&entry);
      if (strspn(text, " \t\r\n") < entry.len)
        sl_line_reader_add_history(lr, text);
      sl_strbuf_reset(&entry);
    }
  }
  sl_strbuf_free(&entry);
  sl_line_reader_free(lr);
  sl_shell_input_free(&in);
  return SL_SHELL_CONTINUE;
}
