// The whole MoE layer on the GPU, checked stage by stage (docs/architecture.md): GEMM1 against the reference,
// silu_and_mul against the reference applied to the KERNEL's GEMM1 output, GEMM2 against the
// reference fed the kernel's own intermediate, the top-k combine likewise, and finally
// kernels::moe_forward end to end, which must reproduce the staged kernels' output bit for bit
// (and itself bitwise on repeat).
#pragma once

#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/reference/layer_reference.h"
#include "moeval/testbed/case_runner.h"

namespace moeval::testbed {

struct LayerResult {
  std::vector<CaseResult> stages;  // gemm1, silu_and_mul, gemm2, combine
  bool forward_matches_stages = false;
  bool forward_deterministic = false;
  std::vector<std::string> memory_errors;  // moe_forward's buffers
  std::vector<std::string> contract_errors;  // moe_forward left another device current

  bool pass() const;
  std::string summary() const;
};

// `stored` (e.g. a golden file's expected outputs) replaces the fresh reference of GEMM1, the one
// stage whose reference does not depend on the kernel's own intermediates. `format` picks the
// weight layout and GEMM kernel of both GEMM stages and of moe_forward (Marlin: call
// marlin_unsupported_reason on w13 and w2 first; WNA16 has no act-order).
LayerResult run_layer_case(const LayerCase& layer, int device, const reference::LayerReference* stored = nullptr,
                           kernels::MoeWeightFormat format = kernels::MoeWeightFormat::wna16);

}  // namespace moeval::testbed
