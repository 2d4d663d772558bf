// fp64 reference of one MoE GEMM over routed rows (the moe_wna16 / Marlin MoE contract).
//
// For every routed row t with local expert e:
//   y[t, n] = Σ_k a[t / a_row_divisor, k] · W16[e][k][n]            (fp64 sum of exact products)
//   y[t, n] ·= topk_weights[t]                      when mul_topk_weights (fp64, before rounding)
//   y16[t, n] = round_to_bits(y[t, n], act)                                  (the one rounding)
//   S[t, n] = sqrt(Σ_k (a_k · W16[e][k][n] · weight)²)          (weight = 1 without mul)
// W16 is QuantizedWeights::dequant, the kernel's exact 16-bit operand, so weight rounding is not
// error. Rows that are not routed to a local expert are exactly zero (y = S = 0).
// Each product of two 16-bit values is exact in fp64; the sum is fp64 (relative error ~K·2^-53
// of Σ|a·w|, far below any 16-bit output's resolution).
//
// A numerics contract other than the default (numerics_contract.h) changes exactly two things:
//   - W16 becomes the recipe's weight (fixtures' dequant_value from codes, zeros, scales, g_idx;
//     sub_then_mul_fp32: the exact fp32 value (u − z)·s, products still exact in fp64);
//   - with mul_topk_weights and RoutingWeightPoint::after_output_rounding,
//     y16 = round16(round16(Σ_k a·W) · weight) (two roundings), while y = weight · Σ_k a·W stays
//     the exact value the bound is centred on.
#pragma once

#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/weights.h"
#include "moeval/reference/matrix16.h"
#include "moeval/reference/numerics_contract.h"
#include "moeval/reference/reference_output.h"
#include "moeval/reference/routed_rows.h"

namespace moeval::reference {

struct GemmOperands {
  Matrix16 a;                       // [rows of A][K]
  const QuantizedWeights& w;        // [E_local][K][N]; its dequant is multiplied
  const RoutedRows& routed;
  bool mul_topk_weights = false;
  NumericsContract contract{};
};

// Output is [routed.output_rows()][N] in w.scheme.act with reduction_length K.
// Throws std::invalid_argument on shape or dtype mismatches (naming both sides).
ReferenceOutput reference_gemm(const GemmOperands& operands);

// Convenience for a fixtures case: routes with from_topk(case.routing, case.problem, case.a_row_divisor).
ReferenceOutput reference_gemm(const GemmCase& gemm_case, const NumericsContract& contract = {});

}  // namespace moeval::reference
