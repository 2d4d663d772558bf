#include "moeval/testbed/wna16_kernel.h"

#include <optional>
#include <string>

#include "moeval/fixtures/layouts/wna16.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/testbed/dtype.h"

namespace moeval::testbed {
namespace {

// Every buffer of one prepared GEMM: inputs in the WNA16 layout, the routing, and moe_align's output.
class PreparedWna16 final : public PreparedGemm {
 public:
  PreparedWna16(const GemmCase& c, int device, int block_size)
      : device_(device),
        packed_(layouts::pack_wna16(c.w)),
        a_(GuardedBuffer::upload("a", device, c.a)),
        qweight_(GuardedBuffer::upload("qweight", device, packed_.qweight)),
        scales_(GuardedBuffer::upload("scales", device, packed_.scales)),
        topk_ids_(GuardedBuffer::upload("topk_ids", device, c.routing.topk_ids)),
        topk_weights_(GuardedBuffer::upload("topk_weights", device, c.routing.topk_weights)) {
    const MoeProblem& p = c.problem;
    if (!packed_.qzeros.empty()) qzeros_.emplace(GuardedBuffer::upload("qzeros", device, packed_.qzeros));
    if (!p.expert_map.empty()) expert_map_.emplace(GuardedBuffer::upload("expert_map", device, p.expert_map));

    const auto slots = std::int64_t(c.routing.topk_ids.size());
    block_size_ = block_size != 0 ? block_size
                                  : kernels::choose_block_size({p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)});
    const auto sorted = kernels::moe_align_sorted_capacity(slots, int(p.experts), block_size_);
    const auto blocks = kernels::moe_align_block_capacity(slots, int(p.experts), block_size_);
    // Exact capacities, int32 elements: a read past them meets the guards' NaN / far-off indices.
    sorted_ids_.emplace("sorted_token_ids", device, std::size_t(sorted) * 4, 4);
    expert_ids_.emplace("expert_ids", device, std::size_t(blocks) * 4, 4);
    post_padded_.emplace("num_tokens_post_padded", device, 4, 4);
    align_workspace_.emplace("align_workspace", device, kernels::moe_align_workspace_bytes(slots, int(p.experts)), 4);

    align_.topk_ids = topk_ids_.as<std::int32_t>();
    align_.num_slots = slots;
    align_.num_experts = int(p.experts);
    align_.block_size = block_size_;
    align_.expert_map = expert_map_ ? expert_map_->as<std::int32_t>() : nullptr;
    align_.sorted_token_ids = sorted_ids_->as<std::int32_t>();
    align_.expert_ids = expert_ids_->as<std::int32_t>();
    align_.num_tokens_post_padded = post_padded_->as<std::int32_t>();
    align_.workspace = align_workspace_->data();
    align_.workspace_bytes = align_workspace_->bytes();

    gemm_.a = a_.data();
    gemm_.weights.qweight = qweight_.as<std::uint8_t>();
    gemm_.weights.scales = scales_.data();
    gemm_.weights.qzeros = qzeros_ ? qzeros_->as<std::uint8_t>() : nullptr;
    gemm_.weights.num_experts = int(c.w.experts);
    gemm_.weights.bits = bits_of(c.w.scheme.type);
    gemm_.weights.group_size = c.w.scheme.group_size;
    gemm_.blocks.sorted_token_ids = align_.sorted_token_ids;
    gemm_.blocks.expert_ids = align_.expert_ids;
    gemm_.blocks.num_tokens_post_padded = align_.num_tokens_post_padded;
    gemm_.blocks.sorted_capacity = sorted;
    gemm_.blocks.block_size = block_size_;
    gemm_.blocks.num_slots = slots;
    gemm_.shape = {c.shape.n, c.shape.k};
    gemm_.top_k = int(c.a_row_divisor);
    gemm_.dtype = to_kernel_dtype(c.w.scheme.act);
    gemm_.topk_weights = topk_weights_.as<float>();
    gemm_.mul_topk_weights = c.mul_topk_weights;
  }

  // No device guard and no synchronization here (kernel_under_test.h): the kernels' own entry
  // points must make the data's device current, which is what the testbed tests.
  void run(GuardedBuffer& out) override {
    gemm_.c = out.data();
    kernels::moe_align(align_);
    kernels::wna16_moe(gemm_);
  }

  std::vector<const GuardedBuffer*> buffers() const override {
    std::vector<const GuardedBuffer*> all{&a_, &qweight_, &scales_, &topk_ids_, &topk_weights_,
                                          &*sorted_ids_, &*expert_ids_, &*post_padded_, &*align_workspace_};
    if (qzeros_) all.push_back(&*qzeros_);
    if (expert_map_) all.push_back(&*expert_map_);
    return all;
  }

 private:
  int device_;
  int block_size_ = 0;
  layouts::Wna16Weights packed_;
  GuardedBuffer a_, qweight_, scales_, topk_ids_, topk_weights_;
  std::optional<GuardedBuffer> qzeros_, expert_map_, sorted_ids_, expert_ids_, post_padded_, align_workspace_;
  kernels::MoeAlignArgs align_{};
  kernels::Wna16MoeArgs gemm_{};
};

class Wna16Kernel final : public GemmKernelUnderTest {
 public:
  explicit Wna16Kernel(int block_size) : block_size_(block_size) {}
  std::string name() const override {
    return block_size_ == 0 ? kWna16KernelName : std::string(kWna16KernelName) + "-B" + std::to_string(block_size_);
  }
  // The layout has no g_idx, and the kernel's documented shape limits (kernels/wna16_moe.h).
  std::string unsupported_reason(const GemmCase& c) const override {
    if (c.w.scheme.act_order) return "act-order: the WNA16 layout carries no g_idx";
    const int k_align = bits_of(c.w.scheme.type) == 4 ? 32 : 16;
    if (c.shape.k % k_align != 0) return "K = " + std::to_string(c.shape.k) + " is not a multiple of " + std::to_string(k_align);
    if (c.shape.n % 16 != 0) return "N = " + std::to_string(c.shape.n) + " is not a multiple of 16";
    return {};
  }
  std::unique_ptr<PreparedGemm> prepare(const GemmCase& c, int device) const override {
    return std::make_unique<PreparedWna16>(c, device, block_size_);
  }

 private:
  int block_size_;
};

}  // namespace

std::shared_ptr<const GemmKernelUnderTest> make_wna16_kernel(int block_size) {
  return std::make_shared<Wna16Kernel>(block_size);
}

}  // namespace moeval::testbed
