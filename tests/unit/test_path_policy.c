/* test_path_policy.c - connector paths under a node daemon's --data-dir
 * (path_policy.h), with openat2 and with the fallback walk: relative
 * paths land in DIR, absolute paths inside DIR are kept, and absolute
 * paths elsewhere, '..', links that lead out (also one swapped in after
 * the check) are refused naming the path and DIR; links inside DIR are
 * followed (openat2) or refused (fallback); without --data-dir nothing is
 * opened; unconfined, paths are left alone. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sluice/connectors/path_policy.h"

typedef struct fixture {
  char root[PATH_MAX / 2]; /* a temporary directory */
  char data[PATH_MAX];     /* root/data: the data directory */
  char outside[PATH_MAX];
} fixture;

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  char tmpl[] = "/tmp/sluice-path-XXXXXX";
  if (!f || !mkdtemp(tmpl))
    return -1;
  char *canon = realpath(tmpl, NULL);
  snprintf(f->root, sizeof f->root, "%s", canon);
  free(canon);
  snprintf(f->data, sizeof f->data, "%s/data", f->root);
  snprintf(f->outside, sizeof f->outside, "%s/secret.txt", f->root);
  char p[PATH_MAX + 64];
  mkdir(f->data, 0700);
  snprintf(p, sizeof p, "%s/sub", f->data);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/in.csv", f->data);
  write_file(p, "1\n");
  snprintf(p, sizeof p, "%s/sub/deep.csv", f->data);
  write_file(p, "2\n");
  write_file(f->outside, "root:secret\n");
  /* links: one out (absolute), one out (relative, climbing), one in */
  snprintf(p, sizeof p, "%s/out_abs", f->data);
  if (symlink(f->outside, p) != 0)
    return -1;
  snprintf(p, sizeof p, "%s/out_rel", f->data);
  if (symlink("../secret.txt", p) != 0)
    return -1;
  snprintf(p, sizeof p, "%s/etc", f->data);
  if (symlink("/etc", p) != 0)
    return -1;
  snprintf(p, sizeof p, "%s/in_link", f->data);
  if (symlink("sub/deep.csv", p) != 0)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sl_path_policy_reset();
  sl_path_policy_force_fallback(false);
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
  if (system(cmd) != 0)
    return -1;
  free(f);
  return 0;
}

/* Resolve path; SL_OK must be `ok`; on success *out is compared to want
 * (NULL: not compared); on refusal the message names path and DIR. */
static void expect(const fixture *f, const char *path, bool ok,
                   const char *want) {
  char *out = NULL;
  sl_error err = {0};
  int rc = sl_path_resolve(path, &out, &err);
  if (ok) {
    if (rc != SL_OK)
      fail_msg("'%s' refused: %s", path, err.message);
    if (want)
      assert_string_equal(out, want);
  } else {
    if (rc == SL_OK)
      fail_msg("'%s' accepted as '%s'", path, out);
    assert_int_equal(rc, SL_EPERM);
    assert_null(out);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, f->data));
  }
  free(out);
  sl_error_clear(&err);
}

static void confine(const fixture *f) {
  sl_error err = {0};
  assert_int_equal(sl_path_policy_confine(f->data, &err), SL_OK);
  assert_string_equal(sl_path_policy_dir(), f->data);
}

static void common_cases(const fixture *f) {
  char want[PATH_MAX + 32], p[PATH_MAX + 32];
  /* relative: inside DIR, created or not */
  snprintf(want, sizeof want, "%s/in.csv", f->data);
  expect(f, "in.csv", true, want);
  expect(f, "./in.csv", true, want);
  snprintf(want, sizeof want, "%s/sub/new.csv", f->data);
  expect(f, "sub/new.csv", true, want);
  snprintf(want, sizeof want, "%s/newdir/x/y.csv", f->data);
  expect(f, "newdir/x/y.csv", true, want);
  /* absolute inside DIR: kept */
  snprintf(p, sizeof p, "%s//sub/./deep.csv", f->data);
  snprintf(want, sizeof want, "%s/sub/deep.csv", f->data);
  expect(f, p, true, want);
  expect(f, f->data, true, f->data);
  /* refused */
  expect(f, "/etc/shadow", false, NULL);
  expect(f, f->outside, false, NULL);
  expect(f, "../secret.txt", false, NULL);
  expect(f, "sub/../../secret.txt", false, NULL);
  expect(f, "sub/../in.csv", false, NULL); /* '..' at all */
  snprintf(p, sizeof p, "%s/../secret.txt", f->data);
  expect(f, p, false, NULL);
  snprintf(p, sizeof p, "%sx/in.csv", f->data); /* a sibling, not inside */
  expect(f, p, false, NULL);
  expect(f, "out_abs", false, NULL);
  expect(f, "out_rel", false, NULL);
  expect(f, "etc/shadow", false, NULL);
  expect(f, "etc/no-such-file", false, NULL);
  expect(f, "etc/x/y", false, NULL);
}

static void read_all(int fd, char *buf, size_t n) {
  ssize_t k = read(fd, buf, n - 1);
  assert_true(k >= 0);
  buf[k] = '\0';
  close(fd);
}

static void test_openat2(void **state) {
  fixture *f = *state;
  confine(f);
  common_cases(f);
  /* a link that stays inside is followed */
  char want[PATH_MAX + 32];
  snprintf(want, sizeof want, "%s/in_link", f->data);
  expect(f, "in_link", true, want);
  char buf[64];
  int fd = sl_path_open(want, O_RDONLY, 0);
  assert_true(fd >= 0);
  read_all(fd, buf, sizeof buf);
  assert_string_equal(buf, "2\n");
}

/* The check passed, then the file was swapped for a link out: the open
 * itself is refused. */
static void test_swapped_link(void **state) {
  fixture *f = *state;
  for (int fallback = 0; fallback < 2; fallback++) {
    sl_path_policy_force_fallback(fallback);
    confine(f);
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/swap.csv", f->data);
    write_file(p, "fine\n");
    char *out = NULL;
    sl_error err = {0};
    assert_int_equal(sl_path_resolve("swap.csv", &out, &err), SL_OK);
    unlink(p);
    assert_int_equal(symlink(f->outside, p), 0);
    int fd = sl_path_open(out, O_RDONLY, 0);
    if (fd >= 0) {
      char buf[64];
      read_all(fd, buf, sizeof buf);
      fail_msg("the swapped link was followed out: read '%s'", buf);
    }
    assert_true(fd == -EXDEV || fd == -ELOOP);
    unlink(p);
    free(out);
    /* a directory swapped for a link out, the same */
    snprintf(p, sizeof p, "%s/swapdir", f->data);
    mkdir(p, 0700);
    assert_int_equal(sl_path_resolve("swapdir/x.csv", &out, &err), SL_OK);
    rmdir(p);
    assert_int_equal(symlink("/etc", p), 0);
    fd = sl_path_open(out, O_WRONLY | O_CREAT, 0600);
    assert_true(fd == -EXDEV || fd == -ELOOP);
    unlink(p);
    free(out);
  }
}

static void test_fallback(void **state) {
  fixture *f = *state;
  sl_path_policy_force_fallback(true);
  confine(f);
  common_cases(f);
  /* without openat2 no link is followed, not even one that stays in */
  expect(f, "in_link", false, NULL);
  char p[PATH_MAX + 32], buf[64];
  snprintf(p, sizeof p, "%s/sub/deep.csv", f->data);
  int fd = sl_path_open(p, O_RDONLY, 0);
  assert_true(fd >= 0);
  read_all(fd, buf, sizeof buf);
  assert_string_equal(buf, "2\n");
}

static void test_refuse_and_any(void **state) {
  fixture *f = *state;
  sl_path_policy_refuse();
  char *out = NULL;
  sl_error err = {0};
  assert_int_equal(sl_path_resolve("in.csv", &out, &err), SL_EPERM);
  assert_non_null(strstr(err.message, "--data-dir"));
  assert_non_null(strstr(err.message, "'in.csv'"));
  sl_error_clear(&err);
  assert_true(sl_path_open(f->outside, O_RDONLY, 0) < 0);
  /* a shell: left alone */
  sl_path_policy_reset();
  assert_null(sl_path_policy_dir());
  assert_int_equal(sl_path_resolve(f->outside, &out, &err), SL_OK);
  assert_string_equal(out, f->outside);
  free(out);
  int fd = sl_path_open(f->outside, O_RDONLY, 0);
  assert_true(fd >= 0);
  close(fd);
  /* a data directory that is not one */
  assert_int_equal(sl_path_policy_confine(f->outside, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, f->outside));
  sl_error_clear(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_openat2, setup, teardown),
      cmocka_unit_test_setup_teardown(test_swapped_link, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fallback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refuse_and_any, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
