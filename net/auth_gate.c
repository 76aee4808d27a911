/* auth_gate.c - proving the cluster secret off the accepting thread
 * (auth_gate.h). */
#include "auth_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sluice/net/channel.h"

enum { MAX_PENDING = 16, PROOF_MS = 10000 };

typedef struct proof {
  auth_gate *g;
  int fd;
  pthread_t thread;
  bool done, ok; /* under the gate's lock */
} proof;

struct auth_gate {
  const sl_secret *secret;
  const char *what;
  int wake[2]; /* a byte per finished proof */
  pthread_mutex_t lock;
  proof *pending[MAX_PENDING]; /* each its thread's own */
  int npending;
  char last_refusal[256]; /* under lock */
};

static void *prove(void *arg) {
  proof *p = arg;
  sl_error err = {0};
  bool ok = sl_auth_accept(p->fd, p->g->secret, PROOF_MS, &err) == SL_OK;
  const char *why = err.message ? err.message : "no proof of the secret";
  if (!ok) { /* who it was, for whoever reads the log */
    char who[128];
    sl_channel_describe_peer(p->fd, who, sizeof who);
    fprintf(stderr, "sluice node: refused %s from %s: %s\n", p->g->what, who,
            why);
  }
  pthread_mutex_lock(&p->g->lock);
  if (!ok)
    snprintf(p->g->last_refusal, sizeof p->g->last_refusal, "%s", why);
  sl_error_clear(&err);
  p->ok = ok;
  p->done = true;
  pthread_mutex_unlock(&p->g->lock);
  ssize_t k;
  do
    k = write(p->g->wake[1], "x", 1);
  while (k < 0 && errno == EINTR);
  return NULL;
}

auth_gate *auth_gate_new(const sl_secret *secret, const char *what) {
  auth_gate *g = calloc(1, sizeof *g);
  if (!g || pipe(g->wake) != 0)
    abort();
  fcntl(g->wake[0], F_SETFL, O_NONBLOCK);
  fcntl(g->wake[0], F_SETFD, FD_CLOEXEC);
  fcntl(g->wake[1], F_SETFD, FD_CLOEXEC);
  g->secret = secret;
  g->what = what;
  pthread_mutex_init(&g->lock, NULL);
  return g;
}

int auth_gate_fd(const auth_gate *g) {
  return g->wake[0];
}

void auth_gate_add(auth_gate *g, int fd) {
  pthread_mutex_lock(&g->lock);
  if (g->npending == MAX_PENDING) {
    pthread_mutex_unlock(&g->lock);
    char who[128];
    sl_channel_describe_peer(fd, who, sizeof who);
    fprintf(stderr,
            "sluice node: refused %s from %s: %d connections are proving the "
            "secret already\n",
            g->what, who, MAX_PENDING);
    close(fd);
    return;
  }
  proof *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  p->g = g;
  p->fd = fd;
  if (pthread_create(&p->thread, NULL, prove, p) != 0) {
    close(fd); /* no thread: refuse it rather than block */
    free(p);
  } else {
    g->pending[g->npending++] = p;
  }
  pthread_mutex_unlock(&g->lock);
}

int auth_gate_take(auth_gate *g) {
  char buf[64];
  while (read(g->wake[0], buf, sizeof buf) > 0)
    ;
  int fd = -1;
  pthread_mutex_lock(&g->lock);
  for (int i = 0; i < g->npending && fd < 0;) {
    proof *p = g->pending[i];
    if (!p->done) {
      i++;
      continue;
    }
    /* Its thread has finished but for returning: join it outside the
     * lock, which it no longer takes. */
    g->pending[i] = g->pending[--g->npending];
    pthread_mutex_unlock(&g->lock);
    pthread_join(p->thread, NULL);
    if (p->ok)
      fd = p->fd;
    else
      close(p->fd);
    free(p);
    pthread_mutex_lock(&g->lock);
  }
  pthread_mutex_unlock(&g->lock);
  return fd;
}

void auth_gate_last_refusal(auth_gate *g, char *buf, size_t n) {
  pthread_mutex_lock(&g->lock);
  snprintf(buf, n, "%s", g->last_refusal);
  pthread_mutex_unlock(&g->lock);
}

void auth_gate_free(auth_gate *g) {
  if (!g)
    return;
  pthread_mutex_lock(&g->lock);
  for (int i = 0; i < g->npending; i++)
    shutdown(g->pending[i]->fd, SHUT_RDWR); /* a waiting proof fails now */
  pthread_mutex_unlock(&g->lock);
  for (int i = 0; i < g->npending; i++) {
    pthread_join(g->pending[i]->thread, NULL);
    close(g->pending[i]->fd);
    free(g->pending[i]);
  }
  pthread_mutex_destroy(&g->lock);
  close(g->wake[0]);
  close(g->wake[1]);
  free(g);
}
