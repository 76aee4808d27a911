/* test_host_memory.c - the default memory limit from the cgroup's limit
 * (state/host_memory.c): cgroup v2 and v1 files under a fake root, the
 * smallest limit over the ancestors, a container's own cgroup mounted at
 * the top, "max" and v1's "no limit", and the real files of this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/state/host_memory.h"

/* A fresh fake root with proc/self and proc/meminfo (16 GiB). */
static char *fake_root(void) {
  char *dir = strdup("/tmp/sluice-cgroup-XXXXXX");
  assert_non_null(mkdtemp(dir));
  return dir;
}

static void put(const char *root, const char *path, const char *text) {
  char full[4096], part[4096];
  snprintf(full, sizeof full, "%s/%s", root, path);
  /* mkdir -p of its directory */
  for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
    snprintf(part, sizeof part, "%.*s", (int)(p - full), full);
    mkdir(part, 0755);
  }
  FILE *f = fopen(full, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void remove_tree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static const char *MEMINFO = "MemTotal:       16777216 kB\nMemFree: 1 kB\n";
static const uint64_t GiB = 1ull << 30;

/* cgroup v2: memory.max of the process's cgroup and its parents; the
 * smallest wins, "max" is none. */
static void test_v2_smallest_of_ancestors(void **state) {
  (void)state;
  char *r = fake_root();
  put(r, "proc/meminfo", MEMINFO);
  put(r, "proc/self/cgroup", "0::/user.slice/app.scope\n");
  put(r, "proc/self/mountinfo",
      "22 1 0:20 / /proc rw - proc proc rw\n"
      "30 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
  put(r, "sys/fs/cgroup/user.slice/app.scope/memory.max", "max\n");
  put(r, "sys/fs/cgroup/user.slice/memory.max", "2147483648\n");
  uint64_t v = 0;
  assert_true(sl_host_cgroup_limit(r, &v));
  assert_int_equal(v, 2 * GiB);
  /* Half of the smaller of 2 GiB and the 16 GiB of RAM. */
  assert_int_equal(sl_host_memory_limit_under(r), 1 * GiB);
  /* A tighter limit below wins. */
  put(r, "sys/fs/cgroup/user.slice/app.scope/memory.max", "536870912\n");
  assert_true(sl_host_cgroup_limit(r, &v));
  assert_int_equal(v, 512ull << 20);
  assert_int_equal(sl_host_memory_limit_under(r), 256ull << 20);
  remove_tree(r);
  free(r);
}

/* No limit anywhere: half the RAM. */
static void test_v2_no_limit(void **state) {
  (void)state;
  char *r = fake_root();
  put(r, "proc/meminfo", MEMINFO);
  put(r, "proc/self/cgroup", "0::/a\n");
  put(r, "proc/self/mountinfo",
      "30 22 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  put(r, "sys/fs/cgroup/a/memory.max", "max\n");
  uint64_t v = 0;
  assert_false(sl_host_cgroup_limit(r, &v));
  assert_int_equal(sl_host_memory_limit_under(r), 8 * GiB);
  remove_tree(r);
  free(r);
}

/* cgroup v1 (this machine's kind): the memory controller's hierarchy,
 * limit_in_bytes, and its "no limit" value (a page-rounded LONG_MAX). */
static void test_v1_memory_controller(void **state) {
  (void)state;
  char *r = fake_root();
  put(r, "proc/meminfo", MEMINFO);
  put(r, "proc/self/cgroup",
      "9:name=systemd:/\n5:devices:/\n4:memory:/process_api/abc\n"
      "3:cpu,cpuacct:/x\n0::/\n");
  put(r, "proc/self/mountinfo",
      "30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
      "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
      "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  put(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put(r, "sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
      "9223372036854771712\n");
  put(r, "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
      "4294967296\n");
  uint64_t v = 0;
  assert_true(sl_host_cgroup_limit(r, &v));
  assert_int_equal(v, 4 * GiB);
  assert_int_equal(sl_host_memory_limit_under(r), 2 * GiB);
  /* "No limit" everywhere is none. */
  put(r, "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
      "9223372036854771712\n");
  assert_false(sl_host_cgroup_limit(r, &v));
  remove_tree(r);
  free(r);
}

/* A container whose own cgroup is mounted at /sys/fs/cgroup (mountinfo's
 * root is the cgroup's path): its path is read below the mount's root,
 * not as the full path, and the mount's top is its own cgroup. */
static void test_container_mount_root(void **state) {
  (void)state;
  char *r = fake_root();
  put(r, "proc/meminfo", MEMINFO);
  put(r, "proc/self/cgroup", "0::/docker/f00/inner\n");
  put(r, "proc/self/mountinfo",
      "30 22 0:27 /docker/f00 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
  put(r, "sys/fs/cgroup/inner/memory.max", "1073741824\n");
  uint64_t v = 0;
  assert_true(sl_host_cgroup_limit(r, &v));
  assert_int_equal(v, 1 * GiB);
  assert_int_equal(sl_host_memory_limit_under(r), 512ull << 20);
  /* The container's own limit, at the mount's top, counts too. */
  put(r, "sys/fs/cgroup/memory.max", "268435456\n");
  assert_true(sl_host_cgroup_limit(r, &v));
  assert_int_equal(v, 256ull << 20);
  remove_tree(r);
  free(r);
}

/* Nothing to read: no limit, no RAM known (the fake root says nothing of
 * this machine). */
static void test_empty_root(void **state) {
  (void)state;
  char *r = fake_root();
  uint64_t v = 0;
  assert_false(sl_host_cgroup_limit(r, &v));
  assert_int_equal(sl_host_memory_limit_under(r), UINT64_MAX);
  remove_tree(r);
  free(r);
}

/* This machine: the default is half of the cgroup's limit or of the RAM,
 * whichever is smaller, and never more than half the RAM. */
static void test_real_system(void **state) {
  (void)state;
  uint64_t ram = sl_host_physical_memory("/");
  assert_true(ram > 0);
  uint64_t d = sl_host_default_memory_limit();
  uint64_t cg = 0;
  uint64_t expect = ram;
  if (sl_host_cgroup_limit("/", &cg) && cg < ram)
    expect = cg;
  assert_int_equal(d, expect / 2);
  assert_true(d <= ram / 2);
  printf("default memory limit here: %llu MiB (RAM %llu MiB)\n",
         (unsigned long long)(d >> 20), (unsigned long long)(ram >> 20));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_v2_smallest_of_ancestors),
      cmocka_unit_test(test_v2_no_limit),
      cmocka_unit_test(test_v1_memory_controller),
      cmocka_unit_test(test_container_mount_root),
      cmocka_unit_test(test_empty_root),
      cmocka_unit_test(test_real_system),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
