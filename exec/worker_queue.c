/* worker_queue.c - what a worker hands to the coordinator waits in its
 * queue (result batches, window partials, session fragments): taking and
 * returning batches, the queue's bound (backpressure, executor_int.h),
 * and the wake-ups between the workers and the coordinator.  Separate
 * from executor.c and worker.c: both sides use it. */
#include <stdlib.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/state/session_store.h"

out_batch *sl_exec_take_batch(worker *w, uint32_t cap) {
  out_batch *b = NULL;
  pthread_mutex_lock(&w->lock);
  if (w->free_batches) {
    b = w->free_batches;
    w->free_batches = b->next;
  }
  pthread_mutex_unlock(&w->lock);
  if (!b) {
    b = malloc(sizeof *b);
    if (!b)
      abort();
    sl_buffer_init(&b->buf, w->q->out_layout, cap);
  } else if (b->buf.cap < cap) {
    sl_buffer_free(&b->buf);
    sl_buffer_init(&b->buf, w->q->out_layout, cap);
  }
  sl_buffer_clear(&b->buf);
  b->next = NULL;
  return b;
}

void sl_exec_queue_batch_locked(worker *w, out_batch *b) {
  if (w->batches_tail)
    w->batches_tail->next = b;
  else
    w->batches = b;
  w->batches_tail = b;
  if (w->node_fd < 0) /* a node link's: the frame's length */
    b->queued_bytes = b->buf.cap;
  w->queued++;
  w->queued_bytes += b->queued_bytes;
}

void sl_exec_publish_batch(worker *w, out_batch *b) {
  pthread_mutex_lock(&w->lock);
  sl_exec_queue_batch_locked(w, b);
  pthread_mutex_unlock(&w->lock);
}

void sl_exec_return_batch(worker *w, out_batch *b) {
  pthread_mutex_lock(&w->lock);
  b->next = w->free_batches;
  w->free_batches = b;
  pthread_mutex_unlock(&w->lock);
}

bool sl_exec_queue_full_locked(const worker *w) {
  return w->queued > SL_OUT_QUEUED_MAX ||
         (w->queued > 1 && w->queued_bytes > SL_OUT_QUEUED_BYTES);
}

void sl_exec_took_locked(worker *w, int n, uint64_t bytes) {
  if (n == 0)
    return;
  w->queued -= n;
  w->queued_bytes -= bytes;
  if (w->node_fd >= 0) {
    w->credit_frames += (uint64_t)n;
    w->credit_bytes += bytes;
  }
  pthread_cond_broadcast(&w->drained);
}

bool sl_exec_wait_drained(worker *w, int ms) {
  pthread_mutex_lock(&w->lock);
  bool full = sl_exec_queue_full_locked(w);
  pthread_mutex_unlock(&w->lock);
  if (!full)
    return false;
  sl_exec_signal(w);
  pthread_mutex_lock(&w->lock);
  struct timespec until = sl_clock_deadline_ms(ms);
  while ((full = sl_exec_queue_full_locked(w)) && !atomic_load(w->cancel))
    if (pthread_cond_timedwait(&w->drained, &w->lock, &until) != 0)
      break;
  full = sl_exec_queue_full_locked(w);
  pthread_mutex_unlock(&w->lock);
  return full;
}

void sl_exec_wait_ready(exec_shared *sh, query_shared *qs) {
  pthread_mutex_lock(&sh->lock);
  if (++sh->ready >= sh->expected) {
    /* The last worker: the other leaves' too, then the clock starts. */
    sh->leaf_counted = true;
    pthread_mutex_unlock(&sh->lock);
    sl_query_leaf_ready(qs, true);
    pthread_mutex_lock(&sh->lock);
    sh->start_time = sl_clock_seconds();
    pthread_cond_broadcast(&sh->cond);
  }
  while (sh->start_time == 0)
    pthread_cond_wait(&sh->cond, &sh->lock);
  pthread_mutex_unlock(&sh->lock);
}

void sl_query_leaf_ready(query_shared *sh, bool wait) {
  pthread_mutex_lock(&sh->ready_lock);
  if (sh->leaves_pending > 0 && --sh->leaves_pending == 0) {
    sh->start_time = sl_clock_seconds();
    pthread_cond_broadcast(&sh->ready_cond);
  }
  while (wait && sh->leaves_pending > 0 && !sh->abandoned)
    pthread_cond_wait(&sh->ready_cond, &sh->ready_lock);
  pthread_mutex_unlock(&sh->ready_lock);
}

void sl_query_leaves_abandon(query_shared *sh) {
  pthread_mutex_lock(&sh->ready_lock);
  sh->abandoned = true;
  pthread_cond_broadcast(&sh->ready_cond);
  pthread_mutex_unlock(&sh->ready_lock);
}

void sl_exec_signal(worker *w) {
  pthread_mutex_lock(&w->shared->lock);
  w->shared->signals++;
  pthread_cond_broadcast(&w->shared->cond);
  pthread_mutex_unlock(&w->shared->lock);
}

uint64_t sl_exec_partials_bytes(worker *w, uint32_t *n) {
  uint64_t bytes = 0;
  *n = 0;
  pthread_mutex_lock(&w->lock);
  for (const window_partial *p = w->partials; p; p = p->next, ++*n)
    bytes += sl_group_table_bytes(p->table) + sizeof *p + sizeof *p->table;
  for (const session_fragment *f = w->fragments; f; f = f->next, ++*n)
    bytes += f->held_bytes; /* session windows' closed sessions */
  pthread_mutex_unlock(&w->lock);
  return bytes;
}

void sl_exec_worker_free(worker *w) {
  window_partial *p = w->partials;
  while (p) {
    window_partial *next = p->next;
    sl_group_table_free(p->table);
    free(p->table);
    free(p);
    p = next;
  }
  out_batch *lists[2] = {w->batches, w->free_batches};
  for (int l = 0; l < 2; l++)
    for (out_batch *b = lists[l]; b;) {
      out_batch *next = b->next;
      sl_buffer_free(&b->buf);
      free(b);
      b = next;
    }
  for (session_fragment *f = w->fragments; f;) {
    session_fragment *next = f->next;
    session_fragment_free(f);
    f = next;
  }
  if (w->sessions) {
    sl_memory_charge(w->q->memory, &w->sessions_charged, 0);
    session_store_free(w->sessions);
    free(w->sessions);
  }
  sl_error_clear(&w->err);
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->drained);
  pthread_mutex_destroy(&w->send_lock);
}
