/* cluster_auth.c - the cluster secret and the challenge-response that
 * proves it on a connection (auth.h).  libsodium provides the randomness,
 * the HMAC and the constant-time compare. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/net/node_frames.h"
#include "sluice/common/clock.h"
#include "sluice/net/auth.h"

#define MAGIC "SLAUTH01"
#define MAGIC_LEN 8
#define NONCE_LEN 32
#define MAC_LEN crypto_auth_hmacsha256_BYTES
#define MIN_SECRET 16
#define MAX_SECRET 65536
#define MIN_SECRET_BITS 48

/* The bits a secret carries by the frequencies of its bytes: its length
 * times the Shannon entropy of their distribution (auth.h).  An estimate
 * from above for text with structure, but it sees what matters here:
 * 'aaaa...' carries 0 bits, 'passwordpassword' 44, 16 random bytes 55 or
 * more, 32 random bytes in base64 (the README's recipe) about 225. */
static double secret_bits(const unsigned char *buf, size_t len) {
  size_t count[256] = {0};
  for (size_t i = 0; i < len; i++)
    count[buf[i]]++;
  double bits = 0;
  for (int b = 0; b < 256; b++)
    if (count[b])
      bits -= (double)count[b] * log2((double)count[b] / (double)len);
  return bits;
}

static int sodium_ready(sl_error *err) {
  if (sodium_init() < 0)
    return sl_error_set(err, SL_EINTERNAL, "libsodium failed to initialize");
  return SL_OK;
}

int sl_secret_load(const char *path, sl_secret *out, sl_error *err) {
  memset(out, 0, sizeof *out);
  int rc = sodium_ready(err);
  if (rc != SL_OK)
    return rc;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sl_error_set(err, SL_EINVAL, "cannot open the secret file '%s': %s",
                        path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return sl_error_set(err, SL_EINVAL, "the secret file '%s' is not a file",
                        path);
  }
  /* A secret others can read is no secret: refuse it, as ssh refuses a
   * private key that others can read. */
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    close(fd);
    return sl_error_set(err, SL_EINVAL,
                        "the secret file '%s' can be read or written by others "
                        "(mode %03o): run chmod 600 '%s'",
                        path, (unsigned)(st.st_mode & 0777), path);
  }
  if (st.st_size > MAX_SECRET) {
    close(fd);
    return sl_error_set(err, SL_EINVAL,
                        "the secret file '%s' is larger than %d bytes", path,
                        MAX_SECRET);
  }
  unsigned char buf[MAX_SECRET];
  size_t len = 0;
  for (;;) {
    ssize_t k = read(fd, buf + len, sizeof buf - len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    len += (size_t)k;
  }
  close(fd);
  /* `echo secret > file` and `printf secret > file` mean the same. */
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
    len--;
  if (len < MIN_SECRET) {
    sodium_memzero(buf, sizeof buf);
    return sl_error_set(err, SL_EINVAL,
                        "the secret file '%s' holds %zu bytes; a secret needs "
                        "at least %d (make one with: head -c 32 /dev/urandom "
                        "| base64 > '%s')",
                        path, len, MIN_SECRET, path);
  }
  double bits = secret_bits(buf, len);
  if (bits < MIN_SECRET_BITS) {
    sodium_memzero(buf, sizeof buf);
    return sl_error_set(err, SL_EINVAL,
                        "the secret in '%s' is too easy to guess: its %zu "
                        "bytes carry %.0f bits by their frequencies, and a "
                        "secret needs %d (make a random one with: head -c 32 "
                        "/dev/urandom | base64 > '%s')",
                        path, len, bits, MIN_SECRET_BITS, path);
  }
  crypto_generichash(out->key, sizeof out->key, buf, len, NULL, 0);
  sodium_memzero(buf, sizeof buf);
  out->set = true;
  return SL_OK;
}

void sl_secret_random(sl_secret *out) {
  sl_error err = {0};
  if (sodium_ready(&err) != SL_OK)
    abort(); /* no randomness: nothing safe to do */
  randombytes_buf(out->key, sizeof out->key);
  out->set = true;
}

void sl_secret_wipe(sl_secret *s) {
  sodium_memzero(s, sizeof *s);
}

void sl_auth_mac(const sl_secret *secret, int n, const void *const *parts,
                 const size_t *lens, unsigned char out[32]) {
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, secret->key, sizeof secret->key);
  for (int i = 0; i < n; i++)
    crypto_auth_hmacsha256_update(&st, parts[i], lens[i]);
  crypto_auth_hmacsha256_final(&st, out);
  sodium_memzero(&st, sizeof st);
}

void sl_auth_random(void *buf, size_t n) {
  sl_error err = {0};
  if (sodium_ready(&err) != SL_OK)
    abort(); /* no randomness: nothing safe to do */
  randombytes_buf(buf, n);
}

bool sl_auth_equal(const void *a, const void *b, size_t n) {
  return sodium_memcmp(a, b, n) == 0;
}

/* HMAC(key, label a b). */
static void mac(const sl_secret *s, const char *label, const unsigned char *a,
                const unsigned char *b, unsigned char out[MAC_LEN]) {
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, s->key, sizeof s->key);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)label,
                                strlen(label));
  crypto_auth_hmacsha256_update(&st, a, NONCE_LEN);
  crypto_auth_hmacsha256_update(&st, b, NONCE_LEN);
  crypto_auth_hmacsha256_final(&st, out);
  sodium_memzero(&st, sizeof st);
}

/* Exactly n bytes by the deadline; *got says how many came. */
static int recv_all(int fd, void *p, size_t n, int64_t deadline_ns, size_t *got,
                    sl_error *err) {
  char *c = p;
  *got = 0;
  while (*got < n) {
    int64_t left_ms = (deadline_ns - sl_clock_ns()) / 1000000;
    struct pollfd pf = {fd, POLLIN, 0};
    int k = left_ms > 0 ? poll(&pf, 1, (int)left_ms) : 0;
    if (k < 0 && errno == EINTR)
      continue;
    if (k == 0)
      return sl_error_set(err, SL_EIO,
                          "no handshake within the time allowed (%zu of %zu "
                          "bytes came)",
                          *got, n);
    ssize_t r = recv(fd, c + *got, n - *got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return sl_error_set(
          err, SL_EIO,
          "the other side %s during the handshake (after %zu "
          "of %zu bytes)",
          r == 0 ? "closed the connection" : "broke the connection", *got, n);
    *got += (size_t)r;
  }
  return SL_OK;
}

/* One handshake message of len bytes (the magic first): SL_EPERM with
 * not_ours when it does not start with the magic (some other program, or
 * garbage: refused at once rather than waited for), SL_EIO when it stops
 * short or does not come in time. */
static int recv_message(int fd, unsigned char *buf, size_t len,
                        int64_t deadline, const char *not_ours, sl_error *err) {
  size_t got = 0, rest = 0;
  int rc = recv_all(fd, buf, MAGIC_LEN, deadline, &got, err);
  if (rc == SL_OK && memcmp(buf, MAGIC, MAGIC_LEN) != 0)
    return sl_error_set(err, SL_EPERM, "%s", not_ours);
  if (rc == SL_OK)
    rc = recv_all(fd, buf + MAGIC_LEN, len - MAGIC_LEN, deadline, &rest, err);
  if (rc != SL_OK && got == MAGIC_LEN) { /* say how much of it came */
    sl_error_clear(err);
    sl_error_set(err, SL_EIO,
                 "the handshake stopped short (after %zu of %zu bytes)",
                 got + rest, len);
  }
  return rc;
}

int sl_auth_accept(int fd, const sl_secret *secret, int timeout_ms,
                   sl_error *err) {
  int rc = sodium_ready(err);
  if (rc != SL_OK)
    return rc;
  int64_t deadline = sl_clock_ns() + (int64_t)timeout_ms * 1000000;
  unsigned char hello[MAGIC_LEN + NONCE_LEN];
  memcpy(hello, MAGIC, MAGIC_LEN);
  unsigned char *challenge = hello + MAGIC_LEN;
  randombytes_buf(challenge, NONCE_LEN);
  rc = sl_send_all(fd, hello, sizeof hello, err);
  unsigned char answer[MAGIC_LEN + NONCE_LEN + MAC_LEN];
  if (rc == SL_OK)
    rc = recv_message(fd, answer, sizeof answer, deadline,
                      "the peer is not a Sluice peer of this version (its "
                      "first bytes are not the handshake)",
                      err);
  if (rc != SL_OK)
    return rc;
  const unsigned char *theirs = answer + MAGIC_LEN;
  unsigned char want[MAC_LEN];
  mac(secret, "connect", challenge, theirs, want);
  bool ok = sodium_memcmp(want, answer + MAGIC_LEN + NONCE_LEN, MAC_LEN) == 0;
  unsigned char reply[1 + MAC_LEN];
  memset(reply, 0, sizeof reply);
  if (ok) {
    reply[0] = 1;
    mac(secret, "accept", theirs, challenge, reply + 1);
  }
  rc = sl_send_all(fd, reply, sizeof reply, err);
  if (!ok) {
    sl_error_clear(err);
    return sl_error_set(err, SL_EPERM,
                        "the peer did not prove it knows the cluster secret "
                        "(a different --secret-file, or a replayed "
                        "handshake)");
  }
  return rc;
}

int sl_auth_connect(int fd, const sl_secret *secret, int timeout_ms,
                    sl_error *err) {
  int rc = sodium_ready(err);
  if (rc != SL_OK)
    return rc;
  int64_t deadline = sl_clock_ns() + (int64_t)timeout_ms * 1000000;
  unsigned char hello[MAGIC_LEN + NONCE_LEN];
  rc = recv_message(fd, hello, sizeof hello, deadline,
                    "the other side is not a Sluice node of this version (it "
                    "did not start the handshake)",
                    err);
  if (rc != SL_OK)
    return rc;
  const unsigned char *challenge = hello + MAGIC_LEN;
  unsigned char answer[MAGIC_LEN + NONCE_LEN + MAC_LEN];
  memcpy(answer, MAGIC, MAGIC_LEN);
  unsigned char *mine = answer + MAGIC_LEN;
  randombytes_buf(mine, NONCE_LEN);
  mac(secret, "connect", challenge, mine, answer + MAGIC_LEN + NONCE_LEN);
  rc = sl_send_all(fd, answer, sizeof answer, err);
  unsigned char reply[1 + MAC_LEN];
  size_t got;
  if (rc == SL_OK)
    rc = recv_all(fd, reply, sizeof reply, deadline, &got, err);
  if (rc != SL_OK)
    return rc;
  if (reply[0] != 1)
    return sl_error_set(err, SL_EPERM,
                        "the node refused this side's proof of the cluster "
                        "secret: give the shell the --secret-file the nodes "
                        "were started with");
  unsigned char want[MAC_LEN];
  mac(secret, "accept", mine, challenge, want);
  if (sodium_memcmp(want, reply + 1, MAC_LEN) != 0)
    return sl_error_set(err, SL_EPERM,
                        "the other side accepted without knowing the cluster "
                        "secret: it is not the node it claims to be");
  return SL_OK;
}
