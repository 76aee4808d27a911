/* channel_verbs_connect.c - how the two ends of a verbs channel meet, on
 * librdmacm over IP addresses (the data path is channel_verbs.c): the
 * listener (sl_channel_listen("verbs", ...)), the connecting and the
 * accepting end, the hello they exchange in the connection's private data
 * (the same checks as sl_endpoint_hello: magic, version, opposite roles,
 * equal shapes, plus the peer's ring address and rkey), the verbs objects
 * of a connection, and the device probe for transport selection.
 *
 * CONNECT: rdma_resolve_addr, rdma_resolve_route, create the QP and
 * register the ring on the route's device, rdma_connect with our hello in
 * the REQ; the REP brings the acceptor's.  A REJECT without a hello
 * (nobody listens there yet, or the listener is used up) and an
 * unreachable peer are retried every 10 ms until the endpoint's deadline,
 * so either process may start first; a REJECT carrying a hello means the
 * acceptor refused our shape or role, and both ends fail saying so.
 *
 * ACCEPT: see accept_end for how a listener made by sl_channel_listen is
 * consumed through nothing but its descriptor.
 *
 * THE CLUSTER SECRET (ep->secret): rdma_cm allows no round trip before the
 * connection, so the proofs ride in the private data (verbs_req and
 * verbs_rep).  The connector sends a fresh nonce and a tag over the
 * listener's port, the nonce and its hello; the acceptor checks it before
 * anything else and REJECTs a wrong one (its hello marked
 * VERBS_REFUSED_SECRET, so the connector can say why), else answers with
 * a tag over the nonce and its own hello, which the connector checks
 * before it writes a byte.  A recorded REQ could only be replayed to a
 * listener on the same port that has not accepted yet: each listener
 * accepts one channel, and its port is handed out over a connection that
 * proved the secret. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel_verbs_int.h"
#include "sluice/common/clock.h"
#include "sluice/net/auth.h"

#define RETRY_NS (10 * 1000 * 1000)
/* Local ACK timeout of the queue pair: 4.096 us * 2^16 = 268 ms, retried 7
 * times: a peer that stopped answering fails a WRITE within ~2 s. */
#define ACK_TIMEOUT 16
#define RETRY_COUNT 7
#define MAX_INLINE 64

void sl_verbs_format_addr(const struct sockaddr *sa, char *out, size_t n) {
  char h[INET6_ADDRSTRLEN] = "?";
  if (sa && sa->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &s4->sin_addr, h, sizeof h);
    snprintf(out, n, "%s:%u", h, (unsigned)ntohs(s4->sin_port));
  } else if (sa && sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof h);
    snprintf(out, n, "[%s]:%u", h, (unsigned)ntohs(s6->sin6_port));
  } else
    snprintf(out, n, "an unknown address");
}

/* "host:port" or "[v6]:port" -> a socket address.  SL_OK or SL_EINVAL /
 * SL_EIO. */
static int parse_address(const char *address, struct sockaddr_storage *ss,
                         sl_error *err) {
  const char *colon = address ? strrchr(address, ':') : NULL;
  if (!colon || colon == address || !colon[1])
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel address '%s' is not ip:port",
                        address ? address : "(null)");
  char host[256];
  const char *h = address;
  size_t hl = (size_t)(colon - address);
  if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
    h++;
    hl -= 2;
  }
  if (hl >= sizeof host)
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel address '%s' is too long", address);
  memcpy(host, h, hl);
  host[hl] = 0;
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  int g = getaddrinfo(host, colon + 1, &hints, &ai);
  if (g != 0)
    return sl_error_set(err, g == EAI_NONAME ? SL_EIO : SL_EINVAL,
                        "verbs channel: cannot resolve '%s': %s", address,
                        gai_strerror(g));
  memset(ss, 0, sizeof *ss);
  memcpy(ss, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  return SL_OK;
}

/* Wait for fd to be readable.  1 ready, 0 deadline passed, < 0 errno. */
static int wait_readable(int fd, int64_t deadline_ns) {
  for (;;) {
    int ms = -1;
    if (deadline_ns >= 0) {
      int64_t left = deadline_ns - sl_clock_ns();
      if (left <= 0)
        return 0;
      ms = left / 1000000 + 1 > 1000000 ? 1000000 : (int)(left / 1000000 + 1);
    }
    struct pollfd p = {fd, POLLIN, 0};
    int n = poll(&p, 1, ms);
    if (n > 0)
      return 1;
    if (n < 0 && errno != EINTR)
      return -errno;
  }
}

/* --- the hello --- */

static verbs_hello make_hello(const verbs_channel *v, sl_channel_role role,
                              const sl_channel_config *shape) {
  verbs_hello h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, "SLCV", 4);
  h.version = VERBS_HELLO_VERSION;
  h.role = (uint8_t)role;
  h.credits = shape->credits;
  h.slot_size = shape->slot_size;
  h.pid = (int32_t)getpid();
  if (v->mr) {
    h.rkey = v->mr->rkey;
    h.addr = (uintptr_t)v->mem;
  }
  return h;
}

/* A hello in connection private data, if there is one (the IB CM pads
 * private data with zeros, so the length says little: the magic decides). */
static int get_hello(const void *data, uint8_t len, verbs_hello *out) {
  if (!data || len < sizeof *out)
    return 0;
  memcpy(out, data, sizeof *out);
  return memcmp(out->magic, "SLCV", 4) == 0;
}

static int check_hello(const verbs_hello *peer, sl_channel_role role,
                       const sl_channel_config *shape, const char *where,
                       sl_error *err) {
  const char *rname = role == SL_CHANNEL_PRODUCER ? "producer" : "consumer";
  if (memcmp(peer->magic, "SLCV", 4) != 0 ||
      peer->version != VERBS_HELLO_VERSION)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: %s is not a Sluice channel end of "
                        "this version (bad hello)",
                        where);
  if (peer->role == (uint8_t)role)
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel: both ends are %ss (this process and "
                        "pid %d at %s): one must be the consumer",
                        rname, (int)peer->pid, where);
  if (peer->credits != shape->credits || peer->slot_size != shape->slot_size)
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel: the ends disagree on the shape: this "
                        "%s has %u credits x %u bytes, pid %d at %s has %u x "
                        "%u; configure both ends alike",
                        rname, shape->credits, shape->slot_size, (int)peer->pid,
                        where, peer->credits, peer->slot_size);
  return SL_OK;
}

/* --- the cluster secret in the private data --- */

/* The connector's tag: over the listener's port (a recorded REQ is
 * worthless at any other listener, and a listener accepts once), its
 * nonce and its hello. */
static void req_tag(const sl_secret *secret, uint16_t port,
                    const unsigned char nonce[8], const verbs_hello *h,
                    unsigned char out[16]) {
  const void *parts[4] = {"SLCV-REQ", &port, nonce, h};
  const size_t lens[4] = {8, sizeof port, 8, sizeof *h};
  unsigned char mac[32];
  sl_auth_mac(secret, 4, parts, lens, mac);
  memcpy(out, mac, 16);
}

/* The acceptor's: over the connector's nonce (fresh) and its own hello. */
static void rep_tag(const sl_secret *secret, const unsigned char nonce[8],
                    const verbs_hello *h, unsigned char out[16]) {
  const void *parts[3] = {"SLCV-REP", nonce, h};
  const size_t lens[3] = {8, 8, sizeof *h};
  unsigned char mac[32];
  sl_auth_mac(secret, 3, parts, lens, mac);
  memcpy(out, mac, 16);
}

static uint16_t port_of(const struct sockaddr *sa) {
  if (sa && sa->sa_family == AF_INET)
    return ntohs(((const struct sockaddr_in *)sa)->sin_port);
  if (sa && sa->sa_family == AF_INET6)
    return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
  return 0;
}

/* --- the verbs objects of a connection --- */

int sl_verbs_setup_qp(verbs_channel *v, sl_error *err) {
  struct ibv_context *ctx = v->id->verbs;
  const char *dev = ctx ? ibv_get_device_name(ctx->device) : "?";
  struct ibv_device_attr da;
  int e;
  if (!ctx)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: the connection to %s has no RDMA "
                        "device",
                        v->where);
  if ((e = ibv_query_device(ctx, &da)) != 0)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: ibv_query_device(%s) failed: %s", dev,
                        strerror(e));
  /* Two work requests per slot in flight, closed_at, and the reserved
   * room (channel_verbs.c); 16 at least, so that a full queue always holds
   * a signaled request (below). */
  uint64_t depth = 2ull * v->ring.base.credits + 8;
  if (depth < 16)
    depth = 16;
  if (depth > (uint64_t)da.max_qp_wr)
    depth = (uint64_t)da.max_qp_wr;
  if (depth < 16)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: %s allows only %d work requests per "
                        "queue pair",
                        dev, da.max_qp_wr);
  v->sq_depth = (uint32_t)depth;
  /* A full queue (all but 2 + 2 entries used) must hold a signaled
   * request, or reaping could not free it. */
  v->signal_every = (v->sq_depth - 4) / 2;
  if (v->signal_every > 16)
    v->signal_every = 16;
  free(v->sig);
  v->sig = calloc(v->sq_depth, sizeof *v->sig);
  if (!v->sig)
    return sl_error_set(err, SL_ENOMEM, "out of memory for a verbs channel");
  int cqe = (int)v->sq_depth + 4;
  if (cqe > da.max_cqe)
    cqe = da.max_cqe;
  if (!(v->pd = ibv_alloc_pd(ctx)))
    return sl_error_set(err, SL_EIO,
                        "verbs channel: ibv_alloc_pd on %s failed: %s", dev,
                        strerror(errno));
  if (!(v->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0)))
    return sl_error_set(err, SL_EIO,
                        "verbs channel: ibv_create_cq(%d) on %s failed: %s",
                        cqe, dev, strerror(errno));
  struct ibv_qp_init_attr qa;
  memset(&qa, 0, sizeof qa);
  qa.send_cq = v->cq;
  qa.recv_cq = v->cq;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 0;
  qa.cap.max_send_wr = v->sq_depth;
  qa.cap.max_recv_wr = 1;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = MAX_INLINE;
  if (rdma_create_qp(v->id, v->pd, &qa) != 0) {
    /* A device without inline data: the small WRITEs then read registered
     * memory like the others. */
    qa.cap.max_inline_data = 0;
    if (rdma_create_qp(v->id, v->pd, &qa) != 0)
      return sl_error_set(err, SL_EIO,
                          "verbs channel: creating the RC queue pair (%u "
                          "work requests) on %s for %s failed: %s",
                          v->sq_depth, dev, v->where, strerror(errno));
  }
  v->qp_made = 1;
  v->max_inline = qa.cap.max_inline_data;
  v->mr = ibv_reg_mr(v->pd, v->mem, v->mem_size,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!v->mr)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: ibv_reg_mr of %zu bytes on %s failed: "
                        "%s (is RLIMIT_MEMLOCK too low? see ulimit -l)",
                        v->mem_size, dev, strerror(errno));
  /* Before the QP reaches RTR/RTS (rdma_connect / rdma_accept).  Older
   * kernels lack the option: their default timeout only makes a vanished
   * host slower to notice. */
  uint8_t t = ACK_TIMEOUT;
  (void)rdma_set_option(v->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t,
                        sizeof t);
  return SL_OK;
}

void sl_verbs_teardown_qp(verbs_channel *v) {
  if (v->qp_made)
    rdma_destroy_qp(v->id);
  v->qp_made = 0;
  if (v->mr)
    ibv_dereg_mr(v->mr);
  v->mr = NULL;
  if (v->cq)
    ibv_destroy_cq(v->cq);
  v->cq = NULL;
  if (v->pd)
    ibv_dealloc_pd(v->pd);
  v->pd = NULL;
  if (v->id)
    rdma_destroy_id(v->id);
  v->id = NULL;
  v->posted = v->done = 0;
  v->unsignaled = 0;
  v->sig_head = v->sig_count = 0;
}

static struct rdma_conn_param conn_param(const void *data, uint8_t len) {
  struct rdma_conn_param p;
  memset(&p, 0, sizeof p);
  p.private_data = data;
  p.private_data_len = len;
  /* WRITEs only: no RDMA READ or atomic resources. */
  p.responder_resources = 0;
  p.initiator_depth = 0;
  p.retry_count = RETRY_COUNT;
  p.rnr_retry_count = 7;
  return p;
}

/* Keep an event's private data (zero-padded) in v->pdata. */
static void keep_pdata(verbs_channel *v, const void *data, uint8_t len) {
  memset(v->pdata, 0, sizeof v->pdata);
  if (data)
    memcpy(v->pdata, data, len < sizeof v->pdata ? len : sizeof v->pdata);
}

/* The next event of v->id on v->ec before the deadline.  SL_OK with *type,
 * *status and the peer's hello (if the private data has one), or
 * SL_CHANNEL_TIMEOUT, or SL_EIO. */
static int next_event(verbs_channel *v, int64_t deadline_ns,
                      enum rdma_cm_event_type *type, int *status,
                      verbs_hello *hello, int *has_hello, sl_error *err) {
  for (;;) {
    int w = wait_readable(v->ec->fd, deadline_ns);
    if (w == 0)
      return SL_CHANNEL_TIMEOUT;
    if (w < 0)
      return sl_error_set(err, SL_EIO,
                          "verbs channel: waiting for rdma_cm events from %s "
                          "failed: %s",
                          v->where, strerror(-w));
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(v->ec, &ev) != 0) {
      if (errno == EAGAIN || errno == EINTR)
        continue;
      return sl_error_set(err, SL_EIO,
                          "verbs channel: reading rdma_cm events for %s "
                          "failed: %s",
                          v->where, strerror(errno));
    }
    int mine = ev->id == v->id;
    *type = ev->event;
    *status = ev->status;
    *has_hello = get_hello(ev->param.conn.private_data,
                           ev->param.conn.private_data_len, hello);
    if (mine)
      keep_pdata(v, ev->param.conn.private_data,
                 ev->param.conn.private_data_len);
    rdma_ack_cm_event(ev);
    if (mine)
      return SL_OK;
    /* An event of an earlier attempt's id: stale. */
  }
}

/* Wait for `want` on v->id.  SL_OK, or an error naming `step`; *retry is
 * set when the failure may pass (the peer is not there yet). */
static int expect_event(verbs_channel *v, enum rdma_cm_event_type want,
                        const char *step, int64_t deadline_ns,
                        verbs_hello *hello, int *has_hello, int *retry,
                        sl_error *err) {
  enum rdma_cm_event_type t = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;
  *retry = 0;
  int rc = next_event(v, deadline_ns, &t, &status, hello, has_hello, err);
  if (rc == SL_CHANNEL_TIMEOUT)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: %s %s timed out: is the peer "
                        "process running and opening its end?",
                        step, v->where);
  if (rc != SL_OK || t == want)
    return rc;
  *retry = t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_UNREACHABLE ||
           t == RDMA_CM_EVENT_CONNECT_ERROR ||
           (t == RDMA_CM_EVENT_ADDR_ERROR && status == -ETIMEDOUT);
  const char *why = status < 0 ? strerror(-status) : "";
  if (t == RDMA_CM_EVENT_REJECTED)
    why = status == 8 ? "nobody listens on that port" : "rejected";
  return sl_error_set(err, SL_EIO, "verbs channel: %s %s failed: %s (%s%s)",
                      step, v->where, rdma_event_str(t), why,
                      t == RDMA_CM_EVENT_ADDR_ERROR ||
                              t == RDMA_CM_EVENT_ROUTE_ERROR
                          ? "; is there an RDMA device with a route to it? "
                            "see `rdma link`"
                          : "");
}

/* One connection attempt.  *retry is set for failures worth retrying. */
static int try_connect(verbs_channel *v, const struct sockaddr *dst,
                       sl_channel_role role, const sl_channel_config *shape,
                       const sl_secret *secret, int64_t deadline_ns,
                       verbs_hello *peer, int *retry, sl_error *err) {
  *retry = 0;
  int has = 0;
  if (rdma_create_id(v->ec, &v->id, v, RDMA_PS_TCP) != 0)
    return sl_error_set(err, SL_EIO, "verbs channel: rdma_create_id failed: %s",
                        strerror(errno));
  int64_t left_ms =
      deadline_ns < 0 ? 2000 : (deadline_ns - sl_clock_ns()) / 1000000;
  int ms = left_ms > 2000 ? 2000 : left_ms < 1 ? 1 : (int)left_ms;
  if (rdma_resolve_addr(v->id, NULL, (struct sockaddr *)dst, ms) != 0)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: rdma_resolve_addr to %s failed: %s "
                        "(no RDMA device has a route to it? see `rdma link`)",
                        v->where, strerror(errno));
  int rc = expect_event(v, RDMA_CM_EVENT_ADDR_RESOLVED, "rdma_resolve_addr to",
                        deadline_ns, peer, &has, retry, err);
  if (rc != SL_OK)
    return rc;
  if (rdma_resolve_route(v->id, ms) != 0)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: rdma_resolve_route to %s failed: %s",
                        v->where, strerror(errno));
  rc = expect_event(v, RDMA_CM_EVENT_ROUTE_RESOLVED, "rdma_resolve_route to",
                    deadline_ns, peer, &has, retry, err);
  if (rc != SL_OK)
    return rc;
  if ((rc = sl_verbs_setup_qp(v, err)) != SL_OK)
    return rc;
  verbs_req req;
  memset(&req, 0, sizeof req);
  req.hello = make_hello(v, role, shape);
  if (secret) {
    sl_auth_random(req.nonce, sizeof req.nonce);
    req_tag(secret, port_of(dst), req.nonce, &req.hello, req.tag);
  }
  struct rdma_conn_param p =
      conn_param(&req, secret ? sizeof req : sizeof req.hello);
  if (rdma_connect(v->id, &p) != 0)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: rdma_connect to %s failed: %s",
                        v->where, strerror(errno));
  rc = expect_event(v, RDMA_CM_EVENT_ESTABLISHED, "rdma_connect to",
                    deadline_ns, peer, &has, retry, err);
  if (has && (rc == SL_OK || *retry)) {
    /* The acceptor's answer: accepted with its ring, or refused our shape
     * or role (a REJECT that explains itself is final). */
    *retry = 0;
    if (rc != SL_OK && peer->reserved == VERBS_REFUSED_SECRET)
      return sl_error_set(err, SL_EPERM,
                          "verbs channel: %s (pid %d) refused this end: it "
                          "did not prove the cluster secret (is it the "
                          "same file on every node?)",
                          v->where, (int)peer->pid);
    int crc = check_hello(peer, role, shape, v->where, err);
    if (crc != SL_OK)
      return crc;
    if (rc != SL_OK)
      return sl_error_set(err, SL_EIO,
                          "verbs channel: %s (pid %d) rejected the connection",
                          v->where, (int)peer->pid);
    if (secret) {
      verbs_rep rep; /* copied: pdata is bytes, not aligned for it */
      memcpy(&rep, v->pdata, sizeof rep);
      unsigned char want[16];
      rep_tag(secret, req.nonce, &rep.hello, want);
      if (!sl_auth_equal(want, rep.tag, sizeof want))
        return sl_error_set(err, SL_EPERM,
                            "verbs channel: %s (pid %d) accepted without "
                            "proving the cluster secret: not a peer of this "
                            "cluster",
                            v->where, (int)peer->pid);
    }
  } else if (rc == SL_OK)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: %s accepted without a Sluice hello: "
                        "not a Sluice channel end",
                        v->where);
  return rc;
}

static int connect_end(verbs_channel *v, const sl_channel_endpoint *ep,
                       const sl_channel_config *shape, int64_t deadline_ns,
                       verbs_hello *peer, sl_error *err) {
  if (!ep->address)
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel endpoint: no address to connect to");
  struct sockaddr_storage ss;
  int rc = parse_address(ep->address, &ss, err);
  if (rc != SL_OK)
    return rc;
  for (;;) {
    int retry = 0;
    rc = try_connect(v, (struct sockaddr *)&ss, ep->role, shape, ep->secret,
                     deadline_ns, peer, &retry, err);
    if (rc == SL_OK)
      return SL_OK;
    sl_verbs_teardown_qp(v);
    if (!retry ||
        (deadline_ns >= 0 && sl_clock_ns() + RETRY_NS > deadline_ns)) {
      if (retry && err && err->message) {
        char *m = err->message;
        err->message = NULL;
        sl_error_set(err, rc,
                     "%s; retried until the rendezvous timeout: is the peer "
                     "running and listening there?",
                     m);
        free(m);
      }
      return rc;
    }
    sl_error_clear(err);
    struct timespec ts = {0, RETRY_NS};
    nanosleep(&ts, NULL);
  }
}

/* ACCEPT.  sl_channel_listen gave the caller only the listener's event
 * channel descriptor; its rdma_cm id and its `struct rdma_event_channel`
 * live in this process's heap (librdmacm's), reachable from nothing but
 * the events on that descriptor.  So: wrap the descriptor in a local
 * struct rdma_event_channel (its only field is the fd; the struct is
 * public in rdma_cma.h) to read the CONNECT_REQUEST; the event names the
 * new id and the listening id (event->listen_id).  The new id moves to
 * this channel's own event channel (rdma_migrate_id), and then the
 * listener is done: rdma_destroy_id(listen_id) and free() its heap
 * struct rdma_event_channel WITHOUT closing the descriptor, which stays
 * the caller's to close (as for tcp and shm).  A verbs listener therefore
 * accepts one channel; listen once per channel.  A listener that never
 * accepts is cleaned up by the kernel when the caller closes the
 * descriptor; only its two small librdmacm structs stay behind in that
 * error path.  The listener must be used in the process that made it: the
 * kernel refuses a forked child's commands on it (EACCES). */
static int accept_end(verbs_channel *v, const sl_channel_endpoint *ep,
                      const sl_channel_config *shape, int64_t deadline_ns,
                      verbs_hello *peer, sl_error *err) {
  struct rdma_event_channel listener = {.fd = ep->fd};
  struct rdma_cm_event *ev = NULL;
  if (ep->fd < 0)
    return sl_error_set(err, SL_EINVAL,
                        "verbs channel endpoint: no listener to accept on "
                        "(descriptor %d)",
                        ep->fd);
  for (;;) {
    int w = wait_readable(ep->fd, deadline_ns);
    if (w <= 0)
      return sl_error_set(err, SL_EIO,
                          "verbs channel: no peer connected to the verbs "
                          "listener (descriptor %d) %s",
                          ep->fd,
                          w == 0 ? "before the rendezvous timeout: is the "
                                   "peer running and given our address? (a "
                                   "verbs listener accepts one channel)"
                                 : strerror(-w));
    if (rdma_get_cm_event(&listener, &ev) != 0) {
      int e = errno;
      if (e == EAGAIN || e == EINTR)
        continue;
      return sl_error_set(err, SL_EIO,
                          "verbs channel: reading the listener's rdma_cm "
                          "events (descriptor %d) failed: %s%s",
                          ep->fd, strerror(e),
                          e == EACCES ? " (a listener is usable only in the "
                                        "process that made it: listen after "
                                        "fork, in the accepting process)"
                                      : "");
    }
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
      break;
    rdma_ack_cm_event(ev); /* nothing else concerns a listener */
  }
  struct rdma_cm_id *id = ev->id, *listen_id = ev->listen_id;
  int has = get_hello(ev->param.conn.private_data,
                      ev->param.conn.private_data_len, peer);
  keep_pdata(v, ev->param.conn.private_data, ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  v->id = id;
  id->context = v;
  sl_verbs_format_addr(rdma_get_peer_addr(id), v->where, sizeof v->where);
  int migrated = rdma_migrate_id(id, v->ec) == 0;
  int e = errno;
  struct rdma_event_channel *lch = listen_id->channel;
  rdma_destroy_id(listen_id);
  free(lch); /* not rdma_destroy_event_channel: the fd is the caller's */
  if (!migrated)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: rdma_migrate_id of the connection "
                        "from %s failed: %s",
                        v->where, strerror(e));
  verbs_hello me = make_hello(v, ep->role, shape);
  int rc = has ? SL_OK
               : sl_error_set(err, SL_EIO,
                              "verbs channel: %s connected without a Sluice "
                              "hello: not a Sluice channel end",
                              v->where);
  verbs_req req; /* copied: pdata is bytes, not aligned for it */
  memcpy(&req, v->pdata, sizeof req);
  if (rc == SL_OK && ep->secret) {
    /* The proof first: nothing else is answered to a stranger. */
    unsigned char want[16];
    req_tag(ep->secret, port_of(rdma_get_local_addr(id)), req.nonce, &req.hello,
            want);
    if (!sl_auth_equal(want, req.tag, sizeof want)) {
      me.reserved = VERBS_REFUSED_SECRET;
      rdma_reject(id, &me, sizeof me);
      return sl_error_set(err, SL_EPERM,
                          "verbs channel: %s did not prove the cluster "
                          "secret: refused",
                          v->where);
    }
  }
  if (rc == SL_OK)
    rc = check_hello(peer, ep->role, shape, v->where, err);
  if (rc != SL_OK) {
    /* Our hello lets the connector say what is wrong, too. */
    rdma_reject(id, &me, sizeof me);
    return rc;
  }
  if ((rc = sl_verbs_setup_qp(v, err)) != SL_OK) {
    rdma_reject(id, NULL, 0);
    return rc;
  }
  verbs_rep rep;
  memset(&rep, 0, sizeof rep);
  rep.hello = make_hello(v, ep->role, shape);
  if (ep->secret)
    rep_tag(ep->secret, req.nonce, &rep.hello, rep.tag);
  struct rdma_conn_param p =
      conn_param(&rep, ep->secret ? sizeof rep : sizeof rep.hello);
  if (rdma_accept(id, &p) != 0)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: rdma_accept of %s failed: %s", v->where,
                        strerror(errno));
  verbs_hello ignored;
  int retry, has2;
  return expect_event(v, RDMA_CM_EVENT_ESTABLISHED,
                      "establishing the "
                      "connection from",
                      deadline_ns, &ignored, &has2, &retry, err);
}

int sl_verbs_rendezvous(verbs_channel *v, const sl_channel_endpoint *ep,
                        const sl_channel_config *shape, int64_t deadline_ns,
                        verbs_hello *peer, sl_error *err) {
  int rc;
  if (ep->via == SL_CHANNEL_VIA_CONNECT)
    rc = connect_end(v, ep, shape, deadline_ns, peer, err);
  else if (ep->via == SL_CHANNEL_VIA_ACCEPT)
    rc = accept_end(v, ep, shape, deadline_ns, peer, err);
  else
    rc = sl_error_set(err, SL_EINVAL,
                      "verbs channel endpoint: 'via' must be accept or "
                      "connect");
  if (rc != SL_OK)
    return rc;
  v->raddr = peer->addr;
  v->rkey = peer->rkey;
  return SL_OK;
}

/* --- listening --- */

int sl_verbs_listen(const char *address, int *fd, char *bound,
                    size_t bound_size, sl_error *err) {
  *fd = -1;
  struct sockaddr_storage ss;
  int rc = parse_address(address, &ss, err);
  if (rc != SL_OK)
    return rc;
  struct rdma_event_channel *ec = rdma_create_event_channel();
  if (!ec)
    return sl_error_set(err, SL_EIO,
                        "verbs channel: cannot open the RDMA connection "
                        "manager (/dev/infiniband/rdma_cm) to listen on %s: "
                        "%s (no RDMA device, or the rdma_ucm module is not "
                        "loaded)",
                        address, strerror(errno));
  struct rdma_cm_id *id = NULL;
  const char *step = "rdma_create_id";
  if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) == 0) {
    step = "rdma_bind_addr";
    if (rdma_bind_addr(id, (struct sockaddr *)&ss) == 0) {
      step = "rdma_listen";
      if (rdma_listen(id, 64) == 0) {
        sl_verbs_format_addr(rdma_get_local_addr(id), bound, bound_size);
        *fd = ec->fd;
        return SL_OK;
      }
    }
  }
  int e = errno;
  if (id)
    rdma_destroy_id(id);
  rdma_destroy_event_channel(ec);
  return sl_error_set(err, SL_EIO, "verbs channel: %s on %s failed: %s%s", step,
                      address, strerror(e),
                      e == EADDRNOTAVAIL || e == ENODEV
                          ? " (no RDMA device has this address: see `rdma "
                            "link` and `ip addr`)"
                          : "");
}

/* --- the probe --- */

static int v4_mapped(const union ibv_gid *g) {
  static const unsigned char prefix[12] = {0, 0, 0, 0, 0,    0,
                                           0, 0, 0, 0, 0xff, 0xff};
  return memcmp(g->raw, prefix, sizeof prefix) == 0;
}

int sl_channel_verbs_probe(sl_verbs_device *out, sl_error *err) {
  memset(out, 0, sizeof *out);
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  if (!list)
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "no RDMA device (ibv_get_device_list: %s; the kernel "
                        "has no RDMA support loaded)",
                        strerror(errno));
  char why[192] = "";
  for (int d = 0; d < n; d++) {
    const char *name = ibv_get_device_name(list[d]);
    struct ibv_context *ctx = ibv_open_device(list[d]);
    if (!ctx) {
      snprintf(why, sizeof why, "%s cannot be opened: %s", name,
               strerror(errno));
      continue;
    }
    struct ibv_device_attr da;
    int found = 0;
    if (ibv_query_device(ctx, &da) != 0) {
      snprintf(why, sizeof why, "%s cannot be queried", name);
      da.phys_port_cnt = 0;
    }
    for (int port = 1; !found && port <= (int)da.phys_port_cnt; port++) {
      struct ibv_port_attr pa;
      if (ibv_query_port(ctx, (uint8_t)port, &pa) != 0)
        continue;
      if (pa.state != IBV_PORT_ACTIVE) {
        const char *s = ibv_port_state_str(pa.state);
        snprintf(why, sizeof why, "%s port %d is %s", name, port,
                 strncmp(s, "PORT_", 5) == 0 ? s + 5 : s);
        continue;
      }
      for (int i = 0; !found && i < pa.gid_tbl_len; i++) {
        union ibv_gid g;
        if (ibv_query_gid(ctx, (uint8_t)port, i, &g) != 0 || !v4_mapped(&g))
          continue;
        snprintf(out->name, sizeof out->name, "%s", name);
        inet_ntop(AF_INET, g.raw + 12, out->address, sizeof out->address);
        out->port = port;
        snprintf(out->link, sizeof out->link, "%s",
                 pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
                                                          : "InfiniBand");
        found = 1;
      }
      if (!found)
        snprintf(why, sizeof why,
                 "%s port %d has no IPv4 address in its GID table (give its "
                 "network interface an IPv4 address)",
                 name, port);
    }
    ibv_close_device(ctx);
    if (found) {
      ibv_free_device_list(list);
      return SL_OK;
    }
  }
  ibv_free_device_list(list);
  if (n == 0)
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "no RDMA device (none in /sys/class/infiniband; for "
                        "soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 "
                        "type rxe netdev eth0)");
  return sl_error_set(err, SL_EUNSUPPORTED, "no usable RDMA device: %s", why);
}
