// Act-order activation gather: out[sid, j] = A[sid / top_k, perm[e, j]] for every valid routed slot
// sid of a block with a local expert e, so the GEMM reads activations in Marlin row order.
#include "marlin_gather.h"

#include "moeval/kernels/device_info.h"

namespace moeval::kernels::detail {
namespace {

constexpr int kGatherThreads = 256;

// One thread block per routed row at a time (grid-stride over the rows of the real blocks).
__global__ void __launch_bounds__(kGatherThreads) gather_kernel(const MarlinGatherParams p) {
  const std::int64_t blocks = min(static_cast<std::int64_t>(*p.num_tokens_post_padded / p.block_size), p.block_capacity);
  const std::int64_t rows = blocks * p.block_size;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int expert = p.expert_ids[row / p.block_size];
    const std::int64_t sid = p.sorted_token_ids[row];
    if (expert < 0 || expert >= p.num_experts || sid < 0 || sid >= p.num_slots) continue;
    const std::uint16_t* src = p.a + (sid / p.top_k) * p.k;
    const std::int32_t* perm = p.perm + static_cast<std::int64_t>(expert) * p.k;
    std::uint16_t* dst = p.out + sid * p.k;
    for (std::int64_t j = threadIdx.x; j < p.k; j += kGatherThreads) {
      std::int32_t from = __ldg(perm + j);
      from = from < 0 ? 0 : from >= p.k ? static_cast<std::int32_t>(p.k - 1) : from;  // never read outside the row
      dst[j] = __ldg(src + from);
    }
  }
}

}  // namespace

void launch_marlin_gather(const MarlinGatherParams& params, int sms, cudaStream_t stream) {
  const std::int64_t rows = params.block_capacity * params.block_size;
  const std::int64_t wanted = static_cast<std::int64_t>(sms) * 8;
  const unsigned grid = static_cast<unsigned>(rows < wanted ? rows : wanted);
  if (grid == 0) return;
  gather_kernel<<<grid, kGatherThreads, 0, stream>>>(params);
  check_cuda(cudaGetLastError(), "marlin_moe: act-order gather launch");
}

}  // namespace moeval::kernels::detail
