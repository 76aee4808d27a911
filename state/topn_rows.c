/* topn_rows.c - the rows of one Top-N partition, in sorted chunks (see
 * topn_rows.h). */
#include "sluice/state/topn_rows.h"

#include <stdlib.h>
#include <string.h>

#include "sluice/state/sorted_result.h"

static int compare(const topn_order *o, const uint8_t *a, const uint8_t *b) {
  return sorted_result_compare(o->layout, o->order, o->norder, a, b);
}

/* Is a row sorting as `c` says past the place sought? */
static bool beyond(int c, bool after) {
  return after ? c > 0 : c >= 0;
}

topn_pos topn_rows_place(const topn_rows *r, const topn_order *o,
                         const uint8_t *sort, bool after) {
  topn_pos pos = {0, 0, 0};
  if (r->nchunks == 0)
    return pos;
  /* The first chunk whose last row is past the place. */
  int lo = 0, hi = r->nchunks;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    const topn_chunk *c = &r->chunks[mid];
    if (beyond(compare(o, c->e[c->n - 1].sort, sort), after))
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo == r->nchunks) { /* after every row: the end of the last chunk */
    pos.chunk = r->nchunks - 1;
    pos.off = r->chunks[pos.chunk].n;
    pos.rank = r->n;
    return pos;
  }
  const topn_chunk *c = &r->chunks[lo];
  int a = 0, b = c->n - 1; /* row b is past it */
  while (a < b) {
    int mid = a + (b - a) / 2;
    if (beyond(compare(o, c->e[mid].sort, sort), after))
      b = mid;
    else
      a = mid + 1;
  }
  pos.chunk = lo;
  pos.off = a;
  pos.rank = a;
  for (int i = 0; i < lo; i++)
    pos.rank += r->chunks[i].n;
  return pos;
}

tentry *topn_rows_get(topn_rows *r, topn_pos pos) {
  return &r->chunks[pos.chunk].e[pos.off];
}

topn_pos topn_rows_next(const topn_rows *r, topn_pos pos) {
  pos.off++;
  pos.rank++;
  if (pos.off == r->chunks[pos.chunk].n && pos.chunk + 1 < r->nchunks) {
    pos.chunk++;
    pos.off = 0;
  }
  return pos;
}

topn_pos topn_rows_last(const topn_rows *r) {
  topn_pos pos = {r->nchunks - 1, r->chunks[r->nchunks - 1].n - 1, r->n - 1};
  return pos;
}

tentry *topn_rows_at(topn_rows *r, int rank) {
  for (int i = 0; i < r->nchunks; i++) {
    if (rank < r->chunks[i].n)
      return &r->chunks[i].e[rank];
    rank -= r->chunks[i].n;
  }
  return NULL;
}

/* A new, empty chunk at index at. */
static void add_chunk(topn_rows *r, int at, int cap, uint64_t *bytes) {
  if (r->nchunks == r->capchunks) {
    int n = r->capchunks ? 2 * r->capchunks : 1;
    r->chunks = realloc(r->chunks, sizeof *r->chunks * (size_t)n);
    if (!r->chunks)
      abort();
    *bytes += sizeof *r->chunks * (size_t)(n - r->capchunks);
    r->capchunks = n;
  }
  memmove(&r->chunks[at + 1], &r->chunks[at],
          sizeof *r->chunks * (size_t)(r->nchunks - at));
  r->nchunks++;
  topn_chunk *c = &r->chunks[at];
  c->n = 0;
  c->cap = cap;
  c->e = cap ? malloc(sizeof *c->e * (size_t)cap) : NULL;
  if (cap && !c->e)
    abort();
  *bytes += sizeof *c->e * (size_t)cap;
}

void topn_rows_insert(topn_rows *r, topn_pos pos, tentry e, uint64_t *bytes) {
  if (r->nchunks == 0)
    add_chunk(r, 0, 0, bytes);
  topn_chunk *c = &r->chunks[pos.chunk];
  if (c->n == TOPN_CHUNK) { /* full: its upper half into a new chunk */
    int half = TOPN_CHUNK / 2;
    add_chunk(r, pos.chunk + 1, TOPN_CHUNK, bytes);
    c = &r->chunks[pos.chunk];
    topn_chunk *up = &r->chunks[pos.chunk + 1];
    memcpy(up->e, c->e + half, sizeof *c->e * (size_t)(c->n - half));
    up->n = c->n - half;
    c->n = half;
    if (pos.off > half) {
      pos.chunk++;
      pos.off -= half;
      c = up;
    }
  }
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 1;
    if (cap > TOPN_CHUNK)
      cap = TOPN_CHUNK;
    c->e = realloc(c->e, sizeof *c->e * (size_t)cap);
    if (!c->e)
      abort();
    *bytes += sizeof *c->e * (size_t)(cap - c->cap);
    c->cap = cap;
  }
  memmove(&c->e[pos.off + 1], &c->e[pos.off],
          sizeof *c->e * (size_t)(c->n - pos.off));
  c->e[pos.off] = e;
  c->n++;
  r->n++;
  *bytes += e.size;
}

tentry topn_rows_remove(topn_rows *r, topn_pos pos, uint64_t *bytes) {
  topn_chunk *c = &r->chunks[pos.chunk];
  tentry e = c->e[pos.off];
  memmove(&c->e[pos.off], &c->e[pos.off + 1],
          sizeof *c->e * (size_t)(c->n - pos.off - 1));
  c->n--;
  r->n--;
  *bytes -= e.size;
  if (c->n == 0) {
    *bytes -= sizeof *c->e * (size_t)c->cap;
    free(c->e);
    memmove(&r->chunks[pos.chunk], &r->chunks[pos.chunk + 1],
            sizeof *r->chunks * (size_t)(r->nchunks - pos.chunk - 1));
    r->nchunks--;
  }
  return e;
}

void topn_rows_free(topn_rows *r, uint64_t *bytes) {
  for (int i = 0; i < r->nchunks; i++) {
    topn_chunk *c = &r->chunks[i];
    for (int k = 0; k < c->n; k++) {
      *bytes -= c->e[k].size;
      free(c->e[k].sort);
    }
    *bytes -= sizeof *c->e * (size_t)c->cap;
    free(c->e);
  }
  *bytes -= sizeof *r->chunks * (size_t)r->capchunks;
  free(r->chunks);
  memset(r, 0, sizeof *r);
}
