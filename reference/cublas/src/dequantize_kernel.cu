// The dequantize kernel: one thread per weight, the recipe written out as in cublas_path.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "device_check.h"
#include "path_kernels.h"

namespace moeval::reference {
namespace detail {
namespace {

__device__ float decode16(std::uint16_t bits, Float16Kind dtype) {
  return dtype == Float16Kind::f16 ? __half2float(__ushort_as_half(bits)) : __bfloat162float(__ushort_as_bfloat16(bits));
}

__device__ std::uint16_t encode16(float v, Float16Kind dtype) {
  return dtype == Float16Kind::f16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__global__ void dequantize_kernel(DeviceQuantWeights w, std::int64_t first_expert, std::int64_t expert_count,
                                  std::uint16_t* out, int* error_flags) {
  const std::int64_t total = expert_count * w.k * w.n;
  const std::int64_t group_length = w.k / w.groups;  // used only without g_idx (then K % G == 0)
  const int limit = 1 << w.bits;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t n = i % w.n;
    const std::int64_t k = (i / w.n) % w.k;
    const std::int64_t e = first_expert + i / (w.n * w.k);
    const int u = w.codes[(e * w.k + k) * w.n + n];
    const std::int64_t g = w.g_idx != nullptr ? std::int64_t(w.g_idx[e * w.k + k]) : k / group_length;
    if (g < 0 || g >= w.groups) {
      atomicOr(error_flags, kBadGroup);
      out[i] = encode16(__int_as_float(0x7fc00000), w.dtype);  // NaN: never a silent value
      continue;
    }
    const std::int64_t gi = (e * w.groups + g) * w.n + n;
    const int z = w.zeros != nullptr ? int(w.zeros[gi]) : w.implicit_zero;
    if (u >= limit) atomicOr(error_flags, kBadCode);
    if (z >= limit) atomicOr(error_flags, kBadZero);
    // |u − z| < 2^8 and s has at most 11 significant bits: the product is exact in fp32.
    out[i] = encode16(float(u - z) * decode16(w.scales[gi], w.dtype), w.dtype);
  }
}

}  // namespace

void launch_dequantize(const DeviceQuantWeights& w, std::int64_t first_expert, std::int64_t expert_count,
                       std::uint16_t* out, int* error_flags, cudaStream_t stream) {
  const std::int64_t total = expert_count * w.k * w.n;
  if (total == 0) return;
  const int threads = 256;
  const std::int64_t blocks = std::min<std::int64_t>((total + threads - 1) / threads, 65535LL * 16);
  dequantize_kernel<<<unsigned(blocks), threads, 0, stream>>>(w, first_expert, expert_count, out, error_flags);
  kernels::check_cuda(cudaGetLastError(), "dequantize_kernel launch");
}

void validate_weights(const DeviceQuantWeights& w, const char* where) {
  const std::string at(where);
  if (w.codes == nullptr || w.scales == nullptr) throw std::invalid_argument(at + ": weights' codes and scales are required");
  // With g_idx, G may exceed K: a K shard of a row-parallel act-order layer keeps every group of the
  // layer's K while holding only some of its rows (g_idx holds global group ids).
  if (w.experts < 1 || w.k < 1 || w.n < 1 || w.groups < 1 || (w.g_idx == nullptr && w.groups > w.k)) {
    throw std::invalid_argument(at + ": weights have E = " + std::to_string(w.experts) + ", K = " + std::to_string(w.k) +
                                ", N = " + std::to_string(w.n) + ", G = " + std::to_string(w.groups) +
                                "; allowed: E, K, N >= 1 and G >= 1 (G <= K without g_idx)");
  }
  if (w.g_idx == nullptr && w.k % w.groups != 0) {
    throw std::invalid_argument(at + ": G = " + std::to_string(w.groups) + " does not divide K = " + std::to_string(w.k) +
                                " and no g_idx is given");
  }
  if (w.bits != 4 && w.bits != 8) {
    throw std::invalid_argument(at + ": code width " + std::to_string(w.bits) + " bits is not supported; allowed: 4, 8");
  }
  if (w.dtype != Float16Kind::f16 && w.dtype != Float16Kind::bf16) {
    throw std::invalid_argument(at + ": dtype code " + std::to_string(int(w.dtype)) + " is not supported; allowed: fp16, bf16");
  }
  if (w.zeros == nullptr && (w.implicit_zero < 0 || w.implicit_zero >= (1 << w.bits))) {
    throw std::invalid_argument(at + ": implicit_zero = " + std::to_string(w.implicit_zero) + " is outside the " +
                                std::to_string(w.bits) + "-bit code range");
  }
}

void throw_on_dequant_errors(int flags, const char* where) {
  if (flags == 0) return;
  std::string what;
  if (flags & kBadCode) what += " a code >= 2^bits;";
  if (flags & kBadZero) what += " a zero point >= 2^bits;";
  if (flags & kBadGroup) what += " a g_idx entry outside [0, G);";
  throw std::invalid_argument(std::string(where) + ": the weights hold" + what + " the output holds NaN there");
}

}  // namespace detail

void dequantize_on_device(const DeviceQuantWeights& w, std::uint16_t* out, cudaStream_t stream) {
  detail::validate_weights(w, "dequantize_on_device");
  const int device = detail::common_device({{w.codes, "codes"}, {w.scales, "scales"}, {out, "out"}},
                                           {{w.zeros, "zeros"}, {w.g_idx, "g_idx"}}, "dequantize_on_device");
  kernels::DeviceGuard guard(device);
  int* flags = nullptr;
  kernels::check_cuda(cudaMallocAsync(&flags, sizeof(int), stream), "cudaMallocAsync(error flags)");
  kernels::check_cuda(cudaMemsetAsync(flags, 0, sizeof(int), stream), "cudaMemsetAsync(error flags)");
  int host_flags = 0;
  try {
    detail::launch_dequantize(w, 0, w.experts, out, flags, stream);
    kernels::check_cuda(cudaMemcpyAsync(&host_flags, flags, sizeof(int), cudaMemcpyDeviceToHost, stream),
                        "cudaMemcpyAsync(error flags)");
    kernels::check_cuda(cudaStreamSynchronize(stream), "dequantize_on_device");
  } catch (...) {
    cudaFreeAsync(flags, stream);
    throw;
  }
  kernels::check_cuda(cudaFreeAsync(flags, stream), "cudaFreeAsync(error flags)");
  detail::throw_on_dequant_errors(host_flags, "dequantize_on_device");
}

}  // namespace moeval::reference
