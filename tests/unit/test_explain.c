/* test_explain.c - golden tests of EXPLAIN over the bound tree: each
 * explain_golden/NAME.sql is bound against the NEXMark catalog and its TEXT
 * explanation compared byte for byte with NAME.txt (regenerate with
 * SLUICE_UPDATE_GOLDEN=1).  The JSON form of each must be valid JSON. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bind_helpers.h"

/* A minimal JSON validator: returns the position after one value, or NULL. */
static const char *json_value(const char *p);

static const char *json_ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
    p++;
  return p;
}

static const char *json_string(const char *p) {
  if (*p != '"')
    return NULL;
  for (p++; *p && *p != '"'; p++) {
    if ((unsigned char)*p < 0x20)
      return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 0; i < 4; i++)
          if (!strchr("0123456789abcdefABCDEF", *++p))
            return NULL;
      } else if (!strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
  }
  return *p == '"' ? p + 1 : NULL;
}

static const char *json_value(const char *p) {
  p = json_ws(p);
  if (*p == '"')
    return json_string(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = json_ws(p + 1);
    if (*p == close)
      return p + 1;
    for (;;) {
      if (close == '}') {
        p = json_string(json_ws(p));
        if (!p)
          return NULL;
        p = json_ws(p);
        if (*p++ != ':')
          return NULL;
      }
      p = json_value(p);
      if (!p)
        return NULL;
      p = json_ws(p);
      if (*p == close)
        return p + 1;
      if (*p++ != ',')
        return NULL;
    }
  }
  if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
    return p + 4;
  if (strncmp(p, "false", 5) == 0)
    return p + 5;
  const char *s = p;
  while (*p && strchr("-+.eE0123456789", *p))
    p++;
  return p > s ? p : NULL;
}

static void test_golden(void **state) {
  (void)state;
  const char *root = getenv("SLUICE_SOURCE_DIR");
  if (!root)
    fail_msg("SLUICE_SOURCE_DIR is not set");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/unit/explain_golden", root);
  DIR *d = opendir(dir);
  assert_non_null(d);
  sl_catalog *cat = tnexmark_catalog();
  assert_non_null(cat);
  sl_error err = {0};
  assert_int_equal(trun_script(cat,
                               "CREATE TABLE side_input (key BIGINT, `value` "
                               "VARCHAR) WITH ('connector.type' = "
                               "'filesystem');",
                               &err),
                   SL_OK);
  bool update = getenv("SLUICE_UPDATE_GOLDEN") != NULL;
  int checked = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t n = strlen(de->d_name);
    if (n < 5 || strcmp(de->d_name + n - 4, ".sql") != 0)
      continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    char *sql = tread_file(path);
    assert_non_null(sql);
    tbound t;
    if (tbind(&t, cat, sql) != SL_OK)
      fail_msg("%s: %s", de->d_name, t.err.message);
    sl_strbuf text = SL_STRBUF_INIT, json = SL_STRBUF_INIT;
    sl_explain_bound(&text, t.bs, SL_EXPLAIN_TEXT);
    sl_explain_bound(&json, t.bs, SL_EXPLAIN_JSON);
    const char *end = json_value(sl_strbuf_cstr(&json));
    if (!end || *json_ws(end) != '\0')
      fail_msg("%s: invalid JSON:\n%s", de->d_name, sl_strbuf_cstr(&json));
    snprintf(path + strlen(path) - 4, 5, ".txt");
    if (update) {
      FILE *f = fopen(path, "w");
      assert_non_null(f);
      fputs(sl_strbuf_cstr(&text), f);
      fclose(f);
    }
    char *want = tread_file(path);
    if (!want)
      fail_msg("%s is missing (run with SLUICE_UPDATE_GOLDEN=1)", path);
    if (strcmp(want, sl_strbuf_cstr(&text)) != 0)
      fail_msg("%s differs:\n--- want\n%s--- got\n%s", de->d_name, want,
               sl_strbuf_cstr(&text));
    free(want);
    sl_strbuf_free(&text);
    sl_strbuf_free(&json);
    tbound_done(&t);
    free(sql);
    checked++;
  }
  closedir(d);
  assert_true(checked >= 8);
  sl_catalog_free(cat);
}

/* The example of the design brief, checked inline so the format is
 * documented here too. */
static void test_brief_example(void **state) {
  (void)state;
  sl_catalog *cat = tnexmark_catalog();
  tbound t;
  assert_int_equal(
      tbind(&t, cat,
            "SELECT auction, price FROM bid WHERE MOD(auction, 123) "
            "= 0"),
      SL_OK);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_explain_bound(&b, t.bs, SL_EXPLAIN_TEXT);
  const char *s = sl_strbuf_cstr(&b);
  assert_true(strncmp(s,
                      "== Bound tree ==\n"
                      "Project [auction BIGINT, price BIGINT]\n"
                      "  Filter (MOD(auction, 123) = 0)\n"
                      "    View bid\n"
                      "      Project [",
                      strlen("== Bound tree ==\nProject [auction BIGINT, "
                             "price BIGINT]\n  Filter (MOD(auction, 123) = "
                             "0)\n    View bid\n      Project [")) == 0);
  assert_non_null(strstr(s, "        Filter (event_type = 2)\n"
                            "          Scan datagen [connector=nexmark, "
                            "computed=[dateTime], rowtime=dateTime, "
                            "watermark=(dateTime - INTERVAL '4' SECOND)]\n"));
  sl_strbuf_free(&b);
  tbound_done(&t);
  sl_catalog_free(cat);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden),
      cmocka_unit_test(test_brief_example),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
