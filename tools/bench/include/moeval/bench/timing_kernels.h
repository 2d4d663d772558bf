// Device work the timer itself runs: the L2 flush that leaves clean lines, and an empty kernel for
// the floor of a timed launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::bench {

// Reads `bytes` (a multiple of 16) of `buffer` through L2, so the lines it leaves there are clean
// copies; `sink` (one word, outside `buffer`) is written only when the words XOR to a fixed value,
// which keeps the reads from being optimised away.
void read_through_l2(const void* buffer, std::int64_t bytes, std::uint32_t* sink, cudaStream_t stream);

// One thread block that does nothing: what a timed launch costs at least.
void launch_empty_kernel(cudaStream_t stream);

}  // namespace moeval::bench
