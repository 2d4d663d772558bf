// Wall time of the CPU layer reference at DeepSeek-V3 shape (E 256, top-8, H 7168, I 2048).
//
// Usage: moeval_reference_timing [tokens = 1] [repeats = 3]
//
// The case comes from the fixtures case builder (uint4b8 g128 bf16, softmax routing), but only the
// routed experts are made local (an expert map sends the others to -1): fixtures give each global
// expert its own random stream, so these are exactly the weights of the unsharded case for the
// routed experts, and the reference touches no other expert either way. The full 256-expert case
// would need ~34 GB of codes and 16-bit weights, more than the CI machine holds. Building the
// weights (RTN quantization of 44M values per expert) is timed separately.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "moeval/reference/layer_reference.h"

namespace {

using namespace moeval;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

MoeProblem deepseek_v3(std::int64_t tokens) {
  MoeProblem p;
  p.kind = ProblemKind::layer;
  p.experts = 256;
  p.topk = 8;
  p.hidden = 7168;
  p.inter = 2048;
  p.tokens = tokens;
  p.scheme = {WeightType::uint4b8, 128};
  p.scheme.act = DType::bf16;
  p.seed = 1;
  // Local experts = the routed ones, numbered in order of global id.
  const Routing routing = make_routing(p);
  p.expert_map.assign(std::size_t(p.experts), -1);
  for (std::int32_t id : routing.topk_ids) p.expert_map[std::size_t(id)] = 0;
  std::int32_t next = 0;
  for (auto& local : p.expert_map) {
    if (local == 0) local = next++;
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t tokens = argc > 1 ? std::atoll(argv[1]) : 1;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const auto build_start = Clock::now();
  const LayerCase layer = build_layer_case(deepseek_v3(tokens));
  std::printf("case %s: %lld local experts, built in %.1f s\n", layer.problem.name().c_str(),
              static_cast<long long>(layer.problem.local_experts()), seconds_since(build_start));
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    const reference::LayerReference ref = reference::layer_reference(layer);
    const double seconds = seconds_since(start);
    best = std::min(best, seconds);
    std::printf("run %d: %.3f s (out[0, 0] = %.6g)\n", r, seconds, ref.out.y[0]);
  }
  std::printf("layer reference, DeepSeek-V3 shape (E 256, top-8, H 7168, I 2048), M = %lld: best of %d %.3f s\n",
              static_cast<long long>(tokens), repeats, best);
  return 0;
}
