// Private: the elementwise kernels of the cuBLAS path (one thread per element, no tricks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "moeval/reference/cublas_path.h"

namespace moeval::reference::detail {

// Bits the dequantize kernel ORs into *error_flags for out-of-range inputs.
enum DequantError : int { kBadCode = 1, kBadZero = 2, kBadGroup = 4 };

// w16 of experts [first_expert, first_expert + expert_count) into out [expert_count][K][N].
void launch_dequantize(const DeviceQuantWeights& w, std::int64_t first_expert, std::int64_t expert_count,
                       std::uint16_t* out, int* error_flags, cudaStream_t stream);

// gathered[i][k] = a[rows[i] / divisor][k] for i < count.
void launch_gather_rows(const std::uint16_t* a, std::int64_t k, const std::int32_t* rows, std::int64_t count,
                        std::int64_t divisor, std::uint16_t* gathered, cudaStream_t stream);

// out[rows[i]][n] = c[i][n] (× weights[rows[i]] when weights is not null), as fp32 and/or rounded
// to `dtype` (round to nearest even).
void launch_scatter_rows(const float* c, std::int64_t n, const std::int32_t* rows, std::int64_t count,
                         const float* weights, Float16Kind dtype, float* out_f32, std::uint16_t* out16,
                         cudaStream_t stream);

// Host-side checks of a weights description (sizes, bit width, dtype); throws std::invalid_argument.
void validate_weights(const DeviceQuantWeights& w, const char* where);
// Throws std::invalid_argument naming the flags set by the dequantize kernel.
void throw_on_dequant_errors(int flags, const char* where);

}  // namespace moeval::reference::detail
