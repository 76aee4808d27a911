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
 * once per process, so producing an event is a few hashes and copies; each
 * pool is also a dictionary, so the planner may read a column as its code
 * (the value's index in its pool).
 */
#include <pthread.h>
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

/* ---- the pools as dictionaries ----------------------------------------
 *
 * Every string column takes its values from one pool, so each pool is a
 * dictionary (row/dictionary.h) and a column's code is the value's index
 * in its pool: the same in every process, and shared by the events and
 * the campaigns table, so ad_id = ad_id joins on codes.  Built once per
 * process, in static storage, and read by every thread. */
enum { D_USER, D_PAGE, D_AD, D_AD_TYPE, D_EVENT_TYPE, D_IP, D_CAMPAIGN, ND };

typedef struct ysb_shared {
  ysb_pools pools;
  sl_str values[YSB_ADS + YSB_CAMPAIGNS + YSB_USERS + YSB_PAGES + YSB_IPS + 8];
  int32_t slots[4 * 4096];
  sl_dictionary dict[ND];
  bool ok[ND]; /* the pool's values are distinct (a dictionary) */
} ysb_shared;

static ysb_shared shared;
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

/* Pool d's values into shared.values from *nv, its slots from *ns. */
static void add_dictionary(int d, const char *name, const char *(*value)(int k),
                           int n, uint32_t *nv, uint32_t *ns) {
  sl_str *v = &shared.values[*nv];
  for (int k = 0; k < n; k++) {
    const char *s = value(k);
    uint32_t len = d == D_IP ? shared.pools.ip_len[k] : (uint32_t)strlen(s);
    v[k] = sl_str_make(s, len);
  }
  uint32_t nslots = sl_dictionary_slots_for((uint32_t)n);
  shared.ok[d] = sl_dictionary_init(&shared.dict[d], name, v, (uint32_t)n,
                                    &shared.slots[*ns], nslots);
  *nv += (uint32_t)n;
  *ns += nslots;
}

static const char *user_k(int k) {
  return shared.pools.users[k];
}
static const char *page_k(int k) {
  return shared.pools.pages[k];
}
static const char *ad_k(int k) {
  return shared.pools.ads[k];
}
static const char *ad_type_k(int k) {
  return ad_types[k];
}
static const char *event_type_k(int k) {
  return event_types[k];
}
static const char *ip_k(int k) {
  return shared.pools.ips[k];
}
static const char *campaign_k(int k) {
  return shared.pools.campaigns[k];
}

static void build_shared(void) {
  build_pools(&shared.pools);
  uint32_t nv = 0, ns = 0;
  add_dictionary(D_USER, "ysb user ids", user_k, YSB_USERS, &nv, &ns);
  add_dictionary(D_PAGE, "ysb page ids", page_k, YSB_PAGES, &nv, &ns);
  add_dictionary(D_AD, "ysb ad ids", ad_k, YSB_ADS, &nv, &ns);
  add_dictionary(D_AD_TYPE, "ysb ad types", ad_type_k, 5, &nv, &ns);
  add_dictionary(D_EVENT_TYPE, "ysb event types", event_type_k, 3, &nv, &ns);
  add_dictionary(D_IP, "ysb ip addresses", ip_k, YSB_IPS, &nv, &ns);
  add_dictionary(D_CAMPAIGN, "ysb campaign ids", campaign_k, YSB_CAMPAIGNS, &nv,
                 &ns);
}

static const ysb_shared *get_shared(void) {
  pthread_once(&shared_once, build_shared);
  return &shared;
}

static const sl_dictionary *ysb_dictionary(const sl_table_def *t,
                                           const char *leaf) {
  (void)t;
  static const char *const names[ND] = {
      "user_id",    "page_id",    "ad_id",      "ad_type",
      "event_type", "ip_address", "campaign_id"};
  const ysb_shared *sh = get_shared();
  for (int d = 0; d < ND; d++)
    if (strcmp(leaf, names[d]) == 0)
      return sh->ok[d] ? &sh->dict[d] : NULL;
  return NULL;
}

/* Store value k of a pool (bytes s, len) as the field wants it: its code
 * (col has GEN_CODE) or its string. */
static inline void put_value(sl_buffer *buf, uint8_t *row, const sl_field *f,
                             int col, uint64_t k, const char *s, uint32_t len) {
  if (col & GEN_CODE)
    gen_put_int(row, f, (int64_t)k);
  else
    gen_put_str(buf, row, f, s, len);
}

static void ysb_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                     uint8_t *row) {
  const ysb_pools *p = g->impl;
  const sl_row_layout *l = g->layout;
  uint64_t key = gen_event_key(g->seed, i);
  for (int j = 0; j < l->nfields; j++) {
    const sl_field *f = &l->fields[j];
    int col = g->col[j];
    /* the column's own draw: the same whether a string or a code */
    uint64_t r = gen_rand(key, (uint32_t)(col & ~GEN_CODE));
    uint64_t k;
    switch (col & ~GEN_CODE) {
    case Y_USER:
      k = gen_below(r, YSB_USERS);
      put_value(buf, row, f, col, k, p->users[k], UUID_LEN);
      break;
    case Y_PAGE:
      k = gen_below(r, YSB_PAGES);
      put_value(buf, row, f, col, k, p->pages[k], UUID_LEN);
      break;
    case Y_AD:
      k = gen_below(r, YSB_ADS);
      put_value(buf, row, f, col, k, p->ads[k], UUID_LEN);
      break;
    case Y_AD_TYPE:
      k = gen_below(r, 5);
      put_value(buf, row, f, col, k, ad_types[k],
                (uint32_t)strlen(ad_types[k]));
      break;
    case Y_EVENT_TYPE:
      k = gen_below(r, 3);
      put_value(buf, row, f, col, k, event_types[k],
                (uint32_t)strlen(event_types[k]));
      break;
    case Y_TIME:
      gen_put_ts(row, f, gen_time_of(&g->clock, i));
      break;
    case Y_IP:
      k = gen_below(r, YSB_IPS);
      put_value(buf, row, f, col, k, p->ips[k], p->ip_len[k]);
      break;
    }
  }
}

/* Row i of the campaigns table: ad i and its campaign. */
static void campaign_fill(const gen_source *g, uint64_t i, sl_buffer *buf,
                          uint8_t *row) {
  const ysb_pools *p = g->impl;
  const sl_row_layout *l = g->layout;
  for (int j = 0; j < l->nfields; j++) {
    int col = g->col[j];
    bool ad = campaign_ids[col & ~GEN_CODE] == Y_AD;
    uint64_t k = ad ? i : i / (YSB_ADS / YSB_CAMPAIGNS);
    put_value(buf, row, &l->fields[j], col, k, ad ? p->ads[k] : p->campaigns[k],
              UUID_LEN);
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
  g->impl = &get_shared()->pools; /* built once, read-only */
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
    .dictionary = ysb_dictionary,
    .next = gen_next,
    .lend = gen_lend,
    .stats = gen_stats,
    .close = gen_close,
};
