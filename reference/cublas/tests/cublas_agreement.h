// Shared by the single- and multi-GPU tests: the cuBLAS path against the CPU reference.
#pragma once

#include "moeval/fixtures/cases.h"

namespace moeval::testing {

// Small GEMM problems of the agreement matrix: E = 8 (H 256, I 128, 16 tokens × top-4) or
// E = 256 (H 128, I 128, 64 tokens × top-8).
MoeProblem agreement_problem(ProblemKind kind, QuantScheme scheme, std::int64_t experts);

// Runs the case through the cuBLAS path on `device`; expects its dequant to equal the fixtures'
// bit for bit and its 16-bit output to pass the bounded comparator against the CPU reference.
// Returns the max ratio.
double expect_cublas_agrees_with_cpu(const GemmCase& c, int device);

}  // namespace moeval::testing
