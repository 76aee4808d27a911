/* interrupt.c - the SIGINT handler behind sl_interrupt_pending(), and
 * script mode's SIGINT/SIGTERM handler (see interrupt.h). */
#include "sluice/common/interrupt.h"

#include <string.h>
#include <unistd.h>

/* The shell's mutable globals (see interrupt.h). */
volatile sig_atomic_t sl_interrupted = 0;

_Thread_local const atomic_bool *sl_interrupt_also = NULL;

void sl_interrupt_watch(const atomic_bool *flag) {
  sl_interrupt_also = flag;
}

/* The first Ctrl-C asks the running statement to stop.  If a statement
 * ignores two requests (it is stuck somewhere that does not poll), the
 * third gives SIGINT its default action back and re-raises it, so the user
 * is never trapped.  At the prompt the flag is cleared after each Ctrl-C. */
static void on_sigint(int signo) {
  if (sl_interrupted >= 2) {
    signal(signo, SIG_DFL);
    raise(signo);
    return;
  }
  sl_interrupted = sl_interrupted + 1;
}

void sl_interrupt_install(void) {
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

static void die_by(int signo) {
  signal(signo, SIG_DFL);
  raise(signo);
}

static void on_stop_signal(int signo) {
  if (getpid() != script_pid || sl_stop_signal) {
    die_by(signo);
    return;
  }
  sl_stop_signal = signo;
  sl_interrupted = 1;
  if (!sl_statement_running) { /* nothing running to stop and flush */
    const char *msg = signo == SIGINT ? "sluice: stopped by SIGINT\n"
                                      : "sluice: stopped by SIGTERM\n";
    ssize_t n = write(STDERR_FILENO, msg, strlen(msg));
    (void)n;
    die_by(signo);
  }
}

void sl_interrupt_install_script(void) {
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
