/* channel_int.h - helpers shared by the channel transports (runtime/
 * channel*.c): shape validation and the back-off used by the waits. */
#ifndef SLUICE_CHANNEL_INT_H
#define SLUICE_CHANNEL_INT_H

#include <stdint.h>

#include "sluice/channel.h"

/* Fill in defaults and check a channel shape.  SL_OK or SL_EINVAL. */
int sl_channel_check_config(const sl_channel_config *in, sl_channel_config *out,
                            sl_error *err);

/* A wait that spins briefly, then yields, then sleeps with growing naps:
 * a short wait stays cheap and a long one does not burn a shared core. */
typedef struct sl_backoff {
  uint32_t round;
  int64_t deadline_ns; /* CLOCK_MONOTONIC; < 0 = none */
  int64_t start_ns;    /* 0 until the first clock read */
  int64_t timeout_ns;
} sl_backoff;

void sl_backoff_init(sl_backoff *b, int64_t timeout_ns);

/* Pause once.  Returns 0 when the deadline has passed, else 1. */
int sl_backoff_pause(sl_backoff *b);

/* Nanoseconds since the first pause (0 if it never slept). */
int64_t sl_backoff_elapsed_ns(const sl_backoff *b);

#endif
