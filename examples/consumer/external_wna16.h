// A MoE GEMM kernel "from elsewhere" plugged into moeval's testbed: here moeval's own WNA16 kernel,
// wrapped exactly as a kernel engineer wraps theirs.
#pragma once

#include <memory>

#include "moeval/testbed/kernel_under_test.h"

namespace consumer {

std::shared_ptr<const moeval::testbed::GemmKernelUnderTest> make_external_wna16();

}  // namespace consumer
