// wna16_moe entry point: argument checks, device guard, work split, dispatch on dtype × bits.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/same_device.h"
#include "moeval/kernels/wna16_moe.h"
#include "wna16_params.h"

namespace moeval::kernels {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("wna16_moe: " + what); }

std::string str(std::int64_t v) { return std::to_string(v); }

void check_arguments(const Wna16MoeArgs& args) {
  const Wna16Weights& w = args.weights;
  const GemmNK& s = args.shape;
  if (w.bits != 4 && w.bits != 8) reject("bits = " + str(w.bits) + "; allowed 4 or 8");
  if (w.num_experts < 1) reject("weights.num_experts = " + str(w.num_experts) + "; must be ≥ 1");
  if (s.n < 16 || s.n % 16 != 0) reject("N = " + str(s.n) + "; must be a positive multiple of 16");
  const int k_align = w.bits == 4 ? 32 : 16;
  if (s.k >= (std::int64_t{1} << 30) || s.n >= (std::int64_t{1} << 30)) reject("N and K must be < 2^30");
  if (s.k < k_align || s.k % k_align != 0) {
    reject("K = " + str(s.k) + "; must be a positive multiple of " + str(k_align) + " for " + str(w.bits) + "-bit weights");
  }
  if (w.group_size != -1 && w.group_size != 32 && w.group_size != 64 && w.group_size != 128) {
    reject("group_size = " + str(w.group_size) + "; allowed 32, 64, 128 or -1 (channelwise)");
  }
  if (w.group_size > 0 && s.k % w.group_size != 0) {
    reject("K = " + str(s.k) + " is not a multiple of group_size = " + str(w.group_size));
  }
  if (w.bits == 4 && w.group_size > 0 && w.group_size < 32) reject("4-bit needs group_size ≥ 32");
  if (!is_supported_block_size(args.blocks.block_size)) {
    reject("blocks.block_size = " + str(args.blocks.block_size) + "; allowed 8, 16, 32, 48, 64, 128");
  }
  if (args.top_k < 1) reject("top_k = " + str(args.top_k) + "; must be ≥ 1");
  if (args.blocks.num_slots < 0) reject("blocks.num_slots = " + str(args.blocks.num_slots) + " is negative");
  if (args.blocks.num_slots % args.top_k != 0) {
    reject("blocks.num_slots = " + str(args.blocks.num_slots) + " is not a multiple of top_k = " + str(args.top_k));
  }
  if (args.blocks.sorted_capacity < 0) {
    reject("blocks.sorted_capacity = " + str(args.blocks.sorted_capacity) + " is negative");
  }
  if (args.mul_topk_weights && args.topk_weights == nullptr) reject("mul_topk_weights is set but topk_weights is null");
  if (reinterpret_cast<std::uintptr_t>(w.qweight) % 16 != 0) reject("qweight must be 16-byte aligned");
  if (reinterpret_cast<std::uintptr_t>(args.a) % 16 != 0) reject("a must be 16-byte aligned");
  if (reinterpret_cast<std::uintptr_t>(args.c) % 2 != 0 || reinterpret_cast<std::uintptr_t>(w.scales) % 2 != 0) {
    reject("c and scales must be 2-byte aligned");
  }
}

}  // namespace

namespace detail {

// Splits K over the 4 warps of a thread block when too few (block, N tile) items exist to keep
// every SM busy (decode with few experts), keeping ≥ 2 chunks per warp.
int choose_warps_k(const Wna16MoeArgs& args, std::int64_t block_capacity, std::int64_t row_groups, int row_tiles,
                   int sms) {
  const std::int64_t slots = args.blocks.num_slots;
  const std::int64_t likely_blocks =
      std::min(block_capacity, std::min<std::int64_t>(slots, args.weights.num_experts) + slots / args.blocks.block_size);
  const std::int64_t chunk_k = args.weights.bits == 4 ? 128 : 64;
  const std::int64_t chunks = (args.shape.k + chunk_k - 1) / chunk_k;
  const std::int64_t wanted_warps = static_cast<std::int64_t>(sms) * 32;
  int warps_k = 1;
  const std::int64_t warp_tiles_n = (args.shape.n / 16 + row_tiles - 1) / row_tiles;
  while (warps_k < 4 && likely_blocks * row_groups * warp_tiles_n * warps_k < wanted_warps &&
         chunks >= 4 * warps_k) {
    warps_k *= 2;
  }
  return warps_k;
}

}  // namespace detail

std::size_t wna16_moe_workspace_bytes(const Wna16MoeArgs&) { return 0; }

void wna16_moe(const Wna16MoeArgs& args) {
  check_arguments(args);
  const Wna16Weights& w = args.weights;
  const int device = same_device("wna16_moe", {{args.a, "a"},
                                               {args.c, "c"},
                                               {w.qweight, "qweight"},
                                               {w.scales, "scales"},
                                               {w.qzeros, "qzeros", true},
                                               {args.topk_weights, "topk_weights", !args.mul_topk_weights},
                                               {args.blocks.sorted_token_ids, "sorted_token_ids"},
                                               {args.blocks.expert_ids, "expert_ids"},
                                               {args.blocks.num_tokens_post_padded, "num_tokens_post_padded"}});
  DeviceGuard guard(device);
  if (args.blocks.num_slots == 0 || args.blocks.sorted_capacity == 0) return;

  const int block_size = args.blocks.block_size;
  const int token_tiles = std::min(block_size, 64) / 8;
  detail::Wna16Params p{};
  p.a = static_cast<const std::uint16_t*>(args.a);
  p.c = static_cast<std::uint16_t*>(args.c);
  p.qweight = w.qweight;
  p.scales = static_cast<const std::uint16_t*>(w.scales);
  p.qzeros = w.qzeros;
  p.topk_weights = args.mul_topk_weights ? args.topk_weights : nullptr;
  p.sorted_token_ids = args.blocks.sorted_token_ids;
  p.expert_ids = args.blocks.expert_ids;
  p.num_tokens_post_padded = args.blocks.num_tokens_post_padded;
  p.n = args.shape.n;
  p.k = args.shape.k;
  p.row_bytes = args.shape.k * w.bits / 8;
  p.num_slots = args.blocks.num_slots;
  p.block_capacity = args.blocks.sorted_capacity / block_size;
  // Groups are 32, 64 or 128 (a shift), or the whole K (k < 2^31, so k >> 31 = 0).
  p.group_shift = w.group_size == -1 ? 31 : (w.group_size == 32 ? 5 : w.group_size == 64 ? 6 : 7);
  p.groups = static_cast<int>(w.group_size == -1 ? 1 : args.shape.k / w.group_size);
  p.num_experts = w.num_experts;
  p.top_k = args.top_k;
  p.block_size = block_size;
  p.row_groups = (block_size + 8 * token_tiles - 1) / (8 * token_tiles);
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "wna16_moe: SM count");
  const int row_tiles = detail::wna16_row_tiles(w.bits, token_tiles);
  p.warps_k = detail::choose_warps_k(args, p.block_capacity, p.row_groups, row_tiles, sms);
  const std::int64_t tile_n = 16 * row_tiles * (4 / p.warps_k);
  p.n_tiles = static_cast<int>((args.shape.n + tile_n - 1) / tile_n);
  p.implicit_zero = w.bits == 4 ? 8u : 128u;

  if (args.dtype == ActDType::f16) {
    if (w.bits == 4) detail::launch_wna16<__half, 4>(p, token_tiles, args.stream);
    else detail::launch_wna16<__half, 8>(p, token_tiles, args.stream);
  } else {
    if (w.bits == 4) detail::launch_wna16<__nv_bfloat16, 4>(p, token_tiles, args.stream);
    else detail::launch_wna16<__nv_bfloat16, 8>(p, token_tiles, args.stream);
  }
}

}  // namespace moeval::kernels
