#include "default_matrix.h"

namespace moeval::cli {
namespace {

MoeProblem gemm_case(ProblemKind kind, QuantScheme scheme, Tier tier) {
  MoeProblem p;
  p.kind = kind;
  p.experts = 16;  // many experts have their own cases (E = 256, 512); 16 keeps the case cheap to build
  p.tokens = 24;
  p.topk = 4;
  p.hidden = 512;
  p.inter = 256;
  p.scheme = scheme;
  p.tier = tier;
  p.seed = 11;
  return p;
}

}  // namespace

// Every kernel runs every case it supports (the others are reported SKIPPED with the reason).
std::vector<MoeProblem> gemm_matrix() {
  std::vector<MoeProblem> out;
  // Every weight type × dtype × group size × GEMM × tier at a small shape (zero points included).
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (int group : {kChannelwise, 32, 64, 128}) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          for (Tier tier : {Tier::exact, Tier::bounded}) out.push_back(gemm_case(kind, {type, group, false, true, act}, tier));
        }
      }
    }
  }
  // Act-order (Marlin only): both symmetric types × is_k_full (the grouped path; the per-row g_idx
  // path on the whole K; and a real K shard, rank 1 of 2, whose rows find their global groups through
  // g_idx) × dtype × GEMM × tier. K = 512 / 256 hold 4 / 2 groups of 128 (a shard: 8 / 4 global).
  struct KPath {
    bool k_full;
    std::int64_t shards;
  };
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (KPath path : {KPath{true, 1}, KPath{false, 1}, KPath{false, 2}}) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          for (Tier tier : {Tier::exact, Tier::bounded}) {
            MoeProblem p = gemm_case(kind, {type, 128, true, path.k_full, act}, tier);
            p.k_shards = path.shards;
            p.k_shard_rank = path.shards - 1;
            out.push_back(p);
          }
        }
      }
    }
  }
  // E = 512 (the moe_align and expert-indexing regime of the largest models): plain, zero points,
  // act-order without is_k_full; decode-like M with topk 8, H = I = 128 so that 512 experts'
  // weights stay cheap to build.
  for (QuantScheme scheme : {QuantScheme{WeightType::uint4b8, 128, false, true, DType::bf16},
                             QuantScheme{WeightType::uint4, 32, false, true, DType::f16},
                             QuantScheme{WeightType::uint4b8, 32, true, false, DType::bf16}}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      MoeProblem p = gemm_case(kind, scheme, Tier::exact);
      p.experts = 512;
      p.tokens = 16;
      p.topk = 8;
      p.hidden = 128;
      p.inter = 128;
      out.push_back(p);
    }
  }
  return out;
}

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
