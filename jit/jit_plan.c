/* jit_plan.c - the rows a plan's pipeline runs over (shared by the executor
 * and EXPLAIN) and whether the JIT compiles that pipeline.
 *
 * The checks compile every expression the workers evaluate per record
 * with the interpreter, over the same layouts the executor builds, and ask
 * sl_jit_supports about each: the executor runs exactly these checks
 * before building kernels, so what EXPLAIN says ([compiled], "X through
 * the interpreter", [interpreted: why]) is what running the query does.
 */
#include <stdio.h>
#include <string.h>

#include "sluice/jit/jit.h"

const sl_row_layout *sl_plan_input_layout(sl_arena *a, const sl_plan *plan,
                                          int j) {
  const sl_plan_input *in = &plan->inputs[j];
  const char **names = SL_ANEW_N(a, const char *, in->nused + 1);
  const sl_type **types = SL_ANEW_N(a, const sl_type *, in->nused + 1);
  for (int k = 0; k < in->nused; k++) {
    names[k] = in->leaves.names[in->used_leaf[k]];
    types[k] = in->leaves.types[in->used_leaf[k]];
  }
  return sl_row_layout_new(a, in->nused, names, types);
}

int *sl_plan_column_map(sl_arena *a, const sl_plan *plan,
                        const sl_row_layout *const *in_layouts,
                        const int *field_base) {
  int *map = SL_ANEW_N(a, int, plan->base_ncols + 1);
  for (int c = 0; c < plan->base_ncols; c++) {
    map[c] = -1;
    int j = sl_plan_input_of(plan, c);
    if (j < 0 || field_base[j] < 0 || plan->base_types[c]->kind == SL_TYPE_ROW)
      continue;
    const sl_row_layout *l = in_layouts[j];
    for (int f = 0; f < l->nfields; f++)
      if (strcmp(l->fields[f].name, plan->base_names[c]) == 0) {
        map[c] = field_base[j] + f;
        break;
      }
  }
  return map;
}

const sl_row_layout *sl_plan_joined_layout(sl_arena *a,
                                           const sl_row_layout *stream,
                                           const sl_row_layout *table) {
  int nj = stream->nfields + table->nfields;
  const char **names = SL_ANEW_N(a, const char *, nj + 1);
  const sl_type **types = SL_ANEW_N(a, const sl_type *, nj + 1);
  for (int f = 0; f < stream->nfields; f++) {
    names[f] = stream->fields[f].name;
    types[f] = stream->fields[f].type;
  }
  for (int f = 0; f < table->nfields; f++) {
    names[stream->nfields + f] = table->fields[f].name;
    types[stream->nfields + f] = table->fields[f].type;
  }
  return sl_row_layout_new(a, nj, names, types);
}

/* The most program nodes one pipeline's kernel may have.  LLVM's time
 * grows faster than the code it is given (a 1,000-column SELECT took 4.6 s
 * to compile, 10,000 ANDed conditions 2.7 s) and cannot be interrupted; a
 * pipeline above this runs interpreted, which starts at once. */
#define JIT_MAX_NODES 4000

typedef struct checker {
  sl_arena *a;
  int nodes;          /* program nodes so far */
  const char *fatal;  /* an expression that does not compile at all */
  const char *interp; /* what runs through the interpreter: "A, B" */
  bool joined_interp; /* some of it over a lookup join's joined rows */
  bool joined;        /* checking expressions over joined rows now */
} checker;

/* Compile e as the executor does and ask the JIT what of it is native. */
static void check(checker *c, const sl_bexpr *e, const sl_row_layout *l,
                  const int *map) {
  if (!e || c->fatal)
    return;
  sl_expr_prog *p;
  sl_error err = {0};
  if (sl_expr_compile(c->a, e, l, map, &p, &err) != SL_OK) {
    c->fatal = sl_arena_strdup(c->a, err.message ? err.message : "?");
    sl_error_clear(&err);
    return;
  }
  c->nodes += sl_expr_nodes(p);
  if (c->nodes > JIT_MAX_NODES) {
    c->fatal = sl_arena_printf(c->a,
                               "the expressions are too large to compile "
                               "(more than %d nodes)",
                               JIT_MAX_NODES);
    return;
  }
  char why[160];
  if (sl_jit_supports(p, why, sizeof why))
    return;
  c->joined_interp |= c->joined;
  /* "JIT does not handle X" -> X, each named once */
  const char *what = why;
  static const char prefix[] = "JIT does not handle ";
  if (strncmp(what, prefix, sizeof prefix - 1) == 0)
    what += sizeof prefix - 1;
  if (c->interp && strstr(c->interp, what))
    return;
  c->interp = c->interp ? sl_arena_printf(c->a, "%s, %s", c->interp, what)
                        : sl_arena_strdup(c->a, what);
}

/* Every expression the plan's workers evaluate per record, over the
 * layouts the executor builds. */
static void scan(checker *c, const sl_plan *p) {
  sl_arena *a = c->a;
  const sl_row_layout *stream = sl_plan_input_layout(a, p, 0);
  const sl_row_layout *ins[2] = {stream, NULL};
  int base0[2] = {0, -1};
  int *map0 = sl_plan_column_map(a, p, ins, base0);
  const sl_row_layout *row = stream;
  int *row_map = map0;
  check(c, p->filter, stream, map0);
  if (p->join) {
    ins[1] = sl_plan_input_layout(a, p, 1);
    row = sl_plan_joined_layout(a, stream, ins[1]);
    int basej[2] = {0, stream->nfields};
    row_map = sl_plan_column_map(a, p, ins, basej);
    for (int i = 0; i < p->njoin_keys; i++)
      check(c, p->join_stream_keys[i], stream, map0);
  }
  bool event_time = p->windowed && !p->window.proctime;
  if (p->kind != SL_PLAN_STATELESS && p->watermark && event_time)
    check(c, p->watermark, stream, map0);
  c->joined = p->join;
  check(c, p->post_join_filter, row, row_map);
  if (p->kind != SL_PLAN_AGGREGATE) { /* stateless */
    for (int i = 0; i < p->nout; i++)
      check(c, p->out[i], row, row_map);
    return;
  }
  if (event_time)
    check(c, p->window.time, row, row_map);
  for (int i = 0; i < p->nkeys; i++)
    check(c, p->keys[i], row, row_map);
  for (int i = 0; i < p->naggs; i++) {
    check(c, p->aggs[i].arg, row, row_map);
    check(c, p->aggs[i].filter, row, row_map);
  }
}

const char *sl_jit_plan_status(sl_arena *a, const sl_plan *p, bool jit_on) {
  if (!jit_on)
    return "sluice.jit = off";
  checker c = {a, 0, NULL, NULL, false, false};
  scan(&c, p);
  return c.fatal;
}

const char *sl_jit_plan_interpreted(sl_arena *a, const sl_plan *p) {
  checker c = {a, 0, NULL, NULL, false, false};
  scan(&c, p);
  return c.interp;
}

const char *sl_jit_lookup_status(const sl_plan *p) {
  if (!p->join)
    return "no lookup join";
  if (p->kind != SL_PLAN_AGGREGATE)
    return "not an aggregate";
  for (int i = 0; i < p->njoin_keys; i++)
    if (sl_ptype_of(p->join_stream_keys[i]->type) == SL_P_DEC128)
      return "a DECIMAL(>18) join key";
  sl_arena a;
  sl_arena_init(&a, 0);
  checker c = {&a, 0, NULL, NULL, false, false};
  scan(&c, p);
  bool interp = c.joined_interp;
  sl_arena_free(&a);
  return interp ? "an expression after the join runs through the interpreter"
                : NULL;
}
