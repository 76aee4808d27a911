/* host_memory.c - the memory this host gives a query's processes: the
 * cgroup's limit or the RAM, halved (host_memory.h). */
#include "sluice/state/host_memory.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* v1 reports "no limit" as a page-rounded LONG_MAX. */
#define NO_LIMIT (1ull << 62)

/* root + path, or false when it does not fit. */
static bool under(const char *root, const char *path, char *out, size_t n) {
  size_t r = strlen(root);
  while (r > 0 && root[r - 1] == '/')
    r--;
  int k = snprintf(out, n, "%.*s%s%s", (int)r, root, path[0] == '/' ? "" : "/",
                   path);
  return k > 0 && (size_t)k < n;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
        p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
}

static bool has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, word, n) == 0)
      return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

/* The mount of the cgroup hierarchy (v2: fstype cgroup2; v1: fstype cgroup
 * with the memory controller): its root within the hierarchy and its mount
 * point. */
static bool find_mount(const char *root, bool v2, char *mroot, char *mpoint,
                       size_t n) {
  char path[4096], line[4096];
  if (!under(root, "/proc/self/mountinfo", path, sizeof path))
    return false;
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC SUPER */
    char *save = NULL, *tok[5] = {NULL};
    char *p = strtok_r(line, " \n", &save);
    for (int i = 0; i < 5 && p; i++, p = strtok_r(NULL, " \n", &save))
      tok[i] = p;
    while (p && strcmp(p, "-") != 0)
      p = strtok_r(NULL, " \n", &save);
    char *type = p ? strtok_r(NULL, " \n", &save) : NULL;
    char *src = type ? strtok_r(NULL, " \n", &save) : NULL;
    char *super = src ? strtok_r(NULL, " \n", &save) : NULL;
    if (!tok[4] || !type)
      continue;
    if (v2 ? strcmp(type, "cgroup2") == 0
           : strcmp(type, "cgroup") == 0 && has_word(super, "memory")) {
      unescape(tok[3]);
      unescape(tok[4]);
      snprintf(mroot, n, "%s", tok[3]);
      snprintf(mpoint, n, "%s", tok[4]);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* This process's path in the hierarchy, from /proc/self/cgroup: v2's
 * "0::PATH", v1's "N:...,memory,...:PATH". */
static bool cgroup_path(const char *root, bool v2, char *out, size_t n) {
  char path[4096], line[4096];
  if (!under(root, "/proc/self/cgroup", path, sizeof path))
    return false;
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c1 = '\0';
    *c2 = '\0';
    const char *ctrls = c1 + 1;
    if (v2 ? strcmp(line, "0") == 0 && *ctrls == '\0'
           : has_word(ctrls, "memory")) {
      snprintf(out, n, "%s", c2 + 1);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* A limit file's value: a number, or "max" (v2: none). */
static bool read_limit(const char *path, uint64_t *bytes) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char buf[64] = "";
  bool ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok || strncmp(buf, "max", 3) == 0)
    return false;
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (end == buf || v >= NO_LIMIT)
    return false;
  *bytes = v;
  return true;
}

/* The smallest limit from this process's cgroup up to the mount's top (a
 * container's own cgroup when it is mounted there; the real root has no
 * v2 file, and v1's says "no limit"). */
static bool hierarchy_limit(const char *root, bool v2, uint64_t *bytes) {
  char mroot[1024], mpoint[1024], cg[1024], dir[4096], file[4200];
  if (!find_mount(root, v2, mroot, mpoint, sizeof mroot) ||
      !cgroup_path(root, v2, cg, sizeof cg))
    return false;
  /* The cgroup's path below the mount's root; a container that mounts its
   * own cgroup sees a root equal to (or outside of) its path: "". */
  const char *rel = cg;
  size_t r = strlen(mroot);
  if (strcmp(mroot, "/") != 0) {
    if (strncmp(cg, mroot, r) == 0 && (cg[r] == '/' || cg[r] == '\0'))
      rel = cg + r;
    else
      rel = "";
  }
  char top[4096];
  if (!under(root, mpoint, top, sizeof top) ||
      snprintf(dir, sizeof dir, "%s%s", top, rel) >= (int)sizeof dir)
    return false;
  size_t toplen = strlen(top);
  bool any = false;
  uint64_t least = UINT64_MAX;
  for (;;) {
    size_t len = strlen(dir);
    while (len > toplen && dir[len - 1] == '/')
      dir[--len] = '\0';
    uint64_t v;
    snprintf(file, sizeof file, "%s/%s", dir,
             v2 ? "memory.max" : "memory.limit_in_bytes");
    if (read_limit(file, &v) && v < least) {
      least = v;
      any = true;
    }
    char *slash = strrchr(dir, '/');
    if (len <= toplen || !slash || (size_t)(slash - dir) < toplen)
      break; /* the mount's top was the last */
    *slash = '\0';
  }
  if (any)
    *bytes = least;
  return any;
}

bool sl_host_cgroup_limit(const char *root, uint64_t *bytes) {
  uint64_t v1 = UINT64_MAX, v2 = UINT64_MAX;
  bool a = hierarchy_limit(root, true, &v2);
  bool b = hierarchy_limit(root, false, &v1);
  if (!a && !b)
    return false;
  *bytes = v1 < v2 ? v1 : v2;
  return true;
}

uint64_t sl_host_physical_memory(const char *root) {
  char path[4096], line[256];
  if (under(root, "/proc/meminfo", path, sizeof path)) {
    FILE *f = fopen(path, "r");
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
      if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
        break;
    if (f)
      fclose(f);
    if (kb > 0)
      return (uint64_t)kb * 1024;
  }
  if (strcmp(root, "/") != 0)
    return 0; /* a fake tree says nothing of this machine */
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

uint64_t sl_host_memory_limit_under(const char *root) {
  uint64_t have = sl_host_physical_memory(root), cg;
  if (sl_host_cgroup_limit(root, &cg) && (have == 0 || cg < have))
    have = cg;
  return have ? have / 2 : UINT64_MAX;
}

static uint64_t cached;
static pthread_once_t cached_once = PTHREAD_ONCE_INIT;

static void compute_default(void) {
  cached = sl_host_memory_limit_under("/");
}

uint64_t sl_host_default_memory_limit(void) {
  pthread_once(&cached_once, compute_default);
  return cached;
}
