#include "moeval/reference/cublas_reference.h"

#include <stdexcept>
#include <string>

#include "device_array.h"
#include "moeval/kernels/device_info.h"

namespace moeval::reference {
namespace {

using detail::DeviceArray;

// The weights uploaded unpacked, with the descriptor pointing at them.
struct UploadedWeights {
  DeviceArray<std::uint8_t> codes, zeros;
  DeviceArray<std::uint16_t> scales;
  DeviceArray<std::int32_t> g_idx;
  DeviceQuantWeights view;

  explicit UploadedWeights(const QuantizedWeights& w)
      : codes(w.codes), zeros(w.zeros), scales(w.scales), g_idx(w.g_idx) {
    view.codes = codes.get();
    view.scales = scales.get();
    view.zeros = zeros.get();
    view.g_idx = g_idx.get();
    view.experts = w.experts;
    view.k = w.k;
    view.n = w.n;
    view.groups = w.groups();
    view.bits = bits_of(w.scheme.type);
    view.implicit_zero = implicit_zero(w.scheme.type);
    view.dtype = float16_kind(w.scheme.act);
  }
};

}  // namespace

Float16Kind float16_kind(DType dtype) {
  switch (dtype) {
    case DType::f16: return Float16Kind::f16;
    case DType::bf16: return Float16Kind::bf16;
  }
  throw std::invalid_argument("float16_kind: dtype code " + std::to_string(int(dtype)) + " is not supported; allowed: fp16, bf16");
}

struct DeviceGemmCase::Buffers {
  std::int64_t rows;
  std::int64_t cols;
  UploadedWeights weights;
  DeviceArray<std::uint16_t> a;
  DeviceArray<std::int32_t> ids;
  DeviceArray<float> topk_weights;
  DeviceArray<std::int32_t> expert_map;
  DeviceArray<float> out_f32;
  DeviceArray<std::uint16_t> out16;

  explicit Buffers(const GemmCase& c)
      : rows(c.routing.tokens * c.routing.topk),
        cols(c.w.n),
        weights(c.w),
        a(c.a),
        ids(c.routing.topk_ids),
        topk_weights(c.routing.topk_weights),
        expert_map(c.problem.expert_map),
        out_f32(std::size_t(rows * cols)),
        out16(std::size_t(rows * cols)) {}
};

DeviceGemmCase::DeviceGemmCase(const GemmCase& c, int device) : device_(device) {
  kernels::DeviceGuard guard(device);
  buffers_ = std::make_unique<Buffers>(c);
  const Buffers& b = *buffers_;
  const std::size_t out_elements = std::size_t(b.rows * b.cols);
  if (out_elements > 0) {
    kernels::check_cuda(cudaMemset(b.out_f32.get(), 0, out_elements * sizeof(float)), "zero out_f32");
    kernels::check_cuda(cudaMemset(b.out16.get(), 0, out_elements * sizeof(std::uint16_t)), "zero out16");
  }
  args_.a = b.a.get();
  args_.a_rows = c.shape.m;
  args_.a_row_divisor = c.a_row_divisor;
  args_.mul_topk_weights = c.mul_topk_weights;
  args_.w = b.weights.view;
  args_.routing = {b.ids.get(), b.topk_weights.get(), b.expert_map.get(), c.routing.tokens, c.routing.topk,
                   c.problem.experts};
  args_.out_f32 = b.out_f32.get();
  args_.out16 = b.out16.get();
}

DeviceGemmCase::~DeviceGemmCase() {
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device_);  // the buffers belong to this device
  buffers_.reset();
  cudaSetDevice(previous);
}

CublasGemmResult DeviceGemmCase::download() const {
  kernels::DeviceGuard guard(device_);
  return CublasGemmResult{buffers_->rows, buffers_->cols, buffers_->out_f32.download(), buffers_->out16.download()};
}

std::vector<std::uint16_t> cublas_dequantize(const QuantizedWeights& w, int device) {
  kernels::DeviceGuard guard(device);
  const UploadedWeights uploaded(w);
  DeviceArray<std::uint16_t> out(std::size_t(w.experts * w.k * w.n));
  dequantize_on_device(uploaded.view, out.get(), nullptr);
  return out.download();
}

CublasGemmResult cublas_reference_gemm(const GemmCase& c, int device) {
  const DeviceGemmCase uploaded(c, device);
  CublasGemmPath path(device);
  path.run(uploaded.args(), nullptr);
  return uploaded.download();
}

}  // namespace moeval::reference
