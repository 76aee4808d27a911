/* join_deadlines.c - the min-heap that lets a bounded join's sweep visit
 * only the rows it drops: one per bound, each row of the swept side under
 * the time (its column plus the bound's offset) at which the other side's
 * watermark lets it go (updating_join.c).  Apart from the join because it
 * is a plain priority queue of row pointers, nothing of the join's rules. */
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
