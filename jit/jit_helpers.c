/* jit_helpers.c - the C functions generated code calls where inlining makes
 * no sense: casts with text or decimal rescaling, DECIMAL arithmetic
 * (128-bit multiply/divide with HALF_UP rounding), string ordering, LIKE,
 * libm functions, and copying long strings into an output buffer's heap.
 * Each one reuses the interpreter's own code for the value, so compiled
 * and interpreted pipelines cannot drift apart. */
#include <math.h>
#include <string.h>

#include "jit_int.h"

int32_t sl_jit_rt_cast(const inode *n, const void *arg, void *res) {
  return ix_cast_one(n, arg, res);
}

int32_t sl_jit_rt_dec_arith(const inode *n, const i128 *a, const i128 *b,
                            i128 *r) {
  return ix_dec_arith1(n->op, *a, n->args[0]->scale, *b, n->args[1]->scale,
                       n->scale, n->prec, r);
}

int32_t sl_jit_rt_str_cmp(const sl_str *a, const sl_str *b) {
  return sl_str_compare(a, b);
}

int32_t sl_jit_rt_like(const void *pat, const sl_str *s) {
  return ix_like_match_str(pat, s);
}

int32_t sl_jit_rt_in_set(const ix_inset *set, const void *v) {
  return ix_inset_has(set, v);
}

int64_t sl_jit_rt_char_length(const sl_str *s) {
  return ix_utf8_chars(sl_str_data(s), s->len);
}

int32_t sl_jit_rt_time_fn(const inode *n, int64_t v, int64_t *out) {
  return ix_time_fn1(n, v, out);
}

double sl_jit_rt_fmod(double a, double b) {
  return fmod(a, b);
}

/* The interpreter's F_SQRT .. F_EXP: the same libm calls. */
double sl_jit_rt_math1(int32_t fn, double a) {
  switch (fn) {
  case F_SQRT:
    return sqrt(a);
  case F_LN:
    return log(a);
  case F_LOG10:
    return log10(a);
  default:
    return exp(a);
  }
}

double sl_jit_rt_pow(double a, double b) {
  return pow(a, b);
}

int32_t sl_jit_rt_put_str(jit_call *c, uint8_t *orow, sl_str *dst,
                          const sl_str *s) {
  if (s->len <= SL_STR_INLINE) {
    memcpy(dst, s, sizeof *s);
    return 0;
  }
  /* The row being written (orow) must stay clear of the heap growing down
   * from the end. */
  sl_buffer *b = c->outbuf;
  size_t rows_end = (size_t)(orow - b->data) + b->layout->width;
  if (rows_end + b->heap_used + s->len > b->cap)
    return 1;
  b->heap_used += s->len;
  char *copy = (char *)b->data + b->cap - b->heap_used;
  memcpy(copy, s->u.ptr, s->len);
  sl_str t = *s;
  t.u.ptr = copy;
  memcpy(dst, &t, sizeof t);
  return 0;
}
