// fp64 reference of the whole fused MoE layer, stage by stage (align-free).
//
// Rounding points — the kernels (moe_ops) store exactly these 16-bit intermediates:
//   1. GEMM1 (w13): g1[t, :] = round16(Σ_k x[t / topk, k] · W13[e_t][k, :])      [M·topk][2I]
//      (fp32 accumulation in the kernel; no routing weight here)
//   2. silu_and_mul on the 16-bit g1: act[t, j] = round16(silu(g1[t, j]) · g1[t, I + j])
//                                                                               [M·topk][I]
//   3. GEMM2 (w2) on the 16-bit act, weight multiplied into the unrounded sum:
//      g2[t, :] = round16(topk_weights[t] · Σ_k act[t, k] · W2[e_t][k, :])     [M·topk][H]
//   4. combine: out[m, :] = round16(Σ_j g2[m·topk + j, :])                        [M][H]
// round16 = round to nearest even in the activation dtype, once, from the exact (fp64) value.
// Rows routed to a non-local expert are zero at every stage.
//
// Each later stage has its own entry point taking a Matrix16, so a check can feed it the KERNEL's
// intermediate and compare stage-wise; layer_reference() chains the reference's own y16.
#pragma once

#include "moeval/fixtures/cases.h"
#include "moeval/reference/matrix16.h"
#include "moeval/reference/reference_output.h"

namespace moeval::reference {

struct LayerReference {
  ReferenceOutput gemm1;    // [M·topk][2I]
  ReferenceOutput act;      // [M·topk][I]
  ReferenceOutput gemm2;    // [M·topk][H]
  ReferenceOutput out;      // [M][H]
};

ReferenceOutput layer_gemm1(const LayerCase& layer);
// `act` is [M·topk][I]: the reference's act.y16 or the kernel's intermediate.
ReferenceOutput layer_gemm2(const LayerCase& layer, const Matrix16& act);
// silu_and_mul and combine: see silu_and_mul_reference.h and combine_reference.h.

LayerReference layer_reference(const LayerCase& layer);

}  // namespace moeval::reference
