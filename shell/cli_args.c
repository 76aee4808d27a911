/* cli_args.c - the command line of `sluice`: options, --help, --version.
 *
 * Parsed by hand rather than with getopt so that -c strings and script
 * files run in the order they were given, and so that errors read the same
 * everywhere.  Nothing here exits: main() turns SL_CLI_USAGE into status 2.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/node/node_daemon.h"
#include "sluice/shell/shell.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0.0.0"
#endif

void sl_cli_print_help(FILE *fp, const char *prog) {
  fprintf(fp,
          "Usage: %s [OPTIONS] [FILE.sql ...]\n"
          "\n"
          "Sluice, a streaming-SQL shell.  With no FILE and no -c, reads SQL\n"
          "from the terminal (an interactive shell) or from piped stdin.\n"
          "Statements end with ';'.  Lines starting with '.' are shell\n"
          "commands (.help lists them).\n"
          "\n"
          "Options:\n"
          "  -c, --command SQL   run SQL (one or more statements); may be\n"
          "                      repeated; runs in order with the FILEs\n"
          "  -m, --mode MODE     output mode: %s\n"
          "                      (default: table)\n"
          "      --headers       print column names (the default)\n"
          "      --no-headers    do not print column names\n"
          "      --bail          stop at the first error (the default for\n"
          "                      files, -c and piped input)\n"
          "      --no-bail       keep going after errors (the exit status is\n"
          "                      still 1)\n"
          "      --nodes N       run queries on N node processes on this\n"
          "                      host (SET 'sluice.nodes' = 'N')\n"
          "      --cluster LIST  run queries on the nodes at host:port,...\n"
          "                      (each started with `%s node --listen\n"
          "                      HOST:PORT --secret-file FILE`)\n"
          "      --secret-file FILE  the cluster secret the nodes were\n"
          "                      started with (--cluster needs it)\n"
          "      --transport T   channels between nodes: auto (the default:\n"
          "                      shm on one host, verbs between hosts that\n"
          "                      all have an active RDMA device, else tcp),\n"
          "                      verbs, shm or tcp (SET 'sluice.transport')\n"
          "  -h, --help          show this help and exit\n"
          "  -V, --version       show the version and exit\n"
          "\n"
          "A FILE of '-' reads standard input.\n"
          "\n"
          "Environment:\n"
          "  SLUICE_HISTORY      history file of the interactive shell\n"
          "                      (default ~/.sluice_history; empty: none)\n"
          "\n"
          "Exit status: 0 on success, 1 if any statement or command failed,\n"
          "2 on a command-line error.\n"
          "\n"
          "  %s node --secret-file FILE [OPTIONS]\n"
          "runs a node daemon (%s node --help for its options).\n",
          prog, sl_output_mode_names(), prog, prog, prog);
}

void sl_cli_print_node_help(FILE *fp, const char *prog) {
  fprintf(
      fp,
      "Usage: %s node --secret-file FILE [--listen [HOST:]PORT]\n"
      "           [--data-dir DIR] [--user NAME] [--max-pending N]\n"
      "\n"
      "Runs a node daemon that serves coordinators (shells started with\n"
      "--cluster) and other nodes, each connection in a process of its own,\n"
      "until it is killed.\n"
      "\n"
      "Options:\n"
      "      --secret-file FILE  accept only peers that prove they know the\n"
      "                      secret in FILE (readable by its owner only;\n"
      "                      at least 16 bytes that look random: 48 bits\n"
      "                      by their byte frequencies; make one with\n"
      "                      head -c 32 /dev/urandom | base64 > FILE;\n"
      "                      chmod 600 FILE)\n"
      "      --listen [HOST:]PORT  where to listen (default 127.0.0.1:%d; a\n"
      "                      bare PORT is on 127.0.0.1)\n"
      "      --data-dir DIR  the files tables may read and write: every path\n"
      "                      in a table's WITH clause resolves inside DIR\n"
      "                      (relative paths relative to it; absolute paths\n"
      "                      elsewhere, '..' and links out are refused).\n"
      "                      Without it, filesystem and sqlite tables are\n"
      "                      refused on this node\n"
      "      --user NAME     after binding the port and reading the secret,\n"
      "                      switch to user NAME (its groups too); the\n"
      "                      daemon does not start if it cannot.  A daemon\n"
      "                      running as root without it warns\n"
      "      --max-pending N  connections that have not proved the secret\n"
      "                      yet, at most (default %d, 1..%d); more are\n"
      "                      refused and logged with their address\n"
      "  -h, --help          show this help and exit\n",
      prog, SL_NODE_DEFAULT_PORT, SL_NODE_DEFAULT_MAX_PENDING,
      SL_NODE_MAX_PENDING);
}

static int usage_error(char **err_msg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(char **err_msg, const char *fmt, ...) {
  sl_strbuf b = SL_STRBUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  sl_strbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  *err_msg = sl_strbuf_detach(&b);
  return SL_CLI_USAGE;
}

static void add_action(sl_cli_options *opts, sl_cli_action_kind kind,
                       const char *arg) {
  opts->actions = realloc(opts->actions,
                          (size_t)(opts->nactions + 1) * sizeof *opts->actions);
  if (!opts->actions)
    abort();
  opts->actions[opts->nactions].kind = kind;
  opts->actions[opts->nactions].arg = arg;
  opts->nactions++;
}

/* If argv[*i] is the option (short or long), store its value (the next
 * argument, or the text after '=' for the long form) and return 1; return
 * 0 if it is another option; SL_CLI_USAGE if the value is missing. */
static int option_value(int argc, char **argv, int *i, const char *shortname,
                        const char *longname, const char **value,
                        char **err_msg) {
  const char *a = argv[*i];
  size_t ln = strlen(longname);
  if (strncmp(a, longname, ln) == 0 && a[ln] == '=') {
    *value = a + ln + 1;
    return 1;
  }
  if (strcmp(a, longname) != 0 && strcmp(a, shortname) != 0)
    return 0;
  if (*i + 1 >= argc)
    return usage_error(err_msg, "option '%s' needs a value", a);
  *value = argv[++*i];
  return 1;
}

int sl_cli_parse(int argc, char **argv, sl_cli_options *opts, char **err_msg) {
  memset(opts, 0, sizeof *opts);
  opts->headers = -1;
  opts->bail = -1;
  *err_msg = NULL;
  bool options_done = false;
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "node") == 0) {
    /* `sluice node [--listen [HOST:]PORT] --secret-file FILE`: a node
     * daemon, nothing else. */
    opts->node = true;
    opts->max_pending = SL_NODE_DEFAULT_MAX_PENDING;
    const char *listen = NULL;
    for (int i = 2; i < argc; i++) {
      const char *value = NULL;
      int rc;
      if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
        opts->help = true;
        return SL_CLI_OK;
      } else if ((rc = option_value(argc, argv, &i, "--listen", "--listen",
                                    &value, err_msg)) != 0) {
        if (rc == SL_CLI_USAGE)
          return rc;
        listen = value;
      } else if ((rc = option_value(argc, argv, &i, "--secret-file",
                                    "--secret-file", &value, err_msg)) != 0) {
        if (rc == SL_CLI_USAGE)
          return rc;
        opts->secret_file = value;
      } else if ((rc = option_value(argc, argv, &i, "--data-dir", "--data-dir",
                                    &value, err_msg)) != 0) {
        if (rc == SL_CLI_USAGE)
          return rc;
        opts->data_dir = value;
      } else if ((rc = option_value(argc, argv, &i, "--user", "--user", &value,
                                    err_msg)) != 0) {
        if (rc == SL_CLI_USAGE)
          return rc;
        opts->user = value;
      } else if ((rc = option_value(argc, argv, &i, "--max-pending",
                                    "--max-pending", &value, err_msg)) != 0) {
        if (rc == SL_CLI_USAGE)
          return rc;
        char *end;
        long n = strtol(value, &end, 10);
        if (*end || end == value || n < 1 || n > SL_NODE_MAX_PENDING)
          return usage_error(err_msg,
                             "--max-pending wants a number of connections "
                             "1..%d, not '%s'",
                             SL_NODE_MAX_PENDING, value);
        opts->max_pending = (int)n;
      } else {
        return usage_error(err_msg,
                           "unknown argument '%s'; usage: sluice node "
                           "--secret-file FILE [--listen [HOST:]PORT] "
                           "[--data-dir DIR] [--user NAME] [--max-pending "
                           "N] (sluice node --help)",
                           argv[i]);
      }
    }
    if (!opts->secret_file)
      return usage_error(
          err_msg,
          "a node needs --secret-file FILE: the cluster secret every "
          "shell and node must prove it knows (make one with: head -c 32 "
          "/dev/urandom | base64 > FILE; chmod 600 FILE)");
    if (!listen)
      snprintf(opts->listen, sizeof opts->listen, "127.0.0.1:%d",
               SL_NODE_DEFAULT_PORT);
    else if (strspn(listen, "0123456789") == strlen(listen) && *listen)
      snprintf(opts->listen, sizeof opts->listen, "127.0.0.1:%s", listen);
    else if (strlen(listen) < sizeof opts->listen)
      snprintf(opts->listen, sizeof opts->listen, "%s", listen);
    else
      return usage_error(err_msg, "--listen '%s' is too long", listen);
    return SL_CLI_OK;
  }
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    const char *value = NULL;
    int rc;
    if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
      add_action(opts, SL_CLI_FILE, a);
    } else if (strcmp(a, "--") == 0) {
      options_done = true;
    } else if ((rc = option_value(argc, argv, &i, "-c", "--command", &value,
                                  err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      add_action(opts, SL_CLI_COMMAND, value);
    } else if ((rc = option_value(argc, argv, &i, "-m", "--mode", &value,
                                  err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      if (!sl_output_mode_parse(value, &opts->mode))
        return usage_error(err_msg, "unknown output mode '%s' (one of: %s)",
                           value, sl_output_mode_names());
      opts->have_mode = true;
    } else if ((rc = option_value(argc, argv, &i, "--nodes", "--nodes", &value,
                                  err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      char *end;
      long n = strtol(value, &end, 10);
      if (*end || n < 1 || n > 256)
        return usage_error(err_msg,
                           "--nodes wants a number of nodes 1..256, "
                           "got '%s'",
                           value);
      opts->nodes = (int)n;
    } else if ((rc = option_value(argc, argv, &i, "--secret-file",
                                  "--secret-file", &value, err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      opts->secret_file = value;
    } else if ((rc = option_value(argc, argv, &i, "--cluster", "--cluster",
                                  &value, err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      opts->cluster = value;
    } else if ((rc = option_value(argc, argv, &i, "--transport", "--transport",
                                  &value, err_msg)) != 0) {
      if (rc == SL_CLI_USAGE)
        return rc;
      if (strcmp(value, "auto") && strcmp(value, "verbs") &&
          strcmp(value, "shm") && strcmp(value, "tcp"))
        return usage_error(err_msg,
                           "--transport wants auto, verbs, shm or tcp, "
                           "got '%s'",
                           value);
      opts->transport = value;
    } else if (strcmp(a, "--headers") == 0) {
      opts->headers = 1;
    } else if (strcmp(a, "--no-headers") == 0) {
      opts->headers = 0;
    } else if (strcmp(a, "--bail") == 0) {
      opts->bail = 1;
    } else if (strcmp(a, "--no-bail") == 0) {
      opts->bail = 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      opts->help = true;
    } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
      opts->version = true;
    } else {
      return usage_error(err_msg, "unknown option '%s'", a);
    }
  }
  return SL_CLI_OK;
}

void sl_cli_options_free(sl_cli_options *opts) {
  free(opts->actions);
  opts->actions = NULL;
  opts->nactions = 0;
}
