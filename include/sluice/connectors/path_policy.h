/* path_policy.h - where this process's connectors may open files.
 *
 * A shell, and the nodes it forks with --nodes N, open any path the user
 * names: the user is local and runs them as themself.  A node daemon
 * (`sluice node`) serves shells on other hosts, so a path in a table's
 * WITH clause is a remote user's request to open a file on the daemon's
 * host:
 *
 *   - started with --data-dir DIR, every path a connector opens resolves
 *     inside DIR: a relative path relative to DIR, an absolute one only if
 *     it names something in DIR; a '..' component, an absolute path
 *     elsewhere, and a symbolic link that leads out (an absolute target,
 *     or one that climbs above DIR) are refused with a message naming the
 *     path and DIR.  Links that stay inside DIR are followed.
 *   - started without --data-dir, connectors open no path at all, and say
 *     how to allow them (--data-dir).
 *
 * Each connector calls sl_path_resolve once, where it validates its
 * path, and opens files it reads through sl_path_open: both resolve
 * beneath DIR with openat2(RESOLVE_BENEATH), in which the kernel refuses
 * any escape during the walk itself (a link swapped in after the check
 * included); on a kernel without openat2 (before Linux 5.6, or a seccomp
 * filter that denies it) the walk is done here one component at a time
 * with O_NOFOLLOW, and every symbolic link is refused.
 *
 * The policy is set once, by the daemon before it serves anyone, and only
 * read afterwards (thread-safe, inherited by the processes it forks).
 */
#ifndef SLUICE_PATH_POLICY_H
#define SLUICE_PATH_POLICY_H

#include <stdbool.h>
#include <sys/types.h>

#include "sluice/common/error.h"

/* --data-dir DIR: confine every connector path to DIR (which must be an
 * existing directory; SL_EINVAL with a message otherwise). */
int sl_path_policy_confine(const char *dir, sl_error *err);
/* A daemon without --data-dir: connectors open no path. */
void sl_path_policy_refuse(void);
/* Any path (a shell's process; tests). */
void sl_path_policy_reset(void);
/* The confining directory (canonical), or NULL when not confined. */
const char *sl_path_policy_dir(void);
/* Tests only: behave as on a kernel without openat2. */
void sl_path_policy_force_fallback(bool on);

/* The path a connector should use for `path` (a table's option), in *out
 * (malloc'd; the caller frees it): `path` itself when this process is not
 * confined; under --data-dir the absolute path inside DIR after checking
 * that what exists of it stays there.  SL_EPERM with a message naming the
 * path and DIR (and *out NULL) when it is refused. */
int sl_path_resolve(const char *path, char **out, sl_error *err);

/* open(2) of a path sl_path_resolve returned, resolved again beneath DIR
 * by the kernel when confined (a link swapped in meanwhile is refused:
 * -EXDEV, or -ELOOP on the fallback).  The descriptor, or -errno. */
int sl_path_open(const char *path, int flags, mode_t mode);

#endif
