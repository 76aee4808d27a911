/* cluster.c - starting, joining and talking to the nodes of a cluster
 * (cluster.h, node.h). */
#include "cluster.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/node.h"

/* err's message prefixed with the node (sl_error_set would free the
 * message it is given before formatting it). */
static int about_node(sl_error *err, int code, int i, const char *address) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", err->message ? err->message : "failed");
  return sl_error_set(err, code, "node %d (%s): %s", i, address, msg);
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
  if (rc == SL_OK) {
    uint32_t w;
    memcpy(&w, p.data, sizeof w);
    nd->workers = (int)w;
    nd->healthy = true;
    /* "version\nrdma NAME ADDRESS PORT LINK" or "...\nrdma - WHY" */
    const char *text = p.data + 4, *end = p.data + p.len;
    const char *line = memchr(text, '\n', (size_t)(end - text));
    nd->rdma = false;
    snprintf(nd->rdma_device, sizeof nd->rdma_device, "not reported");
    if (line && end - line > 6 && memcmp(line, "\nrdma ", 6) == 0) {
      line += 6;
      nd->rdma = *line != '-';
      if (!nd->rdma && end - line >= 2)
        line += 2;
      snprintf(nd->rdma_device, sizeof nd->rdma_device, "%.*s",
               (int)(end - line), line);
    }
  }
  sl_strbuf_free(&p);
  return rc;
}

int sl_cluster_spawn(sl_cluster **out, int n, const sl_secret *secret,
                     sl_error *err) {
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
      int rc = sl_node_serve(sv[1], secret);
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

/* "host:port" -> a connected TCP socket, or -1 with err set. */
static int dial(const char *address, sl_error *err) {
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
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
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
    int fd = dial(tok, err);
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
    close(c->nodes[i].fd); /* a node ends when its connection does */
    if (c->nodes[i].pid > 0) {
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
  free(c);
}

/* Wait for OK or ERROR from node i. */
static int answer(sl_cluster *c, int i, sl_error *err) {
  sl_cluster_node *nd = &c->nodes[i];
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  int rc;
  for (;;) {
    rc = sl_frame_recv(nd->fd, &type, &p, -1, err);
    if (rc != SL_OK || type != SL_FRAME_CANCEL)
      break; /* (a CANCEL is never sent to us; ignore nothing else) */
  }
  if (rc != SL_OK) {
    nd->healthy = false;
    sl_strbuf_free(&p);
    return about_node(err, SL_EIO, i, nd->address);
  }
  if (type == SL_FRAME_ERROR && p.len >= 4) {
    int32_t code;
    memcpy(&code, p.data, sizeof code);
    rc = sl_error_set(err, code < 0 ? code : SL_EINTERNAL, "node %d (%s): %.*s",
                      i, nd->address, (int)(p.len - 4), p.data + 4);
  } else if (type != SL_FRAME_OK) {
    nd->healthy = false;
    rc = sl_error_set(err, SL_EIO,
                      "node %d (%s) sent message %u instead of "
                      "an answer",
                      i, nd->address, type);
  }
  sl_strbuf_free(&p);
  return rc;
}

int sl_cluster_exec(sl_cluster *c, const char *text, size_t len,
                    sl_error *err) {
  int rc = SL_OK;
  for (int i = 0; i < c->n && rc == SL_OK; i++)
    rc = sl_frame_send(c->nodes[i].fd, SL_FRAME_EXEC, text, len, NULL, 0, err);
  for (int i = 0; i < c->n && rc == SL_OK; i++)
    rc = answer(c, i, err);
  return rc;
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
    uint32_t h[9] = {(uint32_t)i,
                     (uint32_t)c->n,
                     (uint32_t)strategy,
                     (uint32_t)across,
                     (uint32_t)id,
                     (uint32_t)(id >> 32),
                     (uint32_t)(addrs ? addrs->len : 0),
                     (uint32_t)(leaf + 1),
                     ((uint32_t)(fed + 1) & 0xff) |
                         ((uint32_t)nfed & 0xff) << 8 | (uint32_t)join << 16};
    sl_strbuf_reset(&head);
    sl_strbuf_appendn(&head, (const char *)h, sizeof h);
    if (addrs && addrs->len)
      sl_strbuf_appendn(&head, addrs->data, addrs->len);
    int rc = sl_frame_send(c->nodes[i].fd, SL_FRAME_QUERY, head.data, head.len,
                           text, len, err);
    if (rc != SL_OK) {
      c->nodes[i].healthy = false;
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
    uint32_t h[4] = {(uint32_t)i, (uint32_t)c->n, (uint32_t)what,
                     (uint32_t)transport};
    rc = sl_frame_send(c->nodes[i].fd, SL_FRAME_XLISTEN, h, sizeof h, NULL, 0,
                       err);
  }
  for (int i = 0; i < c->n && rc == SL_OK; i++) {
    uint32_t type = 0;
    rc = sl_frame_recv(c->nodes[i].fd, &type, &p, 10000, err);
    if (rc == SL_FRAME_TIMEOUT)
      rc = sl_error_set(err, SL_EIO, "no answer within 10 s");
    else if (rc == SL_OK && type == SL_FRAME_ERROR && p.len >= 4)
      rc = sl_error_set(err, SL_EIO, "%.*s", (int)(p.len - 4), p.data + 4);
    else if (rc == SL_OK && type != SL_FRAME_XADDR)
      rc = sl_error_set(err, SL_EIO, "sent message %u instead of XADDR", type);
    if (rc == SL_OK)
      sl_strbuf_appendn(addrs, p.data, p.len);
    else {
      c->nodes[i].healthy = false;
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
      nd->healthy = false;
  }
  for (int i = 0; i < c->n; i++) {
    sl_cluster_node *nd = &c->nodes[i];
    while (nd->healthy) {
      uint32_t type;
      int rc = sl_frame_recv(nd->fd, &type, &p, timeout_ms, &err);
      if (rc != SL_OK)
        nd->healthy = false;
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
  round_trip(c, 10000); /* a node may still be stopping a large query */
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
}
