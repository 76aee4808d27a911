/* dictionary.c - a fixed set of distinct strings with codes (dictionary.h):
 * the string -> code index, built once and read by any thread. */
#include <string.h>

#include "sluice/row/dictionary.h"

uint32_t sl_dictionary_slots_for(uint32_t n) {
  uint32_t s = 16;
  while (s < 2 * (uint64_t)n && s < (1u << 31))
    s <<= 1;
  return s;
}

static int32_t find(const sl_dictionary *d, const char *p, uint32_t len,
                    uint32_t *slot) {
  uint32_t i = (uint32_t)sl_hash_bytes(p, len) & d->mask;
  for (;; i = (i + 1) & d->mask) {
    int32_t c = d->slots[i];
    if (c == 0) {
      *slot = i;
      return -1;
    }
    const sl_str *v = &d->values[c - 1];
    if (v->len == len && memcmp(sl_str_data(v), p, len) == 0)
      return c - 1;
  }
}

bool sl_dictionary_init(sl_dictionary *d, const char *name,
                        const sl_str *values, uint32_t n, int32_t *slots,
                        uint32_t nslots) {
  memset(d, 0, sizeof *d);
  if (n >= (1u << 30) || nslots < sl_dictionary_slots_for(n) ||
      (nslots & (nslots - 1)) != 0)
    return false;
  memset(slots, 0, (size_t)nslots * sizeof *slots);
  d->name = name;
  d->values = values;
  d->mask = nslots - 1;
  d->slots = slots;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t slot;
    if (find(d, sl_str_data(&values[k]), values[k].len, &slot) >= 0)
      return false; /* a duplicate: codes would not stand for strings */
    slots[slot] = (int32_t)k + 1;
    d->n = k + 1;
    if (values[k].len > d->max_len)
      d->max_len = values[k].len;
  }
  return true;
}

int32_t sl_dictionary_code(const sl_dictionary *d, const char *p,
                           uint32_t len) {
  uint32_t slot;
  return d->slots ? find(d, p, len, &slot) : -1;
}
