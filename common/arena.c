/* arena.c - region allocator: bump allocation in chained blocks. */
#include "sluice/common/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SL_ARENA_DEFAULT_BLOCK (64 * 1024)
#define SL_ARENA_ALIGN 16
#define ARENA_MAX_GROWN_BLOCK ((size_t)16 << 20)

struct sl_arena_block {
  sl_arena_block *next;
  size_t size; /* usable bytes in data */
  size_t used;
  _Alignas(SL_ARENA_ALIGN) unsigned char data[];
};

void sl_arena_init(sl_arena *a, size_t block_size) {
  a->head = NULL;
  a->block_size = block_size ? block_size : SL_ARENA_DEFAULT_BLOCK;
  a->total = 0;
}

void sl_arena_free(sl_arena *a) {
  sl_arena_block *b = a->head;
  while (b) {
    sl_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->total = 0;
}

static sl_arena_block *new_block(size_t size) {
  sl_arena_block *b = malloc(sizeof(sl_arena_block) + size);
  if (!b) {
    /* Out of memory while building a statement: nothing sensible to do. */
    fprintf(stderr, "sluice: out of memory (arena block of %zu bytes)\n", size);
    abort();
  }
  b->next = NULL;
  b->size = size;
  b->used = 0;
  return b;
}

void *sl_arena_alloc(sl_arena *a, size_t size) {
  if (a->block_size == 0)
    a->block_size = SL_ARENA_DEFAULT_BLOCK;
  size = (size + SL_ARENA_ALIGN - 1) & ~(size_t)(SL_ARENA_ALIGN - 1);
  if (size == 0)
    size = SL_ARENA_ALIGN;
  sl_arena_block *b = a->head;
  if (!b || b->size - b->used < size) {
    if (size > a->block_size / 4) {
      /* A large request gets a block of its own, chained behind the current
       * one so the current block's free space is not wasted. */
      sl_arena_block *big = new_block(size);
      big->used = size;
      if (b) {
        big->next = b->next;
        b->next = big;
      } else {
        a->head = big;
      }
      a->total += size;
      return big->data;
    }
    /* Blocks grow with the arena (an eighth of it, up to 16 MiB): a
     * statement of a million literals then takes tens of blocks, not
     * thousands, and freeing it is tens of free() calls instead of
     * thousands of heap trims (0.7 s on a VM, on every Ctrl-C). */
    size_t grow = a->total / 8;
    if (grow > ARENA_MAX_GROWN_BLOCK)
      grow = ARENA_MAX_GROWN_BLOCK;
    b = new_block(grow > a->block_size ? grow : a->block_size);
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  a->total += size;
  return p;
}

void *sl_arena_zalloc(sl_arena *a, size_t size) {
  void *p = sl_arena_alloc(a, size);
  memset(p, 0, size);
  return p;
}

char *sl_arena_strndup(sl_arena *a, const char *s, size_t n) {
  char *p = sl_arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *sl_arena_strdup(sl_arena *a, const char *s) {
  return s ? sl_arena_strndup(a, s, strlen(s)) : NULL;
}

char *sl_arena_printf(sl_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  char *p = sl_arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}
