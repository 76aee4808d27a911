/* arena.h - region allocator.
 *
 * Everything built for one statement (tokens, AST, bound tree, plans) is
 * allocated from one arena and released together with sl_arena_free().  This
 * keeps ownership simple: nothing inside an arena is freed on its own, and a
 * pointer into an arena lives exactly as long as the arena.
 *
 * Allocation failure aborts the process (out of memory while parsing is not
 * recoverable in a useful way); hot paths of the runtime use pools built on
 * the same idea.
 */
#ifndef SLUICE_ARENA_H
#define SLUICE_ARENA_H

#include <stddef.h>

typedef struct sl_arena_block sl_arena_block;

typedef struct sl_arena {
  sl_arena_block *head; /* current block; older blocks chain behind it */
  size_t block_size;    /* default size of a new block */
  size_t total;         /* bytes handed out, for statistics */
} sl_arena;

/* Initialise an empty arena.  block_size 0 picks a default (64 KiB). */
void sl_arena_init(sl_arena *a, size_t block_size);

/* Release every block.  The arena may be reused after sl_arena_init. */
void sl_arena_free(sl_arena *a);

/* size bytes, aligned for any type, uninitialised. */
void *sl_arena_alloc(sl_arena *a, size_t size);

/* size bytes, zeroed. */
void *sl_arena_zalloc(sl_arena *a, size_t size);

/* Copies of strings into the arena (NUL-terminated). */
char *sl_arena_strdup(sl_arena *a, const char *s);
char *sl_arena_strndup(sl_arena *a, const char *s, size_t n);
char *sl_arena_printf(sl_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define SL_ANEW(arena, type) ((type *)sl_arena_zalloc((arena), sizeof(type)))
#define SL_ANEW_N(arena, type, n)                                              \
  ((type *)sl_arena_zalloc((arena), sizeof(type) * (size_t)(n)))

#endif
