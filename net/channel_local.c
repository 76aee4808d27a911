/* channel_local.c - the in-process channel transport: a producer thread and
 * a consumer thread of one process run the ring protocol (channel_ring.c)
 * over one heap block: the ring, both control lines, both sides' private
 * state.  No hooks: the stores are the transport. */
#include <stdlib.h>
#include <string.h>

#include "channel_int.h"

typedef struct local_channel {
  sl_ring ring;
  sl_ring_pshared ps;
  sl_ring_cshared cs;
} local_channel;

static void local_destroy(sl_ring *r) {
  free(r->slots);
  free(r);
}

static const sl_ring_hooks local_hooks = {.destroy = local_destroy};

static int local_open(const sl_channel_config *cfg, sl_channel **out,
                      sl_error *err) {
  sl_channel_config c;
  int rc = sl_channel_check_config(cfg, &c, err);
  if (rc != SL_OK)
    return rc;
  size_t ring_bytes = (size_t)c.credits * c.slot_size;
  size_t size = (sizeof(local_channel) + SL_CACHE_LINE - 1) / SL_CACHE_LINE *
                SL_CACHE_LINE;
  local_channel *l = aligned_alloc(_Alignof(local_channel), size);
  unsigned char *ring = aligned_alloc(SL_CACHE_LINE, ring_bytes);
  if (!l || !ring) {
    free(l);
    free(ring);
    return sl_error_set(err, SL_ENOMEM,
                        "out of memory for a channel of %u x %u bytes",
                        c.credits, c.slot_size);
  }
  memset(l, 0, sizeof *l);
  memset(ring, 0, ring_bytes); /* every full flag 0: all slots free */
  sl_ring_init(&l->ring, &sl_channel_local, &c, SL_RING_BOTH, &local_hooks);
  l->ring.slots = ring;
  l->ring.ps = &l->ps;
  l->ring.cs = &l->cs;
  sl_ring_init_shared(&l->ps, &l->cs);
  *out = &l->ring.base;
  return SL_OK;
}

const sl_channel_transport sl_channel_local = {
    .name = "local",
    .open = local_open,
    SL_RING_TRANSPORT_OPS,
};
