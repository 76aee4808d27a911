/* signals.c - the shell's SIGINT handler and script mode's SIGINT/SIGTERM
 * handler (see signals_int.h).  They only request the shell's cancel token
 * (common/cancel.h): the statements poll the token their run was given,
 * never a process-wide flag. */
#include "signals_int.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* The token a signal requests: the shell's mutable global, since a signal
 * handler can reach nothing else.  A lock-free atomic pointer. */
static _Atomic(sl_cancel *) target = NULL;

void sl_signals_forget(const sl_cancel *t) {
  sl_cancel *expected = (sl_cancel *)t;
  atomic_compare_exchange_strong(&target, &expected, NULL);
}

static void die_by(int signo) {
  signal(signo, SIG_DFL);
  raise(signo);
}

/* The first Ctrl-C asks the running statement to stop.  If a statement
 * ignores two requests (it is stuck somewhere that does not poll), the
 * third gives SIGINT its default action back and re-raises it, so the user
 * is never trapped.  At the prompt the token is cleared after each Ctrl-C. */
static void on_sigint(int signo) {
  sl_cancel *t = atomic_load(&target);
  if (t == NULL || sl_cancel_requests(t) >= 2) {
    die_by(signo);
    return;
  }
  sl_cancel_request(t);
}

void sl_signals_install(sl_cancel *t) {
  atomic_store(&target, t);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: el_gets/read must return EINTR */
  sigaction(SIGINT, &sa, NULL);
}

/* ---- script mode ---- */

volatile sig_atomic_t sl_stop_signal = 0;
volatile sig_atomic_t sl_statement_running = 0;
static pid_t script_pid; /* a forked node is another process */

static void on_stop_signal(int signo) {
  sl_cancel *t = atomic_load(&target);
  if (getpid() != script_pid || sl_stop_signal || t == NULL) {
    die_by(signo);
    return;
  }
  sl_stop_signal = signo;
  sl_cancel_request(t);
  if (!sl_statement_running) { /* nothing running to stop and flush */
    const char *msg = signo == SIGINT ? "sluice: stopped by SIGINT\n"
                                      : "sluice: stopped by SIGTERM\n";
    ssize_t n = write(STDERR_FILENO, msg, strlen(msg));
    (void)n;
    die_by(signo);
  }
}

void sl_signals_install_script(sl_cancel *t) {
  atomic_store(&target, t);
  script_pid = getpid();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  /* SA_RESTART: a write to the output that the signal interrupts goes on
   * (the rows produced so far must reach it). */
  sa.sa_flags = SA_RESTART;
  const int signals[] = {SIGINT, SIGTERM};
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
    struct sigaction old;
    if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue; /* ignored by whoever started us: stays so */
    sigaction(signals[i], &sa, NULL);
  }
}
