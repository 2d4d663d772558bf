#include "moeval/testbed/marlin_kernel.h"

#include <string>

#include "moeval/testbed/dtype.h"

namespace moeval::testbed {
namespace {

class MarlinKernel final : public GemmKernelUnderTest {
 public:
  explicit MarlinKernel(MarlinKernelOptions options) : options_(options) {}
  std::string name() const override {
    std::string s = kMarlinKernelName;
    if (options_.block_size != 0) s += "-B" + std::to_string(options_.block_size);
    if (options_.scale_order) s += "-forced-" + std::string(layouts::to_string(*options_.scale_order)) + "-scales";
    return s;
  }
  std::string unsupported_reason(const GemmCase& c) const override { return marlin_unsupported_reason(c.w); }
  std::unique_ptr<PreparedGemm> prepare(const GemmCase& c, int device) const override {
    return std::make_unique<PreparedMarlin>(c, device, options_);
  }

 private:
  MarlinKernelOptions options_;
};

}  // namespace

std::string marlin_unsupported_reason(const QuantizedWeights& w) {
  const QuantScheme& s = w.scheme;
  if (s.act_order && has_zero_point(s.type)) {
    return "act-order with zero points: the Marlin kernel's act-order path has no zero-point loader";
  }
  if (w.k % 16 != 0) return "K = " + std::to_string(w.k) + " is not a multiple of 16 (Marlin tile rows)";
  if (w.n % 64 != 0) return "N = " + std::to_string(w.n) + " is not a multiple of 64 (Marlin tile columns)";
  const bool k_shard = s.act_order && !s.is_k_full;  // rows find their group through g_idx
  if (s.group_size != kChannelwise && !k_shard && w.k % s.group_size != 0) {
    return "K = " + std::to_string(w.k) + " is not a multiple of group size " + std::to_string(s.group_size);
  }
  return {};
}

MarlinDeviceWeights::MarlinDeviceWeights(const std::string& name, const QuantizedWeights& w, int device,
                                         const layouts::MarlinPackOptions& options) {
  const layouts::MarlinWeights packed = layouts::pack_marlin(w, options);
  buffers_.reserve(5);
  const auto& qweight = buffers_.emplace_back(GuardedBuffer::upload(name + ".qweight", device, packed.qweight));
  const auto& scales = buffers_.emplace_back(GuardedBuffer::upload(name + ".scales", device, packed.scales));
  view_.qweight = qweight.as<std::uint32_t>();
  view_.scales = scales.data();
  if (!packed.zeros.empty()) view_.zeros = buffers_.emplace_back(GuardedBuffer::upload(name + ".zeros", device, packed.zeros)).as<std::uint32_t>();
  if (!packed.g_idx.empty()) view_.g_idx = buffers_.emplace_back(GuardedBuffer::upload(name + ".g_idx", device, packed.g_idx)).as<std::int32_t>();
  if (!packed.perm.empty()) view_.perm = buffers_.emplace_back(GuardedBuffer::upload(name + ".perm", device, packed.perm)).as<std::int32_t>();
  view_.num_experts = int(w.experts);
  view_.type = to_marlin_weight_type(w.scheme.type);
  view_.group_size = w.scheme.group_size;
  // The weights' group count: with a K shard, the layer's global count (every group's scales stay
  // on the rank; its rows find theirs through g_idx).
  view_.num_groups = int(w.groups());
  view_.act_order = w.scheme.act_order;
  view_.is_k_full = w.scheme.is_k_full;
}

std::vector<const GuardedBuffer*> MarlinDeviceWeights::buffers() const {
  std::vector<const GuardedBuffer*> all;
  for (const auto& b : buffers_) all.push_back(&b);
  return all;
}

PreparedMarlin::PreparedMarlin(const GemmCase& c, int device, const MarlinKernelOptions& options)
    : weights_("w", c.w, device, layouts::MarlinPackOptions{options.scale_order}),
      a_(GuardedBuffer::upload("a", device, c.a)),
      routing_(c, device, options.block_size, kernels::MoeWeightFormat::marlin) {
  gemm_.a = a_.data();
  gemm_.weights = weights_.view();
  gemm_.blocks = routing_.blocks();
  gemm_.shape = {c.shape.n, c.shape.k};
  gemm_.top_k = int(c.a_row_divisor);
  gemm_.dtype = to_kernel_dtype(c.w.scheme.act);
  gemm_.topk_weights = routing_.topk_weights();
  gemm_.mul_topk_weights = c.mul_topk_weights;
  // Exactly the documented size (16-bit gathered activations with act-order): an overrun hits a guard.
  workspace_.emplace("marlin_workspace", device, kernels::marlin_moe_workspace_bytes(gemm_), 2);
  gemm_.workspace = workspace_->data();
  gemm_.workspace_bytes = workspace_->bytes();
}

void PreparedMarlin::run(GuardedBuffer& out) {
  gemm_.c = out.data();
  routing_.align();
  kernels::marlin_moe(gemm_);
}

std::vector<const GuardedBuffer*> PreparedMarlin::buffers() const {
  std::vector<const GuardedBuffer*> all = weights_.buffers();
  all.push_back(&a_);
  for (const GuardedBuffer* b : routing_.buffers()) all.push_back(b);
  all.push_back(&*workspace_);
  return all;
}

kernels::MarlinMoeArgs PreparedMarlin::aligned_args() {
  routing_.align();
  return gemm_;
}

std::shared_ptr<const GemmKernelUnderTest> make_marlin_kernel(MarlinKernelOptions options) {
  return std::make_shared<MarlinKernel>(options);
}

}  // namespace moeval::testbed
