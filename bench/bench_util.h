/* bench_util.h - what the whole-engine benchmarks share: running a
 * statement in a session, running a query straight through the executor
 * (to get its sl_query_stats), medians, and the YSB tables.  Header-only:
 * each bench is one program. */
#ifndef SLUICE_BENCH_UTIL_H
#define SLUICE_BENCH_UTIL_H

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/binder/binder.h"
#include "sluice/common/clock.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Run one statement, discarding its rows; errors go to stderr. */
static inline int bench_exec(sl_session *s, const char *sql) {
  uint64_t rows = 0;
  sl_result_sink sink = sl_result_sink_discard(&rows);
  sl_error err = {0};
  int rc = sl_session_execute(s, sql, strlen(sql), 1, &sink, &err);
  if (rc != SL_OK)
    fprintf(stderr, "bench: %s: %s\n", sql, err.message);
  sl_error_clear(&err);
  return rc;
}

/* Plan and execute a query (or INSERT) with the session's settings and
 * catalog; strategy < 0 keeps the plan's default.  Fills *qs. */
static inline int bench_run(sl_session *s, const char *sql, int strategy,
                            sl_query_stats *qs) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_stmt *st;
  sl_bound_stmt *b = NULL;
  sl_plan *plan = NULL;
  sl_error err = {0};
  sl_run_config config;
  uint64_t rows = 0;
  sl_result_sink sink = sl_result_sink_discard(&rows);
  char *text = sl_arena_strdup(&a, sql);
  int rc = SL_OK;
  if (sl_parse_one(&a, text, strlen(text), 1, &st, &err) ||
      sl_bind(&a, sl_session_catalog(s), st, text, 1, &b, &err) ||
      sl_plan_build(&a, b, &plan, &err) ||
      sl_run_config_resolve(&config, sl_session_settings(s), &err)) {
    rc = err.code;
  } else {
    if (strategy >= 0)
      plan->strategy = (sl_strategy)strategy;
    rc = sl_execute(plan, &(sl_run){&config, NULL, NULL}, &sink, qs, &err);
  }
  if (rc != SL_OK)
    fprintf(stderr, "bench: %s\n", err.message);
  sl_error_clear(&err);
  if (b)
    sl_bound_stmt_release(b);
  sl_arena_free(&a);
  return rc;
}

/* Run fn(arg, out) in a forked child, which fills the `size` bytes of out
 * (sent back through a pipe); *peak_bytes is the child's own peak resident
 * memory as the OS counts it (wait4's ru_maxrss).  So each run's memory is
 * measured alone: a process's peak never goes down, and one process runs
 * many configurations.  The child starts as a copy of this process (the
 * session and the code loaded, like a shell about to run a query) and
 * pre-generates the run's input itself.  Call it between runs only, when
 * no thread of the engine is running.  Returns fn's status, or SL_EIO if
 * the child died. */
static inline int bench_forked(int (*fn)(void *arg, void *out), void *arg,
                               void *out, size_t size, uint64_t *peak_bytes) {
  int fds[2];
  if (pipe(fds) != 0)
    return SL_EIO;
  /* What earlier work here freed goes back to the OS first, or the child
   * would start with it resident (glibc keeps freed heap). */
  malloc_trim(0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return SL_EIO;
  }
  if (pid == 0) {
    close(fds[0]);
    int rc = fn(arg, out);
    if (rc == SL_OK && write(fds[1], out, size) != (ssize_t)size)
      rc = SL_EIO;
    fflush(NULL);
    _exit(rc == SL_OK ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  while (got < size) {
    ssize_t k = read(fds[0], (char *)out + got, size - got);
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0 || got != size)
    return SL_EIO;
  *peak_bytes = (uint64_t)ru.ru_maxrss * 1024; /* Linux: KiB */
  return SL_OK;
}

typedef struct bench_run_args {
  sl_session *s;
  const char *sql;
  int strategy;
} bench_run_args;

static inline int bench_run_child(void *arg, void *out) {
  const bench_run_args *a = arg;
  return bench_run(a->s, a->sql, a->strategy, out);
}

/* bench_run in a forked child (bench_forked): *qs as bench_run fills it,
 * and the run's peak resident memory. */
static inline int bench_run_measured(sl_session *s, const char *sql,
                                     int strategy, sl_query_stats *qs,
                                     uint64_t *peak_bytes) {
  bench_run_args a = {s, sql, strategy};
  int rc = bench_forked(bench_run_child, &a, qs, sizeof *qs, peak_bytes);
  if (rc != SL_OK)
    fprintf(stderr, "bench: the run of %s failed\n", sql);
  return rc;
}

/* Single-thread memcpy bandwidth in bytes/s: median of 7 copies of 256 MiB
 * (the memory bound that throughput tables compare with); the slowest and
 * fastest copy in *lo and *hi unless NULL. */
static inline double bench_memcpy_bandwidth_spread(double *lo, double *hi) {
  size_t n = (size_t)256 << 20;
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b)
    abort();
  memset(a, 1, n);
  memset(b, 2, n);
  double bw[7];
  for (int i = 0; i < 7; i++) {
    double t0 = sl_clock_seconds();
    memcpy(i % 2 ? a : b, i % 2 ? b : a, n);
    bw[i] = (double)n / (sl_clock_seconds() - t0);
  }
  free(a);
  free(b);
  qsort(bw, 7, sizeof(double), bench_cmp_double);
  if (lo)
    *lo = bw[0];
  if (hi)
    *hi = bw[6];
  return bw[3];
}

static inline double bench_memcpy_bandwidth(void) {
  return bench_memcpy_bandwidth_spread(NULL, NULL);
}

/* The loopback TCP bound: seconds for a forked process to send() `total`
 * bytes in `chunk` writes (TCP_NODELAY, cycling through src's src_bytes)
 * to this one, which recv()s them without touching them; < 0 on failure
 * (the reason on stderr).  What the kernel's loopback moves, which no tcp
 * channel between two local processes can beat. */
static inline double bench_loopback_tcp_seconds(const unsigned char *src,
                                                size_t src_bytes, size_t total,
                                                size_t chunk) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t sl = sizeof sa;
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) ||
      listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
    perror("bench: loopback tcp listen");
    if (lfd >= 0)
      close(lfd);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sl) != 0)
      _exit(1);
    size_t off = 0, left = total;
    while (left > 0) {
      size_t n = left < chunk ? left : chunk;
      ssize_t k = send(fd, src + off, n, MSG_NOSIGNAL);
      if (k <= 0)
        _exit(1);
      left -= (size_t)k;
      off = off + 2 * chunk > src_bytes ? 0 : off + (size_t)k;
    }
    close(fd);
    _exit(0);
  }
  int fd = accept(lfd, NULL, NULL);
  close(lfd);
  unsigned char *buf = malloc(chunk);
  size_t got = 0;
  double t0 = sl_clock_seconds();
  for (;;) {
    ssize_t k = fd >= 0 && buf ? recv(fd, buf, chunk, 0) : -1;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  double dt = sl_clock_seconds() - t0;
  if (fd >= 0)
    close(fd);
  free(buf);
  int status;
  waitpid(pid, &status, 0);
  return got == total ? dt : -1;
}

/* The YSB ad events ('pregenerate': generated into memory before the clock
 * starts) and the campaigns table. */
static inline int bench_ysb_tables(sl_session *s, long events) {
  char ddl[1024];
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id "
           "STRING, ad_type STRING, event_type STRING, event_time "
           "TIMESTAMP(3), ip_address STRING, WATERMARK FOR event_time AS "
           "event_time - INTERVAL '1' SECOND) WITH ('connector' = 'ysb', "
           "'events.num' = '%ld', 'pregenerate' = 'true', 'seed' = '7')",
           events);
  return bench_exec(s, ddl) ||
         bench_exec(s, "CREATE TABLE campaigns (ad_id STRING, campaign_id "
                       "STRING) WITH ('connector' = 'ysb', 'ysb.table' = "
                       "'campaigns')");
}

static const char BENCH_YSB_QUERY[] =
    "SELECT c.campaign_id, window_start, window_end, COUNT(*) AS views "
    "FROM TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), "
    "INTERVAL '10' SECOND)) AS e "
    "JOIN campaigns AS c ON e.ad_id = c.ad_id "
    "WHERE e.event_type = 'view' "
    "GROUP BY c.campaign_id, window_start, window_end";

#endif
