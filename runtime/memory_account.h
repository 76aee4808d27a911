/* memory_account.h - the state one query holds in this process, summed
 * over every kind of it, against SET 'sluice.memory-limit'.
 *
 * Why one account: the limit bounds the process, and a query's state is
 * spread over several holders at once (each worker's open windows, a
 * partition leader's merges, the coordinator's merged window, ORDER BY's
 * rows, a join's stored rows and its stages' state).  Checked one by one,
 * each could sit just under the limit and their sum far over it.
 *
 * Each holder keeps what it last reported (a uint64_t it owns, starting at
 * 0) and reports what it holds now wherever its state grows or shrinks;
 * the account keeps the sum of the latest reports.  The holder whose
 * report takes the sum over the limit stops the query, naming itself.
 * Thread-safe: holders in different threads report at once.  The account
 * is owned by whoever runs the query (sl_execute_ex, or a staged run for
 * all its leaves); it allocates nothing. */
#ifndef SLUICE_MEMORY_ACCOUNT_H
#define SLUICE_MEMORY_ACCOUNT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sl_memory_account {
  _Atomic uint64_t held; /* the sum of every holder's latest report */
  uint64_t limit;        /* UINT64_MAX: none */
} sl_memory_account;

void sl_memory_account_init(sl_memory_account *a, uint64_t limit);

/* A holder that last reported *charged now holds `now` bytes: the account
 * is updated, *charged = now, and the account's total after is returned. */
uint64_t sl_memory_charge(sl_memory_account *a, uint64_t *charged,
                          uint64_t now);

/* sl_memory_charge, and whether this report takes the account over its
 * limit: the total after it is over the limit and the holder grew.  (A
 * holder that shrank or stayed while others' state is over the limit is
 * not the one to blame: the one that grew stops the query at its own
 * report.)  *total: the account's total after. */
bool sl_memory_grew_over(sl_memory_account *a, uint64_t *charged, uint64_t now,
                         uint64_t *total);

/* The error of a holder whose report (sl_memory_grew_over) took the
 * account over its limit: SL_ENOMEM with "<what> <part>[ (<total> with the
 * query's other state in this process)], over the memory limit of <L>;
 * SET 'sluice.memory-limit' higher[, or <advice>]".  what is a printf
 * format (its arguments follow) naming the holder and ending in its verb:
 * "the Top-N's state (%u partitions) holds".  advice may be NULL. */
struct sl_error;
int sl_memory_over_error(struct sl_error *err, const sl_memory_account *a,
                         uint64_t part, uint64_t total, const char *advice,
                         const char *what, ...)
    __attribute__((format(printf, 6, 7)));

#endif
