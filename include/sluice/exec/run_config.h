/* run_config.h - the settings a statement's run reads, resolved once.
 *
 * The session resolves its SET settings into an sl_run_config once per
 * statement (sl_run_config_resolve) and hands it down with the run
 * (sl_run.config, executor.h): the executor, the stage runners and the
 * cluster's coordinators read these typed, parsed fields and never look a
 * setting up by name while a query runs.  The planner's settings
 * (strategies, late records, idle sources) are planning and stay read
 * where the plan is made.
 */
#ifndef SLUICE_EXEC_RUN_CONFIG_H
#define SLUICE_EXEC_RUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice/common/error.h"
#include "sluice/common/settings.h"

typedef struct sl_run_config {
  /* 'parallelism.default': worker threads per process (below 1: one). */
  int parallelism;
  /* 'sluice.buffer-size' in bytes: record buffers, channels and links
   * (at least 4096, whatever was SET). */
  uint32_t buffer_size;
  /* 'sluice.epoch-size' in bytes per node between two merges of shared
   * state (late merge, updating queries; 0: none). */
  int64_t epoch_size;
  /* 'table.exec.mini-batch.allow-latency' in seconds: how long an
   * updating query's worker gathers changes. */
  double mini_batch_latency;
  /* 'table.exec.mini-batch.size': input rows after which an updating
   * query's worker hands its changes over (0: only by time and epoch). */
  int64_t mini_batch_rows;
  /* 'table.exec.state.ttl' in seconds: idle state is dropped after this
   * long (0: never). */
  double state_ttl;
  /* 'sluice.memory-limit' in bytes, summed over a query's processes on
   * this host; a SET of 0 resolves to the host's default (half the
   * cgroup's memory limit or of the RAM, state/host_memory.h). */
  uint64_t memory_limit;
  /* 'sluice.jit': compile pipelines (on, or require); jit_required:
   * 'require', a pipeline marked compilable that LLVM fails on is an
   * error. */
  bool jit;
  bool jit_required;
  /* 'sluice.jit.passes': LLVM's optimization ("" when unset). */
  char jit_passes[16];
  /* 'sluice.jit.join-probe', 'sluice.jit.state-update': what goes into
   * the compiled loop. */
  bool jit_join_probe;
  bool jit_state_update;
  /* 'sluice.jit.dump' = 'ir': the optimized IR as a notice. */
  bool jit_dump_ir;
  /* 'sluice.debug.jit-fail' (tests): LLVM is given a pass it does not
   * know, so every compile fails in LLVM. */
  bool jit_fail;
  /* 'sluice.debug.exchange-delay-us' (tests): a random 0..N microsecond
   * wait before each exchange slot is published (0: none). */
  int64_t exchange_delay_us;
} sl_run_config;

/* The run configuration of settings, for one statement.  Values were
 * checked when they were SET (settings.c says what is accepted); one that
 * cannot be read takes the setting's default, as the runtime always did.
 * SL_OK, or an error in err. */
int sl_run_config_resolve(sl_run_config *c, const sl_settings *settings,
                          sl_error *err);

#endif
