/* jit_background.c - sl_jit_compile that Ctrl-C and .timeout can stop.
 *
 * LLVM cannot be interrupted inside an optimization or code generation,
 * which takes from 0.1 s for a small query to seconds for a pipeline near
 * the JIT's node budget (jit_plan.c), longer on a loaded machine.  So the
 * compile runs on a thread of its own while the caller waits in 10 ms
 * steps, polling its statement's token (sl_cancel_current(), cancel.h).
 * When the statement is stopped first, the caller returns SL_ECANCELLED at
 * once and the compile is abandoned: it keeps running to its end on its
 * thread, owning everything LLVM uses (the caller's sl_jit is left an empty
 * shell that sl_jit_free frees as usual), then frees it all; its code is
 * never run.  Before the process forks (node processes) or exits, abandoned
 * compiles are waited for, so that no LLVM lock or static destructor meets
 * one half-way.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jit_int.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"

typedef struct compile_job {
  sl_jit jit; /* the caller's, moved here while compiling */
  bool want_ir;
  char *ir;
  sl_error err;
  int rc;
  bool done, abandoned;
  pthread_mutex_t lock;
  pthread_cond_t cond;
} compile_job;

/* Abandoned compiles still running, for fork and exit to wait on. */
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bg_cond = PTHREAD_COND_INITIALIZER;
static int bg_running;
static pthread_once_t bg_once = PTHREAD_ONCE_INIT;

static void wait_abandoned(void) {
  pthread_mutex_lock(&bg_lock);
  while (bg_running > 0)
    pthread_cond_wait(&bg_cond, &bg_lock);
  pthread_mutex_unlock(&bg_lock);
}

static void register_waits(void) {
  pthread_atfork(wait_abandoned, NULL, NULL);
  atexit(wait_abandoned);
}

static void free_moved(sl_jit *j) {
  sl_jit *heap = malloc(sizeof *heap);
  if (!heap)
    return; /* leaks what the job held: only on out of memory */
  *heap = *j;
  sl_jit_free(heap);
}

/* Free a job whose thread is done, and count it as no longer running. */
static void job_free(compile_job *job) {
  sl_error_clear(&job->err);
  pthread_cond_destroy(&job->cond);
  pthread_mutex_destroy(&job->lock);
  free(job);
  pthread_mutex_lock(&bg_lock);
  bg_running--;
  pthread_cond_broadcast(&bg_cond);
  pthread_mutex_unlock(&bg_lock);
}

static void *compile_main(void *arg) {
  compile_job *job = arg;
  int rc =
      jit_compile_now(&job->jit, job->want_ir ? &job->ir : NULL, &job->err);
  pthread_mutex_lock(&job->lock);
  job->rc = rc;
  job->done = true;
  bool abandoned = job->abandoned;
  pthread_cond_signal(&job->cond);
  pthread_mutex_unlock(&job->lock);
  if (!abandoned)
    return NULL; /* the caller takes the results and joins */
  free_moved(&job->jit);
  free(job->ir);
  job_free(job);
  return NULL;
}

int sl_jit_compile(sl_jit *j, char **ir, sl_error *err) {
  if (ir)
    *ir = NULL;
  if (!j->mod)
    return SL_OK;
  if (sl_cancel_current_pending())
    return sl_error_set(err, SL_ECANCELLED, "query cancelled");
  pthread_once(&bg_once, register_waits);
  compile_job *job = calloc(1, sizeof *job);
  if (!job)
    return jit_compile_now(j, ir, err);
  job->jit = *j;
  job->want_ir = ir != NULL;
  pthread_mutex_init(&job->lock, NULL);
  pthread_cond_init(&job->cond, NULL);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* LLVM recurses over large functions: a thread as deep as the main's */
  pthread_attr_setstacksize(&attr, 8 << 20);
  pthread_mutex_lock(&bg_lock); /* counted before it can end */
  bg_running++;
  pthread_mutex_unlock(&bg_lock);
  pthread_t t;
  if (pthread_create(&t, &attr, compile_main, job) != 0) {
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&bg_lock);
    bg_running--;
    pthread_mutex_unlock(&bg_lock);
    pthread_cond_destroy(&job->cond);
    pthread_mutex_destroy(&job->lock);
    free(job);
    return jit_compile_now(j, ir, err);
  }
  pthread_attr_destroy(&attr);

  pthread_mutex_lock(&job->lock);
  while (!job->done && !sl_cancel_current_pending()) {
    struct timespec until = sl_clock_deadline_ms(10);
    pthread_cond_timedwait(&job->cond, &job->lock, &until);
  }
  if (!job->done) {
    /* Stopped first: the job owns the LLVM state from now on; j keeps
     * nothing but an empty arena, for sl_jit_free. */
    job->abandoned = true;
    pthread_mutex_unlock(&job->lock);
    memset(j, 0, sizeof *j);
    sl_arena_init(&j->arena, 0);
    return sl_error_set(err, SL_ECANCELLED, "query cancelled");
  }
  pthread_mutex_unlock(&job->lock);
  /* done: take the results back (the thread touches the job no more but
   * to leave; it counted itself as running until here) */
  *j = job->jit;
  if (ir)
    *ir = job->ir;
  else
    free(job->ir);
  int rc = job->rc;
  if (rc != SL_OK)
    sl_error_set(err, job->err.code, "%s",
                 job->err.message ? job->err.message : "JIT failed");
  job_free(job);
  return rc;
}
