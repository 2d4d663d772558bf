// The named matrices of `moeval check` and `moeval sweep` (quick, standard, full): their problems
// with shape labels and, for layers, the weight format. Built here, in the testbed's one registry
// of matrix names (matrices.h), so the CLI, the CMake function and the Python package share them.
#include <stdexcept>
#include <utility>

#include "moeval/fixtures/errors.h"
#include "moeval/kernels/moe_gemm_types.h"
#include "moeval/testbed/matrices.h"
#include "named_matrices.h"

namespace moeval::testbed {
namespace {

using kernels::MoeWeightFormat;

struct Shape {
  std::int64_t experts, tokens, topk, hidden, inter;
};

MoeProblem make(ProblemKind kind, Shape s, QuantScheme scheme, Tier tier, std::uint64_t seed) {
  MoeProblem p;
  p.kind = kind;
  p.experts = s.experts;
  p.tokens = s.tokens;
  p.topk = s.topk;
  p.hidden = s.hidden;
  p.inter = s.inter;
  p.scheme = scheme;
  p.tier = tier;
  p.seed = seed;
  return p;
}

// Expert parallelism: every `stride`-th global expert lives on this rank (local ids in order), the
// others are remote (-1): the rows routed to them must come out as zeros.
void expert_parallel(MoeProblem& p, std::int64_t stride) {
  p.expert_map.assign(std::size_t(p.experts), -1);
  for (std::int64_t e = 0, local = 0; e < p.experts; e += stride) p.expert_map[std::size_t(e)] = std::int32_t(local++);
}

constexpr QuantScheme scheme(WeightType type, int group, DType act) { return {type, group, false, true, act}; }
constexpr QuantScheme act_order(WeightType type, int group, bool k_full, DType act) {
  return {type, group, true, k_full, act};
}

bool exact_tier_possible(const MoeProblem& p) {
  try {
    p.validate();
    return true;
  } catch (const InvalidProblem&) {
    return false;
  }
}

void add_gemms(std::vector<MatrixEntry>& out, const std::string& shape, Shape s, QuantScheme q, Tier tier,
               std::uint64_t seed) {
  for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) out.push_back({shape, make(kind, s, q, tier, seed)});
}

void add_layer(std::vector<MatrixEntry>& out, const std::string& shape, const MoeProblem& p, MoeWeightFormat format) {
  out.push_back({shape, p, true, format == MoeWeightFormat::marlin});
}

const auto kAllTypes = {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8};
const auto kAllGroups = {kChannelwise, 32, 64, 128};
const auto kDtypes = {DType::f16, DType::bf16};
const auto kFormats = {MoeWeightFormat::wna16, MoeWeightFormat::marlin};

// Real MoE models: global experts, topk, H and I (tokens 0: each use sets them), and the stride of
// the expert-parallel rank the CPU reference can afford.
struct Model {
  const char* name;
  Shape shape;
  std::int64_t ep_stride;
};

std::vector<Model> real_size_models() {
  return {Model{"deepseek-v3", {256, 0, 8, 7168, 2048}, 32}, Model{"qwen3-30b-a3b", {128, 0, 8, 2048, 768}, 16},
          Model{"mixtral-8x7b", {8, 0, 2, 4096, 14336}, 4}};
}

std::vector<MatrixEntry> quick() {
  std::vector<MatrixEntry> out;
  const Shape small{16, 8, 2, 256, 128};
  out.push_back({"small", make(ProblemKind::gemm1, small, scheme(WeightType::uint4b8, 128, DType::bf16), Tier::exact, 21)});
  out.push_back({"small", make(ProblemKind::gemm2, small, scheme(WeightType::uint4, 32, DType::f16), Tier::bounded, 21)});
  out.push_back({"small", make(ProblemKind::gemm1, small, scheme(WeightType::uint8b128, kChannelwise, DType::f16), Tier::exact, 21)});
  out.push_back({"small", make(ProblemKind::gemm2, small, scheme(WeightType::uint8, 64, DType::bf16), Tier::bounded, 21)});
  out.push_back({"small", make(ProblemKind::gemm1, small, act_order(WeightType::uint4b8, 128, true, DType::bf16), Tier::bounded, 21)});
  MoeProblem shard = make(ProblemKind::gemm2, small, act_order(WeightType::uint4b8, 128, false, DType::f16), Tier::exact, 21);
  shard.k_shards = 2;
  shard.k_shard_rank = 1;
  out.push_back({"k-shard", shard});
  out.push_back({"single-token", make(ProblemKind::gemm1, {1, 1, 1, 256, 128}, scheme(WeightType::uint4b8, 128, DType::bf16), Tier::exact, 21)});
  MoeProblem ep = make(ProblemKind::gemm2, small, scheme(WeightType::uint4b8, 64, DType::f16), Tier::exact, 21);
  expert_parallel(ep, 4);
  out.push_back({"expert-parallel", ep});
  const MoeProblem layer = make(ProblemKind::layer, {8, 4, 2, 256, 128}, scheme(WeightType::uint4b8, 128, DType::bf16), Tier::bounded, 22);
  add_layer(out, "layer", layer, MoeWeightFormat::wna16);
  MoeProblem marlin_layer = layer;
  marlin_layer.scheme = scheme(WeightType::uint4, 128, DType::f16);
  add_layer(out, "layer", marlin_layer, MoeWeightFormat::marlin);
  return out;
}

// The core layer checks of the standard matrix: whole layers per type × dtype on each weight format
// (Marlin also with act-order and a K-sharded rank).
std::vector<std::pair<MoeProblem, MoeWeightFormat>> layer_matrix() {
  std::vector<std::pair<MoeProblem, MoeWeightFormat>> out;
  auto layer = [&out](QuantScheme scheme, MoeWeightFormat format) {
    MoeProblem p;
    p.experts = 32;
    p.tokens = 8;
    p.topk = 8;
    p.hidden = 512;
    p.inter = 128;
    p.scheme = scheme;
    p.seed = 12;
    out.push_back({p, format});
  };
  // Both formats, every type × dtype at group 128: with I = 128, w2 holds ONE group (Marlin's
  // channelwise scale permutation) while w13 holds four (grouped) — the wrong-size_k bug class.
  for (auto format : {MoeWeightFormat::wna16, MoeWeightFormat::marlin}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
      for (DType act : {DType::f16, DType::bf16}) layer({type, 128, false, true, act}, format);
    }
  }
  // Marlin act-order layers, is_k_full and not, both dtypes (group 64: two groups in I = 128).
  for (bool k_full : {true, false}) {
    for (DType act : {DType::f16, DType::bf16}) layer({WeightType::uint4b8, 64, true, k_full, act}, MoeWeightFormat::marlin);
  }
  // A row-parallel rank of a K-sharded layer: w2 holds rank 0's half of the global I = 256.
  layer({WeightType::uint4b8, 64, true, false, DType::bf16}, MoeWeightFormat::marlin);
  out.back().first.k_shards = 2;
  return out;
}

// Beyond the core matrix ("default", gemm_matrices.cpp): the ends of every axis the standard matrix
// promises.
std::vector<MatrixEntry> standard() {
  std::vector<MatrixEntry> out = matrix_entries("default");
  // Act-order at the smaller groups (the core has group 128): both symmetric types × is_k_full.
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (int group : {32, 64}) {
      for (bool k_full : {true, false}) {
        add_gemms(out, "act-order", {16, 24, 4, 256, 256}, act_order(type, group, k_full, DType::bf16), Tier::bounded, 38);
      }
    }
  }
  // E = 1, M = 1, topk = 1: the degenerate routing (one expert, one token).
  for (auto [q, tier] : {std::pair{scheme(WeightType::uint4b8, 128, DType::bf16), Tier::exact},
                         std::pair{scheme(WeightType::uint8, 32, DType::f16), Tier::bounded}}) {
    add_gemms(out, "single-token", {1, 1, 1, 256, 128}, q, tier, 31);
  }
  // Decode: one token over many experts.
  add_gemms(out, "decode", {64, 1, 8, 256, 128}, scheme(WeightType::uint4b8, 64, DType::f16), Tier::bounded, 32);
  // Prefill: M = 4096 (GEMM2 has 8192 routed rows).
  add_gemms(out, "prefill-4096", {8, 4096, 2, 256, 128}, scheme(WeightType::uint4b8, 128, DType::bf16), Tier::bounded, 33);
  add_gemms(out, "prefill-4096", {8, 4096, 2, 256, 128}, scheme(WeightType::uint4, 32, DType::f16), Tier::exact, 33);
  // E = 256 with skewed (zipf) routing.
  for (auto [q, tier] : {std::pair{scheme(WeightType::uint4, 32, DType::bf16), Tier::exact},
                         std::pair{scheme(WeightType::uint4b8, 128, DType::f16), Tier::bounded}}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      MoeProblem p = make(kind, {256, 64, 8, 256, 128}, q, tier, 34);
      p.routing.kind = RoutingKind::zipf;
      out.push_back({"experts-256", p});
    }
  }
  // Expert parallelism: a rank holding every 4th of 64 experts (plain, channelwise, act-order K shard).
  for (auto [q, tier] : {std::pair{scheme(WeightType::uint4b8, 128, DType::bf16), Tier::exact},
                         std::pair{scheme(WeightType::uint8b128, kChannelwise, DType::f16), Tier::bounded},
                         std::pair{act_order(WeightType::uint4b8, 64, false, DType::bf16), Tier::exact}}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      MoeProblem p = make(kind, {64, 32, 4, 256, 128}, q, tier, 35);
      expert_parallel(p, 4);
      out.push_back({"expert-parallel", p});
    }
  }
  // Every routing distribution.
  for (RoutingKind kind : {RoutingKind::uniform, RoutingKind::zipf, RoutingKind::all_to_one, RoutingKind::empty_experts,
                           RoutingKind::softmax_topk}) {
    MoeProblem p = make(ProblemKind::gemm2, {32, 48, 4, 256, 128}, scheme(WeightType::uint4b8, 128, DType::bf16),
                        Tier::bounded, 36);
    p.routing.kind = kind;
    if (kind == RoutingKind::empty_experts) p.routing.empty_experts = 24;
    if (kind == RoutingKind::softmax_topk) p.routing.renormalize = false;
    out.push_back({"routing", p});
  }
  for (const auto& [p, format] : layer_matrix()) add_layer(out, "layer", p, format);
  // Layer ends: a single token on a single expert, an expert-parallel rank, a 512-token prefill.
  for (MoeWeightFormat format : kFormats) {
    add_layer(out, "single-token", make(ProblemKind::layer, {1, 1, 1, 256, 128}, scheme(WeightType::uint4b8, 128, DType::bf16), Tier::bounded, 37), format);
    MoeProblem ep = make(ProblemKind::layer, {64, 16, 4, 256, 128}, scheme(WeightType::uint4, 64, DType::f16), Tier::bounded, 37);
    expert_parallel(ep, 4);
    add_layer(out, "expert-parallel", ep, format);
    add_layer(out, "prefill-512", make(ProblemKind::layer, {16, 512, 2, 256, 128}, scheme(WeightType::uint8b128, 128, DType::bf16), Tier::bounded, 37), format);
  }
  return out;
}

std::vector<MatrixEntry> full() {
  std::vector<MatrixEntry> out;
  // Every scheme (type × group × dtype, and act-order × is_k_full for the symmetric types) × GEMM ×
  // tier at a small, a decode and a prefill shape.
  std::vector<QuantScheme> schemes;
  for (WeightType type : kAllTypes) {
    for (int group : kAllGroups) {
      for (DType act : kDtypes) schemes.push_back(scheme(type, group, act));
    }
  }
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (int group : {32, 64, 128}) {
      for (bool k_full : {true, false}) {
        for (DType act : kDtypes) schemes.push_back(act_order(type, group, k_full, act));
      }
    }
  }
  const std::pair<const char*, Shape> small_shapes[] = {
      {"small", {16, 16, 2, 256, 256}}, {"decode", {128, 1, 8, 512, 256}}, {"prefill-1024", {16, 1024, 4, 256, 256}}};
  for (const auto& [label, s] : small_shapes) {
    for (const QuantScheme& q : schemes) {
      for (Tier tier : {Tier::exact, Tier::bounded}) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          const MoeProblem p = make(kind, s, q, tier, 41);
          // The exact tier only where its construction keeps every sum exact (fixtures/exact_tier.h:
          // 8-bit codes with topk 8 at K = 512 exceed 2^24); the bounded tier covers the rest.
          if (tier == Tier::exact && !exact_tier_possible(p)) continue;
          out.push_back({label, p});
        }
      }
    }
  }
  // Real model shapes as one expert-parallel rank (E global experts, every stride-th local), bounded
  // tier, decode and a batch: the production K, N and group counts at a weight size the CPU
  // reference can build.
  for (const Model& m : real_size_models()) {
    for (std::int64_t tokens : {1, 64}) {
      Shape s = m.shape;
      s.tokens = tokens;
      for (const QuantScheme& q : {scheme(WeightType::uint4b8, 128, DType::bf16), scheme(WeightType::uint4, 128, DType::f16),
                                   act_order(WeightType::uint4b8, 128, true, DType::bf16)}) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          MoeProblem p = make(kind, s, q, Tier::bounded, 42);
          expert_parallel(p, m.ep_stride);
          out.push_back({m.name, p});
        }
      }
    }
  }
  // The same models at their real size, every expert local, at a prefill batch: the sizes whose
  // CPU reference costs too much are judged by the GPU reference (reference_choice.h; Qwen3 at 256
  // tokens still fits the CPU's budget).
  for (const Model& m : real_size_models()) {
    for (auto [tokens, q] : {std::pair{std::int64_t(256), scheme(WeightType::uint4b8, 128, DType::bf16)},
                             std::pair{std::int64_t(4096), scheme(WeightType::uint4b8, 128, DType::bf16)},
                             std::pair{std::int64_t(4096), scheme(WeightType::uint4, 128, DType::f16)}}) {
      Shape s = m.shape;
      s.tokens = tokens;
      add_gemms(out, std::string(m.name) + "-all-experts", s, q, Tier::bounded, 44);
    }
  }
  // The layer: every type × dtype on both formats at a small shape, and the standard layers.
  for (MoeWeightFormat format : kFormats) {
    for (WeightType type : kAllTypes) {
      for (DType act : kDtypes) {
        add_layer(out, "layer", make(ProblemKind::layer, {32, 64, 4, 512, 256}, scheme(type, 64, act), Tier::bounded, 43), format);
      }
    }
  }
  for (const MatrixEntry& e : standard()) {
    if (e.layer) out.push_back(e);
  }
  return out;
}

}  // namespace

std::vector<MatrixEntry> named_matrix_entries(std::string_view name) {
  if (name == "quick") return quick();
  if (name == "standard") return standard();
  if (name == "full") return full();
  throw std::invalid_argument("matrix '" + std::string(name) + "' is not one of quick, standard, full");
}

}  // namespace moeval::testbed
