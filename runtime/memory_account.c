/* memory_account.c - one query's state in this process, summed against
 * the memory limit (memory_account.h). */
#include "memory_account.h"

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

const char *sl_memory_over_text(const sl_memory_account *a, uint64_t part,
                                uint64_t total, char *buf, size_t n) {
  char t[32], l[32];
  sl_exec_bytes_text(a->limit, l, sizeof l);
  if (total > part)
    snprintf(buf, n,
             " (%s with the query's other state in this process), over the "
             "memory limit of %s",
             sl_exec_bytes_text(total, t, sizeof t), l);
  else
    snprintf(buf, n, ", over the memory limit of %s", l);
  return buf;
}
