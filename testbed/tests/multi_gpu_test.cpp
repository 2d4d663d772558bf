// The cuda:1 bug class: every buffer on device 1 while device 0 is current. The kernels must guard
// their device, pass against the reference there, and give the same bits as on device 0.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"

namespace moeval::testbed {
namespace {

TEST(MultiGpu, Wna16OnDeviceOneWhileDeviceZeroIsCurrentMatchesDeviceZeroBitwise) {
  MOEVAL_REQUIRE_GPUS(2);
  const auto kernel = make_wna16_kernel();
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
      for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
        const GemmCase c = build_gemm_case(gemm_problem(kind, type, 64, DType::bf16, tier, 64, 33, 8));
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        const CaseResult on0 = run_gemm_case(*kernel, c, 0);
        ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
        const CaseResult on1 = run_gemm_case(*kernel, c, 1);
        int current = -1;
        ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
        EXPECT_EQ(current, 0) << "a kernel call left device " << current << " current";
        EXPECT_TRUE(on0.pass()) << on0.summary();
        EXPECT_TRUE(on1.pass()) << on1.summary();
        EXPECT_EQ(on0.output, on1.output) << "devices disagree bitwise on " << c.problem.name();
      }
    }
  }
}

TEST(MultiGpu, LayerOnDeviceOne) {
  MOEVAL_REQUIRE_GPUS(2);
  MoeProblem p;
  p.experts = 64;
  p.tokens = 9;
  p.topk = 6;
  p.scheme.type = WeightType::uint4;
  p.scheme.group_size = 32;
  p.seed = 3;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const LayerResult r = run_layer_case(build_layer_case(p), 1);
  EXPECT_TRUE(r.pass()) << r.summary();
}

}  // namespace
}  // namespace moeval::testbed
