// The GPU reference of the real-size cases (gpu_reference.h) on small cases where the CPU's fp64
// reference is there to judge it: S equals the CPU's S to fp32 summation accuracy and never less;
// y is within one accumulation term of the exact y; the CPU's correctly rounded output passes
// against it (the widened bound keeps a correct kernel in); one output off by a wrong scale's
// factor still fails (the widened bound keeps the bug out); a correct kernel passes. Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gemm_config.h"
#include "gpu_reference.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/kernel_under_test.h"
#include "moeval/tolerance/compare.h"

namespace moeval::cli {
namespace {

using test_support::GemmConfig;

MoeProblem problem_of(const GemmConfig& c) { return test_support::small_problem(c, {16, 64, 4, 7}); }

class GpuReference : public ::testing::TestWithParam<GemmConfig> {};

TEST_P(GpuReference, AgreesWithTheCpuReferenceAndKeepsTheBoundSharp) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase c = build_gemm_case(problem_of(GetParam()));
  const reference::ReferenceOutput cpu = reference::reference_gemm(c);
  const reference::ReferenceOutput gpu = gpu_reference_gemm(c, 0);
  ASSERT_EQ(gpu.rows, cpu.rows);
  ASSERT_EQ(gpu.cols, cpu.cols);
  EXPECT_EQ(gpu.reduction_length, 4 * cpu.reduction_length) << "the accumulation term doubled";
  const double k = double(cpu.reduction_length);
  for (std::size_t i = 0; i < cpu.y.size(); ++i) {
    ASSERT_GE(gpu.s[i], cpu.s[i]) << "S never under-stated, element " << i;
    ASSERT_LE(gpu.s[i], cpu.s[i] * (1 + 4 * k * 0x1p-24) + 1e-300) << "element " << i;
    ASSERT_LE(std::fabs(gpu.y[i] - cpu.y[i]), 12 * 0x1p-24 * std::sqrt(k) * cpu.s[i] + 1e-300)
        << "cuBLAS's fp32 sum within one accumulation term, element " << i;
  }
  // The exact y rounded once is what a perfect kernel returns: it passes against the GPU reference.
  const tolerance::Verdict perfect = tolerance::compare(Tier::bounded, cpu.as_matrix16(), gpu);
  EXPECT_TRUE(perfect.pass()) << perfect.summary();
  // One output scaled by 1 + 1/16 (a wrong scale of one group moves an output by about that much
  // of its group's share): still caught under the widened bound.
  std::size_t worst = 0;
  for (std::size_t i = 0; i < cpu.y.size(); ++i) worst = std::fabs(cpu.y[i]) > std::fabs(cpu.y[worst]) ? i : worst;
  std::vector<std::uint16_t> wrong = cpu.y16;
  wrong[worst] = round_to_bits(cpu.y[worst] * (1 + 1.0 / 16), cpu.dtype);
  const tolerance::Verdict caught =
      tolerance::compare(Tier::bounded, reference::Matrix16{wrong, cpu.rows, cpu.cols, cpu.dtype}, gpu);
  EXPECT_FALSE(caught.pass()) << caught.summary();
  // A correct kernel judged by the GPU reference passes.
  testbed::register_builtin_kernels();
  for (const auto& kernel : testbed::KernelRegistry::instance().all()) {
    if (!kernel->unsupported_reason(c).empty()) continue;
    const auto r = testbed::run_gemm_case(*kernel, c, 0, &gpu);
    EXPECT_TRUE(r.pass()) << r.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuReference,
                         ::testing::Values(GemmConfig{ProblemKind::gemm1, DType::bf16, 512}, GemmConfig{ProblemKind::gemm2, DType::bf16, 512},
                                           GemmConfig{ProblemKind::gemm1, DType::f16, 2048}, GemmConfig{ProblemKind::gemm2, DType::f16, 2048}),
                         test_support::gemm_config_name);

}  // namespace
}  // namespace moeval::cli
