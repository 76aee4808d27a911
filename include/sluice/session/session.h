/* session.h - running SQL text: the driver from statement text to results.
 *
 * A session holds what lives across statements: the catalog, the settings,
 * and (later) the connection to the nodes.  sl_session_execute takes the
 * text of ONE statement, runs it through the stages (parse -> bind -> plan
 * -> compile -> run) and hands results to a result sink.  The shell, the
 * test runners and `sluice -c` all go through here, so they behave alike.
 *
 * Ownership: the session owns its catalog and settings.  Strings passed to a
 * sink are only valid during the callback.
 */
#ifndef SLUICE_SESSION_H
#define SLUICE_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/catalog/catalog.h"
#include "sluice/common/error.h"
#include "sluice/common/settings.h"
#include "sluice/common/strbuf.h"
#include "sluice/common/types.h"

/* Where results go.  Every callback returns SL_OK or an error code (which
 * stops the statement).  A statement produces zero or more result sets
 * (begin, row*, flush*, end) and zero or more text blocks, in order. */
typedef struct sl_result_sink {
  void *ctx;
  /* A result set with ncols columns begins. */
  int (*begin)(void *ctx, int ncols, const char *const *names,
               const sl_type *const *types);
  /* One row; cells[i] is the text of column i, or NULL for SQL NULL.  A
   * cell is a C string, so a NUL character inside a value (a STRING may
   * hold one, as Flink's does) comes as SL_CELL_NUL; each output mode
   * shows it its own way (shell/output*.c). */
  int (*row)(void *ctx, const char *const *cells);
  /* The rows so far form a complete group (e.g. a fired window): a buffering
   * output mode may print them now.  Optional (may be NULL). */
  int (*flush)(void *ctx);
  /* The result set is complete. */
  int (*end)(void *ctx);
  /* Free-form text, e.g. EXPLAIN output: printed as is. */
  int (*text)(void *ctx, const char *text);
  /* A notice for the user (not a result): "[INFO] Table has been created.",
   * warnings.  The shell prints these on stderr. Optional. */
  int (*notice)(void *ctx, const char *text);
  /* A one-line status of a running query (events/s, watermark, ...),
   * called a few times a second; NULL clears it.  A terminal redraws it in
   * place; it is never part of the results.  Optional. */
  int (*progress)(void *ctx, const char *line);
  /* An updating result shown as a table redraws its current state.
   * erase = false: may it show intermediate states at all (SL_OK on a
   * terminal; anything else: only the final state is printed)?  erase =
   * true: the next result set replaces the one this result printed last,
   * which the output erases when it still can (nothing printed after it,
   * and it fits on the screen).  Optional (NULL: cannot). */
  int (*replace)(void *ctx, bool erase);
} sl_result_sink;

/* U+0000 inside a cell: the two bytes Java's "modified UTF-8" (JNI,
 * DataOutput.writeUTF) spells it with, which valid UTF-8 never holds (an
 * overlong form), so a cell stays a C string and no text is ambiguous. */
#define SL_CELL_NUL "\xC0\x80"

/* A sink that drops results (benchmarks, tests, EXPLAIN ANALYZE), counting
 * rows into *rows when rows is not NULL; no notices or progress. */
sl_result_sink sl_result_sink_discard(uint64_t *rows);

typedef struct sl_session sl_session;

sl_session *sl_session_new(void);
void sl_session_free(sl_session *s);

sl_catalog *sl_session_catalog(sl_session *s);
sl_settings *sl_session_settings(sl_session *s);

/* Run one statement (text need not be NUL-terminated; a trailing ';' is
 * allowed).  first_line is the line of text's first byte in the user's
 * input, so error positions refer to the user's file.  Error positions in
 * err are relative to text (offset) and absolute (line). */
int sl_session_execute(sl_session *s, const char *text, size_t len,
                       int first_line, sl_result_sink *sink, sl_error *err);

/* Clusters (node.h).  A node's session: it never starts nodes of its own
 * (SET 'sluice.nodes' is the coordinator's). */
void sl_session_set_node(sl_session *s);

struct sl_query_stats;
/* On a node: plan the statement text (a query or INSERT) as the
 * coordinator did, with its strategy, and run this node's share (nodes:
 * which node, the coordinator's socket, the cancel flag, the exchange).
 * leaf >= 0: the text plans into stages (plan.h) and this runs only that
 * leaf, whose rows go to the coordinator's stages; -1: the whole plan.
 * fed >= 0 too: a broadcast or repartitioned join (join: plan.h
 * sl_join_strategy), this node runs the stages over its share of leaf
 * `leaf` and leaf `fed`'s rows from nodes->feed, and sends the results. */
struct sl_exec_nodes;
struct sl_secret;
int sl_session_run_on_node(sl_session *s, const char *text, size_t len,
                           int leaf, int fed, int join, int strategy,
                           const struct sl_exec_nodes *nodes,
                           struct sl_query_stats *stats, sl_error *err);

/* The nodes this session runs queries on ("" when it runs them alone), for
 * the shell's `.nodes`. */
void sl_session_describe_nodes(sl_session *s, sl_strbuf *out);

/* Join the daemons at "host:port,..." (`sluice --cluster`), proving the
 * cluster secret to each (auth.h; the session keeps a copy, to join them
 * again for a staged query's leaves); queries then run on them. */
int sl_session_connect(sl_session *s, const char *list,
                       const struct sl_secret *secret, sl_error *err);

/* Serve one coordinator's connection as a node until it closes (node.h);
 * the process's session lives for the connection; channels and links to
 * other nodes prove secret (auth.h; NULL: none).  Returns SL_OK when the
 * coordinator closed the connection in order. */
int sl_node_serve(int fd, const struct sl_secret *secret);

#endif
