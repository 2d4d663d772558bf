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

std::vector<std::uint16_t> cublas_dequantize(const QuantizedWeights& w, int device) {
  kernels::DeviceGuard guard(device);
  const UploadedWeights uploaded(w);
  DeviceArray<std::uint16_t> out(std::size_t(w.experts * w.k * w.n));
  dequantize_on_device(uploaded.view, out.get(), nullptr);
  return out.download();
}

CublasGemmResult cublas_reference_gemm(const GemmCase& c, int device) {
  kernels::DeviceGuard guard(device);
  const std::int64_t t_rows = c.routing.tokens * c.routing.topk;
  CublasGemmResult result;
  result.rows = t_rows;
  result.cols = c.w.n;
  if (t_rows == 0) return result;
  const UploadedWeights weights(c.w);
  const DeviceArray<std::uint16_t> a(c.a);
  const DeviceArray<std::int32_t> ids(c.routing.topk_ids);
  const DeviceArray<float> topk_weights(c.routing.topk_weights);
  const DeviceArray<std::int32_t> expert_map(c.problem.expert_map);
  DeviceArray<float> out_f32(std::size_t(t_rows * c.w.n));
  DeviceArray<std::uint16_t> out16(std::size_t(t_rows * c.w.n));

  CublasGemmArgs args;
  args.a = a.get();
  args.a_rows = c.shape.m;
  args.a_row_divisor = c.a_row_divisor;
  args.mul_topk_weights = c.mul_topk_weights;
  args.w = weights.view;
  args.routing = {ids.get(), topk_weights.get(), expert_map.get(), c.routing.tokens, c.routing.topk, c.problem.experts};
  args.out_f32 = out_f32.get();
  args.out16 = out16.get();
  CublasGemmPath path(device);
  path.run(args, nullptr);
  result.out_f32 = out_f32.download();
  result.out16 = out16.download();
  return result;
}

}  // namespace moeval::reference
