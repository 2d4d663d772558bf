// Without a GPU: the installed package's matrix, the adapter's declarations, and the CPU reference
// judged by the comparator (a kernel that returned the reference's own rounding passes; one whose
// output row is dropped fails).
#include <gtest/gtest.h>

#include "external_wna16.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/matrices.h"
#include "moeval/tolerance/compare.h"

TEST(Consumer, SmokeMatrixBuildsAndIsJudged) {
  const auto kernel = consumer::make_external_wna16();
  const auto problems = moeval::testbed::gemm_matrix("smoke");
  ASSERT_FALSE(problems.empty());
  const moeval::GemmCase c = moeval::build_gemm_case(problems.front());
  EXPECT_EQ(kernel->unsupported_reason(c), "");
  const auto ref = moeval::reference::reference_gemm(c, kernel->contract());
  EXPECT_TRUE(moeval::tolerance::compare(c.problem.tier, ref.as_matrix16(), ref).pass());
  std::vector<std::uint16_t> dropped = ref.y16;
  std::fill_n(dropped.begin(), ref.cols, std::uint16_t(0));
  const moeval::reference::Matrix16 bad{dropped, ref.rows, ref.cols, ref.dtype};
  EXPECT_FALSE(moeval::tolerance::compare(c.problem.tier, bad, ref).pass());
}
