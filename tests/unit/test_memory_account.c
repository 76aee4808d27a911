/* test_memory_account.c - one memory budget for a query's processes on a
 * host (state/memory_account.c): a forked process (as --nodes forks its
 * nodes) that joins the shell's counter adds to the sum the shell's limit
 * bounds, the error names that process, a process that dies holding bytes
 * is taken out of the sum, and the segment goes with the shell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/common/error.h"
#include "sluice/state/memory_account.h"

/* A child that joins the shell's counter as "node 1", holds `bytes`, says
 * so on `ready`, and waits to be killed. */
static pid_t holding_child(uint64_t shell, uint64_t bytes) {
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(ready[0]);
    sl_memory_host_join(shell, "node 1");
    sl_memory_account a;
    sl_memory_account_init(&a, 1000);
    uint64_t charged = 0;
    sl_memory_charge(&a, &charged, bytes);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1)
      _exit(1);
    for (;;)
      pause();
  }
  close(ready[1]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  close(ready[0]);
  return pid;
}

static void test_sum_over_processes(void **state) {
  (void)state;
  uint64_t shell = (uint64_t)getpid();
  sl_memory_host_join(shell, "the shell");
  sl_memory_account a;
  sl_memory_account_init(&a, 100);
  uint64_t mine = 0, total = 0;
  assert_false(sl_memory_grew_over(&a, &mine, 30, &total));
  assert_int_equal(total, 30);

  /* A node holds 50 on this host: 30 + 50 fits, 60 + 50 does not. */
  pid_t node = holding_child(shell, 50);
  assert_false(sl_memory_grew_over(&a, &mine, 30, &total));
  assert_int_equal(total, 80);
  assert_true(sl_memory_grew_over(&a, &mine, 60, &total));
  assert_int_equal(total, 110);
  assert_false(sl_memory_room_for(&a, 0));

  /* The error names the holder here and the process that holds the rest. */
  sl_error err = {0};
  sl_memory_over_error(&err, &a, 60, total, NULL, "the test's state holds");
  char pid_text[32];
  snprintf(pid_text, sizeof pid_text, "pid %d", (int)node);
  assert_non_null(strstr(err.message, "the test's state holds 60 bytes"));
  assert_non_null(strstr(err.message, "110 bytes with the query's other "
                                      "state in this process and its other "
                                      "processes on this host, most in node "
                                      "1"));
  assert_non_null(strstr(err.message, pid_text));
  assert_non_null(strstr(err.message, "50 bytes"));
  sl_error_clear(&err);

  /* The node dies holding its 50 (SIGKILL: no goodbye): once that would
   * take the sum over, its bytes are taken out. */
  kill(node, SIGKILL);
  waitpid(node, NULL, 0);
  assert_false(sl_memory_grew_over(&a, &mine, 61, &total));
  assert_int_equal(total, 61);
  assert_true(sl_memory_room_for(&a, 39));

  sl_memory_charge(&a, &mine, 0);
  /* Leaving removes the shell's segment. */
  char name[64];
  sl_memory_host_name(shell, name, sizeof name);
  sl_memory_host_join(0, "the shell");
  assert_int_equal(shm_open(name, O_RDWR, 0), -1);
}

/* A process forked after the shell joined inherits the shell's place; it
 * must take one of its own rather than count as the shell. */
static void test_forked_child_takes_its_own_slot(void **state) {
  (void)state;
  uint64_t shell = (uint64_t)getpid();
  sl_memory_host_join(shell, "the shell");
  sl_memory_account a;
  sl_memory_account_init(&a, 100);
  uint64_t mine = 0, total = 0;
  sl_memory_charge(&a, &mine, 10);
  pid_t node = holding_child(shell, 20);
  assert_false(sl_memory_grew_over(&a, &mine, 11, &total));
  assert_int_equal(total, 31);
  sl_error err = {0};
  sl_memory_over_error(&err, &a, 11, total, NULL, "x holds");
  assert_non_null(strstr(err.message, "most in node 1"));
  sl_error_clear(&err);
  kill(node, SIGKILL);
  waitpid(node, NULL, 0);
  sl_memory_charge(&a, &mine, 0);
  sl_memory_host_join(0, "the shell");
}

/* Not joined: the account is this process's alone, as before. */
static void test_alone(void **state) {
  (void)state;
  sl_memory_account a;
  sl_memory_account_init(&a, 100);
  assert_null(a.host);
  uint64_t x = 0, y = 0, total = 0;
  assert_false(sl_memory_grew_over(&a, &x, 60, &total));
  assert_true(sl_memory_grew_over(&a, &y, 41, &total));
  assert_int_equal(total, 101);
  sl_error err = {0};
  sl_memory_over_error(&err, &a, 41, total, "add a LIMIT", "y holds");
  assert_string_equal(err.message,
                      "y holds 41 bytes (101 bytes with the query's other "
                      "state in this process), over the memory limit of 100 "
                      "bytes; SET 'sluice.memory-limit' higher, or add a "
                      "LIMIT");
  sl_error_clear(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sum_over_processes),
      cmocka_unit_test(test_forked_child_takes_its_own_slot),
      cmocka_unit_test(test_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
