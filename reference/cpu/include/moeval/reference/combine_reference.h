// fp64 reference of the top-k combine on the 16-bit GEMM2 output [M·topk][H], whose rows already
// carry their routing weight:
//   y[m, h] = Σ_j x[m·topk + j, h]   (fp64),  y16 = round_to_bits(y, dtype),
//   S = sqrt(Σ_j x²),  reduction_length = topk.
#pragma once

#include <cstdint>

#include "moeval/reference/matrix16.h"
#include "moeval/reference/reference_output.h"

namespace moeval::reference {

// Throws std::invalid_argument when topk < 1 or the row count is not a multiple of topk.
ReferenceOutput reference_combine(const Matrix16& gemm2_out, std::int64_t topk);

}  // namespace moeval::reference
