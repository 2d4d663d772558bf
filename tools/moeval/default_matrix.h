// The default check matrix shared by `moeval check` and `moeval sweep`: every weight type × dtype
// × group size × GEMM × tier at a small shape, Marlin's act-order × is_k_full (a real K shard
// included) × dtype cases, many experts (E = 512), and one whole-layer case per type × dtype.
#pragma once

#include <vector>

#include "moeval/fixtures/problem.h"

namespace moeval::cli {

std::vector<MoeProblem> gemm_matrix();
std::vector<MoeProblem> layer_matrix();

}  // namespace moeval::cli
