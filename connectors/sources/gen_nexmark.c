/* gen_nexmark.c - NEXMark person / auction / bid events, following the
 * NEXMark generator as Beam's and Flink's nexmark sources implement it.
 *
 * One table with an event_type column (0 person, 1 auction, 2 bid) and a
 * ROW column per event kind; the leaves of the other two ROWs are NULL
 * (see examples/nexmark/ddl.sql for the DDL).  Of every
 * person.proportion + auction.proportion + bid.proportion events (1 + 3 +
 * 46 = 50 by default) the first are persons, then auctions, then bids.
 *
 * Ids follow the generator's arithmetic: person and auction ids count up
 * from 1000 with the event number; an auction's seller is a hot seller
 * (ids multiple of 100) with probability 1 - 1/auction.hot-ratio.sellers,
 * else a recent person; a bid's auction is a hot auction with probability
 * 1 - 1/bid.hot-ratio.auctions, else one of the last 100 auctions (or a
 * few not yet created, as in NEXMark); bidders likewise.  Prices are
 * 100 * 10^(6u) cents.  Channels: 99% one of Google/Facebook/Baidu/Apple
 * with a fixed URL each, 1% "channel-N" (N < 10000).  extra pads each
 * event to about person.avg-size / auction.avg-size / bid.avg-size bytes.
 *
 * Event time: event i happens at 2015-07-15 00:00:00 UTC + i / rate
 * seconds, rate = 'first-event.rate' events per second (default 10M): no
 * out-of-order delays, so the three dateTime leaves never decrease, which
 * lets event_type filters be pushed here also for plans with a watermark
 * (nx_time_ordered).
 * Every value of event i depends only on (seed, i): strings are cut from
 * a per-seed pool of random letters, so nothing is formatted per event.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gen_common.h"
#include "generators.h"

enum {
  N_EVENT_TYPE,
  P_ID,
  P_NAME,
  P_EMAIL,
  P_CARD,
  P_CITY,
  P_STATE,
  P_TIME,
  P_EXTRA,
  A_ID,
  A_ITEM,
  A_DESC,
  A_INITIAL,
  A_RESERVE,
  A_TIME,
  A_EXPIRES,
  A_SELLER,
  A_CATEGORY,
  A_EXTRA,
  B_AUCTION,
  B_BIDDER,
  B_PRICE,
  B_CHANNEL,
  B_URL,
  B_TIME,
  B_EXTRA,
  N_NCOLS,
  /* salts of draws shared by two columns */
  S_CHANNEL = N_NCOLS,
  S_INITIAL,
};

static const gen_column nx_columns[] = {
    {"event_type", GEN_INT, "INT"},
    {"person.id", GEN_INT, "BIGINT"},
    {"person.name", GEN_STR, "VARCHAR"},
    {"person.emailAddress", GEN_STR, "VARCHAR"},
    {"person.creditCard", GEN_STR, "VARCHAR"},
    {"person.city", GEN_STR, "VARCHAR"},
    {"person.state", GEN_STR, "VARCHAR"},
    {"person.dateTime", GEN_TS, "TIMESTAMP(3)"},
    {"person.extra", GEN_STR, "VARCHAR"},
    {"auction.id", GEN_INT, "BIGINT"},
    {"auction.itemName", GEN_STR, "VARCHAR"},
    {"auction.description", GEN_STR, "VARCHAR"},
    {"auction.initialBid", GEN_INT, "BIGINT"},
    {"auction.reserve", GEN_INT, "BIGINT"},
    {"auction.dateTime", GEN_TS, "TIMESTAMP(3)"},
    {"auction.expires", GEN_TS, "TIMESTAMP(3)"},
    {"auction.seller", GEN_INT, "BIGINT"},
    {"auction.category", GEN_INT, "BIGINT"},
    {"auction.extra", GEN_STR, "VARCHAR"},
    {"bid.auction", GEN_INT, "BIGINT"},
    {"bid.bidder", GEN_INT, "BIGINT"},
    {"bid.price", GEN_INT, "BIGINT"},
    {"bid.channel", GEN_STR, "VARCHAR"},
    {"bid.url", GEN_STR, "VARCHAR"},
    {"bid.dateTime", GEN_TS, "TIMESTAMP(3)"},
    {"bid.extra", GEN_STR, "VARCHAR"},
};

/* The event kind whose ROW holds each column (-1: every event). */
static const int8_t nx_group[N_NCOLS] = {-1, 0, 0, 0, 0, 0, 0, 0, 0,
                                         1,  1, 1, 1, 1, 1, 1, 1, 1,
                                         1,  2, 2, 2, 2, 2, 2, 2};

static const char *const nx_options[] = {GEN_COMMON_OPTION_NAMES,
                                         "first-event.rate",
                                         "next-event.rate",
                                         "person.proportion",
                                         "auction.proportion",
                                         "bid.proportion",
                                         "person.avg-size",
                                         "auction.avg-size",
                                         "bid.avg-size",
                                         "bid.hot-ratio.auctions",
                                         "bid.hot-ratio.bidders",
                                         "auction.hot-ratio.sellers",
                                         NULL};

#define FIRST_PERSON_ID 1000
#define FIRST_AUCTION_ID 1000
#define FIRST_CATEGORY_ID 10
#define NUM_CATEGORIES 5
#define HOT_RATIO_IDS 100 /* hot sellers, auctions, bidders: ids % 100 */
#define NUM_ACTIVE_PEOPLE 1000
#define PERSON_ID_LEAD 10
#define NUM_IN_FLIGHT_AUCTIONS 100
#define AUCTION_ID_LEAD 10
#define NUM_CHANNELS 10000
#define POOL_SIZE 16384 /* > 1.2 * MAX_AVG_SIZE */
#define MAX_AVG_SIZE 10000

static const char *const first_names[] = {"Peter", "Paul",   "Luke",  "John",
                                          "Saul",  "Vicky",  "Kate",  "Julie",
                                          "Sarah", "Deiter", "Walter"};
static const char *const last_names[] = {"Shultz", "Abrams",  "Spencer",
                                         "White",  "Bartels", "Walton",
                                         "Smith",  "Jones",   "Noris"};
static const char *const us_states[] = {"AZ", "CA", "ID", "OR", "WA", "WY"};
static const char *const us_cities[] = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
static const char *const hot_channels[] = {"Google", "Facebook", "Baidu",
                                           "Apple"};
#define NFIRST 11
#define NLAST 9
#define NSTATES 6
#define NCITIES 10

typedef struct nx_config {
  gen_options common;
  int64_t rate; /* first-event.rate */
  int64_t pp, ap, bp, total;
  int64_t avg[3]; /* person, auction, bid */
  int64_t hot_auctions, hot_bidders, hot_sellers;
} nx_config;

typedef struct nx_state {
  nx_config c;
  char pool[POOL_SIZE]; /* random lowercase letters for strings */
  char names[NFIRST * NLAST][24];
  uint8_t name_len[NFIRST * NLAST];
  char hot_urls[4][96];
  uint8_t hot_url_len[4];
  unsigned kinds; /* bit k: generate events of kind k (pushdown) */
} nx_state;

/* Event i's kind: 0 person, 1 auction, 2 bid, by its place in the
 * proportions' cycle. */
static int kind_of(const nx_config *c, uint64_t i) {
  int64_t off = (int64_t)(i % (uint64_t)c->total);
  return off < c->pp ? 0 : off < c->pp + c->ap ? 1 : 2;
}

static int nx_int(const sl_table_def *t, const char *key, int64_t fallback,
                  int64_t lo, int64_t hi, int64_t *out, sl_error *err) {
  int rc = sl_option_int(t, key, fallback, out, err);
  if (rc == SL_OK && (*out < lo || *out > hi))
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': '%s' must be between %lld and %lld, not "
                        "%lld",
                        t->name, key, (long long)lo, (long long)hi,
                        (long long)*out);
  return rc;
}

static int nx_parse(const sl_table_def *t, nx_config *c, sl_error *err) {
  int rc = gen_check_option_names(t, "nexmark", nx_options, NULL, err);
  int64_t next_rate;
  if (rc == SL_OK)
    rc = gen_parse_common(t, 0, &c->common, err);
  if (rc == SL_OK)
    rc = nx_int(t, "first-event.rate", 10000000, 1, INT64_C(1) << 40, &c->rate,
                err);
  if (rc == SL_OK)
    rc = nx_int(t, "next-event.rate", c->rate, 1, INT64_C(1) << 40, &next_rate,
                err);
  if (rc == SL_OK)
    rc = nx_int(t, "person.proportion", 1, 1, 1000000, &c->pp, err);
  if (rc == SL_OK)
    rc = nx_int(t, "auction.proportion", 3, 1, 1000000, &c->ap, err);
  if (rc == SL_OK)
    rc = nx_int(t, "bid.proportion", 46, 0, 1000000, &c->bp, err);
  if (rc == SL_OK)
    rc = nx_int(t, "person.avg-size", 200, 1, MAX_AVG_SIZE, &c->avg[0], err);
  if (rc == SL_OK)
    rc = nx_int(t, "auction.avg-size", 500, 1, MAX_AVG_SIZE, &c->avg[1], err);
  if (rc == SL_OK)
    rc = nx_int(t, "bid.avg-size", 100, 1, MAX_AVG_SIZE, &c->avg[2], err);
  if (rc == SL_OK)
    rc = nx_int(t, "bid.hot-ratio.auctions", 2, 1, 1000000, &c->hot_auctions,
                err);
  if (rc == SL_OK)
    rc =
        nx_int(t, "bid.hot-ratio.bidders", 4, 1, 1000000, &c->hot_bidders, err);
  if (rc == SL_OK)
    rc = nx_int(t, "auction.hot-ratio.sellers", 4, 1, 1000000, &c->hot_sellers,
                err);
  if (rc != SL_OK)
    return rc;
  if (next_rate != c->rate)
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "table '%s': not supported yet: a 'next-event.rate' "
                        "(%lld) different from 'first-event.rate' (%lld); "
                        "event time advances at one constant rate",
                        t->name, (long long)next_rate, (long long)c->rate);
  c->total = c->pp + c->ap + c->bp;
  return gen_check_pregenerate(t, &c->common, err);
}

static int nx_validate(const sl_table_def *t, sl_error *err) {
  nx_config c;
  int rc = nx_parse(t, &c, err);
  if (rc == SL_OK)
    rc = gen_check_columns(t, "nexmark", nx_columns, N_NCOLS, err);
  return rc;
}

/* ---- NEXMark's id arithmetic (0-based ids before the FIRST_* offset) ---- */

static int64_t last_person(const nx_config *c, int64_t i) {
  int64_t epoch = i / c->total, offset = i % c->total;
  if (offset >= c->pp)
    offset = c->pp - 1;
  return epoch * c->pp + offset;
}

static int64_t last_auction(const nx_config *c, int64_t i) {
  int64_t epoch = i / c->total, offset = i % c->total;
  if (offset < c->pp) {
    epoch--;
    offset = c->ap - 1;
  } else if (offset >= c->pp + c->ap) {
    offset = c->ap - 1;
  } else {
    offset -= c->pp;
  }
  return epoch * c->ap + offset;
}

/* A recent person: one of the last NUM_ACTIVE_PEOPLE, or a few ahead. */
static int64_t next_person(const nx_config *c, int64_t i, gen_rng *r) {
  int64_t people = last_person(c, i) + 1;
  int64_t active = people < NUM_ACTIVE_PEOPLE ? people : NUM_ACTIVE_PEOPLE;
  return people - active +
         (int64_t)gen_below(gen_rng_next(r),
                            (uint64_t)(active + PERSON_ID_LEAD));
}

static int64_t next_auction(const nx_config *c, int64_t i, gen_rng *r) {
  int64_t max = last_auction(c, i);
  int64_t min =
      max - NUM_IN_FLIGHT_AUCTIONS > 0 ? max - NUM_IN_FLIGHT_AUCTIONS : 0;
  return min + (int64_t)gen_below(gen_rng_next(r),
                                  (uint64_t)(max - min + 1 + AUCTION_ID_LEAD));
}

static int64_t next_price(uint64_t x) {
  /* 10^(6u) * 100 cents: prices spread over six decades. */
  return llround(exp(gen_unit(x) * 6.0 * 2.302585092994046) * 100.0);
}

/* ---- strings ------------------------------------------------------------ */

/* len bytes of random letters for draw x. */
static const char *pool_at(const nx_state *s, uint64_t x, uint32_t len) {
  return s->pool + gen_below(x, POOL_SIZE - len);
}

/* NEXMark's nextString: 3 .. max-1 random letters. */
static void put_string(const nx_state *s, sl_buffer *b, uint8_t *row,
                       const sl_field *f, uint64_t x, uint32_t max) {
  uint32_t len = 3 + (uint32_t)gen_below(x, max - 3);
  gen_put_str(b, row, f, pool_at(s, gen_mix64(x), len), len);
}

/* NEXMark's nextExtra: pad an event of about `current` bytes to an average
 * of `avg`, +-20%. */
static void put_extra(const nx_state *s, sl_buffer *b, uint8_t *row,
                      const sl_field *f, uint64_t x, int64_t current,
                      int64_t avg) {
  int64_t want = avg - current;
  uint32_t len = 0;
  if (want > 0) {
    int64_t delta = (want * 2 + 5) / 10;
    len = (uint32_t)(want - delta);
    if (delta > 0)
      len += (uint32_t)gen_below(x, (uint64_t)(2 * delta));
  }
  gen_put_str(b, row, f, pool_at(s, gen_mix64(x), len), len);
}

static int base_url(const nx_state *s, char *out, gen_rng *r) {
  static const char head[] = "https://www.nexmark.com/";
  static const char tail[] = "item.htm?query=1";
  int n = (int)sizeof head - 1;
  memcpy(out, head, (size_t)n);
  for (int k = 0; k < 3; k++) {
    uint64_t x = gen_rng_next(r);
    uint32_t len = 3 + (uint32_t)gen_below(x, 3);
    memcpy(out + n, pool_at(s, gen_mix64(x), len), len);
    n += (int)len;
    out[n++] = '/';
  }
  memcpy(out + n, tail, sizeof tail - 1);
  return n + (int)sizeof tail - 1;
}

static uint32_t bit_reverse32(uint32_t v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  v = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
  return (v >> 16) | (v << 16);
}

/* Channel and URL of a bid come from one draw, so they agree. */
static void put_channel(const nx_state *s, sl_buffer *b, uint8_t *row,
                        const sl_field *f, uint64_t key, bool url) {
  gen_rng r = gen_rng_at(key, S_CHANNEL);
  if (gen_below(gen_rng_next(&r), 100) > 0) {
    uint64_t k = gen_below(gen_rng_next(&r), 4);
    if (url)
      gen_put_str(b, row, f, s->hot_urls[k], s->hot_url_len[k]);
    else
      gen_put_str(b, row, f, hot_channels[k],
                  (uint32_t)strlen(hot_channels[k]));
    return;
  }
  uint32_t number = (uint32_t)gen_below(gen_rng_next(&r), NUM_CHANNELS);
  char text[128];
  int n;
  if (url) {
    n = base_url(s, text, &r);
    memcpy(text + n, "&channel_id=", 12);
    n += 12;
    int32_t rev = (int32_t)bit_reverse32(number);
    n += gen_utoa(text + n, (uint64_t)(rev < 0 ? -(int64_t)rev : rev));
  } else {
    memcpy(text, "channel-", 8);
    n = 8 + gen_utoa(text + 8, number);
  }
  gen_put_str(b, row, f, text, (uint32_t)n);
}

/* ---- events ------------------------------------------------------------- */

/* Approximate sizes of an event without its extra, as NEXMark's
 * sizeInBytes counts them (fixed so that extra does not depend on other
 * columns' values). */
static const int64_t base_size[3] = {76, 120, 40};

static void nx_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                    uint8_t *row) {
  const nx_state *s = g->impl;
  const nx_config *c = &s->c;
  const sl_row_layout *l = g->layout;
  int kind = kind_of(c, i);
  int64_t ts = gen_time_of(&g->clock, i);
  uint64_t key = gen_event_key(g->seed, i);
  int64_t ei = (int64_t)i;
  for (int j = 0; j < l->nfields; j++) {
    int col = g->col[j];
    const sl_field *f = &l->fields[j];
    if (nx_group[col] >= 0 && nx_group[col] != kind) {
      sl_row_set_null(row, j, true);
      continue;
    }
    gen_rng r = gen_rng_at(key, (uint32_t)col);
    uint64_t x = gen_rng_next(&r);
    switch (col) {
    case N_EVENT_TYPE:
      gen_put_int(row, f, kind);
      break;
    case P_ID:
      gen_put_int(row, f, last_person(c, ei) + FIRST_PERSON_ID);
      break;
    case P_NAME: {
      uint64_t k = gen_below(x, NFIRST * NLAST);
      gen_put_str(buf, row, f, s->names[k], s->name_len[k]);
      break;
    }
    case P_EMAIL: {
      char text[24];
      uint32_t a = 3 + (uint32_t)gen_below(x, 4);
      uint32_t d = 3 + (uint32_t)gen_below(gen_rng_next(&r), 2);
      memcpy(text, pool_at(s, gen_rng_next(&r), a), a);
      text[a] = '@';
      memcpy(text + a + 1, pool_at(s, gen_rng_next(&r), d), d);
      memcpy(text + a + 1 + d, ".com", 4);
      gen_put_str(buf, row, f, text, a + d + 5);
      break;
    }
    case P_CARD: {
      char text[20];
      for (int k = 0; k < 4; k++) {
        uint64_t v = gen_below(gen_rng_next(&r), 10000);
        for (int d = 3; d >= 0; d--, v /= 10)
          text[k * 5 + d] = (char)('0' + v % 10);
        if (k < 3)
          text[k * 5 + 4] = ' ';
      }
      gen_put_str(buf, row, f, text, 19);
      break;
    }
    case P_CITY: {
      const char *city = us_cities[gen_below(x, NCITIES)];
      gen_put_str(buf, row, f, city, (uint32_t)strlen(city));
      break;
    }
    case P_STATE:
      gen_put_str(buf, row, f, us_states[gen_below(x, NSTATES)], 2);
      break;
    case P_TIME:
    case A_TIME:
    case B_TIME:
      gen_put_ts(row, f, ts);
      break;
    case P_EXTRA:
    case A_EXTRA:
    case B_EXTRA:
      put_extra(s, buf, row, f, x, base_size[kind], c->avg[kind]);
      break;
    case A_ID:
      gen_put_int(row, f, last_auction(c, ei) + FIRST_AUCTION_ID);
      break;
    case A_ITEM:
      put_string(s, buf, row, f, x, 20);
      break;
    case A_DESC:
      put_string(s, buf, row, f, x, 100);
      break;
    case A_INITIAL:
    case A_RESERVE: {
      gen_rng p = gen_rng_at(key, S_INITIAL);
      int64_t initial = next_price(gen_rng_next(&p));
      if (col == A_RESERVE)
        initial += next_price(gen_rng_next(&p));
      gen_put_int(row, f, initial);
      break;
    }
    case A_EXPIRES: {
      /* NEXMark: an auction lasts on average until the auction
       * NUM_IN_FLIGHT_AUCTIONS ahead is created. */
      uint64_t ahead = (uint64_t)(NUM_IN_FLIGHT_AUCTIONS * c->total / c->ap);
      int64_t horizon_ms = (gen_time_of(&g->clock, i + ahead) - ts) / 1000;
      uint64_t span = horizon_ms * 2 > 1 ? (uint64_t)horizon_ms * 2 : 1;
      gen_put_ts(row, f, ts + (1 + (int64_t)gen_below(x, span)) * 1000);
      break;
    }
    case A_SELLER: {
      int64_t seller;
      if (gen_below(x, (uint64_t)c->hot_sellers) > 0)
        seller = last_person(c, ei) / HOT_RATIO_IDS * HOT_RATIO_IDS;
      else
        seller = next_person(c, ei, &r);
      gen_put_int(row, f, seller + FIRST_PERSON_ID);
      break;
    }
    case A_CATEGORY:
      gen_put_int(row, f,
                  FIRST_CATEGORY_ID + (int64_t)gen_below(x, NUM_CATEGORIES));
      break;
    case B_AUCTION: {
      int64_t a;
      if (gen_below(x, (uint64_t)c->hot_auctions) > 0)
        a = last_auction(c, ei) / HOT_RATIO_IDS * HOT_RATIO_IDS;
      else
        a = next_auction(c, ei, &r);
      gen_put_int(row, f, a + FIRST_AUCTION_ID);
      break;
    }
    case B_BIDDER: {
      int64_t p;
      if (gen_below(x, (uint64_t)c->hot_bidders) > 0)
        p = last_person(c, ei) / HOT_RATIO_IDS * HOT_RATIO_IDS + 1;
      else
        p = next_person(c, ei, &r);
      gen_put_int(row, f, p + FIRST_PERSON_ID);
      break;
    }
    case B_PRICE:
      gen_put_int(row, f, next_price(x));
      break;
    case B_CHANNEL:
    case B_URL:
      put_channel(s, buf, row, f, key, col == B_URL);
      break;
    }
  }
}

static void build_state(nx_state *s, uint64_t seed) {
  for (int k = 0; k < POOL_SIZE; k++)
    s->pool[k] = (char)('a' + gen_below(gen_rand(seed, 0x70000u + k), 26));
  for (int a = 0; a < NFIRST; a++)
    for (int b = 0; b < NLAST; b++) {
      int k = a * NLAST + b;
      int n = snprintf(s->names[k], sizeof s->names[k], "%s %s", first_names[a],
                       last_names[b]);
      s->name_len[k] = (uint8_t)n;
    }
  for (int k = 0; k < 4; k++) {
    gen_rng r = gen_rng_at(seed, 0x80000u + (uint32_t)k);
    s->hot_url_len[k] = (uint8_t)base_url(s, s->hot_urls[k], &r);
  }
}

/* Pushdown of `event_type = n` / `IN (...)`: the kind of event i follows
 * from i alone, so the events of other kinds are never generated. */
static bool nx_can_filter(const sl_table_def *t, const char *leaf_name) {
  (void)t;
  return strcmp(leaf_name, "event_type") == 0;
}

/* The event-time guarantee (connector.h, time_ordered): person.dateTime,
 * auction.dateTime and bid.dateTime of event i all hold its event time
 * (gen_time_of: non-decreasing in i, and an instance produces its events
 * in increasing i, whatever it skips), so taken together they never
 * decrease -- when they are declared with one precision (gen_put_ts
 * truncates each to its own).  Not for a paced table ('events.rate'):
 * there skipped events take their wall-clock turn, so kept rows come
 * rarer than today's rows and an idle-timeout could call the worker idle;
 * nor is pushing worth anything there. */
static bool nx_time_ordered(const sl_table_def *t, const char *leaf_name) {
  static const char *const times[] = {"person.dateTime", "auction.dateTime",
                                      "bid.dateTime"};
  bool is_time = false;
  for (int k = 0; k < 3; k++)
    is_time |= strcmp(leaf_name, times[k]) == 0;
  nx_config c;
  sl_error err = {0};
  if (!is_time || nx_parse(t, &c, &err) != SL_OK || c.common.rate > 0)
    return false;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns lc;
  sl_table_leaf_columns(&a, t, &lc);
  int precision = -2; /* none seen yet */
  bool same = true;
  for (int i = 0; i < lc.n; i++)
    for (int k = 0; k < 3; k++)
      if (strcmp(lc.names[i], times[k]) == 0) {
        same &= precision == -2 || lc.types[i]->precision == precision;
        precision = lc.types[i]->precision;
      }
  sl_arena_free(&a);
  return same;
}

static bool nx_keep(const gen_source *g, uint64_t i) {
  const nx_state *s = g->impl;
  return (s->kinds >> kind_of(&s->c, i)) & 1;
}

static int nx_open(const sl_source_spec *spec, sl_source **out, sl_error *err) {
  nx_config c;
  gen_source *g;
  int rc = nx_parse(spec->table, &c, err);
  if (rc == SL_OK)
    rc = gen_begin(&g, spec, "nexmark", nx_columns, N_NCOLS, &c.common, err);
  if (rc != SL_OK)
    return rc;
  nx_state *s = SL_ANEW(&g->arena, nx_state);
  s->c = c;
  build_state(s, c.common.seed);
  g->impl = s;
  g->fill = nx_fill;
  s->kinds = 7; /* person, auction, bid */
  for (int k = 0; k < spec->nfilters; k++) {
    /* Only event_type is ever pushed here (nx_can_filter). */
    unsigned keep = 0;
    for (int v = 0; v < spec->filters[k].nvalues; v++)
      if (spec->filters[k].values[v] >= 0 && spec->filters[k].values[v] <= 2)
        keep |= 1u << spec->filters[k].values[v];
    s->kinds &= keep;
    g->keep = nx_keep;
    if (spec->filters[k].rechecked) /* nx_time_ordered: time carriers */
      g->carry_every = SL_SOURCE_CARRY_EVERY;
  }
  g->clock.per_second = c.rate;
  int64_t most = c.avg[0];
  for (int k = 1; k < 3; k++)
    most = c.avg[k] > most ? c.avg[k] : most;
  /* extra is at most 1.2 * avg; the other strings need < 256 bytes. */
  g->max_heap = (uint32_t)(most + most / 5 + 256);
  rc = gen_ready(g, &c.common, err);
  *out = rc == SL_OK ? (sl_source *)g : NULL;
  return rc;
}

const sl_source_connector sl_source_nexmark = {
    .name = "nexmark",
    .description = "NEXMark person/auction/bid events (the Flink nexmark "
                   "table with ROW columns)",
    .validate = nx_validate,
    .open = nx_open,
    .can_filter = nx_can_filter,
    .time_ordered = nx_time_ordered,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
