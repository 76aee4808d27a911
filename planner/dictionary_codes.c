/* dictionary_codes.c - string columns read as dictionary codes.
 *
 * A source may say that every value of a string leaf comes from a fixed
 * dictionary (sl_source_connector.dictionary: YSB's ad ids, its event
 * types).  Where the plan only compares such a column for equality, it can
 * read the leaf's code (an INT) instead: codes of one dictionary are equal
 * exactly when the strings are, so
 *   - a join key equating two leaves of the same dictionary compares codes;
 *   - a filter conjunct `leaf = 'text'`, `<>`, or `leaf [NOT] IN ('a', ...)`
 *     compares the code with the literal's code (-1 for a string the
 *     dictionary lacks, which no row has: the conjunct is FALSE, or TRUE
 *     for <>, on every non-NULL value, as with the string);
 *   - a group key groups by the code, and the output and HAVING look the
 *     string up again (DICTIONARY_STRING, in the coordinator).
 * A NULL string is a NULL code, so three-valued results do not change.
 * The source then produces 4-byte codes rather than 16-byte strings, and
 * the compiled pipelines hash and compare integers: on YSB the join's
 * probe and the group table's key were most of a record's cycles.
 *
 * Codes are the same in every process (a dictionary is built from the
 * table's definition), so partial states keyed by codes merge across
 * workers and nodes.  Runs after the strategy is chosen (the statistics
 * sample reads the strings), on the coordinator and on every node alike
 * (session.c), for single-pipeline plans; not for the leaves of staged
 * plans, nor with late records written whole (they need every string).
 */
#include <stdio.h>
#include <string.h>

#include "plan_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/planner/plan.h"

/* What the output and HAVING call to turn a code back into its string.
 * Not in the function registry: only the planner writes it. */
static const sl_function dictionary_string = {
    .name = "DICTIONARY_STRING",
    .kind = SL_FN_SCALAR,
    .min_args = 1,
    .max_args = 1,
    .signature = "DICTIONARY_STRING(code INT)",
    .description = "the string of a dictionary code (planner internal)",
};

typedef struct coder {
  sl_arena *a;
  sl_plan *plan;
  sl_strbuf what; /* the rewrites done, for EXPLAIN's note */
} coder;

static void say(coder *c, const char *fmt, const char *x) {
  sl_strbuf_printf(&c->what, "%s", c->what.len ? "; " : "");
  sl_strbuf_printf(&c->what, fmt, x);
}

/* e's dictionary when e is a column that is a plain string leaf of an
 * input whose connector gives one for it (and a declared length that
 * holds every value); its input and leaf.  NULL otherwise. */
static const sl_dictionary *coded_leaf(const sl_plan *p, const sl_bexpr *e,
                                       int *input, int *leaf) {
  if (!e || e->kind != SL_BEXPR_COLUMN || e->depth != 0)
    return NULL;
  int j = sl_plan_input_of(p, e->index);
  if (j < 0)
    return NULL;
  const sl_plan_input *in = &p->inputs[j];
  int tc = e->index - in->first_column;
  if (tc < 0 || tc >= in->ncolumns || !in->connector->dictionary)
    return NULL; /* a code column already, or no dictionaries at all */
  const sl_column *col = &in->table->columns[tc];
  if (col->computed_sql || col->type->kind != SL_TYPE_VARCHAR ||
      e->type->kind != SL_TYPE_VARCHAR)
    return NULL; /* CHAR pads: its comparisons are not plain bytes */
  int l = -1;
  for (int i = 0; i < in->leaves.n - in->ncodes && l < 0; i++)
    if (strcmp(in->leaves.names[i], col->name) == 0)
      l = i;
  if (l < 0)
    return NULL;
  const sl_dictionary *d = in->connector->dictionary(in->table, col->name);
  if (!d || (col->type->precision >= 0 &&
             (uint32_t)col->type->precision < d->max_len))
    return NULL;
  *input = j;
  *leaf = l;
  return d;
}

/* arr (n entries) with one more, v, at its end. */
#define APPEND(a, T, arr, n, v)                                                \
  do {                                                                         \
    T *grown_ = SL_ANEW_N(a, T, (n) + 1);                                      \
    if ((n) > 0)                                                               \
      memcpy(grown_, arr, sizeof(T) * (size_t)(n));                            \
    grown_[n] = (v);                                                           \
    arr = grown_;                                                              \
  } while (0)

/* The base-row column of leaf `leaf`'s code in input j (made the first
 * time: an INT leaf "<leaf>#code" of the input and a column of the base
 * row after every other). */
static int code_column(coder *c, int j, int leaf, const sl_dictionary *d) {
  sl_plan *p = c->plan;
  sl_plan_input *in = &p->inputs[j];
  for (int k = 0; k < in->ncodes; k++)
    if (in->code_leaf[k] == leaf)
      return in->code_column[k];
  sl_type *t = sl_type_new(c->a, SL_TYPE_INT);
  t->not_null = in->leaves.types[leaf]->not_null;
  const char *name = sl_arena_printf(c->a, "%s#code", in->leaves.names[leaf]);
  int n = in->leaves.n;
  APPEND(c->a, const char *, in->leaves.names, n, name);
  APPEND(c->a, const sl_type *, in->leaves.types, n, t);
  in->leaves.n = n + 1;
  int nb = p->base_ncols;
  APPEND(c->a, const char *, p->base_names, nb, name);
  APPEND(c->a, const sl_type *, p->base_types, nb, t);
  p->base_ncols = nb + 1;
  int k = in->ncodes;
  APPEND(c->a, int, in->code_leaf, k, leaf);
  APPEND(c->a, int, in->code_column, k, nb);
  APPEND(c->a, const sl_dictionary *, in->code_dict, k, d);
  in->ncodes = k + 1;
  return nb;
}

/* COLUMN of the code of e (a coded_leaf of input j, leaf). */
static sl_bexpr *code_of(coder *c, const sl_bexpr *e, int j, int leaf,
                         const sl_dictionary *d) {
  int col = code_column(c, j, leaf, d);
  sl_bexpr *x = sl_pl_column(c->a, col, c->plan->base_types[col],
                             c->plan->base_names[col]);
  x->qualifier = e->qualifier;
  x->span = e->span;
  return x;
}

/* The INT literal of s's code in d (-1: not in it), or NULL when s is not
 * a string literal whose bytes compare as the column's. */
static sl_bexpr *code_literal(coder *c, const sl_bexpr *s,
                              const sl_dictionary *d) {
  if (!s || s->kind != SL_BEXPR_LITERAL || s->lit.kind != SL_LIT_STRING ||
      !s->lit.text)
    return NULL;
  size_t len = strlen(s->lit.text);
  if (len > 0 && s->lit.text[len - 1] == ' ')
    return NULL; /* a CHAR literal's trailing blanks: leave it to strings */
  int32_t code = sl_dictionary_code(d, s->lit.text, (uint32_t)len);
  sl_type *t = sl_type_new(c->a, SL_TYPE_INT);
  t->not_null = true;
  sl_bexpr *x = sl_pl_new_expr(c->a, SL_BEXPR_LITERAL, t);
  x->span = s->span;
  x->lit.kind = SL_LIT_INTEGER;
  x->lit.i64 = code;
  x->lit.text = sl_arena_printf(c->a, "%d", (int)code);
  return x;
}

/* A filter conjunct over coded strings, over codes; NULL: unchanged. */
static sl_bexpr *coded_conjunct(coder *c, const sl_bexpr *e) {
  int j, leaf;
  const sl_dictionary *d;
  bool cmp = e->kind == SL_BEXPR_BINARY && e->nargs == 2 &&
             (e->op == SL_OP_EQ || e->op == SL_OP_NE);
  if (!cmp && (e->kind != SL_BEXPR_IN_LIST || e->nargs < 2))
    return NULL;
  int col = cmp && !coded_leaf(c->plan, e->args[0], &j, &leaf) ? 1 : 0;
  d = coded_leaf(c->plan, e->args[col], &j, &leaf);
  if (!d || (!cmp && col != 0))
    return NULL;
  sl_bexpr *x = SL_ANEW(c->a, sl_bexpr);
  *x = *e;
  x->args = SL_ANEW_N(c->a, sl_bexpr *, e->nargs);
  for (int i = 0; i < e->nargs; i++)
    if (i != col && !(x->args[i] = code_literal(c, e->args[i], d)))
      return NULL;
  x->args[col] = code_of(c, e->args[col], j, leaf, d);
  say(c, "filter %s as codes", sl_pl_sql(c->a, e));
  return x;
}

static sl_bexpr *coded_filter(coder *c, sl_bexpr *f) {
  if (!f)
    return NULL;
  sl_pl_parts parts = {0};
  sl_pl_conjuncts(c->a, f, &parts);
  bool changed = false;
  for (int i = 0; i < parts.n; i++) {
    sl_bexpr *x = coded_conjunct(c, parts.v[i]);
    if (x) {
      parts.v[i] = x;
      changed = true;
    }
  }
  return changed ? sl_pl_and_parts(c->a, &parts) : f;
}

static void coded_join_keys(coder *c) {
  sl_plan *p = c->plan;
  for (int i = 0; i < p->njoin_keys; i++) {
    int js, ls, jt, lt;
    const sl_dictionary *ds = coded_leaf(p, p->join_stream_keys[i], &js, &ls);
    const sl_dictionary *dt = coded_leaf(p, p->join_table_keys[i], &jt, &lt);
    if (!ds || ds != dt)
      continue;
    say(c, "join key %s as codes",
        sl_arena_printf(c->a, "%s.%s = %s.%s", p->inputs[js].table->name,
                        p->inputs[js].leaves.names[ls],
                        p->inputs[jt].table->name,
                        p->inputs[jt].leaves.names[lt]));
    p->join_stream_keys[i] = code_of(c, p->join_stream_keys[i], js, ls, ds);
    p->join_table_keys[i] = code_of(c, p->join_table_keys[i], jt, lt, dt);
  }
}

/* Aggregate-row column k (a coded group key) read as its string. */
typedef struct key_strings {
  const sl_dictionary **dict; /* per group key, or NULL */
  int nkeys;
  sl_type **code_type;
} key_strings;

static sl_bexpr *key_string(sl_arena *a, const sl_bexpr *e, void *arg) {
  const key_strings *ks = arg;
  if (e->kind != SL_BEXPR_COLUMN || e->depth != 0 || e->index < 0 ||
      e->index >= ks->nkeys || !ks->dict[e->index])
    return NULL;
  sl_bexpr *code = sl_pl_column(a, e->index, ks->code_type[e->index], e->name);
  code->qualifier = e->qualifier;
  sl_bexpr *s = sl_pl_new_expr(a, SL_BEXPR_CALL, e->type);
  s->span = e->span;
  s->fn = &dictionary_string;
  s->dictionary = ks->dict[e->index];
  s->name = e->name;
  s->nargs = 1;
  s->args = SL_ANEW_N(a, sl_bexpr *, 1);
  s->args[0] = code;
  return s;
}

static void coded_group_keys(coder *c) {
  sl_plan *p = c->plan;
  key_strings ks = {SL_ANEW_N(c->a, const sl_dictionary *, p->nkeys + 1),
                    p->nkeys, SL_ANEW_N(c->a, sl_type *, p->nkeys + 1)};
  bool any = false;
  for (int i = 0; i < p->nkeys; i++) {
    int j, leaf;
    const sl_dictionary *d = coded_leaf(p, p->keys[i], &j, &leaf);
    if (!d)
      continue;
    say(c, "group key %s as its code", sl_pl_sql(c->a, p->keys[i]));
    p->keys[i] = code_of(c, p->keys[i], j, leaf, d);
    ks.dict[i] = d;
    ks.code_type[i] = p->keys[i]->type;
    any = true;
  }
  if (!any)
    return;
  for (int i = 0; i < p->nout; i++)
    p->out[i] = sl_pl_map(c->a, p->out[i], key_string, &ks);
  p->having = sl_pl_map(c->a, p->having, key_string, &ks);
}

void sl_plan_use_codes(sl_arena *a, sl_plan *plan,
                       const sl_settings *settings) {
  if (!sl_settings_get_bool(settings, "sluice.dictionary-codes", true) ||
      (plan->kind != SL_PLAN_AGGREGATE && plan->kind != SL_PLAN_STATELESS) ||
      plan->late_table || plan->sink_arg)
    return;
  coder c = {a, plan, SL_STRBUF_INIT};
  coded_join_keys(&c);
  plan->filter = coded_filter(&c, plan->filter);
  plan->post_join_filter = coded_filter(&c, plan->post_join_filter);
  if (plan->kind == SL_PLAN_AGGREGATE)
    coded_group_keys(&c);
  if (c.what.len > 0) {
    sl_plan_prune_leaves(a, plan); /* the strings may no longer be read */
    sl_plan_note(a, plan, "dictionary codes: %s", sl_strbuf_cstr(&c.what));
  }
  sl_strbuf_free(&c.what);
}
