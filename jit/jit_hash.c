/* jit_hash.c - key hashing and key comparison in IR, shared by the window
 * state update (jit_fold.c) and the lookup join's probe (jit_kernel.c).
 *
 * Both must agree bit for bit with the C side: a group table or a join
 * table built by C (sl_key_hash, state/group_table.c; sl_hash_bytes,
 * row/row_layout.c) is probed by compiled code and vice versa.  String
 * bytes are hashed and compared inline rather than by calls: on YSB the
 * two calls per record (ad_id for the join, campaign_id for the group)
 * were a fifth of the compiled pipeline's time.
 */
#include <stddef.h>

#include "jit_int.h"

static LLVMValueRef c64(jit_cg *g, uint64_t v) {
  return LLVMConstInt(g->i64, v, 0);
}

static LLVMBasicBlockRef blk(jit_cg *g, const char *name) {
  return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

static LLVMValueRef ld(jit_cg *g, LLVMTypeRef t, LLVMValueRef base,
                       uint64_t off, unsigned align) {
  return jit_load(g, t, jit_at(g, base, off, t), align);
}

LLVMValueRef jit_mix64(jit_cg *g, LLVMValueRef x) {
  x = LLVMBuildXor(g->b, x, LLVMBuildLShr(g->b, x, c64(g, 33), ""), "");
  x = LLVMBuildMul(g->b, x, c64(g, 0xff51afd7ed558ccdULL), "");
  x = LLVMBuildXor(g->b, x, LLVMBuildLShr(g->b, x, c64(g, 33), ""), "");
  x = LLVMBuildMul(g->b, x, c64(g, 0xc4ceb9fe1a85ec53ULL), "");
  return LLVMBuildXor(g->b, x, LLVMBuildLShr(g->b, x, c64(g, 33), ""), "");
}

LLVMTypeRef jit_int_of_size(jit_cg *g, uint32_t size) {
  return size == 1 ? g->i8 : size == 2 ? g->i16 : size == 4 ? g->i32 : g->i64;
}

/* The bytes of the sl_str at s: inline (len <= SL_STR_INLINE) at s + 4,
 * else behind the pointer at s + 8 (row.h). */
static LLVMValueRef str_data(jit_cg *g, LLVMValueRef s, LLVMValueRef len) {
  LLVMValueRef inl = LLVMBuildICmp(g->b, LLVMIntULE, len,
                                   LLVMConstInt(g->i32, SL_STR_INLINE, 0), "");
  LLVMValueRef ptr = ld(g, g->ptr, s, 8, 1);
  return LLVMBuildSelect(g->b, inl, jit_at(g, s, 4, g->i8), ptr, "bytes");
}

LLVMValueRef jit_str_hash(jit_cg *g, LLVMValueRef s) {
  const uint64_t mul = 0xbf58476d1ce4e5b9ULL;
  LLVMValueRef len = ld(g, g->i32, s, 0, 4);
  LLVMValueRef data = str_data(g, s, len);
  LLVMValueRef len64 = LLVMBuildZExt(g->b, len, g->i64, "");
  LLVMValueRef h0 =
      LLVMBuildXor(g->b, c64(g, 0x9e3779b97f4a7c15ULL), len64, "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = blk(g, "sh.loop"), body = blk(g, "sh.word"),
                    tail = blk(g, "sh.tail"), tbody = blk(g, "sh.last"),
                    done = blk(g, "sh.done");
  LLVMBuildBr(g->b, head);

  /* 8 bytes at a time: h = (h ^ w) * mul; h ^= h >> 31 */
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef h = LLVMBuildPhi(g->b, g->i64, "h");
  LLVMValueRef i = LLVMBuildPhi(g->b, g->i64, "i");
  LLVMBuildCondBr(g->b,
                  LLVMBuildICmp(g->b, LLVMIntULE,
                                LLVMBuildAdd(g->b, i, c64(g, 8), ""), len64,
                                ""),
                  body, tail);
  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef w = jit_load(
      g, g->i64,
      LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, data, &i, 1, ""),
                       LLVMPointerType(g->i64, 0), ""),
      1);
  LLVMValueRef hb =
      LLVMBuildMul(g->b, LLVMBuildXor(g->b, h, w, ""), c64(g, mul), "");
  hb = LLVMBuildXor(g->b, hb, LLVMBuildLShr(g->b, hb, c64(g, 31), ""), "");
  LLVMValueRef ib = LLVMBuildAdd(g->b, i, c64(g, 8), "");
  LLVMBuildBr(g->b, head);
  LLVMValueRef hin[2] = {h0, hb}, iin[2] = {c64(g, 0), ib};
  LLVMBasicBlockRef hfrom[2] = {from, body};
  LLVMAddIncoming(h, hin, hfrom, 2);
  LLVMAddIncoming(i, iin, hfrom, 2);

  /* the last 1..7 bytes, little-endian into one word (memcpy into a zeroed
   * uint64_t, as C does), without a byte loop: from the 8 bytes that end
   * the string when it has 8 (shifted down), else from the 8 inline bytes
   * at s + 4, which lie inside the 16-byte sl_str (masked) */
  LLVMPositionBuilderAtEnd(g->b, tail);
  LLVMValueRef rest = LLVMBuildSub(g->b, len64, i, "rest");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, rest, c64(g, 0), ""),
                  done, tbody);
  LLVMPositionBuilderAtEnd(g->b, tbody);
  LLVMValueRef longer = LLVMBuildICmp(g->b, LLVMIntUGE, len64, c64(g, 8), "");
  LLVMValueRef at = LLVMBuildSelect(
      g->b, longer, LLVMBuildSub(g->b, len64, c64(g, 8), ""), c64(g, 0), "");
  LLVMValueRef w8 = jit_load(
      g, g->i64,
      LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, data, &at, 1, ""),
                       LLVMPointerType(g->i64, 0), ""),
      1);
  LLVMValueRef bits = LLVMBuildMul(g->b, rest, c64(g, 8), "");
  LLVMValueRef from_end =
      LLVMBuildLShr(g->b, w8, LLVMBuildSub(g->b, c64(g, 64), bits, ""), "");
  LLVMValueRef masked =
      LLVMBuildAnd(g->b, w8,
                   LLVMBuildSub(g->b, LLVMBuildShl(g->b, c64(g, 1), bits, ""),
                                c64(g, 1), ""),
                   "");
  LLVMValueRef wt = LLVMBuildSelect(g->b, longer, from_end, masked, "");
  LLVMValueRef ht =
      LLVMBuildMul(g->b, LLVMBuildXor(g->b, h, wt, ""), c64(g, mul), "");
  LLVMBuildBr(g->b, done);

  LLVMPositionBuilderAtEnd(g->b, done);
  return jit_mix64(g, jit_phi2(g, g->i64, h, tail, ht, tbody, "hf"));
}

LLVMValueRef jit_str_eq(jit_cg *g, LLVMValueRef a, LLVMValueRef b) {
  /* sl_str_equal: length and prefix in one 8-byte compare, then the other
   * 8 inline bytes, or the long bytes */
  LLVMValueRef head = LLVMBuildICmp(g->b, LLVMIntEQ, ld(g, g->i64, a, 0, 4),
                                    ld(g, g->i64, b, 0, 4), "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef more = blk(g, "se.more"), lng = blk(g, "se.long"),
                    done = blk(g, "se.done");
  LLVMBuildCondBr(g->b, head, more, done);
  LLVMPositionBuilderAtEnd(g->b, more);
  LLVMValueRef len = ld(g, g->i32, a, 0, 4);
  LLVMValueRef inl = LLVMBuildICmp(g->b, LLVMIntULE, len,
                                   LLVMConstInt(g->i32, SL_STR_INLINE, 0), "");
  LLVMValueRef rest_eq = LLVMBuildICmp(g->b, LLVMIntEQ, ld(g, g->i64, a, 8, 4),
                                       ld(g, g->i64, b, 8, 4), "");
  LLVMBuildCondBr(g->b, inl, done, lng);
  /* long strings (more than 12 bytes): 8 bytes at a time, then the last
   * 8 (overlapping), inline: a memcmp call per hit was a tenth of YSB */
  LLVMPositionBuilderAtEnd(g->b, lng);
  LLVMValueRef pa = ld(g, g->ptr, a, 8, 8), pb = ld(g, g->ptr, b, 8, 8);
  LLVMValueRef len64 = LLVMBuildZExt(g->b, len, g->i64, "");
  LLVMValueRef last = LLVMBuildSub(g->b, len64, c64(g, 8), "");
  LLVMBasicBlockRef loop = blk(g, "se.loop"), word = blk(g, "se.word"),
                    tail = blk(g, "se.tail");
  LLVMBuildBr(g->b, loop);
  LLVMPositionBuilderAtEnd(g->b, loop);
  LLVMValueRef i = LLVMBuildPhi(g->b, g->i64, "i");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, i, last, ""), word,
                  tail);
  LLVMPositionBuilderAtEnd(g->b, word);
  LLVMValueRef wa =
      jit_load(g, g->i64,
               LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, pa, &i, 1, ""),
                                LLVMPointerType(g->i64, 0), ""),
               1);
  LLVMValueRef wb =
      jit_load(g, g->i64,
               LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, pb, &i, 1, ""),
                                LLVMPointerType(g->i64, 0), ""),
               1);
  LLVMValueRef i8 = LLVMBuildAdd(g->b, i, c64(g, 8), "");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, wa, wb, ""), loop, done);
  LLVMValueRef iin[2] = {c64(g, 0), i8};
  LLVMBasicBlockRef ifrom[2] = {lng, word};
  LLVMAddIncoming(i, iin, ifrom, 2);
  LLVMPositionBuilderAtEnd(g->b, tail);
  LLVMValueRef ta = jit_load(
      g, g->i64,
      LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, pa, &last, 1, ""),
                       LLVMPointerType(g->i64, 0), ""),
      1);
  LLVMValueRef tb = jit_load(
      g, g->i64,
      LLVMBuildBitCast(g->b, LLVMBuildGEP2(g->b, g->i8, pb, &last, 1, ""),
                       LLVMPointerType(g->i64, 0), ""),
      1);
  LLVMValueRef long_eq = LLVMBuildICmp(g->b, LLVMIntEQ, ta, tb, "");
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef r = LLVMBuildPhi(g->b, g->i1, "str_eq");
  LLVMValueRef in[4] = {LLVMConstInt(g->i1, 0, 0), rest_eq,
                        LLVMConstInt(g->i1, 0, 0), long_eq};
  LLVMBasicBlockRef bin[4] = {from, more, word, tail};
  LLVMAddIncoming(r, in, bin, 4);
  return r;
}

LLVMValueRef jit_key_hash(jit_cg *g, const sl_row_layout *kl,
                          LLVMValueRef key) {
  LLVMValueRef h = LLVMBuildXor(
      g->b, c64(g, 0x9e3779b97f4a7c15ULL),
      LLVMBuildZExt(g->b, ld(g, g->i8, key, 0, 1), g->i64, ""), "");
  for (int i = 0; i < kl->nfields; i++) {
    const sl_field *kf = &kl->fields[i];
    LLVMValueRef nb = ld(g, g->i8, key, (uint64_t)i >> 3, 1);
    LLVMValueRef nul = LLVMBuildICmp(
        g->b, LLVMIntNE,
        LLVMBuildAnd(g->b, nb, LLVMConstInt(g->i8, 1u << (i & 7), 0), ""),
        LLVMConstInt(g->i8, 0, 0), "");
    LLVMValueRef x;
    if (kf->ptype == SL_P_STR) {
      /* a NULL string field is zeroed: hashing it is harmless, and the
       * select below drops the result */
      x = jit_str_hash(g, jit_at(g, key, kf->offset, g->i8));
    } else {
      LLVMTypeRef it = jit_int_of_size(g, kf->size);
      x = ld(g, it, key, kf->offset, 1);
      if (it != g->i64)
        x = LLVMBuildZExt(g->b, x, g->i64, "");
    }
    LLVMValueRef m = jit_mix64(g, LLVMBuildXor(g->b, h, x, ""));
    h = LLVMBuildSelect(g->b, nul, h, m, "");
  }
  return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, h, c64(g, 0), ""),
                         c64(g, 1), h, "hash");
}

LLVMValueRef jit_key_fields_equal(jit_cg *g, const sl_row_layout *kl,
                                  LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef eq = LLVMConstInt(g->i1, 1, 0);
  for (int i = 0; i < kl->nfields; i++) {
    const sl_field *kf = &kl->fields[i];
    LLVMValueRef same;
    if (kf->ptype == SL_P_STR) {
      /* only when everything before is equal: the string compare has
       * branches (and a call for long strings) of its own */
      LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
      LLVMBasicBlockRef cmp = blk(g, "ke.str"), done = blk(g, "ke.done");
      LLVMBuildCondBr(g->b, eq, cmp, done);
      LLVMPositionBuilderAtEnd(g->b, cmp);
      LLVMValueRef s = jit_str_eq(g, jit_at(g, a, kf->offset, g->i8),
                                  jit_at(g, b, kf->offset, g->i8));
      LLVMBasicBlockRef cmp_end = LLVMGetInsertBlock(g->b);
      LLVMBuildBr(g->b, done);
      LLVMPositionBuilderAtEnd(g->b, done);
      same = LLVMBuildPhi(g->b, g->i1, "");
      LLVMValueRef in[2] = {LLVMConstInt(g->i1, 0, 0), s};
      LLVMBasicBlockRef bin[2] = {from, cmp_end};
      LLVMAddIncoming(same, in, bin, 2);
      eq = same;
      continue;
    }
    LLVMTypeRef it = jit_int_of_size(g, kf->size);
    same = LLVMBuildICmp(g->b, LLVMIntEQ, ld(g, it, a, kf->offset, 1),
                         ld(g, it, b, kf->offset, 1), "");
    eq = LLVMBuildAnd(g->b, eq, same, "");
  }
  return eq;
}
