// GPU repack of GPTQ / AWQ checkpoints into Marlin tiles, and the scale / zero-point permutations
// (contract: marlin_repack.h). One thread per output word: every output word is written exactly
// once, so the result does not depend on scheduling, and no input word is read-modify-written.
#include "moeval/kernels/marlin_repack.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "moeval/kernels/same_device.h"
#include "marlin_repack_map.cuh"

namespace moeval::kernels {
namespace {

using repack::kTileK;
using repack::kTileN;

constexpr int kThreads = 256;
constexpr int kBadPerm = 1;

[[noreturn]] void reject(const char* where, const std::string& what) {
  throw std::invalid_argument(std::string(where) + ": " + what);
}

void require(bool ok, const char* where, const std::string& what) {
  if (!ok) reject(where, what);
}

void check_experts(const char* where, int experts) {
  require(experts >= 1, where, "num_experts = " + std::to_string(experts) + " must be at least 1");
}

void check_k(const char* where, std::int64_t k) {
  require(k > 0 && k % kTileK == 0, where,
          "size_k = " + std::to_string(k) + " must be a positive multiple of 16 (Marlin tiles are 16 rows of K)");
}

void check_n(const char* where, std::int64_t n) {
  require(n > 0 && n % kTileN == 0, where,
          "size_n = " + std::to_string(n) + " must be a positive multiple of 64 (Marlin tiles are 64 columns of N)");
}

void check_groups(const char* where, std::int64_t g) {
  require(g >= 1, where, "num_groups = " + std::to_string(g) + " must be at least 1 (1 = channelwise)");
}

// Byte ranges [a, a + a_bytes) and [b, b + b_bytes) must not overlap: the kernels read the input
// while other threads write the output.
void check_disjoint(const char* where, const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  require(a + in_bytes <= b || b + out_bytes <= a, where,
          "the output overlaps the input; allowed: separate buffers (the repack is not in place)");
}

unsigned grid_for(std::int64_t items) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return unsigned(std::min<std::int64_t>(blocks, 65535LL * 16));  // grid-stride loops cover the rest
}

// GPTQ → Marlin: one thread per output word; with perm, Marlin row j reads checkpoint row perm[e, j].
__global__ void gptq_kernel(const std::uint32_t* qweight, const std::int32_t* perm, std::uint32_t* out,
                            std::int64_t experts, std::int64_t K, std::int64_t N, int bits, int* error) {
  const int pf = 32 / bits;
  const std::int64_t expert_words = K * N / pf;
  const std::int64_t total = experts * expert_words;
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t e = o / expert_words;
    const std::uint32_t* expert_qweight = qweight + e * expert_words;
    const std::int32_t* expert_perm = perm != nullptr ? perm + e * K : nullptr;
    out[o] = repack::marlin_tile_word(o % expert_words, N, bits, [&](std::int64_t k, std::int64_t n) -> unsigned {
      std::int64_t src = k;
      if (expert_perm != nullptr) {
        src = expert_perm[k];
        if (src < 0 || src >= K) {
          atomicOr(error, kBadPerm);
          return 0u;
        }
      }
      return repack::gptq_code(expert_qweight, src, n, N, bits);
    });
  }
}

__global__ void awq_kernel(const std::uint32_t* qweight, std::uint32_t* out, std::int64_t experts, std::int64_t K,
                           std::int64_t N) {
  const std::int64_t expert_words = K * N / 8;
  const std::int64_t total = experts * expert_words;
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    const std::uint32_t* expert_qweight = qweight + (o / expert_words) * expert_words;
    out[o] = repack::marlin_tile_word(o % expert_words, N, 4, [&](std::int64_t k, std::int64_t n) {
      return repack::awq_code(expert_qweight, k, n, N);
    });
  }
}

__global__ void scales_kernel(const std::uint16_t* in, std::uint16_t* out, std::int64_t rows, std::int64_t N,
                              bool grouped) {
  const std::int64_t total = rows * N;
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = o / N;
    out[o] = in[row * N + repack::permuted_source(o % N, grouped)];
  }
}

__global__ void awq_zeros_kernel(const std::uint32_t* qzeros, std::uint32_t* out, std::int64_t rows, std::int64_t N) {
  const std::int64_t words_per_row = N / 8;
  const std::int64_t total = rows * words_per_row;
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    out[o] = repack::marlin_zero_word(qzeros + (o / words_per_row) * words_per_row, o % words_per_row);
  }
}

// A zeroed device flag for bad perm entries, freed on every path.
class ErrorFlag {
 public:
  explicit ErrorFlag(cudaStream_t stream) : stream_(stream) {
    check_cuda(cudaMallocAsync(&flag_, sizeof(int), stream), "marlin_repack: cudaMallocAsync(error flag)");
    const cudaError_t status = cudaMemsetAsync(flag_, 0, sizeof(int), stream);
    if (status != cudaSuccess) cudaFreeAsync(flag_, stream);
    check_cuda(status, "marlin_repack: cudaMemsetAsync(error flag)");
  }
  ~ErrorFlag() { cudaFreeAsync(flag_, stream_); }
  ErrorFlag(const ErrorFlag&) = delete;
  ErrorFlag& operator=(const ErrorFlag&) = delete;
  int* get() const { return flag_; }
  int read() const {
    int host = 0;
    check_cuda(cudaMemcpyAsync(&host, flag_, sizeof(int), cudaMemcpyDeviceToHost, stream_), "marlin_repack: read error flag");
    check_cuda(cudaStreamSynchronize(stream_), "marlin_repack: synchronize");
    return host;
  }

 private:
  cudaStream_t stream_;
  int* flag_ = nullptr;
};

}  // namespace

void gptq_to_marlin(const GptqToMarlinArgs& a) {
  constexpr const char* where = "gptq_to_marlin";
  check_experts(where, a.num_experts);
  check_k(where, a.size_k);
  check_n(where, a.size_n);
  require(a.num_bits == 4 || a.num_bits == 8, where, "num_bits = " + std::to_string(a.num_bits) + " is not supported; allowed: 4, 8");
  const std::int64_t words = std::int64_t(a.num_experts) * a.size_k * a.size_n / (32 / a.num_bits);
  require(a.qweight != nullptr && a.out != nullptr, where, "qweight and out are required (non-null)");
  check_disjoint(where, a.qweight, std::size_t(words) * 4, a.out, std::size_t(words) * 4);
  if (a.perm != nullptr) {
    check_disjoint(where, a.perm, std::size_t(a.num_experts) * std::size_t(a.size_k) * 4, a.out, std::size_t(words) * 4);
  }
  const int device = same_device(where, {{a.qweight, "qweight"}, {a.out, "out"}, {a.perm, "perm", true}});
  DeviceGuard guard(device);
  ErrorFlag error(a.stream);
  gptq_kernel<<<grid_for(words), kThreads, 0, a.stream>>>(a.qweight, a.perm, a.out, a.num_experts, a.size_k, a.size_n,
                                                          a.num_bits, error.get());
  check_cuda(cudaGetLastError(), "gptq_to_marlin: launch");
  if (error.read() != 0) {
    reject(where, "perm has an entry outside [0, size_k = " + std::to_string(a.size_k) +
                      "); allowed: per expert a permutation of 0..K-1 (the affected output words are zero)");
  }
}

void awq_to_marlin(const AwqToMarlinArgs& a) {
  constexpr const char* where = "awq_to_marlin";
  check_experts(where, a.num_experts);
  check_k(where, a.size_k);
  check_n(where, a.size_n);
  require(a.num_bits == 4, where, "num_bits = " + std::to_string(a.num_bits) + " is not supported; allowed: 4 (AWQ is 4-bit only)");
  const std::int64_t words = std::int64_t(a.num_experts) * a.size_k * a.size_n / 8;
  require(a.qweight != nullptr && a.out != nullptr, where, "qweight and out are required (non-null)");
  check_disjoint(where, a.qweight, std::size_t(words) * 4, a.out, std::size_t(words) * 4);
  const int device = same_device(where, {{a.qweight, "qweight"}, {a.out, "out"}});
  DeviceGuard guard(device);
  awq_kernel<<<grid_for(words), kThreads, 0, a.stream>>>(a.qweight, a.out, a.num_experts, a.size_k, a.size_n);
  check_cuda(cudaGetLastError(), "awq_to_marlin: launch");
  check_cuda(cudaStreamSynchronize(a.stream), "awq_to_marlin: synchronize");
}

void marlin_permute_scales(const MarlinScalesArgs& a) {
  constexpr const char* where = "marlin_permute_scales";
  check_experts(where, a.num_experts);
  check_groups(where, a.num_groups);
  check_n(where, a.size_n);
  require(a.scales != nullptr && a.out != nullptr, where, "scales and out are required (non-null)");
  const std::int64_t rows = std::int64_t(a.num_experts) * a.num_groups;
  const std::size_t bytes = std::size_t(rows) * std::size_t(a.size_n) * 2;
  check_disjoint(where, a.scales, bytes, a.out, bytes);
  const int device = same_device(where, {{a.scales, "scales"}, {a.out, "out"}});
  DeviceGuard guard(device);
  const bool grouped = marlin_scale_permutation(a.num_groups) == MarlinScalePermutation::grouped;
  scales_kernel<<<grid_for(rows * a.size_n), kThreads, 0, a.stream>>>(a.scales, a.out, rows, a.size_n, grouped);
  check_cuda(cudaGetLastError(), "marlin_permute_scales: launch");
  check_cuda(cudaStreamSynchronize(a.stream), "marlin_permute_scales: synchronize");
}

void awq_zeros_to_marlin(const AwqZerosToMarlinArgs& a) {
  constexpr const char* where = "awq_zeros_to_marlin";
  check_experts(where, a.num_experts);
  check_groups(where, a.num_groups);
  check_n(where, a.size_n);
  require(a.num_bits == 4, where, "num_bits = " + std::to_string(a.num_bits) + " is not supported; allowed: 4 (AWQ is 4-bit only)");
  require(a.qzeros != nullptr && a.out != nullptr, where, "qzeros and out are required (non-null)");
  const std::int64_t rows = std::int64_t(a.num_experts) * a.num_groups;
  const std::size_t bytes = std::size_t(rows) * std::size_t(a.size_n / 8) * 4;
  check_disjoint(where, a.qzeros, bytes, a.out, bytes);
  const int device = same_device(where, {{a.qzeros, "qzeros"}, {a.out, "out"}});
  DeviceGuard guard(device);
  awq_zeros_kernel<<<grid_for(rows * (a.size_n / 8)), kThreads, 0, a.stream>>>(a.qzeros, a.out, rows, a.size_n);
  check_cuda(cudaGetLastError(), "awq_zeros_to_marlin: launch");
  check_cuda(cudaStreamSynchronize(a.stream), "awq_zeros_to_marlin: synchronize");
}

}  // namespace moeval::kernels
