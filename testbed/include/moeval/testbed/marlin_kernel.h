// Our Marlin MoE GEMM (kernels/marlin_moe) behind the testbed interface: packs the case with the
// fixtures' Marlin packer (fixtures/layouts/marlin.h), aligns the routing on the device with
// kernels/moe_align, sizes the workspace with marlin_moe_workspace_bytes, then launches one GEMM.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/testbed/device_routing.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::testbed {

inline constexpr const char* kMarlinKernelName = "marlin_moe";

struct MarlinKernelOptions {
  int block_size = 0;  // 0 = kernels::choose_block_size for the case's shape and Marlin weights
  // Pack the scales with this permutation instead of the one pack_marlin derives from the GEMM's
  // own K. Only the regression tests of the wrong-size_k bug class set it, to prove the checks
  // flag a packer that decided from another size; such a kernel is never registered.
  std::optional<layouts::MarlinScaleOrder> scale_order;
};

std::shared_ptr<const GemmKernelUnderTest> make_marlin_kernel(MarlinKernelOptions options = {});

// Why the Marlin kernel refuses weights of this scheme and shape (its documented limits,
// kernels/marlin_moe.h), or empty. Shared by the GEMM adapter and the layer runner.
std::string marlin_unsupported_reason(const QuantizedWeights& w);

// One GEMM's weights (w13 or w2 of all local experts) packed by pack_marlin and uploaded into
// guarded buffers on a device, with the kernel's view of them.
class MarlinDeviceWeights {
 public:
  MarlinDeviceWeights(const std::string& name, const QuantizedWeights& w, int device,
                      const layouts::MarlinPackOptions& options = {});

  const kernels::MarlinMoeWeights& view() const { return view_; }
  std::vector<const GuardedBuffer*> buffers() const;

 private:
  std::vector<GuardedBuffer> buffers_;  // qweight, scales, then zeros / g_idx / perm when present
  kernels::MarlinMoeWeights view_{};
};

// One case prepared for the Marlin kernel on a device: weights, activations and routing uploaded,
// moe_align's output and the kernel's workspace (exactly marlin_moe_workspace_bytes, so an overrun
// hits a guard) allocated.
class PreparedMarlin final : public PreparedGemm {
 public:
  PreparedMarlin(const GemmCase& c, int device, const MarlinKernelOptions& options = {});

  // No device guard and no synchronization (kernel_under_test.h): the kernels' own entry points
  // must make the data's device current, which is what the testbed tests.
  void run(GuardedBuffer& out) override;
  std::vector<const GuardedBuffer*> buffers() const override;

  // Launches moe_align alone and returns the GEMM's arguments (c unset), for tests that call the
  // kernel with one argument broken (a workspace one byte short, a refused shape).
  kernels::MarlinMoeArgs aligned_args();

 private:
  MarlinDeviceWeights weights_;
  GuardedBuffer a_;
  DeviceRouting routing_;
  std::optional<GuardedBuffer> workspace_;
  kernels::MarlinMoeArgs gemm_{};
};

}  // namespace moeval::testbed
