/* jit_int.h - internals of the JIT (jit.h), shared by jit_engine.c (LLJIT,
 * passes, running kernels), jit_kernel.c (the fused loop), jit_expr.c
 * (program nodes -> IR) and jit_helpers.c (the C functions the IR calls).
 *
 * Generated code calls C helpers through their addresses baked in as
 * constants (inttoptr), so no symbol lookup is needed for them and the
 * optimizer cannot replace them by something that rounds differently.
 */
#ifndef SLUICE_JIT_INT_H
#define SLUICE_JIT_INT_H

#include <llvm-c/Core.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>

#include "../expr/interp_int.h"
#include "sluice/jit/jit.h"

/* What a kernel gets: one struct, so the generated function has a single
 * pointer argument and its fields are read at offsetof() offsets. */
typedef struct jit_call {
  const uint8_t *in;   /* input rows */
  const uint32_t *sel; /* rows to look at */
  uint32_t *sel_out;   /* rows that passed the filter */
  uint8_t *out;        /* output buffer's data */
  uint32_t *heap_used; /* &output buffer's heap_used */
  sl_buffer *outbuf;
  uint32_t n;
  uint32_t base; /* output rows already in the buffer */
  uint32_t cap;  /* output buffer bytes */
  uint32_t nout; /* result: rows passed / written */
  uint32_t next; /* result: where to continue in sel */
  uint32_t heap_mark;
  uint8_t *pre_out; /* rows for the pre expression, one per sel[k] */
  const sl_jit_lookup_table *table; /* a lookup kernel's join table */
  uint32_t npassed; /* result of a lookup kernel: rows that passed the
                     * stream filter */
  /* the values of the subtrees the code generator does not handle, one
   * aux row per sel position, computed by the interpreter before the loop
   * (the kernel's aux_layout) */
  const uint8_t *aux;
  void *gate_state; /* a gated kernel's (sl_jit_gate) */
} jit_call;

/* Kernel return values. */
#define JIT_OK 0
#define JIT_ERROR 1 /* a runtime error: redo with the interpreter */
#define JIT_FULL 2  /* a row's long strings did not fit: stop at next */

typedef int32_t (*jit_fn)(jit_call *);

struct sl_jit_kernel {
  char name[32];
  jit_fn fn;
  bool has_filter;
  bool has_pre;
  int nprogs;
  bool lookup; /* a lookup-join kernel: run with its table */
  bool gated;  /* with a gate (sl_jit_gate): run with its state */
  /* subtrees the interpreter evaluates over the call's rows first */
  int naux;
  sl_expr_prog **aux_progs;
  const sl_row_layout *aux_layout;
  /* a routing function (sl_jit_add_route), called as route_fn */
  int32_t (*route_fn)(const uint8_t *, uint32_t, uint32_t *);
  bool is_route;
  bool is_fold; /* a fold function (sl_jit_add_fold), called as fold_fn */
  int32_t (*fold_fn)(sl_jit_fold_call *);
};

struct pipeline;

struct sl_jit {
  const struct pipeline *pipeline; /* jit_engine.c */
  LLVMOrcLLJITRef lljit;
  LLVMOrcThreadSafeContextRef tsc;
  LLVMContextRef ctx; /* owned by tsc */
  LLVMModuleRef mod;  /* kernels added, not yet compiled */
  sl_jit_kernel **kernels;
  int nkernels, cap;
  double seconds;
  /* The programs of interpreted subtrees and their aux layouts. */
  sl_arena arena;
};

/* Code generation state for one kernel function. */
typedef struct jit_cg {
  const sl_expr_prog *prog; /* the program being generated */
  /* Subtrees the interpreter evaluates before the loop: aux_nodes[a] is
   * field a of aux_layout, in the aux row at aux_row (jit_call's aux). */
  const inode **aux_nodes;
  int naux;
  const sl_row_layout *aux_layout;
  LLVMValueRef aux_row;
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  LLVMTypeRef i1, i8, i16, i32, i64, i128, f32, f64, ptr, i32fn;
  LLVMBasicBlockRef err_bb; /* returns JIT_ERROR */
  LLVMValueRef row;         /* the current input row (i8*) */
  /* A lookup kernel's post-join expressions read joined rows that are
   * never built: fields [0, jsplit) from the stream row (row, layout
   * jstream), the rest from the matched table row (trow, jtable).
   * jsplit < 0: loads read row at the program's own offsets. */
  int jsplit;
  const sl_row_layout *jstream, *jtable;
  LLVMValueRef trow;
  LLVMValueRef slot_a, slot_b, slot_r; /* 16-byte helper arguments */
} jit_cg;

/* A value: its null flag (i1) and value (i64, double, i128, or for strings
 * a pointer to the 16-byte sl_str). */
typedef struct jit_val {
  LLVMValueRef null, v;
} jit_val;

/* ---- jit_engine.c, jit_background.c -------------------------------------- */
/* sl_jit_compile's work, on the calling thread (jit_background.c runs it
 * on a thread of its own so that Ctrl-C is not kept waiting). */
int jit_compile_now(sl_jit *j, char **ir, sl_error *err);

/* ---- jit_expr.c ---------------------------------------------------------- */
/* NULL if n and its whole subtree compile to native code, else (the
 * first node that does not) the reason in buf; such a subtree is
 * evaluated by the interpreter from the compiled code instead. */
const char *jit_check(const inode *n, char *buf, size_t len);
/* Code for program p (sets g->prog). */
jit_val jit_gen_prog(jit_cg *g, const sl_expr_prog *p);
/* The maximal subtrees of n that are not native (jit_check), added to
 * out[k..cap) unless already there; returns the new count (which may
 * exceed cap: then not all were stored). */
int jit_collect_interp(const inode *n, const inode **out, int cap, int k);
jit_val jit_gen(jit_cg *g, const inode *n);
LLVMTypeRef jit_type_of(jit_cg *g, irep r);
/* The type and alignment a row field of physical type p (not a string)
 * is stored as. */
LLVMTypeRef jit_field_type(jit_cg *g, sl_ptype p, unsigned *align);
/* A typed pointer to byte offset off of base (i8*). */
LLVMValueRef jit_at(jit_cg *g, LLVMValueRef base, uint64_t off, LLVMTypeRef t);
LLVMValueRef jit_load(jit_cg *g, LLVMTypeRef t, LLVMValueRef p, unsigned align);
/* A load from memory the function never writes while it runs (its input
 * rows, tmp rows, watermark rows, a join table's rows), marked
 * !invariant.load: early-cse then reuses it across the function's own
 * stores (to output rows, to group state), which it cannot otherwise
 * tell apart from the input, so a field read by the filter, the
 * watermark and an output is read once. */
LLVMValueRef jit_load_input(jit_cg *g, LLVMTypeRef t, LLVMValueRef p,
                            unsigned align);
/* At the builder's block, a phi of a (coming from block ab) and b (from
 * bb). */
LLVMValueRef jit_phi2(jit_cg *g, LLVMTypeRef t, LLVMValueRef a,
                      LLVMBasicBlockRef ab, LLVMValueRef b,
                      LLVMBasicBlockRef bb, const char *name);
void jit_store(jit_cg *g, LLVMValueRef v, LLVMValueRef p, unsigned align);
/* *p += v, p an integer of v's type in memory (naturally aligned): a
 * counter, which SROA makes a register where p is an alloca. */
void jit_add_to(jit_cg *g, LLVMValueRef p, LLVMValueRef v);
/* Call the C function at addr with type ft. */
LLVMValueRef jit_call_c(jit_cg *g, LLVMTypeRef ft, void *addr,
                        LLVMValueRef *args, unsigned nargs);
LLVMValueRef jit_const_ptr(jit_cg *g, const void *p);

/* ---- jit_kernel.c -------------------------------------------------------- */
/* Add the function `name` for one kernel to g's module; lookup (may be
 * NULL) makes it a lookup-join kernel, gate (may be NULL) a gated one
 * (jit.h). */
int jit_build_kernel(jit_cg *g, const char *name, const sl_expr_prog *pre,
                     const sl_row_layout *pre_layout,
                     const sl_expr_prog *filter, const sl_jit_lookup *lookup,
                     const sl_jit_gate *gate, sl_expr_prog *const *progs,
                     int nprogs, const sl_row_layout *in,
                     const sl_row_layout *out, bool borrow, sl_error *err);

/* ---- jit_hash.c: keys, hashed and compared as C does ----------------------
 */
LLVMValueRef jit_mix64(jit_cg *g, LLVMValueRef x);
LLVMTypeRef jit_int_of_size(jit_cg *g, uint32_t size);
/* sl_hash_bytes of the bytes of the sl_str at s (i64). */
LLVMValueRef jit_str_hash(jit_cg *g, LLVMValueRef s);
/* sl_str_equal of the sl_strs at a and b (i1). */
LLVMValueRef jit_str_eq(jit_cg *g, LLVMValueRef a, LLVMValueRef b);
/* sl_key_hash of the key row at key (layout kl: strings or fields of at
 * most 8 bytes). */
LLVMValueRef jit_key_hash(jit_cg *g, const sl_row_layout *kl, LLVMValueRef key);
/* Every field of key rows a and b equal (null bits not compared). */
LLVMValueRef jit_key_fields_equal(jit_cg *g, const sl_row_layout *kl,
                                  LLVMValueRef a, LLVMValueRef b);

/* ---- jit_fold.c ---------------------------------------------------------- */
/* Add the fold function `name` (jit.h, sl_jit_add_fold) to g's module. */
int jit_build_fold(jit_cg *g, const char *name, const sl_jit_fold_spec *spec,
                   sl_error *err);
/* Add the routing function `name` (jit.h, sl_jit_add_route). */
int jit_build_route(jit_cg *g, const char *name, const sl_jit_fold_spec *spec,
                    int owners, sl_error *err);

/* ---- jit_helpers.c: called from generated code --------------------------- */
int32_t sl_jit_rt_cast(const inode *n, const void *arg, void *res);
int32_t sl_jit_rt_dec_arith(const inode *n, const i128 *a, const i128 *b,
                            i128 *r);
int32_t sl_jit_rt_str_cmp(const sl_str *a, const sl_str *b);
int32_t sl_jit_rt_like(const void *pat, const sl_str *s);
int64_t sl_jit_rt_char_length(const sl_str *s);
/* Is the value at v (the set's representation) in the IN list's set? */
int32_t sl_jit_rt_in_set(const ix_inset *set, const void *v);
double sl_jit_rt_fmod(double a, double b);
int32_t sl_jit_rt_time_fn(const inode *n, int64_t v, int64_t *out);
double sl_jit_rt_math1(int32_t fn, double a);
double sl_jit_rt_pow(double a, double b);
/* Store string *s into *dst of an output row, copying long bytes into the
 * output buffer's heap; 0 = ok, 1 = no room. */
int32_t sl_jit_rt_put_str(jit_call *c, uint8_t *orow, sl_str *dst,
                          const sl_str *s);
#endif
