/* test_dictionary.c - dictionaries of strings (row/dictionary.h) and a
 * source's codes (sl_source_spec.as_code): a code stands for exactly one
 * string, and a column read as codes gives, event for event, the codes of
 * the strings the same source gives when read as strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "session_helpers.h"
#include "sluice/common/strbuf.h"
#include "sluice/connectors/connector.h"
#include "sluice/row/dictionary.h"
#include "sluice/session/session.h"

static void test_codes_and_values(void **state) {
  (void)state;
  /* inline (<= 12 bytes) and long strings, and the empty string */
  static const char *const words[] = {"view", "click", "",
                                      "a-string-longer-than-twelve",
                                      "a-string-longer-than-twelvf"};
  enum { N = 5 };
  sl_str v[N];
  for (int k = 0; k < N; k++)
    v[k] = sl_str_make(words[k], (uint32_t)strlen(words[k]));
  uint32_t ns = sl_dictionary_slots_for(N);
  assert_true(ns >= 2 * N && (ns & (ns - 1)) == 0);
  int32_t slots[64];
  sl_dictionary d;
  assert_true(sl_dictionary_init(&d, "words", v, N, slots, ns));
  assert_int_equal(d.n, N);
  assert_int_equal(d.max_len, strlen(words[3]));
  for (int k = 0; k < N; k++) {
    assert_int_equal(sl_dictionary_code(&d, words[k], strlen(words[k])), k);
    const sl_str *s = sl_dictionary_value(&d, k);
    assert_non_null(s);
    assert_true(sl_str_equal(s, &v[k]));
  }
  /* a prefix, a longer string, another case: not in it */
  assert_int_equal(sl_dictionary_code(&d, "vie", 3), -1);
  assert_int_equal(sl_dictionary_code(&d, "views", 5), -1);
  assert_int_equal(sl_dictionary_code(&d, "VIEW", 4), -1);
  assert_null(sl_dictionary_value(&d, -1));
  assert_null(sl_dictionary_value(&d, N));
}

static void test_duplicates_refused(void **state) {
  (void)state;
  /* equal strings would give two codes to one string: refused */
  sl_str v[3] = {sl_str_make("same-long-string-here", 21),
                 sl_str_make("other", 5),
                 sl_str_make("same-long-string-here", 21)};
  int32_t slots[16];
  sl_dictionary d;
  assert_false(sl_dictionary_init(&d, "dup", v, 3, slots, 16));
  /* too few slots, or not a power of two */
  assert_false(sl_dictionary_init(&d, "small", v, 2, slots, 2));
  assert_false(sl_dictionary_init(&d, "odd", v, 2, slots, 15));
  assert_true(sl_dictionary_init(&d, "ok", v, 2, slots, 16));
}

/* ---- a source's codes ------------------------------------------------ */

static const sl_table_def *create(sl_session **s, const char *sql,
                                  const char *name) {
  *s = sl_session_new();
  sl_error err = {0};
  sl_result_sink quiet = sl_result_sink_discard(NULL);
  if (sl_session_execute(*s, sql, strlen(sql), 1, &quiet, &err) != SL_OK)
    fail_msg("CREATE failed: %s", err.message);
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(*s), name);
  assert_non_null(t);
  return t;
}

static int leaf_named(const sl_leaf_columns *lc, const char *name) {
  for (int i = 0; i < lc->n; i++)
    if (strcmp(lc->names[i], name) == 0)
      return i;
  fail_msg("no leaf %s", name);
  return -1;
}

/* Every row of t's leaves `names`, read with as_code[j] as asked, into
 * out (an array of nrows x n sl_str or codes, as int64 or string copies). */
typedef struct cell {
  int64_t code;
  char str[48];
} cell;

static size_t read_all(const sl_source_connector *c, const sl_table_def *t,
                       int n, const char *const *names, const bool *as_code,
                       cell *out, size_t cap) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns lc;
  sl_table_leaf_columns(&a, t, &lc);
  int idx[8];
  const sl_type *types[8];
  sl_type *code_type = sl_type_new(&a, SL_TYPE_INT);
  for (int j = 0; j < n; j++) {
    idx[j] = leaf_named(&lc, names[j]);
    types[j] = as_code[j] ? code_type : lc.types[idx[j]];
  }
  sl_row_layout *l = sl_row_layout_new(&a, n, names, types);
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, as_code};
  sl_source *src;
  sl_error err = {0};
  if (c->open(&spec, &src, &err) != SL_OK)
    fail_msg("open failed: %s", err.message);
  sl_buffer buf;
  sl_buffer_init(&buf, l, 1 << 14);
  size_t rows = 0;
  for (bool done = false; !done;) {
    sl_buffer_clear(&buf);
    if (c->next(src, &buf, &done, &err) != SL_OK)
      fail_msg("next failed: %s", err.message);
    for (uint32_t r = 0; r < buf.nrows; r++, rows++) {
      assert_true(rows < cap);
      const uint8_t *row = sl_buffer_row(&buf, r);
      for (int j = 0; j < n; j++) {
        cell *x = &out[rows * (size_t)n + (size_t)j];
        const sl_field *f = &l->fields[j];
        assert_false(sl_row_is_null(row, j));
        if (as_code[j]) {
          int32_t v;
          memcpy(&v, row + f->offset, 4);
          x->code = v;
        } else {
          const sl_str *s = (const sl_str *)(row + f->offset);
          assert_true(s->len < sizeof x->str);
          memcpy(x->str, sl_str_data(s), s->len);
          x->str[s->len] = 0;
        }
      }
    }
  }
  sl_buffer_free(&buf);
  c->close(src);
  sl_arena_free(&a);
  return rows;
}

/* Each YSB string column read as codes: the codes of the strings it gives
 * as strings, event for event; the events and campaigns tables share the
 * ad ids' dictionary (their join compares codes). */
static void check_codes(const char *sql, const char *table, int n,
                        const char *const *names, size_t want_rows) {
  sl_session *s;
  const sl_table_def *t = create(&s, sql, table);
  const sl_source_connector *c = sl_source_connector_find("ysb");
  assert_non_null(c);
  assert_non_null(c->dictionary);
  enum { CAP = 4000 };
  static cell strs[CAP * 8], codes[CAP * 8];
  bool none[8] = {false}, all[8];
  for (int j = 0; j < n; j++)
    all[j] = true;
  size_t ns = read_all(c, t, n, names, none, strs, CAP);
  size_t nc = read_all(c, t, n, names, all, codes, CAP);
  assert_int_equal(ns, want_rows);
  assert_int_equal(nc, want_rows);
  for (int j = 0; j < n; j++) {
    const sl_dictionary *d = c->dictionary(t, names[j]);
    assert_non_null(d);
    for (size_t r = 0; r < ns; r++) {
      const cell *x = &strs[r * (size_t)n + (size_t)j];
      int32_t want = sl_dictionary_code(d, x->str, (uint32_t)strlen(x->str));
      assert_true(want >= 0);
      assert_int_equal(codes[r * (size_t)n + (size_t)j].code, want);
    }
  }
  sl_session_free(s);
}

static void test_ysb_codes(void **state) {
  (void)state;
  static const char *const ev[] = {"user_id", "page_id",    "ad_id",
                                   "ad_type", "event_type", "ip_address"};
  check_codes("CREATE TABLE e (user_id STRING, page_id STRING, ad_id STRING, "
              "ad_type STRING, event_type STRING, event_time TIMESTAMP(3), "
              "ip_address STRING) WITH ('connector' = 'ysb', "
              "'events.num' = '3000', 'seed' = '5')",
              "e", 6, ev, 3000);
  static const char *const camp[] = {"ad_id", "campaign_id"};
  check_codes("CREATE TABLE c (ad_id STRING, campaign_id STRING) WITH "
              "('connector' = 'ysb', 'ysb.table' = 'campaigns')",
              "c", 2, camp, 1000);
  /* one dictionary per pool, shared by both tables; none for time */
  sl_session *s1, *s2;
  const sl_table_def *e =
      create(&s1,
             "CREATE TABLE e (ad_id STRING, event_time TIMESTAMP(3)) WITH "
             "('connector' = 'ysb')",
             "e");
  const sl_table_def *c = create(&s2,
                                 "CREATE TABLE c (ad_id STRING, campaign_id "
                                 "STRING) WITH ('connector' = 'ysb', "
                                 "'ysb.table' = 'campaigns')",
                                 "c");
  const sl_source_connector *y = sl_source_connector_find("ysb");
  assert_ptr_equal(y->dictionary(e, "ad_id"), y->dictionary(c, "ad_id"));
  assert_int_equal(y->dictionary(c, "ad_id")->n, 1000);
  assert_int_equal(y->dictionary(c, "campaign_id")->n, 100);
  assert_ptr_not_equal(y->dictionary(c, "ad_id"),
                       y->dictionary(c, "campaign_id"));
  assert_null(y->dictionary(e, "event_time"));
  sl_session_free(s1);
  sl_session_free(s2);
}

static int keep_text(void *c, const char *t) {
  sl_strbuf_append(c, t);
  return SL_OK;
}

/* EXPLAIN ANALYZE of YSB's query says what it read as codes and that the
 * campaigns table, keyed by a dense code, was probed by value; with codes
 * off, the strings and a hash probe (to the first match: ad ids are
 * unique).  The same 100 rows either way. */
static void explain_ysb(bool codes, const char *want1, const char *want2) {
  sl_session *s = sl_session_new();
  sl_error err = {0};
  session_exec_ok(s, "SET 'parallelism.default' = '2'");
  session_exec_ok(
      s, "CREATE TABLE e (ad_id STRING, event_type STRING, event_time "
         "TIMESTAMP(3), WATERMARK FOR event_time AS event_time - INTERVAL "
         "'1' SECOND) WITH ('connector' = 'ysb', 'events.num' = '100000')");
  session_exec_ok(s, "CREATE TABLE c (ad_id STRING, campaign_id STRING) WITH "
                     "('connector' = 'ysb', 'ysb.table' = 'campaigns')");
  if (!codes)
    session_exec_ok(s, "SET 'sluice.dictionary-codes' = 'off'");
  const char *q =
      "EXPLAIN ANALYZE SELECT c.campaign_id, window_start, COUNT(*) FROM "
      "TABLE(TUMBLE(TABLE e, DESCRIPTOR(event_time), INTERVAL '10' SECOND)) "
      "AS x JOIN c ON x.ad_id = c.ad_id WHERE x.event_type = 'view' GROUP BY "
      "c.campaign_id, window_start, window_end";
  sl_strbuf out = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &out;
  sink.text = keep_text;
  if (sl_session_execute(s, q, strlen(q), 1, &sink, &err) != SL_OK)
    fail_msg("EXPLAIN ANALYZE failed: %s", err.message);
  const char *text = sl_strbuf_cstr(&out);
  if (!strstr(text, want1) || !strstr(text, want2) ||
      !strstr(text, "actual: rows=100,"))
    fail_msg("EXPLAIN ANALYZE lacks '%s' or '%s':\n%s", want1, want2, text);
  sl_strbuf_free(&out);
  sl_session_free(s);
}

static void test_ysb_explained(void **state) {
  (void)state;
  explain_ysb(true,
              "dictionary codes: join key e.ad_id = c.ad_id as codes; filter "
              "(event_type = 'view') as codes; group key campaign_id as its "
              "code",
              "probed=by value (a unique, dense integer key)");
  explain_ysb(false, "reads=[ad_id, event_type, event_time] of 3 leaves",
              "probed=by hash, to the first match (unique keys)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_codes_and_values),
      cmocka_unit_test(test_duplicates_refused),
      cmocka_unit_test(test_ysb_codes),
      cmocka_unit_test(test_ysb_explained),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
