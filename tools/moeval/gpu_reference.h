// The GPU reference of a GEMM case, for the sizes the CPU reference cannot afford
// (reference_choice.h): y from reference/cublas (the case's own dequantized 16-bit weights, one
// cublasGemmEx per expert with fp32 accumulation), and the statistic S = sqrt(Σ_k (a_k·w_k·ω)²) of
// the bounded tier from an fp32 cuBLAS GEMM of the squared operands, both on `device`.
//
// The bound. The comparator's bound (tolerance/bound.h) assumes an exact y_ref:
//   |y − y_ref| ≤ u_out·|y_ref| + (1 + u_out)·c·u_acc·√K·S.
// The cuBLAS y carries its own fp32 accumulation error, of the same statistical size as the
// kernel's: |y_cublas − y_exact| ≤ c·u_acc·√K·S under the same model. By the triangle inequality
// the kernel is then within u_out·|y_cublas| + 2·(1 + u_out)·c·u_acc·√K·S of y_cublas (the
// u_out·c·u_acc·√K·S moved from the first term is inside the doubled second one). The output says
// so by its reduction length: 4K, since √(4K) = 2·√K; nothing else of the bound changes, and no
// fixed tolerance enters. (cuBLAS multiplies the routing weight into its fp32 sum once more: an
// error of u_acc·|y|, 2^-16 of the output term u_out·|y| in bf16, inside the model's slack.)
//
// S² is a sum of K non-negative fp32 products of squares (the squares of 16-bit values are exact
// in fp32, each product is rounded once): its relative error is below K·2^-24, so S² is enlarged
// by 2K·2^-24 to never under-state the bound (barring products below fp32's normal range, ~1e-38,
// which realistic activations and weights do not reach). cuBLAS runs it with
// CUBLAS_COMPUTE_32F_PEDANTIC (no TF32). A non-finite S (an overflow of fp32) is an error, never an
// infinite bound that would pass anything.
//
// Only the default numerics contract is modelled (reference/cublas's recipe is fl16((u − z)·s) and
// one output rounding): the caller must not judge a kernel of another contract with it.
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/reference_output.h"

namespace moeval::cli {

// Throws std::runtime_error (CUDA or cuBLAS failure, non-finite S) or std::invalid_argument (a
// case reference/cublas rejects).
reference::ReferenceOutput gpu_reference_gemm(const GemmCase& gemm_case, int device);

// S for every output element (the second half of the above), [rows][N] in fp64; zero on rows
// without a local expert.
std::vector<double> gpu_statistic_s(const GemmCase& gemm_case, int device);

// The host half: the reference output of `gemm_case` from an fp32-accumulated y [rows][N] and its
// S (y16 = y rounded once, reduction length 4K, the default contract). No device needed, so the
// bound's composition is tested on the CPU.
reference::ReferenceOutput reference_from_fp32_sums(const GemmCase& gemm_case, const std::vector<float>& y,
                                                    std::vector<double> s);

}  // namespace moeval::cli
