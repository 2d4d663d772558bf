#include "moeval/golden/corpus.h"

#include <stdexcept>
#include <string>
#include <tuple>

namespace moeval::golden {
namespace {

constexpr WeightType kTypes[] = {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8};
constexpr WeightType kSymmetricTypes[] = {WeightType::uint4b8, WeightType::uint8b128};
constexpr int kGroups[] = {kChannelwise, 32, 64, 128};
constexpr int kActOrderGroups[] = {32, 64, 128};
constexpr DType kDtypes[] = {DType::f16, DType::bf16};

// One GEMM of a problem with the given K and N: gemm1 has K = H, N = 2I; gemm2 K = I, N = H.
// N must be even for gemm1 (N = 2I).
MoeProblem gemm_problem(ProblemKind kind, std::int64_t k, std::int64_t n, QuantScheme scheme, std::uint64_t seed) {
  MoeProblem p;
  p.kind = kind;
  p.scheme = scheme;
  p.seed = seed;
  if (kind == ProblemKind::gemm1) {
    p.hidden = k;
    p.inter = n / 2;
  } else {
    p.inter = k;
    p.hidden = n;
  }
  return p;
}

// The smallest K the scheme allows, at least 64: act-order needs more than one group (g128 → 256).
std::int64_t k_for(const QuantScheme& s) {
  if (s.act_order) return 2 * s.group_size;
  return s.group_size == 128 ? 128 : 64;
}

// The scheme matrix: every scheme once per dtype, alternating GEMM1 / GEMM2 so both paths (and
// a_row_divisor / mul_topk_weights both ways) are covered across schemes.
std::vector<MoeProblem> scheme_matrix(bool act_order, std::int64_t experts, std::int64_t n, std::uint64_t seed0) {
  std::vector<MoeProblem> out;
  std::uint64_t seed = seed0;
  auto add = [&](QuantScheme s) {
    MoeProblem p = gemm_problem(out.size() % 2 ? ProblemKind::gemm2 : ProblemKind::gemm1, k_for(s), n, s, seed++);
    p.experts = experts;
    p.tokens = 3;
    p.topk = 2;
    out.push_back(p);
  };
  for (DType act : kDtypes) {
    if (!act_order) {
      for (WeightType type : kTypes) {
        for (int group : kGroups) add(QuantScheme{type, group, false, true, act});
      }
    } else {
      for (WeightType type : kSymmetricTypes) {
        for (int group : kActOrderGroups) {
          for (bool k_full : {true, false}) add(QuantScheme{type, group, true, k_full, act});
        }
      }
    }
  }
  return out;
}

// Exact-tier cases: integer data, bitwise comparison. One per weight type and dtype.
std::vector<MoeProblem> exact_cases(std::int64_t n, std::uint64_t seed0) {
  std::vector<MoeProblem> out;
  std::uint64_t seed = seed0;
  for (DType act : kDtypes) {
    for (WeightType type : kTypes) {
      MoeProblem p = gemm_problem(out.size() % 2 ? ProblemKind::gemm2 : ProblemKind::gemm1, 64, n,
                                  QuantScheme{type, 32, false, true, act}, seed++);
      p.experts = 4;
      p.tokens = 6;
      p.topk = 2;
      p.tier = Tier::exact;
      out.push_back(p);
    }
  }
  return out;
}

// Routing and expert-count coverage at tiny K·N: E ∈ {1, 8, 64, 256, 512}, topk up to 8, every
// routing kind, empty experts, an expert map, M = 1 and M = 0. With `full_weights` the E = 64 and
// E = 256 cases hold every expert's weights; otherwise they are expert-parallel with 16 local
// experts (keeps Marlin's N = 64 tiles small).
std::vector<MoeProblem> routing_cases(std::int64_t n, bool full_weights, std::uint64_t seed0) {
  const QuantScheme s{WeightType::uint4b8, 32, false, true, DType::bf16};
  std::vector<MoeProblem> out;
  std::uint64_t seed = seed0;
  auto add = [&](std::int64_t experts, std::int64_t tokens, std::int64_t topk, RoutingSpec routing,
                 ProblemKind kind = ProblemKind::gemm1) {
    MoeProblem p = gemm_problem(kind, 32, n, s, seed++);
    p.experts = experts;
    p.tokens = tokens;
    p.topk = topk;
    p.routing = routing;
    out.push_back(p);
  };
  add(1, 3, 1, {RoutingKind::softmax_topk});
  add(8, 1, 2, {RoutingKind::softmax_topk, false});          // M = 1, raw (not renormalised) softmax weights
  add(8, 0, 2, {RoutingKind::uniform}, ProblemKind::gemm2);  // M = 0: an empty batch touches nothing
  add(8, 16, 2, {RoutingKind::zipf, true, 1.2}, ProblemKind::gemm2);
  add(16, 12, 2, {RoutingKind::empty_experts, true, 1.2, 6});
  add(16, 8, 4, {RoutingKind::all_to_one}, ProblemKind::gemm2);
  for (const auto& [experts, tokens, kind] :
       {std::tuple{64, 16, ProblemKind::gemm1}, std::tuple{256, 8, ProblemKind::gemm2}}) {
    add(experts, tokens, 8, {RoutingKind::uniform}, kind);
    if (full_weights) continue;
    // 16 local experts spread over the id range: 0, E/16, ..., 15·E/16 (E = 256: 0, 16, ..., 240).
    out.back().expert_map.assign(std::size_t(experts), -1);
    for (std::int32_t l = 0; l < 16; ++l) out.back().expert_map[std::size_t(l * experts / 16)] = l;
  }
  // Expert parallelism: 512 global experts, 8 of them local (ids on both sides of 256); rows routed
  // to the other 504 must come out zero.
  MoeProblem ep = gemm_problem(ProblemKind::gemm1, 32, n, s, seed++);
  ep.experts = 512;
  ep.tokens = 16;
  ep.topk = 8;
  ep.routing = {RoutingKind::uniform};
  ep.expert_map.assign(512, -1);
  const std::int32_t local_ids[] = {0, 7, 100, 255, 256, 300, 447, 511};
  for (std::int32_t l = 0; l < 8; ++l) ep.expert_map[std::size_t(local_ids[l])] = l;
  out.push_back(ep);
  return out;
}

// K shards of row-parallel act-order layers (is_k_full = false): local K from 32 (below one
// group of 128) to 64, uneven and empty groups on a rank, first, middle and last ranks, both GEMMs,
// one exact-tier case.
std::vector<MoeProblem> k_shard_cases(std::int64_t n, std::uint64_t seed0) {
  std::vector<MoeProblem> out;
  std::uint64_t seed = seed0;
  auto add = [&](ProblemKind kind, WeightType type, int group, DType act, std::int64_t local_k, std::int64_t shards,
                 std::int64_t rank, Tier tier = Tier::bounded) {
    MoeProblem p = gemm_problem(kind, local_k, n, QuantScheme{type, group, true, false, act}, seed++);
    p.experts = 2;
    p.tokens = tier == Tier::exact ? 6 : 3;
    p.topk = 2;
    p.tier = tier;
    p.k_shards = shards;
    p.k_shard_rank = rank;
    out.push_back(p);
  };
  add(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, 64, 2, 0);
  add(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, 64, 2, 1);
  add(ProblemKind::gemm2, WeightType::uint8b128, 64, DType::f16, 64, 4, 3);
  add(ProblemKind::gemm2, WeightType::uint4b8, 128, DType::f16, 32, 8, 5);
  add(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::bf16, 64, 2, 1);
  add(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, 32, 4, 2, Tier::exact);
  return out;
}

std::vector<MoeProblem> layer_cases() {
  std::vector<MoeProblem> out;
  std::uint64_t seed = 4000;
  auto add = [&](QuantScheme s, std::int64_t experts, std::int64_t tokens, std::int64_t topk,
                 Tier tier = Tier::bounded) {
    MoeProblem p;
    p.kind = ProblemKind::layer;
    p.scheme = s;
    p.experts = experts;
    p.tokens = tokens;
    p.topk = topk;
    p.hidden = 64;
    p.inter = s.act_order ? 64 : 32;  // act-order needs two groups along GEMM2's K = I
    p.tier = tier;
    p.seed = seed++;
    out.push_back(p);
    return &out.back();
  };
  add({WeightType::uint4b8, 32, false, true, DType::bf16}, 4, 6, 2);
  add({WeightType::uint4, 32, false, true, DType::f16}, 4, 6, 2);
  add({WeightType::uint8b128, kChannelwise, false, true, DType::bf16}, 4, 5, 2);
  add({WeightType::uint8, 32, false, true, DType::f16}, 4, 5, 2);
  add({WeightType::uint4b8, 32, true, true, DType::bf16}, 4, 6, 2);
  add({WeightType::uint4b8, 32, true, false, DType::f16}, 4, 6, 2);
  add({WeightType::uint4b8, 32, false, true, DType::f16}, 4, 6, 2, Tier::exact);
  add({WeightType::uint4b8, kChannelwise, false, true, DType::bf16}, 1, 3, 1);
  MoeProblem* ep = add({WeightType::uint4b8, 32, false, true, DType::bf16}, 256, 4, 8);
  ep->routing = {RoutingKind::uniform};
  ep->expert_map.assign(256, -1);
  for (std::int32_t l = 0; l < 4; ++l) ep->expert_map[std::size_t(l * 85)] = l;  // 0, 85, 170, 255
  return out;
}

template <class V>
void append(std::vector<MoeProblem>& out, V&& more) {
  out.insert(out.end(), more.begin(), more.end());
}

}  // namespace

std::string_view to_string(Family family) {
  switch (family) {
    case Family::wna16: return "wna16";
    case Family::marlin: return "marlin";
    case Family::layouts: return "layouts";
    case Family::layer: return "layer";
  }
  return "?";
}

const std::vector<Family>& all_families() {
  static const std::vector<Family> families{Family::wna16, Family::marlin, Family::layouts, Family::layer};
  return families;
}

Family parse_family(std::string_view text) {
  for (Family f : all_families()) {
    if (to_string(f) == text) return f;
  }
  throw std::invalid_argument("golden family '" + std::string(text) +
                              "' is unknown; allowed: wna16, marlin, layouts, layer");
}

std::string file_name(Family family) { return std::string(to_string(family)) + ".h5"; }

std::vector<Layout> family_layouts(Family family) {
  switch (family) {
    case Family::wna16: return {Layout::wna16};
    case Family::marlin: return {Layout::marlin};
    case Family::layouts: return {Layout::gptq, Layout::awq, Layout::compressed_tensors};
    case Family::layer: return {Layout::wna16, Layout::marlin};
  }
  return {};
}

std::vector<MoeProblem> corpus(Family family) {
  std::vector<MoeProblem> out;
  switch (family) {
    case Family::wna16:
      // WNA16 has no tile constraint on N: N = 16 keeps every case small.
      append(out, scheme_matrix(false, 4, 16, 1000));
      append(out, exact_cases(32, 1100));
      append(out, routing_cases(16, true, 1200));
      break;
    case Family::marlin:
      // Marlin tiles are 16 × 64: N = 64.
      append(out, scheme_matrix(false, 2, 64, 2000));
      append(out, scheme_matrix(true, 2, 64, 2100));
      append(out, exact_cases(64, 2200));
      append(out, routing_cases(64, false, 2300));
      append(out, k_shard_cases(64, 2400));
      break;
    case Family::layouts: {
      append(out, scheme_matrix(false, 2, 16, 3000));
      append(out, scheme_matrix(true, 2, 16, 3100));
      // K and N not multiples of the pack factor: only compressed-tensors (ceil packing) applies.
      MoeProblem odd =
          gemm_problem(ProblemKind::gemm2, 36, 20, {WeightType::uint4, kChannelwise, false, true, DType::bf16}, 3200);
      odd.experts = 3;
      odd.tokens = 4;
      odd.topk = 2;
      out.push_back(odd);
      break;
    }
    case Family::layer: append(out, layer_cases()); break;
  }
  return out;
}

}  // namespace moeval::golden
