#include "gpu_reference.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu_square.h"
#include "moeval/kernels/device_info.h"
#include "moeval/reference/cublas_reference.h"
#include "moeval/reference/routed_rows.h"

namespace moeval::cli {
namespace {

using kernels::check_cuda;

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("GPU reference: ") + what + ": " + cublasGetStatusString(status));
  }
}

// A grow-only device array of T on the current device.
template <typename T>
class DeviceScratch {
 public:
  DeviceScratch() = default;
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  ~DeviceScratch() { cudaFree(ptr_); }
  T* reserve(std::size_t count) {
    if (count > size_) {
      cudaFree(ptr_);
      ptr_ = nullptr;
      size_ = 0;
      check_cuda(cudaMalloc(&ptr_, count * sizeof(T)), "GPU reference: cudaMalloc");
      size_ = count;
    }
    return ptr_;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// Makes `device` current for the scope and gives the caller's device back.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~CurrentDevice() { cudaSetDevice(previous_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};

class CublasHandle {
 public:
  CublasHandle() { check_cublas(cublasCreate(&handle_), "cublasCreate"); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::vector<double> gpu_statistic_s(const GemmCase& c, int device) {
  const QuantizedWeights& w = c.w;
  const std::int64_t K = w.k, N = w.n;
  const bool bf16 = c.problem.scheme.act == DType::bf16;
  const auto routed = reference::RoutedRows::from_topk(c.routing, c.problem, c.a_row_divisor);
  std::vector<double> s(std::size_t(routed.output_rows() * N), 0.0);
  // Σ of K non-negative rounded fp32 products: relative error below K·2^-24; enlarge so S is never low.
  const double enlarge = 1.0 + 2.0 * double(K) * 0x1p-24;

  const CurrentDevice current(device);
  const CublasHandle handle;
  DeviceScratch<std::uint16_t> w16, a16;
  DeviceScratch<float> w2, a2, out;
  std::vector<std::uint16_t> a_rows;
  std::vector<float> sums;
  const auto rows = routed.rows();  // sorted by local expert
  for (std::size_t first = 0; first < rows.size();) {
    const std::int32_t e = rows[first].expert;
    std::size_t last = first;
    while (last < rows.size() && rows[last].expert == e) ++last;
    const std::int64_t R = std::int64_t(last - first);
    // The expert's 16-bit weights [K][N] and its gathered A rows [R][K], squared into fp32.
    const std::size_t kn = std::size_t(K * N);
    check_cuda(cudaMemcpy(w16.reserve(kn), w.dequant.data() + std::size_t(e) * kn, kn * 2, cudaMemcpyHostToDevice),
               "GPU reference: upload of the weights");
    square_16_to_f32(w16.reserve(kn), w2.reserve(kn), std::int64_t(kn), bf16, nullptr);
    a_rows.resize(std::size_t(R * K));
    for (std::int64_t r = 0; r < R; ++r) {
      const std::uint16_t* src = c.a.data() + std::size_t(rows[first + std::size_t(r)].a_row * K);
      std::copy(src, src + K, a_rows.begin() + std::ptrdiff_t(r * K));
    }
    check_cuda(cudaMemcpy(a16.reserve(a_rows.size()), a_rows.data(), a_rows.size() * 2, cudaMemcpyHostToDevice),
               "GPU reference: upload of the activations");
    square_16_to_f32(a16.reserve(a_rows.size()), a2.reserve(a_rows.size()), std::int64_t(a_rows.size()), bf16, nullptr);
    check_cuda(cudaGetLastError(), "GPU reference: square kernel");
    // Row-major out[R][N] = a2[R][K] · w2[K][N] is column-major out^T = w2^T · a2^T.
    const float one = 1.0f, zero = 0.0f;
    check_cublas(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(R), int(K), &one, w2.reserve(kn),
                              CUDA_R_32F, int(N), a2.reserve(a_rows.size()), CUDA_R_32F, int(K), &zero,
                              out.reserve(std::size_t(R * N)), CUDA_R_32F, int(N), CUBLAS_COMPUTE_32F_PEDANTIC,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx of the squares");
    sums.resize(std::size_t(R * N));
    check_cuda(cudaMemcpy(sums.data(), out.reserve(std::size_t(R * N)), sums.size() * 4, cudaMemcpyDeviceToHost),
               "GPU reference: download of the sums of squares");
    for (std::int64_t r = 0; r < R; ++r) {
      const auto& row = rows[first + std::size_t(r)];
      const double weight = c.mul_topk_weights ? std::fabs(double(row.weight)) : 1.0;
      for (std::int64_t n = 0; n < N; ++n) {
        const double sum = sums[std::size_t(r * N + n)];
        if (!std::isfinite(sum)) {
          throw std::runtime_error("GPU reference: the sum of squares of output row " + std::to_string(row.out_row) +
                                   ", column " + std::to_string(n) + " is not finite in fp32 (inputs too large for "
                                   "the GPU statistic); judge this case with the CPU reference");
        }
        s[std::size_t(row.out_row * N + n)] = weight * std::sqrt(sum * enlarge);
      }
    }
    first = last;
  }
  return s;
}

reference::ReferenceOutput reference_from_fp32_sums(const GemmCase& c, const std::vector<float>& y, std::vector<double> s) {
  const auto routed = reference::RoutedRows::from_topk(c.routing, c.problem, c.a_row_divisor);
  const std::int64_t rows = routed.output_rows();
  if (y.size() != std::size_t(rows * c.w.n) || s.size() != y.size()) {
    throw std::invalid_argument("GPU reference: " + std::to_string(y.size()) + " outputs and " + std::to_string(s.size()) +
                                " statistics for a [" + std::to_string(rows) + "][" + std::to_string(c.w.n) + "] output");
  }
  // Reduction length 4K: the accumulation term doubled for the reference's own fp32 sum (header).
  reference::ReferenceOutput out(rows, c.w.n, c.problem.scheme.act, 4 * c.w.k);
  for (std::size_t i = 0; i < out.y.size(); ++i) out.y[i] = double(y[i]);
  out.round_outputs();
  out.contract = reference::NumericsContract{};
  out.rounding = reference::rounding_model(out.contract, c.mul_topk_weights);
  out.s = std::move(s);
  return out;
}

reference::ReferenceOutput gpu_reference_gemm(const GemmCase& c, int device) {
  const reference::CublasGemmResult y = reference::cublas_reference_gemm(c, device);
  return reference_from_fp32_sums(c, y.out_f32, gpu_statistic_s(c, device));
}

}  // namespace moeval::cli
