/* memory_account.h - the memory one query holds on this host, summed over
 * every kind of it and every process of the query here, against SET
 * 'sluice.memory-limit'.
 *
 * Why one account: the limit bounds the host, and a query's state is
 * spread over several holders at once (each worker's open windows and the
 * deltas it handed over, a partition leader's merges, the coordinator's
 * merged window, ORDER BY's rows, a join's stored rows and its stages'
 * state) and over several processes (the shell and the node processes it
 * forked with --nodes, or daemons' processes serving it on this host).
 * Checked one by one, each could sit just under the limit and their sum
 * far over it.
 *
 * Each holder keeps what it last reported (a uint64_t it owns, starting at
 * 0) and reports what it holds now wherever its state grows or shrinks;
 * the account keeps the sum of the latest reports.  The holder whose
 * report takes the sum over the limit stops the query, naming itself.
 * Thread-safe: holders in different threads report at once.  The account
 * is owned by whoever runs the query (sl_execute, or a staged run for
 * all its leaves); it allocates nothing.
 *
 * Across processes: a process that serves a query of a shell with nodes
 * first says which (sl_memory_host_join: the shell's pid, the same in the
 * shell and every node process of it); every account it opens after that
 * also adds its reports to that shell's shared counter on this host, a
 * POSIX shared-memory segment "/sluice-mem-<uid>-<shell pid>" with one
 * slot per process (its pid, start time, name and bytes) and their sum.
 * The sum is what the limit bounds.  A process that dies holding bytes
 * (SIGKILL, a crash) is found dead when its slot would take the sum over
 * the limit, and its bytes are taken out then.  The shell's segment goes
 * when the shell exits (and when the last process of it leaves); processes
 * of another user (a daemon started by someone else) have a segment of
 * their own: a budget per user, since one user's process must not write
 * into another's memory. */
#ifndef SLUICE_MEMORY_ACCOUNT_H
#define SLUICE_MEMORY_ACCOUNT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_memory_host;

typedef struct sl_memory_account {
  _Atomic uint64_t held; /* the sum of every holder's latest report */
  uint64_t limit;        /* UINT64_MAX: none */
  /* The host's counter of the query's processes this account adds to as
   * well (sl_memory_host_join); NULL: this process only. */
  struct sl_memory_host *host;
} sl_memory_account;

/* This process serves (or, in the shell, coordinates) the query of the
 * shell whose pid is `shell_pid`; accounts opened from now on count on
 * that shell's counter on this host, where this process is named `who`
 * ("node 1", "the shell").  0: accounts count this process only.  Called
 * between queries (not while an account is open). */
void sl_memory_host_join(uint64_t shell_pid, const char *who);

/* An account with this limit, on the host's counter if this process
 * joined one (sl_memory_host_join) and it could be opened. */
void sl_memory_account_init(sl_memory_account *a, uint64_t limit);

/* The query is over: whatever its holders still report (a holder that
 * never reported its last shrink) leaves the host's counter, which the
 * process keeps for its next query. */
void sl_memory_account_close(sl_memory_account *a);

/* A holder that last reported *charged now holds `now` bytes: the account
 * is updated, *charged = now, and the account's total after is returned
 * (on the host's counter: the sum over the query's processes here). */
uint64_t sl_memory_charge(sl_memory_account *a, uint64_t *charged,
                          uint64_t now);

/* sl_memory_charge, and whether this report takes the account over its
 * limit: the total after it is over the limit and the holder grew.  (A
 * holder that shrank or stayed while others' state is over the limit is
 * not the one to blame: the one that grew stops the query at its own
 * report.)  *total: the account's total after (dead processes' bytes
 * taken out when they would take it over). */
bool sl_memory_grew_over(sl_memory_account *a, uint64_t *charged, uint64_t now,
                         uint64_t *total);

/* Would `more` bytes on top of the total fit under the limit?  For a
 * holder about to allocate a large block at once (a table doubling): it
 * asks first, so that the block it could not keep is never allocated. */
bool sl_memory_room_for(sl_memory_account *a, uint64_t more);

/* The error of a holder whose report (sl_memory_grew_over) took the
 * account over its limit: SL_ENOMEM with "<what> <part>[ (<total> with the
 * query's other state in this process[ and its other processes on this
 * host, most in <process> (<bytes>)])], over the memory limit of <L>;
 * SET 'sluice.memory-limit' higher[, or <advice>]".  what is a printf
 * format (its arguments follow) naming the holder and ending in its verb:
 * "the Top-N's state (%u partitions) holds".  advice may be NULL. */
struct sl_error;
int sl_memory_over_error(struct sl_error *err, const sl_memory_account *a,
                         uint64_t part, uint64_t total, const char *advice,
                         const char *what, ...)
    __attribute__((format(printf, 6, 7)));

/* Tests: the segment's name for this user and shell pid. */
void sl_memory_host_name(uint64_t shell_pid, char *out, size_t n);

#endif
