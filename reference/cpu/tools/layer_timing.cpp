// Wall time of the CPU layer reference at DeepSeek-V3 shape (E 256, top-8, H 7168, I 2048), M = 1.
//
// Usage: moeval_reference_timing [tokens] [repeats]
//
// Only the 8 routed experts are local (expert_map maps the others to -1): the reference touches
// exactly the routed experts either way, and the full 256-expert case needs ~34 GB of codes and
// 16-bit weights, more than this machine holds. The weights are random bf16 values with the
// spread of a quantized checkpoint; their values do not change the reference's cost.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "moeval/reference/layer_reference.h"

namespace {

using namespace moeval;

QuantizedWeights random_weights(std::int64_t experts, std::int64_t k, std::int64_t n, std::mt19937_64& rng) {
  QuantizedWeights w;
  w.scheme.act = DType::bf16;
  w.experts = experts;
  w.k = k;
  w.n = n;
  w.dequant.resize(std::size_t(experts * k * n));
  std::normal_distribution<double> normal(0.0, 0.02);
  for (auto& bits : w.dequant) bits = round_to_bits(normal(rng), DType::bf16);
  return w;
}

LayerCase deepseek_v3_case(std::int64_t tokens) {
  LayerCase c;
  MoeProblem& p = c.problem;
  p.experts = 256;
  p.topk = 8;
  p.hidden = 7168;
  p.inter = 2048;
  p.tokens = tokens;
  p.scheme.act = DType::bf16;
  std::mt19937_64 rng(7);
  // Every token routes to the same 8 experts (ids 3, 35, 67, ...), the only local ones.
  p.expert_map.assign(std::size_t(p.experts), -1);
  c.routing.tokens = tokens;
  c.routing.topk = p.topk;
  for (std::int64_t m = 0; m < tokens; ++m) {
    for (std::int32_t j = 0; j < p.topk; ++j) {
      const std::int32_t global = 3 + 32 * j;
      p.expert_map[std::size_t(global)] = j;
      c.routing.topk_ids.push_back(global);
      c.routing.topk_weights.push_back(1.0f / float(p.topk));
    }
  }
  std::normal_distribution<double> normal(0.0, 1.0);
  c.x.resize(std::size_t(tokens * p.hidden));
  for (auto& bits : c.x) bits = round_to_bits(normal(rng), DType::bf16);
  c.w13 = random_weights(p.topk, p.hidden, 2 * p.inter, rng);
  c.w2 = random_weights(p.topk, p.inter, p.hidden, rng);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t tokens = argc > 1 ? std::atoll(argv[1]) : 1;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const LayerCase layer = deepseek_v3_case(tokens);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const reference::LayerReference ref = reference::layer_reference(layer);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, seconds);
    std::printf("run %d: %.3f s (out[0,0] = %.6g)\n", r, seconds, ref.out.y[0]);
  }
  std::printf("layer reference, DeepSeek-V3 shape (E 256, top-8, H 7168, I 2048), M = %lld: best %.3f s\n",
              static_cast<long long>(tokens), best);
  return 0;
}
