#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "moeval/bench/ceilings.h"
#include "moeval/bench/device_fill.h"
#include "moeval/bench/event_timer.h"
#include "moeval/bench/timing_kernels.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/marlin_wgmma_rate.h"

namespace moeval::bench {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(std::size_t count) { kernels::check_cuda(cudaMalloc(&ptr, count * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace

Ceilings measure_ceilings(int repeats, L2Flush flush) {
  cudaStream_t stream = nullptr;
  kernels::check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  EventTimer timer(stream, flush);
  Ceilings c;
  c.empty_kernel_s = timer.median_seconds([&] { launch_empty_kernel(stream); }, 2, repeats);
  {
    const std::size_t bytes = std::size_t{2} << 30;  // 2 GiB each way
    DeviceBuffer<std::uint8_t> src(bytes), dst(bytes);
    fill_random_bytes(src.ptr, static_cast<std::int64_t>(bytes), 1, stream);
    const double s = timer.median_seconds(
        [&] { kernels::check_cuda(cudaMemcpyAsync(dst.ptr, src.ptr, bytes, cudaMemcpyDeviceToDevice, stream), "copy"); }, 2,
        repeats);
    c.copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / s;  // read + write
  }
  {
    const int n = 8192;
    DeviceBuffer<std::uint16_t> a(std::size_t(n) * n), b(std::size_t(n) * n), out(std::size_t(n) * n);
    fill_random_activations(a.ptr, std::int64_t(n) * n, 2, stream);
    fill_random_activations(b.ptr, std::int64_t(n) * n, 3, stream);
    cublasHandle_t handle = nullptr;
    check_cublas(cublasCreate(&handle), "cublasCreate");
    check_cublas(cublasSetStream(handle, stream), "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    const double s = timer.median_seconds(
        [&] {
          check_cublas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, CUDA_R_16BF, n, b.ptr, CUDA_R_16BF,
                                    n, &zero, out.ptr, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
        },
        2, repeats);
    cublasDestroy(handle);
    c.dense_flops_per_s = 2.0 * n * double(n) * n / s;
  }
  kernels::check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  kernels::MarlinWgmmaRateArgs k_loop;  // bf16 uint4b8, as the bench's weights
  kernels::check_cuda(cudaGetDevice(&k_loop.device), "cudaGetDevice");
  c.marlin_k_loop_skipped = kernels::marlin_wgmma_k_loop_unavailable(k_loop.device);
  if (c.marlin_k_loop_skipped.empty()) {
    k_loop.repeats = repeats;
    k_loop.rows = 64;
    c.marlin_k_loop_64 = kernels::marlin_wgmma_k_loop_rate(k_loop);
    k_loop.rows = 128;
    c.marlin_k_loop_128 = kernels::marlin_wgmma_k_loop_rate(k_loop);
    k_loop.rows = 16;
    c.marlin_k_loop_16 = kernels::marlin_wgmma_k_loop_rate(k_loop);
    k_loop.rows = 32;
    c.marlin_k_loop_32 = kernels::marlin_wgmma_k_loop_rate(k_loop);
  }
  return c;
}

}  // namespace moeval::bench
