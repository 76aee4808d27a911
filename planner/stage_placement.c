/* stage_placement.c - where a staged plan's parts can run on several
 * nodes: the stage up to which the nodes run the stages (spread_top), the
 * join under them and its two leaves, the columns whose hash routes each
 * leaf's rows by the join key (key routes), and whether a leaf can be
 * co-partitioned by the join key.  All of it depends on the plan alone,
 * so it is made once, when the plan is built (sl_stg_place), and stored
 * in sl_staged_plan; choose_join.c chooses a strategy over it, and a node
 * applies the coordinator's choice to its own copy of the plan
 * (sl_staged_place_on_node).  Apart from choose_join.c, which weighs
 * costs: this file only says what is possible. */
#include <string.h>

#include "stage_int.h"

/* The join under st's single-input stages: SELECTs, and in updating
 * stages also Top-N and aggregates (key_columns checks those). */
static const sl_stage *join_under(const sl_stage *st, bool updating) {
  while (st && (st->kind == SL_STAGE_SELECT ||
                (updating && (st->kind == SL_STAGE_TOPN ||
                              st->kind == SL_STAGE_AGGREGATE))))
    st = st->input;
  return st && st->kind == SL_STAGE_JOIN ? st : NULL;
}

/* Per join key k of join, which columns of st's rows hold that key
 * (keyed[k][c]), so that rows equal on the join key are equal there; NULL
 * when a stage between breaks the partitioning by the join key: a Top-N
 * whose partition, or an aggregate whose groups, leave a key out would
 * need rows from every node.  In a. */
static bool **key_columns(sl_arena *a, const sl_stage *st,
                          const sl_stage *join) {
  int nk = join->nkeys;
  bool **out = SL_ANEW_N(a, bool *, nk > 0 ? nk : 1);
  for (int k = 0; k < nk; k++)
    out[k] = SL_ANEW_N(a, bool, st->ncols + 1);
  if (st == join) {
    int nl = join->left->ncols;
    for (int k = 0; k < nk; k++) {
      const sl_bexpr *x = join->lkeys[k], *y = join->rkeys[k];
      if (x->kind == SL_BEXPR_COLUMN && x->depth == 0 && x->index < nl)
        out[k][x->index] = true;
      if (y->kind == SL_BEXPR_COLUMN && y->depth == 0 &&
          y->index < join->right->ncols)
        out[k][nl + y->index] = true;
    }
    return out;
  }
  bool **in = key_columns(a, st->input, join);
  if (!in)
    return NULL;
  int nin = st->input->ncols;
  /* Column e of the input, if it holds key k. */
#define HOLDS(e, k)                                                            \
  ((e)->kind == SL_BEXPR_COLUMN && (e)->depth == 0 && (e)->index < nin &&      \
   in[k][(e)->index])
  for (int k = 0; k < nk; k++) {
    switch (st->kind) {
    case SL_STAGE_SELECT:
      for (int j = 0; j < st->nexprs; j++)
        out[k][j] = HOLDS(st->exprs[j], k);
      break;
    case SL_STAGE_TOPN: {
      bool found = false;
      for (int j = 0; j < st->npartition; j++)
        found |= HOLDS(st->partition[j], k);
      if (!found)
        return NULL;
      memcpy(out[k], in[k], (size_t)nin);
      break;
    }
    case SL_STAGE_AGGREGATE: {
      bool found = false;
      for (int j = 0; j < st->ngroups; j++)
        found |= out[k][j] = HOLDS(st->groups[j], k);
      if (!found)
        return NULL;
      break;
    }
    default:
      return NULL;
    }
  }
#undef HOLDS
  return out;
}

/* Updating stages over one leaf: per column of st, the leaf column it
 * equals (-1: none); keep[c] stays true for the leaf columns every
 * aggregate's groups and every Top-N's partition below st include (so
 * rows equal there are equal on all of them).  NULL when st is not a
 * chain of single-input stages over the leaf.  In a. */
static int *leaf_columns(sl_arena *a, const sl_stage *st, int nleaf,
                         bool *keep) {
  int *out = SL_ANEW_N(a, int, st->ncols + 1);
  if (st->kind == SL_STAGE_LEAF) {
    for (int c = 0; c < st->ncols; c++)
      out[c] = c < nleaf ? c : -1;
    return out;
  }
  if (st->kind == SL_STAGE_JOIN || !st->input)
    return NULL;
  int *in = leaf_columns(a, st->input, nleaf, keep);
  if (!in)
    return NULL;
  int nin = st->input->ncols;
  /* The leaf column a plain column of the input holds, or -1. */
#define LEAF_COL(e)                                                            \
  ((e)->kind == SL_BEXPR_COLUMN && (e)->depth == 0 && (e)->index < nin         \
       ? in[(e)->index]                                                        \
       : -1)
  bool *has = SL_ANEW_N(a, bool, nleaf + 1);
  switch (st->kind) {
  case SL_STAGE_SELECT:
    for (int j = 0; j < st->nexprs; j++)
      out[j] = LEAF_COL(st->exprs[j]);
    return out;
  case SL_STAGE_TOPN:
    for (int j = 0; j < st->npartition; j++)
      if (LEAF_COL(st->partition[j]) >= 0)
        has[LEAF_COL(st->partition[j])] = true;
    for (int c = 0; c < nin; c++)
      out[c] = in[c];
    out[nin] = -1; /* the row number */
    break;
  case SL_STAGE_AGGREGATE:
    for (int j = 0; j < st->ngroups; j++) {
      out[j] = LEAF_COL(st->groups[j]);
      if (out[j] >= 0)
        has[out[j]] = true;
    }
    for (int j = st->ngroups; j < st->ncols; j++)
      out[j] = -1;
    break;
  default:
    return NULL;
  }
#undef LEAF_COL
  for (int c = 0; c < nleaf; c++)
    keep[c] &= has[c];
  return out;
}

/* The leaf columns that partition the stages of one stream from top down
 * (into *cols, in a), and how many. */
static int stream_route_from(sl_arena *a, const sl_staged_plan *sp,
                             const sl_stage *top, int **cols) {
  *cols = NULL;
  int nleaf = sp->leaves[0]->nout;
  bool *keep = SL_ANEW_N(a, bool, nleaf + 1);
  for (int c = 0; c < nleaf; c++)
    keep[c] = true;
  if (!leaf_columns(a, top, nleaf, keep))
    return 0;
  int *out = SL_ANEW_N(a, int, nleaf + 1);
  int n = 0;
  for (int c = 0; c < nleaf; c++)
    if (keep[c])
      out[n++] = c;
  *cols = out;
  return n;
}

/* Rows of these two types hash alike by sl_fields_hash. */
static bool same_bits(const sl_type *a, const sl_type *b) {
  if (sl_ptype_of(a) != sl_ptype_of(b))
    return false;
  return a->kind != SL_TYPE_DECIMAL ||
         (b->kind == SL_TYPE_DECIMAL && a->scale == b->scale);
}

static bool plain_column(const sl_bexpr *e, int ncols) {
  return e->kind == SL_BEXPR_COLUMN && e->depth == 0 && e->index < ncols;
}

/* Joins of more than two streams (q23: B JOIN P ON P.id = B.bidder JOIN A
 * ON A.seller = B.bidder): route every row under st by the value column c
 * of st's rows holds.  Sets route[leaf] to the leaf's column holding it
 * for each leaf under st; false when one cannot be routed so: the value
 * is computed, a join below st does not equate it with its other side's
 * column, or an aggregate or Top-N lies between. */
static bool route_down(const sl_staged_plan *sp, const sl_stage *st, int c,
                       int *route) {
  switch (st->kind) {
  case SL_STAGE_LEAF:
    if (c >= sp->leaves[st->leaf]->nout || route[st->leaf] >= 0)
      return false;
    route[st->leaf] = c;
    return true;
  case SL_STAGE_SELECT:
    return c < st->nexprs && plain_column(st->exprs[c], st->input->ncols) &&
           route_down(sp, st->input, st->exprs[c]->index, route);
  case SL_STAGE_JOIN: {
    int nl = st->left->ncols;
    bool left = c < nl;
    const sl_stage *mine = left ? st->left : st->right;
    const sl_stage *other = left ? st->right : st->left;
    int at = left ? c : c - nl;
    for (int k = 0; k < st->nkeys; k++) {
      const sl_bexpr *x = left ? st->lkeys[k] : st->rkeys[k];
      const sl_bexpr *y = left ? st->rkeys[k] : st->lkeys[k];
      if (plain_column(x, mine->ncols) && x->index == at &&
          plain_column(y, other->ncols))
        return route_down(sp, mine, at, route) &&
               route_down(sp, other, y->index, route);
    }
    return false;
  }
  default:
    return false;
  }
}

/* The one column per leaf that routes a join of more than two streams
 * (route_down from one of the top join's keys), every leaf's of a type
 * that hashes alike; false when there is none. */
static bool join_tree_route(const sl_staged_plan *sp, const sl_stage *join,
                            int *route) {
  for (int k = 0; k < join->nkeys; k++) {
    for (int i = 0; i < sp->nleaves; i++)
      route[i] = -1;
    const sl_bexpr *x = join->lkeys[k], *y = join->rkeys[k];
    if (!plain_column(x, join->left->ncols) ||
        !plain_column(y, join->right->ncols) ||
        !route_down(sp, join->left, x->index, route) ||
        !route_down(sp, join->right, y->index, route))
      continue;
    bool ok = true;
    for (int i = 0; i < sp->nleaves && ok; i++)
      ok = route[i] >= 0 && same_bits(sp->leaves[i]->out_types[route[i]],
                                      sp->leaves[0]->out_types[route[0]]);
    if (ok)
      return true;
  }
  return false;
}

/* The join under top, when its key partitions every stage from top down
 * to it and it joins two leaves, or more through joins below it that one
 * key routes (join_tree_route); else NULL. */
static const sl_stage *local_join_from(const sl_staged_plan *sp,
                                       const sl_stage *top) {
  const sl_stage *st = join_under(top, true);
  if (!st)
    return NULL;
  bool two = st->left->kind == SL_STAGE_LEAF &&
             st->right->kind == SL_STAGE_LEAF &&
             st->left->leaf != st->right->leaf;
  sl_arena a;
  sl_arena_init(&a, 0);
  int *route = SL_ANEW_N(&a, int, sp->nleaves + 1);
  bool local = (two || (sp->nleaves > 2 && join_tree_route(sp, st, route))) &&
               key_columns(&a, top, st) != NULL;
  sl_arena_free(&a);
  return local ? st : NULL;
}

/* Does a stage from st down keep state (an aggregate, Top-N or join)? */
static bool keeps_state(const sl_stage *st) {
  for (; st; st = st->input)
    if (st->kind == SL_STAGE_AGGREGATE || st->kind == SL_STAGE_TOPN ||
        st->kind == SL_STAGE_JOIN)
      return true;
  return false;
}

/* The stage the nodes run up to (sl_staged_plan.spread_top). */
static const sl_stage *spread_top_of(const sl_staged_plan *sp) {
  if (!sp->updating)
    return sp->top;
  const sl_stage *found = NULL;
  sl_arena a;
  sl_arena_init(&a, 0);
  for (const sl_stage *st = sp->top; st && !found; st = st->input) {
    int *cols;
    if (st->kind == SL_STAGE_LEAF)
      break; /* nothing left to spread: the leaf's rows go here */
    if (sp->nleaves == 1
            ? stream_route_from(&a, sp, st, &cols) > 0 && keeps_state(st)
            : local_join_from(sp, st) != NULL)
      found = st;
    if (st->kind == SL_STAGE_JOIN)
      break; /* below a join its sides are not one chain */
  }
  sl_arena_free(&a);
  return found;
}

/* Updating stages over one stream that one key partitions: the leaf's
 * columns included in every aggregate's groups and every Top-N's
 * partition above it up to spread_top (through plain projections), in
 * column order (into *cols, in a); 0 when there are none (a global Top-N
 * or aggregate) and every row must meet in one place. */
static int stream_route(sl_arena *a, const sl_staged_plan *sp, int **cols) {
  *cols = NULL;
  const sl_stage *top = sp->spread_top;
  if (!sp->updating || sp->nleaves != 1 || !top)
    return 0;
  return stream_route_from(a, sp, top, cols);
}

/* The join under the stages (sl_staged_plan.join_stage). */
static const sl_stage *join_stage_of(const sl_staged_plan *sp) {
  if (!sp->updating)
    return join_under(sp->top, false);
  const sl_stage *top = sp->spread_top;
  return top ? local_join_from(sp, top) : NULL;
}

/* The two leaves a broadcast join could spread (join_left, join_right):
 * the join stage joins two different leaves, and the plan has no others. */
static bool join_leaves_of(const sl_staged_plan *sp, int *left, int *right) {
  const sl_stage *st = sp->join_stage;
  if (!st || sp->nleaves != 2)
    return false;
  if (st->left->kind != SL_STAGE_LEAF || st->right->kind != SL_STAGE_LEAF ||
      st->left->leaf == st->right->leaf)
    return false;
  *left = st->left->leaf;
  *right = st->right->leaf;
  return true;
}

bool sl_stg_copartition(sl_arena *a, sl_staged_plan *sp, int local) {
  const sl_stage *st = sp->join_stage;
  if (!st)
    return false;
  bool left = st->left->leaf == local;
  sl_plan *lp = sp->leaves[local];
  const sl_plan *op = sp->leaves[left ? st->right->leaf : st->left->leaf];
  sl_bexpr **lk = left ? st->lkeys : st->rkeys;
  sl_bexpr **ok = left ? st->rkeys : st->lkeys;
  /* Partition leaders merge slices' partials; session fragments they do
   * not merge. */
  if (st->nkeys == 0 || lp->kind != SL_PLAN_AGGREGATE || !lp->windowed ||
      lp->window_rows || lp->ninputs != 1 ||
      lp->window.kind == SL_WINDOW_SESSION)
    return false;
  const sl_stage *ls = left ? st->left : st->right;
  const sl_stage *os = left ? st->right : st->left;
  int *pk = SL_ANEW_N(a, int, st->nkeys);
  int *rc = SL_ANEW_N(a, int, st->nkeys);
  int n = 0;
  for (int i = 0; i < st->nkeys; i++) {
    const sl_bexpr *x = lk[i], *y = ok[i];
    if (x->kind != SL_BEXPR_COLUMN || x->depth != 0 || x->index >= lp->nout ||
        y->kind != SL_BEXPR_COLUMN || y->depth != 0 || y->index >= op->nout)
      return false;
    /* Window bounds equated: every row of a window's evaluation has them
     * equal already; they do not partition. */
    if (ls->wprop[x->index] >= 0 && os->wprop[y->index] >= 0)
      continue;
    const sl_bexpr *out = lp->out[x->index];
    /* An aggregate plan's outputs read its aggregate row: the group keys
     * first (plan.h). */
    if ((out->kind != SL_BEXPR_GROUP_REF && out->kind != SL_BEXPR_COLUMN) ||
        out->index >= lp->nkeys ||
        !same_bits(lp->keys[out->index]->type, op->out_types[y->index]))
      return false;
    pk[n] = out->index;
    rc[n++] = y->index;
  }
  if (n == 0)
    return false;
  lp->npartition_keys = n;
  lp->partition_keys = pk;
  sp->nroute = n;
  sp->route_cols = rc;
  return true;
}

/* The columns of leaf `leaf` whose hash routes its rows by the join key
 * (SL_JOIN_SHUFFLE): its join keys, in key order, leaving out the window
 * bounds (a window's rows have them equal already).  Sets *out (in a) and
 * returns how many; 0 when the rows cannot be routed (a key that is not a
 * plain column, or the two sides' keys would not hash alike). */
static int join_route(sl_arena *a, const sl_staged_plan *sp, int leaf,
                      int **out) {
  const sl_stage *st = sp->join_stage;
  *out = NULL;
  if (!st)
    return 0;
  int *cols = SL_ANEW_N(a, int, st->nkeys + 1);
  *out = cols;
  if (sp->nleaves > 2) {
    int *route = SL_ANEW_N(a, int, sp->nleaves);
    if (!join_tree_route(sp, st, route))
      return 0;
    cols[0] = route[leaf];
    return 1;
  }
  bool left = st->left->leaf == leaf;
  const sl_plan *lp = sp->leaves[leaf];
  const sl_plan *op = sp->leaves[left ? st->right->leaf : st->left->leaf];
  const sl_stage *ls = left ? st->left : st->right;
  const sl_stage *os = left ? st->right : st->left;
  sl_bexpr **lk = left ? st->lkeys : st->rkeys;
  sl_bexpr **ok = left ? st->rkeys : st->lkeys;
  int n = 0;
  for (int i = 0; i < st->nkeys; i++) {
    const sl_bexpr *x = lk[i], *y = ok[i];
    if (x->kind != SL_BEXPR_COLUMN || x->depth != 0 ||
        y->kind != SL_BEXPR_COLUMN || y->depth != 0)
      return 0;
    /* (Window rows' bounds are the stage's columns after the leaf's.) */
    if (x->index < ls->ncols && y->index < os->ncols &&
        ls->wprop[x->index] >= 0 && os->wprop[y->index] >= 0)
      continue;
    if (x->index >= lp->nout || y->index >= op->nout)
      return 0;
    if (!same_bits(lp->out_types[x->index], op->out_types[y->index]))
      return 0;
    cols[n++] = x->index;
  }
  return n;
}

void sl_stg_place(sl_arena *a, sl_staged_plan *sp) {
  sp->spread_top = spread_top_of(sp);
  sp->join_stage = join_stage_of(sp);
  sp->join_left = sp->join_right = -1;
  int l, r;
  if (join_leaves_of(sp, &l, &r)) {
    sp->join_left = l;
    sp->join_right = r;
  }
  sp->key_nroute = SL_ANEW_N(a, int, sp->nleaves);
  sp->key_route = SL_ANEW_N(a, int *, sp->nleaves);
  for (int i = 0; i < sp->nleaves; i++) {
    /* Two leaves route by the join key only when it joins them both. */
    if (sp->nleaves == 1)
      sp->key_nroute[i] = stream_route(a, sp, &sp->key_route[i]);
    else if (sp->nleaves > 2 || sp->join_left >= 0)
      sp->key_nroute[i] = join_route(a, sp, i, &sp->key_route[i]);
  }
  sp->join_strategy = SL_JOIN_SINGLE;
  sp->local_leaf = sp->bcast_leaf = -1;
}

/* "do the coordinator and the node run one build?": the node's plan of
 * the same text cannot be placed as the coordinator placed its own. */
static int not_one_build(sl_error *err, const char *what) {
  return sl_error_set(err, SL_EINTERNAL,
                      "%s: do the coordinator and the node run one build?",
                      what);
}

/* A node sending leaf `leaf`'s rows over links to the stage nodes. */
static int place_side(sl_arena *a, sl_staged_plan *sp, int leaf,
                      sl_error *err) {
  sl_join_strategy join = sp->join_strategy;
  /* (Under a repartition of every leaf the route is all that matters,
   * however many leaves there are.) */
  bool every = sl_join_routes_both(join);
  if (sp->nleaves != 1 && !every && sp->join_left < 0)
    return not_one_build(err, "a join's side here, but no join of two leaves");
  int other = sp->join_left < 0       ? leaf
              : leaf == sp->join_left ? sp->join_right
                                      : sp->join_left;
  bool keyed = join == SL_JOIN_REPARTITION || join == SL_JOIN_LATE_MERGE;
  /* The route is the side's join key columns (the other leaf's check);
   * under late merge this leaf's own leaders are split by the key too. */
  if ((join == SL_JOIN_LATE_MERGE && !sl_stg_copartition(a, sp, leaf)) ||
      (keyed && !sl_stg_copartition(a, sp, other)))
    return not_one_build(err, "the join cannot be co-partitioned here");
  if (every && sp->key_nroute[leaf] == 0)
    return not_one_build(err, "the join's rows cannot be routed here");
  if (!every)
    sp->bcast_leaf = leaf;
  return SL_OK;
}

int sl_staged_place_on_node(sl_arena *a, sl_plan *plan, int leaf, int fed,
                            bool side, sl_join_strategy join,
                            sl_strategy strategy, sl_error *err) {
  /* (plan->staged is another kind's bytes unless the plan is staged.) */
  sl_staged_plan *sp = plan->kind == SL_PLAN_STAGED ? plan->staged : NULL;
  /* The coordinator planned the same text into the same leaves. */
  if (!sp || leaf >= sp->nleaves ||
      fed >= sp->nleaves || (fed == leaf && sp->nleaves != 1))
    return sl_error_set(err, SL_EINTERNAL,
                        "leaf %d of a query that has no such leaf here: "
                        "do the coordinator and the node run one build?",
                        leaf + 1);
  sp->join_strategy = join;
  if (fed >= 0 && sl_join_routes_both(join)) {
    /* The stages here, over what the links bring of every leaf (this
     * node's own rows of leaf too, sent by a plan of their own). */
    sp->local_leaf = leaf;
    return SL_OK;
  }
  sp->leaves[leaf]->strategy = strategy;
  if (fed >= 0) {
    /* A broadcast join: the stages here, over this node's rows of leaf
     * and the other leaf's from the links; under a repartition this
     * leaf's leaders split by the join key, as the other leaf's rows are
     * routed. */
    sp->local_leaf = leaf;
    sp->bcast_leaf = fed;
    if (sp->nleaves != 2)
      return sl_error_set(err, SL_EINTERNAL, "a join on the nodes of %d leaves",
                          sp->nleaves);
    if ((join == SL_JOIN_REPARTITION || join == SL_JOIN_LATE_MERGE) &&
        !sl_stg_copartition(a, sp, leaf))
      return not_one_build(err, "the join cannot be co-partitioned here");
    return SL_OK;
  }
  return side ? place_side(a, sp, leaf, err) : SL_OK;
}
