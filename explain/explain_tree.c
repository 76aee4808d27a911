/* explain_tree.c - building and printing EXPLAIN's display tree. */
#include "explain_tree.h"

#include <string.h>

#include "sluice/binder/binder.h"

static void *grow(sl_arena *a, void *items, int n, int *cap, size_t size) {
  if (n < *cap)
    return items;
  int ncap = *cap ? *cap * 2 : 4;
  void *p = sl_arena_zalloc(a, size * (size_t)ncap);
  if (n)
    memcpy(p, items, size * (size_t)n);
  *cap = ncap;
  return p;
}

xnode *sl_xnode(sl_arena *a, const char *name) {
  xnode *n = SL_ANEW(a, xnode);
  n->name = name;
  n->detail = "";
  return n;
}

void sl_xnode_attr(sl_arena *a, xnode *n, const char *k, const char *v) {
  n->attrs = grow(a, n->attrs, n->nattrs, &n->attrs_cap, sizeof(xattr));
  n->attrs[n->nattrs].key = k;
  n->attrs[n->nattrs].value = v;
  n->nattrs++;
}

void sl_xnode_kid(sl_arena *a, xnode *n, xnode *k) {
  if (!k)
    return;
  n->kids = grow(a, n->kids, n->nkids, &n->kids_cap, sizeof(xnode *));
  n->kids[n->nkids++] = k;
}

void sl_xnode_print_text(sl_strbuf *b, const xnode *n, int depth) {
  sl_strbuf_indent(b, depth * 2);
  sl_strbuf_append(b, n->name);
  if (n->detail && *n->detail)
    sl_strbuf_printf(b, " %s", n->detail);
  sl_strbuf_appendc(b, '\n');
  for (int i = 0; i < n->nkids; i++)
    sl_xnode_print_text(b, n->kids[i], depth + 1);
}

void sl_json_string(sl_strbuf *b, const char *s) {
  sl_strbuf_appendc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    switch (*p) {
    case '"':
      sl_strbuf_append(b, "\\\"");
      break;
    case '\\':
      sl_strbuf_append(b, "\\\\");
      break;
    case '\n':
      sl_strbuf_append(b, "\\n");
      break;
    case '\r':
      sl_strbuf_append(b, "\\r");
      break;
    case '\t':
      sl_strbuf_append(b, "\\t");
      break;
    default:
      if (*p < 0x20)
        sl_strbuf_printf(b, "\\u%04x", *p);
      else
        sl_strbuf_appendc(b, (char)*p);
    }
  }
  sl_strbuf_appendc(b, '"');
}

void sl_xnode_print_json(sl_strbuf *b, const xnode *n, int depth) {
  sl_strbuf_append(b, "{");
  sl_strbuf_append(b, "\"node\": ");
  sl_json_string(b, n->name);
  sl_strbuf_append(b, ", \"detail\": ");
  sl_json_string(b, n->detail);
  for (int i = 0; i < n->nattrs; i++) {
    sl_strbuf_append(b, ", ");
    sl_json_string(b, n->attrs[i].key);
    sl_strbuf_append(b, ": ");
    sl_json_string(b, n->attrs[i].value);
  }
  if (n->nkids) {
    sl_strbuf_append(b, ", \"children\": [\n");
    for (int i = 0; i < n->nkids; i++) {
      sl_strbuf_indent(b, (depth + 1) * 2);
      sl_xnode_print_json(b, n->kids[i], depth + 1);
      sl_strbuf_append(b, i + 1 < n->nkids ? ",\n" : "\n");
    }
    sl_strbuf_indent(b, depth * 2);
    sl_strbuf_append(b, "]");
  }
  sl_strbuf_append(b, "}");
}

const char *sl_explain_expr(sl_arena *a, const sl_bexpr *e) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_bexpr_format(&b, e);
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

/* Flink's TimeUtils.formatWithHighestUnit: "10 s", "2 min", "500 ms". */
const char *sl_explain_duration(sl_arena *a, int64_t ms) {
  if (ms != 0 && ms % 86400000 == 0)
    return sl_arena_printf(a, "%lld d", (long long)(ms / 86400000));
  if (ms != 0 && ms % 3600000 == 0)
    return sl_arena_printf(a, "%lld h", (long long)(ms / 3600000));
  if (ms != 0 && ms % 60000 == 0)
    return sl_arena_printf(a, "%lld min", (long long)(ms / 60000));
  if (ms != 0 && ms % 1000 == 0)
    return sl_arena_printf(a, "%lld s", (long long)(ms / 1000));
  return sl_arena_printf(a, "%lld ms", (long long)ms);
}

/* "name TYPE" for each column, or "name TYPE := expr" where the column is
 * computed by something other than a plain reference of the same name. */
