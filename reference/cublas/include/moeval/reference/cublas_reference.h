// Host convenience over the cuBLAS path for fixtures cases: upload, run, download.
#pragma once

#include <cstdint>
#include <memory>
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

// A GemmCase uploaded to one device (unpacked codes, scales, zeros, g_idx, activations, routing,
// zeroed fp32 and 16-bit outputs): hands out the device API's arguments, e.g. for a benchmark that
// runs CublasGemmPath next to a kernel under test on the same case.
class DeviceGemmCase {
 public:
  DeviceGemmCase(const GemmCase& gemm_case, int device);
  ~DeviceGemmCase();
  DeviceGemmCase(const DeviceGemmCase&) = delete;
  DeviceGemmCase& operator=(const DeviceGemmCase&) = delete;

  int device() const { return device_; }
  // Points at this object's buffers (out_f32 and out16 included).
  const CublasGemmArgs& args() const { return args_; }
  // Downloads out_f32 and out16 (waits for the device).
  CublasGemmResult download() const;

 private:
  struct Buffers;
  int device_ = 0;
  std::unique_ptr<Buffers> buffers_;
  CublasGemmArgs args_;
};

// Runs the case's GEMM on `device` (all buffers live there; the current device is restored).
CublasGemmResult cublas_reference_gemm(const GemmCase& gemm_case, int device);

// The dequantized 16-bit weights [E][K][N] as the GPU path computes them, downloaded.
std::vector<std::uint16_t> cublas_dequantize(const QuantizedWeights& w, int device);

Float16Kind float16_kind(DType dtype);

}  // namespace moeval::reference
