// moe_align entry point: argument checks, device guard, and the choice between the two paths.
#include <stdexcept>
#include <string>

#include "align_kernels.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/same_device.h"

namespace moeval::kernels {
namespace {

constexpr int kMaxExperts = 65536;
constexpr std::int64_t kInt32Limit = std::int64_t{1} << 31;

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("moe_align: " + what); }

void check_shape(std::int64_t num_slots, int num_experts, int block_size) {
  if (num_experts < 1 || num_experts > kMaxExperts) {
    reject("num_experts = " + std::to_string(num_experts) + "; allowed 1.." + std::to_string(kMaxExperts));
  }
  if (!is_supported_block_size(block_size)) {
    reject("block_size = " + std::to_string(block_size) + "; allowed 8, 16, 32, 48, 64, 128");
  }
  if (num_slots < 0) reject("num_slots (M·topk) = " + std::to_string(num_slots) + " is negative");
  if (num_slots + static_cast<std::int64_t>(num_experts) * (block_size - 1) >= kInt32Limit) {
    reject("num_slots + E·(B-1) = " + std::to_string(num_slots + std::int64_t{num_experts} * (block_size - 1)) +
           " does not fit the int32 sorted ids; allowed < 2^31");
  }
}

}  // namespace

bool is_supported_block_size(int block_size) {
  switch (block_size) {
    case 8: case 16: case 32: case 48: case 64: case 128: return true;
    default: return false;
  }
}

std::int64_t moe_align_sorted_capacity(std::int64_t num_slots, int num_experts, int block_size) {
  check_shape(num_slots, num_experts, block_size);
  return num_slots + static_cast<std::int64_t>(num_experts) * (block_size - 1);
}

std::int64_t moe_align_block_capacity(std::int64_t num_slots, int num_experts, int block_size) {
  return (moe_align_sorted_capacity(num_slots, num_experts, block_size) + block_size - 1) / block_size;
}

std::size_t moe_align_workspace_bytes(std::int64_t num_slots, int num_experts) {
  if (num_slots < 0 || num_experts < 1 || num_experts > kMaxExperts) return 0;
  if (detail::align_fits_single_block(num_slots, num_experts)) return 0;
  return detail::align_tiled_workspace_bytes(num_slots, num_experts);
}

void moe_align(const MoeAlignArgs& args) {
  check_shape(args.num_slots, args.num_experts, args.block_size);
  const std::size_t needed = moe_align_workspace_bytes(args.num_slots, args.num_experts);
  const int device = same_device("moe_align", {{args.topk_ids, "topk_ids", args.num_slots == 0},
                                               {args.expert_map, "expert_map", true},
                                               {args.sorted_token_ids, "sorted_token_ids"},
                                               {args.expert_ids, "expert_ids"},
                                               {args.num_tokens_post_padded, "num_tokens_post_padded"},
                                               {args.workspace, "workspace", needed == 0}});
  if (args.workspace_bytes < needed) {
    reject("workspace_bytes = " + std::to_string(args.workspace_bytes) + " but this problem needs " +
           std::to_string(needed) + " (moe_align_workspace_bytes)");
  }
  if (needed > 0 && reinterpret_cast<std::uintptr_t>(args.workspace) % 256 != 0) {
    reject("workspace must be 256-byte aligned");
  }
  DeviceGuard guard(device);
  const detail::AlignInputs in{args.topk_ids, args.num_slots, args.num_experts, args.block_size, args.expert_map};
  const detail::AlignOutputs out{args.sorted_token_ids, args.expert_ids, args.num_tokens_post_padded,
                                 moe_align_sorted_capacity(args.num_slots, args.num_experts, args.block_size),
                                 moe_align_block_capacity(args.num_slots, args.num_experts, args.block_size)};
  if (detail::align_fits_single_block(args.num_slots, args.num_experts)) {
    detail::launch_align_single_block(in, out, args.stream);
  } else {
    detail::launch_align_tiled(in, out, args.workspace, args.stream);
  }
}

}  // namespace moeval::kernels
