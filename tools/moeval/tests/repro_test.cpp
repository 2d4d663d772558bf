// A reproduce file carries the whole case: loading it back gives the same inputs, weights,
// routing and reference outputs, bit for bit.
#include <gtest/gtest.h>

#include <filesystem>

#include "../repro.h"
#include "moeval/golden/loader.h"
#include "moeval/reference/gemm_reference.h"

namespace moeval::cli {
namespace {

TEST(Repro, WrittenCaseLoadsBackBitForBit) {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = 8;
  p.tokens = 5;
  p.topk = 2;
  p.hidden = 128;
  p.inter = 64;
  p.scheme.type = WeightType::uint4;
  p.scheme.group_size = 32;
  p.seed = 21;
  const GemmCase c = build_gemm_case(p);
  const auto expected = reference::reference_gemm(c);

  const auto dir = std::filesystem::temp_directory_path() / ("moeval-repro-test-" + std::to_string(::getpid()));
  const auto path = write_gemm_repro(dir, c, expected);
  ASSERT_EQ(path, dir / (p.name() + ".h5"));
  const auto names = golden::list_cases(path);
  ASSERT_EQ(names.size(), 1u);
  const golden::GoldenGemmCase back = golden::load_gemm_case(path, names.front());
  EXPECT_EQ(back.gemm.problem.name(), p.name());
  EXPECT_EQ(back.gemm.a, c.a);
  EXPECT_EQ(back.gemm.w.codes, c.w.codes);
  EXPECT_EQ(back.gemm.w.scales, c.w.scales);
  EXPECT_EQ(back.gemm.w.zeros, c.w.zeros);
  EXPECT_EQ(back.gemm.w.dequant, c.w.dequant);
  EXPECT_EQ(back.gemm.routing.topk_ids, c.routing.topk_ids);
  EXPECT_EQ(back.gemm.routing.topk_weights, c.routing.topk_weights);
  EXPECT_EQ(back.gemm.mul_topk_weights, c.mul_topk_weights);
  EXPECT_EQ(back.expected.y16, expected.y16);
  EXPECT_EQ(back.expected.y, expected.y);
  EXPECT_TRUE(back.layouts.count("wna16/qweight")) << "the kernel's own layout travels with the case";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moeval::cli
