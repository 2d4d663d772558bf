#include "moeval/testbed/matrices.h"

#include <stdexcept>

#include "named_matrices.h"

namespace moeval::testbed {
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

// Every kernel runs every case it supports (the others are reported SKIPPED with the reason).
std::vector<MoeProblem> default_matrix() {
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

// Small enough for a CPU test suite of a package: E = 8, M = 16, top-2, H = 256, I = 128.
std::vector<MoeProblem> smoke_matrix() {
  std::vector<MoeProblem> out;
  const auto small = [](ProblemKind kind, QuantScheme scheme, Tier tier) {
    MoeProblem p = gemm_case(kind, scheme, tier);
    p.experts = 8;
    p.tokens = 16;
    p.topk = 2;
    p.hidden = 256;
    p.inter = 128;
    return p;
  };
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
        out.push_back(small(kind, {type, has_zero_point(type) ? 32 : 128, false, true, act}, Tier::bounded));
      }
    }
  }
  for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    out.push_back(small(kind, {WeightType::uint4b8, 64, false, true, DType::bf16}, Tier::exact));
  }
  // Expert parallelism: half the experts live on another rank (their rows are zeros).
  MoeProblem ep = small(ProblemKind::gemm2, {WeightType::uint4b8, 128, false, true, DType::f16}, Tier::bounded);
  for (std::int32_t e = 0; e < ep.experts; ++e) ep.expert_map.push_back(e % 2 == 0 ? e / 2 : -1);
  out.push_back(ep);
  return out;
}

}  // namespace

std::vector<std::string> matrix_names() { return {"quick", "standard", "full", "default", "smoke"}; }

std::vector<MatrixEntry> matrix_entries(std::string_view name) {
  std::vector<MatrixEntry> out;
  if (name == "default") {
    for (const MoeProblem& p : default_matrix()) {
      out.push_back({p.experts == 512 ? "experts-512" : p.k_shards > 1 ? "k-shard" : "small", p});
    }
    return out;
  }
  if (name == "smoke") {
    for (const MoeProblem& p : smoke_matrix()) out.push_back({p.expert_map.empty() ? "smoke" : "expert-parallel", p});
    return out;
  }
  if (name == "quick" || name == "standard" || name == "full") return named_matrix_entries(name);
  std::string known;
  for (const std::string& n : matrix_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("matrix '" + std::string(name) + "' is unknown; known: " + known);
}

std::vector<MoeProblem> gemm_matrix(std::string_view name) {
  std::vector<MoeProblem> out;
  for (const MatrixEntry& e : matrix_entries(name)) {
    if (!e.layer) out.push_back(e.problem);
  }
  return out;
}

std::vector<std::string> gemm_matrix_names() { return matrix_names(); }

}  // namespace moeval::testbed
