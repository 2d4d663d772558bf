// A gtest suite over a named matrix for ONE GemmKernelUnderTest, header-only so the testbed library
// itself does not depend on GoogleTest. The CMake function moeval_add_kernel_tests (installed with
// the package, cmake/package/MoevalKernelTests.cmake) generates the one source line that uses it:
//
//   MOEVAL_KERNEL_TEST_SUITE(my_ns::make_my_kernel, "smoke")
//
// Each case is its own gtest (and, through gtest_discover_tests, its own ctest entry) named after
// the problem. A case runs through run_gemm_case on device 0 — poisoned output, two runs, the
// reference under the kernel's declared contract, guards and unchanged inputs — and fails with the
// Verdict's summary. Without a device, and for a case the kernel declares unsupported, it SKIPS.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>

#include "moeval/fixtures/cases.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/kernel_under_test.h"
#include "moeval/testbed/matrices.h"

namespace moeval::testbed {

// gtest names allow [A-Za-z0-9_] only; a problem name has '-' in it.
inline std::string gtest_case_name(const MoeProblem& p) {
  std::string s = p.name();
  for (char& ch : s) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) ch = '_';
  }
  return s;
}

// Runs one case of the matrix against `kernel`; the body of every generated test.
inline void run_kernel_matrix_case(const GemmKernelUnderTest& kernel, const MoeProblem& problem) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase c = build_gemm_case(problem);
  if (const std::string why = kernel.unsupported_reason(c); !why.empty()) GTEST_SKIP() << "unsupported: " << why;
  const CaseResult r = run_gemm_case(kernel, c, 0);
  EXPECT_TRUE(r.pass()) << r.summary();
}

}  // namespace moeval::testbed

// FACTORY: a callable returning std::shared_ptr<const moeval::testbed::GemmKernelUnderTest>;
// MATRIX: a name of moeval::testbed::gemm_matrix_names().
#define MOEVAL_KERNEL_TEST_SUITE(FACTORY, MATRIX)                                                        \
  namespace {                                                                                           \
  class KernelMatrix : public ::testing::TestWithParam<::moeval::MoeProblem> {                          \
   protected:                                                                                           \
    static const ::moeval::testbed::GemmKernelUnderTest& kernel() {                                     \
      static const std::shared_ptr<const ::moeval::testbed::GemmKernelUnderTest> k = FACTORY();         \
      return *k;                                                                                        \
    }                                                                                                   \
  };                                                                                                    \
  TEST_P(KernelMatrix, MatchesReference) { ::moeval::testbed::run_kernel_matrix_case(kernel(), GetParam()); } \
  INSTANTIATE_TEST_SUITE_P(Matrix, KernelMatrix, ::testing::ValuesIn(::moeval::testbed::gemm_matrix(MATRIX)), \
                           [](const auto& param_info) { return ::moeval::testbed::gtest_case_name(param_info.param); }); \
  }
