/* memory_account.c - one query's state in this process, summed against
 * the memory limit (memory_account.h). */
#include "memory_account.h"

#include <stdarg.h>
#include <stdio.h>

#include "executor_int.h"

void sl_memory_account_init(sl_memory_account *a, uint64_t limit) {
  atomic_init(&a->held, 0);
  a->limit = limit;
}

uint64_t sl_memory_charge(sl_memory_account *a, uint64_t *charged,
                          uint64_t now) {
  uint64_t total;
  /* Unsigned arithmetic wraps, so adding (now - charged) also subtracts. */
  total = atomic_fetch_add(&a->held, now - *charged) + (now - *charged);
  *charged = now;
  return total;
}

bool sl_memory_grew_over(sl_memory_account *a, uint64_t *charged, uint64_t now,
                         uint64_t *total) {
  bool grew = now > *charged;
  *total = sl_memory_charge(a, charged, now);
  return grew && *total > a->limit;
}

int sl_memory_over_error(sl_error *err, const sl_memory_account *a,
                         uint64_t part, uint64_t total, const char *advice,
                         const char *what, ...) {
  char holder[256], p[32], t[32], l[32], others[96] = "";
  va_list ap;
  va_start(ap, what);
  vsnprintf(holder, sizeof holder, what, ap);
  va_end(ap);
  if (total > part)
    snprintf(others, sizeof others,
             " (%s with the query's other state in this process)",
             sl_exec_bytes_text(total, t, sizeof t));
  return sl_error_set(
      err, SL_ENOMEM,
      "%s %s%s, over the memory limit of %s; SET 'sluice.memory-limit' "
      "higher%s%s",
      holder, sl_exec_bytes_text(part, p, sizeof p), others,
      sl_exec_bytes_text(a->limit, l, sizeof l), advice ? ", or " : "",
      advice ? advice : "");
}
