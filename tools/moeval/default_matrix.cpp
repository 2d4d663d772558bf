#include "default_matrix.h"

namespace moeval::cli {

// The default GEMM matrix: every weight type × dtype × group size × GEMM × tier at a small shape.
std::vector<MoeProblem> gemm_matrix() {
  std::vector<MoeProblem> out;
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (int group : {kChannelwise, 32, 64, 128}) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          for (Tier tier : {Tier::exact, Tier::bounded}) {
            MoeProblem p;
            p.kind = kind;
            p.experts = 64;
            p.tokens = 24;
            p.topk = 4;
            p.hidden = 512;
            p.inter = 256;
            p.scheme = {type, group, false, true, act};
            p.tier = tier;
            p.seed = 11;
            out.push_back(p);
          }
        }
      }
    }
  }
  return out;
}

std::vector<MoeProblem> layer_matrix() {
  std::vector<MoeProblem> out;
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (DType act : {DType::f16, DType::bf16}) {
      MoeProblem p;
      p.experts = 128;
      p.tokens = 8;
      p.topk = 8;
      p.hidden = 512;
      p.inter = 128;
      p.scheme = {type, 128, false, true, act};
      p.seed = 12;
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace moeval::cli
