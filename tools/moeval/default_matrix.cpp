#include "default_matrix.h"

#include "moeval/testbed/matrices.h"

namespace moeval::cli {

// The matrix lives in the testbed (a library function), so external kernels' test suites and the
// Python package run the same cases.
std::vector<MoeProblem> gemm_matrix() { return testbed::gemm_matrix("default"); }

std::vector<LayerCheck> layer_matrix() {
  std::vector<LayerCheck> out;
  auto layer = [&out](QuantScheme scheme, kernels::MoeWeightFormat format) {
    MoeProblem p;
    p.experts = 32;
    p.tokens = 8;
    p.topk = 8;
    p.hidden = 512;
    p.inter = 128;
    p.scheme = scheme;
    p.seed = 12;
    const bool marlin = format == kernels::MoeWeightFormat::marlin;
    out.push_back({p, format, marlin ? "moe_forward[marlin]" : "moe_forward[wna16]"});
  };
  // Both formats, every type × dtype at group 128: with I = 128, w2 holds ONE group (Marlin's
  // channelwise scale permutation) while w13 holds four (grouped) — the wrong-size_k bug class.
  for (auto format : {kernels::MoeWeightFormat::wna16, kernels::MoeWeightFormat::marlin}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
      for (DType act : {DType::f16, DType::bf16}) layer({type, 128, false, true, act}, format);
    }
  }
  // Marlin act-order layers, is_k_full and not, both dtypes (group 64: two groups in I = 128).
  for (bool k_full : {true, false}) {
    for (DType act : {DType::f16, DType::bf16}) layer({WeightType::uint4b8, 64, true, k_full, act}, kernels::MoeWeightFormat::marlin);
  }
  // A row-parallel rank of a K-sharded layer: w2 holds rank 0's half of the global I = 256.
  layer({WeightType::uint4b8, 64, true, false, DType::bf16}, kernels::MoeWeightFormat::marlin);
  out.back().problem.k_shards = 2;
  return out;
}

}  // namespace moeval::cli
