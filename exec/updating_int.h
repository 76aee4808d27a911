/* updating_int.h - what the files of the updating stages share: the
 * stage tree's state (updating_stages.c runs the tree, SELECT, Top-N and
 * AGGREGATE; updating_join.c the JOIN). */
#ifndef SLUICE_UPDATING_INT_H
#define SLUICE_UPDATING_INT_H

#include "executor_int.h"
#include "sluice/state/agg_multiset.h"
#include "sluice/state/topn_rows.h"
#include "updating_stages.h"

/* A join's row of one side, under its key.  Held by its side's hash
 * table (while `live`), by each deadline heap entry naming it and, under
 * a TTL, by its side's arrival queue: it is freed when the last of them
 * lets go (a heap's or the queue's entries are dropped lazily, when their
 * time comes). */
typedef struct jrow {
  struct jrow *next, **pprev; /* in its bucket (pprev: O(1) unlink) */
  uint64_t hash;
  double born;   /* when it came ('table.exec.state.ttl') */
  uint32_t size; /* of its block */
  uint16_t refs; /* the hash table's (while live) + the entries' */
  bool live;
  uint8_t *key, *row;
} jrow;

/* Rows of one side in the order their bound lets them go: a min-heap of
 * (deadline, row) for one bound (join_deadlines.c).  A row taken back or
 * expired by the TTL stays in the heap, dead, until its deadline. */
typedef struct jdeadline {
  int64_t at; /* the row goes once the bounding watermark is >= at */
  jrow *row;
} jdeadline;

typedef struct jheap {
  jdeadline *v;
  uint32_t n, cap;
} jheap;

/* A side's rows in the order they came (a ring), for the TTL. */
typedef struct jqueue {
  jrow **v;
  uint32_t head, n, cap;
} jqueue;

typedef struct jside {
  jrow **buckets;
  uint32_t cap, count;
  uint64_t bytes;
  jqueue arrivals; /* under 'table.exec.state.ttl' only */
  /* EXPLAIN ANALYZE: the most this side held at once */
  uint64_t peak_rows, peak_bytes;
} jside;

/* A Top-N partition: its rows in order, the first N (all of them when
 * the input can take rows back: sl_stage.retracting). */
typedef struct tpart {
  struct tpart *next;
  uint64_t hash;
  double touched; /* when a row last came ('table.exec.state.ttl') */
  topn_rows rows;
} tpart;

typedef struct ustage ustage;
struct ustage {
  const stage_rt *rt;
  ustage *parent;
  int side; /* in a parent join: 0 left, 1 right */
  ustage *input, *left, *right;
  sl_buffer out;  /* rows being filled for the parent */
  uint8_t *ops;   /* ... their kinds */
  uint32_t *sel;  /* scratch, a row each of a batch or of out */
  uint8_t *kinds; /* scratch: a SELECT's kinds of the rows in sel */
  /* JOIN */
  sl_buffer keys;
  jside sides[2];
  int *side_leaves[2]; /* the leaves under each side (their watermarks) */
  int nside_leaves[2];
  jheap *deadlines; /* per bound: the rows of the side it sweeps */
  uint64_t evicted;
  /* AGGREGATE: the stage's aggregates and a count of its rows (a group
   * whose rows were all taken back is deleted), over tmp rows */
  sl_arena arena;
  sl_agg_set set;
  sl_group_table groups;
  sl_buffer tmp;
  uint8_t *keyrow;
  agg_multisets *multi; /* MIN, MAX, DISTINCT over a retracting input */
  uint32_t touched_off; /* 'table.exec.state.ttl': a group's last row */
  /* TOPN */
  sl_buffer sorts;
  tpart **parts;
  uint32_t pcap, pcount;
  int64_t limit;
  uint64_t bytes;
};

struct update_stages {
  ustage **all;
  int nall, capall;
  ustage *top;
  uint32_t buffer_size;
  sl_expr_ctx *ctx;
  uint8_t *inserts; /* all +I: the kinds of a leaf's rows */
  update_stages_out_fn out;
  void *arg;
  sl_error *err;
  double last_sweep;
  double ttl; /* seconds; 0: state never expires */
  double now; /* the clock, read once per push */
};

/* Hand s's filled rows to its parent (or to the output). */
int ustage_emit(update_stages *u, ustage *s);

/* updating_join.c: a batch of one side's rows (ops: their kinds) into
 * the join; the sweep by the leaves' watermarks; the TTL's expiry; the
 * join's state freed. */
int ustage_join_push(update_stages *u, ustage *s, int side, const sl_buffer *in,
                     const uint8_t *ops);
void ustage_join_sweep(ustage *s, const int64_t *leaf_wm);
void ustage_join_expire(ustage *s, double oldest);
void ustage_join_free(ustage *s);

/* join_deadlines.c: a bound's rows by deadline; a side's by arrival. */
void jheap_push(jheap *h, int64_t at, jrow *row);
/* The entry with the earliest deadline (h->n > 0) taken out. */
jdeadline jheap_pop(jheap *h);
void jheap_free(jheap *h);
void jqueue_push(jqueue *q, jrow *row);
/* The oldest row (q->n > 0) taken out. */
jrow *jqueue_pop(jqueue *q);
void jqueue_free(jqueue *q);

#endif
