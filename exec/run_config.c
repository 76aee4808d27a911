/* run_config.c - a statement's settings into its run configuration
 * (run_config.h): every setting the runtime reads, looked up and parsed
 * here once, so the executor and the cluster layer take typed fields and
 * no key names. */
#include "sluice/exec/run_config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sluice/state/host_memory.h"

int sl_run_config_resolve(sl_run_config *c, const sl_settings *settings,
                          sl_error *err) {
  (void)err; /* nothing fails yet: SET checked every value */
  memset(c, 0, sizeof *c);
  c->parallelism = (int)sl_settings_get_int(settings, "parallelism.default", 1);
  /* Never under 4 KiB, whatever was SET: the executor and the broadcast
   * runner each clamped it so; now every user of the config gets the
   * same size. */
  int64_t buffer_size =
      sl_settings_get_int(settings, "sluice.buffer-size", 65536);
  c->buffer_size = buffer_size < 4096 ? 4096 : (uint32_t)buffer_size;
  c->epoch_size = sl_settings_get_int(settings, "sluice.epoch-size", 64 << 20);
  c->mini_batch_latency = sl_settings_get_seconds(
      settings, "table.exec.mini-batch.allow-latency", 0.2);
  c->mini_batch_rows =
      sl_settings_get_int(settings, "table.exec.mini-batch.size", 0);
  c->state_ttl = sl_settings_get_seconds(settings, "table.exec.state.ttl", 0);
  int64_t limit = sl_settings_get_int(settings, "sluice.memory-limit", 0);
  c->memory_limit =
      limit > 0 ? (uint64_t)limit : sl_host_default_memory_limit();
  c->jit = sl_settings_get_bool(settings, "sluice.jit", true);
  const char *jit = sl_settings_get(settings, "sluice.jit");
  c->jit_required = jit && strcasecmp(jit, "require") == 0;
  const char *passes = sl_settings_get(settings, "sluice.jit.passes");
  snprintf(c->jit_passes, sizeof c->jit_passes, "%s", passes ? passes : "");
  c->jit_join_probe =
      sl_settings_get_bool(settings, "sluice.jit.join-probe", true);
  c->jit_state_update =
      sl_settings_get_bool(settings, "sluice.jit.state-update", true);
  const char *dump = sl_settings_get(settings, "sluice.jit.dump");
  c->jit_dump_ir = dump && strcmp(dump, "ir") == 0;
  c->jit_fail = sl_settings_get_bool(settings, "sluice.debug.jit-fail", false);
  c->exchange_delay_us =
      sl_settings_get_int(settings, "sluice.debug.exchange-delay-us", 0);
  return SL_OK;
}
