// Every GEMM kernel of the registry as a gtest parameter: each property runs once per registered
// kernel (one ctest entry each, named after the kernel), so a kernel registered later — ours or an
// external one — joins every property without editing the tests.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::testbed {

// Registers the built-in kernels (no device is touched) and lists every registered name.
inline std::vector<std::string> registered_kernel_names() {
  register_builtin_kernels();
  std::vector<std::string> names;
  for (const auto& k : KernelRegistry::instance().all()) names.push_back(k->name());
  return names;
}

// gtest parameter names allow [A-Za-z0-9_] only.
inline std::string kernel_param_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

inline const GemmKernelUnderTest& registered_kernel(const std::string& name) {
  const auto k = KernelRegistry::instance().find(name);
  if (!k) throw std::invalid_argument("no registered kernel named '" + name + "'");
  return *k;
}

// The cases of `candidates` the kernel supports. A property must hold on at least one case of
// every kernel: a kernel that supports none of them fails the test (naming each refusal) rather
// than passing vacuously.
inline std::vector<GemmCase> supported_cases(const GemmKernelUnderTest& kernel, const std::vector<MoeProblem>& candidates) {
  std::vector<GemmCase> cases;
  std::string refusals;
  for (const MoeProblem& p : candidates) {
    GemmCase c = build_gemm_case(p);
    const std::string why = kernel.unsupported_reason(c);
    if (why.empty()) cases.push_back(std::move(c));
    else refusals += "\n  " + p.name() + ": " + why;
  }
  if (cases.empty()) ADD_FAILURE() << kernel.name() << " supports none of the property's cases:" << refusals;
  return cases;
}

}  // namespace moeval::testbed

// One instantiation of a TEST_P suite over every registered kernel.
#define MOEVAL_FOR_EVERY_KERNEL(suite) \
  INSTANTIATE_TEST_SUITE_P(Registry, suite, ::testing::ValuesIn(::moeval::testbed::registered_kernel_names()), \
                           ::moeval::testbed::kernel_param_name)
