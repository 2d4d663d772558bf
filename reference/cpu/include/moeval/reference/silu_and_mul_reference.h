// fp64 reference of silu_and_mul on the 16-bit GEMM1 output [T][2I] (gate columns first):
//   y[t, j] = silu(g) · u,  g = x[t, j], u = x[t, I + j],  silu(z) = z / (1 + exp(-z))
//   y16 = round_to_bits(y, dtype)   (one rounding; the kernel computes in fp32 and rounds once)
// reduction_length = 1 and S = |y|: the bound then allows u_out·|y| for the output rounding plus
// c·2^-24·|y| for the kernel's fp32 exp/divide (a few fp32 ulps).
#pragma once

#include "moeval/reference/matrix16.h"
#include "moeval/reference/reference_output.h"

namespace moeval::reference {

// Throws std::invalid_argument when x has an odd number of columns.
ReferenceOutput reference_silu_and_mul(const Matrix16& gemm1_out);

}  // namespace moeval::reference
