/* main.c - the `sluice` program: parse the command line, then run the
 * script files and -c strings in order, or the SQL piped on stdin, or the
 * interactive shell on a terminal.  The only place that decides the exit
 * status: 0 success, 1 if anything failed, 2 for a command-line error,
 * 130 / 143 for a script stopped by SIGINT / SIGTERM.
 */
#include <locale.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals_int.h"
#include "sluice/cluster/cluster_client.h"
#include "sluice/common/version.h"
#include "sluice/node/node_daemon.h"
#include "sluice/shell/shell.h"

/* A command-line option that is a setting (--nodes, --transport): SET it
 * quietly, as if it were the script's first statement (its value was
 * checked by the option parser). */
static void apply_setting(sl_shell *sh, const char *key, const char *value) {
  char set[128];
  snprintf(set, sizeof set, "SET '%s' = '%s'", key, value);
  sl_result_sink quiet = sl_result_sink_discard(NULL);
  sl_error err = {0};
  sl_session_execute(sh->session, set, strlen(set), 1, &quiet, &err);
  sl_error_clear(&err);
}

/* Memory a query frees stays in the process for the next allocation and
 * the next query, as a database's buffer pool does, instead of going back
 * to the kernel at once: glibc maps blocks from 128 KiB on afresh (and
 * raises that bar only as it frees them) and gives back the top of a heap
 * past 128 KiB free.  Memory taken afresh costs a page fault and the
 * kernel zeroing each page; in a virtual machine that measured more than
 * the work on it (NEXMark q8 at 5 M events: 0.089 s -> 0.077 s, and a
 * second run in the same process 0.055 s -> 0.040 s; docs/BENCHMARKS.md).
 * Blocks of 32 MiB and more are still mapped and unmapped each time (the
 * largest group tables and the pre-generated input keep their own pools
 * or mappings), so at most 64 MiB of free heap stays per arena.  A query's
 * memory limit counts what it holds, not this. */
static void keep_freed_memory(void) {
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int main(int argc, char **argv) {
  keep_freed_memory();
  /* libedit needs the locale to edit UTF-8 text; only LC_CTYPE, so number
   * formatting stays the same everywhere. */
  setlocale(LC_CTYPE, "");

  sl_cli_options opts;
  char *msg = NULL;
  if (sl_cli_parse(argc, argv, &opts, &msg) != SL_CLI_OK) {
    fprintf(stderr, "sluice: %s\nTry 'sluice%s --help' for more information.\n",
            msg ? msg : "bad arguments", opts.node ? " node" : "");
    free(msg);
    sl_cli_options_free(&opts);
    return 2;
  }
  /* The cluster secret (--secret-file), for a node daemon or to join
   * one. */
  sl_secret secret = {{0}, false};
  if (opts.secret_file) {
    sl_error err = {0};
    if (sl_secret_load(opts.secret_file, &secret, &err) != SL_OK) {
      fprintf(stderr, "sluice%s: %s\n", opts.node ? " node" : "", err.message);
      sl_error_clear(&err);
      sl_cli_options_free(&opts);
      return 2;
    }
  }
  if (opts.node && opts.help) {
    sl_cli_print_node_help(stdout, "sluice");
    sl_cli_options_free(&opts);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (opts.node) {
    sl_error err = {0};
    sl_node_daemon_options daemon = {opts.listen, opts.data_dir, opts.user,
                                     opts.max_pending};
    int rc = sl_node_listen(&daemon, &secret, &err);
    fprintf(stderr, "sluice node: %s\n", err.message ? err.message : "stopped");
    sl_error_clear(&err);
    sl_secret_wipe(&secret);
    sl_cli_options_free(&opts);
    return rc == SL_OK ? 0 : rc == SL_EINVAL ? 2 : 1;
  }
  if (opts.help || opts.version) {
    if (opts.help)
      sl_cli_print_help(stdout, "sluice");
    else
      printf("sluice %s\n", sl_version());
    sl_cli_options_free(&opts);
    return fflush(stdout) == 0 ? 0 : 1;
  }

  bool interactive = opts.nactions == 0 && isatty(STDIN_FILENO);
  /* table everywhere, as DuckDB does: a script's output is read by people
   * as often as by programs, and programs can ask for -m csv or json. */
  sl_output_mode mode = opts.have_mode ? opts.mode : SL_MODE_TABLE;
  bool headers = opts.headers != 0;
  bool bail = opts.bail >= 0 ? opts.bail == 1 : !interactive;

  sl_shell *sh = sl_shell_new(stdout, stderr, mode, headers, bail, interactive);
  if (!sh) {
    fprintf(stderr, "sluice: cannot start a session\n");
    sl_cli_options_free(&opts);
    return 1;
  }

  /* --transport, --cluster / --nodes: where queries run, before any
   * statement. */
  if (opts.transport)
    apply_setting(sh, "sluice.transport", opts.transport);
  if (opts.cluster) {
    sl_error err = {0};
    int rc = sl_session_connect(sh->session, opts.cluster, &secret, &err);
    sl_secret_wipe(&secret);
    if (rc != SL_OK) {
      fprintf(stderr, "sluice: %s\n", err.message);
      sl_error_clear(&err);
      sl_shell_free(sh);
      sl_cli_options_free(&opts);
      return 1;
    }
  }
  if (opts.nodes > 1) {
    char n[16];
    snprintf(n, sizeof n, "%d", opts.nodes);
    apply_setting(sh, "sluice.nodes", n);
  }

  if (!interactive)
    sl_signals_install_script(&sh->cancel); /* SIGINT/SIGTERM stop, flush */
  if (interactive) {
    sl_shell_repl(sh);
  } else if (opts.nactions == 0) {
    sl_shell_run_stream(sh, stdin, NULL);
  } else {
    for (int i = 0; i < opts.nactions && !sh->quit; i++) {
      const sl_cli_action *a = &opts.actions[i];
      int rc = a->kind == SL_CLI_FILE
                   ? sl_shell_run_file(sh, a->arg, NULL, 0)
                   : sl_shell_run_text(sh, NULL, a->arg, strlen(a->arg), 1,
                                       true, NULL);
      if (rc == SL_SHELL_STOP)
        break;
    }
  }

  /* At the terminal errors are part of the conversation; elsewhere any
   * error makes the run a failure. */
  int status = !interactive && sh->nerrors > 0 ? 1 : 0;
  sl_shell_free(sh);
  sl_cli_options_free(&opts);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "sluice: cannot write to standard output\n");
    status = 1;
  }
  /* Stopped by SIGINT or SIGTERM: the conventional 128 + signal (130,
   * 143), as if the signal had ended us, once the output is out. */
  if (sl_stop_signal) {
    fprintf(stderr, "sluice: stopped by %s\n",
            sl_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
    status = 128 + sl_stop_signal;
  }
  return status;
}
