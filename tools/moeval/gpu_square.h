// out[i] = x[i]² in fp32 for 16-bit inputs (exact: a square of an 8- or 11-bit significand fits
// fp32's 24 bits). Enqueued on `stream` of the current device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::cli {

void square_16_to_f32(const std::uint16_t* in, float* out, std::int64_t count, bool bf16, cudaStream_t stream);

}  // namespace moeval::cli
