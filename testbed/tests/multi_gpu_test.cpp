// The cuda:1 bug class as a property of every registered kernel: its buffers on device d while
// another device is current (the testbed calls every kernel with a device current that is not its
// data's: foreign_device(d) = (d + 1) mod count, see ForeignCurrentDevice), for every visible
// device d. The kernel's own entry point must make its device current (the adapters must not:
// kernel_under_test.h), pass against the reference there, hand the caller's current device back,
// and give device 0's bits on every device (on 4 or 8 GPUs, every one of them is compared).
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

TEST_P(CrossDevice, OnEveryDeviceWhileAnotherIsCurrentMatchesDeviceZeroBitwise) {
  MOEVAL_REQUIRE_GPUS(2);
  const GemmKernelUnderTest& kernel = registered_kernel(GetParam());
  const int devices = visible_devices().count;
  for (int d = 0; d < devices; ++d) {
    const int current = foreign_device(d);
    ASSERT_TRUE(current != d && current >= 0 && current < devices) << "device " << d << " would run with " << current << " current";
  }
  for (const GemmCase& c : supported_cases(kernel, cross_device_problems())) {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    const CaseResult on0 = run_gemm_case(kernel, c, 0);  // device foreign_device(0) current during the calls
    EXPECT_TRUE(on0.pass()) << "cuda:0: " << on0.summary();
    for (int d = 1; d < devices; ++d) {
      const CaseResult on_d = run_gemm_case(kernel, c, d);
      int current = -1;
      ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
      EXPECT_EQ(current, 0) << "the testbed must restore the test's current device";
      EXPECT_TRUE(on_d.pass()) << "cuda:" << d << ": " << on_d.summary();
      EXPECT_EQ(on0.output, on_d.output) << "cuda:0 and cuda:" << d << " disagree bitwise on " << c.problem.name();
    }
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
