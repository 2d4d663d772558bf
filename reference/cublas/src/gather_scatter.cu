// Gather the A rows of an expert, scatter its GEMM rows back: one thread per element.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "moeval/kernels/device_info.h"
#include "path_kernels.h"

namespace moeval::reference::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t total) {
  return unsigned(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 65535LL * 16));
}

__global__ void gather_rows_kernel(const std::uint16_t* a, std::int64_t k, const std::int32_t* rows, std::int64_t count,
                                   std::int64_t divisor, std::uint16_t* gathered) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count * k;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / k;
    gathered[i] = a[(std::int64_t(rows[r]) / divisor) * k + i % k];
  }
}

__global__ void scatter_rows_kernel(const float* c, std::int64_t n, const std::int32_t* rows, std::int64_t count,
                                    const float* weights, Float16Kind dtype, float* out_f32, std::uint16_t* out16) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count * n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t t = rows[i / n];
    float v = c[i];
    if (weights != nullptr) v *= weights[t];
    const std::int64_t at = t * n + i % n;
    if (out_f32 != nullptr) out_f32[at] = v;
    if (out16 != nullptr) {
      out16[at] = dtype == Float16Kind::f16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
    }
  }
}

}  // namespace

void launch_gather_rows(const std::uint16_t* a, std::int64_t k, const std::int32_t* rows, std::int64_t count,
                        std::int64_t divisor, std::uint16_t* gathered, cudaStream_t stream) {
  if (count * k == 0) return;
  gather_rows_kernel<<<blocks_for(count * k), kThreads, 0, stream>>>(a, k, rows, count, divisor, gathered);
  kernels::check_cuda(cudaGetLastError(), "gather_rows_kernel launch");
}

void launch_scatter_rows(const float* c, std::int64_t n, const std::int32_t* rows, std::int64_t count,
                         const float* weights, Float16Kind dtype, float* out_f32, std::uint16_t* out16,
                         cudaStream_t stream) {
  if (count * n == 0) return;
  scatter_rows_kernel<<<blocks_for(count * n), kThreads, 0, stream>>>(c, n, rows, count, weights, dtype, out_f32, out16);
  kernels::check_cuda(cudaGetLastError(), "scatter_rows_kernel launch");
}

}  // namespace moeval::reference::detail
