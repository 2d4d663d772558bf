// The cuda:1 bug class for the cuBLAS path: every buffer on device 1 while device 0 is current.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "cublas_agreement.h"
#include "moeval/kernels/device_info.h"
#include "moeval/reference/cublas_reference.h"
#include "moeval/testbed/devices.h"

namespace moeval {
namespace {

TEST(CublasReferenceMultiGpu, BuffersOnDevice1WhileDevice0IsCurrent) {
  MOEVAL_REQUIRE_GPUS(2);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  for (std::int64_t experts : {8, 256}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (QuantScheme scheme : {QuantScheme{WeightType::uint4b8, 128}, QuantScheme{WeightType::uint4b8, 64, true},
                                 QuantScheme{WeightType::uint4, 32}}) {
        scheme.act = act;
        const GemmCase c = build_gemm_case(testing::agreement_problem(ProblemKind::gemm1, scheme, experts));
        SCOPED_TRACE(c.problem.name());
        testing::expect_cublas_agrees_with_cpu(c, 1);
        int current = -1;
        ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
        EXPECT_EQ(current, 0) << "the path must restore the caller's device";
      }
    }
  }
}

TEST(CublasReferenceMultiGpu, BuffersOnAnotherDeviceThanThePathAreRejected) {
  MOEVAL_REQUIRE_GPUS(2);
  std::uint8_t* codes = nullptr;
  std::uint16_t* scales = nullptr;
  std::uint16_t* out = nullptr;
  {
    kernels::DeviceGuard on1(1);
    ASSERT_EQ(cudaMalloc(&codes, 32), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&scales, 16), cudaSuccess);
  }
  ASSERT_EQ(cudaMalloc(&out, 64), cudaSuccess);  // on device 0
  reference::DeviceQuantWeights w;
  w.codes = codes;
  w.scales = scales;
  w.experts = 1;
  w.k = 4;
  w.n = 8;
  w.groups = 1;
  try {
    reference::dequantize_on_device(w, out, nullptr);
    ADD_FAILURE() << "mixed devices must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("all buffers must share one device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaFree(out), cudaSuccess);
  kernels::DeviceGuard on1(1);
  EXPECT_EQ(cudaFree(codes), cudaSuccess);
  EXPECT_EQ(cudaFree(scales), cudaSuccess);
}

}  // namespace
}  // namespace moeval
