/* cluster_client.c - starting, joining and talking to the nodes of a cluster
 * (cluster.h, node_frames.h). */
#include "sluice/cluster/cluster_client.h"
#include "sluice/common/version.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/net/node_frames.h"
#include "sluice/net/node_messages.h"
#include "sluice/shell/shell.h"

/* err's message prefixed with the node (sl_error_set would free the
 * message it is given before formatting it). */
static int about_node(sl_error *err, int code, int i, const char *address) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", err->message ? err->message : "failed");
  return sl_error_set(err, code, "node %d (%s): %s", i, address, msg);
}

/* A forked node that is gone: reap it and say how it ended, once: a death
 * by a signal is a crash the user must hear of (which node, its pid, the
 * signal), not only that its connection closed.  Its end of the socket
 * closes as it exits, a moment before it can be reaped: waited for up to
 * 100 ms. */
static void reap_node(sl_cluster_node *nd, int i) {
  if (nd->pid <= 0 || nd->reaped)
    return;
  int status = 0;
  pid_t r = waitpid(nd->pid, &status, WNOHANG);
  for (int k = 0; k < 20 && r == 0; k++) {
    usleep(5000);
    r = waitpid(nd->pid, &status, WNOHANG);
  }
  if (r != nd->pid)
    return; /* alive (hung: it is killed when the nodes start again) */
  nd->reaped = true;
  if (WIFSIGNALED(status))
    fprintf(stderr, "sluice: node %d (pid %d) was killed by signal %d (%s)%s\n",
            i, (int)nd->pid, WTERMSIG(status), strsignal(WTERMSIG(status)),
            WCOREDUMP(status) ? ", core dumped" : "");
  else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    fprintf(stderr, "sluice: node %d (pid %d) exited with status %d\n", i,
            (int)nd->pid, WEXITSTATUS(status));
}

/* Node i's connection broke: not healthy until joined or started again. */
static void broken(sl_cluster *c, int i) {
  c->nodes[i].healthy = false;
  reap_node(&c->nodes[i], i);
}

/* Wait for a node's HELLO (its worker count). */
static int hello(sl_cluster_node *nd, sl_error *err) {
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  int rc = sl_frame_recv(nd->fd, &type, &p, 10000, err);
  if (rc == SL_FRAME_TIMEOUT)
    rc = sl_error_set(err, SL_EIO, "node %s did not answer within 10 s",
                      nd->address);
  else if (rc == SL_OK && (type != SL_FRAME_HELLO || p.len < 4))
    rc = sl_error_set(err, SL_EIO,
                      "%s answered, but not as a Sluice node of this "
                      "version",
                      nd->address);
  char version[64];
  if (rc == SL_OK)
    rc = sl_hello_msg_decode(p.data, p.len, &nd->workers, version,
                             sizeof version, &nd->rdma, nd->rdma_device,
                             sizeof nd->rdma_device, err);
  /* Frames and layouts are native (node_frames.h): one build on every side. */
  if (rc == SL_OK && strcmp(version, sl_version()) != 0)
    rc = sl_error_set(err, SL_EINVAL,
                      "%s runs Sluice %s, this shell %s: every node must run "
                      "the shell's build",
                      nd->address, version, sl_version());
  nd->healthy = rc == SL_OK;
  sl_strbuf_free(&p);
  return rc;
}

int sl_cluster_spawn(sl_cluster **out, int n, const sl_secret *secret,
                     sl_node_serve_fn serve, sl_error *err) {
  *out = NULL;
  sl_cluster *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  c->nodes = calloc((size_t)n, sizeof *c->nodes);
  if (!c->nodes)
    abort();
  c->spawned = true;
  fflush(NULL); /* the child must not write the parent's buffered output */
  for (int i = 0; i < n; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
      sl_cluster_free(c);
      return sl_error_set(err, SL_EIO, "cannot create a socket for node %d: %s",
                          i, strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(sv[0]);
      close(sv[1]);
      sl_cluster_free(c);
      return sl_error_set(err, SL_EIO, "cannot start node %d: %s", i,
                          strerror(errno));
    }
    if (pid == 0) {
      /* The node: only its own end stays open (and stdio), so that the
       * coordinator closing any other node's socket, of this cluster or
       * another of the session's, ends that node. */
      if (sv[1] > 3)
        close_range(3, (unsigned)sv[1] - 1, 0);
      close_range((unsigned)sv[1] + 1, ~0u, 0);
      signal(SIGINT, SIG_IGN); /* Ctrl-C is the coordinator's to handle */
      int rc = serve(sv[1], secret);
      _exit(rc == SL_OK ? 0 : 1);
    }
    close(sv[1]);
    sl_cluster_node *nd = &c->nodes[c->n++];
    nd->fd = sv[0];
    nd->pid = pid;
    char buf[64];
    snprintf(buf, sizeof buf, "local pid %d", (int)pid);
    nd->address = strdup(buf);
    int rc = hello(nd, err);
    if (rc != SL_OK) {
      sl_cluster_free(c);
      return rc;
    }
  }
  *out = c;
  return SL_OK;
}

/* connect(2), given up after timeout_ms (a host that is gone answers
 * nothing, and the kernel would try for minutes): 0, or -1 with errno. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len,
                          int timeout_ms) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int r = connect(fd, sa, len);
  if (r != 0 && errno == EINPROGRESS) {
    struct pollfd p = {fd, POLLOUT, 0};
    int k;
    do
      k = poll(&p, 1, timeout_ms);
    while (k < 0 && errno == EINTR);
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (k == 0) {
      soerr = ETIMEDOUT;
    } else if (k > 0) {
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    } else {
      soerr = errno;
    }
    r = soerr ? -1 : 0;
    errno = soerr;
  }
  int saved = errno;
  fcntl(fd, F_SETFL, flags);
  errno = saved;
  return r;
}

/* "host:port" -> a connected TCP socket within timeout_ms, or -1 with
 * err set. */
static int dial(const char *address, int timeout_ms, sl_error *err) {
  char host[256];
  const char *colon = strrchr(address, ':');
  if (!colon || colon == address || (size_t)(colon - address) >= sizeof host) {
    sl_error_set(err, SL_EINVAL, "'%s' is not host:port", address);
    return -1;
  }
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = '\0';
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int g = getaddrinfo(host, colon + 1, &hints, &res);
  if (g != 0) {
    sl_error_set(err, SL_EIO, "cannot resolve '%s': %s", address,
                 gai_strerror(g));
    return -1;
  }
  int fd = -1, e = 0;
  for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 &&
        connect_within(fd, a->ai_addr, a->ai_addrlen, timeout_ms) != 0) {
      e = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    sl_error_set(err, SL_EIO,
                 "cannot connect to the node at %s: %s (is `sluice node "
                 "--listen %s --secret-file FILE` running there?)",
                 address, strerror(e), address);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int sl_cluster_connect(sl_cluster **out, const char *list,
                       const sl_secret *secret, sl_error *err) {
  *out = NULL;
  if (!secret || !secret->set)
    return sl_error_set(err, SL_EINVAL,
                        "joining nodes needs the cluster secret: start the "
                        "shell with --secret-file FILE, the file the nodes "
                        "were started with");
  sl_cluster *c = calloc(1, sizeof *c);
  if (!c)
    abort();
  char *copy = strdup(list), *save = NULL;
  int cap = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (c->n == cap) {
      cap = cap ? cap * 2 : 4;
      c->nodes = realloc(c->nodes, sizeof *c->nodes * (size_t)cap);
      if (!c->nodes)
        abort();
    }
    int fd = dial(tok, 5000, err);
    if (fd < 0) {
      free(copy);
      sl_cluster_free(c);
      return err->code;
    }
    sl_cluster_node *nd = &c->nodes[c->n++];
    memset(nd, 0, sizeof *nd);
    nd->fd = fd;
    nd->address = strdup(tok);
    int rc = sl_auth_connect(fd, secret, 10000, err);
    if (rc != SL_OK)
      about_node(err, rc, c->n - 1, tok);
    else
      rc = hello(nd, err);
    if (rc != SL_OK) {
      free(copy);
      sl_cluster_free(c);
      return rc;
    }
  }
  free(copy);
  if (c->n == 0) {
    sl_cluster_free(c);
    return sl_error_set(err, SL_EINVAL, "no node addresses in '%s'", list);
  }
  *out = c;
  return SL_OK;
}

void sl_cluster_free(sl_cluster *c) {
  if (!c)
    return;
  for (int i = 0; i < c->n; i++) {
    close(c->nodes[i].fd);      /* a node ends when its connection does */
    reap_node(&c->nodes[i], i); /* one that crashed meanwhile says so */
    if (c->nodes[i].pid > 0 && !c->nodes[i].reaped) {
      int status;
      pid_t r = waitpid(c->nodes[i].pid, &status, WNOHANG);
      if (r == 0) {
        /* Give it a moment to see the end of its connection. */
        for (int k = 0; k < 200 && r == 0; k++) {
          usleep(10000);
          r = waitpid(c->nodes[i].pid, &status, WNOHANG);
        }
        if (r == 0) {
          kill(c->nodes[i].pid, SIGKILL);
          waitpid(c->nodes[i].pid, &status, 0);
        }
      }
    }
    free(c->nodes[i].address);
  }
  free(c->nodes);
  sl_strbuf_free(&c->gone);
  free(c);
}

/* Wait for OK or ERROR from node i. */
static int answer(sl_cluster *c, int i, sl_error *err) {
  sl_cluster_node *nd = &c->nodes[i];
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  int rc;
  /* A statement applies to the catalog or settings at once: a node that
   * says nothing for 10 s hangs. */
  rc = sl_frame_recv(nd->fd, &type, &p, 10000, err);
  if (rc == SL_FRAME_TIMEOUT)
    rc = sl_error_set(err, SL_EIO, "did not answer within 10 s");
  if (rc != SL_OK) {
    broken(c, i);
    sl_strbuf_free(&p);
    return about_node(err, SL_EIO, i, nd->address);
  }
  int code, mlen;
  const char *msg;
  if (type == SL_FRAME_ERROR &&
      sl_error_msg_decode(p.data, p.len, &code, &msg, &mlen, err) == SL_OK) {
    rc = sl_error_set(err, code, "node %d (%s): %.*s", i, nd->address, mlen,
                      msg);
  } else if (type != SL_FRAME_OK) {
    broken(c, i);
    rc = sl_error_set(err, SL_EIO,
                      "node %d (%s) sent message %u instead of "
                      "an answer",
                      i, nd->address, type);
  }
  sl_strbuf_free(&p);
  return rc;
}

int sl_cluster_exec_node(sl_cluster *c, int i, const char *text, size_t len,
                         sl_error *err) {
  sl_cluster_node *nd = &c->nodes[i];
  if (!nd->healthy)
    return SL_OK;
  if (sl_frame_send(nd->fd, SL_FRAME_EXEC, text, len, NULL, 0, err) != SL_OK) {
    broken(c, i);
    sl_error_clear(err);
    return SL_OK;
  }
  int rc = answer(c, i, err);
  if (rc != SL_OK && !nd->healthy) { /* it broke: not the statement's fault */
    sl_error_clear(err);
    rc = SL_OK;
  }
  return rc;
}

int sl_cluster_exec(sl_cluster *c, const char *text, size_t len,
                    sl_error *err) {
  /* Sent to every node first, so that they apply it at once. */
  for (int i = 0; i < c->n; i++) {
    sl_cluster_node *nd = &c->nodes[i];
    if (nd->healthy &&
        sl_frame_send(nd->fd, SL_FRAME_EXEC, text, len, NULL, 0, err) != SL_OK)
      broken(c, i);
    sl_error_clear(err);
  }
  int rc = SL_OK;
  for (int i = 0; i < c->n && rc == SL_OK; i++) {
    if (!c->nodes[i].healthy)
      continue;
    rc = answer(c, i, err);
    if (rc != SL_OK && !c->nodes[i].healthy) {
      sl_error_clear(err);
      rc = SL_OK;
    }
  }
  return rc;
}

int sl_cluster_rejoin(sl_cluster *c, int i, const sl_secret *secret,
                      sl_error *err) {
  sl_cluster_node *nd = &c->nodes[i];
  if (nd->pid > 0)
    return sl_error_set(err, SL_EINVAL,
                        "a forked node is started again, "
                        "not joined");
  close(nd->fd);
  nd->fd = dial(nd->address, 5000, err);
  if (nd->fd < 0)
    return err->code;
  int rc = sl_auth_connect(nd->fd, secret, 10000, err);
  if (rc == SL_OK)
    rc = hello(nd, err);
  return rc;
}

void sl_cluster_drop(sl_cluster *c, int i) {
  sl_cluster_node *nd = &c->nodes[i];
  if (nd->fd >= 0)
    close(nd->fd);
  if (nd->pid > 0 && !nd->reaped) {
    kill(nd->pid, SIGKILL);
    waitpid(nd->pid, NULL, 0);
  }
  sl_strbuf_printf(&c->gone, "%s%s", c->gone.len ? ", " : "", nd->address);
  free(nd->address);
  memmove(nd, nd + 1, sizeof *nd * (size_t)(c->n - i - 1));
  c->n--;
}

void sl_cluster_check_idle(sl_cluster *c) {
  for (int i = 0; i < c->n; i++) {
    if (!c->nodes[i].healthy)
      continue;
    /* Between statements a node sends nothing (SYNC_ACK was its last
     * word): anything to read is the end of its connection (its process
     * died, its daemon restarted) or a node out of step. */
    struct pollfd p = {c->nodes[i].fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 1 && p.revents)
      broken(c, i);
  }
}

int sl_cluster_rejoin_gone(sl_cluster *c, const sl_secret *secret,
                           const char *const *log, const size_t *log_len,
                           int nlog, sl_strbuf *said) {
  if (!c->gone.len || c->spawned)
    return 0;
  char *list = sl_strbuf_detach(&c->gone);
  sl_strbuf who = SL_STRBUF_INIT;
  int back = 0;
  char *save = NULL;
  for (char *a = strtok_r(list, ", ", &save); a;
       a = strtok_r(NULL, ", ", &save)) {
    sl_error why = {0};
    /* Tried before every statement while it is gone: briefly. */
    int fd = dial(a, 1000, &why);
    int rc = fd >= 0 ? sl_auth_connect(fd, secret, 2000, &why) : why.code;
    sl_cluster_node nd = {.fd = fd};
    if (rc == SL_OK) {
      nd.address = a;
      rc = hello(&nd, &why);
    }
    if (rc != SL_OK) { /* still gone */
      if (fd >= 0)
        close(fd);
      sl_strbuf_printf(&c->gone, "%s%s", c->gone.len ? ", " : "", a);
      sl_error_clear(&why);
      continue;
    }
    c->nodes = realloc(c->nodes, sizeof *c->nodes * (size_t)(c->n + 1));
    if (!c->nodes)
      abort();
    nd.address = strdup(a);
    if (!nd.address)
      abort();
    c->nodes[c->n++] = nd;
    /* Its catalog and settings, as the others' (a statement it refuses
     * now would have failed on it before: it is marked broken). */
    for (int k = 0; k < nlog && c->nodes[c->n - 1].healthy; k++)
      if (sl_cluster_exec_node(c, c->n - 1, log[k], log_len[k], &why) != SL_OK)
        broken(c, c->n - 1);
    sl_error_clear(&why);
    back++;
    sl_strbuf_printf(&who, "%s%s", who.len ? ", " : "", a);
  }
  free(list);
  if (back > 0)
    sl_strbuf_printf(said,
                     "[INFO] the node daemon%s at %s answer%s again: joined "
                     "again; queries run on %d nodes.",
                     back > 1 ? "s" : "", sl_strbuf_cstr(&who),
                     back > 1 ? "" : "s", c->n);
  sl_strbuf_free(&who);
  return back;
}

void sl_cluster_addresses(const sl_cluster *c, sl_strbuf *out) {
  for (int i = 0; i < c->n; i++)
    sl_strbuf_printf(out, "%s%s", i ? "," : "", c->nodes[i].address);
}

int sl_cluster_query(sl_cluster *c, const char *text, size_t len, int leaf,
                     int fed, int nfed, int join, int strategy, int across,
                     const sl_strbuf *addrs, sl_error *err) {
  /* Names the query's shared-memory channels: unique per process, cluster
   * and query (the coordinator's pid, the cluster's tag, a counter). */
  uint64_t id = ((uint64_t)getpid() << 32) | (uint64_t)(c->tag & 0xff) << 24 |
                (++c->queries & 0xffffff);
  sl_strbuf head = SL_STRBUF_INIT;
  for (int i = 0; i < c->n; i++) {
    sl_query_msg m = {.node_index = i,
                      .node_count = c->n,
                      .strategy = strategy,
                      .transport = across,
                      .query_id = id,
                      .leaf = leaf,
                      .fed = fed,
                      .nfed = nfed,
                      .join = join,
                      .addrs = addrs ? addrs->data : NULL,
                      .addrs_len = addrs ? addrs->len : 0};
    sl_strbuf_reset(&head);
    sl_query_msg_encode(&m, &head);
    int rc = sl_frame_send(c->nodes[i].fd, SL_FRAME_QUERY, head.data, head.len,
                           text, len, err);
    if (rc != SL_OK) {
      broken(c, i);
      sl_strbuf_free(&head);
      return about_node(err, SL_EIO, i, c->nodes[i].address);
    }
  }
  sl_strbuf_free(&head);
  return SL_OK;
}

int sl_cluster_xlisten(sl_cluster *c, int what, int transport, sl_strbuf *addrs,
                       sl_error *err) {
  sl_strbuf p = SL_STRBUF_INIT;
  int rc = SL_OK;
  for (int i = 0; i < c->n && rc == SL_OK; i++) {
    sl_xlisten_msg m = {i, c->n, what, transport};
    sl_strbuf_reset(&p);
    sl_xlisten_msg_encode(&m, &p);
    rc = sl_frame_send(c->nodes[i].fd, SL_FRAME_XLISTEN, p.data, p.len, NULL, 0,
                       err);
  }
  for (int i = 0; i < c->n && rc == SL_OK; i++) {
    uint32_t type = 0;
    rc = sl_frame_recv(c->nodes[i].fd, &type, &p, 10000, err);
    if (rc == SL_FRAME_TIMEOUT)
      rc = sl_error_set(err, SL_EIO, "no answer within 10 s");
    else if (rc == SL_OK && type == SL_FRAME_ERROR) {
      int code, mlen;
      const char *msg;
      rc = sl_error_msg_decode(p.data, p.len, &code, &msg, &mlen, err);
      if (rc == SL_OK)
        rc = sl_error_set(err, SL_EIO, "%.*s", mlen, msg);
    } else if (rc == SL_OK && type != SL_FRAME_XADDR)
      rc = sl_error_set(err, SL_EIO, "sent message %u instead of XADDR", type);
    if (rc == SL_OK)
      sl_strbuf_appendn(addrs, p.data, p.len);
    else {
      broken(c, i);
      rc = about_node(err, SL_EIO, i, c->nodes[i].address);
    }
  }
  sl_strbuf_free(&p);
  return rc;
}

/* SYNC every healthy node, then skip each one's messages up to its
 * SYNC_ACK; a node that is gone or silent for timeout_ms is marked
 * broken. */
static void round_trip(sl_cluster *c, int timeout_ms) {
  sl_error err = {0};
  sl_strbuf p = SL_STRBUF_INIT;
  for (int i = 0; i < c->n; i++) {
    sl_cluster_node *nd = &c->nodes[i];
    if (nd->healthy &&
        sl_frame_send(nd->fd, SL_FRAME_SYNC, NULL, 0, NULL, 0, &err) != SL_OK)
      broken(c, i);
  }
  for (int i = 0; i < c->n; i++) {
    sl_cluster_node *nd = &c->nodes[i];
    while (nd->healthy) {
      uint32_t type;
      int rc = sl_frame_recv(nd->fd, &type, &p, timeout_ms, &err);
      if (rc != SL_OK)
        broken(c, i);
      else if (type == SL_FRAME_SYNC_ACK)
        break;
    }
  }
  sl_strbuf_free(&p);
  sl_error_clear(&err);
}

void sl_cluster_ping(sl_cluster *c) {
  round_trip(c, 2000);
}

void sl_cluster_sync(sl_cluster *c) {
  /* A node still stopping a large query says HEARTBEAT meanwhile. */
  round_trip(c, SL_SILENCE_MS);
}

const int *sl_cluster_fds(const sl_cluster *c, int *buf) {
  for (int i = 0; i < c->n; i++)
    buf[i] = c->nodes[i].fd;
  return buf;
}

int sl_cluster_transport(const sl_cluster *c, const char *want, int *transport,
                         char *device, size_t device_size, sl_error *err) {
  if (device && device_size)
    device[0] = '\0';
  int no_rdma = -1; /* the first node without an RDMA device */
  for (int i = 0; i < c->n && no_rdma < 0; i++)
    if (!c->nodes[i].rdma)
      no_rdma = i;
  if (!want || !strcmp(want, "auto")) {
    /* One host: shared memory beats any network path. */
    *transport = c->spawned                ? SL_XPORT_SHM
                 : no_rdma < 0 && c->n > 0 ? SL_XPORT_VERBS
                                           : SL_XPORT_TCP;
  } else if (!strcmp(want, "shm")) {
    if (!c->spawned)
      return sl_error_set(err, SL_EINVAL,
                          "the shm transport joins only nodes forked on this "
                          "host (--nodes N); daemons joined with --cluster "
                          "use tcp or verbs (SET 'sluice.transport' = "
                          "'auto')");
    *transport = SL_XPORT_SHM;
  } else if (!strcmp(want, "tcp")) {
    *transport = SL_XPORT_TCP;
  } else if (!strcmp(want, "verbs")) {
    if (no_rdma >= 0)
      return sl_error_set(err, SL_EINVAL,
                          "the verbs transport needs an active RDMA device "
                          "on every node, and node %d (%s) has none: %s "
                          "(check `ibv_devinfo` there, or SET "
                          "'sluice.transport' = 'auto')",
                          no_rdma, c->nodes[no_rdma].address,
                          c->nodes[no_rdma].rdma_device);
    *transport = SL_XPORT_VERBS;
  } else {
    return sl_error_set(err, SL_EINVAL,
                        "unknown transport '%s' (auto, verbs, shm or tcp)",
                        want);
  }
  if (*transport == SL_XPORT_VERBS && device && device_size && c->n > 0) {
    /* "rxe0 10.0.2.15 1 Ethernet" -> "rxe0" */
    const char *d = c->nodes[0].rdma_device;
    size_t len = strcspn(d, " ");
    snprintf(device, device_size, "%.*s", (int)len, d);
  }
  return SL_OK;
}

void sl_cluster_describe(const sl_cluster *c, sl_strbuf *out) {
  for (int i = 0; i < c->n; i++) {
    const sl_cluster_node *nd = &c->nodes[i];
    sl_strbuf_printf(out, "node %d  %s  control=%s  workers=%d  ", i,
                     nd->address, nd->pid > 0 ? "unix socket" : "tcp",
                     nd->workers);
    if (nd->rdma)
      sl_strbuf_printf(out, "rdma=%s", nd->rdma_device);
    else
      sl_strbuf_printf(out, "rdma=none (%s)", nd->rdma_device);
    sl_strbuf_printf(out, "  %s\n", nd->healthy ? "healthy" : "broken");
  }
  if (c->gone.len)
    sl_strbuf_printf(out,
                     "degraded: %d node%s left; gone (they broke and could "
                     "not be joined again): %s\n",
                     c->n, c->n == 1 ? "" : "s", sl_strbuf_cstr(&c->gone));
}
