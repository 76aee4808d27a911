/* test_session_store.c - session windows per key (state/session_store.c)
 * against a brute-force model: random records under a rising watermark,
 * closed at every step.  The store visits sessions in order of end through
 * heaps of lazily updated timers; the model scans every session every
 * time.  Both must close the same sessions (key, start, end, count) at the
 * same steps, and the store's min_start/min_end must bound what is open. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sluice/state/session_store.h"

#define GAP 10
#define NKEYS 40
#define MAXS 4096

typedef struct model_session {
  int64_t key, start, end, count;
  bool open;
} model_session;

typedef struct closed {
  int64_t key, start, end, count;
} closed;

typedef struct world {
  sl_arena a;
  sl_row_layout *key;
  sl_agg_set aggs; /* COUNT(*) */
  model_session m[MAXS];
  int nm;
  closed got[MAXS], want[MAXS];
  int ngot, nwant;
  int64_t wm;
} world;

static void setup_world(world *w) {
  memset(w, 0, sizeof *w);
  sl_arena_init(&w->a, 0);
  const sl_type *kt[1] = {sl_type_new(&w->a, SL_TYPE_BIGINT)};
  w->key = sl_row_layout_new(&w->a, 1, NULL, kt);
  sl_agg_desc count = {.op = SL_AGG_COUNT_STAR,
                       .in_field = -1,
                       .filter_field = -1,
                       .out_type = kt[0]};
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&w->a, &w->aggs, 1, &count, w->key, &err),
                   SL_OK);
}

/* The model: sessions of a key that touch the new one merge into it,
 * except those already closed. */
static void model_add(world *w, int64_t key, int64_t ts) {
  int64_t start = ts, end = ts + GAP, count = 1;
  for (int i = 0; i < w->nm; i++) {
    model_session *s = &w->m[i];
    if (!s->open || s->key != key || s->end - 1 <= w->wm || s->start > end ||
        start > s->end)
      continue;
    start = s->start < start ? s->start : start;
    end = s->end > end ? s->end : end;
    count += s->count;
    s->open = false; /* folded into the new one */
    s->count = 0;
  }
  assert_true(w->nm < MAXS);
  w->m[w->nm++] = (model_session){key, start, end, count, true};
}

static void model_close(world *w) {
  for (int i = 0; i < w->nm; i++) {
    model_session *s = &w->m[i];
    if (s->open && s->end - 1 <= w->wm) {
      w->want[w->nwant++] = (closed){s->key, s->start, s->end, s->count};
      s->open = false;
    }
  }
}

static bool store_closes(void *arg, const session *ss) {
  const world *w = arg;
  return ss->end - 1 <= w->wm;
}

static int store_out(void *arg, const uint8_t *key, const session *ss) {
  world *w = arg;
  int64_t count;
  memcpy(&count, ss->states + w->aggs.aggs[0].state_offset, sizeof count);
  w->got[w->ngot++] =
      (closed){SL_FIELD(key, w->key, 0, int64_t), ss->start, ss->end, count};
  return SL_OK;
}

static int by_fields(const void *x, const void *y) {
  const closed *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : a->end > b->end;
}

static void run_round(unsigned seed, int out_of_order, int close_one_in) {
  world *w = calloc(1, sizeof *w);
  assert_non_null(w);
  setup_world(w);
  session_store st;
  session_store_init(&st, w->key, &w->aggs);
  srand(seed);
  uint8_t *row = sl_arena_alloc(&w->a, w->key->width);
  int64_t now = 0;
  w->wm = -1000;
  for (int step = 0; step < 1500; step++) {
    now += rand() % 3;
    /* Late rows are the worker's to drop: only times after the
     * watermark reach the store. */
    int64_t ts = now - (out_of_order ? rand() % (out_of_order + 1) : 0);
    if (ts <= w->wm)
      ts = w->wm + 1;
    int64_t key = rand() % NKEYS;
    memset(row, 0, w->key->width);
    SL_FIELD(row, w->key, 0, int64_t) = key;
    uint64_t h = sl_key_hash(w->key, row);
    sl_error err = {0};
    session *ss =
        session_store_add(&st, h, row, ts, ts + GAP, NULL, w->wm + 1, &err);
    assert_non_null(ss);
    assert_int_equal(
        sl_agg_update(&w->aggs, ss->states, row, &st.keys.arena, &err), SL_OK);
    model_add(w, key, ts);
    if (rand() % close_one_in == 0) {
      w->wm = now - out_of_order - 1;
      w->ngot = w->nwant = 0;
      assert_int_equal(
          session_store_close(&st, store_closes, store_out, w, &err), SL_OK);
      model_close(w);
      assert_int_equal(w->ngot, w->nwant);
      qsort(w->got, (size_t)w->ngot, sizeof *w->got, by_fields);
      qsort(w->want, (size_t)w->nwant, sizeof *w->want, by_fields);
      for (int i = 0; i < w->ngot; i++) {
        assert_int_equal(w->got[i].key, w->want[i].key);
        assert_int_equal(w->got[i].start, w->want[i].start);
        assert_int_equal(w->got[i].end, w->want[i].end);
        assert_int_equal(w->got[i].count, w->want[i].count);
      }
      /* The bounds the coordinator's fire rule reads. */
      int64_t min_start = INT64_MAX, min_end = INT64_MAX;
      uint64_t open = 0;
      for (int i = 0; i < w->nm; i++)
        if (w->m[i].open) {
          open++;
          if (w->m[i].start < min_start)
            min_start = w->m[i].start;
          if (w->m[i].end < min_end)
            min_end = w->m[i].end;
        }
      assert_int_equal(st.open, open);
      assert_true(st.min_start <= min_start);
      assert_true(st.min_end <= min_end);
      assert_int_equal(st.min_start, min_start); /* exact after a close */
    }
  }
  session_store_free(&st);
  sl_arena_free(&w->a);
  free(w);
}

static void test_in_order(void **state) {
  (void)state;
  for (unsigned seed = 1; seed <= 20; seed++)
    run_round(seed, 0, 4);
}

/* Records up to 25 time units out of order: sessions grow backwards and
 * bridge others, so starts shrink and sessions fold into each other. */
static void test_out_of_order(void **state) {
  (void)state;
  for (unsigned seed = 1; seed <= 20; seed++)
    run_round(seed, 25, 4);
}

/* Sessions pile up (a close one step in 300, as when another reader
 * holds the watermark back): a key holds many, and a record up to 200
 * units early lands among them or bridges several.  The store's walk of
 * a key's list stops early (session_store.h); the model scans all. */
static void test_piled_up(void **state) {
  (void)state;
  for (unsigned seed = 1; seed <= 20; seed++)
    run_round(seed, 200, 300);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_order),
      cmocka_unit_test(test_out_of_order),
      cmocka_unit_test(test_piled_up),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
