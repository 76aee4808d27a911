/* test_cost_cache.c - the per-machine calibration file
 * (planner/cost_cache.c): what is saved loads back; a file from another
 * machine or version, or with a value missing, is ignored; a path that
 * cannot be written is an error with a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/planner/cost_model.h"

static char dir[256];

static const sl_cost_constants SAMPLE = {
    .calibrated = true,
    .update_hot_ns = 21.5,
    .update_cold_ns = 230.25,
    .merge_hot_ns = 14,
    .merge_ns = 180.125,
    .route_ns = 29,
    .ship_ns = 205.5,
    .cache_groups = 65536,
};

static void path_of(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/a/b/%s", dir, name);
}

/* Rewrite the file with line `prefix...` replaced by `with` (NULL:
 * dropped). */
static void edit(const char *path, const char *prefix, const char *with) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char text[4096] = "", line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, prefix, strlen(prefix)) == 0) {
      if (with)
        strcat(text, with);
    } else {
      strcat(text, line);
    }
  }
  fclose(f);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_roundtrip(void **state) {
  (void)state;
  char path[512];
  path_of(path, sizeof path, "calibration");
  sl_error err = {0};
  assert_int_equal(sl_cost_save(&SAMPLE, path, &err), SL_OK);
  sl_cost_constants k = {0};
  assert_true(sl_cost_load(&k, path));
  assert_true(k.calibrated);
  assert_true(k.update_hot_ns == SAMPLE.update_hot_ns);
  assert_true(k.update_cold_ns == SAMPLE.update_cold_ns);
  assert_true(k.merge_hot_ns == SAMPLE.merge_hot_ns);
  assert_true(k.merge_ns == SAMPLE.merge_ns);
  assert_true(k.route_ns == SAMPLE.route_ns);
  assert_true(k.ship_ns == SAMPLE.ship_ns);
  assert_true(k.cache_groups == SAMPLE.cache_groups);
}

static void test_foreign_or_broken_files_are_ignored(void **state) {
  (void)state;
  char path[512];
  path_of(path, sizeof path, "c2");
  sl_error err = {0};
  sl_cost_constants k = {0};
  const char *edits[][2] = {
      {"machine ", "machine Some Other CPU x 128\n"},
      {"version ", "version 1\n"},
      {"merge_ns ", NULL},
      {"route_ns ", "route_ns -3\n"},
      {"ship_ns ", NULL}, /* a file of version 2 had none */
      {"update_hot_ns ", "update_hot_ns fast\n"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    assert_int_equal(sl_cost_save(&SAMPLE, path, &err), SL_OK);
    assert_true(sl_cost_load(&k, path));
    edit(path, edits[i][0], edits[i][1]);
    memset(&k, 0, sizeof k);
    if (sl_cost_load(&k, path))
      fail_msg("a file with '%s' edited was accepted", edits[i][0]);
    assert_false(k.calibrated);
  }
  char missing[512];
  path_of(missing, sizeof missing, "does-not-exist");
  assert_false(sl_cost_load(&k, missing));
}

static void test_unwritable_path_is_an_error(void **state) {
  (void)state;
  sl_error err = {0};
  assert_int_equal(
      sl_cost_save(&SAMPLE, "/proc/sluice-no-such/calibration", &err), SL_EIO);
  assert_non_null(err.message);
  assert_non_null(strstr(err.message, "/proc/sluice-no-such"));
  sl_error_clear(&err);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/sluice-cost-cache-XXXXXX");
  if (!mkdtemp(dir))
    return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_foreign_or_broken_files_are_ignored),
      cmocka_unit_test(test_unwritable_path_is_an_error),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    rc = rc ? rc : 1;
  return rc;
}
