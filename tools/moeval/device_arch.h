// Can a device of a given compute capability run code built for CMAKE_CUDA_ARCHITECTURES? Host
// arithmetic only (the CLI asks cudaGetDeviceProperties, then this), so it is unit-tested on the CPU.
#pragma once

#include <string>
#include <string_view>

namespace moeval::cli {

// "" when a device of compute capability major.minor can run code built for `architectures`
// (CMake's syntax: "90", "80;90", "90-real", "90a", "86-virtual"), else the reason in words.
// SASS for sm_XY runs on the same major with minor >= Y ("XYa": exactly X.Y); PTX for compute_XY
// is compiled by the driver for any capability >= X.Y. "all", "all-major" and "native" cannot be
// judged from the list and are accepted.
std::string arch_mismatch(int major, int minor, std::string_view architectures);

}  // namespace moeval::cli
