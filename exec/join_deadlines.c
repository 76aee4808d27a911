/* join_deadlines.c - the orders in which a join's rows leave its state,
 * so that dropping them visits only the rows dropped (updating_join.c):
 * a min-heap per bound, each row of the swept side under the time (its
 * column plus the bound's offset) at which the other side's watermark
 * lets it go; and under 'table.exec.state.ttl' a ring of each side's rows
 * in the order they came.  Apart from the join because they are plain
 * queues of row pointers, nothing of the join's rules. */
#include <stdlib.h>

#include "updating_int.h"

void jheap_push(jheap *h, int64_t at, jrow *row) {
  if (h->n == h->cap) {
    uint32_t cap = h->cap ? h->cap * 2 : 256;
    jdeadline *v = realloc(h->v, sizeof *v * cap);
    if (!v)
      abort();
    h->v = v;
    h->cap = cap;
  }
  uint32_t i = h->n++;
  while (i > 0) { /* sift up */
    uint32_t parent = (i - 1) / 2;
    if (h->v[parent].at <= at)
      break;
    h->v[i] = h->v[parent];
    i = parent;
  }
  h->v[i] = (jdeadline){at, row};
}

jdeadline jheap_pop(jheap *h) {
  jdeadline top = h->v[0], last = h->v[--h->n];
  uint32_t i = 0;
  for (;;) { /* sift the last entry down from the root */
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->v[c + 1].at < h->v[c].at)
      c++;
    if (last.at <= h->v[c].at)
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n > 0)
    h->v[i] = last;
  return top;
}

void jheap_free(jheap *h) {
  free(h->v);
  *h = (jheap){0};
}

void jqueue_push(jqueue *q, jrow *row) {
  if (q->n == q->cap) { /* grow: the ring's entries laid out from 0 */
    uint32_t cap = q->cap ? q->cap * 2 : 256;
    jrow **v = malloc(sizeof *v * cap);
    if (!v)
      abort();
    for (uint32_t i = 0; i < q->n; i++)
      v[i] = q->v[(q->head + i) % q->cap];
    free(q->v);
    q->v = v;
    q->head = 0;
    q->cap = cap;
  }
  q->v[(q->head + q->n++) % q->cap] = row;
}

jrow *jqueue_pop(jqueue *q) {
  jrow *r = q->v[q->head];
  q->head = (q->head + 1) % q->cap;
  q->n--;
  return r;
}

void jqueue_free(jqueue *q) {
  free(q->v);
  *q = (jqueue){0};
}
