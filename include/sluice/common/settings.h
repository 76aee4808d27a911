/* settings.h - session settings changed with SET / RESET.
 *
 * Keys are strings as in Flink ('parallelism.default', 'sluice.jit', ...).
 * Known keys have a default, a description and a validator; unknown keys are
 * stored as given (Flink scripts set many options that Sluice has no use
 * for) and sl_settings_set reports them through *unknown so the shell can
 * warn.  Later stages read settings through sl_settings_get*.
 *
 * Ownership: the settings object owns copies of every key and value.
 */
#ifndef SLUICE_SETTINGS_H
#define SLUICE_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/error.h"

typedef struct sl_settings sl_settings;

typedef struct sl_setting_info {
  const char *key;
  const char *default_value;
  const char *description;
} sl_setting_info;

sl_settings *sl_settings_new(void);
void sl_settings_free(sl_settings *s);

/* Set key to value.  A known key's value is validated (SL_EINVAL with a
 * message naming the accepted values); *unknown (may be NULL) is set true
 * when the key is not one Sluice knows. */
int sl_settings_set(sl_settings *s, const char *key, const char *value,
                    bool *unknown, sl_error *err);
/* Back to default (known keys) or removed (unknown keys); NULL: all. */
void sl_settings_reset(sl_settings *s, const char *key);

/* Current value (the default for a known key never set), or NULL. */
const char *sl_settings_get(const sl_settings *s, const char *key);
/* Whether the key's current value is `value` (NULL: never set, no
 * default). */
bool sl_settings_is(const sl_settings *s, const char *key, const char *value);
int64_t sl_settings_get_int(const sl_settings *s, const char *key,
                            int64_t fallback);
bool sl_settings_get_bool(const sl_settings *s, const char *key, bool fallback);
/* A duration ("500 ms", "1 min"; a bare number is milliseconds, as in
 * Flink) in seconds. */
double sl_settings_get_seconds(const sl_settings *s, const char *key,
                               double fallback);

/* The unit parsers behind the settings, for anything else that reads a
 * size or a duration (connector options): "64mb", "64 MiB", "65536" into
 * bytes; "500 ms", "1 min" into seconds, a bare number counting in
 * bare_unit seconds (0.001: milliseconds, as Flink reads one).  false when
 * text is none. */
bool sl_parse_size(const char *text, double *bytes);
bool sl_parse_duration(const char *text, double bare_unit, double *seconds);

/* Every key that has a value (known keys always do), sorted: for SET alone
 * and the shell's .show. */
int sl_settings_count(const sl_settings *s);
void sl_settings_at(const sl_settings *s, int i, const char **key,
                    const char **value);

/* The keys Sluice knows, with defaults (NULL: computed, e.g. one worker
 * per core) and descriptions. */
int sl_settings_known_count(void);
const sl_setting_info *sl_settings_known_at(int i);

#endif
