/* gen_ysb.c - the Yahoo Streaming Benchmark's ad events, and its
 * ad -> campaign table.
 *
 * Events ('ysb.table' = 'events', the default), as YSB's generator writes
 * them:
 *   user_id     STRING        one of 100 UUIDs
 *   page_id     STRING        one of 100 UUIDs
 *   ad_id       STRING        one of 1000 UUIDs (100 campaigns x 10 ads)
 *   ad_type     STRING        banner, modal, sponsored-search, mail, mobile
 *   event_type  STRING        view, click, purchase (uniform)
 *   event_time  TIMESTAMP(3)  event time, events.per-second apart (1M/s)
 *   ip_address  STRING        one of 1000 dotted quads
 *
 * Campaigns ('ysb.table' = 'campaigns'): the 1000 rows (ad_id STRING,
 * campaign_id STRING); ad k belongs to campaign k / 10.
 *
 * The ids are fixed (they do not depend on 'seed'), so an events table and
 * a campaigns table always join, whatever seeds they are given; 'seed'
 * changes which ad, user, ... each event picks.  Every string is built
 * once at open, so producing an event is a few hashes and copies.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gen_common.h"
#include "generators.h"

enum {
  Y_USER,
  Y_PAGE,
  Y_AD,
  Y_AD_TYPE,
  Y_EVENT_TYPE,
  Y_TIME,
  Y_IP,
  Y_CAMPAIGN, /* campaigns table only */
};

static const gen_column ysb_columns[] = {
    {"user_id", GEN_STR, "STRING"},    {"page_id", GEN_STR, "STRING"},
    {"ad_id", GEN_STR, "STRING"},      {"ad_type", GEN_STR, "STRING"},
    {"event_type", GEN_STR, "STRING"}, {"event_time", GEN_TS, "TIMESTAMP(3)"},
    {"ip_address", GEN_STR, "STRING"},
};
static const gen_column ysb_campaign_columns[] = {
    {"ad_id", GEN_STR, "STRING"},
    {"campaign_id", GEN_STR, "STRING"},
};
/* Column ids of the campaigns table, by position in ysb_campaign_columns. */
static const int campaign_ids[] = {Y_AD, Y_CAMPAIGN};

static const char *const ysb_options[] = {
    GEN_COMMON_OPTION_NAMES, "events.per-second", "ysb.table", NULL};

#define YSB_CAMPAIGNS 100
#define YSB_ADS 1000 /* 10 per campaign */
#define YSB_USERS 100
#define YSB_PAGES 100
#define YSB_IPS 1000
#define UUID_LEN 36

static const char *const ad_types[] = {"banner", "modal", "sponsored-search",
                                       "mail", "mobile"};
static const char *const event_types[] = {"view", "click", "purchase"};

typedef struct ysb_pools {
  char ads[YSB_ADS][UUID_LEN + 1];
  char campaigns[YSB_CAMPAIGNS][UUID_LEN + 1];
  char users[YSB_USERS][UUID_LEN + 1];
  char pages[YSB_PAGES][UUID_LEN + 1];
  char ips[YSB_IPS][16];
  uint8_t ip_len[YSB_IPS];
} ysb_pools;

typedef struct ysb_config {
  gen_options common;
  bool campaigns;
} ysb_config;

static int ysb_parse(const sl_table_def *t, ysb_config *c, sl_error *err) {
  int rc = gen_check_option_names(t, "ysb", ysb_options, NULL, err);
  if (rc == SL_OK)
    rc = gen_parse_common(t, 1000000, &c->common, err);
  if (rc != SL_OK)
    return rc;
  const char *table = sl_table_def_option(t, "ysb.table");
  if (table && strcasecmp(table, "events") != 0 &&
      strcasecmp(table, "campaigns") != 0)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'ysb.table' must be 'events' or "
                        "'campaigns', not '%s'",
                        t->name, table);
  c->campaigns = table && strcasecmp(table, "campaigns") == 0;
  if (c->campaigns)
    return SL_OK; /* a bounded table of 1000 rows */
  return gen_check_pregenerate(t, &c->common, err);
}

static int ysb_validate(const sl_table_def *t, sl_error *err) {
  ysb_config c;
  int rc = ysb_parse(t, &c, err);
  if (rc != SL_OK)
    return rc;
  if (c.campaigns)
    return gen_check_columns(t, "ysb", ysb_campaign_columns, 2, err);
  return gen_check_columns(t, "ysb", ysb_columns, 7, err);
}

/* A UUID-shaped string (8-4-4-4-12 hex digits) from 128 hashed bits. */
static void make_uuid(char *out, uint64_t salt) {
  uint64_t a = gen_mix64(salt * 2 + 1), b = gen_mix64(salt * 2 + 2);
  snprintf(out, UUID_LEN + 1, "%08x-%04x-%04x-%04x-%012llx",
           (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
           (unsigned)a & 0xffff, (unsigned)(b >> 48),
           (unsigned long long)(b & 0xffffffffffffull));
}

static void build_pools(ysb_pools *p) {
  /* Fixed salts per pool: ids never depend on the seed (see above). */
  for (int k = 0; k < YSB_ADS; k++)
    make_uuid(p->ads[k], 0x10000 + (uint64_t)k);
  for (int k = 0; k < YSB_CAMPAIGNS; k++)
    make_uuid(p->campaigns[k], 0x20000 + (uint64_t)k);
  for (int k = 0; k < YSB_USERS; k++)
    make_uuid(p->users[k], 0x30000 + (uint64_t)k);
  for (int k = 0; k < YSB_PAGES; k++)
    make_uuid(p->pages[k], 0x40000 + (uint64_t)k);
  for (int k = 0; k < YSB_IPS; k++) {
    uint64_t h = gen_mix64(0x50000 + (uint64_t)k);
    int n = snprintf(p->ips[k], sizeof p->ips[k], "%u.%u.%u.%u",
                     (unsigned)(h & 0xff), (unsigned)(h >> 8 & 0xff),
                     (unsigned)(h >> 16 & 0xff), (unsigned)(h >> 24 & 0xff));
    p->ip_len[k] = (uint8_t)n;
  }
}

static void ysb_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                     uint8_t *row) {
  const ysb_pools *p = g->impl;
  const sl_row_layout *l = g->layout;
  uint64_t key = gen_event_key(g->seed, i);
  for (int j = 0; j < l->nfields; j++) {
    const sl_field *f = &l->fields[j];
    int col = g->col[j];
    uint64_t r = gen_rand(key, (uint32_t)col);
    const char *s;
    switch (col) {
    case Y_USER:
      gen_put_str(buf, row, f, p->users[gen_below(r, YSB_USERS)], UUID_LEN);
      break;
    case Y_PAGE:
      gen_put_str(buf, row, f, p->pages[gen_below(r, YSB_PAGES)], UUID_LEN);
      break;
    case Y_AD:
      gen_put_str(buf, row, f, p->ads[gen_below(r, YSB_ADS)], UUID_LEN);
      break;
    case Y_AD_TYPE:
      s = ad_types[gen_below(r, 5)];
      gen_put_str(buf, row, f, s, (uint32_t)strlen(s));
      break;
    case Y_EVENT_TYPE:
      s = event_types[gen_below(r, 3)];
      gen_put_str(buf, row, f, s, (uint32_t)strlen(s));
      break;
    case Y_TIME:
      gen_put_ts(row, f, gen_time_of(&g->clock, i));
      break;
    case Y_IP: {
      uint64_t k = gen_below(r, YSB_IPS);
      gen_put_str(buf, row, f, p->ips[k], p->ip_len[k]);
      break;
    }
    }
  }
}

/* Row i of the campaigns table: ad i and its campaign. */
static void campaign_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                          uint8_t *row) {
  const ysb_pools *p = g->impl;
  const sl_row_layout *l = g->layout;
  for (int j = 0; j < l->nfields; j++) {
    const char *s = campaign_ids[g->col[j]] == Y_AD
                        ? p->ads[i]
                        : p->campaigns[i / (YSB_ADS / YSB_CAMPAIGNS)];
    gen_put_str(buf, row, &l->fields[j], s, UUID_LEN);
  }
}

static int ysb_open(const sl_source_spec *spec, sl_source **out,
                    sl_error *err) {
  ysb_config c;
  gen_source *g;
  int rc = ysb_parse(spec->table, &c, err);
  if (rc == SL_OK) {
    if (c.campaigns)
      rc = gen_begin(&g, spec, "ysb", ysb_campaign_columns, 2, &c.common, err);
    else
      rc = gen_begin(&g, spec, "ysb", ysb_columns, 7, &c.common, err);
  }
  if (rc != SL_OK)
    return rc;
  ysb_pools *p = SL_ANEW(&g->arena, ysb_pools);
  build_pools(p);
  g->impl = p;
  g->clock.per_second = c.common.per_second;
  /* Every string column may need a UUID's bytes. */
  g->max_heap = (uint32_t)g->layout->nfields * UUID_LEN;
  if (c.campaigns) {
    g->fill = campaign_fill;
    if (g->end > YSB_ADS)
      g->end = YSB_ADS; /* a bounded table of 1000 rows */
  } else {
    g->fill = ysb_fill;
  }
  rc = gen_ready(g, &c.common, err);
  *out = rc == SL_OK ? (sl_source *)g : NULL;
  return rc;
}

const sl_source_connector sl_source_ysb = {
    .name = "ysb",
    .description = "Yahoo Streaming Benchmark ad events ('ysb.table' = "
                   "'campaigns': the ad -> campaign table)",
    .validate = ysb_validate,
    .open = ysb_open,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
