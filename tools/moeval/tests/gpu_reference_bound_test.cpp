// The host half of the GPU reference (gpu_reference.h) on the CPU: a reference assembled from an
// fp32-accumulated y (what cuBLAS returns; computed here in plain fp32 loops) and the exact S keeps
// a correct fp32 kernel and the exactly rounded output inside the widened bound, and still fails
// a kernel with one wrong scale (the tolerance tests' simulated kernels), over GEMM1 and GEMM2
// (routing weights), both dtypes and K up to 1024.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gemm_config.h"
#include "gpu_reference.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/reference/routed_rows.h"
#include "moeval/tolerance/compare.h"
#include "simulated_kernel.h"

namespace moeval::cli {
namespace {

using test_support::GemmConfig;

GemmCase bound_case_of(const GemmConfig& cfg) { return build_gemm_case(test_support::small_problem(cfg, {4, 16, 2, 5})); }

// y as an fp32 GEMM returns it: products of 16-bit values (exact in fp32) summed in fp32, then the
// routing weight multiplied in fp32.
std::vector<float> fp32_sums(const GemmCase& c) {
  const auto routed = reference::RoutedRows::from_topk(c.routing, c.problem, c.a_row_divisor);
  const std::int64_t K = c.w.k, N = c.w.n;
  std::vector<float> y(std::size_t(routed.output_rows() * N), 0.0f);
  for (const auto& row : routed.rows()) {
    for (std::int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) {
        acc += float(to_double(c.a[std::size_t(row.a_row * K + k)], c.problem.scheme.act)) *
               float(to_double(c.w.dequant[c.w.code_index(row.expert, k, n)], c.problem.scheme.act));
      }
      y[std::size_t(row.out_row * N + n)] = c.mul_topk_weights ? acc * row.weight : acc;
    }
  }
  return y;
}

class GpuReferenceBound : public ::testing::TestWithParam<GemmConfig> {};

TEST_P(GpuReferenceBound, KeepsCorrectKernelsInAndAWrongScaleOut) {
  const GemmCase c = bound_case_of(GetParam());
  const reference::ReferenceOutput exact = reference::reference_gemm(c);
  const reference::ReferenceOutput ref = reference_from_fp32_sums(c, fp32_sums(c), exact.s);
  EXPECT_EQ(ref.reduction_length, 4 * exact.reduction_length);
  const auto judge = [&](const std::vector<std::uint16_t>& out) {
    return tolerance::compare(Tier::bounded, reference::Matrix16{out, ref.rows, ref.cols, ref.dtype}, ref);
  };
  const tolerance::Verdict rounded = judge(exact.y16);
  EXPECT_TRUE(rounded.pass()) << "the exact y rounded once: " << rounded.summary();
  const tolerance::Verdict fp32_kernel = judge(testing::simulate_gemm(c));
  EXPECT_TRUE(fp32_kernel.pass()) << "a correct fp32 kernel: " << fp32_kernel.summary();
  const tolerance::Verdict reversed = judge(testing::simulate_gemm(c, testing::Accumulator::fp32_reverse));
  EXPECT_TRUE(reversed.pass()) << "a correct kernel summing in another order: " << reversed.summary();
  // One wrong scale: the expert with most rows, group 1, a column whose neighbour's scale differs.
  std::vector<int> rows(std::size_t(c.w.experts), 0);
  for (std::int32_t e : c.routing.topk_ids) ++rows[std::size_t(e)];
  const auto e = std::int32_t(std::max_element(rows.begin(), rows.end()) - rows.begin());
  std::int64_t n = 0;
  while (n + 2 < c.w.n && std::fabs(to_double(c.w.scales[c.w.group_index(e, 1, n + 1)], c.problem.scheme.act) /
                                        to_double(c.w.scales[c.w.group_index(e, 1, n)], c.problem.scheme.act) - 1.0) < 0.25) {
    ++n;
  }
  const tolerance::Verdict wrong = judge(testing::simulate_gemm(testing::with_neighbour_scale(c, e, 1, n)));
  EXPECT_FALSE(wrong.pass()) << "one wrong scale in column " << n << ": " << wrong.summary();
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuReferenceBound,
                         ::testing::Values(GemmConfig{ProblemKind::gemm1, DType::bf16, 512}, GemmConfig{ProblemKind::gemm2, DType::bf16, 512},
                                           GemmConfig{ProblemKind::gemm1, DType::f16, 1024}, GemmConfig{ProblemKind::gemm2, DType::f16, 1024}),
                         test_support::gemm_config_name);

TEST(GpuReferenceBound, SizesThatDoNotMatchTheCaseAreRefused) {
  const GemmCase c = bound_case_of({ProblemKind::gemm1, DType::bf16, 512});
  EXPECT_THROW(reference_from_fp32_sums(c, std::vector<float>(7), std::vector<double>(7)), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::cli
