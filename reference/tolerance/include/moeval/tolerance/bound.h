// The per-element error bound of the bounded tier (docs/tolerance.md, "Bounded tier"):
//
//   |y − y_ref| ≤ u_out·|y_ref| + η_out/2 + (1 + u_out)·c·u_acc·√K·S,   S = sqrt(Σ_k t_k²)
//
// η_out/2 is half the smallest subnormal of the output type (2^-25 fp16, 2^-134 bf16): the
// standard model with gradual underflow, fl(x) = x(1 + δ) + ε with |ε| ≤ η/2, because below the
// normal range (6.1e-5 in fp16) the spacing of representable values stops shrinking. It matters
// only for tiny outputs (seen on the H200: silu_and_mul values around 1e-5 to 1e-8 in fp16 were
// correctly rounded yet outside u_out·|y|); it is far below any bug the bound must catch.
//
// Why this form. The kernel computes y' = Σ_k t_k in fp32 (products of 16-bit operands are exact)
// and returns y = fl16(y'). Then |y − y_ref| ≤ |fl16(y') − y'| + |y' − y_ref|
// ≤ u_out·|y'| + |y' − y_ref| ≤ u_out·|y_ref| + (1 + u_out)·|y' − y_ref|: the first term is the one
// output rounding, the second the accumulation error. Recursive fp32 summation (any order or
// tiling) makes an error Σ_k δ_k·s_k with |δ_k| ≤ u_acc and s_k the partial sums. Modelling the δ_k
// as independent and zero-mean (Higham & Mary, "A new approach to probabilistic rounding error
// analysis", SISC 2019) its standard deviation is at most u_acc·√K·max_k|s_k|/√3. Two regimes:
//   - cancelling terms (random signs, the realistic case): max_k|s_k| is a few S, so the error is
//     a small multiple of u_acc·√K·S — the second term, with c = 12 as the safety factor;
//   - drifting terms (|y| ≈ Σ|t_k|): max_k|s_k| ≈ |y| and the error is ~u_acc·√K·|y|, which stays
//     far below the first term u_out·|y| for any K < 2^30 (u_acc·√K ≤ 2^-9 < u_out).
// c = 12 keeps a correct fp32 kernel well inside the bound while the bugs it must catch stay out:
//   - calibration on an H200 (docs/tolerance.md): cuBLAS with fp32 accumulation, K ∈ {128, 2048, 7168},
//     int4 g128 weights: max ratio 0.90–0.99, never above 1 (output rounding dominates);
//   - one wrong (group, column) scale, one code off by one, 16-bit accumulation: ratios 3.8 to 10^3.
// u_out = 2^-8 (bf16) or 2^-11 (fp16) is the unit roundoff of the output type; u_acc = 2^-24
// (fp32 accumulation). Weight rounding is no error term: the reference multiplies the kernel's
// exact 16-bit dequantized weights.
#pragma once

#include <cstdint>

#include "moeval/fixtures/half.h"
#include "moeval/reference/numerics_contract.h"

namespace moeval::tolerance {

struct BoundModel {
  double c = 12.0;              // statistical constant (see above)
  double u_acc = 0x1p-24;       // unit roundoff of the accumulator (fp32)
};

// Other numerics contracts (reference/numerics_contract.h, RoundingModel), same derivation:
//   - two output roundings (routing weight ω multiplied after the GEMM output was rounded:
//     z = fl16(y'), p = fl32(z·ω), y = fl16(p)). With q = u_out + u_acc + u_out·u_acc,
//       |y − ω·y_pre| ≤ (u_out + q(1 + u_out))·|y_ref| + (2 + q)·η_out/2
//                      + (1 + u_out + q(1 + u_out))·c·u_acc·√K·S
//     (y_ref = ω·y_pre, S carries |ω|; the η term assumes |ω| ≤ 1, as routing weights are). The
//     output term is about twice the one-rounding term: a kernel that rounds twice while declaring
//     one rounding reaches ratios up to ~2, and is caught; declaring it, it passes.
//   - inexact products (w kept in fp32: a·w has up to 31 significant bits): each product is rounded
//     once more in fp32 (or fused into the add); that error Σ_k ε_k·t_k has standard deviation at
//     most u_acc·S/√3, so K is replaced by K + 1 under the square root.

// The bound for one element: y_ref and s from the reference, k its reduction length, `out` the
// output dtype, `rounding` the contract's rounding points (default: one rounding, exact products).
// Throws std::invalid_argument for an unsupported dtype, k < 1, or output_roundings not 1 or 2.
double element_bound(double y_ref, double s, std::int64_t k, DType out, const BoundModel& model = {},
                     const reference::RoundingModel& rounding = {});

}  // namespace moeval::tolerance
