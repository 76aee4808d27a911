/* line_reader.c - reading lines from the terminal with libedit: editing,
 * persistent history and Tab completion.
 *
 * libedit keeps its own state behind the EditLine handle; the one thing it
 * forces on us is that callbacks (prompt, Tab) get only the handle, so the
 * reader is reached through EL_CLIENTDATA rather than a global.
 *
 * History entries may hold newlines (a whole multi-line statement is one
 * entry); libedit's history file encodes them (strvis), so they survive a
 * restart, and recalling one brings back every line of it.
 */
#include <errno.h>
#include <histedit.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/shell/shell.h"

enum { HISTORY_SIZE = 1000 };

struct sl_line_reader {
  EditLine *el;
  History *hist;
  char *history_path; /* NULL: no history file */
  bool history_warned;
  char *prompt;
  FILE *out, *err;
  sl_complete_fn complete;
  void *ctx;
  char *line;           /* the last line read, without its newline */
  sl_cancel *interrupt; /* requested by Ctrl-C (signals.c) */
};

static sl_line_reader *reader_of(EditLine *el) {
  void *p = NULL;
  el_get(el, EL_CLIENTDATA, &p);
  return p;
}

static char *prompt_fn(EditLine *el) {
  sl_line_reader *lr = reader_of(el);
  return lr->prompt ? lr->prompt : "";
}

/* Print candidates in columns under the input line. */
static void list_candidates(sl_line_reader *lr, const sl_completion *c) {
  int cols = 80;
  el_get(lr->el, EL_GETTC, "co", &cols, NULL);
  size_t width = 0;
  for (int i = 0; i < c->n; i++) {
    size_t w = (size_t)sl_text_width(c->items[i], strlen(c->items[i]));
    if (w > width)
      width = w;
  }
  width += 2;
  int per_row = cols > 0 ? (int)((size_t)cols / width) : 1;
  if (per_row < 1)
    per_row = 1;
  fputc('\n', lr->out);
  for (int i = 0; i < c->n; i++) {
    bool last = (i + 1) % per_row == 0 || i + 1 == c->n;
    fputs(c->items[i], lr->out);
    if (!last)
      fprintf(lr->out, "%*s",
              (int)(width -
                    (size_t)sl_text_width(c->items[i], strlen(c->items[i]))),
              "");
    else
      fputc('\n', lr->out);
  }
  fflush(lr->out);
}

/* Length of the prefix the candidates share (case-insensitive, since the
 * user's word matched them that way). */
static size_t common_prefix(const sl_completion *c) {
  size_t n = strlen(c->items[0]);
  for (int i = 1; i < c->n; i++) {
    size_t k = 0;
    while (k < n && c->items[i][k] &&
           (c->items[i][k] == c->items[0][k] ||
            (c->items[i][k] | 0x20) == (c->items[0][k] | 0x20)))
      k++;
    n = k;
  }
  /* Never end inside a UTF-8 sequence. */
  while (n > 0 && ((unsigned char)c->items[0][n] & 0xC0) == 0x80)
    n--;
  return n;
}

static unsigned char complete_fn(EditLine *el, int ch) {
  (void)ch;
  sl_line_reader *lr = reader_of(el);
  const LineInfo *li = el_line(el);
  size_t len = (size_t)(li->lastchar - li->buffer);
  size_t cursor = (size_t)(li->cursor - li->buffer);
  char *text = strndup(li->buffer, len);
  if (!text)
    return CC_ERROR;
  sl_completion c;
  lr->complete(lr->ctx, text, cursor, &c);
  free(text);
  unsigned char rc = CC_REFRESH;
  size_t typed = cursor - c.word_start;
  if (c.n == 0) {
    rc = CC_REFRESH_BEEP;
  } else if (c.n == 1) {
    el_deletestr(el, (int)typed);
    el_insertstr(el, c.items[0]);
    el_insertstr(el, " ");
  } else {
    size_t n = common_prefix(&c);
    if (n > typed) {
      char *prefix = strndup(c.items[0], n);
      if (prefix) {
        el_deletestr(el, (int)typed);
        el_insertstr(el, prefix);
        free(prefix);
      }
    } else {
      list_candidates(lr, &c);
      rc = CC_REDISPLAY;
    }
  }
  sl_completion_free(&c);
  return rc;
}

sl_line_reader *sl_line_reader_new(const char *prog, sl_cancel *interrupt,
                                   FILE *in, FILE *out, FILE *err,
                                   const char *history_path,
                                   sl_complete_fn complete, void *ctx) {
  sl_line_reader *lr = calloc(1, sizeof *lr);
  if (!lr)
    return NULL;
  lr->el = el_init(prog, in, out, err);
  lr->hist = history_init();
  if (!lr->el || !lr->hist) {
    sl_line_reader_free(lr);
    return NULL;
  }
  lr->out = out;
  lr->err = err;
  lr->complete = complete;
  lr->ctx = ctx;
  lr->interrupt = interrupt;

  HistEvent ev;
  history(lr->hist, &ev, H_SETSIZE, HISTORY_SIZE);
  history(lr->hist, &ev, H_SETUNIQUE, 1);
  if (history_path && *history_path) {
    lr->history_path = strdup(history_path);
    history(lr->hist, &ev, H_LOAD, history_path); /* absent at first: fine */
  }

  el_set(lr->el, EL_CLIENTDATA, lr);
  el_set(lr->el, EL_EDITOR, "emacs");
  /* libedit restores the terminal on signals and tracks window size;
   * SIGINT still reaches our handler (signals.c), which ends el_gets. */
  el_set(lr->el, EL_SIGNAL, 1);
  el_set(lr->el, EL_PROMPT, prompt_fn);
  el_set(lr->el, EL_HIST, history, lr->hist);
  el_set(lr->el, EL_ADDFN, "sluice-complete", "complete SQL", complete_fn);
  el_set(lr->el, EL_BIND, "^I", "sluice-complete", NULL);
  el_source(lr->el, NULL); /* the user's ~/.editrc, if any */
  return lr;
}

void sl_line_reader_free(sl_line_reader *lr) {
  if (!lr)
    return;
  if (lr->el)
    el_end(lr->el);
  if (lr->hist)
    history_end(lr->hist);
  free(lr->history_path);
  free(lr->prompt);
  free(lr->line);
  free(lr);
}

int sl_line_reader_read(sl_line_reader *lr, const char *prompt,
                        const char **line, size_t *len) {
  free(lr->prompt);
  lr->prompt = strdup(prompt);
  sl_cancel_clear(lr->interrupt);
  int count = 0;
  const char *s = el_gets(lr->el, &count);
  if (!s) {
    if (sl_cancel_pending(lr->interrupt) || (count < 0 && errno == EINTR)) {
      sl_cancel_clear(lr->interrupt);
      return SL_LINE_INTERRUPTED;
    }
    return SL_LINE_EOF;
  }
  size_t n = count > 0 ? (size_t)count : strlen(s);
  if (n > 0 && s[n - 1] == '\n')
    n--;
  free(lr->line);
  lr->line = strndup(s, n);
  if (!lr->line)
    return SL_LINE_EOF;
  *line = lr->line;
  *len = n;
  return SL_LINE_OK;
}

void sl_line_reader_add_history(sl_line_reader *lr, const char *entry) {
  HistEvent ev;
  if (!entry || !*entry)
    return;
  history(lr->hist, &ev, H_ENTER, entry);
  if (!lr->history_path)
    return;
  /* Saved after every entry, so a killed shell loses nothing. */
  if (history(lr->hist, &ev, H_SAVE, lr->history_path) < 0 &&
      !lr->history_warned) {
    fprintf(lr->err, "Warning: cannot save history to \"%s\": %s\n",
            lr->history_path, errno ? strerror(errno) : "unknown error");
    lr->history_warned = true;
  }
}
