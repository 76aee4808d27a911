/* completion.c - what Tab offers: dot-commands at the start of the input,
 * table and view names, column names (of the tables the statement names,
 * or of every table), `table.column` after a qualifier, and keywords.
 *
 * This file only computes candidates, so it can be tested without a
 * terminal; line_reader.c puts them on the screen.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/parser/parser.h"
#include "sluice/shell/shell.h"

static bool is_word_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' ||
         (unsigned char)c >= 0x80;
}

static void add(sl_completion *out, const char *s, size_t n) {
  char *item = strndup(s, n);
  char **items = realloc(out->items, (size_t)(out->n + 1) * sizeof *items);
  if (!item || !items)
    abort();
  out->items = items;
  out->items[out->n++] = item;
}

static bool has_prefix(const char *s, const char *prefix, size_t n) {
  return strncasecmp(s, prefix, n) == 0;
}

/* Keywords in the case the user types them in. */
static void add_keyword(sl_completion *out, const char *kw, bool lower) {
  size_t n = strlen(kw);
  char *s = strndup(kw, n);
  if (!s)
    abort();
  for (size_t i = 0; lower && i < n; i++)
    s[i] = (char)tolower((unsigned char)s[i]);
  add(out, s, n);
  free(s);
}

/* Does text mention name as a whole word (case-insensitive)? */
static bool mentions(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; (p = strcasestr(p, name)); p++) {
    bool starts = p == text || !is_word_char(p[-1]);
    if (starts && !is_word_char(p[n]))
      return true;
  }
  return false;
}

/* The word before the word being completed, e.g. FROM. */
static void previous_word(const char *line, size_t end, char *buf, size_t cap) {
  size_t e = end;
  while (e > 0 && isspace((unsigned char)line[e - 1]))
    e--;
  size_t s = e;
  while (s > 0 && is_word_char(line[s - 1]))
    s--;
  size_t n = e - s < cap - 1 ? e - s : cap - 1;
  memcpy(buf, line + s, n);
  buf[n] = '\0';
}

static bool wants_table(const char *prev) {
  static const char *const words[] = {"FROM",   "JOIN",     "TABLE",
                                      "INTO",   "DESCRIBE", "DESC",
                                      "UPDATE", "EXISTS",   NULL};
  for (int i = 0; words[i]; i++)
    if (strcasecmp(prev, words[i]) == 0)
      return true;
  return false;
}

static int compare(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(sl_completion *out) {
  if (out->n > 1) /* items may be NULL when there are none */
    qsort(out->items, (size_t)out->n, sizeof *out->items, compare);
  int k = 0;
  for (int i = 0; i < out->n; i++) {
    if (k > 0 && strcmp(out->items[k - 1], out->items[i]) == 0)
      free(out->items[i]);
    else
      out->items[k++] = out->items[i];
  }
  out->n = k;
}

void sl_complete(const sl_catalog *cat, const char *pending, const char *line,
                 size_t cursor, sl_completion *out) {
  memset(out, 0, sizeof *out);
  size_t len = strlen(line);
  if (cursor > len)
    cursor = len;
  size_t start = cursor;
  while (start > 0 && (is_word_char(line[start - 1]) || line[start - 1] == '.'))
    start--;
  out->word_start = start;
  const char *word = line + start;
  size_t wlen = cursor - start;

  /* Dot-commands: only where a new input begins. */
  bool at_start = !pending || !*pending;
  for (size_t i = 0; at_start && i < start; i++)
    if (!isspace((unsigned char)line[i]))
      at_start = false;
  if (at_start && wlen > 0 && word[0] == '.') {
    const char *name;
    for (int i = 0; (name = sl_shell_dot_command_name(i)); i++)
      if (has_prefix(name, word, wlen))
        add(out, name, strlen(name));
    sort_unique(out);
    return;
  }

  int ntables = cat ? sl_catalog_count(cat) : 0;

  /* table.column */
  const char *dot = wlen > 0 ? memchr(word, '.', wlen) : NULL;
  if (dot) {
    const char *last = word + wlen;
    while (last > word && last[-1] != '.')
      last--;
    char *qualifier = strndup(word, (size_t)(last - 1 - word));
    const sl_table_def *def =
        cat && qualifier ? sl_catalog_find(cat, qualifier) : NULL;
    size_t plen = (size_t)(word + wlen - last);
    for (int c = 0; def && c < def->ncolumns; c++) {
      if (!has_prefix(def->columns[c].name, last, plen))
        continue;
      size_t qn = (size_t)(last - word);
      size_t cn = strlen(def->columns[c].name);
      char *item = malloc(qn + cn + 1);
      if (!item)
        abort();
      memcpy(item, word, qn);
      memcpy(item + qn, def->columns[c].name, cn + 1);
      add(out, item, qn + cn);
      free(item);
    }
    free(qualifier);
    sort_unique(out);
    return;
  }

  char prev[32];
  previous_word(line, start, prev, sizeof prev);
  if (start == 0 && pending && *pending) {
    size_t plen = strlen(pending);
    previous_word(pending, plen, prev, sizeof prev);
  }
  bool table_only = wants_table(prev);
  if (wlen == 0 && !table_only)
    return; /* offering every keyword for nothing typed helps no one */

  for (int t = 0; t < ntables; t++) {
    const char *name = sl_catalog_at(cat, t)->name;
    if (has_prefix(name, word, wlen))
      add(out, name, strlen(name));
  }
  if (table_only) {
    sort_unique(out);
    return;
  }

  /* Columns of the tables this statement names, else of every table. */
  bool any_named = false;
  for (int pass = 0; pass < 2; pass++) {
    for (int t = 0; t < ntables; t++) {
      const sl_table_def *def = sl_catalog_at(cat, t);
      bool named = (pending && mentions(pending, def->name)) ||
                   mentions(line, def->name);
      if (pass == 0 && !named)
        continue;
      any_named = true;
      for (int c = 0; c < def->ncolumns; c++)
        if (has_prefix(def->columns[c].name, word, wlen))
          add(out, def->columns[c].name, strlen(def->columns[c].name));
    }
    if (any_named)
      break;
  }

  bool lower = false;
  for (size_t i = 0; i < wlen; i++) {
    if (isupper((unsigned char)word[i])) {
      lower = false;
      break;
    }
    if (islower((unsigned char)word[i]))
      lower = true;
  }
  const char *const *kw = sl_keyword_list();
  for (int i = 0; kw && kw[i]; i++)
    if (has_prefix(kw[i], word, wlen))
      add_keyword(out, kw[i], lower);
  sort_unique(out);
}

void sl_completion_free(sl_completion *c) {
  for (int i = 0; i < c->n; i++)
    free(c->items[i]);
  free(c->items);
  memset(c, 0, sizeof *c);
}
