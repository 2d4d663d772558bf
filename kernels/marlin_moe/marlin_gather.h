// Internal: the act-order activation gather that runs before the Marlin GEMM.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::kernels::detail {

struct MarlinGatherParams {
  const std::uint16_t* a;     // [T / top_k, K]
  std::uint16_t* out;         // [T, K] (the workspace): row sid in Marlin row order
  const std::int32_t* perm;   // [E, K]
  const std::int32_t* sorted_token_ids;
  const std::int32_t* expert_ids;
  const std::int32_t* num_tokens_post_padded;
  std::int64_t k;
  std::int64_t num_slots;
  std::int64_t block_capacity;
  int block_size;
  int top_k;
  int num_experts;
};

void launch_marlin_gather(const MarlinGatherParams& params, int sms, cudaStream_t stream);

}  // namespace moeval::kernels::detail
