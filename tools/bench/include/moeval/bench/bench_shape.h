// The GEMM shapes `moeval bench` times: one MoE GEMM of a real model, int4 g128 bf16.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moeval::bench {

enum class GemmRole : std::uint8_t { w13, w2 };  // GEMM1 (A row = slot / topk) or GEMM2 (A row = slot, × weights)

struct BenchShape {
  std::string name;  // e.g. "deepseek-v3-w13"
  int experts = 0;   // E
  std::int64_t n = 0;
  std::int64_t k = 0;
  int topk = 1;
  GemmRole role = GemmRole::w13;
};

// DeepSeek-V3 w13 and w2, Qwen3-30B-A3B w13, Mixtral-8x7B w13.
const std::vector<BenchShape>& default_shapes();

// The shapes named by the elements of a comma-separated list, empty ones kept (the CLI's
// split_list): names of default_shapes(), each once, or "all" alone. Throws std::invalid_argument
// naming what is wrong: an unknown name (listing the known ones), an empty element, a name given
// twice, or "all" beside names.
std::vector<BenchShape> select_shapes(const std::vector<std::string>& names);

}  // namespace moeval::bench
