/* signals_int.h - the shell owns the process's signals: SIGINT (and in
 * script mode SIGTERM) become a cancel request on the shell's token
 * (sl_shell.cancel, common/cancel.h), which its session hands to every
 * statement it runs.  Internal to shell/. */
#ifndef SLUICE_SHELL_SIGNALS_INT_H
#define SLUICE_SHELL_SIGNALS_INT_H

#include <signal.h>

#include "sluice/common/cancel.h"

/* The interactive shell: Ctrl-C requests target.  Installed without
 * SA_RESTART, so a blocking read at the prompt returns EINTR.  A third
 * Ctrl-C while a statement ignores the first two ends the process (the
 * default SIGINT action), so a stuck statement never traps the user. */
void sl_signals_install(sl_cancel *target);

/* Script mode (`sluice FILE`, -c, SQL on stdin): SIGINT and SIGTERM stop
 * the running statement as Ctrl-C does (a request on target; its sinks
 * keep what it produced) and end the script; main then exits with 128 +
 * the signal's number.  The signal is kept in sl_stop_signal (0: none),
 * which nothing clears.  Between statements (sl_statement_running == 0)
 * there is nothing to stop: the process ends at once, as without a
 * handler.  A second signal also ends it at once.  A signal ignored when
 * the program started (a background job's SIGINT) stays ignored; forked
 * node processes keep the default actions (a local node ignores SIGINT:
 * cluster_client.c). */
extern volatile sig_atomic_t sl_stop_signal;
extern volatile sig_atomic_t sl_statement_running;
void sl_signals_install_script(sl_cancel *target);

/* target is going away (its shell is freed): signals request nothing
 * from now on, and a SIGINT has its default action. */
void sl_signals_forget(const sl_cancel *target);

#endif
