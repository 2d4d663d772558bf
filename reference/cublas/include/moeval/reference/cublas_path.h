// The GPU reference path: an obviously-correct elementwise dequantize kernel, then one
// cublasGemmEx per expert (fp16/bf16 in, CUBLAS_COMPUTE_32F, fp32 out) over the gathered rows of
// that expert, scattered back to the flat routed rows.
//
// Device API: raw device pointers and small argument structs, no fixtures types, so the
// benchmark can run it next to a kernel under test on the same buffers (unpacked codes, scales,
// zeros, g_idx and routing). Every call guards the device that owns its buffers; buffers on
// different devices, host or null pointers are rejected with std::invalid_argument.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

namespace moeval::reference {

enum class Float16Kind : std::uint8_t { f16, bf16 };

// Logical quantized weights of the local experts, unpacked (one byte per code).
// Dequantization recipe (fixtures' DequantRecipe::sub_then_mul, bit for bit):
//   w16[e][k][n] = fl16((u − z)·s),  u = codes[e][k][n], g = g_idx[e][k] (or k / (K / groups)),
//   z = zeros[e][g][n] (or implicit_zero), s = scales[e][g][n]
// (u − z)·s is exact in fp32, so fl16 is the one rounding (round to nearest even).
struct DeviceQuantWeights {
  const std::uint8_t* codes = nullptr;    // [E][K][N]
  const std::uint16_t* scales = nullptr;  // [E][G][N] bits in `dtype`
  const std::uint8_t* zeros = nullptr;    // [E][G][N], or null: implicit_zero everywhere
  const std::int32_t* g_idx = nullptr;    // [E][K] group of each row, or null: contiguous groups
  std::int64_t experts = 0;               // local experts
  std::int64_t k = 0;
  std::int64_t n = 0;
  std::int64_t groups = 0;                // G (1 for channelwise); a K shard's global G (may exceed K)
  int bits = 4;                           // code width (4 or 8): codes and zeros must be < 2^bits
  int implicit_zero = 8;                  // 8 (uint4b8), 128 (uint8b128); ignored with zeros
  Float16Kind dtype = Float16Kind::bf16;
};

// Flat routing [T = tokens·topk] as the kernels receive it.
struct DeviceRouting {
  const std::int32_t* topk_ids = nullptr;      // [T] global expert ids in [0, global_experts)
  const float* topk_weights = nullptr;         // [T]
  const std::int32_t* expert_map = nullptr;    // [global_experts] local id or -1, or null: identity
  std::int64_t tokens = 0;
  std::int64_t topk = 0;
  std::int64_t global_experts = 0;
};

// out[t, n] = Σ_k a[t / a_row_divisor, k]·w16[e_t][k][n] (fp32 accumulate by cuBLAS),
// × topk_weights[t] in fp32 when mul_topk_weights; rows of non-local experts are zero.
struct CublasGemmArgs {
  const std::uint16_t* a = nullptr;  // [a_rows][K] in w.dtype
  std::int64_t a_rows = 0;
  std::int64_t a_row_divisor = 1;    // GEMM1: topk, GEMM2: 1
  bool mul_topk_weights = false;
  DeviceQuantWeights w;
  DeviceRouting routing;
  float* out_f32 = nullptr;          // [T][N] or null
  std::uint16_t* out16 = nullptr;    // [T][N] rounded to w.dtype, or null (not both null)
};

// Dequantize every local expert into out [E][K][N] on the device of the buffers, enqueued on
// `stream`; waits for it and throws std::invalid_argument if a code, zero or g_idx was out of range.
void dequantize_on_device(const DeviceQuantWeights& w, std::uint16_t* out, cudaStream_t stream);

// The whole path on one device: owns a cuBLAS handle and grow-only workspaces, so repeated runs
// (a benchmark loop) allocate nothing after the first. It times nothing itself.
class CublasGemmPath {
 public:
  explicit CublasGemmPath(int device);
  ~CublasGemmPath();
  CublasGemmPath(const CublasGemmPath&) = delete;
  CublasGemmPath& operator=(const CublasGemmPath&) = delete;

  int device() const;
  // Enqueues the path on `stream`. It synchronizes the stream twice: after reading the routing
  // (cuBLAS needs each expert's row count on the host) and at the end, to report out-of-range
  // codes, zeros or g_idx as std::invalid_argument.
  void run(const CublasGemmArgs& args, cudaStream_t stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace moeval::reference
