/* stage_jit.c - a staged query's stage expressions compiled (jit.h): per
 * SELECT its filter and projections in one loop, per AGGREGATE its group
 * and argument expressions, per JOIN its residual condition.  The
 * interpreter stays the reference: a kernel that hands rows back (an
 * error to report with the exact message, rows that do not fit), or an
 * expression the code generator does not handle, runs interpreted
 * (stage_eval.c counts both).  Apart from stage_eval.c because this is
 * set-up, once per query, not per-window evaluation. */
#include <stdbool.h>
#include <stdio.h>

#include "sluice/jit/jit.h"
#include "stage_int.h"

/* Every non-NULL program of progs[0..n) (and filter) compiles. */
static bool all_supported(const sl_expr_prog *filter,
                          sl_expr_prog *const *progs, int n) {
  if (filter && !sl_jit_supports(filter, NULL, 0))
    return false;
  for (int i = 0; i < n; i++)
    if (progs[i] && !sl_jit_supports(progs[i], NULL, 0))
      return false;
  return true;
}

/* Add the kernels of s and the stages under it to j. */
static int add_kernels(sl_jit *j, stage_rt *s, int *n, sl_error *err) {
  if (!s)
    return SL_OK;
  int rc = add_kernels(j, s->input, n, err);
  if (rc == SL_OK)
    rc = add_kernels(j, s->left, n, err);
  if (rc == SL_OK)
    rc = add_kernels(j, s->right, n, err);
  if (rc != SL_OK)
    return rc;
  switch (s->st->kind) {
  case SL_STAGE_SELECT:
    if (all_supported(s->filter, s->exprs, s->st->nexprs)) {
      rc = sl_jit_add_kernel(j, s->filter, s->exprs, s->st->nexprs,
                             s->input->layout, s->layout, true, &s->k_exprs,
                             err);
      ++*n;
    }
    break;
  case SL_STAGE_AGGREGATE:
    if (all_supported(NULL, s->tmp_progs, s->ntmp)) {
      rc = sl_jit_add_kernel(j, NULL, s->tmp_progs, s->ntmp, s->input->layout,
                             s->tmp_layout, true, &s->k_exprs, err);
      ++*n;
    }
    break;
  case SL_STAGE_JOIN:
    if (s->residual && all_supported(s->residual, NULL, 0)) {
      rc = sl_jit_add_kernel(j, s->residual, NULL, 0, s->layout, NULL, true,
                             &s->k_residual, err);
      ++*n;
    }
    break;
  default:
    break;
  }
  return rc;
}

static void clear_kernels(stage_rt *s) {
  if (!s)
    return;
  s->k_exprs = s->k_residual = NULL;
  clear_kernels(s->input);
  clear_kernels(s->left);
  clear_kernels(s->right);
}

sl_jit *stage_jit_build(stage_rt *top, const sl_run_config *config,
                        char *status, size_t status_len) {
  status[0] = '\0';
  if (!config->jit || !top) {
    snprintf(status, status_len, "%s", "'sluice.jit' is off");
    return NULL;
  }
  sl_error err = {0};
  sl_jit *j = NULL;
  int n = 0;
  const char *passes = config->jit_fail        ? SL_JIT_BROKEN_PASSES
                       : config->jit_passes[0] ? config->jit_passes
                                               : NULL;
  int rc = sl_jit_new(&j, passes, &err);
  if (rc == SL_OK)
    rc = add_kernels(j, top, &n, &err);
  if (rc == SL_OK && n > 0)
    rc = sl_jit_compile(j, NULL, &err);
  if (rc != SL_OK || n == 0) {
    snprintf(status, status_len, "%s",
             n == 0        ? "no stage expression to compile"
             : err.message ? err.message
                           : "LLVM set-up failed");
    sl_error_clear(&err);
    clear_kernels(top);
    sl_jit_free(j);
    return NULL;
  }
  return j;
}
