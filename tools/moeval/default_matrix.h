// The default check matrix shared by `moeval check` and `moeval sweep`: every weight type × dtype
// × group size × GEMM × tier at a small shape, Marlin's act-order × is_k_full (a real K shard
// included) × dtype cases, many experts (E = 512), and whole-layer cases per type × dtype on each
// weight format (Marlin also with act-order and a K-sharded rank).
#pragma once

#include <string>
#include <vector>

#include "moeval/fixtures/problem.h"
#include "moeval/kernels/moe_forward.h"

namespace moeval::cli {

// One whole-layer check: the problem, and the weight format moe_forward and the staged GEMMs use.
struct LayerCheck {
  MoeProblem problem;
  kernels::MoeWeightFormat format = kernels::MoeWeightFormat::wna16;
  std::string label;  // "moe_forward[wna16]" / "moe_forward[marlin]", for reports
};

std::vector<MoeProblem> gemm_matrix();
std::vector<LayerCheck> layer_matrix();

}  // namespace moeval::cli
