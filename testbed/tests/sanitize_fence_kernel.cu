// A kernel for the sanitize tier's positive control: one thread reads p[index] into *to.
#include <cuda_runtime.h>

#include <cstdint>

#include "moeval/kernels/device_info.h"

namespace moeval::testbed::test {
namespace {
__global__ void read_one(const std::uint16_t* p, long long index, std::uint16_t* to) { *to = p[index]; }
}  // namespace

void read_element(const std::uint16_t* p, long long index, std::uint16_t* to) {
  read_one<<<1, 1>>>(p, index, to);
  kernels::check_cuda(cudaDeviceSynchronize(), "read_element");
}

}  // namespace moeval::testbed::test
