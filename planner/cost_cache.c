/* cost_cache.c - the calibration of the cost model, kept per machine.
 *
 * Calibrating (cost_model.c) takes a few hundred milliseconds of timed
 * loops; doing it in every session would make the first EXPLAIN slow and
 * its numbers jitter from session to session.  The constants are measured
 * once and kept in a text file with the machine they belong to, so every
 * later session on this machine plans with the same numbers.  SET
 * 'sluice.calibration' = 'fresh' measures again (after a hardware or load
 * change) and replaces the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/planner/cost_model.h"

#define CACHE_VERSION 3 /* bump when the constants' meaning changes */

/* "<cpu model> x <online cpus>": calibrations from elsewhere do not
 * apply. */
static void machine_signature(char *out, size_t cap) {
  char model[256] = "unknown cpu";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0) {
        const char *v = strchr(line, ':');
        if (v) {
          v++;
          while (*v == ' ' || *v == '\t')
            v++;
          snprintf(model, sizeof model, "%s", v);
          model[strcspn(model, "\n")] = '\0';
        }
        break;
      }
    }
    fclose(f);
  }
  snprintf(out, cap, "%s x %ld", model, sysconf(_SC_NPROCESSORS_ONLN));
}

bool sl_cost_cache_path(char *buf, size_t cap) {
  const char *dir = getenv("SLUICE_CACHE_DIR");
  int n;
  if (dir && *dir) {
    n = snprintf(buf, cap, "%s/calibration", dir);
  } else if ((dir = getenv("XDG_CACHE_HOME")) && *dir) {
    n = snprintf(buf, cap, "%s/sluice/calibration", dir);
  } else if ((dir = getenv("HOME")) && *dir) {
    n = snprintf(buf, cap, "%s/.cache/sluice/calibration", dir);
  } else {
    return false;
  }
  return n > 0 && (size_t)n < cap;
}

typedef struct field {
  const char *name;
  size_t offset;
} field;

static const field FIELDS[] = {
    {"update_hot_ns", offsetof(sl_cost_constants, update_hot_ns)},
    {"update_cold_ns", offsetof(sl_cost_constants, update_cold_ns)},
    {"merge_hot_ns", offsetof(sl_cost_constants, merge_hot_ns)},
    {"merge_ns", offsetof(sl_cost_constants, merge_ns)},
    {"route_ns", offsetof(sl_cost_constants, route_ns)},
    {"ship_ns", offsetof(sl_cost_constants, ship_ns)},
    {"cache_groups", offsetof(sl_cost_constants, cache_groups)},
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

bool sl_cost_load(sl_cost_constants *k, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char sig[400], line[512];
  machine_signature(sig, sizeof sig);
  sl_cost_constants c = {0};
  bool version = false, machine = false, seen[NFIELDS] = {false};
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "version ", 8) == 0) {
      version = atoi(line + 8) == CACHE_VERSION;
    } else if (strncmp(line, "machine ", 8) == 0) {
      machine = strcmp(line + 8, sig) == 0;
    } else {
      for (size_t i = 0; i < NFIELDS; i++) {
        size_t n = strlen(FIELDS[i].name);
        if (strncmp(line, FIELDS[i].name, n) == 0 && line[n] == ' ') {
          char *end;
          double v = strtod(line + n + 1, &end);
          if (end != line + n + 1 && *end == '\0' && v > 0) {
            *(double *)((char *)&c + FIELDS[i].offset) = v;
            seen[i] = true;
          }
        }
      }
    }
  }
  fclose(f);
  if (!version || !machine)
    return false;
  for (size_t i = 0; i < NFIELDS; i++)
    if (!seen[i])
      return false;
  c.calibrated = true;
  *k = c;
  return true;
}

/* mkdir -p of path's directory. */
static int make_parent(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir)
    return 0;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int sl_cost_save(const sl_cost_constants *k, const char *path, sl_error *err) {
  if (make_parent(path) != 0)
    return sl_error_set(err, SL_EIO, "cannot create the directory of '%s': %s",
                        path, strerror(errno));
  /* Unique per process: sessions in parallel may save at once, and the
   * rename makes whichever finishes last the file's whole content. */
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return sl_error_set(err, SL_EIO, "cannot write '%s': %s", tmp,
                        strerror(errno));
  char sig[400];
  machine_signature(sig, sizeof sig);
  fprintf(f, "version %d\nmachine %s\n", CACHE_VERSION, sig);
  for (size_t i = 0; i < NFIELDS; i++)
    fprintf(f, "%s %.17g\n", FIELDS[i].name,
            *(const double *)((const char *)k + FIELDS[i].offset));
  bool ok = fflush(f) == 0;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return sl_error_set(err, SL_EIO, "cannot write '%s': %s", path,
                        strerror(e));
  }
  return SL_OK;
}

void sl_cost_calibrate_cached(sl_cost_constants *k, bool fresh) {
  char path[1024];
  bool have_path = sl_cost_cache_path(path, sizeof path);
  if (!fresh && have_path && sl_cost_load(k, path))
    return;
  sl_cost_calibrate(k);
  if (have_path && k->calibrated) { /* not a measurement cut short */
    sl_error err = {0};
    sl_cost_save(k, path, &err); /* a read-only home only costs time */
    sl_error_clear(&err);
  }
}
