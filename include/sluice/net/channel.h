/* channel.h - one-producer, one-consumer FIFO of buffers (the brief's
 * "Channels": one protocol, several transports).
 *
 * PROTOCOL.  A channel is a ring of `c` slots of `m` bytes each, contiguous
 * in the consumer's memory (heap for the in-process transport, a shared
 * mapping for shm, registered memory for verbs).  Every slot ends with a
 * 32-byte footer (sl_channel_footer) whose LAST byte is the "full" flag:
 *
 *   slot i:  [ payload: m - 32 bytes ......... | seq wm len rows flags . F ]
 *
 * - The producer owns `c` credits.  To send it takes the next slot
 *   (sl_channel_acquire: a pointer into the ring, so operators write records
 *   straight into it), fills it, and sl_channel_publish writes the footer and
 *   then the full flag with a release store (RDMA WRITEs land in increasing
 *   address order, which gives the same guarantee remotely).  That spends a
 *   credit.
 * - The consumer polls the full flag of the next slot in its own memory
 *   (acquire load), so it never sees a partial buffer.  After processing it
 *   calls sl_channel_release: the flag is cleared and a credit goes back by
 *   writing a counter in the producer's memory.
 * - A producer without credit gets NULL from sl_channel_acquire (never
 *   blocks: the worker's scheduler runs other tasks); sl_channel_wait_credit
 *   waits with a timeout for callers with nothing else to do.  Unread slots
 *   are never overwritten.
 * - End of stream: sl_channel_close (or a publish with SL_CHANNEL_F_EOS)
 *   writes "closed after N slots" into the consumer's memory; the consumer
 *   sees SL_CHANNEL_END once it has received all N.
 * - Errors: sl_channel_abort (either side; later transports also call it
 *   when a peer dies) makes every later call on both sides fail with the
 *   abort code instead of waiting forever.
 *
 * THREADING.  Exactly one producer thread (acquire, publish, wait_credit,
 * close) and one consumer thread (poll, wait_slot, release).  Either side
 * may call sl_channel_abort, sl_channel_status and sl_channel_stats at any
 * time.  The data path takes no locks and allocates nothing.
 *
 * OWNERSHIP.  Whoever opens a channel (the executor) owns it and destroys it
 * with sl_channel_destroy once both sides are done with it (their threads
 * joined).  Payload pointers from acquire stay valid until publish; slot
 * views from poll stay valid until release.
 *
 * RETURN CODES.  SL_OK, the positive SL_CHANNEL_END / SL_CHANNEL_TIMEOUT, or
 * a negative SL_E* code (error.h): SL_EINVAL for misuse, the abort code
 * (SL_EIO when a peer died) once the channel is broken; sl_channel_error
 * says why, naming the peer.
 *
 * TWO PROCESSES (shm, tcp, verbs).  sl_channel_open creates both ends
 * in one process (local only).  Across processes each process opens ITS end
 * with sl_channel_open_end and an sl_channel_endpoint: the transport, the
 * role (producer or consumer) and how to meet the peer (an already
 * connected socket, a listening socket to accept on, or an address to
 * connect to).  The open blocks until the peer's end is there (bounded by
 * endpoint.timeout_ns), both ends agree on the shape, and the ring exists;
 * from then on the end is an ordinary sl_channel on which only its side's
 * functions are valid (the others return NULL or SL_EINVAL).  The memory
 * split stays the protocol's: the ring is in the consumer's memory, the
 * credit counter in the producer's (shm: both in one shared mapping; tcp:
 * the producer keeps a copy of its ring that it sends from and receives
 * credit messages; verbs: registered memory written remotely).  On a
 * producer end alone, sl_channel_status is SL_CHANNEL_END once the stream
 * is closed and every slot has come back as a credit (tcp learns of
 * credits when it looks for them: while out of credit, and in destroy);
 * sl_channel_get_stats reports this end's side (a consumer end: buffers
 * and bytes it took; a producer end: received = credits returned).
 *
 * Peer death.  A peer that exits or dies before the stream is over (the
 * producer before closing it, the consumer before reading it) breaks the
 * channel with SL_EIO, seen by every later call and by the waits within
 * about a millisecond (shm) or when the kernel reports the connection
 * closed (tcp; immediate for a process that dies on the same or a live
 * host).  Nothing waits for a dead peer.
 *
 * Ownership across processes: each process destroys its own end.  A
 * producer end that was closed sends everything still buffered before its
 * destroy returns (bounded by the endpoint's timeout), so "publish, close,
 * destroy, exit" delivers the whole stream.  The threading rules above
 * hold per end (one producer thread, or one consumer thread); a tcp end
 * also runs one internal I/O thread, invisible to the caller.  A socket
 * given to an end must not be shared with another process (fork after the
 * open would keep a dead peer's connection looking alive). */
#ifndef SLUICE_CHANNEL_H
#define SLUICE_CHANNEL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/common/cancel.h"
#include "sluice/common/error.h"

enum {
  SL_CHANNEL_DEFAULT_CREDITS = 8,
  SL_CHANNEL_DEFAULT_SLOT_SIZE = 64 * 1024,
  SL_CHANNEL_MIN_SLOT_SIZE = 128,                /* multiple of 64 */
  SL_CHANNEL_MAX_SLOT_SIZE = 1024 * 1024 * 1024, /* 1 GiB */
  SL_CHANNEL_MAX_CREDITS = 65536,
};

/* Positive results (negative ones are SL_E* errors). */
enum {
  SL_CHANNEL_END = 1,     /* consumer: every slot received, stream ended */
  SL_CHANNEL_TIMEOUT = 2, /* a wait ran out of time; nothing changed */
};

/* Header flags.  Bit 0 belongs to the channel; bits 8..31 to the runtime. */
enum {
  SL_CHANNEL_F_EOS = 1u << 0, /* last slot of the stream (publish closes) */
  SL_CHANNEL_F_USER = 1u << 8 /* first bit free for the runtime */
};

/* What the runtime sends along with a payload (stored in the footer). */
typedef struct sl_channel_header {
  uint32_t rows;     /* records in the payload */
  uint32_t flags;    /* SL_CHANNEL_F_* and runtime bits */
  int64_t watermark; /* the producer's watermark after this buffer */
} sl_channel_header;

/* The wire footer: the last 32 bytes of every slot, identical for every
 * transport.  `full` is the slot's last byte and is written last. */
typedef struct sl_channel_footer {
  uint64_t seq;      /* 0, 1, 2, ... per channel: checks FIFO order */
  int64_t watermark; /* sl_channel_header.watermark */
  uint32_t len;      /* payload bytes used */
  uint32_t rows;     /* sl_channel_header.rows */
  uint32_t flags;    /* sl_channel_header.flags */
  uint8_t reserved[3];
  _Atomic uint8_t full; /* 1 = published, 0 = free; the slot's last byte */
} sl_channel_footer;

#define SL_CHANNEL_FOOTER_SIZE 32u

/* Payload bytes available in a slot of slot_size bytes. */
static inline uint32_t sl_channel_payload_size_for(uint32_t slot_size) {
  return slot_size - SL_CHANNEL_FOOTER_SIZE;
}

/* A received slot, as the consumer sees it (valid until release). */
typedef struct sl_channel_slot {
  void *payload; /* len bytes written by the producer */
  uint32_t len;
  sl_channel_header hdr;
  uint64_t seq;
} sl_channel_slot;

/* Per-channel counters for EXPLAIN ANALYZE; readable from any thread. */
typedef struct sl_channel_stats {
  uint64_t buffers;  /* slots published */
  uint64_t bytes;    /* payload bytes published */
  uint64_t stalls;   /* times the producer found no credit (episodes) */
  uint64_t stall_ns; /* time spent in sl_channel_wait_credit */
  uint64_t received; /* slots released by the consumer */
} sl_channel_stats;

/* Shape of a channel; 0 means the default. */
typedef struct sl_channel_config {
  uint32_t credits;   /* c: slots in the ring (1..SL_CHANNEL_MAX_CREDITS) */
  uint32_t slot_size; /* m: bytes per slot incl. footer, a multiple of 64 */
} sl_channel_config;

typedef struct sl_channel sl_channel;
struct sl_channel_endpoint;
struct sl_secret; /* auth.h */

/* A transport: how slots move.  Every function has the meaning of the
 * sl_channel_* function of the same name below. */
typedef struct sl_channel_transport {
  const char *name; /* "local", "shm", "tcp", "verbs" */
  /* Both ends in this process (NULL for cross-process transports). */
  int (*open)(const sl_channel_config *cfg, sl_channel **out, sl_error *err);
  void *(*acquire)(sl_channel *ch);
  int (*publish)(sl_channel *ch, uint32_t len, const sl_channel_header *hdr);
  int (*wait_credit)(sl_channel *ch, int64_t timeout_ns);
  const sl_channel_slot *(*poll)(sl_channel *ch);
  int (*wait_slot)(sl_channel *ch, int64_t timeout_ns);
  int (*release)(sl_channel *ch);
  int (*close)(sl_channel *ch);
  void (*abort)(sl_channel *ch, int code);
  int (*status)(const sl_channel *ch);
  void (*stats)(const sl_channel *ch, sl_channel_stats *out);
  void (*destroy)(sl_channel *ch);
  /* Cross-process ends (NULL for local): see sl_channel_open_end. */
  int (*open_end)(const struct sl_channel_endpoint *ep,
                  const sl_channel_config *cfg, sl_channel **out,
                  sl_error *err);
  /* Why the channel broke: see sl_channel_error. */
  int (*error)(const sl_channel *ch, sl_error *err);
} sl_channel_transport;

/* The part of every channel the generic layer sees; a transport's channel
 * struct starts with it.  Users treat sl_channel as opaque. */
struct sl_channel {
  const sl_channel_transport *transport;
  uint32_t credits;
  uint32_t slot_size;
  uint32_t payload_size;
};

/* The in-process transport (threads of one process). */
extern const sl_channel_transport sl_channel_local;
/* Processes of one host: ring and credit counter in one shared mapping (an
 * anonymous memfd handed over a unix socket, which stays open to tell
 * either side when the other dies). */
extern const sl_channel_transport sl_channel_shm;
/* Any two hosts: a TCP connection; the producer sends each published slot
 * (footer + used payload bytes) and the consumer's end receives it into its
 * ring and sends credits back. */
extern const sl_channel_transport sl_channel_tcp;

/* Hosts with RDMA devices (rdma-core): one Reliable Connected queue pair
 * per channel, set up with librdmacm on IP addresses; the producer
 * RDMA-WRITEs each slot (payload, then footer) into the consumer's
 * registered ring, the consumer RDMA-WRITEs its credit counter back, and
 * both poll their own memory.  Ends meet only through rdma_cm (VIA_ACCEPT
 * on a listener from sl_channel_listen("verbs", "ip:port", ...), or
 * VIA_CONNECT to "ip:port"); VIA_FD is refused with SL_EINVAL.  A verbs
 * listener accepts ONE channel (listen once per channel) and is usable
 * only in the process that made it; a process that has used verbs must
 * not fork children that use verbs (the kernel refuses them the parent's
 * device context: EACCES; fork first). */
extern const sl_channel_transport sl_channel_verbs;

/* "local", "shm", "tcp" or "verbs"; NULL for an unknown name. */
const sl_channel_transport *sl_channel_transport_find(const char *name);

/* The first RDMA device with an active port and an IPv4 address (from its
 * GID table: an IPv4-mapped GID of a RoCE port), for transport selection
 * and EXPLAIN.  SL_OK and *out filled; SL_EUNSUPPORTED (error.h has no
 * SL_ENOENT: the host cannot run verbs) with a message saying what is
 * missing ("no RDMA device ...", "rxe0 port 1 is DOWN", ...).  Fast and
 * side-effect free: it opens and closes the devices with libibverbs only,
 * so it may run before a fork. */
typedef struct sl_verbs_device {
  char name[64];    /* "rxe0" */
  char address[64]; /* "10.0.2.15" */
  int port;         /* 1 */
  char link[16];    /* "Ethernet" or "InfiniBand" */
} sl_verbs_device;
int sl_channel_verbs_probe(sl_verbs_device *out, sl_error *err);

/* Default shapes of cross-process ends (docs/BENCHMARKS.md, "Channel
 * transports"): 64 KiB slots (the engine's buffer size) and 32 credits,
 * 2 MiB per channel.  shm: with 32 credits the producer seldom stalls, and
 * a stall costs a back-off nap, so 64 KiB x 32 ran 1.3-2.2x faster than
 * 64 KiB x 8 in every measurement.  tcp: the connection needs enough bytes
 * in flight to stay busy while credits travel back; 64 KiB x 32 reached
 * 76-88% of the loopback stream bound where 64 KiB x 8 reached 53-66%
 * (1 MiB x 2, the same memory, did as well, but a producer takes 16 times
 * longer to fill a slot). */
enum {
  SL_CHANNEL_SHM_DEFAULT_CREDITS = 32,
  SL_CHANNEL_SHM_DEFAULT_SLOT_SIZE = 64 * 1024,
  SL_CHANNEL_TCP_DEFAULT_CREDITS = 32,
  SL_CHANNEL_TCP_DEFAULT_SLOT_SIZE = 64 * 1024,
  SL_CHANNEL_VERBS_DEFAULT_CREDITS = 8,
  SL_CHANNEL_VERBS_DEFAULT_SLOT_SIZE = 64 * 1024,
};

typedef enum sl_channel_role {
  SL_CHANNEL_PRODUCER = 1,
  SL_CHANNEL_CONSUMER = 2,
} sl_channel_role;

/* How an end meets its peer. */
typedef enum sl_channel_rendezvous {
  /* `fd` is a stream socket already connected to the peer's end (from
   * socketpair, accept or connect).  The channel owns it from the call on:
   * it is closed by sl_channel_destroy, or before a failed open returns. */
  SL_CHANNEL_VIA_FD = 1,
  /* `fd` is a listening socket (see sl_channel_listen): accept one peer on
   * it.  The caller keeps the listening socket. */
  SL_CHANNEL_VIA_ACCEPT = 2,
  /* Connect to the peer listening at `address` ("host:port" for tcp, a unix
   * socket path or "@abstract-name" for shm); refused connections are
   * retried until the timeout, so either process may start first. */
  SL_CHANNEL_VIA_CONNECT = 3,
} sl_channel_rendezvous;

/* One end of a cross-process channel.  The shape (sl_channel_config) must
 * be the same at both ends (0 = the transport's default); a mismatch fails
 * both opens with SL_EINVAL. */
typedef struct sl_channel_endpoint {
  const char *transport; /* "shm", "tcp" or "verbs" */
  sl_channel_role role;
  sl_channel_rendezvous via;
  int fd;              /* VIA_FD, VIA_ACCEPT */
  const char *address; /* VIA_CONNECT */
  int64_t timeout_ns;  /* bound on the rendezvous; 0 = 10 s, < 0 none */
  /* VIA_ACCEPT and VIA_CONNECT: the cluster secret each side proves it
   * knows before anything else crosses (shm and tcp: the handshake of
   * auth.h on the connection; verbs: tags in the rdma_cm private data,
   * channel_verbs_connect.c); NULL: none (both ends must agree). */
  const struct sl_secret *secret;
  /* VIA_ACCEPT and VIA_CONNECT (shm, tcp): the query's cancel token
   * (cancel.h), or NULL; once requested the rendezvous gives up
   * (SL_ECANCELLED) instead of waiting out its timeout for a peer that
   * died. */
  const sl_cancel *cancel;
} sl_channel_endpoint;

/* Open this process's end of a channel.  Blocks until the peer's end has
 * answered (call it from a set-up thread, not a worker).  SL_EINVAL for a
 * bad endpoint or a shape mismatch, SL_EIO when the peer cannot be reached
 * or goes away during the rendezvous (the message says which address and
 * which step), SL_ENOMEM. */
int sl_channel_open_end(const sl_channel_endpoint *ep,
                        const sl_channel_config *cfg, sl_channel **out,
                        sl_error *err);

/* A listening socket for VIA_ACCEPT.  tcp: address "host:port" (port 0 =
 * any free port); shm: a unix socket path or "@abstract-name"; verbs:
 * "ip:port" of an RDMA device's address (port 0 = any), and *fd is the
 * listener's rdma_cm event channel, good for one accept, in this process
 * only.  The address peers must connect to (the chosen port filled in) is
 * written to bound[0..bound_size).  Close *fd when done (and unlink a
 * path). */
int sl_channel_listen(const char *transport, const char *address, int *fd,
                      char *bound, size_t bound_size, sl_error *err);

/* "host:port" of a connected socket's peer (numeric), or "the peer on
 * socket N" when it has none, into where[0..n). */
void sl_channel_describe_peer(int fd, char *where, size_t n);

/* A plain TCP connection to "host:port" within timeout_ms (links between
 * nodes that carry framed messages rather than a channel's slots:
 * node_frames.h). Not retried when refused: a link's listener is up before its
 * address is handed out (XLISTEN), so a refusal means its node is gone. */
int sl_channel_connect_stream(const char *address, int timeout_ms, int *fd,
                              sl_error *err);

/* Why the channel is broken: fills err (what happened, which peer, what
 * step) and returns the abort code; SL_OK (err untouched) while it is not
 * broken. */
int sl_channel_error(const sl_channel *ch, sl_error *err);

/* Open a channel on a transport.  cfg may be NULL (defaults). */
int sl_channel_open(const sl_channel_transport *t, const sl_channel_config *cfg,
                    sl_channel **out, sl_error *err);

/* Open an in-process channel of `credits` slots of `slot_size` bytes (0 =
 * default).  SL_EINVAL for a bad shape, SL_ENOMEM. */
int sl_channel_open_local(uint32_t credits, uint32_t slot_size,
                          sl_channel **out, sl_error *err);

/* Free everything; both sides must be done with the channel.  NULL is ok. */
void sl_channel_destroy(sl_channel *ch);

static inline uint32_t sl_channel_credits(const sl_channel *ch) {
  return ch->credits;
}
static inline uint32_t sl_channel_slot_size(const sl_channel *ch) {
  return ch->slot_size;
}
/* Usable payload bytes per slot: slot size minus the footer. */
static inline uint32_t sl_channel_payload_size(const sl_channel *ch) {
  return ch->payload_size;
}
static inline const char *sl_channel_transport_name(const sl_channel *ch) {
  return ch->transport->name;
}

/* --- producer side --- */

/* The payload area of the next slot (payload_size bytes, 64-byte aligned),
 * or NULL when there is no credit, or the channel is closed or broken
 * (sl_channel_status tells which).  Never blocks.  Calling it again before
 * publish returns the same slot. */
static inline void *sl_channel_acquire(sl_channel *ch) {
  return ch->transport->acquire(ch);
}

/* Send the acquired slot: len payload bytes (<= payload_size) and hdr (NULL
 * = zeros).  SL_CHANNEL_F_EOS in hdr->flags also closes the channel.
 * SL_EINVAL if no slot is acquired or len is too large. */
static inline int sl_channel_publish(sl_channel *ch, uint32_t len,
                                     const sl_channel_header *hdr) {
  return ch->transport->publish(ch, len, hdr);
}

/* Wait until acquire can succeed.  SL_OK, SL_CHANNEL_TIMEOUT, or the abort
 * code.  timeout_ns < 0 waits without limit. */
static inline int sl_channel_wait_credit(sl_channel *ch, int64_t timeout_ns) {
  return ch->transport->wait_credit(ch, timeout_ns);
}

/* End of stream after the slots published so far.  Never blocks (needs no
 * credit).  An acquired, unpublished slot is dropped.  Idempotent. */
static inline int sl_channel_close(sl_channel *ch) {
  return ch->transport->close(ch);
}

/* --- consumer side --- */

/* The next published slot, or NULL when none is ready yet, the stream has
 * ended, or the channel is broken (sl_channel_status tells which).  Never
 * blocks.  Calling it again before release returns the same slot. */
static inline const sl_channel_slot *sl_channel_poll(sl_channel *ch) {
  return ch->transport->poll(ch);
}

/* Wait until poll has a slot.  SL_OK, SL_CHANNEL_END, SL_CHANNEL_TIMEOUT,
 * or the abort code.  timeout_ns < 0 waits without limit. */
static inline int sl_channel_wait_slot(sl_channel *ch, int64_t timeout_ns) {
  return ch->transport->wait_slot(ch, timeout_ns);
}

/* Done with the polled slot: free it and return its credit.  SL_EINVAL if
 * no slot is polled. */
static inline int sl_channel_release(sl_channel *ch) {
  return ch->transport->release(ch);
}

/* --- either side --- */

/* Break the channel: every later call on both sides fails with `code` (a
 * negative SL_E* code; anything else becomes SL_EIO).  The first abort
 * wins.  Slots not yet consumed are discarded. */
static inline void sl_channel_abort(sl_channel *ch, int code) {
  ch->transport->abort(ch, code);
}

/* SL_OK while the stream runs, SL_CHANNEL_END once the consumer has
 * received everything, or the abort code. */
static inline int sl_channel_status(const sl_channel *ch) {
  return ch->transport->status(ch);
}

static inline void sl_channel_get_stats(const sl_channel *ch,
                                        sl_channel_stats *out) {
  ch->transport->stats(ch, out);
}

#endif
