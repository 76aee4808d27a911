/* cancel.c - cancellation tokens and the thread's current one (see
 * cancel.h).  Separate from the shell's signal handling (shell/signals.c):
 * a token knows nothing of who requests it. */
#include "sluice/common/cancel.h"

#include <stddef.h>

/* A signal handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "sl_cancel needs a lock-free int");

static _Thread_local const sl_cancel *current = NULL;

void sl_cancel_init(sl_cancel *c, const sl_cancel *parent) {
  atomic_init(&c->requests, 0);
  c->parent = parent;
}

void sl_cancel_request(sl_cancel *c) {
  atomic_fetch_add(&c->requests, 1);
}

void sl_cancel_clear(sl_cancel *c) {
  atomic_store(&c->requests, 0);
}

int sl_cancel_requests(const sl_cancel *c) {
  return atomic_load(&c->requests);
}

bool sl_cancel_pending(const sl_cancel *c) {
  for (; c != NULL; c = c->parent)
    if (sl_cancel_requests(c) > 0)
      return true;
  return false;
}

const sl_cancel *sl_cancel_scope_enter(const sl_cancel *c) {
  const sl_cancel *previous = current;
  current = c;
  return previous;
}

void sl_cancel_scope_leave(const sl_cancel *previous) {
  current = previous;
}

const sl_cancel *sl_cancel_current(void) {
  return current;
}

bool sl_cancel_current_pending(void) {
  return sl_cancel_pending(current);
}
