/* test_channel_verbs.c - the verbs channel's own cases, beyond the
 * test-suite every transport passes (test_channel_transports.c runs that
 * over verbs too): the device probe (on a host without RDMA, CI: a fast,
 * clear failure, and verbs ends that fail the same way instead of
 * hanging), and the rdma_cm rendezvous failures (a shape or role mismatch
 * fails both ends saying so; a used listener accepts no second channel;
 * an end without the other's cluster secret is refused, both ways).
 * Without a device the rendezvous group reports SKIPPED, or fails when
 * SLUICE_REQUIRE_VERBS=1 (inside the RDMA VM). */
/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "channel_helpers.h"
#include "sluice/net/auth.h"
#include "sluice/net/channel.h"

#define WATCHDOG_S 180

enum { ADDR_LEN = 128 };

/* The probe: on a host without RDMA (CI) a clean, fast failure that says
 * what is missing, and verbs ends that fail the same way instead of
 * hanging; with a device (the RDMA VM) a filled-in record. */
static void test_verbs_probe(void **state) {
  (void)state;
  sl_verbs_device d;
  sl_error err = {0};
  int64_t t0 = now_ns();
  int rc = sl_channel_verbs_probe(&d, &err);
  int64_t dt = now_ns() - t0;
  const char *req = getenv("SLUICE_REQUIRE_VERBS");
  if (req && strcmp(req, "1") == 0 && rc != SL_OK)
    fail_msg("SLUICE_REQUIRE_VERBS=1 but the probe failed: %s", err.message);
  if (rc == SL_OK) {
    struct in_addr ia;
    assert_true(d.name[0] != 0);
    assert_int_equal(inet_pton(AF_INET, d.address, &ia), 1);
    assert_true(d.port >= 1);
    assert_true(!strcmp(d.link, "Ethernet") || !strcmp(d.link, "InfiniBand"));
    fprintf(stderr, "  (verbs device: %s port %d, %s, %s)\n", d.name, d.port,
            d.link, d.address);
    return;
  }
  assert_true(rc < 0);
  assert_true(dt < 2LL * 1000 * 1000 * 1000);
  assert_non_null(err.message);
  assert_true(strstr(err.message, "RDMA device") != NULL ||
              strstr(err.message, " port ") != NULL);
  assert_int_equal(d.name[0], 0);
  fprintf(stderr, "  (verbs probe: %s)\n", err.message);
  if (!strstr(err.message, "no RDMA device"))
    return; /* a device that is down: rdma_cm may still be there */
  /* Nothing to listen or connect with: fast, clear errors, no hang. */
  int fd = -1;
  char bound[128];
  t0 = now_ns();
  assert_int_equal(
      sl_channel_listen("verbs", "127.0.0.1:0", &fd, bound, sizeof bound, &err),
      SL_EIO);
  assert_int_equal(fd, -1);
  assert_non_null(strstr(err.message, "verbs"));
  sl_channel *ch = NULL;
  sl_channel_endpoint ep = {.transport = "verbs",
                            .role = SL_CHANNEL_PRODUCER,
                            .via = SL_CHANNEL_VIA_CONNECT,
                            .address = "127.0.0.1:4791",
                            .timeout_ns = 500 * 1000 * 1000};
  assert_int_equal(sl_channel_open_end(&ep, NULL, &ch, &err), SL_EIO);
  assert_null(ch);
  assert_non_null(strstr(err.message, "verbs"));
  assert_true(now_ns() - t0 < 2LL * 1000 * 1000 * 1000);
  sl_error_clear(&err);
}

/* Open one verbs end (n == 1); *msg gets the error. */
static int verbs_open_secret(sl_channel_role role, sl_channel_rendezvous via,
                             int fd, const char *addr, sl_channel_config cfg,
                             int64_t timeout, const sl_secret *secret,
                             sl_channel **ch, char *msg, size_t n) {
  sl_channel_endpoint ep = {.transport = "verbs",
                            .role = role,
                            .via = via,
                            .fd = fd,
                            .address = addr,
                            .timeout_ns = timeout,
                            .secret = secret};
  sl_error err = {0};
  int rc = sl_channel_open_end(&ep, &cfg, ch, &err);
  snprintf(msg, n, "%s", err.message ? err.message : "");
  sl_error_clear(&err);
  return rc;
}

static int verbs_open(sl_channel_role role, sl_channel_rendezvous via, int fd,
                      const char *addr, sl_channel_config cfg, int64_t timeout,
                      sl_channel **ch, char *msg, size_t n) {
  return verbs_open_secret(role, via, fd, addr, cfg, timeout, NULL, ch, msg, n);
}

/* The rendezvous failures, in a supervisor process (see run_isolated)
 * whose child connects while it accepts.  0 or the failing line. */
static int verbs_rendezvous_cases(void) {
  enum { GOOD_STEP = 6 };
  /* Drawn before the fork: both processes know secret_a. */
  sl_secret secret_a, other_secret;
  sl_secret_random(&secret_a);
  sl_secret_random(&other_secret);
  char where[ADDR_LEN], why[256], addr[ADDR_LEN], msg[512];
  CHECK(verbs_listen_address(where, sizeof where, why, sizeof why) == 0);
  int vp[2], back[2];
  CHECK(pipe(vp) == 0 && pipe(back) == 0);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  const sl_channel_config mine = {8, 4096}, other = {4, 4096};
  if (pid == 0) {
    alarm(60);
    int bad = 0;
    sl_channel *ch = NULL;
    /* 1: a different shape; 2: a second consumer; 3: another secret than
     * the acceptor's; 4: none where the acceptor has one; 5: one where the
     * acceptor has none; 6: a good one, with the acceptor's secret. */
    for (int step = 1; step <= GOOD_STEP && !bad; step++) {
      if (read_exact(vp[0], addr, sizeof addr) != 0) {
        bad = __LINE__;
        break;
      }
      const sl_secret *secret = step == 3   ? &other_secret
                                : step == 4 ? NULL
                                : step >= 5 ? &secret_a
                                            : NULL;
      sl_channel *got = NULL;
      int rc = verbs_open_secret(
          step == 2 ? SL_CHANNEL_CONSUMER : SL_CHANNEL_PRODUCER,
          SL_CHANNEL_VIA_CONNECT, -1, addr, step == 1 ? other : mine, GUARD_NS,
          secret, &got, msg, sizeof msg);
      if (step == 1 && (rc != SL_EINVAL || !strstr(msg, "shape")))
        bad = __LINE__;
      if (step == 2 && (rc != SL_EINVAL || !strstr(msg, "both ends")))
        bad = __LINE__;
      if ((step == 3 || step == 4) &&
          (rc != SL_EPERM || !strstr(msg, "refused this end")))
        bad = __LINE__;
      if (step == 5 && (rc != SL_EPERM || !strstr(msg, "without proving")))
        bad = __LINE__;
      if (step == GOOD_STEP && rc != SL_OK)
        bad = __LINE__;
      if (bad)
        fprintf(stderr, "child step %d: rc %d: %s\n", step, rc, msg);
      if (step == GOOD_STEP)
        ch = got;
      else
        sl_channel_destroy(got);
    }
    /* 4: the listener is used up: connecting again fails within the
     * timeout, naming the address. */
    if (!bad) {
      sl_channel *again = NULL;
      int rc = verbs_open(SL_CHANNEL_PRODUCER, SL_CHANNEL_VIA_CONNECT, -1, addr,
                          mine, 300 * 1000 * 1000, &again, msg, sizeof msg);
      if (rc != SL_EIO || !strstr(msg, addr)) {
        fprintf(stderr, "child step 4: rc %d: %s\n", rc, msg);
        bad = __LINE__;
      }
      sl_channel_destroy(again);
    }
    if (ch && !bad && sl_channel_close(ch) != SL_OK)
      bad = __LINE__;
    char c = 'x';
    if (read_exact(back[0], &c, 1) != 0) /* the consumer saw the end */
      bad = __LINE__;
    sl_channel_destroy(ch);
    _exit(bad ? 1 : 0);
  }
  int bad = 0;
  sl_channel *ch = NULL;
  for (int step = 1; step <= GOOD_STEP && !bad; step++) {
    int fd;
    sl_error err = {0};
    CHECK(sl_channel_listen("verbs", where, &fd, addr, sizeof addr, &err) ==
          SL_OK);
    CHECK(write(vp[1], addr, sizeof addr) == (ssize_t)sizeof addr);
    const sl_secret *secret =
        step == 3 || step == 4 || step == GOOD_STEP ? &secret_a : NULL;
    sl_channel *got = NULL;
    int rc =
        verbs_open_secret(SL_CHANNEL_CONSUMER, SL_CHANNEL_VIA_ACCEPT, fd, NULL,
                          mine, GUARD_NS, secret, &got, msg, sizeof msg);
    if (step == 1 && (rc != SL_EINVAL || !strstr(msg, "shape")))
      bad = __LINE__;
    if (step == 2 && (rc != SL_EINVAL || !strstr(msg, "both ends")))
      bad = __LINE__;
    if ((step == 3 || step == 4) &&
        (rc != SL_EPERM || !strstr(msg, "did not prove the cluster secret")))
      bad = __LINE__;
    /* 5: this end has no secret to check: it accepts, and the connector
     * leaves at once (a rejected proof of ours). */
    if (step == GOOD_STEP && rc != SL_OK)
      bad = __LINE__;
    if (bad)
      fprintf(stderr, "parent step %d: rc %d: %s\n", step, rc, msg);
    if (step == GOOD_STEP)
      ch = got;
    else
      sl_channel_destroy(got);
    if (step == GOOD_STEP && !bad) {
      /* 5: a second accept on the used listener times out, saying why. */
      sl_channel *again = NULL;
      rc = verbs_open(SL_CHANNEL_CONSUMER, SL_CHANNEL_VIA_ACCEPT, fd, NULL,
                      mine, 200 * 1000 * 1000, &again, msg, sizeof msg);
      if (rc != SL_EIO || !strstr(msg, "one channel"))
        bad = __LINE__;
      sl_channel_destroy(again);
    }
    close(fd);
  }
  if (!bad && sl_channel_wait_slot(ch, GUARD_NS) != SL_CHANNEL_END)
    bad = __LINE__;
  CHECK(write(back[1], "e", 1) == 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  sl_channel_destroy(ch);
  CHECK(bad == 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return 0;
}

static void test_verbs_rendezvous_errors(void **state) {
  (void)state;
  skip_without_verbs();
  int rp[2];
  assert_int_equal(pipe(rp), 0);
  fflush(NULL);
  pid_t s = fork();
  assert_true(s >= 0);
  if (s == 0) {
    alarm(WATCHDOG_S);
    int line = verbs_rendezvous_cases();
    _exit(write(rp[1], &line, sizeof line) == (ssize_t)sizeof line ? 0 : 1);
  }
  close(rp[1]);
  int line = -1;
  ssize_t k;
  while ((k = read(rp[0], &line, sizeof line)) < 0 && errno == EINTR)
    ;
  close(rp[0]);
  int status;
  while (waitpid(s, &status, 0) < 0 && errno == EINTR)
    ;
  assert_int_equal(k, (ssize_t)sizeof line);
  assert_int_equal(line, 0);
}

int main(void) {
  const struct CMUnitTest probe[] = {cmocka_unit_test(test_verbs_probe)};
  const struct CMUnitTest rendezvous[] = {
      cmocka_unit_test(test_verbs_rendezvous_errors)};
  int failed = cmocka_run_group_tests_name("verbs_probe", probe, NULL, NULL);
  failed +=
      cmocka_run_group_tests_name("verbs_rendezvous", rendezvous, NULL, NULL);
  return failed;
}
