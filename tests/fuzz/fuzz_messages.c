/* fuzz_messages.c - libFuzzer target: arbitrary bytes arriving on a
 * cluster connection (node_frames.h), read as frames and handed to the decoder of
 * each frame's type (node_messages.h), then used as the node or the
 * coordinator would use them.
 *
 * The bytes go into one end of a socket pair; sl_frame_recv reads frames
 * from the other until the bytes end, so the framing (lengths, the 1 GiB
 * limit) is fuzzed too.  Per frame:
 *   QUERY        decoded, its XADDR lines parsed for each kind, re-encoded
 *                and decoded again: the same message (round trip)
 *   XLISTEN      decoded; re-encoded: the same bytes
 *   XADDR        parsed as every kind of line
 *   HELLO, ERROR, WM, STAGE_WM, STAGE_HELLO, DONE   decoded, every byte
 *                they point at read
 *   ROWS, STAGE_ROWS  decoded into a buffer of a layout with long strings,
 *                every string's bytes read (a string outside the buffer
 *                is an ASan report)
 *   PARTIAL      decoded and merged into a group table with every kind of
 *                state (long strings in keys and MIN/MAX, DISTINCT sets,
 *                DECIMAL sums), every group finalized
 * What must hold: no crash, leak or out-of-bounds access, and a failing
 * decode always says why.
 *
 * `fuzz_messages_replay --seeds DIR` (replay_main.c) writes one valid
 * frame of each type there: the fuzzer's starting corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../cluster/node_link.h"
#include "sluice/net/node_frames.h"
#include "sluice/net/node_messages.h"
#include "sluice/state/aggregate.h"

/* ---- the shapes messages are decoded into --------------------------------
 */

enum { F_K, F_NAME, F_DEC, F_X, NF };
enum { NA = 7 };

typedef struct shapes {
  sl_arena a;
  sl_row_layout *in;  /* k BIGINT, name STRING, d DECIMAL(10,2), x DOUBLE */
  sl_row_layout *key; /* name STRING, k BIGINT */
  sl_row_layout *out; /* the finalized aggregates */
  sl_agg_set set;
} shapes;

static shapes *the_shapes(void) {
  static shapes sh; /* built once per process: read-only afterwards */
  static bool made;
  if (made)
    return &sh;
  made = true;
  sl_arena_init(&sh.a, 0);
  const sl_type *t[NF] = {
      sl_type_new(&sh.a, SL_TYPE_BIGINT), sl_type_varchar(&sh.a, -1),
      sl_type_decimal(&sh.a, 10, 2), sl_type_new(&sh.a, SL_TYPE_DOUBLE)};
  sh.in = sl_row_layout_new(&sh.a, NF, NULL, t);
  const sl_type *kt[2] = {t[F_NAME], t[F_K]};
  sh.key = sl_row_layout_new(&sh.a, 2, NULL, kt);
  sl_type *count = sl_type_new(&sh.a, SL_TYPE_BIGINT);
  const sl_type *ot[NA] = {count, t[F_K], t[F_NAME],
                           count, t[F_K], sl_type_decimal(&sh.a, 38, 2),
                           t[F_X]};
  sh.out = sl_row_layout_new(&sh.a, NA, NULL, ot);
  sl_agg_desc d[NA] = {
      {.op = SL_AGG_COUNT_STAR, .in_field = -1, .filter_field = -1},
      {.op = SL_AGG_SUM, .in_field = F_K, .filter_field = -1},
      {.op = SL_AGG_MAX, .in_field = F_NAME, .filter_field = -1},
      {.op = SL_AGG_COUNT,
       .distinct = true,
       .in_field = F_NAME,
       .filter_field = -1},
      {.op = SL_AGG_SUM, .distinct = true, .in_field = F_K, .filter_field = -1},
      {.op = SL_AGG_SUM, .in_field = F_DEC, .filter_field = -1},
      {.op = SL_AGG_AVG, .in_field = F_X, .filter_field = -1},
  };
  for (int i = 0; i < NA; i++)
    d[i].out_type = ot[i];
  sl_error err = {0};
  if (sl_agg_set_init(&sh.a, &sh.set, NA, d, sh.in, &err) != SL_OK)
    abort();
  return &sh;
}

static void must_say_why(int rc, const sl_error *err) {
  if (rc != SL_OK && (!err->message || !err->message[0])) {
    fprintf(stderr, "fuzz_messages: a decode failed (%d) without a message\n",
            rc);
    abort();
  }
}

/* Read every byte of a string (ASan checks it is inside an allocation). */
static volatile unsigned sink_sum;
static void touch(const void *p, size_t n) {
  const unsigned char *c = p;
  unsigned s = 0;
  for (size_t i = 0; i < n; i++)
    s += c[i];
  sink_sum += s;
}

static void touch_strings(const sl_buffer *b) {
  const sl_row_layout *l = b->layout;
  for (uint32_t r = 0; r < b->nrows; r++)
    for (int f = 0; f < l->nfields; f++) {
      const uint8_t *row = sl_buffer_row(b, r);
      if (l->fields[f].ptype != SL_P_STR || sl_row_is_null(row, f))
        continue;
      const sl_str *s = (const sl_str *)(row + l->fields[f].offset);
      touch(sl_str_data(s), s->len);
    }
}

/* ---- per frame type ------------------------------------------------------
 */

static void on_query(const sl_strbuf *p) {
  sl_error err = {0};
  sl_query_msg m;
  int rc = sl_query_msg_decode(p->data, p->len, &m, &err);
  must_say_why(rc, &err);
  sl_error_clear(&err);
  if (rc != SL_OK)
    return;
  touch(m.sql, m.sql_len);
  static const char kinds[] = {0, 'L', 'S'};
  for (int k = 0; k < 3; k++) {
    int found;
    /* (Tables of up to 2048^2 cells are correct but slow to fuzz.) */
    int nodes = m.node_count < 64 ? m.node_count : 64;
    int n = kinds[k] == 0 ? nodes * 2 : nodes;
    char **addrs = sl_xaddr_parse(m.addrs, m.addrs_len, n, kinds[k], &found);
    sl_xaddr_free(addrs, n, kinds[k]);
  }
  /* The round trip: what the coordinator would send for m decodes to m. */
  sl_strbuf again = SL_STRBUF_INIT;
  sl_query_msg_encode(&m, &again);
  sl_strbuf_appendn(&again, m.sql, m.sql_len);
  sl_query_msg m2;
  if (sl_query_msg_decode(again.data, again.len, &m2, &err) != SL_OK ||
      m2.node_index != m.node_index || m2.node_count != m.node_count ||
      m2.strategy != m.strategy || m2.transport != m.transport ||
      m2.query_id != m.query_id || m2.leaf != m.leaf || m2.fed != m.fed ||
      m2.nfed != m.nfed || m2.join != m.join || m2.addrs_len != m.addrs_len ||
      m2.sql_len != m.sql_len || memcmp(m2.sql, m.sql, m.sql_len) != 0) {
    fprintf(stderr, "fuzz_messages: QUERY does not survive a round trip\n");
    abort();
  }
  sl_strbuf_free(&again);
  sl_error_clear(&err);
}

static void on_xlisten(const sl_strbuf *p) {
  sl_error err = {0};
  sl_xlisten_msg m;
  int rc = sl_xlisten_msg_decode(p->data, p->len, &m, &err);
  must_say_why(rc, &err);
  if (rc == SL_OK) {
    sl_strbuf again = SL_STRBUF_INIT;
    sl_xlisten_msg_encode(&m, &again);
    if (again.len != p->len || memcmp(again.data, p->data, p->len) != 0) {
      fprintf(stderr, "fuzz_messages: XLISTEN does not survive a round trip\n");
      abort();
    }
    sl_strbuf_free(&again);
  }
  sl_error_clear(&err);
}

static void on_rows(const sl_strbuf *p) {
  shapes *sh = the_shapes();
  sl_buffer b = {0};
  sl_error err = {0};
  int rc = sl_rows_msg_decode(p->data, p->len, sh->in, &b, &err);
  must_say_why(rc, &err);
  if (rc == SL_OK)
    touch_strings(&b);
  sl_buffer_free(&b);
  sl_error_clear(&err);
}

static void on_partial(const sl_strbuf *p) {
  shapes *sh = the_shapes();
  sl_error err = {0};
  int64_t start, end;
  const uint8_t *bytes;
  size_t n;
  int rc =
      sl_partial_msg_decode(p->data, p->len, &start, &end, &bytes, &n, &err);
  must_say_why(rc, &err);
  sl_error_clear(&err);
  if (rc != SL_OK)
    return;
  sl_group_table t;
  sl_group_table_init(&t, sh->key, &sh->set, 16);
  rc = sl_group_table_decode_merge(&t, bytes, n, &err);
  must_say_why(rc, &err);
  sl_error_clear(&err);
  if (rc == SL_OK) {
    /* What the coordinator does next: finalize every group. */
    sl_buffer out;
    sl_buffer_init(&out, sh->out, 1 << 16);
    for (uint32_t i = 0; i < t.cap; i++) {
      if (!sl_group_table_slot_used(&t, i))
        continue;
      sl_buffer_clear(&out);
      uint8_t *row = sl_buffer_append(&out);
      for (int g = 0; g < NA; g++) {
        rc = sl_agg_finalize(&sh->set, g, sl_group_table_states(&t, i), &out,
                             row, g, &err);
        must_say_why(rc < 0 ? rc : SL_OK, &err);
        sl_error_clear(&err);
      }
      touch_strings(&out);
    }
    sl_buffer_free(&out);
  }
  sl_group_table_free(&t);
}

static void on_frame(uint32_t type, const sl_strbuf *p) {
  sl_error err = {0};
  int rc = SL_OK;
  switch (type) {
  case SL_FRAME_QUERY:
    on_query(p);
    break;
  case SL_FRAME_XLISTEN:
    on_xlisten(p);
    break;
  case SL_FRAME_XADDR: {
    static const char kinds[] = {0, 'L', 'S'};
    for (int k = 0; k < 3; k++) {
      int found;
      char **addrs = sl_xaddr_parse(p->data, p->len, 4, kinds[k], &found);
      sl_xaddr_free(addrs, 4, kinds[k]);
    }
    break;
  }
  case SL_FRAME_HELLO: {
    int workers;
    bool rdma;
    char version[64], device[160];
    rc = sl_hello_msg_decode(p->data, p->len, &workers, version, sizeof version,
                             &rdma, device, sizeof device, &err);
    if (rc == SL_OK) {
      touch(device, strlen(device));
      touch(version, strlen(version));
    }
    break;
  }
  case SL_FRAME_ERROR: {
    int code, mlen;
    const char *msg;
    rc = sl_error_msg_decode(p->data, p->len, &code, &msg, &mlen, &err);
    if (rc == SL_OK) {
      /* What the coordinator does with it. */
      sl_error shown = {0};
      sl_error_set(&shown, code, "node 0: %.*s", mlen, msg);
      sl_error_clear(&shown);
    }
    break;
  }
  case SL_FRAME_WM:
  case SL_FRAME_STAGE_WM: {
    int64_t wm;
    rc = sl_wm_msg_decode(p->data, p->len, &wm, &err);
    break;
  }
  case SL_FRAME_STAGE_HELLO: {
    int leaf;
    rc = sl_stage_hello_decode(p->data, p->len, 2, &leaf, &err);
    break;
  }
  case SL_FRAME_DONE: {
    sl_query_stats st;
    rc = sl_stats_msg_decode(p->data, p->len, &st, &err);
    if (rc == SL_OK)
      touch(st.jit_status, strlen(st.jit_status));
    break;
  }
  case SL_FRAME_ROWS:
  case SL_FRAME_STAGE_ROWS:
  case SL_FRAME_LATE_ROWS:
    on_rows(p);
    break;
  case SL_FRAME_PARTIAL:
    on_partial(p);
    break;
  default: /* ignored, as the node and the coordinator ignore them */
    break;
  }
  must_say_why(rc, &err);
  sl_error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A socket holds ~200 KiB unread: larger inputs are not interesting and
   * would block the write (tests/fuzz.sh passes -max_len=65536). */
  if (size > 131072)
    return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    abort();
  sl_error err = {0};
  if (size && sl_send_all(sv[0], data, size, &err) != SL_OK)
    abort();
  shutdown(sv[0], SHUT_WR);
  sl_strbuf p = SL_STRBUF_INIT;
  for (;;) {
    uint32_t type;
    int rc = sl_frame_recv(sv[1], &type, &p, 0, &err);
    if (rc != SL_OK) {
      must_say_why(rc == SL_FRAME_TIMEOUT ? SL_OK : rc, &err);
      break;
    }
    on_frame(type, &p);
  }
  sl_error_clear(&err);
  sl_strbuf_free(&p);
  close(sv[0]);
  close(sv[1]);
  return 0;
}

/* ---- seeds ----------------------------------------------------------------
 */

static void frame(sl_strbuf *out, uint32_t type, const void *p, size_t n) {
  uint32_t h[2] = {type, (uint32_t)n};
  sl_strbuf_appendn(out, (const char *)h, sizeof h);
  sl_strbuf_appendn(out, p, n);
}

static int write_seed(const char *dir, const char *name, const sl_strbuf *b) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  fwrite(b->data, 1, b->len, f);
  return fclose(f);
}

/* Rows of the input layout with short and long strings and NULLs. */
static void seed_rows(sl_strbuf *payload) {
  shapes *sh = the_shapes();
  sl_buffer b;
  sl_buffer_init(&b, sh->in, 4096);
  static const char *names[] = {"a", "a-name-longer-than-inline", "bb"};
  for (int i = 0; i < 6; i++) {
    uint8_t *row = sl_buffer_append(&b);
    SL_FIELD(row, sh->in, F_K, int64_t) = i * 7;
    const char *n = names[i % 3];
    sl_buffer_put_str(&b, &SL_FIELD(row, sh->in, F_NAME, sl_str), n,
                      (uint32_t)strlen(n));
    sl_row_set_null(row, F_NAME, i == 4);
    SL_FIELD(row, sh->in, F_X, double) = i / 2.0;
  }
  sl_error err = {0};
  if (sl_node_encode_rows(&b, payload, &err) != SL_OK)
    abort();
  sl_buffer_free(&b);
}

/* A window's partial state: groups with long keys, DISTINCT sets. */
static void seed_partial(sl_strbuf *payload) {
  shapes *sh = the_shapes();
  sl_group_table t;
  sl_group_table_init(&t, sh->key, &sh->set, 16);
  sl_buffer b;
  sl_buffer_init(&b, sh->in, 4096);
  sl_error err = {0};
  static const char *names[] = {"x", "a-group-name-longer-than-inline"};
  for (int i = 0; i < 8; i++) {
    sl_buffer_clear(&b);
    uint8_t *row = sl_buffer_append(&b);
    SL_FIELD(row, sh->in, F_K, int64_t) = i % 3;
    const char *n = names[i % 2];
    sl_buffer_put_str(&b, &SL_FIELD(row, sh->in, F_NAME, sl_str), n,
                      (uint32_t)strlen(n));
    SL_FIELD(row, sh->in, F_DEC, int64_t) = i * 125;
    uint8_t key[64] = {0};
    sl_str gs =
        sl_str_make(names[(i / 2) % 2], (uint32_t)strlen(names[(i / 2) % 2]));
    memcpy(key + sh->key->fields[0].offset, &gs, sizeof gs);
    SL_FIELD(key, sh->key, 1, int64_t) = i % 2;
    uint8_t *st = sl_group_table_upsert(&t, sl_key_hash(sh->key, key), key);
    if (sl_agg_update(&sh->set, st, row, &t.arena, &err) != SL_OK)
      abort();
  }
  int64_t se[2] = {0, 5000};
  sl_strbuf_appendn(payload, (const char *)se, sizeof se);
  sl_group_table_encode(&t, payload);
  sl_buffer_free(&b);
  sl_group_table_free(&t);
}

int fuzz_write_seeds(const char *dir);
int fuzz_write_seeds(const char *dir) {
  sl_strbuf all = SL_STRBUF_INIT, one = SL_STRBUF_INIT, p = SL_STRBUF_INIT;
  int rc = 0;
#define SEED(name, type)                                                       \
  do {                                                                         \
    sl_strbuf_reset(&one);                                                     \
    frame(&one, type, p.data, p.len);                                          \
    rc |= write_seed(dir, name, &one);                                         \
    sl_strbuf_appendn(&all, one.data, one.len);                                \
    sl_strbuf_reset(&p);                                                       \
  } while (0)
  const char *xaddr = "0 1 127.0.0.1:4000\nL 1 0 127.0.0.1:4001\n"
                      "S 1 127.0.0.1:4002\n";
  sl_query_msg q = {.node_index = 1,
                    .node_count = 2,
                    .strategy = 1,
                    .transport = SL_XPORT_TCP,
                    .query_id = 77,
                    .leaf = 0,
                    .fed = 1,
                    .nfed = 2,
                    .join = 4,
                    .addrs = xaddr,
                    .addrs_len = strlen(xaddr)};
  sl_query_msg_encode(&q, &p);
  sl_strbuf_append(&p, "SELECT COUNT(*) FROM t");
  SEED("query", SL_FRAME_QUERY);
  sl_xlisten_msg x = {1, 3, 2, SL_XPORT_TCP};
  sl_xlisten_msg_encode(&x, &p);
  SEED("xlisten", SL_FRAME_XLISTEN);
  sl_strbuf_append(&p, xaddr);
  SEED("xaddr", SL_FRAME_XADDR);
  uint32_t workers = 2;
  sl_strbuf_appendn(&p, (const char *)&workers, sizeof workers);
  sl_strbuf_append(&p, "0.1.0\nrdma rxe0 10.0.2.15 1 Ethernet");
  SEED("hello", SL_FRAME_HELLO);
  int32_t code = SL_EBIND;
  sl_strbuf_appendn(&p, (const char *)&code, sizeof code);
  sl_strbuf_append(&p, "column 'x' not found");
  SEED("error", SL_FRAME_ERROR);
  int64_t wm = 123456;
  sl_strbuf_appendn(&p, (const char *)&wm, sizeof wm);
  SEED("wm", SL_FRAME_WM);
  uint32_t leaf = 1;
  sl_strbuf_appendn(&p, (const char *)&leaf, sizeof leaf);
  SEED("stage_hello", SL_FRAME_STAGE_HELLO);
  sl_query_stats st;
  memset(&st, 0, sizeof st);
  st.events = 1000;
  st.workers = 2;
  snprintf(st.jit_status, sizeof st.jit_status, "interpreted: sluice.jit off");
  sl_strbuf_appendn(&p, (const char *)&st, sizeof st);
  SEED("done", SL_FRAME_DONE);
  seed_rows(&p);
  SEED("rows", SL_FRAME_ROWS);
  seed_partial(&p);
  SEED("partial", SL_FRAME_PARTIAL);
  rc |= write_seed(dir, "all", &all);
#undef SEED
  sl_strbuf_free(&all);
  sl_strbuf_free(&one);
  sl_strbuf_free(&p);
  return rc;
}
