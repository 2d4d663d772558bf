// The cuda:1 bug class as a property of every registered kernel: its buffers on device 1 while
// device 0 is current (and on device 0 while device 1 is current — the testbed calls every kernel
// with a device current that is not its data's, see ForeignCurrentDevice). The kernel's own entry
// point must make its device current (the adapters must not: kernel_under_test.h), pass against
// the reference there, hand the caller's current device back, and give the same bits on both.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "cross_device_problems.h"
#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "registered_kernels.h"

namespace moeval::testbed {
namespace {

class CrossDevice : public testing::TestWithParam<std::string> {};

TEST_P(CrossDevice, OnDeviceOneWhileDeviceZeroIsCurrentMatchesDeviceZeroBitwise) {
  MOEVAL_REQUIRE_GPUS(2);
  const GemmKernelUnderTest& kernel = registered_kernel(GetParam());
  ASSERT_EQ(foreign_device(1), 0);
  ASSERT_EQ(foreign_device(0), 1);
  for (const GemmCase& c : supported_cases(kernel, cross_device_problems())) {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    const CaseResult on0 = run_gemm_case(kernel, c, 0);  // device 1 current during the calls
    const CaseResult on1 = run_gemm_case(kernel, c, 1);  // device 0 current during the calls
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "the testbed must restore the test's current device";
    EXPECT_TRUE(on0.pass()) << on0.summary();
    EXPECT_TRUE(on1.pass()) << on1.summary();
    EXPECT_EQ(on0.output, on1.output) << "devices disagree bitwise on " << c.problem.name();
  }
}

MOEVAL_FOR_EVERY_KERNEL(CrossDevice);

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
