/* test_node_messages.c - the checked decoders of a cluster's messages
 * (node_messages.h): what the coordinator encodes decodes to the same
 * message, and each kind of malformed payload is refused with a message
 * before anything of it is used (the fuzz target tests/fuzz/
 * fuzz_messages.c tries arbitrary bytes; these are the cases by name). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sluice/common/clock.h"
#include "sluice/net/node_frames.h"
#include "sluice/net/node_messages.h"
#include "sluice/planner/plan.h"

static sl_query_msg sample_query(void) {
  static const char addrs[] = "0 1 127.0.0.1:4000\nS 1 127.0.0.1:4002\n";
  sl_query_msg m = {.node_index = 1,
                    .node_count = 3,
                    .strategy = SL_STRATEGY_REPARTITION,
                    .transport = SL_XPORT_TCP,
                    .query_id = 0x123456789abcULL,
                    .leaf = 1,
                    .fed = 0,
                    .nfed = 2,
                    .join = SL_JOIN_SHUFFLE,
                    .addrs = addrs,
                    .addrs_len = sizeof addrs - 1};
  return m;
}

static void encode_query(const sl_query_msg *m, const char *sql,
                         sl_strbuf *out) {
  sl_strbuf_reset(out);
  sl_query_msg_encode(m, out);
  sl_strbuf_append(out, sql);
}

static void test_query_round_trip(void **state) {
  (void)state;
  sl_query_msg m = sample_query(), d;
  sl_strbuf b = SL_STRBUF_INIT;
  encode_query(&m, "SELECT 1", &b);
  sl_error err = {0};
  assert_int_equal(sl_query_msg_decode(b.data, b.len, &d, &err), SL_OK);
  assert_int_equal(d.node_index, 1);
  assert_int_equal(d.node_count, 3);
  assert_int_equal(d.strategy, SL_STRATEGY_REPARTITION);
  assert_int_equal(d.transport, SL_XPORT_TCP);
  assert_true(d.query_id == m.query_id);
  assert_int_equal(d.leaf, 1);
  assert_int_equal(d.fed, 0);
  assert_int_equal(d.nfed, 2);
  assert_int_equal(d.join, SL_JOIN_SHUFFLE);
  assert_int_equal(d.addrs_len, m.addrs_len);
  assert_memory_equal(d.addrs, m.addrs, m.addrs_len);
  assert_int_equal(d.sql_len, 8);
  assert_memory_equal(d.sql, "SELECT 1", 8);
  /* The whole plan, leaf -1 and no fed leaf, also survives. */
  m.leaf = -1, m.fed = -1, m.nfed = 0, m.addrs_len = 0;
  encode_query(&m, "", &b);
  assert_int_equal(sl_query_msg_decode(b.data, b.len, &d, &err), SL_OK);
  assert_int_equal(d.leaf, -1);
  assert_int_equal(d.fed, -1);
  assert_int_equal(d.sql_len, 0);
  sl_strbuf_free(&b);
}

/* Each field out of bounds: refused, with a message saying which. */
static void test_query_refused(void **state) {
  (void)state;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_error err = {0};
  sl_query_msg m, d;
#define REFUSED(change, what)                                                  \
  do {                                                                         \
    m = sample_query();                                                        \
    change;                                                                    \
    encode_query(&m, "SELECT 1", &b);                                          \
    assert_int_equal(sl_query_msg_decode(b.data, b.len, &d, &err), SL_EINVAL); \
    assert_non_null(strstr(err.message, what));                                \
    sl_error_clear(&err);                                                      \
  } while (0)
  REFUSED(m.node_count = 0, "node count out of range");
  /* 100000^2 overflowed an int where the node sized its address table. */
  REFUSED(m.node_count = 100000, "node count out of range");
  REFUSED(m.node_index = 3, "node index not below the node count");
  REFUSED(m.strategy = 7, "unknown strategy");
  REFUSED(m.transport = 9, "unknown transport");
  REFUSED(m.join = 99, "unknown join strategy");
  REFUSED(m.nfed = SL_NODE_MAX_FED + 1, "more fed leaves");
  REFUSED((m.fed = -1, m.nfed = 2), "fed leaves without a fed leaf");
#undef REFUSED
  /* The address list claims more bytes than follow. */
  m = sample_query();
  encode_query(&m, "SELECT 1", &b);
  uint32_t claim = 1000;
  memcpy(b.data + 6 * sizeof(uint32_t), &claim, sizeof claim);
  assert_int_equal(sl_query_msg_decode(b.data, b.len, &d, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "runs past the message"));
  sl_error_clear(&err);
  /* Cut short: anything under the fixed part. */
  m = sample_query();
  encode_query(&m, "", &b);
  for (size_t n = 0; n < 36; n++) {
    assert_int_equal(sl_query_msg_decode(b.data, n, &d, &err), SL_EINVAL);
    assert_non_null(strstr(err.message, "cut short"));
    sl_error_clear(&err);
  }
  sl_strbuf_free(&b);
}

static void test_xlisten(void **state) {
  (void)state;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_error err = {0};
  sl_xlisten_msg m = {2, 3, 2, SL_XPORT_VERBS}, d;
  sl_xlisten_msg_encode(&m, &b);
  assert_int_equal(sl_xlisten_msg_decode(b.data, b.len, &d, &err), SL_OK);
  assert_memory_equal(&m, &d, sizeof m);
  /* Not 16 bytes; a kind, transport or index out of range; links on verbs. */
  assert_int_equal(sl_xlisten_msg_decode(b.data, 8, &d, &err), SL_EINVAL);
  sl_error_clear(&err);
  sl_xlisten_msg bad[] = {{3, 3, 1, SL_XPORT_TCP},
                          {0, 0, 1, SL_XPORT_TCP},
                          {0, 2, 4, SL_XPORT_TCP},
                          {0, 2, 1, SL_XPORT_SHM},
                          {0, 2, 3, SL_XPORT_VERBS}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    sl_strbuf_reset(&b);
    sl_xlisten_msg_encode(&bad[i], &b);
    assert_int_equal(sl_xlisten_msg_decode(b.data, b.len, &d, &err), SL_EINVAL);
    assert_non_null(err.message);
    sl_error_clear(&err);
  }
  sl_strbuf_free(&b);
}

static void test_xaddr_lines(void **state) {
  (void)state;
  const char *text = "0 1 127.0.0.1:4000\n"
                     "1 0 127.0.0.1:4001\n"
                     "5 0 127.0.0.1:9\n" /* sender out of range: skipped */
                     "-1 0 127.0.0.1:9\n"
                     "L 1 0 10.0.0.2:5000\n"
                     "S 1 10.0.0.2:6000\n"
                     "garbage\n";
  int found;
  char **a = sl_xaddr_parse(text, strlen(text), 2, 0, &found);
  assert_int_equal(found, 2);
  assert_string_equal(a[0 * 2 + 1], "127.0.0.1:4000");
  assert_string_equal(a[1 * 2 + 0], "127.0.0.1:4001");
  assert_null(a[0]);
  sl_xaddr_free(a, 2, 0);
  a = sl_xaddr_parse(text, strlen(text), 2, 'L', &found);
  assert_int_equal(found, 1);
  assert_string_equal(a[1 * 2 + 0], "10.0.0.2:5000");
  sl_xaddr_free(a, 2, 'L');
  a = sl_xaddr_parse(text, strlen(text), 2, 'S', &found);
  assert_int_equal(found, 1);
  assert_string_equal(a[1], "10.0.0.2:6000");
  sl_xaddr_free(a, 2, 'S');
}

static void test_small_messages(void **state) {
  (void)state;
  sl_error err = {0};
  /* HELLO */
  uint8_t hello[64];
  uint32_t w = 4;
  memcpy(hello, &w, 4);
  const char *about = "0.1.0\nrdma rxe0 10.0.2.15 1 Ethernet";
  memcpy(hello + 4, about, strlen(about));
  int workers;
  bool rdma;
  char version[16], device[64];
  assert_int_equal(sl_hello_msg_decode(hello, 4 + strlen(about), &workers,
                                       version, sizeof version, &rdma, device,
                                       sizeof device, &err),
                   SL_OK);
  assert_int_equal(workers, 4);
  assert_string_equal(version, "0.1.0");
  assert_true(rdma);
  assert_string_equal(device, "rxe0 10.0.2.15 1 Ethernet");
  w = 0;
  memcpy(hello, &w, 4);
  assert_int_equal(sl_hello_msg_decode(hello, 4, &workers, version,
                                       sizeof version, &rdma, device,
                                       sizeof device, &err),
                   SL_EINVAL);
  sl_error_clear(&err);
  /* ERROR: codes that are not Sluice's become internal errors. */
  uint8_t e[16];
  int32_t code = 17;
  memcpy(e, &code, 4);
  memcpy(e + 4, "boom", 4);
  const char *msg;
  int mlen;
  assert_int_equal(sl_error_msg_decode(e, 8, &code, &msg, &mlen, &err), SL_OK);
  assert_int_equal(code, SL_EINTERNAL);
  assert_int_equal(mlen, 4);
  assert_memory_equal(msg, "boom", 4);
  assert_int_equal(sl_error_msg_decode(e, 3, &code, &msg, &mlen, &err),
                   SL_EINVAL);
  sl_error_clear(&err);
  /* WM, STAGE_HELLO, PARTIAL, DONE: exact sizes and ranges. */
  int64_t wm;
  assert_int_equal(sl_wm_msg_decode(e, 7, &wm, &err), SL_EINVAL);
  sl_error_clear(&err);
  uint32_t leaf = 2;
  int l;
  assert_int_equal(sl_stage_hello_decode(&leaf, 4, 2, &l, &err), SL_EINVAL);
  sl_error_clear(&err);
  leaf = 1;
  assert_int_equal(sl_stage_hello_decode(&leaf, 4, 2, &l, &err), SL_OK);
  assert_int_equal(l, 1);
  int64_t se[2] = {5000, 5000};
  int64_t start, end;
  const uint8_t *t;
  size_t tl;
  assert_int_equal(
      sl_partial_msg_decode(se, sizeof se, &start, &end, &t, &tl, &err),
      SL_EINVAL);
  sl_error_clear(&err);
  sl_query_stats st;
  memset(&st, 0, sizeof st);
  memset(st.jit_status, 'x', sizeof st.jit_status); /* no NUL */
  sl_query_stats got;
  assert_int_equal(sl_stats_msg_decode(&st, sizeof st - 1, &got, &err),
                   SL_EINVAL);
  sl_error_clear(&err);
  assert_int_equal(sl_stats_msg_decode(&st, sizeof st, &got, &err), SL_OK);
  assert_int_equal(strlen(got.jit_status), sizeof got.jit_status - 1);
}

/* ROWS: a header claiming a buffer the message does not carry is refused
 * before anything is allocated (a 12-byte message once asked for 4 GiB). */
static void test_rows_bounds(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *t[1] = {sl_type_new(&a, SL_TYPE_BIGINT)};
  sl_row_layout *l = sl_row_layout_new(&a, 1, NULL, t);
  sl_error err = {0};
  sl_buffer out = {0};
  uint32_t h[3] = {0, 0, 0xffffffc0u};
  assert_int_equal(sl_rows_msg_decode(h, sizeof h, l, &out, &err), SL_EIO);
  assert_non_null(strstr(err.message, "claims a size"));
  sl_error_clear(&err);
  assert_null(out.data);
  h[2] = 100; /* not a buffer sl_buffer_init makes */
  assert_int_equal(sl_rows_msg_decode(h, sizeof h, l, &out, &err), SL_EIO);
  sl_error_clear(&err);
  /* One row, claiming two. */
  uint8_t m[12 + 64] = {0};
  size_t mlen = 12 + l->width;
  uint32_t h2[3] = {2, 0, 64};
  memcpy(m, h2, sizeof h2);
  assert_int_equal(sl_rows_msg_decode(m, mlen, l, &out, &err), SL_EIO);
  assert_non_null(strstr(err.message, "wrong size"));
  sl_error_clear(&err);
  h2[0] = 1;
  memcpy(m, h2, sizeof h2);
  int64_t v = 42;
  memcpy(m + 12 + l->fields[0].offset, &v, 8);
  assert_int_equal(sl_rows_msg_decode(m, mlen, l, &out, &err), SL_OK);
  assert_int_equal(out.nrows, 1);
  assert_int_equal(SL_FIELD(sl_buffer_row(&out, 0), l, 0, int64_t), 42);
  sl_buffer_free(&out);
  sl_arena_free(&a);
}

/* A peer that stops in the middle of a frame: the read gives up after
 * SL_SILENCE_MS of silence instead of waiting for ever, and says why; a
 * whole frame after a long silence between frames is read as usual. */
static void test_silence_within_a_frame(void **state) {
  (void)state;
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  sl_error err = {0};
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  /* Nothing yet: the caller's timeout, not an error. */
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, 10, &err), SL_FRAME_TIMEOUT);
  assert_int_equal(sl_frame_send(sv[0], 7, "hello", 5, NULL, 0, &err), SL_OK);
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, -1, &err), SL_OK);
  assert_int_equal(type, 7);
  assert_int_equal(p.len, 5);
  /* A header announcing 100 bytes, then 10 of them, the sender still
   * connected. */
  uint32_t head[2] = {7, 100};
  char some[10] = {0};
  assert_int_equal(sl_send_all(sv[0], head, sizeof head, &err), SL_OK);
  assert_int_equal(sl_send_all(sv[0], some, sizeof some, &err), SL_OK);
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, -1, &err), SL_EIO);
  assert_non_null(strstr(err.message, "stopped in the middle of a message"));
  sl_error_clear(&err);
  sl_strbuf_free(&p);
  close(sv[0]);
  close(sv[1]);
}

/* The silence rule judges only what this side listened for: a node whose
 * frames wait unread (the coordinator was busy, descheduled, or held back
 * its rows) is not silent, however long ago its last frame was read; one
 * with nothing waiting is, and the connection is shut down. */
static void test_silence_only_while_listening(void **state) {
  (void)state;
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  sl_error err = {0};
  double long_ago = sl_clock_seconds() - 3 * SL_SILENCE_MS / 1000.0;
  /* Heard recently: fine, whatever is waiting. */
  assert_int_equal(sl_node_check_silence(sv[1], sl_clock_seconds(), &err),
                   SL_OK);
  /* A heartbeat sent while we were not reading. */
  assert_int_equal(
      sl_frame_send(sv[0], SL_FRAME_HEARTBEAT, NULL, 0, NULL, 0, &err), SL_OK);
  assert_int_equal(sl_node_check_silence(sv[1], long_ago, &err), SL_OK);
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, 10, &err), SL_OK);
  assert_int_equal(type, SL_FRAME_HEARTBEAT);
  /* Nothing waiting, and nothing heard for long: silent. */
  assert_int_equal(sl_node_check_silence(sv[1], long_ago, &err), SL_EIO);
  assert_non_null(strstr(err.message, "not even a heartbeat"));
  sl_error_clear(&err);
  /* ... and shut down: the next read sees the end at once. */
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, 1000, &err), SL_EIO);
  sl_error_clear(&err);
  sl_strbuf_free(&p);
  close(sv[0]);
  close(sv[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_silence_only_while_listening),
      cmocka_unit_test(test_query_round_trip),
      cmocka_unit_test(test_query_refused),
      cmocka_unit_test(test_xlisten),
      cmocka_unit_test(test_xaddr_lines),
      cmocka_unit_test(test_small_messages),
      cmocka_unit_test(test_rows_bounds),
      cmocka_unit_test(test_silence_within_a_frame),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
