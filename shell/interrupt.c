/* interrupt.c - the SIGINT handler behind sl_interrupt_pending(). */
#include "sluice/interrupt.h"

#include <string.h>

/* The one mutable global of the shell (see interrupt.h). */
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
