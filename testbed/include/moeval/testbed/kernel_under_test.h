// The interface every MoE GEMM kernel plugs into the testbed through — our own kernels and an
// external one alike — and the registry that lists them.
//
// A kernel declares which problems it supports (with the reason when it does not), then prepares a
// case on a device: it packs the logical weights into its own layout, uploads everything into
// guarded buffers, and returns a PreparedGemm the runner can launch repeatedly.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/numerics_contract.h"
#include "moeval/testbed/guarded_buffer.h"

namespace moeval::testbed {

class PreparedGemm {
 public:
  virtual ~PreparedGemm() = default;
  // Launches the GEMM writing [routed rows, N] 16-bit outputs into `out` (on the prepared device).
  // Contract (the cuda:1 bug class): run() calls the kernel's entry points exactly as a user
  // would, WITHOUT making the prepared device current and without synchronizing. The testbed
  // calls run() with another device current whenever two exist (devices.h, ForeignCurrentDevice),
  // so the kernel's own device guard is what gets tested; a guard in the adapter would hide a
  // kernel that launches on the caller's device. run() must leave the caller's current device
  // current; the testbed synchronizes the prepared device afterwards.
  virtual void run(GuardedBuffer& out) = 0;
  // Every buffer the kernel was given (inputs, routing, workspace), for guard and input checks.
  virtual std::vector<const GuardedBuffer*> buffers() const = 0;
};

class GemmKernelUnderTest {
 public:
  virtual ~GemmKernelUnderTest() = default;
  virtual std::string name() const = 0;
  // Empty when the kernel supports the case; otherwise why not (e.g. "act-order is not supported").
  virtual std::string unsupported_reason(const GemmCase& gemm_case) const = 0;
  virtual std::unique_ptr<PreparedGemm> prepare(const GemmCase& gemm_case, int device) const = 0;
  // Where the kernel rounds (reference/numerics_contract.h); the reference and the bound model
  // exactly this. The default is our kernels' contract: one rounding, weight in the fp32 sum.
  virtual reference::NumericsContract contract() const { return {}; }
};

// Process-wide list of GEMM kernels under test. Our own kernels are registered by
// register_builtin_kernels(); external kernels call add() the same way.
class KernelRegistry {
 public:
  static KernelRegistry& instance();
  void add(std::shared_ptr<const GemmKernelUnderTest> kernel);  // throws on a duplicate name
  std::shared_ptr<const GemmKernelUnderTest> find(const std::string& name) const;  // null if absent
  const std::vector<std::shared_ptr<const GemmKernelUnderTest>>& all() const { return kernels_; }

 private:
  std::vector<std::shared_ptr<const GemmKernelUnderTest>> kernels_;
};

// Adds moeval's own kernels (idempotent).
void register_builtin_kernels();

}  // namespace moeval::testbed
