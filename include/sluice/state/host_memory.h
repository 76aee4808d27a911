/* host_memory.h - how much memory this host gives the processes of a
 * query: the default of SET 'sluice.memory-limit'.
 *
 * The memory a process may use is the smallest of the machine's RAM and
 * the limits of the cgroups it runs in: cgroup v2's memory.max of its
 * cgroup and of every ancestor up to the hierarchy's mount, or cgroup v1's
 * memory.limit_in_bytes of its memory cgroup and its ancestors.  A
 * container sees only its own cgroup mounted at /sys/fs/cgroup; the path
 * in /proc/self/cgroup is then relative to a root that /proc/self/mountinfo
 * names, which is why both are read (as systemd and the JVM do).
 *
 * Every path is read under `root` ("/" for the real system; a directory
 * holding a fake proc/ and sys/ tree in tests). */
#ifndef SLUICE_HOST_MEMORY_H
#define SLUICE_HOST_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

/* The memory limit of the cgroup this process runs in (the smallest over
 * it and its ancestors, v2 and v1 alike), in bytes; false when no cgroup
 * limits memory (none is mounted, or every limit is "max"). */
bool sl_host_cgroup_limit(const char *root, uint64_t *bytes);

/* The machine's RAM: MemTotal in root/proc/meminfo, else sysconf; 0 if
 * neither says. */
uint64_t sl_host_physical_memory(const char *root);

/* The default memory limit of a query's processes on this host: half of
 * the smaller of the cgroup's limit and the RAM (the other half is the
 * headroom for the processes' code, stacks, allocator slack and whatever
 * else runs on the host), UINT64_MAX when nothing says how much there is.
 * Computed once per process (the files do not change under it). */
uint64_t sl_host_default_memory_limit(void);

/* The same rule over a given root, uncached (tests). */
uint64_t sl_host_memory_limit_under(const char *root);

#endif
