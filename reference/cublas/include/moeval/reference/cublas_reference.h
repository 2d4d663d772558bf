// Host convenience over the cuBLAS path for fixtures cases: upload, run, download.
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/cublas_path.h"

namespace moeval::reference {

struct CublasGemmResult {
  std::int64_t rows = 0;            // T = tokens·topk
  std::int64_t cols = 0;            // N
  std::vector<float> out_f32;       // [T][N]
  std::vector<std::uint16_t> out16; // [T][N] in the case's activation dtype
};

// Runs the case's GEMM on `device` (all buffers live there; the current device is restored).
CublasGemmResult cublas_reference_gemm(const GemmCase& gemm_case, int device);

// The dequantized 16-bit weights [E][K][N] as the GPU path computes them, downloaded.
std::vector<std::uint16_t> cublas_dequantize(const QuantizedWeights& w, int device);

Float16Kind float16_kind(DType dtype);

}  // namespace moeval::reference
