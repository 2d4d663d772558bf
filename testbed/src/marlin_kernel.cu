#include "moeval/testbed/marlin_kernel.h"

#include <string>

#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/testbed/dtype.h"

namespace moeval::testbed {
namespace {

constexpr kernels::MarlinWeightType to_marlin_type(WeightType t) {
  switch (t) {
    case WeightType::uint4b8: return kernels::MarlinWeightType::uint4b8;
    case WeightType::uint4: return kernels::MarlinWeightType::uint4;
    case WeightType::uint8b128: return kernels::MarlinWeightType::uint8b128;
    case WeightType::uint8: return kernels::MarlinWeightType::uint8;
  }
  return kernels::MarlinWeightType::uint4b8;
}

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
  view_.type = to_marlin_type(w.scheme.type);
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
      topk_ids_(GuardedBuffer::upload("topk_ids", device, c.routing.topk_ids)),
      topk_weights_(GuardedBuffer::upload("topk_weights", device, c.routing.topk_weights)) {
  const MoeProblem& p = c.problem;
  if (!p.expert_map.empty()) expert_map_.emplace(GuardedBuffer::upload("expert_map", device, p.expert_map));

  const auto slots = std::int64_t(c.routing.topk_ids.size());
  const int block_size = options.block_size != 0
                             ? options.block_size
                             : kernels::choose_block_size({p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)});
  const auto sorted = kernels::moe_align_sorted_capacity(slots, int(p.experts), block_size);
  const auto blocks = kernels::moe_align_block_capacity(slots, int(p.experts), block_size);
  // Exact capacities, int32 elements: a read past them meets the guards' NaN / far-off indices.
  sorted_ids_.emplace("sorted_token_ids", device, std::size_t(sorted) * 4, 4);
  expert_ids_.emplace("expert_ids", device, std::size_t(blocks) * 4, 4);
  post_padded_.emplace("num_tokens_post_padded", device, 4, 4);
  align_workspace_.emplace("align_workspace", device, kernels::moe_align_workspace_bytes(slots, int(p.experts)), 4);

  align_.topk_ids = topk_ids_.as<std::int32_t>();
  align_.num_slots = slots;
  align_.num_experts = int(p.experts);
  align_.block_size = block_size;
  align_.expert_map = expert_map_ ? expert_map_->as<std::int32_t>() : nullptr;
  align_.sorted_token_ids = sorted_ids_->as<std::int32_t>();
  align_.expert_ids = expert_ids_->as<std::int32_t>();
  align_.num_tokens_post_padded = post_padded_->as<std::int32_t>();
  align_.workspace = align_workspace_->data();
  align_.workspace_bytes = align_workspace_->bytes();

  gemm_.a = a_.data();
  gemm_.weights = weights_.view();
  gemm_.blocks = {align_.sorted_token_ids, align_.expert_ids, align_.num_tokens_post_padded, sorted, block_size, slots};
  gemm_.shape = {c.shape.n, c.shape.k};
  gemm_.top_k = int(c.a_row_divisor);
  gemm_.dtype = to_kernel_dtype(c.w.scheme.act);
  gemm_.topk_weights = topk_weights_.as<float>();
  gemm_.mul_topk_weights = c.mul_topk_weights;
  // Exactly the documented size (16-bit gathered activations with act-order): an overrun hits a guard.
  workspace_.emplace("marlin_workspace", device, kernels::marlin_moe_workspace_bytes(gemm_), 2);
  gemm_.workspace = workspace_->data();
  gemm_.workspace_bytes = workspace_->bytes();
}

void PreparedMarlin::run(GuardedBuffer& out) {
  gemm_.c = out.data();
  kernels::moe_align(align_);
  kernels::marlin_moe(gemm_);
}

std::vector<const GuardedBuffer*> PreparedMarlin::buffers() const {
  std::vector<const GuardedBuffer*> all = weights_.buffers();
  for (const GuardedBuffer* b : {&a_, &topk_ids_, &topk_weights_, &*sorted_ids_, &*expert_ids_, &*post_padded_,
                                 &*align_workspace_, &*workspace_}) {
    all.push_back(b);
  }
  if (expert_map_) all.push_back(&*expert_map_);
  return all;
}

kernels::MarlinMoeArgs PreparedMarlin::aligned_args() {
  kernels::moe_align(align_);
  return gemm_;
}

std::shared_ptr<const GemmKernelUnderTest> make_marlin_kernel(MarlinKernelOptions options) {
  return std::make_shared<MarlinKernel>(options);
}

}  // namespace moeval::testbed
