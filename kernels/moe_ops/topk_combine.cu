// topk_combine: [M·topk, H] → [M, H], out[m] = round16(Σ_j in[m·topk + j]) in fp32, ascending j.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "moeval/kernels/moe_ops.h"
#include "moeval/kernels/same_device.h"
#include "../common/half16.cuh"

namespace moeval::kernels {
namespace {

template <typename T>
__global__ void topk_combine_kernel(const std::uint16_t* in, std::uint16_t* out, std::int64_t tokens, int topk,
                                    std::int64_t hidden, const std::int32_t* topk_ids, int num_experts) {
  using H = detail::Half16<T>;
  const std::int64_t total = tokens * hidden;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t m = idx / hidden;
    const std::int64_t h = idx - m * hidden;
    float sum = 0.0f;
    for (int j = 0; j < topk; ++j) {
      const std::int64_t slot = m * topk + j;
      if (topk_ids != nullptr && (topk_ids[slot] < 0 || topk_ids[slot] >= num_experts)) continue;
      sum += H::to_float(in[slot * hidden + h]);
    }
    out[idx] = H::from_float(sum);
  }
}

}  // namespace

void topk_combine(const TopkCombineArgs& args) {
  if (args.tokens < 0 || args.topk < 1 || args.hidden < 1) {
    throw std::invalid_argument("topk_combine: tokens = " + std::to_string(args.tokens) + ", topk = " +
                                std::to_string(args.topk) + ", hidden = " + std::to_string(args.hidden) +
                                "; need tokens ≥ 0, topk ≥ 1, hidden ≥ 1");
  }
  if (args.topk_ids != nullptr && args.num_experts < 1) {
    throw std::invalid_argument("topk_combine: topk_ids given but num_experts = " + std::to_string(args.num_experts));
  }
  const int device =
      same_device("topk_combine", {{args.in, "in"}, {args.out, "out"}, {args.topk_ids, "topk_ids", true}});
  DeviceGuard guard(device);
  if (args.tokens == 0) return;
  const std::int64_t total = args.tokens * args.hidden;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 65536));
  const auto* in = static_cast<const std::uint16_t*>(args.in);
  auto* out = static_cast<std::uint16_t*>(args.out);
  if (args.dtype == ActDType::f16) {
    topk_combine_kernel<__half><<<grid, 256, 0, args.stream>>>(in, out, args.tokens, args.topk, args.hidden,
                                                              args.topk_ids, args.num_experts);
  } else {
    topk_combine_kernel<__nv_bfloat16><<<grid, 256, 0, args.stream>>>(in, out, args.tokens, args.topk, args.hidden,
                                                                     args.topk_ids, args.num_experts);
  }
  check_cuda(cudaGetLastError(), "topk_combine: kernel launch");
}

}  // namespace moeval::kernels
