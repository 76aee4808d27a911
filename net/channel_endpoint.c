/* channel_endpoint.c - how the two ends of a cross-process channel meet
 * (channel.h, sl_channel_open_end): a connected stream socket from an
 * endpoint (a passed fd, an accept on a listening socket, or a connect to
 * an address, retried until a deadline), the hello both ends exchange
 * first (roles, shape, pid; shm attaches its memfd to the consumer's), and
 * deadline-bounded exact reads and writes.  shm and tcp share all of it;
 * only the socket family differs (unix for shm, inet for tcp). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "auth_gate.h"
#include "channel_int.h"
#include "sluice/common/clock.h"
#include "sluice/net/auth.h"

#define RETRY_NS (10 * 1000 * 1000)            /* refused connect: retry */
#define DEFAULT_TIMEOUT_NS (10LL * 1000000000) /* 10 s */

int sl_endpoint_refuse(const sl_channel_endpoint *ep, int rc) {
  if (ep && ep->via == SL_CHANNEL_VIA_FD && ep->fd >= 0)
    close(ep->fd);
  return rc;
}

int64_t sl_endpoint_deadline(const sl_channel_endpoint *ep) {
  int64_t t = ep->timeout_ns == 0 ? DEFAULT_TIMEOUT_NS : ep->timeout_ns;
  return t < 0 ? -1 : sl_clock_ns() + t;
}

/* Milliseconds left until the deadline for poll(): -1 = none, 0 = over. */
static int ms_left(int64_t deadline_ns) {
  if (deadline_ns < 0)
    return -1;
  int64_t left = deadline_ns - sl_clock_ns();
  if (left <= 0)
    return 0;
  int64_t ms = (left + 999999) / 1000000;
  return ms > 1000000 ? 1000000 : (int)ms;
}

/* Wait for `events` on fd.  1 ready, 0 deadline passed, < 0 errno
 * (-ECANCELED: cancel was requested; it is looked at every 50 ms). */
static int wait_fd_or_cancel(int fd, short events, int64_t deadline_ns,
                             const sl_cancel *cancel) {
  for (;;) {
    struct pollfd p = {fd, events, 0};
    int ms = ms_left(deadline_ns);
    if (ms == 0)
      return 0;
    if (sl_cancel_pending(cancel))
      return -ECANCELED;
    if (cancel && (ms < 0 || ms > 50))
      ms = 50;
    int n = poll(&p, 1, ms);
    if (n > 0)
      return 1;
    if (n < 0 && errno != EINTR)
      return -errno;
  }
}

static int wait_fd(int fd, short events, int64_t deadline_ns) {
  return wait_fd_or_cancel(fd, events, deadline_ns, NULL);
}

static int set_blocking(int fd, int blocking) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0)
    return -1;
  fl = blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
  return fcntl(fd, F_SETFL, fl);
}

int sl_endpoint_send_all(int fd, const void *buf, size_t n, int64_t deadline_ns,
                         const char *what, const char *where, sl_error *err) {
  const char *p = buf;
  while (n > 0) {
    int w = wait_fd(fd, POLLOUT, deadline_ns);
    if (w == 0)
      return sl_error_set(err, SL_EIO,
                          "timed out sending the %s to %s: is the peer "
                          "process running and opening its end?",
                          what, where);
    ssize_t k = w < 0 ? -1 : send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      int e = w < 0 ? -w : errno;
      if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
        continue;
      return sl_error_set(err, SL_EIO, "sending the %s to %s failed: %s", what,
                          where, strerror(e));
    }
    p += k;
    n -= (size_t)k;
  }
  return SL_OK;
}

/* recvmsg that also picks up one passed descriptor (SCM_RIGHTS). */
static ssize_t recv_some(int fd, void *buf, size_t n, int *gotfd) {
  struct iovec iov = {buf, n};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  if (gotfd) {
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
  }
  ssize_t k = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (k > 0 && gotfd) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
          c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(gotfd, CMSG_DATA(c), sizeof(int));
  }
  return k;
}

static int recv_all_fd(int fd, void *buf, size_t n, int64_t deadline_ns,
                       int *gotfd, const char *what, const char *where,
                       sl_error *err) {
  char *p = buf;
  size_t want = n;
  while (n > 0) {
    int w = wait_fd(fd, POLLIN, deadline_ns);
    if (w == 0)
      return sl_error_set(err, SL_EIO,
                          "timed out waiting for the %s from %s: is the peer "
                          "process running and opening its end?",
                          what, where);
    ssize_t k = w < 0 ? -1 : recv_some(fd, p, n, gotfd);
    if (k == 0)
      return sl_error_set(err, SL_EIO,
                          "%s closed the connection after %zu of the %zu "
                          "bytes of the %s: the peer process exited or gave "
                          "up",
                          where, want - n, want, what);
    if (k < 0) {
      int e = w < 0 ? -w : errno;
      if (e == EINTR || e == EAGAIN || e == EWOULDBLOCK)
        continue;
      return sl_error_set(err, SL_EIO, "receiving the %s from %s failed: %s",
                          what, where, strerror(e));
    }
    p += k;
    n -= (size_t)k;
  }
  return SL_OK;
}

int sl_endpoint_recv_all(int fd, void *buf, size_t n, int64_t deadline_ns,
                         const char *what, const char *where, sl_error *err) {
  return recv_all_fd(fd, buf, n, deadline_ns, NULL, what, where, err);
}

/* "host:port" or "[v6]:port" -> host, port. */
static int split_host_port(const char *address, char *host, size_t hsize,
                           char *port, size_t psize) {
  const char *colon = strrchr(address, ':');
  if (!colon || colon == address || !colon[1])
    return -1;
  const char *h = address;
  size_t hl = (size_t)(colon - address);
  if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
    h++;
    hl -= 2;
  }
  if (hl + 1 > hsize || strlen(colon + 1) + 1 > psize)
    return -1;
  memcpy(host, h, hl);
  host[hl] = 0;
  strcpy(port, colon + 1);
  return 0;
}

/* A unix address: a path, or "@name" for the abstract namespace (nothing
 * on disk to clean up). */
static int unix_addr(const char *address, struct sockaddr_un *sa,
                     socklen_t *len) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  size_t n = strlen(address);
  if (n == 0 || n >= sizeof sa->sun_path)
    return -1;
  memcpy(sa->sun_path, address, n);
  if (address[0] == '@')
    sa->sun_path[0] = 0;
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
                     (address[0] == '@' ? 0 : 1));
  return 0;
}

static void describe_peer(int fd, int fallback_fd, char *where, size_t n) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0 &&
      (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      snprintf(where, n, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host,
               port);
      return;
    }
  }
  snprintf(where, n, "the peer on socket %d", fallback_fd);
}

void sl_channel_describe_peer(int fd, char *where, size_t n) {
  describe_peer(fd, fd, where, n);
}

/* Connect to address before the deadline, retrying while nobody listens
 * yet (the peer process may still be starting) when wait_listener. */
static int connect_to(const char *transport, int family, const char *address,
                      int64_t deadline_ns, bool wait_listener,
                      const sl_cancel *cancel, int *out, sl_error *err) {
  for (;;) {
    if (sl_cancel_pending(cancel))
      return sl_error_set(err, SL_ECANCELLED,
                          "%s channel: the query stopped while connecting to "
                          "%s",
                          transport, address);
    int fd = -1, e = 0;
    if (family == AF_UNIX) {
      struct sockaddr_un sa;
      socklen_t len;
      if (unix_addr(address, &sa, &len) != 0)
        return sl_error_set(err, SL_EINVAL,
                            "%s channel address '%s' is not a unix socket "
                            "path or @name (at most %zu bytes)",
                            transport, address, sizeof sa.sun_path - 1);
      fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) != 0)
        e = errno;
    } else {
      char host[256], port[32];
      if (split_host_port(address, host, sizeof host, port, sizeof port))
        return sl_error_set(err, SL_EINVAL,
                            "%s channel address '%s' is not host:port",
                            transport, address);
      struct addrinfo hints = {0}, *ai = NULL;
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      int g = getaddrinfo(host, port, &hints, &ai);
      if (g != 0)
        return sl_error_set(err, SL_EIO, "%s channel: cannot resolve '%s': %s",
                            transport, address, gai_strerror(g));
      fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0)
        e = errno;
      else if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        e = errno;
        if (e == EINPROGRESS) {
          /* Bounded by the deadline, not the kernel's minutes-long SYN
           * retries. */
          int w = wait_fd_or_cancel(fd, POLLOUT, deadline_ns, cancel);
          socklen_t el = sizeof e;
          if (w <= 0)
            e = w == 0 ? ETIMEDOUT : -w;
          else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
            e = errno;
        }
      }
      freeaddrinfo(ai);
      if (fd >= 0 && e == 0 && set_blocking(fd, 1) != 0)
        e = errno;
    }
    if (e == 0) {
      *out = fd;
      return SL_OK;
    }
    if (fd >= 0)
      close(fd);
    int retry =
        wait_listener && (e == ECONNREFUSED || e == ENOENT || e == EAGAIN);
    if (!retry || (deadline_ns >= 0 && sl_clock_ns() + RETRY_NS > deadline_ns))
      return sl_error_set(err, SL_EIO, "%s channel: cannot connect to %s: %s%s",
                          transport, address, strerror(e),
                          retry ? " (nobody listened there before the "
                                  "rendezvous timeout: is the peer running?)"
                                : "");
    struct timespec ts = {0, RETRY_NS};
    nanosleep(&ts, NULL);
  }
}

int sl_channel_connect_stream(const char *address, int timeout_ms, int *fd,
                              sl_error *err) {
  *fd = -1;
  return connect_to("tcp", AF_INET, address,
                    sl_clock_ns() + (int64_t)timeout_ms * 1000000, false, NULL,
                    fd, err);
}

/* The cluster secret's handshake (auth.h) on a fresh connection, when the
 * endpoint has one: before the channel's own hello, so that nothing of a
 * peer that cannot prove it is read.  Closes *fd when it fails. */
static int prove_secret(const sl_channel_endpoint *ep, bool accepted, int *fd,
                        int64_t deadline_ns, const char *where, sl_error *err) {
  if (!ep->secret)
    return SL_OK;
  int64_t ms =
      deadline_ns < 0 ? 10000 : (deadline_ns - sl_clock_ns()) / 1000000;
  int timeout_ms = ms > 1000 ? (int)ms : 1000;
  int rc = accepted ? sl_auth_accept(*fd, ep->secret, timeout_ms, err)
                    : sl_auth_connect(*fd, ep->secret, timeout_ms, err);
  if (rc != SL_OK) {
    char *why = strdup(err->message ? err->message : "failed");
    sl_error_clear(err);
    sl_error_set(err, rc, "%s channel with %s: %s", ep->transport, where,
                 why ? why : "failed");
    free(why);
    close(*fd);
    *fd = -1;
  }
  return rc;
}

/* The accepting end with a secret: every connection to the listener proves
 * it in a thread of its own (auth_gate.h), and the first that does is the
 * channel's.  So a stray or hostile connection (silent, garbage, another
 * secret) is refused and logged, and the real peer, which connects beside
 * it, still gets through before the deadline. */
static int accept_proven(const sl_channel_endpoint *ep, int64_t deadline_ns,
                         int *fd, char *where, size_t where_size,
                         sl_error *err) {
  const char *t = ep->transport;
  auth_gate *gate = auth_gate_new(ep->secret, "a channel connection");
  int rc = SL_OK;
  for (;;) {
    int got = auth_gate_take(gate);
    if (got >= 0) {
      *fd = got;
      set_blocking(*fd, 1);
      describe_peer(*fd, *fd, where, where_size);
      break;
    }
    if (sl_cancel_pending(ep->cancel)) {
      rc = sl_error_set(err, SL_ECANCELLED,
                        "%s channel: the query stopped while waiting for "
                        "the peer",
                        t);
      break;
    }
    int ms = ms_left(deadline_ns);
    if (ms == 0) {
      char why[256];
      auth_gate_last_refusal(gate, why, sizeof why);
      rc = why[0] ? sl_error_set(err, SL_EPERM,
                                 "%s channel with a peer on socket %d: no "
                                 "connection proved the cluster secret in "
                                 "time; the last refused: %s",
                                 t, ep->fd, why)
                  : sl_error_set(err, SL_EIO,
                                 "%s channel: no peer connected to the "
                                 "listening socket %d before the rendezvous "
                                 "timeout: is the peer running and given "
                                 "our address?",
                                 t, ep->fd);
      break;
    }
    if (ms < 0 || ms > 50)
      ms = 50; /* to look at the cancel token */
    struct pollfd p[2] = {{ep->fd, POLLIN, 0}, {auth_gate_fd(gate), POLLIN, 0}};
    int n = poll(p, 2, ms);
    if (n < 0 && errno != EINTR) {
      rc = sl_error_set(err, SL_EIO, "%s channel: waiting for the peer: %s", t,
                        strerror(errno));
      break;
    }
    if (n > 0 && (p[0].revents & POLLIN)) {
      int c = accept4(ep->fd, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0) {
        set_blocking(c, 1);
        auth_gate_add(gate, c);
      } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
        rc = sl_error_set(err, SL_EIO,
                          "%s channel: accepting the peer on socket %d "
                          "failed: %s",
                          t, ep->fd, strerror(errno));
        break;
      }
    }
  }
  auth_gate_free(gate); /* refuses whoever is still proving */
  return rc;
}

int sl_endpoint_connect(const sl_channel_endpoint *ep, int family,
                        int64_t deadline_ns, int *fd, char *where,
                        size_t where_size, sl_error *err) {
  *fd = -1;
  const char *t = ep->transport;
  int rc = SL_OK;
  switch (ep->via) {
  case SL_CHANNEL_VIA_FD: {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int type = 0;
    socklen_t tl = sizeof type;
    if (ep->fd < 0 || getsockname(ep->fd, (struct sockaddr *)&ss, &len) != 0 ||
        getsockopt(ep->fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
        type != SOCK_STREAM) {
      rc = sl_error_set(err, SL_EINVAL,
                        "%s channel endpoint: descriptor %d is not a stream "
                        "socket",
                        t, ep->fd);
      break;
    }
    if (family == AF_UNIX && ss.ss_family != AF_UNIX) {
      rc = sl_error_set(err, SL_EINVAL,
                        "%s channel endpoint: descriptor %d must be a unix "
                        "socket (the shared memory is passed over it)",
                        t, ep->fd);
      break;
    }
    *fd = ep->fd;
    set_blocking(*fd, 1);
    fcntl(*fd, F_SETFD, FD_CLOEXEC);
    describe_peer(*fd, ep->fd, where, where_size);
    return SL_OK;
  }
  case SL_CHANNEL_VIA_ACCEPT: {
    if (ep->secret)
      return accept_proven(ep, deadline_ns, fd, where, where_size, err);
    int w = wait_fd_or_cancel(ep->fd, POLLIN, deadline_ns, ep->cancel);
    if (w == -ECANCELED)
      return sl_error_set(err, SL_ECANCELLED,
                          "%s channel: the query stopped while waiting for "
                          "the peer",
                          t);
    if (w <= 0)
      return sl_error_set(err, SL_EIO,
                          "%s channel: no peer connected to the listening "
                          "socket %d %s",
                          t, ep->fd,
                          w == 0 ? "before the rendezvous timeout: is the "
                                   "peer running and given our address?"
                                 : strerror(-w));
    *fd = accept4(ep->fd, NULL, NULL, SOCK_CLOEXEC);
    if (*fd < 0)
      return sl_error_set(err, SL_EIO,
                          "%s channel: accepting the peer on socket %d "
                          "failed: %s",
                          t, ep->fd, strerror(errno));
    set_blocking(*fd, 1);
    describe_peer(*fd, *fd, where, where_size);
    return prove_secret(ep, true, fd, deadline_ns, where, err);
  }
  case SL_CHANNEL_VIA_CONNECT:
    if (!ep->address)
      return sl_error_set(err, SL_EINVAL,
                          "%s channel endpoint: no address to connect to", t);
    rc = connect_to(t, family, ep->address, deadline_ns, true, ep->cancel, fd,
                    err);
    if (rc == SL_OK)
      snprintf(where, where_size, "%s", ep->address);
    return rc == SL_OK ? prove_secret(ep, false, fd, deadline_ns, where, err)
                       : rc;
  default:
    return sl_error_set(err, SL_EINVAL,
                        "%s channel endpoint: 'via' must be fd, accept or "
                        "connect",
                        t);
  }
  /* A passed descriptor is the channel's even when it is refused. */
  return sl_endpoint_refuse(ep, rc);
}

int sl_endpoint_hello(int fd, const char *transport, sl_channel_role role,
                      const sl_channel_config *shape, int passfd,
                      int64_t deadline_ns, sl_hello *peer, int *gotfd,
                      const char *where, sl_error *err) {
  sl_hello me = {{'S', 'L', 'C', 'H'}, SL_HELLO_VERSION, (uint32_t)role,
                 shape->credits,       shape->slot_size, (int32_t)getpid()};
  if (gotfd)
    *gotfd = -1;
  int rc;
  if (passfd >= 0) {
    /* The descriptor rides with the hello's bytes (SCM_RIGHTS). */
    struct iovec iov = {&me, sizeof me};
    union {
      char buf[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &passfd, sizeof(int));
    int w = wait_fd(fd, POLLOUT, deadline_ns);
    ssize_t k = w > 0 ? sendmsg(fd, &m, MSG_NOSIGNAL) : -1;
    if (k != (ssize_t)sizeof me)
      return sl_error_set(err, SL_EIO,
                          "%s channel: sending the shared memory to %s "
                          "failed: %s",
                          transport, where,
                          w == 0 ? "timed out" : strerror(errno));
  } else if ((rc = sl_endpoint_send_all(fd, &me, sizeof me, deadline_ns,
                                        "channel hello", where, err)) != SL_OK)
    return rc;
  if ((rc = recv_all_fd(fd, peer, sizeof *peer, deadline_ns, gotfd,
                        "channel hello", where, err)) != SL_OK)
    return rc;
  const char *rname = role == SL_CHANNEL_PRODUCER ? "producer" : "consumer";
  if (memcmp(peer->magic, "SLCH", 4) != 0 || peer->version != SL_HELLO_VERSION)
    return sl_error_set(err, SL_EIO,
                        "%s channel: %s is not a Sluice channel end of this "
                        "version (bad hello)",
                        transport, where);
  if (peer->role == (uint32_t)role)
    return sl_error_set(err, SL_EINVAL,
                        "%s channel: both ends are %ss (this process and "
                        "pid %d at %s): one must be the consumer",
                        transport, rname, (int)peer->pid, where);
  if (peer->credits != shape->credits || peer->slot_size != shape->slot_size)
    return sl_error_set(err, SL_EINVAL,
                        "%s channel: the ends disagree on the shape: this "
                        "%s has %u credits x %u bytes, pid %d at %s has %u x "
                        "%u; configure both ends alike",
                        transport, rname, shape->credits, shape->slot_size,
                        (int)peer->pid, where, peer->credits, peer->slot_size);
  return SL_OK;
}

int sl_channel_listen(const char *transport, const char *address, int *fd,
                      char *bound, size_t bound_size, sl_error *err) {
  *fd = -1;
  const sl_channel_transport *t = sl_channel_transport_find(transport);
  if (!t || !t->open_end)
    return sl_error_set(err, SL_EINVAL,
                        "cannot listen for '%s' channels (shm, tcp or verbs "
                        "only)",
                        transport ? transport : "(null)");
  if (!address)
    return sl_error_set(err, SL_EINVAL, "%s channel: no address to listen on",
                        t->name);
  if (t == &sl_channel_verbs)
    return sl_verbs_listen(address, fd, bound, bound_size, err);
  int s = -1;
  if (t == &sl_channel_shm) {
    struct sockaddr_un sa;
    socklen_t len;
    if (unix_addr(address, &sa, &len) != 0)
      return sl_error_set(err, SL_EINVAL,
                          "shm channel address '%s' is not a unix socket "
                          "path or @name",
                          address);
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, len) != 0 ||
        listen(s, 64) != 0) {
      int e = errno;
      if (s >= 0)
        close(s);
      return sl_error_set(err, SL_EIO, "shm channel: cannot listen on %s: %s",
                          address, strerror(e));
    }
    snprintf(bound, bound_size, "%s", address);
    *fd = s;
    return SL_OK;
  }
  char host[256], port[32];
  if (split_host_port(address, host, sizeof host, port, sizeof port))
    return sl_error_set(err, SL_EINVAL,
                        "tcp channel address '%s' is not host:port", address);
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  int g = getaddrinfo(host, port, &hints, &ai);
  if (g != 0)
    return sl_error_set(err, SL_EIO, "tcp channel: cannot resolve '%s': %s",
                        address, gai_strerror(g));
  s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1, e = 0;
  if (s < 0)
    e = errno;
  else if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
           bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, 64) != 0)
    e = errno;
  freeaddrinfo(ai);
  if (e) {
    if (s >= 0)
      close(s);
    return sl_error_set(err, SL_EIO, "tcp channel: cannot listen on %s: %s",
                        address, strerror(e));
  }
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  char h[NI_MAXHOST], p[NI_MAXSERV];
  if (getsockname(s, (struct sockaddr *)&ss, &len) != 0 ||
      getnameinfo((struct sockaddr *)&ss, len, h, sizeof h, p, sizeof p,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    close(s);
    return sl_error_set(
        err, SL_EIO, "tcp channel: cannot tell the port bound for %s", address);
  }
  snprintf(bound, bound_size, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h,
           p);
  *fd = s;
  return SL_OK;
}
