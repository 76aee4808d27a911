/* interrupt.h - Ctrl-C: the one flag between the terminal and a running
 * statement.
 *
 * The shell installs a SIGINT handler that only sets sl_interrupted.  At the
 * prompt the shell uses it to discard the current input; while a statement
 * runs, the session (and later the runtime's schedulers) poll
 * sl_interrupt_pending() at convenient points and stop the statement with
 * SL_ECANCELLED.  The shell clears the flag before each statement.  A
 * third Ctrl-C while a statement ignores the flag ends the process (the
 * default SIGINT action), so a stuck statement never traps the user.
 *
 * These flags are the shell's only mutable globals: a signal handler can
 * touch nothing else safely.  The shell's .timeout sets it too (from a thread),
 * so a statement that runs too long stops exactly as on Ctrl-C.
 */
#ifndef SLUICE_INTERRUPT_H
#define SLUICE_INTERRUPT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

extern volatile sig_atomic_t sl_interrupted;

/* A node process's statement is stopped by its coordinator (CANCEL), not
 * by this process's Ctrl-C: the thread serving it names that flag here
 * (sl_interrupt_watch), so parsing, planning and compiling on that thread
 * stop on either.  Per thread, so a node served inside a shell's process
 * (tests) never cancels the shell's statement. */
extern _Thread_local const atomic_bool *sl_interrupt_also;
void sl_interrupt_watch(const atomic_bool *flag); /* NULL: none */

/* Install the SIGINT handler (without SA_RESTART, so a blocking read at the
 * prompt returns EINTR).  Only the interactive shell calls this; scripts
 * install sl_interrupt_install_script's below. */
void sl_interrupt_install(void);

/* Script mode (`sluice FILE`, -c, SQL on stdin): SIGINT and SIGTERM stop
 * the running statement as Ctrl-C does (its sinks keep what it produced)
 * and end the script; main then exits with 128 + the signal's number.  The
 * signal is kept in sl_stop_signal (0: none), which nothing clears.
 * Between statements (sl_statement_running == 0) there is nothing to
 * stop: the process ends at once, as without a handler.  A second signal
 * also ends it at once.  A signal ignored when the program started (a
 * background job's SIGINT) stays ignored; forked node processes keep the
 * default actions. */
extern volatile sig_atomic_t sl_stop_signal;
extern volatile sig_atomic_t sl_statement_running;
void sl_interrupt_install_script(void);

/* Has Ctrl-C been pressed since the last sl_interrupt_clear()? */
static inline bool sl_interrupt_pending(void) {
  return sl_interrupted != 0 ||
         (sl_interrupt_also != NULL && atomic_load(sl_interrupt_also));
}

static inline void sl_interrupt_clear(void) {
  sl_interrupted = 0;
}

/* Ask the running statement to stop, as one Ctrl-C does (the shell's
 * .timeout watchdog thread; a plain store, which the statement's pollers
 * see within their polling interval). */
static inline void sl_interrupt_request(void) {
  sl_interrupted = 1;
}

#endif
