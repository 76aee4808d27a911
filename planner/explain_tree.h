/* explain_tree.h - the display tree EXPLAIN prints (internal to planner/).
 *
 * A plan or bound tree is first turned into display nodes (a name, a
 * one-line detail, key/value attributes, children), then printed either as
 * indented text, one node per line, or as JSON: building the display tree
 * once keeps both forms identical in content.  Nodes live in an arena.
 */
#ifndef SLUICE_EXPLAIN_TREE_H
#define SLUICE_EXPLAIN_TREE_H

#include "sluice/arena.h"
#include "sluice/strbuf.h"

typedef struct xattr {
  const char *key;
  const char *value;
} xattr;

typedef struct xnode xnode;
struct xnode {
  const char *name;   /* "Project", "Scan", ... */
  const char *detail; /* the rest of the TEXT line */
  int nattrs, attrs_cap;
  xattr *attrs;
  int nkids, kids_cap;
  xnode **kids;
};

xnode *sl_xnode(sl_arena *a, const char *name);
void sl_xnode_attr(sl_arena *a, xnode *n, const char *key, const char *value);
void sl_xnode_kid(sl_arena *a, xnode *n, xnode *kid); /* kid may be NULL */
void sl_xnode_print_text(sl_strbuf *b, const xnode *n, int depth);
void sl_xnode_print_json(sl_strbuf *b, const xnode *n, int depth);

#endif
