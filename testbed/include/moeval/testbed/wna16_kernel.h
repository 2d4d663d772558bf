// Our WNA16 MoE GEMM (kernels/wna16_moe) behind the testbed interface: packs the case into the
// WNA16 layout (fixtures/layouts/wna16.h), aligns the routing on the device with kernels/moe_align,
// then launches one GEMM.
#pragma once

#include <memory>

#include "moeval/testbed/kernel_under_test.h"

namespace moeval::testbed {

inline constexpr const char* kWna16KernelName = "wna16_moe";

// block_size 0 = kernels::choose_block_size for the case's shape.
std::shared_ptr<const GemmKernelUnderTest> make_wna16_kernel(int block_size = 0);

}  // namespace moeval::testbed
