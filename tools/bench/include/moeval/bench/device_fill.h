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
// WNA16 4-bit qweight [E, N, K/2] read as int32 [E, N, K/8] (word w of a row holds k = 8w..8w+7 in
// nibbles 0..7) → GPTQ int32 [E, K/8, N] (the same words transposed per expert): the checkpoint
// layout kernels::gptq_to_marlin repacks into Marlin tiles.
void wna16_to_gptq_int4(const std::uint8_t* qweight, std::uint32_t* gptq, std::int64_t experts, std::int64_t n,
                        std::int64_t k, cudaStream_t stream);
// scales [E, N, G] → [E, G, N].
void transpose_scales(const std::uint16_t* in, std::uint16_t* out, std::int64_t experts, std::int64_t n,
                      std::int64_t groups, cudaStream_t stream);

}  // namespace moeval::bench
