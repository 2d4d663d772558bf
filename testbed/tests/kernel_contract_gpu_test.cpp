// Calling conventions every registered kernel must keep on a single device: called with some
// device current, it leaves that device current (a kernel may switch to its data's device inside,
// never leave the switch behind for the caller). With two or more devices the caller's device is
// not the data's (the real cuda:1 test is CrossDevice in multi_gpu_tests); with one device this
// can only check that the kernel hands device 0 back.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"
#include "registered_kernels.h"

namespace moeval::testbed {
namespace {

class KernelContract : public testing::TestWithParam<std::string> {};

TEST_P(KernelContract, RestoresTheCallersCurrentDevice) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmKernelUnderTest& kernel = registered_kernel(GetParam());
  const int caller = visible_devices().count - 1;
  for (const GemmCase& c : supported_cases(kernel, {gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16,
                                                                  Tier::exact, 16, 5, 4)})) {
    auto prepared = kernel.prepare(c, 0);
    GuardedBuffer out("out", 0, std::size_t(c.routing.topk_ids.size() * std::size_t(c.shape.n)) * 2, 2);
    ASSERT_EQ(cudaSetDevice(caller), cudaSuccess);
    prepared->run(out);
    int now = -1;
    ASSERT_EQ(cudaGetDevice(&now), cudaSuccess);
    EXPECT_EQ(now, caller) << kernel.name() << " left device " << now << " current; the caller had device " << caller;
    synchronize_device(0, kernel.name());
    // The same through the judged path, which also compares with the reference.
    const CaseResult r = run_gemm_case(kernel, c, 0);
    EXPECT_TRUE(r.pass()) << r.summary();
  }
}

MOEVAL_FOR_EVERY_KERNEL(KernelContract);

}  // namespace
}  // namespace moeval::testbed
