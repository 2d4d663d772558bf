#include <stdexcept>

#include "moeval/testbed/kernel_under_test.h"
#include "moeval/testbed/marlin_kernel.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::testbed {

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::add(std::shared_ptr<const GemmKernelUnderTest> kernel) {
  if (!kernel) throw std::invalid_argument("KernelRegistry::add: null kernel");
  if (find(kernel->name())) throw std::invalid_argument("KernelRegistry::add: a kernel named '" + kernel->name() + "' is already registered");
  kernels_.push_back(std::move(kernel));
}

std::shared_ptr<const GemmKernelUnderTest> KernelRegistry::find(const std::string& name) const {
  for (const auto& k : kernels_) {
    if (k->name() == name) return k;
  }
  return nullptr;
}

void register_builtin_kernels() {
  auto& registry = KernelRegistry::instance();
  if (!registry.find(kWna16KernelName)) registry.add(make_wna16_kernel());
  if (!registry.find(kMarlinKernelName)) registry.add(make_marlin_kernel());
}

}  // namespace moeval::testbed
