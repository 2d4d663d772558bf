// A Python callable as a testbed GemmKernelUnderTest: the testbed prepares a case in guarded device
// buffers (the chosen weight layout, activations, routing and moe_align's output from our align
// kernel), then calls
//     kernel_fn(inputs: dict[str, torch.Tensor], out: torch.Tensor, info: dict) -> None
// with tensors that VIEW those buffers (valid during the call only), exactly as it calls our own
// kernels: twice into a NaN-poisoned output, with another device current than the data's whenever
// two devices exist, then compared under the declared contract, with guards, unchanged inputs and
// bitwise determinism checked (testbed/case_runner.h).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "moeval/testbed/kernel_under_test.h"

namespace moeval::python {

namespace nb = nanobind;

struct PythonKernelSpec {
  nb::object fn;                         // kernel_fn above
  nb::object supports;                   // None, or supports(problem) -> str ("" = supported)
  std::string name = "python_kernel";
  std::string layout = "wna16";          // a layout of pack_layout (layouts.h)
  reference::NumericsContract contract;  // what the kernel declares
  int block_size = 0;                    // 0 = kernels::choose_block_size for the case's shape
};

std::shared_ptr<const testbed::GemmKernelUnderTest> make_python_kernel(PythonKernelSpec spec);

}  // namespace moeval::python
