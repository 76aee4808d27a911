/* cancel.h - a cancellation token: the flag that stops one running
 * statement.
 *
 * Whoever may stop a statement owns a token and hands it down with the run
 * (sl_run.cancel in exec/executor.h): the shell's (its Ctrl-C handler and
 * .timeout watchdog request it), a node's per query (the coordinator's
 * CANCEL requests it), a test's.  The runtime polls the token of the run
 * it serves at convenient points and stops with SL_ECANCELLED, so one
 * session's stop never reaches another session's statement.
 *
 * A token may have a parent whose request it sees too (a statement's token
 * under its session's).  Requesting is an atomic add on a lock-free int, so
 * a signal handler and any thread may request; clearing is the owner's.
 *
 * The layers below the executor (parser, binder, planner, expression and
 * JIT compilers) have no run in their signatures: they poll the token of
 * the statement their thread works for, sl_cancel_current(), which the
 * session (for parse, bind, plan) and the executor (for each thread it
 * runs a plan on) enter as the thread's scope.
 */
#ifndef SLUICE_CANCEL_H
#define SLUICE_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct sl_cancel {
  atomic_int requests;            /* since the last clear */
  const struct sl_cancel *parent; /* its requests stop this one too; NULL */
} sl_cancel;

/* A token with no request yet, under parent (NULL: none). */
void sl_cancel_init(sl_cancel *c, const sl_cancel *parent);

/* Ask the statement to stop.  Safe in a signal handler. */
void sl_cancel_request(sl_cancel *c);

/* Forget the requests made so far (the owner, before a statement runs). */
void sl_cancel_clear(sl_cancel *c);

/* How many times c itself (not its parent) was requested since the last
 * clear: the shell's Ctrl-C counts presses.  Safe in a signal handler. */
int sl_cancel_requests(const sl_cancel *c);

/* Was c or one of its parents requested?  NULL: never. */
bool sl_cancel_pending(const sl_cancel *c);

/* The calling thread's statement token (NULL: none, nothing stops it).
 * Enter returns the scope it replaces, which leave restores, so scopes
 * nest (a statement run inside another's). */
const sl_cancel *sl_cancel_scope_enter(const sl_cancel *c);
void sl_cancel_scope_leave(const sl_cancel *previous);
const sl_cancel *sl_cancel_current(void);

/* sl_cancel_pending(sl_cancel_current()): for the layers without a run. */
bool sl_cancel_current_pending(void);

#endif
