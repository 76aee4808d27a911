/* mapped_guard.h - reading a mapped file that may shrink under the reader.
 *
 * Why: a page of a file mapping that lies wholly past the file's end (the
 * file was truncated after it was mapped) raises SIGBUS on access, which
 * kills the process.  A source must never die because someone rewrote its
 * file, so the code that reads a mapping runs inside a guard: a SIGBUS
 * whose address lies in the guarded mapping, in the thread that holds the
 * guard, jumps back to the guard's sigsetjmp instead of ending the
 * process, and the reader reports an error naming its file.  Any other
 * SIGBUS goes to whatever handled SIGBUS before (the default: the process
 * ends, as it would have).  Nothing costs anything per byte: one
 * sigsetjmp (no system call: the signal mask is not saved, the handler
 * runs with SA_NODEFER so nothing stays blocked) per guarded call.
 *
 * The guarded code must leave its state consistent at every byte it reads
 * from the mapping (a jump abandons it there), and must not take locks or
 * allocate while it reads mapped bytes: the CSV source reads the mapping
 * only in its scanner and field parsers, which do neither.
 *
 *   sl_mapped_guard *g = &s->guard;
 *   if (sigsetjmp(g->env, 0) != 0) { ... g->fault_offset ... }  (left)
 *   sl_mapped_guard_enter(g, &s->data, &s->map_size);
 *   ... read s->data ...
 *   sl_mapped_guard_leave(g);
 *
 * The guard must live in memory that outlives the sigsetjmp call's frame
 * and is not a local of it (the handler writes fault_offset into it, and
 * a local written between sigsetjmp and the jump is indeterminate). */
#ifndef SLUICE_MAPPED_GUARD_H
#define SLUICE_MAPPED_GUARD_H

#include <setjmp.h>
#include <stddef.h>

#include "sluice/common/error.h"

typedef struct sl_mapped_guard {
  sigjmp_buf env;
  /* The mapping, read when a fault comes (it may be remapped while
   * guarded): [*base, *base + *size). */
  const char *const *base;
  const size_t *size;
  size_t fault_offset; /* set before the jump: the faulting byte */
  struct sl_mapped_guard *outer;
} sl_mapped_guard;

/* Install the SIGBUS handler unless it is the one in place (call it
 * before each guarded use: another may have replaced it since).
 * SL_EIO when sigaction fails. */
int sl_mapped_guard_install(sl_error *err);

/* Guard this thread's reads of [*base, *base + *size) until leave (or a
 * fault: the jump leaves the guard itself).  Guards nest; leave them in
 * the reverse order. */
void sl_mapped_guard_enter(sl_mapped_guard *g, const char *const *base,
                           const size_t *size);
void sl_mapped_guard_leave(sl_mapped_guard *g);

#endif
