/* int_math.h - integer arithmetic that C leaves to the reader: floor
 * division (window starts before the epoch).  Header-only. */
#ifndef SLUICE_INT_MATH_H
#define SLUICE_INT_MATH_H

#include <stdint.h>

/* a / b rounded towards negative infinity (C's / rounds towards zero). */
static inline int64_t sl_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  return q;
}

#endif
