// The registry is how external kernels join every check: names are unique, lookups find them, and
// the built-in kernels register once however often they are asked to.
#include <gtest/gtest.h>

#include "moeval/testbed/kernel_under_test.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::testbed {
namespace {

class NamedKernel final : public GemmKernelUnderTest {
 public:
  explicit NamedKernel(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string unsupported_reason(const GemmCase&) const override { return "test double"; }
  std::unique_ptr<PreparedGemm> prepare(const GemmCase&, int) const override { return nullptr; }

 private:
  std::string name_;
};

TEST(KernelRegistry, BuiltinsRegisterOnceAndExternalKernelsJoin) {
  auto& registry = KernelRegistry::instance();
  register_builtin_kernels();
  register_builtin_kernels();
  const auto builtins = registry.all().size();
  ASSERT_NE(registry.find(kWna16KernelName), nullptr);
  EXPECT_EQ(registry.find("no-such-kernel"), nullptr);

  registry.add(std::make_shared<NamedKernel>("external-test-kernel"));
  EXPECT_EQ(registry.all().size(), builtins + 1);
  EXPECT_EQ(registry.find("external-test-kernel")->name(), "external-test-kernel");
  EXPECT_THROW(registry.add(std::make_shared<NamedKernel>("external-test-kernel")), std::invalid_argument);
  EXPECT_THROW(registry.add(nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::testbed
