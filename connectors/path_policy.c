/* path_policy.c - confining connector paths to a node daemon's --data-dir
 * (path_policy.h): lexical checks first (absolute paths elsewhere, '..'),
 * then the kernel's walk beneath the directory (openat2 RESOLVE_BENEATH),
 * or a walk of our own that follows no link where openat2 is missing. */
#include "sluice/connectors/path_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sluice/common/strbuf.h"

enum { PATHS_ANY, PATHS_NONE, PATHS_BENEATH };

static struct {
  int mode;
  int dirfd;   /* DIR, O_PATH, while confined */
  char *dir;   /* DIR, canonical (realpath) */
  char *given; /* DIR as given, made absolute and normalized */
  /* Set by whichever thread first finds openat2 missing. */
  atomic_bool no_openat2;
} policy = {PATHS_ANY, -1, NULL, NULL, false};

/* p without empty and "." components ("/a//./b/" -> "/a/b", "./x" ->
 * "x", "." -> ""); *dotdot says whether a ".." component was there. */
static void normalize(const char *p, sl_strbuf *out, bool *dotdot) {
  sl_strbuf_reset(out);
  *dotdot = false;
  bool absolute = p[0] == '/';
  if (absolute)
    sl_strbuf_appendc(out, '/');
  while (*p) {
    while (*p == '/')
      p++;
    size_t n = strcspn(p, "/");
    if (n == 0)
      break;
    if (n == 2 && p[0] == '.' && p[1] == '.')
      *dotdot = true;
    if (!(n == 1 && p[0] == '.')) {
      if (out->len > (absolute ? 1u : 0u))
        sl_strbuf_appendc(out, '/');
      sl_strbuf_appendn(out, p, n);
    }
    p += n;
  }
}

/* The part of the normalized absolute path `abs` below `dir` ("" for dir
 * itself), or NULL when abs is not inside dir. */
static const char *below(const char *abs, const char *dir) {
  if (!dir)
    return NULL;
  if (strcmp(dir, "/") == 0)
    return abs + 1;
  size_t n = strlen(dir);
  if (strncmp(abs, dir, n) != 0)
    return NULL;
  if (abs[n] == '\0')
    return abs + n;
  return abs[n] == '/' ? abs + n + 1 : NULL;
}

int sl_path_policy_confine(const char *dir, sl_error *err) {
  char canon[PATH_MAX];
  if (!realpath(dir, canon))
    return sl_error_set(err, SL_EINVAL, "--data-dir '%s': %s", dir,
                        strerror(errno));
  int fd = open(canon, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sl_error_set(err, SL_EINVAL,
                        "--data-dir '%s' is not a directory this daemon can "
                        "open: %s",
                        dir, strerror(errno));
  sl_strbuf given = SL_STRBUF_INIT, abs = SL_STRBUF_INIT;
  char cwd[PATH_MAX];
  if (dir[0] != '/' && getcwd(cwd, sizeof cwd))
    sl_strbuf_printf(&abs, "%s/", cwd);
  sl_strbuf_append(&abs, dir);
  bool dotdot;
  normalize(sl_strbuf_cstr(&abs), &given, &dotdot);
  sl_strbuf_free(&abs);
  sl_path_policy_reset();
  policy.mode = PATHS_BENEATH;
  policy.dirfd = fd;
  policy.dir = strdup(canon);
  /* DIR as given is another name for it only when it has no '..' (which
   * would make a lexical prefix mean something else). */
  policy.given = dotdot ? NULL : sl_strbuf_detach(&given);
  sl_strbuf_free(&given);
  if (!policy.dir)
    abort();
  return SL_OK;
}

void sl_path_policy_refuse(void) {
  sl_path_policy_reset();
  policy.mode = PATHS_NONE;
}

void sl_path_policy_reset(void) {
  if (policy.dirfd >= 0)
    close(policy.dirfd);
  free(policy.dir);
  free(policy.given);
  policy.mode = PATHS_ANY;
  policy.dirfd = -1;
  policy.dir = policy.given = NULL;
}

const char *sl_path_policy_dir(void) {
  return policy.mode == PATHS_BENEATH ? policy.dir : NULL;
}

void sl_path_policy_force_fallback(bool on) {
  atomic_store(&policy.no_openat2, on);
}

/* Where openat2 is missing: rel walked from the directory one component
 * at a time, following no symbolic link (-ELOOP for any), the last one
 * opened with flags.  The descriptor, or -errno. */
static int walk_nofollow(const char *rel, int flags, mode_t mode) {
  char *copy = strdup(*rel ? rel : ".");
  if (!copy)
    abort();
  int cur = policy.dirfd, rc = 0;
  char *comp = copy;
  for (;;) {
    char *slash = strchr(comp, '/');
    if (slash)
      *slash = '\0';
    int fd = slash ? openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC)
                   : openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
      rc = -errno;
    } else if (slash || (flags & O_PATH)) { /* O_PATH opens a link itself */
      struct stat st;
      if (fstat(fd, &st) != 0)
        rc = -errno;
      else if (S_ISLNK(st.st_mode))
        rc = -ELOOP;
      if (rc < 0)
        close(fd);
    }
    if (cur != policy.dirfd)
      close(cur);
    if (rc < 0 || !slash) {
      free(copy);
      return rc < 0 ? rc : fd;
    }
    cur = fd;
    comp = slash + 1;
  }
}

/* rel opened beneath the directory: by the kernel (openat2), or by
 * walk_nofollow.  The descriptor, or -errno (-EXDEV: it leads out). */
static int open_beneath(const char *rel, int flags, mode_t mode) {
  if (!atomic_load(&policy.no_openat2)) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    how.mode = flags & (O_CREAT | O_TMPFILE) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd =
        syscall(SYS_openat2, policy.dirfd, *rel ? rel : ".", &how, sizeof how);
    if (fd >= 0)
      return (int)fd;
    /* No openat2 (an old kernel, or a seccomp filter that denies it):
     * the stricter walk, from now on. */
    if (errno != ENOSYS && errno != EPERM)
      return -errno;
    atomic_store(&policy.no_openat2, true);
  }
  return walk_nofollow(rel, flags, mode);
}

/* What exists of rel stays beneath the directory: its longest existing
 * prefix is opened beneath it.  0, or -EXDEV / -ELOOP for a link out. */
static int check_beneath(const char *rel) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, rel);
  int rc = 0;
  for (;;) {
    int fd = open_beneath(sl_strbuf_cstr(&b), O_PATH, 0);
    if (fd >= 0) {
      close(fd);
      break;
    }
    if (fd != -ENOENT || b.len == 0) {
      /* EXDEV, ELOOP: refused; anything else (EACCES, ENOTDIR) the
       * connector's own open reports. */
      rc = fd == -EXDEV || fd == -ELOOP ? fd : 0;
      break;
    }
    char *slash = strrchr(b.data, '/');
    b.len = slash ? (size_t)(slash - b.data) : 0;
    b.data[b.len] = '\0';
  }
  sl_strbuf_free(&b);
  return rc;
}

int sl_path_resolve(const char *path, char **out, sl_error *err) {
  *out = NULL;
  if (policy.mode == PATHS_ANY) {
    *out = strdup(path);
    if (!*out)
      abort();
    return SL_OK;
  }
  if (policy.mode == PATHS_NONE)
    return sl_error_set(err, SL_EPERM,
                        "'%s': this node daemon opens no files: it was "
                        "started without --data-dir (start it with `sluice "
                        "node --data-dir DIR ...` to let tables read and "
                        "write files under DIR)",
                        path);
  sl_strbuf norm = SL_STRBUF_INIT;
  bool dotdot;
  normalize(path, &norm, &dotdot);
  const char *n = sl_strbuf_cstr(&norm);
  const char *rel = n;
  int rc = SL_OK;
  if (dotdot)
    rc = sl_error_set(err, SL_EPERM,
                      "'%s' is refused: on this node paths stay inside its "
                      "data directory %s (--data-dir), and '..' climbs out; "
                      "name the file relative to %s",
                      path, policy.dir, policy.dir);
  else if (n[0] == '/' && !(rel = below(n, policy.dir)) &&
           !(rel = below(n, policy.given)))
    rc = sl_error_set(err, SL_EPERM,
                      "'%s' is outside this node's data directory %s "
                      "(--data-dir): name a file inside it, or a path "
                      "relative to it",
                      path, policy.dir);
  if (rc == SL_OK) {
    int e = check_beneath(rel);
    if (e != 0)
      rc = sl_error_set(
          err, SL_EPERM,
          e == -EXDEV || !atomic_load(&policy.no_openat2)
              ? "'%s' leads out of this node's data directory %s "
                "(--data-dir) through a symbolic link: paths stay inside it"
              : "'%s' passes through a symbolic link under this node's "
                "data directory %s (--data-dir); without openat2 (Linux "
                "5.6) the daemon cannot follow links safely and follows "
                "none",
          path, policy.dir);
  }
  if (rc == SL_OK) {
    sl_strbuf abs = SL_STRBUF_INIT;
    sl_strbuf_printf(&abs, "%s%s%s", policy.dir,
                     *rel && strcmp(policy.dir, "/") ? "/" : "", rel);
    *out = sl_strbuf_detach(&abs);
  }
  sl_strbuf_free(&norm);
  return rc;
}

int sl_path_open(const char *path, int flags, mode_t mode) {
  if (policy.mode == PATHS_ANY) {
    int fd = open(path, flags, mode);
    return fd >= 0 ? fd : -errno;
  }
  if (policy.mode == PATHS_NONE)
    return -EACCES;
  sl_strbuf norm = SL_STRBUF_INIT;
  bool dotdot;
  normalize(path, &norm, &dotdot);
  const char *rel = below(sl_strbuf_cstr(&norm), policy.dir);
  int fd = dotdot || !rel ? -EACCES : open_beneath(rel, flags, mode);
  sl_strbuf_free(&norm);
  return fd;
}
