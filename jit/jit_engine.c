/* jit_engine.c - the JIT's engine: LLVM native target set-up (once per
 * process), one ORC LLJIT per query, the optimization pipeline, compiling
 * the kernels and calling them (jit.h).
 *
 * Works with the LLVM C API of LLVM 14 (Debian's llvm-dev) and newer: only
 * the explicitly typed builders (LLVMBuildLoad2, GEP2, Call2) are used, and
 * pointers are i8* bitcast to the type loaded, which is a no-op with the
 * opaque pointers of LLVM 15+.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "jit_int.h"
#include "sluice/common/clock.h"

/* The optimization pipelines, by the name SET 'sluice.jit.passes' uses.
 * The code generator's level follows the IR pipeline's.
 *
 * The chosen one ("default" = light), measured with bench/jit_bench and
 * interleaved EXPLAIN ANALYZE runs on this 2-core shared machine
 * (docs/BENCHMARKS.md, "JIT"): O0 and "fast" run the kernels at half to
 * two thirds of the speed.  Since the lookup join's probe, the state
 * update and their inline string hashing are compiled, YSB's functions
 * compile in about 25 ms with light and 55-65 ms with O1..O3 (at load
 * 1.5-2), and light's code runs YSB as fast (23.8 M records/s against
 * 17-22 M in the same run; 25.1 M against 22.9 M in the shell): the O
 * levels' loop passes (vectorizing and unrolling the hash loops) buy
 * nothing there.  A 10-second YSB query is fastest with light (7.3 s
 * against 8.0-11.0 s), and it keeps to the 30 ms budget of an interactive
 * shell.  O2 stays a setting: on the RO COUNT per key fold it is about 9%
 * faster (50.7 M against 46.3 M records/s), worth it for long queries of
 * that shape. */
typedef struct pipeline {
  const char *name, *passes;
  LLVMCodeGenOptLevel cg;
} pipeline;

static const pipeline PIPELINES[] = {
    {"O0", "default<O0>", LLVMCodeGenLevelNone},
    {"O1", "default<O1>", LLVMCodeGenLevelLess},
    {"O2", "default<O2>", LLVMCodeGenLevelDefault},
    {"O3", "default<O3>", LLVMCodeGenLevelAggressive},
    {"light", "sroa,early-cse,instcombine,simplifycfg", LLVMCodeGenLevelLess},
    {"fast", "sroa,early-cse,simplifycfg", LLVMCodeGenLevelNone},
    /* Not a setting's value: a pass LLVM does not know, so that tests can
     * make LLVM itself fail (SL_JIT_BROKEN_PASSES, jit.h). */
    {SL_JIT_BROKEN_PASSES, "sluice-debug-no-such-pass", LLVMCodeGenLevelNone},
};
#define DEFAULT_PIPELINE "light"

static const pipeline *find_pipeline(const char *name) {
  if (!name || strcmp(name, "default") == 0)
    name = DEFAULT_PIPELINE;
  for (size_t i = 0; i < sizeof PIPELINES / sizeof PIPELINES[0]; i++)
    if (strcmp(PIPELINES[i].name, name) == 0)
      return &PIPELINES[i];
  return NULL;
}

/* LLVM's native target registration is process-wide: once. */
static pthread_once_t target_once = PTHREAD_ONCE_INIT;
static int target_failed;

static void init_target(void) {
  target_failed =
      LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

static int llvm_error(sl_error *err, const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e);
  int rc = sl_error_set(err, SL_EINTERNAL, "JIT: %s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return rc;
}

static LLVMTargetMachineRef host_machine(const pipeline *pl, sl_error *err) {
  char *triple = LLVMGetDefaultTargetTriple();
  char *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  char *msg = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    sl_error_set(err, SL_EINTERNAL, "JIT: no target for %s: %s", triple,
                 msg ? msg : "?");
    LLVMDisposeMessage(msg);
  } else {
    tm = LLVMCreateTargetMachine(target, triple, cpu, features, pl->cg,
                                 LLVMRelocDefault, LLVMCodeModelJITDefault);
    if (!tm)
      sl_error_set(err, SL_EINTERNAL, "JIT: cannot create a target machine");
  }
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  return tm;
}

int sl_jit_new(sl_jit **out, const char *passes, sl_error *err) {
  *out = NULL;
  const pipeline *pl = find_pipeline(passes);
  if (!pl)
    return sl_error_set(err, SL_EINVAL, "JIT: unknown pass pipeline '%s'",
                        passes);
  pthread_once(&target_once, init_target);
  if (target_failed)
    return sl_error_set(err, SL_EINTERNAL,
                        "JIT: LLVM has no native target on this machine");
  double t0 = sl_clock_seconds();
  sl_jit *j = calloc(1, sizeof *j);
  if (!j)
    return sl_error_set(err, SL_ENOMEM, "out of memory");
  j->pipeline = pl;
  sl_arena_init(&j->arena, 0);
  /* Code generation at the pipeline's level, for this host's CPU. */
  LLVMTargetMachineRef tm = host_machine(pl, err);
  if (!tm) {
    sl_arena_free(&j->arena);
    free(j);
    return err->code;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, builder);
  if (e) {
    free(j);
    return llvm_error(err, "cannot create the LLJIT", e);
  }
  /* Code LLVM itself emits calls for (memset, memcpy) resolves against
   * the process; our own helpers are called by address. */
  LLVMOrcDefinitionGeneratorRef gen;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
  if (e) {
    sl_jit_free(j);
    return llvm_error(err, "cannot search the process for symbols", e);
  }
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(j->lljit), gen);
  j->tsc = LLVMOrcCreateNewThreadSafeContext();
  j->ctx = LLVMOrcThreadSafeContextGetContext(j->tsc);
  j->mod = LLVMModuleCreateWithNameInContext("sluice", j->ctx);
  LLVMSetDataLayout(j->mod, LLVMOrcLLJITGetDataLayoutStr(j->lljit));
  LLVMSetTarget(j->mod, LLVMOrcLLJITGetTripleString(j->lljit));
  j->seconds = sl_clock_seconds() - t0;
  *out = j;
  return SL_OK;
}

void sl_jit_free(sl_jit *j) {
  if (!j)
    return;
  if (j->mod)
    LLVMDisposeModule(j->mod);
  if (j->lljit)
    LLVMOrcDisposeLLJIT(j->lljit);
  if (j->tsc)
    LLVMOrcDisposeThreadSafeContext(j->tsc);
  for (int i = 0; i < j->nkernels; i++)
    free(j->kernels[i]);
  free(j->kernels);
  sl_arena_free(&j->arena);
  free(j);
}

double sl_jit_seconds(const sl_jit *j) {
  return j ? j->seconds : 0;
}

/* Code generation state for kernel kn of j (named after its index). */
static void begin_cg(sl_jit *j, sl_jit_kernel *kn, jit_cg *g) {
  snprintf(kn->name, sizeof kn->name, "sl_kernel_%d", j->nkernels);
  memset(g, 0, sizeof *g);
  g->ctx = j->ctx;
  g->mod = j->mod;
  g->b = LLVMCreateBuilderInContext(j->ctx);
  g->i1 = LLVMInt1TypeInContext(j->ctx);
  g->i8 = LLVMInt8TypeInContext(j->ctx);
  g->i16 = LLVMInt16TypeInContext(j->ctx);
  g->i32 = LLVMInt32TypeInContext(j->ctx);
  g->i64 = LLVMInt64TypeInContext(j->ctx);
  g->i128 = LLVMInt128TypeInContext(j->ctx);
  g->f32 = LLVMFloatTypeInContext(j->ctx);
  g->f64 = LLVMDoubleTypeInContext(j->ctx);
  g->ptr = LLVMPointerType(g->i8, 0);
  g->jsplit = -1;
}

/* Register kn (built with status rc) with j. */
static int end_cg(sl_jit *j, sl_jit_kernel *kn, jit_cg *g, int rc, double t0,
                  sl_jit_kernel **k, sl_error *err) {
  LLVMDisposeBuilder(g->b);
  if (rc != SL_OK) {
    free(kn);
    return rc;
  }
  if (j->nkernels == j->cap) {
    j->cap = j->cap ? j->cap * 2 : 4;
    sl_jit_kernel **ks = realloc(j->kernels, sizeof *ks * (size_t)j->cap);
    if (!ks) {
      free(kn);
      return sl_error_set(err, SL_ENOMEM, "out of memory");
    }
    j->kernels = ks;
  }
  j->kernels[j->nkernels++] = kn;
  j->seconds += sl_clock_seconds() - t0;
  *k = kn;
  return SL_OK;
}

int sl_jit_add_kernel(sl_jit *j, const sl_expr_prog *filter,
                      sl_expr_prog *const *progs, int nprogs,
                      const sl_row_layout *in, const sl_row_layout *out,
                      bool borrow, sl_jit_kernel **k, sl_error *err) {
  return sl_jit_add_kernel_pre(j, NULL, NULL, filter, progs, nprogs, in, out,
                               borrow, k, err);
}

/* The subtrees of a kernel's programs that the code generator does not
 * handle (all over the kernel's input rows): one-node programs the
 * interpreter runs over the call's rows before the loop, into aux rows
 * whose fields the loop loads (gen_interp). */
static void prepare_aux(sl_jit *j, sl_jit_kernel *kn, jit_cg *g,
                        const sl_expr_prog *pre, const sl_expr_prog *filter,
                        const sl_jit_lookup *lookup, sl_expr_prog *const *progs,
                        int nprogs) {
  const sl_expr_prog *all[64];
  int na = 0;
  all[na++] = pre;
  all[na++] = filter;
  for (int i = 0; lookup && i < lookup->nkeys && na < 64; i++)
    all[na++] = lookup->key_progs[i];
  for (int i = 0; i < nprogs && na < 64; i++)
    all[na++] = progs[i];
  int n = 0;
  const inode **nodes = sl_arena_alloc(&j->arena, sizeof *nodes * 256);
  const sl_expr_prog **owner = sl_arena_alloc(&j->arena, sizeof *owner * 256);
  for (int i = 0; i < na; i++) {
    if (!all[i])
      continue;
    int before = n;
    n = jit_collect_interp(all[i]->root, nodes, 256, n);
    if (n > 256)
      n = 256; /* the rest are generated as errors: interpreted batches */
    for (int k = before; k < n; k++)
      owner[k] = all[i];
  }
  if (n == 0)
    return;
  const sl_type **types = sl_arena_alloc(&j->arena, sizeof *types * (size_t)n);
  kn->aux_progs = sl_arena_alloc(&j->arena, sizeof *kn->aux_progs * (size_t)n);
  for (int a = 0; a < n; a++) {
    types[a] = nodes[a]->type;
    sl_expr_prog *p = sl_arena_alloc(&j->arena, sizeof *p);
    p->root = (inode *)nodes[a];
    p->nslots = owner[a]->nslots;
    p->input = owner[a]->input;
    kn->aux_progs[a] = p;
  }
  kn->naux = n;
  kn->aux_layout = sl_row_layout_new(&j->arena, n, NULL, types);
  g->aux_nodes = nodes;
  g->naux = n;
  g->aux_layout = kn->aux_layout;
}

/* A kernel, with a lookup join when lookup is not NULL (jit.h). */
static int add_kernel(sl_jit *j, const sl_expr_prog *pre,
                      const sl_row_layout *pre_layout,
                      const sl_expr_prog *filter, const sl_jit_lookup *lookup,
                      const sl_jit_gate *gate, sl_expr_prog *const *progs,
                      int nprogs, const sl_row_layout *in,
                      const sl_row_layout *out, bool borrow, sl_jit_kernel **k,
                      sl_error *err) {
  *k = NULL;
  if (!j->mod)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: JIT kernel added after compiling");
  if (lookup && !sl_jit_lookup_supported(lookup->key_layout))
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "JIT does not probe a join on a DECIMAL(>18) key");
  /* Subtrees the code generator does not handle are interpreted per row
   * from the compiled code, except over a lookup kernel's joined rows,
   * which are never built (sl_jit_lookup_status keeps those away). */
  char why[160];
  if (lookup) {
    bool native = !lookup->post_filter ||
                  !jit_check(lookup->post_filter->root, why, sizeof why);
    for (int i = 0; i < nprogs && native; i++)
      native = !progs[i] || !jit_check(progs[i]->root, why, sizeof why);
    if (!native)
      return sl_error_set(err, SL_EINTERNAL,
                          "internal error: a lookup kernel over an expression "
                          "the JIT interprets (%s)",
                          why);
  }
  double t0 = sl_clock_seconds();
  sl_jit_kernel *kn = calloc(1, sizeof *kn);
  if (!kn)
    return sl_error_set(err, SL_ENOMEM, "out of memory");
  kn->has_filter = filter != NULL || lookup != NULL; /* a join selects */
  kn->has_pre = pre != NULL;
  kn->nprogs = nprogs;
  kn->lookup = lookup != NULL;
  kn->gated = gate != NULL;
  jit_cg g;
  begin_cg(j, kn, &g);
  prepare_aux(j, kn, &g, pre, filter, lookup, lookup ? NULL : progs,
              lookup ? 0 : nprogs);
  int rc = jit_build_kernel(&g, kn->name, pre, pre_layout, filter, lookup, gate,
                            progs, nprogs, in, out, borrow, err);
  return end_cg(j, kn, &g, rc, t0, k, err);
}

int sl_jit_add_kernel_pre(sl_jit *j, const sl_expr_prog *pre,
                          const sl_row_layout *pre_layout,
                          const sl_expr_prog *filter,
                          sl_expr_prog *const *progs, int nprogs,
                          const sl_row_layout *in, const sl_row_layout *out,
                          bool borrow, sl_jit_kernel **k, sl_error *err) {
  return add_kernel(j, pre, pre_layout, filter, NULL, NULL, progs, nprogs, in,
                    out, borrow, k, err);
}

int sl_jit_add_kernel_gated(sl_jit *j, const sl_expr_prog *pre,
                            const sl_row_layout *pre_layout,
                            const sl_expr_prog *filter, const sl_jit_gate *gate,
                            sl_expr_prog *const *progs, int nprogs,
                            const sl_row_layout *in, const sl_row_layout *out,
                            bool borrow, sl_jit_kernel **k, sl_error *err) {
  *k = NULL;
  const int at[2] = {gate ? gate->value_prog : 0, gate ? gate->time_prog : 0};
  for (int i = 0; gate && i < 2; i++)
    if (at[i] < 0 || at[i] >= nprogs || !progs[at[i]] ||
        progs[at[i]]->root->rep != R_I64)
      return sl_error_set(err, SL_EUNSUPPORTED,
                          "a JIT gate over output %d, not an integer program",
                          at[i]);
  return add_kernel(j, pre, pre_layout, filter, NULL, gate, progs, nprogs, in,
                    out, borrow, k, err);
}

bool sl_jit_lookup_supported(const sl_row_layout *key_layout) {
  for (int i = 0; i < key_layout->nfields; i++)
    if (key_layout->fields[i].ptype != SL_P_STR &&
        key_layout->fields[i].size > 8)
      return false;
  return true;
}

int sl_jit_add_lookup_kernel(sl_jit *j, const sl_expr_prog *pre,
                             const sl_row_layout *pre_layout,
                             const sl_expr_prog *filter,
                             const sl_jit_lookup *lookup,
                             sl_expr_prog *const *progs, int nprogs,
                             const sl_row_layout *in, const sl_row_layout *out,
                             bool borrow, sl_jit_kernel **k, sl_error *err) {
  return add_kernel(j, pre, pre_layout, filter, lookup, NULL, progs, nprogs, in,
                    out, borrow, k, err);
}

int sl_jit_add_fold(sl_jit *j, const sl_jit_fold_spec *spec, sl_jit_kernel **k,
                    sl_error *err) {
  *k = NULL;
  if (!j->mod)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: JIT kernel added after compiling");
  double t0 = sl_clock_seconds();
  sl_jit_kernel *kn = calloc(1, sizeof *kn);
  if (!kn)
    return sl_error_set(err, SL_ENOMEM, "out of memory");
  kn->is_fold = true;
  jit_cg g;
  begin_cg(j, kn, &g);
  int rc = jit_build_fold(&g, kn->name, spec, err);
  return end_cg(j, kn, &g, rc, t0, k, err);
}

int sl_jit_add_route(sl_jit *j, const sl_jit_fold_spec *spec, int owners,
                     sl_jit_kernel **k, sl_error *err) {
  *k = NULL;
  if (!j->mod)
    return sl_error_set(err, SL_EINTERNAL,
                        "internal error: JIT kernel added after compiling");
  double t0 = sl_clock_seconds();
  sl_jit_kernel *kn = calloc(1, sizeof *kn);
  if (!kn)
    return sl_error_set(err, SL_ENOMEM, "out of memory");
  kn->is_route = true;
  jit_cg g;
  begin_cg(j, kn, &g);
  int rc = jit_build_route(&g, kn->name, spec, owners, err);
  return end_cg(j, kn, &g, rc, t0, k, err);
}

void sl_jit_route_run(const sl_jit_kernel *k, const uint8_t *tmp, uint32_t n,
                      uint32_t *dest) {
  k->route_fn(tmp, n, dest);
}

int sl_jit_fold_run(const sl_jit_kernel *k, sl_jit_fold_call *c) {
  return k->fold_fn(c) == JIT_OK ? SL_OK : SL_JIT_RETRY;
}

static uintptr_t kernel_address(const sl_jit_kernel *k) {
  return k->is_fold    ? (uintptr_t)k->fold_fn
         : k->is_route ? (uintptr_t)k->route_fn
                       : (uintptr_t)k->fn;
}

/* SLUICE_PERF_MAP=1: the kernels' addresses in /tmp/perf-PID.map, perf's
 * map of JIT code, so that `perf report` names them instead of
 * [unknown].  A kernel's size is taken as the distance to the next one
 * of the module (its code is laid out in one block), the last 4 KiB. */
static void perf_map(const sl_jit *j) {
  const char *want = getenv("SLUICE_PERF_MAP");
  if (!want || strcmp(want, "1") != 0 || j->nkernels == 0)
    return;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
  FILE *f = fopen(path, "a");
  for (int i = 0; f && i < j->nkernels; i++) {
    uintptr_t at = kernel_address(j->kernels[i]), size = 4096;
    for (int m = 0; m < j->nkernels; m++) {
      uintptr_t other = kernel_address(j->kernels[m]);
      if (other > at && other - at < size)
        size = other - at;
    }
    fprintf(f, "%lx %lx %s_%p\n", (unsigned long)at, (unsigned long)size,
            j->kernels[i]->name, (const void *)j);
  }
  if (f)
    fclose(f);
  pthread_mutex_unlock(&lock);
}

int jit_compile_now(sl_jit *j, char **ir, sl_error *err) {
  if (ir)
    *ir = NULL;
  if (!j->mod)
    return SL_OK;
  double t0 = sl_clock_seconds();
  char *msg = NULL;
  if (LLVMVerifyModule(j->mod, LLVMReturnStatusAction, &msg)) {
    int rc = sl_error_set(err, SL_EINTERNAL,
                          "internal error: the JIT generated invalid IR: %s",
                          msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return rc;
  }
  LLVMDisposeMessage(msg);
  LLVMTargetMachineRef tm = host_machine(j->pipeline, err);
  if (!tm)
    return err->code;
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(j->mod, j->pipeline->passes, tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  LLVMDisposeTargetMachine(tm);
  if (e)
    return llvm_error(err, "optimizing", e);
  if (ir) {
    char *text = LLVMPrintModuleToString(j->mod);
    *ir = strdup(text);
    LLVMDisposeMessage(text);
  }
  /* The module now belongs to the LLJIT; code is generated at lookup. */
  LLVMOrcThreadSafeModuleRef tsm =
      LLVMOrcCreateNewThreadSafeModule(j->mod, j->tsc);
  j->mod = NULL;
  e = LLVMOrcLLJITAddLLVMIRModule(j->lljit,
                                  LLVMOrcLLJITGetMainJITDylib(j->lljit), tsm);
  if (e)
    return llvm_error(err, "adding the module", e);
  for (int i = 0; i < j->nkernels; i++) {
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->lljit, &addr, j->kernels[i]->name);
    if (e)
      return llvm_error(err, "generating code", e);
    if (j->kernels[i]->is_fold)
      j->kernels[i]->fold_fn = (int32_t(*)(sl_jit_fold_call *))(uintptr_t)addr;
    else if (j->kernels[i]->is_route)
      j->kernels[i]->route_fn =
          (int32_t(*)(const uint8_t *, uint32_t, uint32_t *))(uintptr_t)addr;
    else
      j->kernels[i]->fn = (jit_fn)(uintptr_t)addr;
  }
  j->seconds += sl_clock_seconds() - t0;
  perf_map(j);
  return SL_OK;
}

int sl_jit_run(const sl_jit_kernel *k, const sl_buffer *in, const uint32_t *sel,
               uint32_t n, uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
               uint32_t *next, sl_expr_ctx *ctx) {
  return sl_jit_run_pre(k, in, sel, n, sel_out, nout, out, NULL, next, ctx);
}

static int run(const sl_jit_kernel *k, const sl_jit_lookup_table *t,
               const sl_buffer *in, const uint32_t *sel, uint32_t n,
               uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
               sl_buffer *pre_out, uint32_t *next, uint32_t *passed,
               void *gate_state, sl_expr_ctx *ctx);

int sl_jit_run_pre(const sl_jit_kernel *k, const sl_buffer *in,
                   const uint32_t *sel, uint32_t n, uint32_t *sel_out,
                   uint32_t *nout, sl_buffer *out, sl_buffer *pre_out,
                   uint32_t *next, sl_expr_ctx *ctx) {
  if (k->lookup || k->gated)
    return SL_JIT_RETRY; /* needs its table or its gate's state */
  return run(k, NULL, in, sel, n, sel_out, nout, out, pre_out, next, NULL, NULL,
             ctx);
}

int sl_jit_run_gated(const sl_jit_kernel *k, const sl_buffer *in,
                     const uint32_t *sel, uint32_t n, uint32_t *sel_out,
                     uint32_t *nout, sl_buffer *out, sl_buffer *pre_out,
                     uint32_t *next, void *gate_state, sl_expr_ctx *ctx) {
  if (k->lookup || (k->gated && !gate_state))
    return SL_JIT_RETRY;
  return run(k, NULL, in, sel, n, sel_out, nout, out, pre_out, next, NULL,
             gate_state, ctx);
}

int sl_jit_run_lookup(const sl_jit_kernel *k, const sl_jit_lookup_table *t,
                      const sl_buffer *in, const uint32_t *sel, uint32_t n,
                      uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
                      sl_buffer *pre_out, uint32_t *next, uint32_t *passed,
                      sl_expr_ctx *ctx) {
  if (!k->lookup || !t)
    return SL_JIT_RETRY;
  *passed = 0;
  return run(k, t, in, sel, n, sel_out, nout, out, pre_out, next, passed, NULL,
             ctx);
}

static int run(const sl_jit_kernel *k, const sl_jit_lookup_table *t,
               const sl_buffer *in, const uint32_t *sel, uint32_t n,
               uint32_t *sel_out, uint32_t *nout, sl_buffer *out,
               sl_buffer *pre_out, uint32_t *next, uint32_t *passed,
               void *gate_state, sl_expr_ctx *ctx) {
  if (k->has_pre) {
    if (!pre_out || (size_t)n * pre_out->layout->width > (size_t)pre_out->cap)
      return SL_JIT_RETRY;
    sl_buffer_clear(pre_out);
  }
  jit_call c;
  memset(&c, 0, sizeof c);
  c.in = in->data;
  c.sel = sel;
  c.sel_out = sel_out;
  c.n = n;
  c.pre_out = k->has_pre ? pre_out->data : NULL;
  c.table = t;
  c.gate_state = gate_state;
  /* The subtrees the loop does not compute: the interpreter, vectorized,
   * over every row first.  An error there (perhaps in a CASE branch the
   * row would not have taken) hands the batch back: the interpreter then
   * does it with the exact semantics and message. */
  sl_buffer aux = {0};
  if (k->naux > 0 && n > 0) {
    if (!ctx)
      return SL_JIT_RETRY;
    /* strings they build go to aux's heap: start at 64 bytes per value,
     * double while it is too small */
    uint32_t w = k->aux_layout->width;
    size_t heap = (size_t)n * 64 * (size_t)k->naux;
    for (;;) {
      if ((size_t)n * w + heap > (size_t)1 << 30)
        return SL_JIT_RETRY;
      sl_buffer_init(&aux, k->aux_layout, (uint32_t)((size_t)n * w + heap));
      memset(aux.data, 0, (size_t)n * w);
      aux.nrows = n;
      int rc = SL_OK;
      /* one instant for all of them: CURRENT_TIMESTAMP = NOW() is two
       * subtrees, and read apart they once straddled a millisecond */
      sl_expr_ctx_pin_now(ctx);
      for (int a = 0; a < k->naux && rc == SL_OK; a++) {
        sl_error err = {0};
        rc = sl_expr_eval_into(k->aux_progs[a], in, sel, n, &aux, 0, a, ctx,
                               &err);
        sl_error_clear(&err);
      }
      sl_expr_ctx_unpin_now(ctx);
      if (rc == SL_OK)
        break;
      sl_buffer_free(&aux);
      if (rc != SL_EXPR_HEAP_FULL)
        return SL_JIT_RETRY;
      heap *= 2;
    }
    c.aux = aux.data;
  }
  uint32_t heap0 = 0;
  if (out && k->nprogs > 0) {
    c.out = out->data;
    c.heap_used = &out->heap_used;
    c.outbuf = out;
    c.base = out->nrows;
    c.cap = out->cap;
    heap0 = out->heap_used;
  }
  int32_t rc = k->fn(&c);
  if (aux.data)
    sl_buffer_free(&aux);
  if (rc != JIT_OK) {
    if (c.outbuf)
      out->heap_used = heap0;
    return SL_JIT_RETRY;
  }
  if (c.outbuf)
    out->nrows += c.nout;
  if (k->has_pre && c.next == n)
    pre_out->nrows = n;
  *nout = c.nout;
  *next = c.next;
  if (passed)
    *passed = c.npassed;
  return SL_OK;
}

bool sl_jit_supports(const sl_expr_prog *p, char *why, size_t whylen) {
  char buf[160];
  const char *r = jit_check(p->root, buf, sizeof buf);
  if (r && why && whylen)
    snprintf(why, whylen, "%s", r);
  return r == NULL;
}

bool sl_jit_pipeline_known(const char *name) {
  return find_pipeline(name) != NULL;
}
