/* auth.h - proving knowledge of the cluster secret on a connection.
 *
 * A node daemon (`sluice node`) accepts a connection only from a peer
 * (a shell, or another node) that proves it knows the cluster's shared
 * secret, and proves to that peer that it knows it too, before a single
 * frame of a plan or of data is read.  The proof is a challenge-response
 * with HMAC-SHA-256 (libsodium), first on the connection:
 *
 *   acceptor -> connector   "SLAUTH01" [challenge: 32 random bytes]
 *   connector -> acceptor   "SLAUTH01" [its own 32 random bytes]
 *                           [HMAC(key, "connect" challenge own)]
 *   acceptor -> connector   [1: accepted, 0: refused]
 *                           [HMAC(key, "accept" own challenge)]
 *
 * The key is a hash of the secret file's contents.  A recorded answer is
 * worthless on another connection: every acceptor draws a fresh challenge.
 * Anything else on the wire (another program, garbage, a short or late
 * answer) is refused with a message saying what came instead; the
 * acceptor never reads more than the fixed 72 bytes of an answer and
 * waits at most the given time for them.
 *
 * The secret file holds at least 16 bytes (a trailing newline is not part
 * of the secret) that carry at least 48 bits by their frequencies (their
 * count times the Shannon entropy of their distribution: 'aaaa...' carries
 * none, 'passwordpassword' 44, 16 random bytes 55 or more), and must be
 * readable by its owner only, as ssh insists for private keys:
 *
 *   head -c 32 /dev/urandom | base64 > cluster.secret; chmod 600 cluster.secret
 *
 * Ownership: an sl_secret is a plain value; sl_secret_wipe zeroes it.
 */
#ifndef SLUICE_AUTH_H
#define SLUICE_AUTH_H

#include <stdbool.h>

#include "sluice/common/error.h"

typedef struct sl_secret {
  unsigned char key[32]; /* BLAKE2b-256 of the secret file's contents */
  bool set;
} sl_secret;

/* Read the secret file at path into *out; SL_EINVAL with a message saying
 * what is wrong (missing, readable by others, too short). */
int sl_secret_load(const char *path, sl_secret *out, sl_error *err);

/* A fresh random secret (for a cluster this process forks itself). */
void sl_secret_random(sl_secret *out);

void sl_secret_wipe(sl_secret *s);

/* The acceptor's side on a connected socket fd: SL_OK once the peer has
 * proved it knows the secret; otherwise SL_EPERM (wrong proof) or SL_EIO
 * (no answer within timeout_ms, the connection broke, not the protocol),
 * and the caller closes fd. */
int sl_auth_accept(int fd, const sl_secret *secret, int timeout_ms,
                   sl_error *err);

/* The connector's side: SL_OK once the acceptor accepted this side's
 * proof and proved it knows the secret too. */
int sl_auth_connect(int fd, const sl_secret *secret, int timeout_ms,
                    sl_error *err);

/* For proofs carried inside another protocol's messages (the verbs
 * channels' rdma_cm private data, which has no room for a round trip of
 * its own): HMAC-SHA-256 with the secret's key over n parts, fresh random
 * bytes, and a comparison in constant time. */
void sl_auth_mac(const sl_secret *secret, int n, const void *const *parts,
                 const size_t *lens, unsigned char out[32]);
void sl_auth_random(void *buf, size_t n);
bool sl_auth_equal(const void *a, const void *b, size_t n);

#endif
