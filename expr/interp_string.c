/* interp_string.c - string operators and functions: ||, LIKE, SIMILAR TO,
 * and the string scalar functions (LOWER ... SPLIT_INDEX, REGEXP_*).
 *
 * Strings are UTF-8 bytes.  Counting functions (CHAR_LENGTH, SUBSTRING,
 * POSITION, LEFT, RIGHT, LPAD, RPAD, LIKE's '_') count code points; UPPER
 * and LOWER map ASCII letters only.  Results that do not fit inline go to
 * the context's per-vector scratch.  Regular expressions are PCRE2 in UTF
 * mode; constant patterns are compiled once per query (into the program's
 * arena), others through a small per-context cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "interp_int.h"

#define FOR_ACT(i)                                                             \
  for (uint32_t j_ = 0, i; j_ < nact && ((i = act[j_]), 1); j_++)

/* ---- UTF-8 helpers
 * ------------------------------------------------------------
 */

static inline uint32_t u8_len(unsigned char b) {
  return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

uint32_t ix_utf8_chars(const char *p, uint32_t len) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < len; i++)
    n += ((unsigned char)p[i] & 0xC0) != 0x80;
  return n;
}

/* Byte offset after skipping k code points from byte i. */
static uint32_t u8_skip(const char *p, uint32_t len, uint32_t i, int64_t k) {
  while (i < len && k > 0) {
    i += u8_len((unsigned char)p[i]);
    k--;
  }
  return i < len ? i : len;
}

/* ---- LIKE
 * ------------------------------------------------------------------------
 */

enum { T_LIT, T_ONE, T_ANY };
enum { L_GENERAL, L_EXACT, L_PREFIX, L_SUFFIX, L_CONTAINS, L_ALL };

typedef struct likepat {
  int kind;
  uint32_t n; /* tokens */
  char *lit;  /* token bytes (T_LIT) */
  uint8_t *typ;
  const char *needle; /* the literal for the fast kinds */
  uint32_t nlen;
} likepat;

/* Build pattern tokens into lp (lit/typ arrays of len bytes provided).
 * false on a bad escape. */
static bool like_build(const char *p, uint32_t len, int esc, likepat *lp) {
  uint32_t n = 0;
  bool has_one = false;
  for (uint32_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)p[i];
    if (esc >= 0 && ch == esc) {
      if (i + 1 >= len)
        return false;
      unsigned char nx = (unsigned char)p[++i];
      if (nx != '%' && nx != '_' && nx != esc)
        return false;
      lp->typ[n] = T_LIT, lp->lit[n++] = (char)nx;
    } else if (ch == '%') {
      if (n == 0 || lp->typ[n - 1] != T_ANY) /* %% is % */
        lp->typ[n] = T_ANY, lp->lit[n++] = 0;
    } else if (ch == '_') {
      lp->typ[n] = T_ONE, lp->lit[n++] = 0;
      has_one = true;
    } else {
      lp->typ[n] = T_LIT, lp->lit[n++] = (char)ch;
    }
  }
  lp->n = n;
  lp->kind = L_GENERAL;
  if (has_one)
    return true;
  /* classify: literal, %lit, lit%, %lit% */
  uint32_t stars = 0;
  for (uint32_t i = 0; i < n; i++)
    stars += lp->typ[i] == T_ANY;
  bool lead = n > 0 && lp->typ[0] == T_ANY;
  bool trail = n > 0 && lp->typ[n - 1] == T_ANY;
  uint32_t inner = stars - lead - (trail && n > 1);
  if (inner != 0)
    return true;
  lp->needle = lp->lit + lead;
  lp->nlen = n - lead - (trail && (n > 1 || !lead));
  if (n == 1 && lead)
    lp->kind = L_ALL;
  else if (lead && trail)
    lp->kind = L_CONTAINS;
  else if (lead)
    lp->kind = L_SUFFIX;
  else if (trail)
    lp->kind = L_PREFIX;
  else
    lp->kind = L_EXACT;
  return true;
}

void *ix_like_compile(sl_arena *a, const char *p, uint32_t len, int esc) {
  likepat *lp = SL_ANEW(a, likepat);
  lp->lit = sl_arena_alloc(a, len + 1);
  lp->typ = sl_arena_alloc(a, len + 1);
  return like_build(p, len, esc, lp) ? lp : NULL;
}

static bool like_general(const char *s, uint32_t sn, const likepat *lp) {
  const char *lit = lp->lit;
  const uint8_t *typ = lp->typ;
  uint32_t pn = lp->n, si = 0, pi = 0, star_p = UINT32_MAX, star_s = 0;
  while (si < sn) {
    if (pi < pn && typ[pi] == T_ONE) {
      si += u8_len((unsigned char)s[si]);
      pi++;
    } else if (pi < pn && typ[pi] == T_LIT && lit[pi] == s[si]) {
      si++, pi++;
    } else if (pi < pn && typ[pi] == T_ANY) {
      star_p = pi++;
      star_s = si;
    } else if (star_p != UINT32_MAX) {
      pi = star_p + 1;
      star_s += u8_len((unsigned char)s[star_s]);
      si = star_s;
    } else {
      return false;
    }
  }
  if (si > sn)
    return false;
  while (pi < pn && typ[pi] == T_ANY)
    pi++;
  return pi == pn;
}

static bool like_match(const char *s, uint32_t sn, const likepat *lp) {
  switch (lp->kind) {
  case L_ALL:
    return true;
  case L_EXACT:
    return sn == lp->nlen && memcmp(s, lp->needle, sn) == 0;
  case L_PREFIX:
    return sn >= lp->nlen && memcmp(s, lp->needle, lp->nlen) == 0;
  case L_SUFFIX:
    return sn >= lp->nlen &&
           memcmp(s + sn - lp->nlen, lp->needle, lp->nlen) == 0;
  case L_CONTAINS:
    return lp->nlen == 0 || memmem(s, sn, lp->needle, lp->nlen) != NULL;
  default:
    return like_general(s, sn, lp);
  }
}

bool ix_like_match_str(const void *pat, const sl_str *s) {
  return like_match(sl_str_data(s), s->len, pat);
}

int ix_eval_like(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                 uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]), *pv = ix_vec(c, n->args[1]);
  const ivec *ev = n->nargs > 2 ? ix_vec(c, n->args[2]) : NULL;
  const likepat *fixed = n->aux;
  likepat tmp;
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    const likepat *lp = fixed;
    if (!lp) {
      int esc = -1;
      if (ev) {
        if (ev->v.s[i].len != 1)
          return ix_error(c, n, SL_EINVAL,
                          "the ESCAPE of LIKE must be one character");
        esc = (unsigned char)sl_str_data(&ev->v.s[i])[0];
      }
      uint32_t plen = pv->v.s[i].len;
      tmp.lit = ix_alloc(c, plen + 1);
      tmp.typ = ix_alloc(c, plen + 1);
      if (!like_build(sl_str_data(&pv->v.s[i]), plen, esc, &tmp))
        return ix_error(c, n, SL_EINVAL, "invalid escape sequence in pattern");
      lp = &tmp;
    }
    o->v.i[i] = like_match(sl_str_data(&a->v.s[i]), a->v.s[i].len, lp);
  }
  return SL_OK;
}

/* ---- regular expressions
 * ---------------------------------------------------------
 */

static void *arena_malloc(PCRE2_SIZE size, void *data) {
  return sl_arena_alloc(data, size);
}
static void arena_free(void *p, void *data) {
  (void)p, (void)data; /* freed with the arena */
}

/* SIMILAR TO -> PCRE2: % and _ become .* and ., the escape character
 * quotes the next one, '.', '^', '$' and '\' are literals in SIMILAR TO. */
static uint32_t similar_to_regex(const char *p, uint32_t len, int esc,
                                 char *out) {
  uint32_t o = 0;
  o += (uint32_t)sprintf(out, "(?s)\\A(?:");
  for (uint32_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)p[i];
    if (esc >= 0 && ch == esc && i + 1 < len) {
      ch = (unsigned char)p[++i];
      if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch >= 0x80))
        out[o++] = '\\';
      out[o++] = (char)ch;
    } else if (ch == '%') {
      out[o++] = '.', out[o++] = '*';
    } else if (ch == '_') {
      out[o++] = '.';
    } else if (ch == '.' || ch == '^' || ch == '$' || ch == '\\') {
      out[o++] = '\\', out[o++] = (char)ch;
    } else {
      out[o++] = (char)ch;
    }
  }
  o += (uint32_t)sprintf(out + o, ")\\z");
  return o;
}

void *ix_regex_compile(sl_arena *a, const char *p, uint32_t len, int flavour,
                       char *msg) {
  char *tr = NULL;
  if (flavour == 1) {
    tr = malloc((size_t)len * 2 + 32);
    if (!tr) {
      snprintf(msg, 256, "out of memory");
      return NULL;
    }
    len = similar_to_regex(p, len, -1, tr);
    p = tr;
  }
  pcre2_general_context *g = NULL;
  pcre2_compile_context *cc = NULL;
  if (a) {
    g = pcre2_general_context_create(arena_malloc, arena_free, a);
    cc = pcre2_compile_context_create(g);
  }
  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *code =
      pcre2_compile((PCRE2_SPTR)p, len, PCRE2_UTF, &errcode, &erroff, cc);
  if (!code) {
    PCRE2_UCHAR buf[200];
    pcre2_get_error_message(errcode, buf, sizeof buf);
    snprintf(msg, 256, "%s at offset %zu", (const char *)buf, (size_t)erroff);
  }
  free(tr);
  return code;
}

void ix_regex_free(void *code) {
  pcre2_code_free(code);
}

/* The compiled pattern of row i: the constant one, or from the cache.
 * NULL when the pattern does not compile (the result is then NULL). */
static pcre2_code *row_regex(sl_expr_ctx *c, const inode *n, const sl_str *pat,
                             const sl_str *esc) {
  if (n->aux)
    return n->aux;
  const char *p = sl_str_data(pat);
  uint32_t len = pat->len;
  int flavour = n->fn == F_SIMILAR;
  char *tr = NULL;
  if (flavour && esc) {
    tr = ix_alloc(c, (size_t)len * 2 + 32);
    len = similar_to_regex(
        p, len, esc->len ? (unsigned char)sl_str_data(esc)[0] : -1, tr);
    p = tr;
    flavour = 0;
  }
  for (int k = 0; k < REGEX_CACHE; k++) {
    regex_entry *e = &c->regex[k];
    if (e->pattern && e->len == len && e->flavour == flavour &&
        memcmp(e->pattern, p, len) == 0)
      return e->code;
  }
  regex_entry *e = &c->regex[c->regex_next];
  c->regex_next = (c->regex_next + 1) % REGEX_CACHE;
  free(e->pattern);
  if (e->code)
    ix_regex_free(e->code);
  e->pattern = malloc(len ? len : 1);
  if (!e->pattern) {
    e->code = NULL;
    return NULL;
  }
  memcpy(e->pattern, p, len);
  e->len = len;
  e->flavour = flavour;
  char msg[256];
  e->code = ix_regex_compile(NULL, p, len, flavour, msg);
  if (!e->code) { /* cache the failure too: the pattern stays bad */
    free(e->pattern);
    e->pattern = NULL;
  }
  return e->code;
}

/* ---- helpers
 * -------------------------------------------------------------------
 */

static sl_str concat2(sl_expr_ctx *c, const sl_str *x, const sl_str *y) {
  uint32_t len = x->len + y->len;
  char *b = ix_strbuf(c, len);
  memcpy(b, sl_str_data(x), x->len);
  memcpy(b + x->len, sl_str_data(y), y->len);
  return ix_str(c, b, len);
}

int ix_eval_concat(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                   uint32_t nact) {
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]), *b = ix_vec(c, n->args[1]);
  FOR_ACT(i) {
    if (!o->null[i])
      o->v.s[i] = concat2(c, &a->v.s[i], &b->v.s[i]);
  }
  return SL_OK;
}

/* Does s[i..] start with one of the code points of set? Returns its
 * length or 0. */
static uint32_t starts_with_any(const char *s, uint32_t len, uint32_t i,
                                const char *set, uint32_t setlen) {
  uint32_t cl = u8_len((unsigned char)s[i]);
  for (uint32_t k = 0; k < setlen;) {
    uint32_t kl = u8_len((unsigned char)set[k]);
    if (kl == cl && i + cl <= len && k + kl <= setlen &&
        memcmp(s + i, set + k, cl) == 0)
      return cl;
    k += kl;
  }
  return 0;
}

static sl_str do_trim(sl_expr_ctx *c, int side, const sl_str *str,
                      const char *set, uint32_t setlen) {
  const char *s = sl_str_data(str);
  uint32_t b = 0, e = str->len, l;
  if (side != 2)
    while (b < e && (l = starts_with_any(s, e, b, set, setlen)) > 0)
      b += l;
  if (side != 1) {
    while (e > b) {
      uint32_t st = e - 1; /* start of the last code point */
      while (st > b && ((unsigned char)s[st] & 0xC0) == 0x80)
        st--;
      if (!starts_with_any(s, e, st, set, setlen))
        break;
      e = st;
    }
  }
  return ix_str(c, s + b, e - b);
}

static sl_str replace_all(sl_expr_ctx *c, const sl_str *str, const sl_str *from,
                          const sl_str *to) {
  const char *s = sl_str_data(str), *f = sl_str_data(from),
             *t = sl_str_data(to);
  uint32_t sl = str->len, fl = from->len, tl = to->len;
  if (fl == 0 || fl > sl)
    return *str;
  uint32_t count = 0;
  for (const char *p = s; (p = memmem(p, sl - (uint32_t)(p - s), f, fl));
       p += fl)
    count++;
  if (count == 0)
    return *str;
  uint64_t outlen = (uint64_t)sl + (uint64_t)count * tl - (uint64_t)count * fl;
  char *b = ix_strbuf(c, (uint32_t)outlen), *o = b;
  const char *p = s;
  for (const char *q; (q = memmem(p, sl - (uint32_t)(p - s), f, fl));
       p = q + fl) {
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, t, tl);
    o += tl;
  }
  memcpy(o, p, sl - (uint32_t)(p - s));
  return ix_str(c, b, (uint32_t)outlen);
}

/* LPAD/RPAD: NULL for a negative length, or when padding is needed but the
 * pad string is empty. */
static bool pad(sl_expr_ctx *c, const sl_str *str, int64_t n, const sl_str *pd,
                bool left, sl_str *out) {
  if (n < 0)
    return false;
  const char *s = sl_str_data(str), *p = sl_str_data(pd);
  uint32_t chars = ix_utf8_chars(s, str->len);
  if ((uint64_t)n <= chars) {
    *out = ix_str(c, s, u8_skip(s, str->len, 0, n));
    return true;
  }
  if (pd->len == 0)
    return false;
  uint64_t need = (uint64_t)n - chars, pchars = ix_utf8_chars(p, pd->len);
  /* bytes of `need` pad characters (whole repetitions + a prefix) */
  uint64_t full = need / pchars, rest = need % pchars;
  uint32_t restb = u8_skip(p, pd->len, 0, (int64_t)rest);
  uint64_t padb = full * pd->len + restb;
  if (padb + str->len > 0x7fffffffu)
    return false;
  char *b = ix_strbuf(c, (uint32_t)(padb + str->len)), *o = b;
  if (!left) {
    memcpy(o, s, str->len);
    o += str->len;
  }
  for (uint64_t k = 0; k < full; k++, o += pd->len)
    memcpy(o, p, pd->len);
  memcpy(o, p, restb);
  o += restb;
  if (left)
    memcpy(o, s, str->len);
  *out = ix_str(c, b, (uint32_t)(padb + str->len));
  return true;
}

/* Flink's substringSQL: 1-based; 0 acts as 1; negative counts from the
 * end; a negative length gives NULL. */
static bool substring(sl_expr_ctx *c, const sl_str *str, int64_t pos,
                      int64_t len, bool has_len, sl_str *out) {
  if (has_len && len < 0)
    return false;
  const char *s = sl_str_data(str);
  int64_t chars = ix_utf8_chars(s, str->len), start;
  if (pos > 0) {
    start = pos - 1;
    if (start >= chars) {
      *out = ix_str(c, "", 0);
      return true;
    }
  } else if (pos < 0) {
    start = chars + pos;
    if (start < 0) {
      *out = ix_str(c, "", 0);
      return true;
    }
  } else {
    start = 0;
  }
  int64_t n = has_len && chars - start > len ? len : chars - start;
  uint32_t b = u8_skip(s, str->len, 0, start);
  uint32_t e = u8_skip(s, str->len, b, n);
  *out = ix_str(c, s + b, e - b);
  return true;
}

static bool split_index(sl_expr_ctx *c, const sl_str *str, const sl_str *sep,
                        int64_t idx, sl_str *out) {
  if (idx < 0)
    return false;
  const char *s = sl_str_data(str), *d = sl_str_data(sep);
  uint32_t sl = str->len, dl = sep->len, b = 0;
  if (dl == 0) {
    if (idx != 0)
      return false;
    *out = *str;
    return true;
  }
  for (int64_t k = 0;; k++) {
    const char *q = memmem(s + b, sl - b, d, dl);
    uint32_t e = q ? (uint32_t)(q - s) : sl;
    if (k == idx) {
      *out = ix_str(c, s + b, e - b);
      return true;
    }
    if (!q)
      return false;
    b = e + dl;
  }
}

/* ---- the functions
 * ---------------------------------------------------------------
 */

static int concat_ws(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                     uint32_t nact) {
  for (int k = 0; k < n->nargs; k++) {
    int rc = ix_eval(c, n->args[k], act, nact);
    if (rc)
      return rc;
  }
  ivec *o = ix_vec(c, n);
  const ivec *sep = ix_vec(c, n->args[0]);
  FOR_ACT(i) {
    o->null[i] = sep->null[i];
    if (sep->null[i])
      continue;
    uint32_t len = 0, parts = 0;
    for (int k = 1; k < n->nargs; k++) {
      const ivec *v = ix_vec(c, n->args[k]);
      if (!v->null[i])
        len += v->v.s[i].len, parts++;
    }
    if (parts > 1)
      len += (parts - 1) * sep->v.s[i].len;
    char *b = ix_strbuf(c, len), *p = b;
    bool first = true;
    for (int k = 1; k < n->nargs; k++) {
      const ivec *v = ix_vec(c, n->args[k]);
      if (v->null[i])
        continue;
      if (!first) {
        memcpy(p, sl_str_data(&sep->v.s[i]), sep->v.s[i].len);
        p += sep->v.s[i].len;
      }
      first = false;
      memcpy(p, sl_str_data(&v->v.s[i]), v->v.s[i].len);
      p += v->v.s[i].len;
    }
    o->v.s[i] = ix_str(c, b, len);
  }
  return SL_OK;
}

static int regex_fn(sl_expr_ctx *c, const inode *n, uint32_t i, const ivec *a,
                    const ivec *b, const ivec *x, ivec *o) {
  const sl_str *s = &a->v.s[i];
  pcre2_code *re =
      row_regex(c, n, &b->v.s[i], n->fn == F_SIMILAR && x ? &x->v.s[i] : NULL);
  if (!re) {
    o->null[i] = 1;
    return SL_OK;
  }
  pcre2_match_data *md = c->match_data;
  if (n->fn == F_REGEXP_REPLACE) {
    const sl_str *r = &x->v.s[i];
    PCRE2_SIZE cap = (PCRE2_SIZE)s->len * 2 + r->len + 64;
    for (int attempt = 0; attempt < 2; attempt++) {
      char *out = ix_alloc(c, cap);
      PCRE2_SIZE outlen = cap;
      int rc = pcre2_substitute(re, (PCRE2_SPTR)sl_str_data(s), s->len, 0,
                                PCRE2_SUBSTITUTE_GLOBAL |
                                    PCRE2_SUBSTITUTE_OVERFLOW_LENGTH |
                                    PCRE2_SUBSTITUTE_UNSET_EMPTY,
                                md, NULL, (PCRE2_SPTR)sl_str_data(r), r->len,
                                (PCRE2_UCHAR *)out, &outlen);
      if (rc >= 0) {
        o->v.s[i] = ix_str(c, out, (uint32_t)outlen);
        return SL_OK;
      }
      if (rc != PCRE2_ERROR_NOMEMORY)
        break;
      cap = outlen;
    }
    o->null[i] = 1; /* bad replacement or subject: NULL, as Flink */
    return SL_OK;
  }
  int rc = pcre2_match(re, (PCRE2_SPTR)sl_str_data(s), s->len, 0, 0, md, NULL);
  if (n->fn == F_REGEXP || n->fn == F_SIMILAR) {
    o->v.i[i] = rc >= 0;
    return SL_OK;
  }
  /* REGEXP_EXTRACT */
  int64_t g = x ? x->v.i[i] : 0;
  uint32_t ngroups = 0;
  pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &ngroups);
  if (rc < 0 || g < 0 || g > ngroups || g >= (int64_t)rc) {
    o->null[i] = 1;
    return SL_OK;
  }
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
  if (ov[2 * g] == PCRE2_UNSET) {
    o->null[i] = 1;
    return SL_OK;
  }
  o->v.s[i] = ix_str(c, sl_str_data(s) + ov[2 * g],
                     (uint32_t)(ov[2 * g + 1] - ov[2 * g]));
  return SL_OK;
}

int ix_eval_string_fn(sl_expr_ctx *c, const inode *n, const uint16_t *act,
                      uint32_t nact) {
  if (n->fn == F_CONCAT_WS)
    return concat_ws(c, n, act, nact);
  int rc = ix_eval_args_strict(c, n, act, nact);
  if (rc)
    return rc;
  ivec *o = ix_vec(c, n);
  const ivec *a = ix_vec(c, n->args[0]);
  const ivec *b = n->nargs > 1 ? ix_vec(c, n->args[1]) : NULL;
  const ivec *x = n->nargs > 2 ? ix_vec(c, n->args[2]) : NULL;
  FOR_ACT(i) {
    if (o->null[i])
      continue;
    const sl_str *s = &a->v.s[i];
    const char *sp = sl_str_data(s);
    switch (n->fn) {
    case F_LOWER:
    case F_UPPER: {
      char *buf = ix_strbuf(c, s->len);
      bool up = n->fn == F_UPPER;
      for (uint32_t k = 0; k < s->len; k++) {
        char ch = sp[k];
        if (up && ch >= 'a' && ch <= 'z')
          ch = (char)(ch - 32);
        else if (!up && ch >= 'A' && ch <= 'Z')
          ch = (char)(ch + 32);
        buf[k] = ch;
      }
      o->v.s[i] = ix_str(c, buf, s->len);
      break;
    }
    case F_CHAR_LENGTH:
      o->v.i[i] = ix_utf8_chars(sp, s->len);
      break;
    case F_SUBSTRING:
      if (!substring(c, s, b->v.i[i], x ? x->v.i[i] : 0, x != NULL, &o->v.s[i]))
        o->null[i] = 1;
      break;
    case F_TRIM:
      o->v.s[i] = b ? do_trim(c, n->trim_side, s, sl_str_data(&b->v.s[i]),
                              b->v.s[i].len)
                    : do_trim(c, n->trim_side, s, " ", 1);
      break;
    case F_CONCAT: {
      uint32_t len = 0;
      for (int k = 0; k < n->nargs; k++)
        len += ix_vec(c, n->args[k])->v.s[i].len;
      char *buf = ix_strbuf(c, len), *p = buf;
      for (int k = 0; k < n->nargs; k++) {
        const sl_str *v = &ix_vec(c, n->args[k])->v.s[i];
        memcpy(p, sl_str_data(v), v->len);
        p += v->len;
      }
      o->v.s[i] = ix_str(c, buf, len);
      break;
    }
    case F_REPLACE:
      o->v.s[i] = replace_all(c, s, &b->v.s[i], &x->v.s[i]);
      break;
    case F_POSITION: { /* POSITION(needle IN s2): a = needle */
      const sl_str *h = &b->v.s[i];
      if (s->len == 0) {
        o->v.i[i] = 1;
        break;
      }
      const char *hp = sl_str_data(h);
      const char *q = memmem(hp, h->len, sp, s->len);
      o->v.i[i] = q ? (int64_t)ix_utf8_chars(hp, (uint32_t)(q - hp)) + 1 : 0;
      break;
    }
    case F_LEFT:
    case F_RIGHT: {
      int64_t k = b->v.i[i];
      if (k <= 0) {
        o->v.s[i] = ix_str(c, "", 0);
        break;
      }
      if (n->fn == F_LEFT) {
        o->v.s[i] = ix_str(c, sp, u8_skip(sp, s->len, 0, k));
      } else {
        int64_t chars = ix_utf8_chars(sp, s->len);
        uint32_t st = k >= chars ? 0 : u8_skip(sp, s->len, 0, chars - k);
        o->v.s[i] = ix_str(c, sp + st, s->len - st);
      }
      break;
    }
    case F_LPAD:
    case F_RPAD:
      if (!pad(c, s, b->v.i[i], &x->v.s[i], n->fn == F_LPAD, &o->v.s[i]))
        o->null[i] = 1;
      break;
    case F_SPLIT_INDEX:
      if (!split_index(c, s, &b->v.s[i], x->v.i[i], &o->v.s[i]))
        o->null[i] = 1;
      break;
    case F_REGEXP_EXTRACT:
    case F_REGEXP_REPLACE:
    case F_REGEXP:
    case F_SIMILAR:
      rc = regex_fn(c, n, i, a, b, x, o);
      if (rc)
        return rc;
      break;
    default:
      return ix_error(c, n, SL_EINTERNAL, "internal error: bad function");
    }
  }
  return SL_OK;
}
