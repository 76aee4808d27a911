/* channel.c - the transport-independent part of channels (channel.h):
 * opening by transport or endpoint, shape defaults and checks, and the
 * back-off the transports' waits share.  The protocol is channel_ring.c;
 * the transports are channel_local.c, channel_shm.c, channel_tcp.c and
 * channel_verbs.c. */
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "channel_int.h"
#include "sluice/common/clock.h"

/* The footer is a wire format: every transport and both ends agree on it. */
_Static_assert(sizeof(sl_channel_footer) == SL_CHANNEL_FOOTER_SIZE,
               "footer is 32 bytes");
_Static_assert(offsetof(sl_channel_footer, full) == SL_CHANNEL_FOOTER_SIZE - 1,
               "the full flag is the footer's (and the slot's) last byte");
_Static_assert(sizeof(_Atomic uint8_t) == 1, "the full flag is one byte");

int sl_channel_check_config(const sl_channel_config *in, sl_channel_config *out,
                            sl_error *err) {
  return sl_channel_check_shape(in, SL_CHANNEL_DEFAULT_CREDITS,
                                SL_CHANNEL_DEFAULT_SLOT_SIZE, out, err);
}

int sl_channel_check_shape(const sl_channel_config *in, uint32_t def_credits,
                           uint32_t def_slot_size, sl_channel_config *out,
                           sl_error *err) {
  sl_channel_config c = {0, 0};
  if (in)
    c = *in;
  if (c.credits == 0)
    c.credits = def_credits;
  if (c.slot_size == 0)
    c.slot_size = def_slot_size;
  if (c.credits > SL_CHANNEL_MAX_CREDITS)
    return sl_error_set(err, SL_EINVAL,
                        "channel credits must be between 1 and %d, not %u",
                        SL_CHANNEL_MAX_CREDITS, c.credits);
  if (c.slot_size < SL_CHANNEL_MIN_SLOT_SIZE ||
      c.slot_size > SL_CHANNEL_MAX_SLOT_SIZE || c.slot_size % 64 != 0)
    return sl_error_set(err, SL_EINVAL,
                        "channel slot size must be a multiple of 64 between "
                        "%d and %d bytes, not %u",
                        SL_CHANNEL_MIN_SLOT_SIZE, SL_CHANNEL_MAX_SLOT_SIZE,
                        c.slot_size);
  if ((uint64_t)c.credits * c.slot_size > (uint64_t)SIZE_MAX / 2)
    return sl_error_set(err, SL_EINVAL,
                        "channel ring of %u x %u bytes is "
                        "too large",
                        c.credits, c.slot_size);
  *out = c;
  return SL_OK;
}

int sl_channel_open(const sl_channel_transport *t, const sl_channel_config *cfg,
                    sl_channel **out, sl_error *err) {
  *out = NULL;
  if (!t)
    return sl_error_set(err, SL_EINVAL, "no channel transport");
  if (!t->open)
    return sl_error_set(err, SL_EINVAL,
                        "%s channels join two processes: open each end with "
                        "sl_channel_open_end",
                        t->name);
  return t->open(cfg, out, err);
}

int sl_channel_open_local(uint32_t credits, uint32_t slot_size,
                          sl_channel **out, sl_error *err) {
  sl_channel_config cfg = {credits, slot_size};
  return sl_channel_open(&sl_channel_local, &cfg, out, err);
}

void sl_channel_destroy(sl_channel *ch) {
  if (ch)
    ch->transport->destroy(ch);
}

const sl_channel_transport *sl_channel_transport_find(const char *name) {
  static const sl_channel_transport *const all[] = {
      &sl_channel_local, &sl_channel_shm, &sl_channel_tcp, &sl_channel_verbs};
  for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(all[i]->name, name) == 0)
      return all[i];
  return NULL;
}

int sl_channel_open_end(const sl_channel_endpoint *ep,
                        const sl_channel_config *cfg, sl_channel **out,
                        sl_error *err) {
  *out = NULL;
  const sl_channel_transport *t =
      ep ? sl_channel_transport_find(ep->transport) : NULL;
  int rc = SL_EINVAL;
  if (!ep)
    sl_error_set(err, rc, "no channel endpoint");
  else if (!t)
    sl_error_set(err, rc,
                 "unknown channel transport '%s' (expected shm, tcp or "
                 "verbs)",
                 ep->transport ? ep->transport : "(null)");
  else if (!t->open_end)
    sl_error_set(err, rc,
                 "the %s transport has both ends in one process: open it "
                 "with sl_channel_open, or pick shm, tcp or verbs for two "
                 "processes",
                 t->name);
  else if (ep->role != SL_CHANNEL_PRODUCER && ep->role != SL_CHANNEL_CONSUMER)
    sl_error_set(err, rc,
                 "%s channel endpoint: role must be producer or "
                 "consumer",
                 t->name);
  else
    return t->open_end(ep, cfg, out, err);
  /* The channel owns a passed socket from the call on, even on failure. */
  return sl_endpoint_refuse(ep, rc);
}

int sl_channel_error(const sl_channel *ch, sl_error *err) {
  if (!ch || !ch->transport->error)
    return SL_OK;
  return ch->transport->error(ch, err);
}

/* --- back-off --- */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

enum { SPIN_ROUNDS = 64, YIELD_ROUNDS = 64 + 32, MAX_NAP_NS = 200 * 1000 };

void sl_backoff_init(sl_backoff *b, int64_t timeout_ns) {
  b->round = 0;
  b->start_ns = 0;
  b->deadline_ns = -1;
  b->timeout_ns = timeout_ns;
  b->nap = NULL;
  b->nap_arg = NULL;
}

int sl_backoff_pause(sl_backoff *b) {
  /* The clock is read only after the spin phase: a wait that ends within a
   * few hundred nanoseconds costs no system call. */
  if (b->round < SPIN_ROUNDS) {
    b->round++;
    for (int i = 0; i < 8; i++)
      cpu_relax();
    return 1;
  }
  int64_t now = sl_clock_ns();
  if (b->start_ns == 0) {
    b->start_ns = now;
    if (b->timeout_ns >= 0)
      b->deadline_ns = now + b->timeout_ns;
  }
  if (b->deadline_ns >= 0 && now >= b->deadline_ns)
    return 0;
  if (b->round < YIELD_ROUNDS) {
    b->round++;
    sched_yield();
    return 1;
  }
  /* Naps double from 1 us up to MAX_NAP_NS, never past the deadline. */
  uint32_t shift = b->round - YIELD_ROUNDS;
  int64_t nap = shift >= 8 ? MAX_NAP_NS : (int64_t)1000 << shift;
  if (nap > MAX_NAP_NS)
    nap = MAX_NAP_NS;
  if (b->deadline_ns >= 0 && now + nap > b->deadline_ns)
    nap = b->deadline_ns - now;
  if (shift < 8)
    b->round++;
  if (b->nap) {
    b->nap(b->nap_arg, nap);
    return 1;
  }
  struct timespec ts = {0, (long)nap};
  nanosleep(&ts, NULL);
  return 1;
}

int64_t sl_backoff_elapsed_ns(const sl_backoff *b) {
  return b->start_ns ? sl_clock_ns() - b->start_ns : 0;
}
