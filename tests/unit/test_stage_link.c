/* test_stage_link.c - links between a join's side and its stage nodes
 * (cluster/stage_link.c) over loopback TCP: the link sink routes each row
 * to the stage node leading its join key's partition (or to every one),
 * the link reader hands on the smallest of its senders' watermarks and
 * only once every sender has connected, and a link that ends before its
 * sender's final watermark closes the feed (the stages stop).  Links of
 * two leaves at one stage node (a repartition of both sides) feed each
 * leaf its own rows and watermark.  Under a late merge of window rows the
 * sink holds each window's rows until the watermark passes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../cluster/partition_leader.h"
#include "sluice/exec/executor.h"
#include "sluice/net/auth.h"
#include "sluice/net/channel.h"

typedef struct receiver {
  int listen_fd;
  char addr[128];
  sl_stage_feed *feeds[2]; /* per leaf; feeds[0] is the usual side */
  sl_stage_links *links;
} receiver;

/* A stage node fed by n0 senders of leaf 0 and n1 of leaf 1 (n1 = 0: leaf
 * 1 is not fed). */
static void start_receiver2(receiver *r, int n0, int n1) {
  sl_error err = {0};
  assert_int_equal(sl_channel_listen("tcp", "127.0.0.1:0", &r->listen_fd,
                                     r->addr, sizeof r->addr, &err),
                   SL_OK);
  r->feeds[0] = sl_stage_feed_new();
  r->feeds[1] = n1 > 0 ? sl_stage_feed_new() : NULL;
  int nsenders[2] = {n0, n1};
  assert_int_equal(sl_stage_links_start(r->listen_fd, 2, nsenders, r->feeds,
                                        NULL, &r->links, &err),
                   SL_OK);
}

static void start_receiver(receiver *r, int nsenders) {
  start_receiver2(r, nsenders, 0);
}

static void stop_receiver(receiver *r) {
  sl_stage_links_stop(r->links);
  close(r->listen_fd);
  sl_stage_feed_free(r->feeds[0]);
  sl_stage_feed_free(r->feeds[1]);
}

/* The next thing on leaf's feed (waiting up to 2 s for one). */
static int next_of(receiver *r, int leaf, const sl_row_layout *l,
                   sl_buffer *rows, int64_t *wm) {
  sl_error err = {0};
  for (int i = 0; i < 40; i++) {
    int k = sl_stage_feed_take(r->feeds[leaf], 50, rows, l, wm, &err);
    if (k != SL_FEED_NOTHING)
      return k;
  }
  return SL_FEED_NOTHING;
}

static int next(receiver *r, const sl_row_layout *l, sl_buffer *rows,
                int64_t *wm) {
  return next_of(r, 0, l, rows, wm);
}

static sl_row_layout *layout(sl_arena *a) {
  const sl_type *t[2] = {sl_type_new(a, SL_TYPE_BIGINT),
                         sl_type_new(a, SL_TYPE_VARCHAR)};
  const char *names[2] = {"k", "s"};
  return sl_row_layout_new(a, 2, names, t);
}

static sl_sink *open_sender(sl_stage_link_spec *spec, const sl_row_layout *l) {
  sl_sink_spec ss = {NULL, l, NULL, NULL, spec, false, false, false};
  sl_sink *s = NULL;
  sl_error err = {0};
  assert_int_equal(sl_sink_to_stage_nodes.open(&ss, &s, &err), SL_OK);
  return s;
}

/* Rows k = from..to-1 with a string that is not inline. */
static void fill(sl_buffer *b, int64_t from, int64_t to) {
  sl_buffer_clear(b);
  for (int64_t k = from; k < to; k++) {
    uint8_t *row = sl_buffer_append(b);
    SL_FIELD(row, b->layout, 0, int64_t) = k;
    char text[64];
    snprintf(text, sizeof text, "a string long enough to live on the heap %d",
             (int)k);
    assert_true(sl_buffer_put_str(b, &SL_FIELD(row, b->layout, 1, sl_str), text,
                                  (uint32_t)strlen(text)));
  }
}

/* Two stage nodes, one sender routing by the join key (column 0): each row
 * reaches exactly the node sl_fields_hash says, strings intact; the
 * watermark reaches both. */
static void test_rows_go_to_their_partition(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r[2];
  start_receiver(&r[0], 1);
  start_receiver(&r[1], 1);
  const char *addrs[2] = {r[0].addr, r[1].addr};
  const int route[1] = {0};
  sl_stage_link_spec spec = {0,    2,  addrs, 1,     route, 4096,
                             NULL, -1, -1,    false, 0,     NULL};
  sl_sink *s = open_sender(&spec, l);
  sl_buffer b;
  sl_buffer_init(&b, l, 1 << 16);
  fill(&b, 0, 200);
  sl_error err = {0};
  assert_int_equal(sl_sink_to_stage_nodes.write(s, &b, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 1000, &err), SL_OK);
  int got = 0;
  for (int p = 0; p < 2; p++) {
    sl_buffer in;
    memset(&in, 0, sizeof in);
    int64_t wm = 0;
    int k;
    while ((k = next(&r[p], l, &in, &wm)) == SL_FEED_ROWS) {
      for (uint32_t i = 0; i < in.nrows; i++) {
        const uint8_t *row = sl_buffer_row(&in, i);
        int64_t key = SL_FIELD(row, l, 0, int64_t);
        assert_int_equal(
            sl_leader_partition(sl_fields_hash(l, row, 1, route), 2), p);
        char want[64];
        snprintf(want, sizeof want,
                 "a string long enough to live on the heap %d", (int)key);
        const sl_str *str = &SL_FIELD(row, l, 1, sl_str);
        assert_int_equal(str->len, strlen(want));
        assert_memory_equal(sl_str_data(str), want, str->len);
        got++;
      }
    }
    assert_int_equal(k, SL_FEED_WATERMARK);
    assert_int_equal(wm, 1000);
    sl_buffer_free(&in);
  }
  assert_int_equal(got, 200);
  assert_int_equal(sl_sink_to_stage_nodes.close(s, true, &err), SL_OK);
  for (int p = 0; p < 2; p++) {
    sl_buffer in;
    memset(&in, 0, sizeof in);
    int64_t wm = 0;
    assert_int_equal(next(&r[p], l, &in, &wm), SL_FEED_WATERMARK);
    assert_true(wm == INT64_MAX);
    sl_buffer_free(&in);
    stop_receiver(&r[p]);
  }
  sl_buffer_free(&b);
  sl_arena_free(&a);
}

/* One stage node, two senders (broadcast: no route): the feed's watermark
 * is the smaller of theirs, and none before both have sent one. */
static void test_watermark_is_the_minimum(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r;
  start_receiver(&r, 2);
  const char *addrs[1] = {r.addr};
  sl_stage_link_spec spec = {0,    1,  addrs, 0,     NULL, 4096,
                             NULL, -1, -1,    false, 0,    NULL};
  sl_sink *x = open_sender(&spec, l), *y = open_sender(&spec, l);
  sl_error err = {0};
  sl_buffer in;
  memset(&in, 0, sizeof in);
  int64_t wm = 0;
  assert_int_equal(sl_sink_to_stage_nodes.watermark(x, 100, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_NOTHING);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(y, 50, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 50);
  /* x finishes (its final watermark): y's alone counts. */
  assert_int_equal(sl_sink_to_stage_nodes.close(x, true, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(y, 70, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 70);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(y, 300, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 300);
  assert_int_equal(sl_sink_to_stage_nodes.close(y, true, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_true(wm == INT64_MAX);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

/* A sender that fails (closes without its final watermark): the feed
 * closes after what was sent, so the stages stop instead of waiting. */
static void test_broken_link_closes_the_feed(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r;
  start_receiver(&r, 1);
  const char *addrs[1] = {r.addr};
  sl_stage_link_spec spec = {0,    1,  addrs, 0,     NULL, 4096,
                             NULL, -1, -1,    false, 0,    NULL};
  sl_sink *x = open_sender(&spec, l);
  sl_error err = {0};
  assert_int_equal(sl_sink_to_stage_nodes.watermark(x, 10, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.close(x, false, &err), SL_OK);
  sl_buffer in;
  memset(&in, 0, sizeof in);
  int64_t wm = 0;
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 10);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_CLOSED);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

/* With the cluster secret: a connection that stays silent (proves
 * nothing) does not hold up the link that proves it, and a connection
 * with another secret is refused; the real sender's watermark arrives
 * while the silent one is still connected. */
static void test_silent_connection_stalls_nothing(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  sl_secret secret, other;
  sl_secret_random(&secret);
  sl_secret_random(&other);
  receiver r;
  sl_error err = {0};
  assert_int_equal(sl_channel_listen("tcp", "127.0.0.1:0", &r.listen_fd, r.addr,
                                     sizeof r.addr, &err),
                   SL_OK);
  r.feeds[0] = sl_stage_feed_new();
  r.feeds[1] = NULL;
  int nsenders[2] = {1, 0};
  assert_int_equal(sl_stage_links_start(r.listen_fd, 2, nsenders, r.feeds,
                                        &secret, &r.links, &err),
                   SL_OK);
  int silent = -1;
  assert_int_equal(sl_channel_connect_stream(r.addr, 5000, &silent, &err),
                   SL_OK);
  const char *addrs[1] = {r.addr};
  sl_stage_link_spec wrong = {0,    1,  addrs, 0,     NULL, 4096,
                              NULL, -1, -1,    false, 0,    &other};
  sl_sink_spec ss = {NULL, l, NULL, NULL, &wrong, false, false, false};
  sl_sink *bad = NULL;
  assert_int_equal(sl_sink_to_stage_nodes.open(&ss, &bad, &err), SL_EPERM);
  sl_error_clear(&err);
  sl_stage_link_spec spec = {0,    1,  addrs, 0,     NULL, 4096,
                             NULL, -1, -1,    false, 0,    &secret};
  sl_sink *x = open_sender(&spec, l);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(x, 10, &err), SL_OK);
  sl_buffer in;
  memset(&in, 0, sizeof in);
  int64_t wm = 0;
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 10);
  assert_int_equal(sl_sink_to_stage_nodes.close(x, true, &err), SL_OK);
  close(silent);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

/* One stage node, the links of two leaves (a repartition of both sides:
 * the node's own leaf comes over links too): each leaf's rows reach its
 * own feed, and each feed's watermark is its own senders' minimum. */
static void test_two_leaves_at_one_node(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r;
  start_receiver2(&r, 1, 2);
  const char *addrs[1] = {r.addr};
  sl_stage_link_spec s0 = {0,    1,  addrs, 0,     NULL, 4096,
                           NULL, -1, -1,    false, 0,    NULL};
  sl_stage_link_spec s1 = {1,    1,  addrs, 0,     NULL, 4096,
                           NULL, -1, -1,    false, 0,    NULL};
  sl_sink *x = open_sender(&s0, l), *y = open_sender(&s1, l),
          *z = open_sender(&s1, l);
  sl_error err = {0};
  sl_buffer b, in;
  sl_buffer_init(&b, l, 1 << 16);
  memset(&in, 0, sizeof in);
  fill(&b, 0, 3);
  assert_int_equal(sl_sink_to_stage_nodes.write(x, &b, &err), SL_OK);
  fill(&b, 100, 105);
  assert_int_equal(sl_sink_to_stage_nodes.write(y, &b, &err), SL_OK);
  int64_t wm = 0;
  assert_int_equal(next_of(&r, 0, l, &in, &wm), SL_FEED_ROWS);
  assert_int_equal(in.nrows, 3);
  assert_int_equal(SL_FIELD(sl_buffer_row(&in, 0), l, 0, int64_t), 0);
  assert_int_equal(next_of(&r, 1, l, &in, &wm), SL_FEED_ROWS);
  assert_int_equal(in.nrows, 5);
  assert_int_equal(SL_FIELD(sl_buffer_row(&in, 0), l, 0, int64_t), 100);
  /* Leaf 0's one sender at 40 is leaf 0's watermark; leaf 1 has none
   * until both of its senders have sent one. */
  assert_int_equal(sl_sink_to_stage_nodes.watermark(x, 40, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(y, 90, &err), SL_OK);
  assert_int_equal(next_of(&r, 0, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 40);
  assert_int_equal(next_of(&r, 1, l, &in, &wm), SL_FEED_NOTHING);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(z, 60, &err), SL_OK);
  assert_int_equal(next_of(&r, 1, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 60);
  assert_int_equal(sl_sink_to_stage_nodes.close(x, true, &err), SL_OK);
  assert_int_equal(next_of(&r, 0, l, &in, &wm), SL_FEED_WATERMARK);
  assert_true(wm == INT64_MAX);
  assert_int_equal(next_of(&r, 1, l, &in, &wm), SL_FEED_NOTHING);
  assert_int_equal(sl_sink_to_stage_nodes.close(y, true, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.close(z, true, &err), SL_OK);
  assert_int_equal(next_of(&r, 1, l, &in, &wm), SL_FEED_WATERMARK);
  assert_true(wm == INT64_MAX);
  sl_buffer_free(&b);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

/* A link that says it carries a leaf not fed here is not this query's:
 * the feeds close rather than take its rows. */
static void test_link_of_another_leaf_is_refused(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r;
  start_receiver(&r, 1);
  const char *addrs[1] = {r.addr};
  sl_stage_link_spec s1 = {1,    1,  addrs, 0,     NULL, 4096,
                           NULL, -1, -1,    false, 0,    NULL};
  sl_sink *y = open_sender(&s1, l);
  sl_error err = {0};
  sl_buffer in;
  memset(&in, 0, sizeof in);
  int64_t wm = 0;
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_CLOSED);
  sl_sink_to_stage_nodes.close(y, false, &err);
  sl_error_clear(&err);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

/* Late merge of window rows: the sink holds each row until the watermark
 * passes its (first) window, then sends that window's rows to their
 * partitions, before the watermark; the rest at a successful close.
 * Column 0 is both the join key and the event time here; windows are
 * TUMBLE of 10 time units. */
static void test_held_rows_wait_for_their_window(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r[2];
  start_receiver(&r[0], 1);
  start_receiver(&r[1], 1);
  const char *addrs[2] = {r[0].addr, r[1].addr};
  const int route[1] = {0};
  sl_plan_window w;
  memset(&w, 0, sizeof w);
  w.kind = SL_WINDOW_TUMBLE;
  w.size_us = w.slide_us = 10;
  w.unit_us = 1;
  sl_stage_link_spec spec = {0,  2, addrs, 1,     route, 4096,
                             &w, 0, -1,    false, 0,     NULL};
  sl_sink *s = open_sender(&spec, l);
  sl_buffer b, in;
  sl_buffer_init(&b, l, 1 << 16);
  memset(&in, 0, sizeof in);
  fill(&b, 0, 30);
  sl_error err = {0};
  int64_t wm = 0;
  assert_int_equal(sl_sink_to_stage_nodes.write(s, &b, &err), SL_OK);
  for (int p = 0; p < 2; p++)
    assert_int_equal(next(&r[p], l, &in, &wm), SL_FEED_NOTHING);
  /* 9 fires the window [0, 10): its rows, then the watermark. */
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 9, &err), SL_OK);
  int got = 0;
  for (int p = 0; p < 2; p++) {
    int k;
    while ((k = next(&r[p], l, &in, &wm)) == SL_FEED_ROWS) {
      for (uint32_t i = 0; i < in.nrows; i++) {
        const uint8_t *row = sl_buffer_row(&in, i);
        int64_t key = SL_FIELD(row, l, 0, int64_t);
        assert_true(key < 10);
        assert_int_equal(
            sl_leader_partition(sl_fields_hash(l, row, 1, route), 2), p);
        got++;
      }
    }
    assert_int_equal(k, SL_FEED_WATERMARK);
    assert_int_equal(wm, 9);
  }
  assert_int_equal(got, 10);
  /* 15 fires no window: the watermark alone. */
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 15, &err), SL_OK);
  for (int p = 0; p < 2; p++) {
    assert_int_equal(next(&r[p], l, &in, &wm), SL_FEED_WATERMARK);
    assert_int_equal(wm, 15);
  }
  /* The close sends what is still held, then the final watermark. */
  assert_int_equal(sl_sink_to_stage_nodes.close(s, true, &err), SL_OK);
  for (int p = 0; p < 2; p++) {
    int k;
    while ((k = next(&r[p], l, &in, &wm)) == SL_FEED_ROWS) {
      for (uint32_t i = 0; i < in.nrows; i++) {
        int64_t key = SL_FIELD(sl_buffer_row(&in, i), l, 0, int64_t);
        assert_true(key >= 10 && key < 30);
        got++;
      }
    }
    assert_int_equal(k, SL_FEED_WATERMARK);
    assert_true(wm == INT64_MAX);
  }
  assert_int_equal(got, 30);
  sl_buffer_free(&b);
  sl_buffer_free(&in);
  stop_receiver(&r[0]);
  stop_receiver(&r[1]);
  sl_arena_free(&a);
}

/* Late merge of an interval join's stream side: a row waits for the first
 * window whose interval [end + lo, end + hi] reaches it, which fires when
 * the watermark passes end + hi.  hi = -1 (q7's shape, the window's time):
 * a row at 5 is first needed by the window ending at 10, which fires at
 * 9; a row at 10 by the one ending at 20 (at 19). */
static void test_held_stream_rows_wait_for_their_interval(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_row_layout *l = layout(&a);
  receiver r;
  start_receiver(&r, 1);
  const char *addrs[1] = {r.addr};
  const int route[1] = {0};
  sl_plan_window w;
  memset(&w, 0, sizeof w);
  w.kind = SL_WINDOW_TUMBLE;
  w.size_us = w.slide_us = 10;
  w.unit_us = 1;
  sl_stage_link_spec spec = {0,  1, addrs, 1,    route, 4096,
                             &w, 0, -1,    true, -1,    NULL};
  sl_sink *s = open_sender(&spec, l);
  sl_buffer b, in;
  sl_buffer_init(&b, l, 1 << 16);
  memset(&in, 0, sizeof in);
  fill(&b, 5, 6);
  sl_error err = {0};
  int64_t wm = 0;
  assert_int_equal(sl_sink_to_stage_nodes.write(s, &b, &err), SL_OK);
  fill(&b, 10, 11);
  assert_int_equal(sl_sink_to_stage_nodes.write(s, &b, &err), SL_OK);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 8, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 8);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 9, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_ROWS);
  assert_int_equal(in.nrows, 1);
  assert_int_equal(SL_FIELD(sl_buffer_row(&in, 0), l, 0, int64_t), 5);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 9);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 18, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(sl_sink_to_stage_nodes.watermark(s, 19, &err), SL_OK);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_ROWS);
  assert_int_equal(SL_FIELD(sl_buffer_row(&in, 0), l, 0, int64_t), 10);
  assert_int_equal(next(&r, l, &in, &wm), SL_FEED_WATERMARK);
  assert_int_equal(wm, 19);
  assert_int_equal(sl_sink_to_stage_nodes.close(s, true, &err), SL_OK);
  sl_buffer_free(&b);
  sl_buffer_free(&in);
  stop_receiver(&r);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_go_to_their_partition),
      cmocka_unit_test(test_watermark_is_the_minimum),
      cmocka_unit_test(test_silent_connection_stalls_nothing),
      cmocka_unit_test(test_broken_link_closes_the_feed),
      cmocka_unit_test(test_two_leaves_at_one_node),
      cmocka_unit_test(test_link_of_another_leaf_is_refused),
      cmocka_unit_test(test_held_rows_wait_for_their_window),
      cmocka_unit_test(test_held_stream_rows_wait_for_their_interval),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
