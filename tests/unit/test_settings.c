/* test_settings.c - SET/RESET storage and validation (common/settings.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sluice/common/settings.h"

static void test_defaults(void **state) {
  (void)state;
  sl_settings *s = sl_settings_new();
  assert_string_equal(sl_settings_get(s, "sluice.jit"), "on");
  assert_string_equal(sl_settings_get(s, "sluice.strategy"), "auto");
  assert_true(sl_settings_get_int(s, "parallelism.default", 0) >= 1);
  assert_int_equal(sl_settings_get_int(s, "sluice.epoch-size", 0),
                   64 * 1024 * 1024);
  assert_null(sl_settings_get(s, "no.such.key"));
  sl_settings_free(s);
}

static void test_validation(void **state) {
  (void)state;
  sl_settings *s = sl_settings_new();
  sl_error err = {0};
  bool unknown = true;
  assert_int_equal(sl_settings_set(s, "sluice.jit", "off", &unknown, &err),
                   SL_OK);
  assert_false(unknown);
  assert_false(sl_settings_get_bool(s, "sluice.jit", true));

  assert_int_equal(sl_settings_set(s, "sluice.jit", "of", NULL, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.message, "expected on or off"));
  assert_string_equal(sl_settings_get(s, "sluice.jit"), "off");
  sl_error_clear(&err);

  assert_int_equal(
      sl_settings_set(s, "sluice.strategy", "late-merge", NULL, &err), SL_OK);
  /* A choice that is not built is refused, not accepted and ignored. */
  assert_int_equal(
      sl_settings_set(s, "execution.runtime-mode", "batch", NULL, &err),
      SL_EINVAL);
  assert_non_null(strstr(err.message, "expected one of streaming"));
  sl_error_clear(&err);
  assert_int_equal(
      sl_settings_set(s, "sluice.late-records", "side-output", NULL, &err),
      SL_OK);
  assert_int_equal(
      sl_settings_set(s, "sluice.late-records", "keep", NULL, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "side-output"));
  sl_error_clear(&err);
  assert_int_equal(sl_settings_set(s, "sluice.strategy", "fast", NULL, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.message, "late-merge"));
  sl_error_clear(&err);

  assert_int_equal(sl_settings_set(s, "parallelism.default", "0", NULL, &err),
                   SL_EINVAL);
  sl_error_clear(&err);
  assert_int_equal(sl_settings_set(s, "parallelism.default", "3", NULL, &err),
                   SL_OK);
  assert_int_equal(sl_settings_get_int(s, "parallelism.default", 0), 3);

  assert_int_equal(
      sl_settings_set(s, "sluice.buffer-size", "128 KiB", NULL, &err), SL_OK);
  assert_int_equal(sl_settings_get_int(s, "sluice.buffer-size", 0), 131072);
  assert_int_equal(
      sl_settings_set(s, "table.exec.state.ttl", "1 min", NULL, &err), SL_OK);
  assert_int_equal(
      sl_settings_set(s, "table.exec.state.ttl", "soon", NULL, &err),
      SL_EINVAL);
  sl_error_clear(&err);
  sl_settings_free(s);
}

static void test_unknown_and_reset(void **state) {
  (void)state;
  sl_settings *s = sl_settings_new();
  sl_error err = {0};
  bool unknown = false;
  int before = sl_settings_count(s);
  assert_int_equal(sl_settings_set(s, "execution.checkpointing.interval",
                                   "3min", &unknown, &err),
                   SL_OK);
  assert_true(unknown);
  assert_int_equal(sl_settings_count(s), before + 1);
  assert_string_equal(sl_settings_get(s, "execution.checkpointing.interval"),
                      "3min");

  /* Listed in key order. */
  for (int i = 1; i < sl_settings_count(s); i++) {
    const char *k0, *v0, *k1, *v1;
    sl_settings_at(s, i - 1, &k0, &v0);
    sl_settings_at(s, i, &k1, &v1);
    assert_true(strcmp(k0, k1) < 0);
  }

  sl_settings_set(s, "sluice.nodes", "4", NULL, &err);
  sl_settings_reset(s, "sluice.nodes");
  assert_string_equal(sl_settings_get(s, "sluice.nodes"), "1");
  sl_settings_reset(s, "execution.checkpointing.interval");
  assert_null(sl_settings_get(s, "execution.checkpointing.interval"));
  assert_int_equal(sl_settings_count(s), before);

  sl_settings_set(s, "sluice.jit", "off", NULL, &err);
  sl_settings_set(s, "x.y", "z", NULL, &err);
  sl_settings_reset(s, NULL);
  assert_string_equal(sl_settings_get(s, "sluice.jit"), "on");
  assert_null(sl_settings_get(s, "x.y"));
  assert_int_equal(sl_settings_count(s), sl_settings_known_count());
  sl_settings_free(s);
}

/* sl_settings_is: the current value (a default counts), never a key
 * that has none. */
static void test_is(void **state) {
  (void)state;
  sl_settings *s = sl_settings_new();
  sl_error err = {0};
  assert_true(sl_settings_is(s, "sluice.late-merge", "leaders"));
  assert_false(sl_settings_is(s, "sluice.late-merge", "coordinator"));
  assert_int_equal(
      sl_settings_set(s, "sluice.late-merge", "coordinator", NULL, &err),
      SL_OK);
  assert_true(sl_settings_is(s, "sluice.late-merge", "coordinator"));
  assert_false(sl_settings_is(s, "sluice.late-merge", "leaders"));
  assert_false(sl_settings_is(s, "sluice.late-merge", "coordinato"));
  assert_false(sl_settings_is(s, "no.such.key", ""));
  sl_settings_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_unknown_and_reset),
      cmocka_unit_test(test_is),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
