/* channel_verbs_int.h - what the two halves of the verbs channel transport
 * share: the channel struct and its registered-memory layout (the data
 * path in channel_verbs.c) and the connection set-up on librdmacm
 * (channel_verbs_connect.c: listen, connect, accept, the probe). */
#ifndef SLUICE_CHANNEL_VERBS_INT_H
#define SLUICE_CHANNEL_VERBS_INT_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <stdint.h>

#include "channel_int.h"

/* Each end registers ONE region: a header page and then the ring.  Both
 * ends use the same layout, so an offset means the same thing at both:
 *
 *   0     verbs_header: ps (the producer's control line: credit counter,
 *         abort) and cs (the consumer's: closed_at, abort)
 *   4096  c slots of m bytes
 *
 * The consumer's ring is THE ring (the producer WRITEs into it); the
 * producer's is its own copy that acquire hands out and that its WRITEs
 * read.  Remote writes go one way per line: the producer WRITEs the
 * consumer's cs and slots, the consumer WRITEs the producer's ps.  The
 * other line at each end is that end's local source for those WRITEs. */
#define VERBS_RING_OFFSET 4096

typedef struct verbs_header {
  sl_ring_pshared ps;
  sl_ring_cshared cs;
} verbs_header;

_Static_assert(sizeof(verbs_header) <= VERBS_RING_OFFSET,
               "the header fits its page");

/* What each end tells the other in the rdma_cm private data (REQ, REP,
 * or a REJ that explains itself).  REQ private data is 56 bytes at most
 * on the IB CM with RDMA_PS_TCP, so this stays at 32.  Little-endian on
 * the wire, like the hosts (see the #error in channel_verbs.c). */
typedef struct verbs_hello {
  char magic[4];      /* "SLCV" */
  uint8_t version;    /* VERBS_HELLO_VERSION */
  uint8_t role;       /* sl_channel_role of the sender */
  uint16_t reserved;  /* 0 */
  uint32_t credits;   /* shape after defaults */
  uint32_t slot_size; /* shape after defaults */
  int32_t pid;        /* the sender's process, for messages */
  uint32_t rkey;      /* the sender's region */
  uint64_t addr;
} verbs_hello;

_Static_assert(sizeof(verbs_hello) == 32, "hello fits REQ private data");

enum { VERBS_HELLO_VERSION = 1 };

/* A hello's `reserved` in a REJECT: the connector did not prove the
 * cluster secret (otherwise 0). */
enum { VERBS_REFUSED_SECRET = 1 };

/* With a cluster secret (sl_channel_endpoint.secret) the private data
 * carries proofs that the ends know it (channel_verbs_connect.c): the REQ
 * a fresh nonce and a tag over the listener's port, the nonce and the
 * connector's hello; the REP a tag over the nonce and the acceptor's
 * hello.  Tags are HMAC-SHA-256 cut to 16 bytes.  56 bytes is all a REQ
 * of RDMA_PS_TCP can carry. */
typedef struct verbs_req {
  verbs_hello hello;
  unsigned char nonce[8];
  unsigned char tag[16];
} verbs_req;
typedef struct verbs_rep {
  verbs_hello hello;
  unsigned char tag[16];
} verbs_rep;

_Static_assert(sizeof(verbs_req) == 56, "a REQ's private data is 56 bytes");
_Static_assert(sizeof(verbs_rep) == 48, "REP private data");

typedef struct verbs_channel {
  sl_ring ring;
  unsigned char *mem; /* the registered region (header page + ring) */
  size_t mem_size;
  /* rdma_cm and verbs objects of the connection. */
  struct rdma_event_channel *ec; /* this channel's own, non-blocking */
  struct rdma_cm_id *id;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_mr *mr;
  int qp_made;
  int established;
  /* The peer's region. */
  uint64_t raddr;
  uint32_t rkey;
  /* Send queue accounting, by the thread that owns the data path (the
   * producer thread on a producer end, the consumer thread on a
   * consumer end).  A signaled work request completes every earlier one
   * (RC completes in order), so `sig` remembers, in posting order, the
   * `posted` count at each signaled request, and a completion pops one
   * into `done`. */
  uint32_t sq_depth;     /* work requests the send queue holds */
  uint32_t signal_every; /* at most this many in a row unsignaled */
  uint32_t max_inline;   /* inline bytes the QP takes */
  uint64_t posted, done;
  uint32_t unsignaled;
  uint64_t *sig; /* ring of sq_depth entries */
  uint32_t sig_head, sig_count;
  /* Producer: slots whose WRITEs are posted, and closed_at posted. */
  uint64_t written;
  uint32_t widx;
  int close_posted;
  /* The peer's rdma_cm said goodbye (DISCONNECTED etc.): nothing more is
   * posted to it.  Atomic: the abort hook may run on any thread. */
  _Atomic int peer_gone;
  int64_t next_check_ns; /* idle checks no more often than this */
  int64_t timeout_ns;    /* the endpoint's: bounds destroy's drain */
  char where[128];       /* the peer's "ip:port" */
  /* The private data of the last rdma_cm event read (zero-padded). */
  unsigned char pdata[sizeof(verbs_req)];
} verbs_channel;

/* --- channel_verbs_connect.c --- */

/* Allocate the verbs objects on v->id's device (PD, CQ, QP, the region's
 * registration) with the send queue sized for the shape.  SL_OK or an
 * error naming the step. */
int sl_verbs_setup_qp(verbs_channel *v, sl_error *err);

/* Free the verbs and rdma_cm objects of the current id (not v->ec, not
 * v->mem).  Safe on a partly set-up channel. */
void sl_verbs_teardown_qp(verbs_channel *v);

/* Connect (VIA_CONNECT) or accept (VIA_ACCEPT) and exchange hellos; on
 * SL_OK the QP is connected, v->raddr/rkey are the peer's and *peer is its
 * hello.  v->mem must be allocated and v->ec created. */
int sl_verbs_rendezvous(verbs_channel *v, const sl_channel_endpoint *ep,
                        const sl_channel_config *shape, int64_t deadline_ns,
                        verbs_hello *peer, sl_error *err);

/* "a.b.c.d:port" or "[v6]:port" of a socket address. */
void sl_verbs_format_addr(const struct sockaddr *sa, char *out, size_t n);

#endif
