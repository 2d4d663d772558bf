#include "gpu_square.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace moeval::cli {
namespace {

__global__ void square_kernel(const std::uint16_t* in, float* out, std::int64_t count, bool bf16) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float x = bf16 ? __uint_as_float(std::uint32_t(in[i]) << 16) : __half2float(__ushort_as_half(in[i]));
    out[i] = x * x;
  }
}

}  // namespace

void square_16_to_f32(const std::uint16_t* in, float* out, std::int64_t count, bool bf16, cudaStream_t stream) {
  if (count <= 0) return;
  const int threads = 256;
  const std::int64_t blocks = (count + threads - 1) / threads;
  square_kernel<<<unsigned(blocks < 65535 ? blocks : 65535), threads, 0, stream>>>(in, out, count, bf16);
}

}  // namespace moeval::cli
