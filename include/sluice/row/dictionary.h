/* dictionary.h - a fixed set of distinct strings, each with a code.
 *
 * A source whose string column takes its values from a fixed set (YSB's
 * ad ids, its event types) offers the set as a dictionary
 * (sl_source_connector.dictionary), and the planner may then read the
 * column as its code, an INT: filters, join keys and group keys compare
 * and hash integers, and the string is looked up again only where a value
 * leaves the plan (planner/dictionary_codes.c).  Codes mean the same in
 * every process that builds the dictionary from the same definition, so
 * partial states keyed by codes merge across nodes.
 *
 * The strings must be distinct (sl_dictionary_init checks it): two
 * columns read as codes of one dictionary are equal exactly when their
 * strings are.  A dictionary is immutable once built and owns nothing: the
 * caller gives it the storage (a process-wide static, usually), so it is
 * shared by every thread without locks.
 */
#ifndef SLUICE_DICTIONARY_H
#define SLUICE_DICTIONARY_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/row/row.h"

typedef struct sl_dictionary {
  const char *name;     /* for EXPLAIN: "ysb ad ids" */
  uint32_t n;           /* codes 0 .. n-1 */
  const sl_str *values; /* by code; their bytes outlive the dictionary */
  uint32_t max_len;     /* the longest value's bytes */
  uint32_t mask;        /* slots - 1 */
  const int32_t *slots; /* open addressing by sl_hash_bytes: code + 1, or
                         * 0 for an empty slot */
} sl_dictionary;

/* The slots sl_dictionary_init needs for n values: a power of two at
 * least twice n. */
uint32_t sl_dictionary_slots_for(uint32_t n);

/* Build d over values[0..n) with nslots (sl_dictionary_slots_for(n))
 * slots of storage.  False (and d unusable) when two values are equal or
 * nslots is too small. */
bool sl_dictionary_init(sl_dictionary *d, const char *name,
                        const sl_str *values, uint32_t n, int32_t *slots,
                        uint32_t nslots);

/* The code of the string p[0..len), or -1 when it is not in d. */
int32_t sl_dictionary_code(const sl_dictionary *d, const char *p, uint32_t len);

/* The string of a code, or NULL when the code is out of range. */
static inline const sl_str *sl_dictionary_value(const sl_dictionary *d,
                                                int64_t code) {
  return code >= 0 && code < (int64_t)d->n ? &d->values[code] : NULL;
}

#endif
