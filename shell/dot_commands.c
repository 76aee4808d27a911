/* dot_commands.c - the shell's own commands, in the sqlite3/duckdb
 * tradition: a line starting with '.' where a statement would begin.
 *
 * Arguments are separated by white space; '...' or "..." group words.
 * Output of commands (.help, .tables, ...) goes where results go, as in
 * sqlite3, so `.output f` followed by `.schema` writes the schema to f.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/shell/shell.h"

enum { MAX_ARGS = 8 };

typedef struct dot_args {
  const char *source; /* file name for messages, or NULL */
  int line;           /* line of the command in that file */
  int argc;           /* argv[0] is the command itself, e.g. ".mode" */
  char *argv[MAX_ARGS];
} dot_args;

typedef struct dot_command {
  const char *name;
  const char *args;
  const char *help;
  int min_args, max_args; /* not counting the command itself */
  int (*run)(sl_shell *sh, const dot_args *a);
} dot_command;

static int usage(sl_shell *sh, const dot_args *a, const dot_command *cmd) {
  sl_shell_errorf(sh, a->source, a->line, "usage: %s%s%s", cmd->name,
                  cmd->args[0] ? " " : "", cmd->args);
  return sh->bail ? SL_SHELL_STOP : SL_SHELL_CONTINUE;
}

static int failed(sl_shell *sh) {
  return sh->bail ? SL_SHELL_STOP : SL_SHELL_CONTINUE;
}

/* "on"/"off" and friends; -1 if neither. */
static int parse_bool(const char *s) {
  static const char *const yes[] = {"on", "true", "yes", "1"};
  static const char *const no[] = {"off", "false", "no", "0"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0)
      return 1;
    if (strcasecmp(s, no[i]) == 0)
      return 0;
  }
  return -1;
}

static const dot_command *find_command(const char *name);

/* ---- The commands ---- */

static int cmd_bail(sl_shell *sh, const dot_args *a) {
  int v = parse_bool(a->argv[1]);
  if (v < 0)
    return usage(sh, a, find_command(a->argv[0]));
  sh->bail = v;
  return SL_SHELL_CONTINUE;
}

static int cmd_headers(sl_shell *sh, const dot_args *a) {
  int v = parse_bool(a->argv[1]);
  if (v < 0)
    return usage(sh, a, find_command(a->argv[0]));
  sh->out.headers = v;
  return SL_SHELL_CONTINUE;
}

static int cmd_timer(sl_shell *sh, const dot_args *a) {
  int v = parse_bool(a->argv[1]);
  if (v < 0)
    return usage(sh, a, find_command(a->argv[0]));
  sh->timer = v;
  return SL_SHELL_CONTINUE;
}

/* .timeout MS|off: statements running longer are stopped as on Ctrl-C. */
static int cmd_timeout(sl_shell *sh, const dot_args *a) {
  const char *v = a->argv[1];
  if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) {
    sh->timeout_ms = 0;
    return SL_SHELL_CONTINUE;
  }
  char *end = NULL;
  errno = 0;
  long ms = strtol(v, &end, 10);
  if (errno || end == v || *end || ms <= 0 || ms > 86400000L * 365) {
    sl_shell_errorf(sh, a->source, a->line,
                    ".timeout wants a number of milliseconds (1 .. a year) "
                    "or off, not \"%s\"",
                    v);
    return failed(sh);
  }
  sh->timeout_ms = ms;
  return SL_SHELL_CONTINUE;
}

static int cmd_quit(sl_shell *sh, const dot_args *a) {
  (void)a;
  sh->quit = true;
  return SL_SHELL_STOP;
}

static int cmd_mode(sl_shell *sh, const dot_args *a) {
  if (a->argc == 1) {
    sl_out_puts(&sh->out, "current output mode: ");
    sl_out_puts(&sh->out, sl_output_mode_name(sh->out.mode));
    sl_out_putc(&sh->out, '\n');
    return SL_SHELL_CONTINUE;
  }
  sl_output_mode mode;
  if (!sl_output_mode_parse(a->argv[1], &mode)) {
    sl_shell_errorf(sh, a->source, a->line,
                    "unknown output mode \"%s\" (one of: %s)", a->argv[1],
                    sl_output_mode_names());
    return failed(sh);
  }
  sh->out.mode = mode;
  return SL_SHELL_CONTINUE;
}

static int cmd_output(sl_shell *sh, const dot_args *a) {
  sl_error err = {0};
  if (!sl_shell_set_output(sh, a->argc > 1 ? a->argv[1] : NULL, &err)) {
    sl_shell_errorf(sh, a->source, a->line, "%s", err.message);
    sl_error_clear(&err);
    return failed(sh);
  }
  return SL_SHELL_CONTINUE;
}

static int cmd_read(sl_shell *sh, const dot_args *a) {
  return sl_shell_run_file(sh, a->argv[1], a->source, a->line);
}

static int cmd_tables(sl_shell *sh, const dot_args *a) {
  (void)a;
  const sl_catalog *cat = sl_session_catalog(sh->session);
  int n = cat ? sl_catalog_count(cat) : 0;
  for (int i = 0; i < n; i++) {
    sl_out_puts(&sh->out, sl_catalog_at(cat, i)->name);
    sl_out_putc(&sh->out, '\n');
  }
  return SL_SHELL_CONTINUE;
}

/* `.nodes`: where queries run (node_frames.h). */
static int cmd_nodes(sl_shell *sh, const dot_args *a) {
  (void)a;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_session_describe_nodes(sh->session, &b);
  sl_out_puts(&sh->out, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return SL_SHELL_CONTINUE;
}

static void print_create(sl_shell *sh, const sl_table_def *def) {
  if (!def->create_sql)
    return;
  const char *sql = def->create_sql;
  size_t n = strlen(sql);
  while (n > 0 && strchr(" \t\r\n", sql[n - 1]))
    n--;
  sl_out_write(&sh->out, sql, n);
  sl_out_puts(&sh->out, n > 0 && sql[n - 1] == ';' ? "\n" : ";\n");
}

static int cmd_schema(sl_shell *sh, const dot_args *a) {
  const sl_catalog *cat = sl_session_catalog(sh->session);
  if (a->argc == 1) {
    int n = cat ? sl_catalog_count(cat) : 0;
    for (int i = 0; i < n; i++)
      print_create(sh, sl_catalog_at(cat, i));
    return SL_SHELL_CONTINUE;
  }
  const sl_table_def *def = cat ? sl_catalog_find(cat, a->argv[1]) : NULL;
  if (!def) {
    const char *near = cat ? sl_catalog_suggest(cat, a->argv[1]) : NULL;
    if (near)
      sl_shell_errorf(sh, a->source, a->line,
                      "no table or view named \"%s\" (did you mean \"%s\"?)",
                      a->argv[1], near);
    else
      sl_shell_errorf(sh, a->source, a->line, "no table or view named \"%s\"",
                      a->argv[1]);
    return failed(sh);
  }
  print_create(sh, def);
  return SL_SHELL_CONTINUE;
}

static void show_line(sl_shell *sh, const char *name, const char *value) {
  sl_out_spaces(&sh->out, 9 - (int)strlen(name));
  sl_out_puts(&sh->out, name);
  sl_out_puts(&sh->out, *value ? ": " : ":");
  sl_out_puts(&sh->out, value);
  sl_out_putc(&sh->out, '\n');
}

static int cmd_show(sl_shell *sh, const dot_args *a) {
  (void)a;
  show_line(sh, "mode", sl_output_mode_name(sh->out.mode));
  show_line(sh, "headers", sh->out.headers ? "on" : "off");
  show_line(sh, "output", sh->out_path ? sh->out_path : "stdout");
  show_line(sh, "timer", sh->timer ? "on" : "off");
  char ms[32] = "off";
  if (sh->timeout_ms > 0)
    snprintf(ms, sizeof ms, "%ld ms", sh->timeout_ms);
  show_line(sh, "timeout", ms);
  show_line(sh, "bail", sh->bail ? "on" : "off");
  const sl_settings *st = sl_session_settings(sh->session);
  int n = st ? sl_settings_count(st) : 0;
  if (n > 0)
    show_line(sh, "settings", "");
  for (int i = 0; i < n; i++) {
    const char *key = NULL, *value = NULL;
    sl_settings_at(st, i, &key, &value);
    sl_out_puts(&sh->out, "  ");
    sl_out_puts(&sh->out, key ? key : "");
    sl_out_puts(&sh->out, " = ");
    sl_out_puts(&sh->out, value ? value : "");
    sl_out_putc(&sh->out, '\n');
  }
  return SL_SHELL_CONTINUE;
}

static int cmd_help(sl_shell *sh, const dot_args *a);

static const dot_command commands[] = {
    {".bail", "on|off", "stop a script at its first error", 1, 1, cmd_bail},
    {".exit", "", "exit the shell (also .quit)", 0, 0, cmd_quit},
    {".headers", "on|off", "show column names in results", 1, 1, cmd_headers},
    {".help", "[COMMAND]", "show this help", 0, 1, cmd_help},
    {".mode", "[MODE]", "show or set the output mode (the modes are below)", 0,
     1, cmd_mode},
    {".nodes", "", "list the nodes queries run on, with their health", 0, 0,
     cmd_nodes},
    {".output", "[FILE]", "send results to FILE, or back to stdout", 0, 1,
     cmd_output},
    {".quit", "", "exit the shell", 0, 0, cmd_quit},
    {".read", "FILE", "run the statements and commands in FILE", 1, 1,
     cmd_read},
    {".schema", "[NAME]", "show the CREATE statement of NAME (or of all)", 0, 1,
     cmd_schema},
    {".show", "", "show the shell's and the session's settings", 0, 0,
     cmd_show},
    {".tables", "", "list the tables and views", 0, 0, cmd_tables},
    {".timeout", "MS|off",
     "stop a statement that runs longer than MS milliseconds (on every node)",
     1, 1, cmd_timeout},
    {".timer", "on|off", "print the run time of each statement", 1, 1,
     cmd_timer},
};

enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const dot_command *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

static void help_line(sl_shell *sh, const dot_command *c) {
  char head[64];
  snprintf(head, sizeof head, "%s%s%s", c->name, c->args[0] ? " " : "",
           c->args);
  sl_out_puts(&sh->out, head);
  sl_out_spaces(&sh->out, 20 - (int)strlen(head));
  sl_out_puts(&sh->out, c->help);
  sl_out_putc(&sh->out, '\n');
}

static int cmd_help(sl_shell *sh, const dot_args *a) {
  if (a->argc > 1) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", a->argv[1][0] == '.' ? "" : ".",
             a->argv[1]);
    const dot_command *c = find_command(name);
    if (!c) {
      sl_shell_errorf(sh, a->source, a->line,
                      "unknown command \"%s\" (.help lists the commands)",
                      name);
      return failed(sh);
    }
    help_line(sh, c);
    return SL_SHELL_CONTINUE;
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    help_line(sh, &commands[i]);
  sl_out_puts(&sh->out,
              "\nSQL statements end with ';' and may span lines.  Output "
              "modes: table (the\ndefault), box, csv, json, line, markdown.  "
              "Ctrl-C clears the "
              "input or cancels a running statement;\nCtrl-D exits.\n");
  return SL_SHELL_CONTINUE;
}

/* ---- Parsing and dispatch ---- */

/* Split text into words; false if there are too many or a quote is left
 * open.  The words are heap strings in a->argv. */
static bool split_args(const char *text, size_t len, dot_args *a,
                       const char **problem) {
  size_t i = 0;
  a->argc = 0;
  for (;;) {
    while (i < len && strchr(" \t\r", text[i]))
      i++;
    if (i >= len)
      return true;
    if (a->argc == MAX_ARGS) {
      *problem = "too many arguments";
      return false;
    }
    sl_strbuf w = SL_STRBUF_INIT;
    sl_strbuf_append(&w, "");
    if (text[i] == '\'' || text[i] == '"') {
      char q = text[i++];
      while (i < len && text[i] != q)
        sl_strbuf_appendc(&w, text[i++]);
      if (i >= len) {
        sl_strbuf_free(&w);
        *problem = "unterminated quoted argument";
        return false;
      }
      i++;
    } else {
      while (i < len && !strchr(" \t\r", text[i]))
        sl_strbuf_appendc(&w, text[i++]);
    }
    a->argv[a->argc++] = sl_strbuf_detach(&w);
  }
}

int sl_shell_dot_command(sl_shell *sh, const char *source, int line,
                         const char *text, size_t len) {
  dot_args a = {source, line, 0, {NULL}};
  const char *problem = NULL;
  int rc = SL_SHELL_CONTINUE;
  if (!split_args(text, len, &a, &problem)) {
    sl_shell_errorf(sh, source, line, "%s: %s", a.argc ? a.argv[0] : ".",
                    problem);
    rc = failed(sh);
  } else {
    const dot_command *c = find_command(a.argv[0]);
    if (!c) {
      sl_shell_errorf(sh, source, line,
                      "unknown command \"%s\" (.help lists the commands)",
                      a.argv[0]);
      rc = failed(sh);
    } else if (a.argc - 1 < c->min_args || a.argc - 1 > c->max_args) {
      rc = usage(sh, &a, c);
    } else {
      rc = c->run(sh, &a);
    }
  }
  for (int i = 0; i < a.argc; i++)
    free(a.argv[i]);
  /* Commands print through the output, so a failed write surfaces here. */
  if (sl_shell_check_output(sh, source, line))
    rc = failed(sh);
  return sh->quit ? SL_SHELL_STOP : rc;
}

const char *sl_shell_dot_command_name(int i) {
  return i >= 0 && i < (int)NCOMMANDS ? commands[i].name : NULL;
}
