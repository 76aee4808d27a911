/* bind_helpers.h - shared by the binder, catalog and EXPLAIN unit tests:
 * the NEXMark DDL and helpers that parse + bind statements the way the
 * session does (one statement at a time, new tables added to the catalog).
 */
#ifndef SLUICE_TEST_BIND_HELPERS_H
#define SLUICE_TEST_BIND_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice/binder/binder.h"
#include "sluice/catalog/catalog.h"
#include "sluice/explain/explain.h"
#include "sluice/parser/parser.h"

/* The NEXMark source table and views as published with Flink's NEXMark. */
static const char NEXMARK_DDL[] =
    "CREATE TABLE datagen (\n"
    "    event_type int,\n"
    "    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR,\n"
    "        creditCard VARCHAR, city VARCHAR, state VARCHAR,\n"
    "        dateTime TIMESTAMP(3), extra VARCHAR>,\n"
    "    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR,\n"
    "        initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3),\n"
    "        expires TIMESTAMP(3), seller BIGINT, category BIGINT,\n"
    "        extra VARCHAR>,\n"
    "    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT,\n"
    "        channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3),\n"
    "        extra VARCHAR>,\n"
    "    dateTime AS\n"
    "        CASE\n"
    "            WHEN event_type = 0 THEN person.dateTime\n"
    "            WHEN event_type = 1 THEN auction.dateTime\n"
    "            ELSE bid.dateTime\n"
    "        END,\n"
    "    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND\n"
    ") WITH (\n"
    "    'connector' = 'nexmark',\n"
    "    'first-event.rate' = '10000000',\n"
    "    'events.num' = '100000000'\n"
    ");\n"
    "CREATE VIEW person AS\n"
    "SELECT person.id, person.name, person.emailAddress, person.creditCard,\n"
    "       person.city, person.state, dateTime, person.extra\n"
    "FROM datagen WHERE event_type = 0;\n"
    "CREATE VIEW auction AS\n"
    "SELECT auction.id, auction.itemName, auction.description,\n"
    "       auction.initialBid, auction.reserve, dateTime, auction.expires,\n"
    "       auction.seller, auction.category, auction.extra\n"
    "FROM datagen WHERE event_type = 1;\n"
    "CREATE VIEW bid AS\n"
    "SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url,\n"
    "       dateTime, bid.extra\n"
    "FROM datagen WHERE event_type = 2;\n";

/* One bound statement with everything it owns. */
typedef struct tbound {
  sl_arena arena;
  sl_bound_stmt *bs;
  sl_error err;
  int rc;
  char *text;
} tbound;

/* Parse and bind the single statement sql (first line 1). */
static inline int tbind(tbound *t, const sl_catalog *cat, const char *sql) {
  memset(t, 0, sizeof *t);
  sl_arena_init(&t->arena, 0);
  t->text = strdup(sql);
  sl_stmt *st = NULL;
  t->rc = sl_parse_one(&t->arena, t->text, strlen(t->text), 1, &st, &t->err);
  if (t->rc == SL_OK)
    t->rc = sl_bind(&t->arena, cat, st, t->text, 1, &t->bs, &t->err);
  return t->rc;
}

static inline void tbound_done(tbound *t) {
  if (t->bs)
    sl_bound_stmt_release(t->bs);
  sl_error_clear(&t->err);
  sl_arena_free(&t->arena);
  free(t->text);
}

/* Run a script: every statement is parsed and bound on its own; CREATE
 * statements add their table.  Returns the first error (err filled). */
static inline int trun_script(sl_catalog *cat, const char *sql, sl_error *err) {
  size_t len = strlen(sql), pos = 0;
  int line = 1;
  for (;;) {
    size_t skip = 0;
    size_t n = sl_sql_next_statement(sql + pos, len - pos, &skip);
    if (n == 0)
      return SL_OK;
    for (size_t i = pos; i < pos + skip; i++)
      line += sql[i] == '\n';
    char *text = strndup(sql + pos + skip, n - skip);
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_stmt *st = NULL;
    sl_bound_stmt *bs = NULL;
    int rc = sl_parse_one(&a, text, strlen(text), line, &st, err);
    if (rc == SL_OK)
      rc = sl_bind(&a, cat, st, text, line, &bs, err);
    if (rc == SL_OK && bs->new_table) {
      rc = sl_catalog_add(cat, bs->new_table, false, err);
      bs->new_table = NULL;
    }
    if (bs)
      sl_bound_stmt_release(bs);
    sl_arena_free(&a);
    free(text);
    if (rc)
      return rc;
    for (size_t i = pos + skip; i < pos + n; i++)
      line += sql[i] == '\n';
    pos += n;
  }
}

static inline sl_catalog *tnexmark_catalog(void) {
  sl_catalog *cat = sl_catalog_new();
  sl_error err = {0};
  if (trun_script(cat, NEXMARK_DDL, &err) != SL_OK) {
    fprintf(stderr, "NEXMark DDL failed: %s\n", err.message);
    sl_error_clear(&err);
    sl_catalog_free(cat);
    return NULL;
  }
  return cat;
}

/* The type of output column i of a bound query, as text (static buffer). */
static inline const char *tcoltype(const tbound *t, int i) {
  static char buf[256];
  const sl_bquery *q = t->bs->query;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_type_format(&b, q->cols[i].type);
  snprintf(buf, sizeof buf, "%s", sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return buf;
}

static inline char *tread_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  size_t got = fread(p, 1, (size_t)n, f);
  p[got] = '\0';
  fclose(f);
  return p;
}

#endif
