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
#include "sluice/common/cancel.h"
#include "sluice/common/error.h"
#include "sluice/common/settings.h"
#include "sluice/common/strbuf.h"
#include "sluice/common/types.h"
#include "sluice/connectors/result_sink.h"

/* A sink that drops results (benchmarks, tests, EXPLAIN ANALYZE), counting
 * rows into *rows when rows is not NULL; no notices or progress. */
sl_result_sink sl_result_sink_discard(uint64_t *rows);

typedef struct sl_session sl_session;

sl_session *sl_session_new(void);
void sl_session_free(sl_session *s);

sl_catalog *sl_session_catalog(sl_session *s);
sl_settings *sl_session_settings(sl_session *s);

/* The token that stops the session's statements (cancel.h): the shell's,
 * which its Ctrl-C and .timeout request; a node's query's, which the
 * coordinator's CANCEL requests.  The caller keeps it alive while the
 * session runs statements.  NULL (the default): nothing stops them.  Each
 * statement runs with it as its thread's cancel scope and in its run
 * context (executor.h), so a request stops this session only. */
void sl_session_set_cancel(sl_session *s, const sl_cancel *cancel);

/* Run one statement (text need not be NUL-terminated; a trailing ';' is
 * allowed).  first_line is the line of text's first byte in the user's
 * input, so error positions refer to the user's file.  Error positions in
 * err are relative to text (offset) and absolute (line). */
int sl_session_execute(sl_session *s, const char *text, size_t len,
                       int first_line, sl_result_sink *sink, sl_error *err);

/* Clusters (node_frames.h).  A node's session: it never starts nodes of its own
 * (SET 'sluice.nodes' is the coordinator's). */
void sl_session_set_node(sl_session *s);

struct sl_query_stats;
/* On a node: plan the statement text (a query or INSERT) as the
 * coordinator did, with its strategy, and run this node's share (nodes:
 * which node, the coordinator's socket, the cancel token, the exchange).
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

/* Serve one coordinator's connection as a node until it closes (node_frames.h);
 * the process's session lives for the connection; channels and links to
 * other nodes prove secret (auth.h; NULL: none).  Returns SL_OK when the
 * coordinator closed the connection in order. */
int sl_node_serve(int fd, const struct sl_secret *secret);

#endif
