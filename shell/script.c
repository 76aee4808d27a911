/* script.c - running SQL text: single statements, whole scripts, and input
 * that arrives a line at a time (the REPL and piped stdin).
 *
 * Text is split with sl_sql_next_statement, which knows about strings,
 * quoted identifiers and comments.  A '.' where a statement would begin
 * starts a dot-command that runs to the end of its line.  Line numbers are
 * tracked across the text, so an error in the 40th line of a file says
 * "line 40" however the file was split.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice/common/clock.h"
#include "sluice/parser/parser.h"
#include "sluice/shell/shell.h"

#include "signals_int.h"

/* .read nesting limit: a file that reads itself must not eat the stack. */
enum { MAX_READ_DEPTH = 32 };

static int count_lines(const char *s, size_t n) {
  int lines = 0;
  for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++)
    lines++;
  return lines;
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) +
         (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* .timeout: a thread that asks the statement to stop, as Ctrl-C does,
 * once it has run timeout_ms; on every node too, since the coordinator
 * cancels the nodes when asked. */
typedef struct watchdog {
  sl_cancel *cancel; /* the shell's */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  long ms;
  bool done, fired, started;
  pthread_t thread;
} watchdog;

static void *watchdog_main(void *arg) {
  watchdog *w = arg;
  struct timespec until = sl_clock_deadline_ms(w->ms);
  pthread_mutex_lock(&w->lock);
  while (!w->done)
    if (pthread_cond_timedwait(&w->cond, &w->lock, &until) == ETIMEDOUT) {
      if (!w->done) {
        w->fired = true;
        sl_cancel_request(w->cancel);
      }
      break;
    }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static void watchdog_start(watchdog *w, sl_cancel *cancel, long ms) {
  memset(w, 0, sizeof *w);
  if (ms <= 0)
    return;
  w->cancel = cancel;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
  w->ms = ms;
  w->started = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

/* Stop the watchdog; true if it had asked the statement to stop. */
static bool watchdog_stop(watchdog *w) {
  if (!w->started)
    return false;
  pthread_mutex_lock(&w->lock);
  w->done = true;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  return w->fired;
}

/* A script's SIGINT or SIGTERM stopped the statement: what it produced is
 * written (its sinks closed, the output flushed); say so, and stop the
 * script (main exits with 128 + the signal). */
static int stopped_by_signal(sl_shell *sh, const char *source, int first_line,
                             watchdog *dog, sl_error *err) {
  watchdog_stop(dog);
  sl_output_abort(&sh->out);
  sl_shell_check_output(sh, source, first_line);
  int line = sl_shell_where(sh, source, first_line);
  fprintf(sh->errors,
          "sluice: %s cancelled the statement at %s%sline %d; the rows it "
          "had printed or streamed into a table are kept\n",
          sl_stop_signal == SIGINT ? "SIGINT" : "SIGTERM", source ? source : "",
          source ? ", " : "", line);
  fflush(sh->errors);
  sl_error_clear(err);
  sl_statement_running = 0;
  return SL_SHELL_STOP;
}

int sl_shell_run_statement(sl_shell *sh, const char *source, const char *text,
                           size_t len, int first_line) {
  sl_error err = {0};
  err.offset = -1;
  sl_result_sink sink = sl_output_sink(&sh->out);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sl_statement_running = 1;
  sl_cancel_clear(&sh->cancel);
  if (sl_stop_signal) { /* a script's SIGINT/SIGTERM came: run no more */
    sl_statement_running = 0;
    return SL_SHELL_STOP;
  }
  watchdog dog;
  watchdog_start(&dog, &sh->cancel, sh->timeout_ms);

  int rc = sl_session_execute(sh->session, text, len, first_line, &sink, &err);
  if (rc == SL_ECANCELLED && sl_stop_signal)
    return stopped_by_signal(sh, source, first_line, &dog, &err);
  sl_statement_running = 0;
  if (watchdog_stop(&dog)) {
    sl_cancel_clear(&sh->cancel); /* it was the watchdog, not the user */
    if (rc == SL_ECANCELLED) {
      sl_error_clear(&err);
      err.offset = -1;
      sl_error_set(&err, SL_ECANCELLED,
                   "the statement ran longer than the .timeout of %ld ms and "
                   "was stopped (.timeout off lifts the limit)",
                   sh->timeout_ms);
    }
  }

  sl_output_abort(&sh->out); /* a result set cut short by an error */
  if (sh->timer) {
    char buf[64];
    snprintf(buf, sizeof buf, "Run Time: real %.3f s\n", seconds_since(&t0));
    sl_out_puts(&sh->out, buf);
  }
  bool failed = sl_shell_check_output(sh, source, first_line);
  if (rc != SL_OK && !failed) {
    /* The terminal echoed ^C where the cursor was: start a fresh line. */
    if (sh->interactive && sl_cancel_pending(&sh->cancel))
      fputc('\n', sh->errors);
    if (!err.code)
      err.code = rc;
    sl_shell_report(sh, source, sl_shell_where(sh, source, first_line), &err,
                    text, len, first_line);
    failed = true;
  }
  sl_error_clear(&err);
  return failed && sh->bail ? SL_SHELL_STOP : SL_SHELL_CONTINUE;
}

/* Only white space and complete comments? */
static bool is_blank(const char *text, size_t len) {
  sl_tokenizer t;
  memset(&t, 0, sizeof t);
  sl_tokenizer_init(&t, text, len, 1);
  return sl_tokenizer_next(&t).kind == SL_TOK_EOF;
}

int sl_shell_run_text(sl_shell *sh, const char *source, const char *text,
                      size_t len, int first_line, bool final,
                      size_t *consumed) {
  size_t pos = 0;
  int line = first_line;
  int rc = SL_SHELL_CONTINUE;
  while (pos < len && rc == SL_SHELL_CONTINUE && !sh->quit && !sl_stop_signal) {
    size_t skip = 0;
    size_t n = sl_sql_next_statement(text + pos, len - pos, &skip);
    if (n == 0) {
      /* Only white space and comments are left; an unterminated comment
       * may still be continued by the next line. */
      if (final || is_blank(text + pos, len - pos))
        pos = len;
      break;
    }
    const char *stmt = text + pos + skip;
    int stmt_line = line + count_lines(text + pos, skip);

    if (*stmt == '.') {
      const char *eol = memchr(stmt, '\n', len - pos - skip);
      if (!eol && !final)
        break;
      size_t dlen = eol ? (size_t)(eol - stmt) : len - pos - skip;
      rc = sl_shell_dot_command(sh, source, stmt_line, stmt, dlen);
      pos += skip + dlen;
      line = stmt_line;
      continue;
    }

    size_t slen = n - skip;
    if (!final && !sl_sql_is_complete(stmt, slen))
      break;
    /* Trailing white space only moves an "end of input" error to an empty
     * line below the statement. */
    size_t run_len = slen;
    while (run_len > 0 && strchr(" \t\r\n\f\v", stmt[run_len - 1]))
      run_len--;
    rc = sl_shell_run_statement(sh, source, stmt, run_len, stmt_line);
    pos += n;
    line = stmt_line + count_lines(stmt, slen);
  }
  if (consumed)
    *consumed = pos;
  return sh->quit || sl_stop_signal ? SL_SHELL_STOP : rc;
}

/* Read a whole file; NULL with errno set on failure. */
static char *slurp(FILE *fp, size_t *len) {
  sl_strbuf b = SL_STRBUF_INIT;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
    sl_strbuf_appendn(&b, buf, n);
  if (ferror(fp)) {
    int e = errno;
    sl_strbuf_free(&b);
    errno = e ? e : EIO;
    return NULL;
  }
  *len = b.len;
  if (!b.data)
    sl_strbuf_append(&b, "");
  return sl_strbuf_detach(&b);
}

int sl_shell_run_file(sl_shell *sh, const char *path, const char *from,
                      int from_line) {
  if (strcmp(path, "-") == 0)
    return sl_shell_run_stream(sh, stdin, NULL);
  if (sh->read_depth >= MAX_READ_DEPTH) {
    sl_shell_errorf(sh, from, from_line,
                    "cannot read \"%s\": .read nested too deeply", path);
    return SL_SHELL_STOP;
  }
  FILE *fp = fopen(path, "r");
  if (!fp) {
    sl_shell_errorf(sh, from, from_line, "cannot open \"%s\": %s", path,
                    strerror(errno));
    return sh->bail ? SL_SHELL_STOP : SL_SHELL_CONTINUE;
  }
  size_t len = 0;
  char *text = slurp(fp, &len);
  int e = errno;
  fclose(fp);
  if (!text) {
    sl_shell_errorf(sh, from, from_line, "cannot read \"%s\": %s", path,
                    strerror(e));
    return sh->bail ? SL_SHELL_STOP : SL_SHELL_CONTINUE;
  }
  sh->read_depth++;
  int rc = sl_shell_run_text(sh, path, text, len, 1, true, NULL);
  sh->read_depth--;
  free(text);
  return rc;
}

/* ---- Line-at-a-time input ---- */

void sl_shell_input_init(sl_shell_input *in, const char *source,
                         bool restart_lines) {
  memset(in, 0, sizeof *in);
  in->pending_line = 1;
  in->next_line = 1;
  in->restart_lines = restart_lines;
  in->source = source;
}

void sl_shell_input_free(sl_shell_input *in) {
  sl_strbuf_free(&in->pending);
}

bool sl_shell_input_pending(const sl_shell_input *in) {
  return in->pending.len > 0;
}

void sl_shell_input_discard(sl_shell_input *in) {
  sl_strbuf_reset(&in->pending);
  if (in->restart_lines)
    in->next_line = 1;
  in->pending_line = in->next_line;
}

/* Run what pending holds and keep the unfinished rest. */
static int run_pending(sl_shell *sh, sl_shell_input *in, bool final) {
  size_t used = 0;
  int rc = sl_shell_run_text(sh, in->source, in->pending.data, in->pending.len,
                             in->pending_line, final, &used);
  if (final || rc == SL_SHELL_STOP || used >= in->pending.len) {
    sl_shell_input_discard(in); /* after a bail the rest is not run */
  } else if (used > 0) {
    in->pending_line += count_lines(in->pending.data, used);
    char *rest = strdup(in->pending.data + used);
    if (!rest)
      abort();
    sl_strbuf_reset(&in->pending);
    sl_strbuf_append(&in->pending, rest);
    free(rest);
  }
  return rc;
}

int sl_shell_input_feed(sl_shell *sh, sl_shell_input *in, const char *line,
                        size_t len) {
  int line_no = in->next_line++;
  if (!sl_shell_input_pending(in)) {
    in->pending_line = line_no;
    /* A dot-command is one line; it never waits for a ';'. */
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
      i++;
    if (i < len && line[i] == '.') {
      int rc = sl_shell_dot_command(sh, in->source, line_no, line + i, len - i);
      if (in->restart_lines)
        in->next_line = 1;
      return rc;
    }
  }
  sl_strbuf_appendn(&in->pending, line, len);
  sl_strbuf_appendc(&in->pending, '\n');
  if (is_blank(in->pending.data, in->pending.len)) {
    sl_shell_input_discard(in);
    return SL_SHELL_CONTINUE;
  }
  if (!sl_sql_is_complete(in->pending.data, in->pending.len))
    return SL_SHELL_CONTINUE;
  return run_pending(sh, in, false);
}

int sl_shell_input_finish(sl_shell *sh, sl_shell_input *in) {
  if (!sl_shell_input_pending(in))
    return SL_SHELL_CONTINUE;
  return run_pending(sh, in, true);
}

int sl_shell_run_stream(sl_shell *sh, FILE *fp, const char *source) {
  sl_shell_input in;
  sl_shell_input_init(&in, source, false);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int rc = SL_SHELL_CONTINUE;
  while (rc == SL_SHELL_CONTINUE && (n = getline(&line, &cap, fp)) >= 0) {
    size_t len = (size_t)n;
    if (len > 0 && line[len - 1] == '\n')
      len--;
    rc = sl_shell_input_feed(sh, &in, line, len);
  }
  if (rc == SL_SHELL_CONTINUE && ferror(fp)) {
    sl_shell_errorf(sh, NULL, 0, "cannot read standard input: %s",
                    strerror(errno));
    rc = SL_SHELL_STOP;
  }
  if (rc == SL_SHELL_CONTINUE)
    rc = sl_shell_input_finish(sh, &in);
  free(line);
  sl_shell_input_free(&in);
  return rc;
}
