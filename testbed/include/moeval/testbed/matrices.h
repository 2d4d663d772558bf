// Named matrices of GEMM problems: what `moeval check`, the CMake function moeval_add_kernel_tests
// and the Python package's `moeval_case` fixture run a kernel over. Pure host code (no device).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "moeval/fixtures/problem.h"

namespace moeval::testbed {

// "default": the core of `moeval check --matrix standard` (which adds the ends of each axis and the
//   layer, tools/moeval/matrices.cpp) and the matrix of `moeval sweep` — every weight type × dtype ×
//   group size × GEMM × tier at a small shape, Marlin's act-order × is_k_full (a real K shard
//   included) × dtype, and E = 512.
// "smoke": a few seconds on a CPU — every weight type × dtype on both GEMMs, bounded tier at group
//   128 (zero-point types at group 32), plus one exact-tier case per GEMM and an expert-parallel map.
// Throws std::invalid_argument naming the matrix and the known ones.
std::vector<MoeProblem> gemm_matrix(std::string_view name);
std::vector<std::string> gemm_matrix_names();

}  // namespace moeval::testbed
