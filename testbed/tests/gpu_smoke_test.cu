// The GPU tier's first brick: every visible device answers, runs a kernel and opens cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "moeval/kernels/device_info.h"
#include "moeval/testbed/devices.h"

namespace moeval {
namespace {

__global__ void iota_squared(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * i;
}

TEST(GpuSmoke, EveryDeviceRunsAKernelAndCublas) {
  MOEVAL_REQUIRE_GPUS(1);
  const int count = testbed::visible_devices().count;
  for (int d = 0; d < count; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    kernels::DeviceGuard guard(d);
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", d, prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, double(prop.totalGlobalMem) / (1u << 30));

    constexpr int n = 1000;
    int* buf = nullptr;
    ASSERT_EQ(cudaMalloc(&buf, n * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(buf, 0xFF, n * sizeof(int)), cudaSuccess);  // poison: -1 everywhere
    iota_squared<<<(n + 255) / 256, 256>>>(buf, n);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::vector<int> host(n);
    ASSERT_EQ(cudaMemcpy(host.data(), buf, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], i * i) << "element " << i;
    EXPECT_EQ(kernels::device_of(buf, "buf"), d);
    ASSERT_EQ(cudaFree(buf), cudaSuccess);

    cublasHandle_t handle = nullptr;
    ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
    int version = 0;
    EXPECT_EQ(cublasGetVersion(handle, &version), CUBLAS_STATUS_SUCCESS);
    EXPECT_GT(version, 0);
    EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  }
}

TEST(GpuSmoke, DeviceOfRejectsHostAndNullPointers) {
  MOEVAL_REQUIRE_GPUS(1);
  int on_stack = 0;
  EXPECT_THROW(kernels::device_of(nullptr, "null"), std::invalid_argument);
  EXPECT_THROW(kernels::device_of(&on_stack, "host"), std::invalid_argument);
}

}  // namespace
}  // namespace moeval
