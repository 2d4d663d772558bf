// Types every MoE GEMM entry point shares: the per-expert GEMM shape and moe_align's output as the
// GEMM reads it (rows of a block b are sorted_token_ids[b·B, (b+1)·B), its expert expert_ids[b]).
#pragma once

#include <cstdint>

namespace moeval::kernels {

// Output columns n and reduction length k of one expert's GEMM.
struct GemmNK {
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// Which GEMM (and weight layout) a layer runs on (moe_forward). Here, in a header without CUDA types,
// so that host code (the testbed's matrix registry in the CPU-only Python package) can name it.
enum class MoeWeightFormat : std::uint8_t { wna16, marlin };

// moe_align's output, as the GEMM reads it.
struct MoeBlocks {
  const std::int32_t* sorted_token_ids = nullptr;      // [sorted_capacity]
  const std::int32_t* expert_ids = nullptr;            // [sorted_capacity / block_size]
  const std::int32_t* num_tokens_post_padded = nullptr;  // [1]
  std::int64_t sorted_capacity = 0;  // length of sorted_token_ids (moe_align_sorted_capacity)
  int block_size = 16;               // B used by moe_align
  std::int64_t num_slots = 0;        // T = M·topk; ids ≥ T are padding
};

}  // namespace moeval::kernels
