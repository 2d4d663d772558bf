// The routing of one GEMM case on a device and moe_align's output for it, in guarded buffers of
// exactly the documented capacities: what every GEMM adapter hands its kernel besides the
// activations and the weights (one copy of this plumbing for all adapters).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_gemm_types.h"
#include "moeval/testbed/guarded_buffer.h"

namespace moeval::testbed {

class DeviceRouting {
 public:
  // block_size 0 = the block size moe_forward picks for the case's shape and the kernel's weight
  // format on `device` (kernels::choose_block_size; Marlin: with marlin_layer_wgmma_items).
  DeviceRouting(const GemmCase& c, int device, int block_size,
                kernels::MoeWeightFormat format = kernels::MoeWeightFormat::wna16);

  // Launches moe_align. Sets no device (kernel_under_test.h): its entry point must.
  void align() const { kernels::moe_align(align_); }
  // moe_align's output as the GEMM reads it.
  kernels::MoeBlocks blocks() const;
  const float* topk_weights() const { return topk_weights_.as<float>(); }
  std::vector<const GuardedBuffer*> buffers() const;

 private:
  GuardedBuffer topk_ids_, topk_weights_;
  std::optional<GuardedBuffer> expert_map_, sorted_ids_, expert_ids_, post_padded_, align_workspace_;
  std::int64_t sorted_capacity_ = 0;
  kernels::MoeAlignArgs align_{};
};

}  // namespace moeval::testbed
