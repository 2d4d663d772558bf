// moe_forward: align → GEMM1 → silu_and_mul → GEMM2 → topk_combine, all on one stream.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/moe_ops.h"
#include "moeval/kernels/same_device.h"

namespace moeval::kernels {
namespace {

std::size_t round_up_256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// Where each intermediate lives inside the caller's workspace.
struct ForwardLayout {
  std::size_t align_ws = 0, sorted = 0, expert_ids = 0, post_padded = 0, gemm1_out = 0, act = 0, gemm2_out = 0,
              gemm_ws = 0, total = 0;
};

// gemm_ws_bytes: the GEMMs' own scratch (Marlin act-order gathers), one region both GEMMs reuse.
ForwardLayout layout_for(const MoeLayerShape& s, int block_size, std::size_t gemm_ws_bytes) {
  const std::int64_t slots = s.tokens * s.topk;
  ForwardLayout l;
  std::size_t at = 0;
  auto take = [&at](std::size_t bytes) {
    const std::size_t here = at;
    at += round_up_256(bytes);
    return here;
  };
  l.align_ws = take(moe_align_workspace_bytes(slots, s.num_experts));
  l.sorted = take(sizeof(std::int32_t) * static_cast<std::size_t>(moe_align_sorted_capacity(slots, s.num_experts, block_size)));
  l.expert_ids = take(sizeof(std::int32_t) * static_cast<std::size_t>(moe_align_block_capacity(slots, s.num_experts, block_size)));
  l.post_padded = take(sizeof(std::int32_t));
  l.gemm1_out = take(2 * static_cast<std::size_t>(slots * 2 * s.inter));
  l.act = take(2 * static_cast<std::size_t>(slots * s.inter));
  l.gemm2_out = take(2 * static_cast<std::size_t>(slots * s.hidden));
  l.gemm_ws = take(gemm_ws_bytes);
  l.total = at;
  return l;
}

// Arguments of one of the layer's two Marlin GEMMs (a, c and the workspace are set by the caller).
MarlinMoeArgs marlin_gemm(const MoeForwardArgs& f, bool gemm1, const MoeBlocks& blocks) {
  const MoeLayerShape& s = f.shape;
  MarlinMoeArgs g;
  g.weights = gemm1 ? f.marlin_w13 : f.marlin_w2;
  g.blocks = blocks;
  g.shape = gemm1 ? GemmNK{2 * s.inter, s.hidden} : GemmNK{s.hidden, s.inter};
  g.top_k = gemm1 ? s.topk : 1;
  g.dtype = f.dtype;
  g.topk_weights = gemm1 ? nullptr : f.topk_weights;
  g.mul_topk_weights = !gemm1;
  g.stream = f.stream;
  return g;
}

// The GEMMs' scratch: 0 for WNA16; for Marlin the larger of the two GEMMs' needs (they run one
// after the other on one stream, so they share the region).
std::size_t gemm_workspace_bytes(const MoeForwardArgs& f, int block_size) {
  if (f.format == MoeWeightFormat::wna16) return 0;
  if (f.format != MoeWeightFormat::marlin) {
    throw std::invalid_argument("moe_forward: format = " + std::to_string(int(f.format)) + "; allowed: wna16, marlin");
  }
  const MoeLayerShape& s = f.shape;
  const std::int64_t slots = s.tokens * s.topk;
  const MoeBlocks blocks{nullptr, nullptr, nullptr, moe_align_sorted_capacity(slots, s.num_experts, block_size), block_size, slots};
  return std::max(marlin_moe_workspace_bytes(marlin_gemm(f, true, blocks)),
                  marlin_moe_workspace_bytes(marlin_gemm(f, false, blocks)));
}

void check_shape(const MoeLayerShape& s) {
  if (s.tokens < 0 || s.hidden < 1 || s.inter < 1 || s.num_experts < 1 || s.topk < 1 || s.topk > s.num_experts) {
    throw std::invalid_argument("moe_forward: shape M = " + std::to_string(s.tokens) + ", H = " + std::to_string(s.hidden) +
                                ", I = " + std::to_string(s.inter) + ", E = " + std::to_string(s.num_experts) +
                                ", topk = " + std::to_string(s.topk) + "; need M ≥ 0, H, I, E ≥ 1, 1 ≤ topk ≤ E");
  }
}

// The block size of `shape` from three thresholds on p = M·topk / E, in hundredths of a token per
// expert so that they are exact: 8 below the first, 16 below the second, 32 below the third, else
// 64.
int block_below_thresholds(const MoeLayerShape& shape, std::int64_t to16, std::int64_t to32, std::int64_t to64) {
  check_shape(shape);
  const std::int64_t hundredths = shape.tokens * shape.topk * 100;  // 100·p·E
  const std::int64_t e = shape.num_experts;
  if (hundredths < to16 * e) return 8;
  if (hundredths < to32 * e) return 16;
  if (hundredths < to64 * e) return 32;
  return 64;
}

}  // namespace

// Thresholds on p = M·topk / E: B = 8 below 0.9·8, 16 below
// 1.3·16, 32 below 1.3·32, else 64. Why 1.3 above 8: one block of 32 rows for ~16 tokens (or 48
// for ~32) was slower than two of 16 (of 32) on both GEMMs, H200 same run, Marlin / WNA16:
// Qwen3-30B-A3B w13 M = 256 (16 per expert) 134.6 → 122.7 / 186.7 → 163.4 µs; Mixtral w13 M = 64
// (16) 313 → 288 / 370 → 353, M = 128 (32, was 48) 536 → 387 / 925 → 593, M = 160 (40, was 48)
// 618 → 523 / 1126 → 766; every other DeepSeek-V3, Qwen3 and Mixtral cell of M 32–256 within
// ±3 %. But 8 rows for 8 tokens per expert, not 16, was slower (DeepSeek-V3 w13 M = 256: 1425 →
// 1592 µs). 48 is not picked (still accepted when given).
int choose_block_size(const MoeLayerShape& shape) {
  return block_below_thresholds(shape, 90 * 8, 130 * 16, 130 * 32);
}

// Marlin weights have thresholds of their own on p = M·topk / E: B = 8 below
// 0.9·8, 16 below 0.85·16, 32 below 0.85·32, 64 below 512, else 128. Why they differ from the
// shape-only ones above: Marlin's 32- and 64-row items run on the wgmma path (32 rows on one
// warpgroup, 64 on the producer form), where one 32-row block beats two 16-row ones soon after 13
// per expert and 64 rows overtook two 32-row blocks long before 1.3·32. Measured on the H200
// (each block size and path forced, same run, Marlin GEMM µs, docs/results/ab-h200-2026-12-02-h.txt),
// B = 16 (mma.sync) / 32 (wgmma) / 64 (wgmma producer form):
//   12 per expert (DeepSeek-V3 w13 M = 384, Qwen3-30B-A3B M = 192): 1356 / 1502 / 2058,
//     92.1 / 92.0 / 122.6;
//   16 per expert (M = 512, 256; Mixtral M = 64): 1767 / 1499 / 2060, 111.4 / 92.7 / 122.7,
//     254 / 228 / 304;
//   24 per expert (M = 768, 384): 2499 / 1577 / 2066, 146.5 / 111.2 / 124.3;
//   32 per expert (M = 1024, 512; Mixtral M = 128): 2990 / 2194 / 2070, 193 / 137 / 126,
//     387 / 280 / 307;
// DeepSeek-V3 w2 alike. The crossings lie near 12–13.5 and 24–32 per expert; the thresholds sit
// where the slower choice costs least on these shapes (calls whose items run on mma.sync take the
// mma.sync table below). From 512 tokens per expert on: 128-row blocks, whose items run on the
// wgmma path's producer form (each dequantized weight feeds 128 tokens instead of 64). Same-run A/B on the H200, Marlin
// GEMM, 128 vs 64: Mixtral w13 M = 2048 / 4096 / 8192 (512–2048 per expert) 0.94 / 0.83 / 0.90,
// Qwen3-30B-A3B w13 M = 8192 (512) 0.95; but at 256 per expert DeepSeek-V3 w13 M = 8192 0.97, w2
// 1.01, Qwen3 M = 4096 1.04, and 1.2× slower at 64 per expert. WNA16 keeps the shape-only
// thresholds: its kernel ran 2–5 % slower with 128 rows, and 2–2.6× slower with 64 than with 32
// at 20–32 per expert (same survey).
//
// Those thresholds hold where the 16- to 128-row items run on the wgmma path. Where GEMM1's run on
// mma.sync (act-order with a K shard, or a device without the path), Marlin has a third table:
// 16 from 0.9·8, 32 from 1.1·16, 64 from 1.15·32, no 128-row blocks. Measured on the H200 with the
// mma.sync path forced (docs/results/block-size-survey-mmasync-h200-2026-12-03.txt, Marlin GEMM
// µs, B = 16 / 32 / 64): 16 per expert DeepSeek-V3 w13 M = 512 1713 / 1780 / 2916, Qwen3-30B-A3B
// M = 256 108.0 / 117.0 / 184.2, Mixtral w13 M = 64 244 / 266 / 437; 20–24 per expert (DeepSeek-V3
// M = 640, Qwen3 M = 384) 2164 / 1782 / 2926, 143.6 / 130.5 / 186.8; 32 per expert (M = 1024, 512,
// 128) 2973 / 2597 / 2954, 189 / 161 / 189, 375 / 323 / 442; 40 per expert (M = 1280, 640, 160)
// 3557 / 3276 / 2969, 209 / 212 / 190, 462 / 449 / 446. The crossings lie near 17–18 and 37 per
// expert. (The shape-only table would cost DeepSeek-V3 21 % at 20 per expert.) Past ~40 the
// mma.sync 64-row kernel is not always ahead (Qwen3 at 64 and 80 per expert: 265 / 293, 313 / 369
// for 32 / 64 rows; Mixtral at 64: 592 / 660, at 96 and more 64 rows win): the round-up of each
// expert's tokens to whole blocks decides there, which no threshold on the mean follows. On a K
// shard a 64-row block runs as two 32-row items, so it costs no more than 32-row blocks but the
// padding. GEMM1 decides for the layer (one alignment serves both GEMMs): it holds two thirds of
// the multiply-adds, and in a tensor-parallel act-order layer it is the one with the full K (w13's
// K = H is not split; w2's K = I is).
int choose_block_size(const MoeLayerShape& shape, MoeWeightFormat format, bool wgmma_items) {
  if (format != MoeWeightFormat::marlin) return choose_block_size(shape);
  if (!wgmma_items) return block_below_thresholds(shape, 90 * 8, 110 * 16, 115 * 32);
  const int block = block_below_thresholds(shape, 90 * 8, 85 * 16, 85 * 32);
  return shape.tokens * shape.topk >= std::int64_t{512} * shape.num_experts ? 128 : block;
}

int choose_block_size(const MoeLayerShape& shape, MoeWeightFormat format) { return choose_block_size(shape, format, true); }

bool marlin_layer_wgmma_items(const MarlinMoeWeights& w13, int device) {
  MarlinMoeArgs gemm1;
  gemm1.weights = w13;
  gemm1.blocks.block_size = 32;  // an item height the wgmma path runs wherever it runs at all
  return marlin_moe_uses_wgmma(gemm1, device);
}

int moe_forward_block_size(const MoeForwardArgs& args, int device) {
  check_shape(args.shape);
  if (args.block_size != 0) return args.block_size;
  const bool marlin = args.format == MoeWeightFormat::marlin;
  return choose_block_size(args.shape, args.format, marlin && marlin_layer_wgmma_items(args.marlin_w13, device));
}

std::size_t moe_forward_workspace_bytes(const MoeForwardArgs& args) {
  check_shape(args.shape);
  auto bytes_for = [&](int block_size) {
    return layout_for(args.shape, block_size, gemm_workspace_bytes(args, block_size)).total;
  };
  if (args.block_size != 0) return bytes_for(args.block_size);
  std::size_t bytes = bytes_for(choose_block_size(args.shape, args.format, true));
  // Either Marlin table may apply (marlin_layer_wgmma_items): a smaller block needs a smaller sorted
  // array but more expert ids, so neither size bounds the other.
  if (args.format == MoeWeightFormat::marlin) bytes = std::max(bytes, bytes_for(choose_block_size(args.shape, args.format, false)));
  return bytes;
}

std::size_t moe_forward_workspace_bytes(const MoeLayerShape& shape, int block_size) {
  MoeForwardArgs args;
  args.shape = shape;
  args.block_size = block_size;
  return moe_forward_workspace_bytes(args);
}

void moe_forward(const MoeForwardArgs& args) {
  const MoeLayerShape& s = args.shape;
  check_shape(s);
  if (reinterpret_cast<std::uintptr_t>(args.workspace) % 256 != 0) {
    throw std::invalid_argument("moe_forward: workspace must be 256-byte aligned");
  }
  const int device = same_device("moe_forward", {{args.hidden_states, "hidden_states"},
                                                 {args.topk_ids, "topk_ids"},
                                                 {args.topk_weights, "topk_weights"},
                                                 {args.expert_map, "expert_map", true},
                                                 {args.out, "out"},
                                                 {args.workspace, "workspace"}});
  const int block_size = moe_forward_block_size(args, device);
  const ForwardLayout l = layout_for(s, block_size, gemm_workspace_bytes(args, block_size));
  if (args.workspace_bytes < l.total) {
    throw std::invalid_argument("moe_forward: workspace_bytes = " + std::to_string(args.workspace_bytes) + " but " +
                                std::to_string(l.total) + " are needed for this shape, block size and weight format "
                                "(moe_forward_workspace_bytes(args))");
  }
  DeviceGuard guard(device);
  if (s.tokens == 0) return;
  char* ws = static_cast<char*>(args.workspace);
  const std::int64_t slots = s.tokens * s.topk;
  auto* sorted = reinterpret_cast<std::int32_t*>(ws + l.sorted);
  auto* expert_ids = reinterpret_cast<std::int32_t*>(ws + l.expert_ids);
  auto* post_padded = reinterpret_cast<std::int32_t*>(ws + l.post_padded);

  MoeAlignArgs align;
  align.topk_ids = args.topk_ids;
  align.num_slots = slots;
  align.num_experts = s.num_experts;
  align.block_size = block_size;
  align.expert_map = args.expert_map;
  align.sorted_token_ids = sorted;
  align.expert_ids = expert_ids;
  align.num_tokens_post_padded = post_padded;
  align.workspace = ws + l.align_ws;
  align.workspace_bytes = l.sorted - l.align_ws;
  align.stream = args.stream;
  moe_align(align);

  const MoeBlocks blocks{sorted, expert_ids, post_padded, moe_align_sorted_capacity(slots, s.num_experts, block_size),
                         block_size, slots};
  if (args.format == MoeWeightFormat::marlin) {
    MarlinMoeArgs gemm1 = marlin_gemm(args, true, blocks);
    gemm1.a = args.hidden_states;
    gemm1.c = ws + l.gemm1_out;
    // Without act-order the kernel needs no scratch; the region is empty then (it would start at the
    // workspace's end), so the kernel gets the workspace's start with 0 bytes: a valid pointer on the
    // layer's device that it must not write.
    gemm1.workspace_bytes = l.total - l.gemm_ws;
    gemm1.workspace = gemm1.workspace_bytes > 0 ? ws + l.gemm_ws : ws;
    marlin_moe(gemm1);
    silu_and_mul({ws + l.gemm1_out, ws + l.act, slots, s.inter, args.dtype, args.stream});
    MarlinMoeArgs gemm2 = marlin_gemm(args, false, blocks);
    gemm2.a = ws + l.act;
    gemm2.c = ws + l.gemm2_out;
    gemm2.workspace = gemm1.workspace;
    gemm2.workspace_bytes = gemm1.workspace_bytes;
    marlin_moe(gemm2);
  } else {
    Wna16MoeArgs gemm1;
    gemm1.a = args.hidden_states;
    gemm1.c = ws + l.gemm1_out;
    gemm1.weights = args.w13;
    gemm1.blocks = blocks;
    gemm1.shape = {2 * s.inter, s.hidden};
    gemm1.top_k = s.topk;
    gemm1.dtype = args.dtype;
    gemm1.stream = args.stream;
    wna16_moe(gemm1);
    silu_and_mul({ws + l.gemm1_out, ws + l.act, slots, s.inter, args.dtype, args.stream});
    Wna16MoeArgs gemm2 = gemm1;
    gemm2.a = ws + l.act;
    gemm2.c = ws + l.gemm2_out;
    gemm2.weights = args.w2;
    gemm2.shape = {s.hidden, s.inter};
    gemm2.top_k = 1;
    gemm2.topk_weights = args.topk_weights;
    gemm2.mul_topk_weights = true;
    wna16_moe(gemm2);
  }

  TopkCombineArgs combine;
  combine.in = ws + l.gemm2_out;
  combine.out = args.out;
  combine.tokens = s.tokens;
  combine.topk = s.topk;
  combine.hidden = s.hidden;
  combine.dtype = args.dtype;
  combine.topk_ids = args.topk_ids;
  combine.num_experts = s.num_experts;
  combine.stream = args.stream;
  topk_combine(combine);
}

}  // namespace moeval::kernels
