// silu_and_mul: [rows, 2I] → [rows, I], act = round16(silu(gate)·up) in fp32.
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
__global__ void silu_and_mul_kernel(const std::uint16_t* in, std::uint16_t* out, std::int64_t rows, std::int64_t inter) {
  using H = detail::Half16<T>;
  const std::int64_t total = rows * inter;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = idx / inter;
    const std::int64_t j = idx - r * inter;
    const float gate = H::to_float(in[r * 2 * inter + j]);
    const float up = H::to_float(in[r * 2 * inter + inter + j]);
    // expf, not __expf: the documented function is z / (1 + exp(-z)) in fp32.
    out[idx] = H::from_float(gate / (1.0f + expf(-gate)) * up);
  }
}

}  // namespace

void silu_and_mul(const SiluAndMulArgs& args) {
  if (args.rows < 0 || args.inter < 1) {
    throw std::invalid_argument("silu_and_mul: rows = " + std::to_string(args.rows) + ", inter = " +
                                std::to_string(args.inter) + "; need rows ≥ 0 and inter ≥ 1");
  }
  const int device = same_device("silu_and_mul", {{args.in, "in"}, {args.out, "out"}});
  DeviceGuard guard(device);
  if (args.rows == 0) return;
  const std::int64_t total = args.rows * args.inter;
  const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 65536));
  const auto* in = static_cast<const std::uint16_t*>(args.in);
  auto* out = static_cast<std::uint16_t*>(args.out);
  if (args.dtype == ActDType::f16) silu_and_mul_kernel<__half><<<grid, 256, 0, args.stream>>>(in, out, args.rows, args.inter);
  else silu_and_mul_kernel<__nv_bfloat16><<<grid, 256, 0, args.stream>>>(in, out, args.rows, args.inter);
  check_cuda(cudaGetLastError(), "silu_and_mul: kernel launch");
}

}  // namespace moeval::kernels
