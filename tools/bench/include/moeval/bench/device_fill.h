// Random benchmark data generated directly on the GPU (no host quantization of gigabytes), and
// the conversions that hand the same weights to the cuBLAS reference path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::bench {

// Every byte random (random bits are valid 4-bit and 8-bit codes).
void fill_random_bytes(std::uint8_t* out, std::int64_t count, std::uint64_t seed, cudaStream_t stream);
// Random positive bf16 values in [lo, 2·lo).
void fill_random_bf16(std::uint16_t* out, std::int64_t count, float lo, std::uint64_t seed, cudaStream_t stream);
// Random bf16 activations, uniform in [-1, 1).
void fill_random_activations(std::uint16_t* out, std::int64_t count, std::uint64_t seed, cudaStream_t stream);

// WNA16 4-bit qweight [E, N, K/2] → one code per byte [E, K, N] (the cuBLAS path's layout).
void unpack_wna16_codes(const std::uint8_t* qweight, std::uint8_t* codes, std::int64_t experts, std::int64_t n,
                        std::int64_t k, cudaStream_t stream);
// scales [E, N, G] → [E, G, N].
void transpose_scales(const std::uint16_t* in, std::uint16_t* out, std::int64_t experts, std::int64_t n,
                      std::int64_t groups, cudaStream_t stream);

}  // namespace moeval::bench
