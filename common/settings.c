/* settings.c - the session's SET/RESET key-value settings.
 *
 * Known keys carry a validator so that `SET 'sluice.jit' = 'of'` fails at
 * once with the accepted values instead of surprising the user later.  The
 * store is a small sorted array: there are tens of keys, not thousands.
 */
#include "sluice/common/settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef enum value_kind {
  V_ANY,
  V_POSITIVE_INT, /* 1, 2, ... */
  V_BOOL,         /* on/off/true/false */
  V_ENUM,         /* one of a '|' separated list */
  V_SIZE,         /* 64mb, 64 MiB, 65536 */
  V_DURATION,     /* 0, 10 s, 1 min, 1h, 500 ms */
} value_kind;

typedef struct known_setting {
  sl_setting_info info;
  value_kind kind;
  const char *choices; /* V_ENUM */
} known_setting;

/* NULL default = computed when the settings are created (see defaults()). */
static const known_setting KNOWN[] = {
    {{"execution.runtime-mode", "streaming",
      "streaming (Flink's name; Sluice runs streaming only, so 'batch' is "
      "refused rather than ignored)"},
     V_ENUM,
     "streaming"},
    {{"parallelism.default", NULL,
      "worker threads per node (default: one per core)"},
     V_POSITIVE_INT,
     NULL},
    {{"sluice.buffer-size", "64kb",
      "size of the record buffers that operators and channels move"},
     V_SIZE,
     NULL},
    {{"sluice.calibration", "cached",
      "cost-model constants: cached (measured once per machine, kept in "
      "~/.cache/sluice) or fresh (measured again now)"},
     V_ENUM,
     "cached|fresh"},
    {{"sluice.debug.exchange-delay-us", "0",
      "testing only: before each exchange slot is published, wait a random "
      "0..N microseconds (timing noise that must not change results)"},
     V_ANY,
     NULL},
    {{"sluice.debug.jit-fail", "off",
      "testing only: LLVM fails to compile every pipeline (it is given a "
      "pass it does not know), as a broken LLVM would"},
     V_BOOL,
     NULL},
    {{"sluice.dictionary-codes", "on",
      "read string columns whose source gives a dictionary of their values "
      "(YSB's ids and types) as integer codes in filters, join keys and "
      "group keys, turned back into strings where they leave the query "
      "(off: compare and hash the strings)"},
     V_BOOL,
     NULL},
    {{"sluice.epoch-size", "64mb",
      "input per node between two merges of shared state (late merge)"},
     V_SIZE,
     NULL},
    {{"sluice.jit", "on",
      "compile pipelines with LLVM: on (a pipeline LLVM fails on runs "
      "interpreted; EXPLAIN ANALYZE says why), off (interpreter), or "
      "require (a pipeline EXPLAIN marks compiled that LLVM fails on is an "
      "error)"},
     V_BOOL,
     "require"},
    {{"sluice.jit.dump", "none", "print generated code: none or ir"},
     V_ENUM,
     "none|ir"},
    {{"sluice.jit.passes", "default",
      "LLVM optimization of compiled pipelines: default, O0..O3, light, "
      "fast"},
     V_ENUM,
     "default|O0|O1|O2|O3|light|fast"},
    {{"sluice.jit.join-probe", "on",
      "probe a lookup join's table in the same compiled loop as the filter "
      "and the window state's inputs (off: two compiled loops, the probe in "
      "C between them)"},
     V_BOOL,
     NULL},
    {{"sluice.jit.state-update", "on",
      "compile the state update of window aggregates into the loop (off: "
      "the compiled loop hands each record to C)"},
     V_BOOL,
     NULL},
    {{"sluice.late-records", "drop",
      "what happens to records later than the watermark: drop (counted; "
      "EXPLAIN ANALYZE shows how many) or side-output (written whole to "
      "the table named by 'sluice.late-records.table')"},
     V_ENUM,
     "drop|side-output"},
    {{"sluice.late-records.table", "",
      "with 'sluice.late-records' = 'side-output': the sink table late "
      "records go to; its columns are the stream table's physical columns"},
     V_ANY,
     NULL},
    {{"sluice.memory-limit", "0",
      "bound on the memory a query uses on each host, summed over its "
      "processes there (0: half the cgroup's memory limit, or of the RAM)"},
     V_SIZE,
     NULL},
    {{"sluice.late-merge", "leaders",
      "where late merge across nodes merges partial state: leaders (node k "
      "leads partition k of the keys) or coordinator (the shell merges)"},
     V_ENUM,
     "leaders|coordinator"},
    {{"sluice.join-strategy", "auto",
      "how a multi-stage query's join meets on several nodes: auto, "
      "single (the stages on the coordinator), broadcast (the smaller "
      "side to every node), repartition (a side grouped by the join key "
      "stays at its partition leaders, the other's rows go to them), "
      "late-merge (both sides grouped by the join key, finished at the "
      "same leaders)"},
     V_ENUM,
     "auto|single|broadcast|repartition|late-merge"},
    {{"sluice.nodes", "1", "node processes a query runs on"},
     V_POSITIVE_INT,
     NULL},
    {{"sluice.strategy", "auto",
      "distribution of stateful operators: auto, late-merge, repartition, "
      "broadcast"},
     V_ENUM,
     "auto|late-merge|repartition|broadcast"},
    {{"sluice.transport", "auto",
      "channel transport between nodes: auto, verbs, shm, tcp"},
     V_ENUM,
     "auto|verbs|shm|tcp"},
    {{"sql-client.execution.result-mode", "table",
      "how the shell shows updating results: table, changelog, tableau"},
     V_ENUM,
     "table|changelog|tableau"},
    {{"table.exec.mini-batch.allow-latency", "200 ms",
      "updating queries (GROUP BY without a window): how long a worker "
      "gathers changes before they merge into the result and the changes "
      "go out (Sluice always batches updates)"},
     V_DURATION,
     NULL},
    {{"table.exec.mini-batch.size", "0",
      "updating queries: a worker also hands its changes over after this "
      "many input rows (0: only by time and 'sluice.epoch-size')"},
     V_SIZE,
     NULL},
    {{"table.exec.source.idle-timeout", "0",
      "a source worker that gets no record for this long is idle: its "
      "watermark moves on with the clock, so windows fire (0: never)"},
     V_DURATION,
     NULL},
    {{"table.exec.state.ttl", "0",
      "idle state is dropped after this long (0: never)"},
     V_DURATION,
     NULL},
};
#define NKNOWN ((int)(sizeof KNOWN / sizeof KNOWN[0]))

typedef struct entry {
  char *key;
  char *value;
} entry;

struct sl_settings {
  int n, cap;
  entry *entries; /* sorted by key */
  char parallelism_default[24];
};

static const known_setting *find_known(const char *key) {
  for (int i = 0; i < NKNOWN; i++)
    if (strcmp(KNOWN[i].info.key, key) == 0)
      return &KNOWN[i];
  return NULL;
}

static int find_entry(const sl_settings *s, const char *key, bool *found) {
  int lo = 0, hi = s->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int c = strcmp(s->entries[mid].key, key);
    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *found = false;
  return lo;
}

static char *xstrdup(const char *s) {
  char *p = strdup(s);
  if (!p)
    abort();
  return p;
}

static void put(sl_settings *s, const char *key, const char *value) {
  bool found;
  int i = find_entry(s, key, &found);
  if (found) {
    free(s->entries[i].value);
    s->entries[i].value = xstrdup(value);
    return;
  }
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 32;
    entry *e = realloc(s->entries, sizeof(entry) * (size_t)s->cap);
    if (!e)
      abort();
    s->entries = e;
  }
  memmove(&s->entries[i + 1], &s->entries[i],
          sizeof(entry) * (size_t)(s->n - i));
  s->entries[i].key = xstrdup(key);
  s->entries[i].value = xstrdup(value);
  s->n++;
}

static const char *default_of(const sl_settings *s, const known_setting *k) {
  if (k->info.default_value)
    return k->info.default_value;
  if (strcmp(k->info.key, "parallelism.default") == 0)
    return s->parallelism_default;
  return "";
}

sl_settings *sl_settings_new(void) {
  sl_settings *s = calloc(1, sizeof *s);
  if (!s)
    abort();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    cores = 1;
  snprintf(s->parallelism_default, sizeof s->parallelism_default, "%ld", cores);
  for (int i = 0; i < NKNOWN; i++)
    put(s, KNOWN[i].info.key, default_of(s, &KNOWN[i]));
  return s;
}

void sl_settings_free(sl_settings *s) {
  if (!s)
    return;
  for (int i = 0; i < s->n; i++) {
    free(s->entries[i].key);
    free(s->entries[i].value);
  }
  free(s->entries);
  free(s);
}

static bool parse_bool(const char *v, bool *out) {
  if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcmp(v, "1")) {
    *out = true;
    return true;
  }
  if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcmp(v, "0")) {
    *out = false;
    return true;
  }
  return false;
}

/* "<number> [unit]" with the unit matched against a table of suffixes. */
typedef struct unit {
  const char *name;
  double factor;
} unit;

static bool parse_with_units(const char *v, const unit *units, double *out) {
  errno = 0;
  char *end;
  double x = strtod(v, &end);
  if (end == v || errno || x < 0)
    return false;
  while (isspace((unsigned char)*end))
    end++;
  if (*end == '\0') {
    *out = x;
    return true;
  }
  for (const unit *u = units; u->name; u++) {
    if (strcasecmp(end, u->name) == 0) {
      *out = x * u->factor;
      return true;
    }
  }
  return false;
}

static const unit SIZE_UNITS[] = {{"b", 1},
                                  {"kb", 1024},
                                  {"k", 1024},
                                  {"kib", 1024},
                                  {"mb", 1048576.0},
                                  {"m", 1048576.0},
                                  {"mib", 1048576.0},
                                  {"gb", 1073741824.0},
                                  {"g", 1073741824.0},
                                  {"gib", 1073741824.0},
                                  {NULL, 0}};

static const unit DURATION_UNITS[] = {
    {"ms", 0.001},  {"s", 1},        {"sec", 1},      {"second", 1},
    {"seconds", 1}, {"min", 60},     {"minute", 60},  {"minutes", 60},
    {"h", 3600},    {"hour", 3600},  {"hours", 3600}, {"d", 86400},
    {"day", 86400}, {"days", 86400}, {NULL, 0}};

bool sl_parse_size(const char *text, double *bytes) {
  return parse_with_units(text, SIZE_UNITS, bytes);
}

bool sl_parse_duration(const char *text, double bare_unit, double *seconds) {
  if (!parse_with_units(text, DURATION_UNITS, seconds))
    return false;
  char *end;
  strtod(text, &end);
  while (isspace((unsigned char)*end))
    end++;
  if (!*end) /* no unit */
    *seconds *= bare_unit;
  return true;
}

static bool enum_has(const char *choices, const char *v) {
  size_t n = strlen(v);
  const char *p = choices;
  while (*p) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncasecmp(p, v, n) == 0)
      return true;
    if (!bar)
      break;
    p = bar + 1;
  }
  return false;
}

static int validate(const known_setting *k, const char *v, sl_error *err) {
  double d;
  bool b;
  switch (k->kind) {
  case V_ANY:
    return SL_OK;
  case V_POSITIVE_INT: {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < 1 || x > 4096)
      return sl_error_set(err, SL_EINVAL,
                          "invalid value '%s' for '%s': expected a whole "
                          "number from 1 to 4096",
                          v, k->info.key);
    return SL_OK;
  }
  case V_BOOL: /* choices: further words it takes (sluice.jit's require) */
    if (!parse_bool(v, &b) && !(k->choices && enum_has(k->choices, v)))
      return sl_error_set(err, SL_EINVAL,
                          "invalid value '%s' for '%s': expected on or "
                          "off%s%s%s",
                          v, k->info.key, k->choices ? " (or " : "",
                          k->choices ? k->choices : "", k->choices ? ")" : "");
    return SL_OK;
  case V_ENUM:
    if (!enum_has(k->choices, v)) {
      sl_error_set(err, SL_EINVAL,
                   "invalid value '%s' for '%s': expected one of %s", v,
                   k->info.key, k->choices);
      return SL_EINVAL;
    }
    return SL_OK;
  case V_SIZE:
    if (!parse_with_units(v, SIZE_UNITS, &d))
      return sl_error_set(err, SL_EINVAL,
                          "invalid value '%s' for '%s': expected a size such "
                          "as 65536, 64kb or 64 MiB",
                          v, k->info.key);
    return SL_OK;
  case V_DURATION:
    if (!parse_with_units(v, DURATION_UNITS, &d))
      return sl_error_set(err, SL_EINVAL,
                          "invalid value '%s' for '%s': expected a duration "
                          "such as 0, 500 ms, 10 s, 1 min or 1 h",
                          v, k->info.key);
    return SL_OK;
  }
  return SL_OK;
}

int sl_settings_set(sl_settings *s, const char *key, const char *value,
                    bool *unknown, sl_error *err) {
  const known_setting *k = find_known(key);
  if (unknown)
    *unknown = (k == NULL);
  if (k) {
    int rc = validate(k, value, err);
    if (rc != SL_OK)
      return rc;
  }
  put(s, key, value);
  return SL_OK;
}

void sl_settings_reset(sl_settings *s, const char *key) {
  if (!key) {
    for (int i = 0; i < s->n; i++) {
      free(s->entries[i].key);
      free(s->entries[i].value);
    }
    s->n = 0;
    for (int i = 0; i < NKNOWN; i++)
      put(s, KNOWN[i].info.key, default_of(s, &KNOWN[i]));
    return;
  }
  const known_setting *k = find_known(key);
  if (k) {
    put(s, key, default_of(s, k));
    return;
  }
  bool found;
  int i = find_entry(s, key, &found);
  if (!found)
    return;
  free(s->entries[i].key);
  free(s->entries[i].value);
  memmove(&s->entries[i], &s->entries[i + 1],
          sizeof(entry) * (size_t)(s->n - i - 1));
  s->n--;
}

const char *sl_settings_get(const sl_settings *s, const char *key) {
  bool found;
  int i = find_entry(s, key, &found);
  return found ? s->entries[i].value : NULL;
}

bool sl_settings_is(const sl_settings *s, const char *key, const char *value) {
  const char *v = sl_settings_get(s, key);
  return v && strcmp(v, value) == 0;
}

int64_t sl_settings_get_int(const sl_settings *s, const char *key,
                            int64_t fallback) {
  const char *v = sl_settings_get(s, key);
  if (!v)
    return fallback;
  double d;
  if (parse_with_units(v, SIZE_UNITS, &d))
    return (int64_t)d;
  return fallback;
}

double sl_settings_get_seconds(const sl_settings *s, const char *key,
                               double fallback) {
  const char *v = sl_settings_get(s, key);
  double d;
  /* A bare number is milliseconds, as in Flink. */
  return v && sl_parse_duration(v, 0.001, &d) ? d : fallback;
}

bool sl_settings_get_bool(const sl_settings *s, const char *key,
                          bool fallback) {
  const char *v = sl_settings_get(s, key);
  bool b;
  if (v && parse_bool(v, &b))
    return b;
  return fallback;
}

int sl_settings_count(const sl_settings *s) {
  return s->n;
}

void sl_settings_at(const sl_settings *s, int i, const char **key,
                    const char **value) {
  *key = s->entries[i].key;
  *value = s->entries[i].value;
}

int sl_settings_known_count(void) {
  return NKNOWN;
}

const sl_setting_info *sl_settings_known_at(int i) {
  return (i >= 0 && i < NKNOWN) ? &KNOWN[i].info : NULL;
}
