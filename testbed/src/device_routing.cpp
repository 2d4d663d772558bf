#include "moeval/testbed/device_routing.h"

#include "moeval/kernels/moe_forward.h"

namespace moeval::testbed {

DeviceRouting::DeviceRouting(const GemmCase& c, int device, int block_size, kernels::MoeWeightFormat format)
    : topk_ids_(GuardedBuffer::upload("topk_ids", device, c.routing.topk_ids)),
      topk_weights_(GuardedBuffer::upload("topk_weights", device, c.routing.topk_weights)) {
  const MoeProblem& p = c.problem;
  if (!p.expert_map.empty()) expert_map_.emplace(GuardedBuffer::upload("expert_map", device, p.expert_map));

  const auto slots = std::int64_t(c.routing.topk_ids.size());
  if (block_size == 0) {
    // As moe_forward picks it on this device: the scheme's act-order flags stand for w13's.
    kernels::MoeForwardArgs layer;
    layer.shape = {p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)};
    layer.format = format;
    layer.marlin_w13.act_order = p.scheme.act_order;
    layer.marlin_w13.is_k_full = p.scheme.is_k_full;
    block_size = kernels::moe_forward_block_size(layer, device);
  }
  sorted_capacity_ = kernels::moe_align_sorted_capacity(slots, int(p.experts), block_size);
  const auto blocks = kernels::moe_align_block_capacity(slots, int(p.experts), block_size);
  // Exact capacities, int32 elements: a read past them meets the guards' NaN / far-off indices.
  sorted_ids_.emplace("sorted_token_ids", device, std::size_t(sorted_capacity_) * 4, 4);
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
}

kernels::MoeBlocks DeviceRouting::blocks() const {
  return {align_.sorted_token_ids, align_.expert_ids, align_.num_tokens_post_padded, sorted_capacity_,
          align_.block_size, align_.num_slots};
}

std::vector<const GuardedBuffer*> DeviceRouting::buffers() const {
  std::vector<const GuardedBuffer*> all{&topk_ids_, &topk_weights_, &*sorted_ids_, &*expert_ids_, &*post_padded_,
                                        &*align_workspace_};
  if (expert_map_) all.push_back(&*expert_map_);
  return all;
}

}  // namespace moeval::testbed
