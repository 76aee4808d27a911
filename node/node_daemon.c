/* node_daemon.c - `sluice node`: a daemon that serves coordinators and
 * other nodes (cluster.h), each connection in a process of its own.
 *
 * Before it serves anyone it binds its port, confines the files tables
 * may open to --data-dir (path_policy.h; none without it), and drops to
 * --user if asked (a daemon left running as root says so).  Connections
 * that have not proved the cluster secret yet are capped (--max-pending):
 * each is proved in a child of its own, which tells the daemon it is done
 * by closing a pipe; beyond the cap connections are closed at once and
 * logged with their address, so a flood of silent peers costs a bounded
 * number of processes. */
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/path_policy.h"
#include "sluice/net/channel.h"
#include "sluice/node/node_daemon.h"
#include "sluice/session/session.h"

/* --user NAME: its uid, gid and groups, for good (after binding the port
 * and reading the secret, which may need root). */
static int drop_privileges(const char *name, sl_error *err) {
  struct passwd *pw = getpwnam(name);
  if (!pw)
    return sl_error_set(err, SL_EINVAL, "--user '%s': no such user", name);
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  if (geteuid() != 0 && (uid != geteuid() || gid != getegid()))
    return sl_error_set(err, SL_EINVAL,
                        "--user '%s': only a daemon started as root can "
                        "switch users (this one runs as uid %d)",
                        name, (int)geteuid());
  if (geteuid() == 0 &&
      (initgroups(name, gid) != 0 || setgid(gid) != 0 || setuid(uid) != 0))
    return sl_error_set(err, SL_EINVAL, "--user '%s': cannot switch to it: %s",
                        name, strerror(errno));
  /* For good: root must not be regained. */
  if (getuid() != uid || geteuid() != uid || getgid() != gid ||
      (uid != 0 && setuid(0) == 0))
    return sl_error_set(err, SL_EINVAL,
                        "--user '%s': the switch did not hold (uid %d, euid "
                        "%d)",
                        name, (int)getuid(), (int)geteuid());
  return SL_OK;
}

/* Refusals beyond the cap, logged at most this often one by one (a flood
 * must not flood the log), the rest counted. */
enum { LOG_PER_SECOND = 5 };

typedef struct door {
  int cap;
  int npending;
  struct pollfd *pfd; /* [0]: the listening socket; then one per pending */
  time_t second;      /* of the refusals counted below */
  int refused, unlogged;
} door;

static void refuse_over_cap(door *d, int c) {
  time_t now = time(NULL);
  if (now != d->second) {
    if (d->unlogged > 0)
      fprintf(stderr,
              "sluice node: refused %d more connections in the last second: "
              "%d were proving the secret already (--max-pending)\n",
              d->unlogged, d->cap);
    d->second = now;
    d->refused = d->unlogged = 0;
  }
  if (d->refused++ < LOG_PER_SECOND) {
    char who[128];
    sl_channel_describe_peer(c, who, sizeof who);
    fprintf(stderr,
            "sluice node: refused %s: %d connections are proving the secret "
            "already (--max-pending %d)\n",
            who, d->cap, d->cap);
  } else {
    d->unlogged++;
  }
  close(c);
}

/* The child serving connection c: prove the secret, say so on done_fd
 * (by closing it), then serve. */
static void serve_child(door *d, int c, int done_fd, const sl_secret *secret) {
  for (int i = 0; i <= d->npending; i++)
    close(d->pfd[i].fd); /* the listener and the others' pipes */
  /* Nothing is read from a peer before it proves the secret; the
   * handshake is in the child, so a slow or silent peer holds up no one
   * else. */
  sl_error aerr = {0};
  int rc = sl_auth_accept(c, secret, 10000, &aerr);
  close(done_fd);
  if (rc != SL_OK) {
    char who[128];
    sl_channel_describe_peer(c, who, sizeof who);
    fprintf(stderr, "sluice node: refused %s: %s\n", who, aerr.message);
    sl_error_clear(&aerr);
    close(c);
    _exit(1);
  }
  rc = sl_node_serve(c, secret);
  _exit(rc == SL_OK ? 0 : 1);
}

/* One accepted connection: a child proves and serves it, or it is
 * refused (over the cap, or no process). */
static void admit(door *d, int c, const sl_secret *secret) {
  if (d->npending >= d->cap) {
    refuse_over_cap(d, c);
    return;
  }
  int one = 1;
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int p[2];
  if (pipe(p) != 0) {
    fprintf(stderr, "sluice node: cannot serve a connection: %s\n",
            strerror(errno));
    close(c);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    serve_child(d, c, p[1], secret);
  }
  close(p[1]);
  close(c);
  if (pid < 0) {
    fprintf(stderr, "sluice node: cannot serve a connection: %s\n",
            strerror(errno));
    close(p[0]);
    return;
  }
  d->npending++;
  d->pfd[d->npending] = (struct pollfd){p[0], POLLIN, 0};
}

/* Pending children that have proved (or failed) the secret, or died:
 * their pipes closed. */
static void reap_pending(door *d) {
  for (int i = d->npending; i >= 1; i--)
    if (d->pfd[i].revents) {
      close(d->pfd[i].fd);
      d->pfd[i] = d->pfd[d->npending--];
    }
}

static void say_setup(const char *bound) {
  fprintf(stderr, "sluice node listening on %s\n", bound);
  const char *dir = sl_path_policy_dir();
  if (dir)
    fprintf(stderr, "sluice node: tables may read and write files under %s\n",
            dir);
  else
    fprintf(stderr, "sluice node: tables may not read or write files here "
                    "(start with --data-dir DIR to allow files under DIR)\n");
  if (geteuid() == 0)
    fprintf(stderr,
            "sluice node: WARNING: running as root: a peer that knows the "
            "cluster secret runs queries with root's rights%s; start it as "
            "another user, or with --user NAME to switch after binding the "
            "port\n",
            dir ? " on the files under --data-dir" : "");
}

int sl_node_listen(const sl_node_daemon_options *o, const sl_secret *secret,
                   sl_error *err) {
  /* The channels' listener: address parsing, SO_REUSEADDR, messages. */
  int fd;
  char bound[128];
  int rc = sl_channel_listen("tcp", o->listen, &fd, bound, sizeof bound, err);
  if (rc != SL_OK)
    return rc;
  if (o->data_dir)
    rc = sl_path_policy_confine(o->data_dir, err);
  else
    sl_path_policy_refuse();
  if (rc == SL_OK && o->user)
    rc = drop_privileges(o->user, err);
  if (rc != SL_OK) {
    close(fd);
    return rc;
  }
  say_setup(bound);
  /* Every connection is served by a process of its own, as a database
   * server serves its clients: a shell runs a multi-stage query's leaves
   * on connections of their own at once, and two shells can share the
   * daemons.  Children are reaped by the kernel. */
  signal(SIGCHLD, SIG_IGN);
  door d = {o->max_pending > 0 ? o->max_pending : SL_NODE_DEFAULT_MAX_PENDING,
            0,
            NULL,
            0,
            0,
            0};
  d.pfd = calloc((size_t)d.cap + 1, sizeof *d.pfd);
  if (!d.pfd)
    abort();
  d.pfd[0] = (struct pollfd){fd, POLLIN, 0};
  for (;;) {
    for (int i = 0; i <= d.npending; i++)
      d.pfd[i].revents = 0;
    if (poll(d.pfd, (nfds_t)d.npending + 1, -1) < 0) {
      if (errno != EINTR)
        poll(NULL, 0, 100);
      continue;
    }
    reap_pending(&d);
    if (!d.pfd[0].revents)
      continue;
    int c = accept(fd, NULL, NULL);
    if (c >= 0)
      admit(&d, c, secret);
    else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
      poll(NULL, 0, 100); /* out of descriptors: let some finish */
  }
}
