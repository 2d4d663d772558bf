#include "moeval/bench/device_fill.h"
#include "moeval/kernels/device_info.h"

namespace moeval::bench {
namespace {

// splitmix64 of (seed, index): independent, reproducible random bits per element.
__device__ inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ inline std::uint16_t bf16_bits(float x) {  // round to nearest even (finite inputs)
  const std::uint32_t u = __float_as_uint(x);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

__global__ void random_bytes_kernel(std::uint8_t* out, std::int64_t count, std::uint64_t seed) {
  const std::int64_t words = (count + 7) / 8;
  for (std::int64_t w = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t bits = mix(seed, static_cast<std::uint64_t>(w));
    for (int b = 0; b < 8 && w * 8 + b < count; ++b) out[w * 8 + b] = static_cast<std::uint8_t>(bits >> (8 * b));
  }
}

__global__ void random_bf16_kernel(std::uint16_t* out, std::int64_t count, float lo, float span, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float r = static_cast<float>(mix(seed, static_cast<std::uint64_t>(i)) >> 40) * (1.0f / 16777216.0f);
    out[i] = bf16_bits(lo + span * r);
  }
}

__global__ void unpack_kernel(const std::uint8_t* qweight, std::uint8_t* codes, std::int64_t experts, std::int64_t n,
                              std::int64_t k) {
  const std::int64_t total = experts * n * k;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t col = i % n;  // output index [e][kk][col]: consecutive threads write consecutive n
    const std::int64_t kk = (i / n) % k;
    const std::int64_t e = i / (n * k);
    const std::uint8_t byte = qweight[(e * n + col) * (k / 2) + kk / 2];
    codes[i] = static_cast<std::uint8_t>((byte >> (4 * (kk & 1))) & 0xF);
  }
}

__global__ void transpose_scales_kernel(const std::uint16_t* in, std::uint16_t* out, std::int64_t experts, std::int64_t n,
                                        std::int64_t groups) {
  const std::int64_t total = experts * n * groups;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t col = i % n;
    const std::int64_t g = (i / n) % groups;
    const std::int64_t e = i / (n * groups);
    out[i] = in[(e * n + col) * groups + g];
  }
}

__global__ void wna16_to_gptq_kernel(const std::uint32_t* words, std::uint32_t* gptq, std::int64_t experts,
                                     std::int64_t n, std::int64_t k_words) {
  const std::int64_t total = experts * k_words * n;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t col = i % n;  // output [e][w][col]: consecutive threads write consecutive columns
    const std::int64_t w = (i / n) % k_words;
    const std::int64_t e = i / (n * k_words);
    gptq[i] = words[(e * n + col) * k_words + w];
  }
}

constexpr unsigned kGrid = 132 * 16;
constexpr unsigned kBlock = 256;

}  // namespace

void fill_random_bytes(std::uint8_t* out, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  random_bytes_kernel<<<kGrid, kBlock, 0, stream>>>(out, count, seed);
  kernels::check_cuda(cudaGetLastError(), "fill_random_bytes");
}

void fill_random_bf16(std::uint16_t* out, std::int64_t count, float lo, std::uint64_t seed, cudaStream_t stream) {
  random_bf16_kernel<<<kGrid, kBlock, 0, stream>>>(out, count, lo, lo, seed);
  kernels::check_cuda(cudaGetLastError(), "fill_random_bf16");
}

void fill_random_activations(std::uint16_t* out, std::int64_t count, std::uint64_t seed, cudaStream_t stream) {
  random_bf16_kernel<<<kGrid, kBlock, 0, stream>>>(out, count, -1.0f, 2.0f, seed);
  kernels::check_cuda(cudaGetLastError(), "fill_random_activations");
}

void unpack_wna16_codes(const std::uint8_t* qweight, std::uint8_t* codes, std::int64_t experts, std::int64_t n,
                        std::int64_t k, cudaStream_t stream) {
  unpack_kernel<<<kGrid, kBlock, 0, stream>>>(qweight, codes, experts, n, k);
  kernels::check_cuda(cudaGetLastError(), "unpack_wna16_codes");
}

void wna16_to_gptq_int4(const std::uint8_t* qweight, std::uint32_t* gptq, std::int64_t experts, std::int64_t n,
                        std::int64_t k, cudaStream_t stream) {
  wna16_to_gptq_kernel<<<kGrid, kBlock, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(qweight), gptq, experts, n,
                                                     k / 8);
  kernels::check_cuda(cudaGetLastError(), "wna16_to_gptq_int4");
}

void transpose_scales(const std::uint16_t* in, std::uint16_t* out, std::int64_t experts, std::int64_t n,
                      std::int64_t groups, cudaStream_t stream) {
  transpose_scales_kernel<<<kGrid, kBlock, 0, stream>>>(in, out, experts, n, groups);
  kernels::check_cuda(cudaGetLastError(), "transpose_scales");
}

}  // namespace moeval::bench
