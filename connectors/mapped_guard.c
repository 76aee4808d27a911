/* mapped_guard.c - a SIGBUS in a guarded file mapping becomes a jump back
 * to the reader (see mapped_guard.h for why and how it is used). */
#include "sluice/connectors/mapped_guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

/* The innermost guard of this thread, or NULL.  Initial-exec TLS of the
 * executable: reading it in a signal handler is safe. */
static _Thread_local sl_mapped_guard *tl_guard;

/* SIGBUS's handling before ours, which gets every SIGBUS that is not
 * ours.  Written under `lock` only, never to our own handler. */
static struct sigaction previous;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  sl_mapped_guard *g = tl_guard;
  if (g && si && si->si_code > 0) {
    uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)*g->base;
    if (lo && a >= lo && a - lo < *g->size) {
      g->fault_offset = (size_t)(a - lo);
      tl_guard = g->outer;
      siglongjmp(g->env, 1);
    }
  }
  /* Not ours: hand it to what handled SIGBUS before.  A fault returns to
   * the faulting instruction, which faults again under the restored
   * handling; a SIGBUS sent by kill() is raised again. */
  sigaction(SIGBUS, &previous, NULL);
  if (!si || si->si_code <= 0)
    raise(sig);
}

/* Installed at every source's open, not once: whoever set a SIGBUS
 * handler after ours (a test harness does, per test) gets SIGBUS ahead of
 * it, and ours must come first again. */
int sl_mapped_guard_install(sl_error *err) {
  struct sigaction sa, now;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sigemptyset(&sa.sa_mask);
  /* SA_NODEFER: the jump out of the handler does not restore the signal
   * mask (sigsetjmp(env, 0) saves none, to cost no system call), so
   * SIGBUS must not be blocked while the handler runs. */
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  int rc = 0;
  pthread_mutex_lock(&lock);
  if (sigaction(SIGBUS, NULL, &now) != 0)
    rc = errno;
  else if (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_sigbus)
    rc = sigaction(SIGBUS, &sa, &previous) != 0 ? errno : 0;
  pthread_mutex_unlock(&lock);
  if (rc)
    return sl_error_set(err, SL_EIO,
                        "cannot install the handler that turns a shrinking "
                        "file into an error: sigaction: %s",
                        strerror(rc));
  return SL_OK;
}

void sl_mapped_guard_enter(sl_mapped_guard *g, const char *const *base,
                           const size_t *size) {
  g->base = base;
  g->size = size;
  g->fault_offset = 0;
  g->outer = tl_guard;
  tl_guard = g;
}

void sl_mapped_guard_leave(sl_mapped_guard *g) {
  tl_guard = g->outer;
}
