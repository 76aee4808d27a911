/* interp_eval.c - the interpreter's driver: contexts, vectors, loads,
 * constants, three-valued logic and conditional evaluation, and the public
 * filter / eval_into / eval_row entry points.
 *
 * A call processes its rows SL_EXPR_VECTOR at a time.  For each vector the
 * row pointers are gathered once; then the program tree is evaluated
 * node-by-node over the whole vector (each node one tight loop over its
 * active positions), so the per-row cost is a few loads and stores per node
 * and no dispatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "interp_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/row/dictionary.h"

/* ---- context and scratch --------------------------------------------------
 */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "sluice: out of memory (%zu bytes)\n", n);
    abort();
  }
  return p;
}

sl_expr_ctx *sl_expr_ctx_new(void) {
  sl_expr_ctx *c = xmalloc(sizeof *c);
  memset(c, 0, sizeof *c);
  for (int i = 0; i < VEC; i++)
    c->ident[i] = (uint16_t)i;
  c->match_data = pcre2_match_data_create(32, NULL);
  return c;
}

void sl_expr_ctx_free(sl_expr_ctx *c) {
  if (!c)
    return;
  for (int i = 0; i < c->nslots; i++)
    free(c->vec_mem[i]);
  free(c->vecs);
  free(c->vec_mem);
  for (int i = 0; i < c->nblocks; i++)
    free(c->blocks[i].mem);
  free(c->blocks);
  for (int i = 0; i < REGEX_CACHE; i++) {
    free(c->regex[i].pattern);
    if (c->regex[i].code)
      ix_regex_free(c->regex[i].code);
  }
  pcre2_match_data_free(c->match_data);
  free(c);
}

static void ensure_slots(sl_expr_ctx *c, int n) {
  if (n <= c->nslots)
    return;
  c->vecs = realloc(c->vecs, sizeof(ivec) * (size_t)n);
  c->vec_mem = realloc(c->vec_mem, sizeof(void *) * (size_t)n);
  if (!c->vecs || !c->vec_mem) {
    fprintf(stderr, "sluice: out of memory (expression vectors)\n");
    abort();
  }
  for (int i = c->nslots; i < n; i++) {
    /* values first (16-byte aligned for __int128), then the null bytes */
    char *m = aligned_alloc(64, (size_t)VEC * 16 + VEC);
    if (!m) {
      fprintf(stderr, "sluice: out of memory (expression vectors)\n");
      abort();
    }
    c->vec_mem[i] = m;
    c->vecs[i].v.p = m;
    c->vecs[i].null = (uint8_t *)m + (size_t)VEC * 16;
  }
  c->nslots = n;
}

static void scratch_reset(sl_expr_ctx *c) {
  for (int i = 0; i <= c->cur_block && i < c->nblocks; i++)
    c->blocks[i].used = 0;
  c->cur_block = 0;
}

void *ix_alloc(sl_expr_ctx *c, size_t size) {
  size = (size + 15) & ~(size_t)15;
  while (c->cur_block < c->nblocks) {
    scratch_block *b = &c->blocks[c->cur_block];
    if (b->size - b->used >= size) {
      void *p = b->mem + b->used;
      b->used += size;
      return p;
    }
    if (c->cur_block + 1 >= c->nblocks)
      break;
    c->cur_block++;
    c->blocks[c->cur_block].used = 0;
  }
  /* a new block, kept for later vectors */
  size_t bs = size > 65536 ? size : 65536;
  c->blocks =
      realloc(c->blocks, sizeof(scratch_block) * (size_t)(c->nblocks + 1));
  if (!c->blocks) {
    fprintf(stderr, "sluice: out of memory (expression scratch)\n");
    abort();
  }
  scratch_block *b = &c->blocks[c->nblocks];
  b->mem = xmalloc(bs);
  b->size = bs;
  b->used = size;
  c->cur_block = c->nblocks++;
  return b->mem;
}

char *ix_strbuf(sl_expr_ctx *c, uint32_t len) {
  return ix_alloc(c, len ? len : 1);
}

sl_str ix_str(sl_expr_ctx *c, const char *p, uint32_t len) {
  if (len <= SL_STR_INLINE)
    return sl_str_make(p, len);
  char *copy = ix_alloc(c, len);
  memcpy(copy, p, len);
  return sl_str_make(copy, len);
}

int ix_error(sl_expr_ctx *c, const inode *n, int code, const char *what) {
  sl_strbuf b = SL_STRBUF_INIT;
  if (n->src)
    sl_bexpr_format(&b, n->src);
  const char *sql = sl_strbuf_cstr(&b);
  bool paren = sql[0] && sql[0] != '(';
  if (n->src)
    sl_error_set_at(c->err, code, n->src->span.line, n->src->span.column,
                    n->src->span.offset, n->src->span.length, "%s in %s%s%s",
                    what, paren ? "(" : "", sql, paren ? ")" : "");
  else
    sl_error_set(c->err, code, "%s", what);
  sl_strbuf_free(&b);
  return code;
}

/* ---- leaves -----------------------------------------------------------------
 */

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

static void eval_load(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact) {
  ivec *o = ix_vec(c, n);
  const uint8_t *const *rows = c->rows;
  const uint32_t off = n->offset;
  const int f = n->field;
  FOR_ACT(i) {
    o->null[i] = sl_row_is_null(rows[i], f);
  }
#define LOAD(member, ctype, conv)                                              \
  FOR_ACT(i) {                                                                 \
    ctype v_;                                                                  \
    memcpy(&v_, rows[i] + off, sizeof v_);                                     \
    o->v.member[i] = conv(v_);                                                 \
  }                                                                            \
  break;
#define AS_IS(x) (x)
  switch (n->ptype) {
  case SL_P_BOOL:
  case SL_P_I8:
    if (n->ptype == SL_P_BOOL) {
      LOAD(i, uint8_t, AS_IS)
    }
    LOAD(i, int8_t, AS_IS)
  case SL_P_I16:
    LOAD(i, int16_t, AS_IS)
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    LOAD(i, int32_t, AS_IS)
  case SL_P_I64:
  case SL_P_TS:
  case SL_P_IV_DT:
    LOAD(i, int64_t, AS_IS)
  case SL_P_F32:
    LOAD(f, float, (double))
  case SL_P_F64:
    LOAD(f, double, AS_IS)
  case SL_P_DEC64:
    LOAD(d, int64_t, (i128))
  case SL_P_DEC128:
    LOAD(d, i128, AS_IS)
  case SL_P_STR:
    LOAD(s, sl_str, AS_IS)
  }
#undef LOAD
#undef AS_IS
}

static void eval_const(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                       uint32_t nact) {
  ivec *o = ix_vec(c, n);
  FOR_ACT(i) {
    o->null[i] = n->cnull;
  }
  switch (n->rep) {
  case R_I64:
    FOR_ACT(i) {
      o->v.i[i] = n->ci;
    }
    break;
  case R_F64:
    FOR_ACT(i) {
      o->v.f[i] = n->cf;
    }
    break;
  case R_DEC:
    FOR_ACT(i) {
      o->v.d[i] = n->cd;
    }
    break;
  case R_STR:
    FOR_ACT(i) {
      o->v.s[i] = n->cs;
    }
    break;
  }
}

/* Copy the values (and nulls) of positions pos[0..np) from src to dst. */
static void copy_pos(ivec *dst, const ivec *src, irep rep, const uint16_t *pos,
                     uint32_t np) {
  for (uint32_t j = 0; j < np; j++) {
    uint32_t i = pos[j];
    dst->null[i] = src->null[i];
    switch (rep) {
    case R_I64:
      dst->v.i[i] = src->v.i[i];
      break;
    case R_F64:
      dst->v.f[i] = src->v.f[i];
      break;
    case R_DEC:
      dst->v.d[i] = src->v.d[i];
      break;
    case R_STR:
      dst->v.s[i] = src->v.s[i];
      break;
    }
  }
}

int ix_eval_args_strict(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                        uint32_t nact) {
  ivec *o = ix_vec(c, n);
  for (int k = 0; k < n->nargs; k++) {
    int rc = ix_eval(c, n->args[k], act, nact);
    if (rc)
      return rc;
    const uint8_t *an = ix_vec(c, n->args[k])->null;
    if (k == 0) {
      FOR_ACT(i) {
        o->null[i] = an[i];
      }
    } else {
      FOR_ACT(i) {
        o->null[i] |= an[i];
      }
    }
  }
  if (n->nargs == 0)
    FOR_ACT(i) {
      o->null[i] = 0;
    }
  return SL_OK;
}

/* ---- logic ------------------------------------------------------------------
 */

/* AND / OR: the second operand runs only where the first does not decide
 * the result (FALSE for AND, TRUE for OR). */
static int eval_andor(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact) {
  const int64_t decisive = n->kind == N_OR; /* value that decides */
  ivec *o = ix_vec(c, n);
  int rc = ix_eval(c, n->args[0], act, nact);
  if (rc)
    return rc;
  const ivec *a = ix_vec(c, n->args[0]);
  FOR_ACT(i) {
    o->null[i] = a->null[i];
    o->v.i[i] = a->null[i] ? !decisive : a->v.i[i] != 0;
  }
  /* The undecided positions, narrowed in place after each operand: one
   * scratch list however many operands (a generated chain has thousands). */
  uint16_t *sub = NULL;
  uint32_t ns = 0;
  for (int k = 1; k < n->nargs; k++) {
    if (!sub) {
      sub = ix_alloc(c, sizeof(uint16_t) * nact);
      FOR_ACT(i) {
        if (o->null[i] || o->v.i[i] != decisive)
          sub[ns++] = (uint16_t)i;
      }
    } else {
      uint32_t kept = 0;
      for (uint32_t j = 0; j < ns; j++)
        if (o->null[sub[j]] || o->v.i[sub[j]] != decisive)
          sub[kept++] = sub[j];
      ns = kept;
    }
    if (ns == 0)
      break;
    rc = ix_eval(c, n->args[k], sub, ns);
    if (rc)
      return rc;
    const ivec *b = ix_vec(c, n->args[k]);
    for (uint32_t j = 0; j < ns; j++) {
      uint32_t i = sub[j];
      if (!b->null[i] && (b->v.i[i] != 0) == decisive) {
        o->null[i] = 0;
        o->v.i[i] = decisive;
      } else if (b->null[i]) {
        o->null[i] = 1;
      }
    }
  }
  return SL_OK;
}

static int eval_not(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                    uint32_t nact) {
  int rc = ix_eval(c, n->args[0], act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]);
  FOR_ACT(i) {
    o->null[i] = a->null[i];
    o->v.i[i] = a->v.i[i] == 0;
  }
  return SL_OK;
}

static int eval_is(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                   uint32_t nact) {
  int rc = ix_eval(c, n->args[0], act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]);
  const bool neg = n->negated;
  const int what = n->op;
  FOR_ACT(i) {
    bool r;
    switch (what) {
    case SL_IS_NULL:
    case SL_IS_UNKNOWN:
      r = a->null[i];
      break;
    case SL_IS_TRUE:
      r = !a->null[i] && a->v.i[i] != 0;
      break;
    default: /* SL_IS_FALSE */
      r = !a->null[i] && a->v.i[i] == 0;
      break;
    }
    o->null[i] = 0;
    o->v.i[i] = r != neg;
  }
  return SL_OK;
}

/* CASE (and IF): each WHEN runs on the rows no earlier WHEN took; each THEN
 * only on the rows its WHEN took. */
static int eval_case(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact) {
  ivec *o = ix_vec(c, n);
  uint16_t *rest = ix_alloc(c, sizeof(uint16_t) * nact);
  uint16_t *taken = ix_alloc(c, sizeof(uint16_t) * nact);
  memcpy(rest, act, sizeof(uint16_t) * nact);
  uint32_t nrest = nact;
  int rc;
  for (int k = 0; k + 1 < n->nargs && nrest > 0; k += 2) {
    rc = ix_eval(c, n->args[k], rest, nrest);
    if (rc)
      return rc;
    const ivec *w = ix_vec(c, n->args[k]);
    uint32_t nt = 0, nr = 0;
    for (uint32_t j = 0; j < nrest; j++) {
      uint16_t i = rest[j];
      if (!w->null[i] && w->v.i[i])
        taken[nt++] = i;
      else
        rest[nr++] = i;
    }
    nrest = nr;
    if (nt == 0)
      continue;
    rc = ix_eval(c, n->args[k + 1], taken, nt);
    if (rc)
      return rc;
    copy_pos(o, ix_vec(c, n->args[k + 1]), n->rep, taken, nt);
  }
  if (nrest > 0) {
    rc = ix_eval(c, n->args[n->nargs - 1], rest, nrest);
    if (rc)
      return rc;
    copy_pos(o, ix_vec(c, n->args[n->nargs - 1]), n->rep, rest, nrest);
  }
  return SL_OK;
}

static int eval_coalesce(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                         uint32_t nact) {
  ivec *o = ix_vec(c, n);
  uint16_t *rest = ix_alloc(c, sizeof(uint16_t) * nact);
  memcpy(rest, act, sizeof(uint16_t) * nact);
  uint32_t nrest = nact;
  for (int k = 0; k < n->nargs && nrest > 0; k++) {
    int rc = ix_eval(c, n->args[k], rest, nrest);
    if (rc)
      return rc;
    const ivec *a = ix_vec(c, n->args[k]);
    copy_pos(o, a, n->rep, rest, nrest);
    uint32_t nr = 0;
    for (uint32_t j = 0; j < nrest; j++)
      if (a->null[rest[j]])
        rest[nr++] = rest[j];
    nrest = nr;
  }
  for (uint32_t j = 0; j < nrest; j++)
    o->null[rest[j]] = 1;
  return SL_OK;
}

static int eval_nullif(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                       uint32_t nact) {
  int rc = ix_eval(c, n->args[0], act, nact);
  if (!rc)
    rc = ix_eval(c, n->args[1], act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  copy_pos(o, ix_vec(c, n->args[0]), n->rep, act, nact);
  const ivec *eq = ix_vec(c, n->args[1]);
  FOR_ACT(i) {
    if (!eq->null[i] && eq->v.i[i])
      o->null[i] = 1;
  }
  return SL_OK;
}

/* The dictionary's string of each code: its bytes are the dictionary's,
 * which lives as long as the process. */
static int eval_dictionary(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                           uint32_t nact) {
  int rc = ix_eval(c, n->args[0], act, nact);
  if (rc)
    return rc;
  const sl_dictionary *d = n->aux;
  const ivec *a = ix_vec(c, n->args[0]);
  ivec *o = ix_vec(c, n);
  FOR_ACT(i) {
    o->null[i] = a->null[i];
    if (a->null[i])
      continue;
    const sl_str *v = sl_dictionary_value(d, a->v.i[i]);
    if (!v)
      return ix_error(c, n, SL_EINTERNAL,
                      "internal error: a code outside its dictionary");
    o->v.s[i] = *v;
  }
  return SL_OK;
}

int ix_eval(sl_expr_ctx *c, const inode *n, const uint16_t *act,
            uint32_t nact) {
  switch (n->kind) {
  case N_CONST:
    eval_const(c, n, act, nact);
    return SL_OK;
  case N_LOAD:
    eval_load(c, n, act, nact);
    return SL_OK;
  case N_CAST:
    return ix_eval_cast(c, n, act, nact);
  case N_NEG:
    return ix_eval_neg(c, n, act, nact);
  case N_ARITH:
    return ix_eval_arith(c, n, act, nact);
  case N_CMP:
    return ix_eval_cmp(c, n, act, nact);
  case N_AND:
  case N_OR:
    return eval_andor(c, n, act, nact);
  case N_NOT:
    return eval_not(c, n, act, nact);
  case N_IS:
    return eval_is(c, n, act, nact);
  case N_CASE:
    return eval_case(c, n, act, nact);
  case N_COALESCE:
    return eval_coalesce(c, n, act, nact);
  case N_NULLIF:
    return eval_nullif(c, n, act, nact);
  case N_IN:
    return ix_eval_in(c, n, act, nact);
  case N_LIKE:
    return ix_eval_like(c, n, act, nact);
  case N_CONCAT:
    return ix_eval_concat(c, n, act, nact);
  case N_TIME_ADD:
  case N_IV_SCALE:
    return ix_eval_time_add(c, n, act, nact);
  case N_DICTIONARY:
    return eval_dictionary(c, n, act, nact);
  case N_CALL:
    switch (n->fn) {
    case F_ABS:
    case F_FLOOR:
    case F_CEIL:
    case F_ROUND:
    case F_POWER:
    case F_SQRT:
    case F_LN:
    case F_LOG10:
    case F_EXP:
    case F_HASH_CODE:
      return ix_eval_math(c, n, act, nact);
    case F_DATE_FORMAT:
    case F_EXTRACT:
    case F_TO_TIMESTAMP:
    case F_UNIX_TIMESTAMP:
    case F_FROM_UNIXTIME:
    case F_NOW:
    case F_FLOOR_TIME:
      return ix_eval_time_fn(c, n, act, nact);
    default:
      return ix_eval_string_fn(c, n, act, nact);
    }
  }
  return ix_error(c, n, SL_EINTERNAL, "internal error: bad program node");
}

/* ---- entry points -----------------------------------------------------------
 */

static void read_clock(sl_expr_ctx *c) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  c->now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void sl_expr_ctx_pin_now(sl_expr_ctx *c) {
  read_clock(c);
  c->now_pinned = true;
}

void sl_expr_ctx_unpin_now(sl_expr_ctx *c) {
  c->now_pinned = false;
}

static void begin_call(sl_expr_ctx *c, const sl_expr_prog *p, sl_error *err) {
  ensure_slots(c, p->nslots);
  c->err = err;
  if (!c->now_pinned)
    read_clock(c);
}

/* Gather row pointers for rows idx[0..n) and evaluate the program. */
static int run_vector(sl_expr_ctx *c, const sl_expr_prog *p,
                      const sl_buffer *in, const uint32_t *idx, uint32_t n) {
  scratch_reset(c);
  if (in) {
    const uint32_t w = in->layout->width;
    for (uint32_t i = 0; i < n; i++)
      c->rows[i] = in->data + (size_t)idx[i] * w;
  } else {
    static const uint8_t empty[8] = {0};
    for (uint32_t i = 0; i < n; i++)
      c->rows[i] = empty;
  }
  c->n = n;
  return ix_eval(c, p->root, c->ident, n);
}

int sl_expr_filter(const sl_expr_prog *p, const sl_buffer *in, uint32_t *sel,
                   uint32_t *nsel, sl_expr_ctx *ctx, sl_error *err) {
  begin_call(ctx, p, err);
  const uint32_t total = *nsel;
  uint32_t kept = 0;
  uint32_t idx[VEC];
  for (uint32_t base = 0; base < total; base += VEC) {
    uint32_t n = total - base < VEC ? total - base : VEC;
    memcpy(idx, sel + base, sizeof(uint32_t) * n);
    int rc = run_vector(ctx, p, in, idx, n);
    if (rc)
      return rc;
    const ivec *r = ix_vec(ctx, p->root);
    /* kept <= base: writing in place never overtakes reading */
    for (uint32_t i = 0; i < n; i++) {
      sel[kept] = idx[i];
      kept += !r->null[i] & (r->v.i[i] != 0);
    }
  }
  *nsel = kept;
  return SL_OK;
}

static int store(sl_expr_ctx *c, const sl_expr_prog *p, const ivec *v,
                 uint32_t n, sl_buffer *out, uint32_t first, int field) {
  const sl_field *f = &out->layout->fields[field];
  const uint32_t w = out->layout->width, off = f->offset;
  uint8_t *base = out->data + (size_t)first * w + off;
  const irep rep = p->root->rep;
  bool ok = true;
  switch (f->ptype) {
  case SL_P_BOOL:
  case SL_P_I8:
  case SL_P_I16:
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
  case SL_P_I64:
  case SL_P_TS:
  case SL_P_IV_DT:
    ok = rep == R_I64;
    break;
  case SL_P_F32:
  case SL_P_F64:
    ok = rep == R_F64;
    break;
  case SL_P_DEC64:
  case SL_P_DEC128:
    ok = rep == R_DEC && f->type->scale == p->root->scale;
    break;
  case SL_P_STR:
    ok = rep == R_STR;
    break;
  }
  if (!ok)
    return sl_error_set(c->err, SL_EINTERNAL,
                        "internal error: output field %d has another type "
                        "than the expression",
                        field);
  for (uint32_t i = 0; i < n; i++)
    sl_row_set_null(out->data + (size_t)(first + i) * w, field, v->null[i]);
#define STORE(ctype, member)                                                   \
  for (uint32_t i = 0; i < n; i++) {                                           \
    ctype x_ = (ctype)v->v.member[i];                                          \
    memcpy(base + (size_t)i * w, &x_, sizeof x_);                              \
  }                                                                            \
  break;
  switch (f->ptype) {
  case SL_P_BOOL:
    STORE(uint8_t, i)
  case SL_P_I8:
    STORE(int8_t, i)
  case SL_P_I16:
    STORE(int16_t, i)
  case SL_P_I32:
  case SL_P_DATE:
  case SL_P_TIME:
  case SL_P_IV_YM:
    STORE(int32_t, i)
  case SL_P_I64:
  case SL_P_TS:
  case SL_P_IV_DT:
    STORE(int64_t, i)
  case SL_P_F32:
    STORE(float, f)
  case SL_P_F64:
    STORE(double, f)
  case SL_P_DEC64:
    STORE(int64_t, d)
  case SL_P_DEC128:
    STORE(i128, d)
  case SL_P_STR: {
    /* A column copied unchanged into a borrowing buffer keeps pointing at
     * the input's bytes (row.h); computed strings live in the context's
     * per-call scratch and must be copied. */
    bool borrow = out->borrow_strings && p->root->kind == N_LOAD;
    for (uint32_t i = 0; i < n; i++) {
      sl_str s = v->null[i] ? sl_str_make("", 0) : v->v.s[i];
      if (s.len > SL_STR_INLINE && !borrow) {
        char *copy = sl_buffer_heap_copy(out, s.u.ptr, s.len);
        if (!copy)
          return SL_EXPR_HEAP_FULL;
        s.u.ptr = copy;
      }
      memcpy(base + (size_t)i * w, &s, sizeof s);
    }
    break;
  }
  }
#undef STORE
  return SL_OK;
}

int sl_expr_eval_into(const sl_expr_prog *p, const sl_buffer *in,
                      const uint32_t *sel, uint32_t nsel, sl_buffer *out,
                      uint32_t out_first_row, int out_field, sl_expr_ctx *ctx,
                      sl_error *err) {
  begin_call(ctx, p, err);
  if (out_field < 0 || out_field >= out->layout->nfields ||
      out_first_row + nsel > out->nrows)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: sl_expr_eval_into outside the output "
                        "buffer's rows");
  const uint32_t heap_before = out->heap_used;
  for (uint32_t base = 0; base < nsel; base += VEC) {
    uint32_t n = nsel - base < VEC ? nsel - base : VEC;
    int rc = run_vector(ctx, p, in, sel + base, n);
    if (!rc)
      rc = store(ctx, p, ix_vec(ctx, p->root), n, out, out_first_row + base,
                 out_field);
    if (rc) {
      if (rc == SL_EXPR_HEAP_FULL)
        out->heap_used = heap_before;
      return rc;
    }
  }
  return SL_OK;
}

int sl_expr_eval_row(const sl_expr_prog *p, const sl_buffer *in, uint32_t row,
                     sl_expr_value *out, sl_expr_ctx *ctx, sl_error *err) {
  begin_call(ctx, p, err);
  int rc = run_vector(ctx, p, in, &row, 1);
  if (rc)
    return rc;
  const ivec *v = ix_vec(ctx, p->root);
  memset(out, 0, sizeof *out);
  out->type = p->root->type;
  out->null = v->null[0];
  switch (p->root->rep) {
  case R_I64:
    out->i64 = v->v.i[0];
    break;
  case R_F64:
    out->f64 = v->v.f[0];
    break;
  case R_DEC:
    out->dec = v->v.d[0];
    break;
  case R_STR:
    out->str = v->v.s[0];
    break;
  }
  return SL_OK;
}
