/* shell.h - the `sluice` program's building blocks: output modes, error
 * reports with carets, dot-commands, the statement runner and the REPL.
 *
 * main.c parses the command line (sl_cli_parse), builds one sl_shell and
 * hands it scripts, -c strings, piped stdin or the terminal.  Everything
 * below reports through return values; only main() decides the exit status.
 *
 * Ownership: the shell owns its session and output; strings handed to the
 * output sink are copied when a mode buffers them.
 */
#ifndef SLUICE_SHELL_H
#define SLUICE_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sluice/catalog/catalog.h"
#include "sluice/common/cancel.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

/* ---- Output modes (output.c, output_table.c, output_text.c) ---- */

typedef enum sl_output_mode {
  SL_MODE_TABLE,    /* ASCII +---+ boxes */
  SL_MODE_BOX,      /* Unicode box drawing */
  SL_MODE_CSV,      /* RFC 4180 */
  SL_MODE_JSON,     /* an array of objects per result set */
  SL_MODE_LINE,     /* `column = value`, blank line between rows */
  SL_MODE_MARKDOWN, /* GitHub pipe table */
} sl_output_mode;

/* "table" -> SL_MODE_TABLE; false for an unknown name. */
bool sl_output_mode_parse(const char *name, sl_output_mode *mode);
const char *sl_output_mode_name(sl_output_mode mode);
/* "table, box, csv, json, line, markdown" (for usage messages). */
const char *sl_output_mode_names(void);

/* An output: where results go and how they look; also the state of the
 * result set being printed.  Implements sl_result_sink. */
typedef struct sl_output {
  sl_output_mode mode;
  bool headers;
  FILE *fp;      /* results; not owned */
  FILE *notices; /* notices (stderr), or NULL to drop them; not owned */

  /* The result set in progress (between begin and end). */
  bool in_result;
  int ncols;
  char **names;
  bool *numeric; /* right-aligned; unquoted in JSON */
  bool *boolean; /* true/false unquoted in JSON */
  char **cells;  /* buffered rows, nrows * ncols; NULL is SQL NULL */
  size_t nrows, cap;
  size_t buffered_bytes; /* their text */
  size_t nprinted;       /* rows printed so far in this result set */
  /* Boxed modes: a streaming result prints each flushed group of rows as
   * it comes (a fired window).  The table stays open between flushes, with
   * these column widths, as long as the new rows fit them; NULL when no
   * table is open. */
  int *open_widths;
  /* A statement stopped (Ctrl-C, .timeout) while rows were being printed:
   * rows go out for at most 200 ms more, then the rest are counted here
   * and left out (a slow pipe is not waited for; a terminal gets all). */
  double stop_by; /* sl_clock_seconds() deadline; 0: not stopped */
  size_t not_shown;
  const sl_cancel *stop; /* the statement's token (NULL: never stopped) */

  int write_errno; /* errno of the first failed write, 0 if none */
  /* The progress line on the notices terminal (only when it is a tty). */
  bool progress_shown;
  /* Lines written to fp so far, and where the last result set began and
   * ended: an updating result's table is redrawn in place over it. */
  uint64_t lines, result_first_line, result_last_line;
} sl_output;

void sl_output_init(sl_output *o, FILE *fp, sl_output_mode mode, bool headers);
/* Free the result-set state (never closes fp). */
void sl_output_free(sl_output *o);
/* A sink printing to o. */
sl_result_sink sl_output_sink(sl_output *o);
/* A statement stopped in the middle of a result set: print what is
 * buffered and forget the result set. */
void sl_output_abort(sl_output *o);

/* Display width in terminal columns of UTF-8 text (wide CJK and emoji count
 * 2, combining marks 0, invalid bytes 1 each). */
int sl_text_width(const char *s, size_t n);

/* Internal to the output files: write helpers that remember the first
 * write error, and the per-mode printers. */
void sl_out_write(sl_output *o, const char *s, size_t n);
void sl_out_puts(sl_output *o, const char *s);
void sl_out_putc(sl_output *o, char c);
/* A cell's bytes as they are, SL_CELL_NUL (session.h) as the NUL byte it
 * stands for (csv and line modes). */
void sl_out_cell(sl_output *o, const char *s);
void sl_out_spaces(sl_output *o, int n);
/* Table, box, markdown: the buffered rows; returns how many were printed
 * (fewer once the statement was stopped). */
size_t sl_out_print_boxed(sl_output *o, bool final);
void sl_out_csv_row(sl_output *o, const char *const *cells);
void sl_out_json_row(sl_output *o, const char *const *cells);
void sl_out_json_end(sl_output *o);
void sl_out_line_row(sl_output *o, const char *const *cells);

/* ---- Error reports (error_report.c) ---- */

/* Render err the way the shell prints it:
 *   Error: [SOURCE: ]line L, column C: MESSAGE
 *     <the offending source line, tabs expanded>
 *     <spaces>^^^^
 *   Caused by: CAUSE
 * text/len is the statement text err->offset refers to, first_line its
 * first line (used when offset is unknown but line/column are known).
 * source is a file name or NULL.  When err has no line but stmt_line > 0,
 * the report says "line stmt_line" (the statement's first line) without a
 * column.  Appends to out. */
void sl_error_render(sl_strbuf *out, const char *source, int stmt_line,
                     const sl_error *err, const char *text, size_t len,
                     int first_line);

/* ---- Command line (cli_args.c) ---- */

typedef enum sl_cli_action_kind {
  SL_CLI_FILE,    /* run a script file */
  SL_CLI_COMMAND, /* -c SQL */
} sl_cli_action_kind;

typedef struct sl_cli_action {
  sl_cli_action_kind kind;
  const char *arg; /* points into argv */
} sl_cli_action;

typedef struct sl_cli_options {
  int nactions;
  sl_cli_action *actions; /* in command-line order (heap) */
  bool have_mode;
  sl_output_mode mode;
  int headers; /* -1: default (on), 0 off, 1 on */
  int bail;    /* -1: default (on for scripts, off interactively) */
  bool help, version;
  int nodes;               /* --nodes N (0: not given) */
  const char *cluster;     /* --cluster host:port,... (argv) */
  const char *transport;   /* --transport auto|verbs|shm|tcp (argv) */
  const char *secret_file; /* --secret-file FILE (argv): the cluster's */
  /* `sluice node [--listen [HOST:]PORT]`: the daemon's address (default
   * 127.0.0.1:SL_NODE_DEFAULT_PORT; a bare PORT is on 127.0.0.1) */
  bool node;
  char listen[300];
  const char *data_dir; /* --data-dir DIR (argv), or NULL: no files */
  const char *user;     /* --user NAME (argv), or NULL */
  int max_pending;      /* --max-pending N: unauthenticated connections */
} sl_cli_options;

enum { SL_CLI_OK = 0, SL_CLI_USAGE = 2 };

/* Parse argv.  On a usage error returns SL_CLI_USAGE and writes a message
 * (without the "usage" text) to err_msg (heap, caller frees). */
int sl_cli_parse(int argc, char **argv, sl_cli_options *opts, char **err_msg);
void sl_cli_options_free(sl_cli_options *opts);
void sl_cli_print_help(FILE *fp, const char *prog);
/* `sluice node --help` */
void sl_cli_print_node_help(FILE *fp, const char *prog);

/* ---- The shell (shell.c, script.c, dot_commands.c, repl.c) ---- */

typedef struct sl_shell {
  sl_session *session;
  /* Stops the running statement: Ctrl-C (signals.c) and .timeout request
   * it; the session runs every statement with it.  Cleared before each
   * statement and at each prompt. */
  sl_cancel cancel;
  sl_output out;
  FILE *out_file;   /* .output FILE, or NULL for stdout */
  char *out_path;   /* its name, or NULL */
  FILE *console;    /* stdout: results when no .output is active */
  FILE *errors;     /* stderr: errors and notices */
  bool interactive; /* a person at a terminal: never stop on errors */
  bool timer;       /* .timer on */
  long timeout_ms;  /* .timeout MS: stop statements running longer (0: off) */
  bool bail;        /* .bail on: stop a script at its first error */
  bool quit;        /* .quit was run */
  int nerrors;      /* errors reported so far (exit status) */
  int read_depth;   /* nesting of .read */
} sl_shell;

/* What a runner returns: keep going, or stop (bail or .quit). */
enum { SL_SHELL_CONTINUE = 0, SL_SHELL_STOP = 1 };

sl_shell *sl_shell_new(FILE *console, FILE *errors, sl_output_mode mode,
                       bool headers, bool bail, bool interactive);
void sl_shell_free(sl_shell *sh);
/* Redirect results to path (NULL: back to the console).  Returns false and
 * fills err when the file cannot be opened. */
bool sl_shell_set_output(sl_shell *sh, const char *path, sl_error *err);
/* Report an error (counted in nerrors). */
void sl_shell_report(sl_shell *sh, const char *source, int stmt_line,
                     const sl_error *err, const char *text, size_t len,
                     int first_line);
/* The line to name in a message that has no position of its own: in a
 * file or piped input the line of the statement or command; 0 (none) at
 * the terminal, where each statement starts again at line 1. */
int sl_shell_where(const sl_shell *sh, const char *source, int line);
/* Report a message without position: "Error: [SOURCE: ][line L: ]MSG",
 * L from sl_shell_where. */
void sl_shell_errorf(sl_shell *sh, const char *source, int line,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Flush the output; if a write failed since the last check, report it
 * ("cannot write to ...") and return true. */
bool sl_shell_check_output(sl_shell *sh, const char *source, int line);

/* Run one statement (text need not be NUL-terminated). */
int sl_shell_run_statement(sl_shell *sh, const char *source, const char *text,
                           size_t len, int first_line);

/* Run the statements and dot-commands in text[0..len).  Without final, stop
 * before an incomplete last statement and report in *consumed how far the
 * text was used; with final, run everything (a last statement may lack its
 * ';').  source names the file in error messages (NULL: none). */
int sl_shell_run_text(sl_shell *sh, const char *source, const char *text,
                      size_t len, int first_line, bool final, size_t *consumed);

/* Run a script file (for `sluice FILE` and .read; "-" is stdin).  from and
 * from_line say where it was asked for (.read), for messages; NULL, 0 on
 * the command line. */
int sl_shell_run_file(sl_shell *sh, const char *path, const char *from,
                      int from_line);

/* Line-at-a-time input (the REPL and piped stdin): lines accumulate until
 * they hold complete statements, which then run. */
typedef struct sl_shell_input {
  sl_strbuf pending;  /* text not run yet */
  int pending_line;   /* line number of pending's first byte */
  int next_line;      /* line number of the next line fed */
  bool restart_lines; /* interactive: number each new statement from 1 */
  const char *source; /* for error messages, or NULL */
} sl_shell_input;

void sl_shell_input_init(sl_shell_input *in, const char *source,
                         bool restart_lines);
void sl_shell_input_free(sl_shell_input *in);
/* Is part of a statement waiting for more lines (continuation prompt)? */
bool sl_shell_input_pending(const sl_shell_input *in);
/* Forget the pending text (Ctrl-C). */
void sl_shell_input_discard(sl_shell_input *in);
/* Feed one line (without its newline). */
int sl_shell_input_feed(sl_shell *sh, sl_shell_input *in, const char *line,
                        size_t len);
/* End of input: run what is left (a statement without ';'). */
int sl_shell_input_finish(sl_shell *sh, sl_shell_input *in);

/* Read and run a stream that is not a terminal (piped stdin). */
int sl_shell_run_stream(sl_shell *sh, FILE *in, const char *source);

/* Run one dot-command line (text starts at the '.', no newline). */
int sl_shell_dot_command(sl_shell *sh, const char *source, int line,
                         const char *text, size_t len);
/* The i-th dot-command name (".bail", ...), NULL past the last. */
const char *sl_shell_dot_command_name(int i);

/* The interactive shell on the terminal. */
int sl_shell_repl(sl_shell *sh);

/* ---- The terminal (line_reader.c, libedit) ---- */

typedef struct sl_completion sl_completion;
typedef struct sl_line_reader sl_line_reader;
/* Fill out with the candidates for line (NUL-terminated) at cursor. */
typedef void (*sl_complete_fn)(void *ctx, const char *line, size_t cursor,
                               sl_completion *out);

enum { SL_LINE_OK, SL_LINE_EOF, SL_LINE_INTERRUPTED };

/* Line editing on the terminal in/out with history in history_path (NULL:
 * none) and Tab calling complete.  Ctrl-C at the prompt is a request on
 * interrupt (the shell's token, which the SIGINT handler requests): it
 * ends the read with SL_LINE_INTERRUPTED.  NULL if the editor cannot
 * start. */
sl_line_reader *sl_line_reader_new(const char *prog, sl_cancel *interrupt,
                                   FILE *in, FILE *out, FILE *err,
                                   const char *history_path,
                                   sl_complete_fn complete, void *ctx);
void sl_line_reader_free(sl_line_reader *lr);
/* Read a line (without its newline; valid until the next call). */
int sl_line_reader_read(sl_line_reader *lr, const char *prompt,
                        const char **line, size_t *len);
/* Add an entry (may hold newlines) to the history and save the file. */
void sl_line_reader_add_history(sl_line_reader *lr, const char *entry);

/* ---- Tab completion (completion.c) ---- */

struct sl_completion {
  size_t word_start; /* byte offset in the line of the word completed */
  int n;
  char **items; /* heap, sorted, unique */
};

/* Candidates for the word that ends at cursor in line.  pending is the
 * earlier lines of the statement being typed ("" if none).  Dot-commands
 * are offered only at the start of a new input; after FROM, JOIN, ... only
 * tables; columns are those of the tables the statement names (of every
 * table if it names none); `t.` offers t's columns.  cat may be NULL. */
void sl_complete(const sl_catalog *cat, const char *pending, const char *line,
                 size_t cursor, sl_completion *out);
void sl_completion_free(sl_completion *c);

#endif
