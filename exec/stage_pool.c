/* stage_pool.c - the threads that evaluate a window's stages together
 * (stage_int.h, stage_pool).  A staged query's stages run once per window
 * on the runner's thread; the expensive part of a window, a join's probe
 * over its probe side's rows, is cut into as many parts as the query has
 * workers, and the pool's threads (and the runner, which takes a part
 * too) each probe their part into rows of their own.  Apart from
 * stage_eval.c because it is about threads, not operators. */
#include <pthread.h>
#include <stdlib.h>

#include "sluice/common/cancel.h"
#include "stage_int.h"

struct stage_pool {
  int nthreads; /* besides the caller */
  pthread_t *threads;
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  const sl_cancel *cancel; /* the statement's: its compile checks see it */
  /* The job being run: parts 0 .. nparts-1 of fn. */
  void (*fn)(void *arg, int part);
  void *arg;
  int nparts, next, finished;
  uint64_t job; /* bumped per job, so a thread takes each once */
  bool stop;
};

/* Take parts of the current job until none is left. */
static void take_parts(stage_pool *p) {
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int part = p->next < p->nparts ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    if (part < 0)
      return;
    p->fn(p->arg, part);
    pthread_mutex_lock(&p->lock);
    if (++p->finished == p->nparts)
      pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->lock);
  }
}

static void *pool_main(void *arg) {
  stage_pool *p = arg;
  sl_cancel_scope_enter(p->cancel);
  uint64_t seen = 0;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->stop && p->job == seen)
      pthread_cond_wait(&p->work, &p->lock);
    if (p->stop)
      break;
    seen = p->job;
    pthread_mutex_unlock(&p->lock);
    take_parts(p);
    pthread_mutex_lock(&p->lock);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

stage_pool *stage_pool_new(int workers, const sl_cancel *cancel) {
  if (workers < 2)
    return NULL; /* one worker: the runner alone */
  stage_pool *p = calloc(1, sizeof *p);
  if (!p)
    abort();
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  p->cancel = cancel;
  p->threads = calloc((size_t)workers - 1, sizeof *p->threads);
  if (!p->threads)
    abort();
  for (int i = 0; i < workers - 1; i++) {
    if (pthread_create(&p->threads[i], NULL, pool_main, p) != 0)
      break; /* fewer threads: the caller takes more parts */
    p->nthreads++;
  }
  return p;
}

int stage_pool_parts(const stage_pool *p) {
  return p ? p->nthreads + 1 : 1;
}

void stage_pool_run(stage_pool *p, int nparts, void (*fn)(void *, int),
                    void *arg) {
  if (!p || nparts < 2) {
    for (int i = 0; i < nparts; i++)
      fn(arg, i);
    return;
  }
  pthread_mutex_lock(&p->lock);
  p->fn = fn;
  p->arg = arg;
  p->nparts = nparts;
  p->next = p->finished = 0;
  p->job++;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  take_parts(p);
  pthread_mutex_lock(&p->lock);
  while (p->finished < p->nparts)
    pthread_cond_wait(&p->done, &p->lock);
  p->fn = NULL;
  pthread_mutex_unlock(&p->lock);
}

void stage_pool_free(stage_pool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nthreads; i++)
    pthread_join(p->threads[i], NULL);
  free(p->threads);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  free(p);
}
