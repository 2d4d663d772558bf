// marlin_moe entry point: argument checks, device guard, act-order gather, work split, dispatch on
// dtype × bits.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "marlin_gather.h"
#include "marlin_params.h"
#include "wgmma_support.h"
#include "moeval/kernels/device_info.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/same_device.h"

namespace moeval::kernels {
namespace {

[[noreturn]] void reject(const std::string& what) { throw std::invalid_argument("marlin_moe: " + what); }

std::string str(std::int64_t v) { return std::to_string(v); }

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// True for act-order without the full K: every Marlin row's group comes from g_idx.
bool k_shard(const MarlinMoeWeights& w) { return w.act_order && !w.is_k_full; }

// Whether the slice kernel can take two tile columns per warp: N holds whole pairs of 64-column
// tiles, and no K shard (whose per-row group lookup runs one column per warp).
bool two_columns_allowed(const MarlinMoeArgs& args) { return args.shape.n % 128 == 0 && !k_shard(args.weights); }

void check_weights(const MarlinMoeWeights& w, const GemmNK& s) {
  if (w.num_experts < 1) reject("weights.num_experts = " + str(w.num_experts) + "; must be ≥ 1");
  if (w.group_size != -1 && w.group_size != 32 && w.group_size != 64 && w.group_size != 128) {
    reject("group_size = " + str(w.group_size) + "; allowed 32, 64, 128 or -1 (channelwise)");
  }
  if (w.act_order) {
    if (marlin_has_zero_points(w.type)) reject("act-order with zero points is not supported (uint4b8 or uint8b128 only)");
    if (w.group_size == -1) reject("act-order needs a group size (32, 64 or 128); channelwise has no g_idx order");
    if (w.perm == nullptr) reject("act-order needs perm [E, K]");
    if (k_shard(w) && w.g_idx == nullptr) reject("act-order with is_k_full = false needs g_idx [E, K]");
  }
  if (marlin_has_zero_points(w.type) && w.zeros == nullptr) reject("a zero-point type needs zeros [E, G, N/pf]");
  if (!marlin_has_zero_points(w.type) && w.zeros != nullptr) {
    reject("zeros given for a symmetric type (uint4b8/uint8b128 have implicit zero points)");
  }
  if (k_shard(w)) {
    if (w.num_groups < 1) reject("num_groups = " + str(w.num_groups) + "; a K shard needs the global group count ≥ 1");
  } else {
    if (w.group_size > 0 && s.k % w.group_size != 0) {
      reject("K = " + str(s.k) + " is not a multiple of group_size = " + str(w.group_size));
    }
    const std::int64_t groups = w.group_size == -1 ? 1 : s.k / w.group_size;
    if (w.num_groups != groups) {
      reject("num_groups = " + str(w.num_groups) + " but K / group_size = " + str(groups) + " (1 when channelwise)");
    }
  }
}

// The wgmma path runs whole blocks of 16 or 32 rows and 64-row items: block_size 16, 32, 64 or 128
// without a K shard (whose blocks of 64 and 128 run 32-row groups on mma.sync).
bool wgmma_item_shape(const MarlinMoeArgs& args) {
  return !k_shard(args.weights) && detail::is_wgmma_item_height(args.blocks.block_size);
}

void check_arguments(const MarlinMoeArgs& args) {
  const MarlinMoeWeights& w = args.weights;
  const GemmNK& s = args.shape;
  if (s.n < 64 || s.n % 64 != 0) reject("N = " + str(s.n) + "; must be a positive multiple of 64 (Marlin tile width)");
  if (s.k < 16 || s.k % 16 != 0) reject("K = " + str(s.k) + "; must be a positive multiple of 16 (Marlin tile height)");
  if (s.k >= (std::int64_t{1} << 30) || s.n >= (std::int64_t{1} << 30)) reject("N and K must be < 2^30");
  check_weights(w, s);
  if (!is_supported_block_size(args.blocks.block_size)) {
    reject("blocks.block_size = " + str(args.blocks.block_size) + "; allowed 8, 16, 32, 48, 64, 128");
  }
  if (args.top_k < 1) reject("top_k = " + str(args.top_k) + "; must be ≥ 1");
  if (args.blocks.num_slots < 0) reject("blocks.num_slots = " + str(args.blocks.num_slots) + " is negative");
  if (args.blocks.num_slots % args.top_k != 0) {
    reject("blocks.num_slots = " + str(args.blocks.num_slots) + " is not a multiple of top_k = " + str(args.top_k));
  }
  if (args.blocks.sorted_capacity < 0) reject("blocks.sorted_capacity = " + str(args.blocks.sorted_capacity) + " is negative");
  if (args.mma_path != MarlinMmaPath::automatic && args.mma_path != MarlinMmaPath::mma_sync &&
      args.mma_path != MarlinMmaPath::wgmma) {
    reject("mma_path = " + str(static_cast<int>(args.mma_path)) + "; allowed automatic, mma_sync or wgmma");
  }
  if (args.mma_path == MarlinMmaPath::wgmma && is_supported_block_size(args.blocks.block_size) &&
      !wgmma_item_shape(args)) {
    reject("mma_path = wgmma runs block_size 16, 32, 64 or 128 without a K shard (act-order with is_k_full = false); "
           "here block_size = " + str(args.blocks.block_size) + (k_shard(w) ? " with a K shard" : ""));
  }
  if (args.max_thread_blocks < 0) reject("max_thread_blocks = " + str(args.max_thread_blocks) + "; must be ≥ 0 (0: no cap)");
  if (args.warp_columns < 0 || args.warp_columns > 2) {
    reject("warp_columns = " + str(args.warp_columns) + "; allowed 0 (chosen), 1 or 2");
  }
  if (args.warps_k < 0 || args.warps_k > detail::marlin_column_max_warps(1)) {
    reject("warps_k = " + str(args.warps_k) + "; allowed 0 (chosen) or 1.." + str(detail::marlin_column_max_warps(1)));
  }
  if (args.warp_columns == 2 && args.warps_k > detail::marlin_column_max_warps(2)) {
    reject("warps_k = " + str(args.warps_k) + " with warp_columns = 2; two tile columns per warp allow 1.." +
           str(detail::marlin_column_max_warps(2)) + " warps per thread block");
  }
  if (args.warp_columns == 2 && !two_columns_allowed(args)) {
    reject("warp_columns = 2 needs N a multiple of 128 (N = " + str(args.shape.n) + ") and no K shard" +
           (k_shard(w) ? " (this call has one: act-order with is_k_full = false)" : ""));
  }
  if (args.wgmma_warpgroups < 0 || args.wgmma_warpgroups > detail::kWgmmaProducerForm) {
    reject("wgmma_warpgroups = " + str(args.wgmma_warpgroups) + "; allowed 0 (chosen), 1, 2 or 3 (producer form)");
  }
  const bool producer_form = args.wgmma_warpgroups == detail::kWgmmaProducerForm;
  const int block = args.blocks.block_size;
  if (args.wgmma_warpgroups >= 2 &&
      (args.mma_path == MarlinMmaPath::mma_sync || k_shard(w) || (block != 64 && !(producer_form && block == 128)))) {
    reject("wgmma_warpgroups = " + str(args.wgmma_warpgroups) + " runs " +
           (producer_form ? "64- or 128-row items on the wgmma path only: block_size 64 or 128"
                          : "64-row items on the wgmma path only: block_size 64") +
           ", no K shard, mma_path not mma_sync; here block_size = " + str(block) + (k_shard(w) ? " with a K shard" : "") +
           (args.mma_path == MarlinMmaPath::mma_sync ? ", mma_path = mma_sync" : ""));
  }
  if (args.wgmma_warpgroups == detail::kWgmmaProducerForm && !aligned(w.zeros, 16)) {
    reject("wgmma_warpgroups = 3 (producer form) copies zero points with the bulk copy engine: zeros must be 16-byte "
           "aligned");
  }
  if (args.mul_topk_weights && args.topk_weights == nullptr) reject("mul_topk_weights is set but topk_weights is null");
  if (!aligned(w.qweight, 16)) reject("qweight must be 16-byte aligned");
  if (!aligned(w.scales, 16)) reject("scales must be 16-byte aligned");
  if (!aligned(w.zeros, 8)) reject("zeros must be 8-byte aligned");
  if (!aligned(args.a, 4) || !aligned(args.c, 2)) reject("a must be 4-byte and c 2-byte aligned");
  if (!w.act_order && args.blocks.block_size >= 16 && !aligned(args.a, 16)) {
    // 16-, 32- and 64-row items copy activation rows in 16-byte pieces (act-order reads the
    // gathered copy in the workspace instead; 8-row items copy 4-byte words).
    reject("a must be 16-byte aligned for block_size " + str(args.blocks.block_size) +
           " without act-order (activation rows are copied in 16-byte pieces); 4-byte alignment suffices for "
           "block_size 8 or act-order");
  }
  // Those items address A's rows in 16-byte units with 32-bit offsets (marlin_kernel.cuh).
  const std::int64_t a_rows = w.act_order ? args.blocks.num_slots : args.blocks.num_slots / args.top_k;
  if (args.blocks.block_size >= 16 && a_rows > std::int64_t{0xFFFFFFFE} / (s.k / 8)) {  // rows · K/8 > 2^32 − 2
    reject("A holds " + str(a_rows) + " rows × K = " + str(s.k) + " elements; block_size ≥ 16 supports at most " +
           "2^35 − 16 (split the tokens over several calls)");
  }
  const std::size_t needed = marlin_moe_workspace_bytes(args);
  if (args.workspace_bytes < needed) {
    reject("workspace_bytes = " + str(static_cast<std::int64_t>(args.workspace_bytes)) + " is too small; this call needs " +
           str(static_cast<std::int64_t>(needed)) +
           " (marlin_moe_workspace_bytes: num_slots · K · 2 with act-order, + 8 MiB + 32 KiB for block_size 8, + 256 for"
           " block_size 64 and 128, + 4 KiB + marlin_moe_split_slots · 32 KiB for block_size 32)");
  }
  if (needed > 0 && (args.workspace == nullptr || !aligned(args.workspace, 16))) {
    reject("workspace must be a 16-byte aligned device buffer of marlin_moe_workspace_bytes bytes");
  }
}

// Why the wgmma path cannot take this call on `device`, or empty when it can.
std::string wgmma_unavailable(const MarlinMoeArgs& args, int device) {
  if (!wgmma_item_shape(args)) return "it runs block_size 16, 32, 64 or 128 without a K shard only";
  return detail::wgmma_unavailable_on(device);
}

// `unavailable`: wgmma_unavailable(args, device). The automatic path leaves 16-row items (block_size
// 16) on mma.sync: their K loop is bound by the dequantization either way (the wgmma one alone runs
// at ~250 TFLOP/s on the H200, against 440 with 32-row and 570 with 64-row items), and forced,
// same run, wgmma measured 0.98–1.02× the mma.sync time on DeepSeek-V3 w13/w2 and Mixtral w13 at
// M = 64–1024 and 1.05–1.10× on Qwen3-30B-A3B M = 64–192 (docs/results/ab-h200-2026-12-02-h.txt).
// 32-row items gain: 0.81–0.85× on every cell of those four shapes.
bool uses_wgmma(const MarlinMoeArgs& args, const std::string& unavailable) {
  if (args.mma_path == MarlinMmaPath::mma_sync || !unavailable.empty()) return false;
  return args.mma_path == MarlinMmaPath::wgmma || args.blocks.block_size != 16;
}

// moe_align's blocks this call expects (the binomial mean, rounded up, within the capacity).
std::int64_t expected_block_count(const MarlinMoeArgs& args, std::int64_t block_capacity) {
  return std::min(block_capacity, static_cast<std::int64_t>(std::ceil(detail::expected_blocks(args) - 1e-9)));
}

}  // namespace

bool marlin_moe_uses_wgmma(const MarlinMoeArgs& args, int device) {
  return uses_wgmma(args, wgmma_unavailable(args, device));
}

namespace {

int sm_count(int device) {
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "marlin_moe: SM count");
  return sms;
}

}  // namespace

namespace detail {

// Warpgroups per thread block of a wgmma call: one for block_size 16 and 32; for 64 and 128 the producer form
// (kWgmmaProducerForm: a warpgroup that only copies and two that multiply) wherever the zero points,
// if any, are 16-byte aligned for its bulk copies. Same-run A/B on the H200 (forced, same binary,
// docs/bench.md), against one warpgroup: DeepSeek-V3 w13 M = 2048 / 4096 / 8192 0.95 / 0.91 / 0.93,
// w2 0.93 / 0.93 / 0.93, Qwen3-30B-A3B w13 1.01 / 0.95 / 0.94, Mixtral w13 M = 256 0.95, M = 2048
// 0.95, M = 8192 0.94 (M = 4096 within its spread); against two warpgroups 0.93–0.98.
// Otherwise the two older forms: two warpgroups, sharing each activation
// chunk, where K ≥ 4096 and the items of 8 tile columns fill at least 20 rounds of the SMs; one
// otherwise, and always for 128-row items. Measured on the H200 (both forced, same binary,
// docs/bench.md): two were 1–5 % faster on DeepSeek-V3 w13 (K = 7168) M = 2048–8192 and on
// Mixtral w13 (K = 4096) M = 4096–8192, level on Mixtral M = 2048, and 3–6 % slower with K = 2048
// (DeepSeek-V3 w2 M = 2048–8192, Qwen3-30B-A3B w13 M = 1024–2048) and on Mixtral M = 1024
// (15 rounds): one thread block per SM leaves the tensor cores idle while an item's sums are stored,
// and a last round that holds fewer items than SMs leaves whole SMs idle, where with one warpgroup
// a lone thread block has its SM to itself and runs faster. Long K and many rounds make both small.
int choose_wgmma_warpgroups(const MarlinMoeArgs& args, std::int64_t block_capacity, int sms) {
  if (args.wgmma_warpgroups != 0) return args.wgmma_warpgroups;
  if (args.blocks.block_size < 64) return 1;  // 16- and 32-row items have the one form
  if (aligned(args.weights.zeros, 16)) return kWgmmaProducerForm;
  if (args.blocks.block_size != 64 || args.shape.k < 4096) return 1;
  std::int64_t blocks_on = sms;
  if (args.max_thread_blocks > 0) blocks_on = std::min<std::int64_t>(blocks_on, args.max_thread_blocks);
  const std::int64_t columns = wgmma_tile_columns(64, 2);
  const std::int64_t items = expected_block_count(args, block_capacity) * ((args.shape.n / 64 + columns - 1) / columns);
  return items >= 20 * blocks_on ? 2 : 1;
}

}  // namespace detail

const char* marlin_kernel_form_name(MarlinKernelForm form) {
  switch (form) {
    case MarlinKernelForm::none: return "none";
    case MarlinKernelForm::columns: return "columns";
    case MarlinKernelForm::slices: return "slices";
    case MarlinKernelForm::thread_block: return "thread-block";
    case MarlinKernelForm::wgmma: return "wgmma";
    case MarlinKernelForm::wgmma_2wg: return "wgmma-2wg";
    case MarlinKernelForm::wgmma_producer: return "wgmma-producer";
  }
  return "unknown";
}

int marlin_moe_wgmma_warpgroups(const MarlinMoeArgs& args, int device) {
  if (!marlin_moe_uses_wgmma(args, device)) return 0;
  return detail::choose_wgmma_warpgroups(args, args.blocks.sorted_capacity / args.blocks.block_size, sm_count(device));
}

namespace detail {

// Blocks moe_align will likely produce: the experts that get tokens (all of them once slots ≥ E,
// under roughly uniform routing) times the blocks each one's share fills.
std::int64_t likely_blocks(const MarlinMoeArgs& args, std::int64_t block_capacity) {
  const std::int64_t slots = args.blocks.num_slots;
  const std::int64_t experts = std::max<std::int64_t>(1, std::min<std::int64_t>(slots, args.weights.num_experts));
  const std::int64_t per_expert = (slots + experts - 1) / experts;
  return std::min(block_capacity, experts * ((per_expert + args.blocks.block_size - 1) / args.blocks.block_size));
}

// The mean number of blocks moe_align produces under uniform routing: each of M tokens picks each
// expert with probability p = top_k / E, so an expert's count n is Binomial(M, p) and it fills
// ⌈n / B⌉ blocks. Summed over the pmf near its mean (walked by the ratio of neighbouring terms),
// or, once the spread covers many blocks, n / B plus the mean round-up (B − 1) / 2B.
double expected_blocks(const MarlinMoeArgs& args) {
  const std::int64_t experts = std::max<std::int64_t>(1, args.weights.num_experts);
  const std::int64_t top_k = std::max(1, args.top_k);
  const std::int64_t tokens = args.blocks.num_slots / top_k;
  const double b = args.blocks.block_size;
  if (tokens <= 0) return 0.0;
  const double p = std::min(1.0, static_cast<double>(top_k) / static_cast<double>(experts));
  const double mean = static_cast<double>(tokens) * p;
  if (p >= 1.0) return static_cast<double>(experts) * std::ceil(static_cast<double>(tokens) / b);
  const double sd = std::sqrt(mean * (1.0 - p));
  if (sd >= 4.0 * b) return static_cast<double>(experts) * (mean / b + (b - 1.0) / (2.0 * b));
  const auto mode = static_cast<std::int64_t>(std::floor((static_cast<double>(tokens) + 1.0) * p));
  const double log_mode = std::lgamma(static_cast<double>(tokens) + 1.0) - std::lgamma(static_cast<double>(mode) + 1.0) -
                          std::lgamma(static_cast<double>(tokens - mode) + 1.0) + static_cast<double>(mode) * std::log(p) +
                          static_cast<double>(tokens - mode) * std::log1p(-p);
  const double odds = p / (1.0 - p);
  auto blocks_of = [b](std::int64_t n) { return std::ceil(static_cast<double>(n) / b); };
  double sum = std::exp(log_mode) * blocks_of(mode);
  double term = std::exp(log_mode);
  for (std::int64_t n = mode; n < tokens && term > 1e-12; ++n) {  // above the mode
    term *= static_cast<double>(tokens - n) / static_cast<double>(n + 1) * odds;
    sum += term * blocks_of(n + 1);
  }
  term = std::exp(log_mode);
  for (std::int64_t n = mode; n > 0 && term > 1e-12; --n) {  // below the mode
    term *= static_cast<double>(n) / static_cast<double>(tokens - n + 1) / odds;
    sum += term * blocks_of(n - 1);
  }
  return static_cast<double>(experts) * sum;
}

// Splits K over the 4 warps of a thread block (1, 2 or 4 ways): the shallowest split that still
// deals at least two work items to every resident thread block, else 4. Why: with fewer items than
// that, part of the GPU idles through the last round and the SMs run fewer warps than they need to
// keep the weight stream in flight; a deeper split costs a shared-memory reduction per item and
// shorter K runs. Measured on the H200 (every split forced, same binary), when it still ran the
// 8-row decode cells (now on the column kernel): the fastest or within 5 % of it on DeepSeek-V3,
// Qwen3-30B-A3B and Mixtral w13/w2, M 1–64. It now splits 16-, 32-, 48- and 64-row items.
// Items are counted with the mean block count (expected_blocks): the upper estimate likely_blocks
// counted 128 blocks for Qwen3 M = 16 where moe_align makes ~82, chose a 2-way split and left the
// second round half empty; the 4-way split measured 58.3 → 55.5 µs (same run).
int choose_warps_k(const MarlinMoeArgs& args, std::int64_t block_capacity, int row_groups, std::int64_t resident) {
  const std::int64_t blocks = expected_block_count(args, block_capacity);
  const std::int64_t k_tiles = args.shape.k / 16;
  const std::int64_t tile_columns = args.shape.n / 64;
  for (int warps_k : {1, 2}) {
    if (k_tiles < 4 * 2 * warps_k) return warps_k;  // a deeper split would leave < 4 K tiles per warp
    const std::int64_t warps_n = 4 / warps_k;
    const std::int64_t items = blocks * row_groups * ((tile_columns + warps_n - 1) / warps_n);
    if (items >= 2 * resident) return warps_k;
  }
  return 4;
}

int marlin_token_tiles(int block_size, bool k_shard) {
  if (block_size == 48) return 2;
  if (block_size >= 64) return k_shard ? 4 : 8;
  return block_size / 8;
}

}  // namespace detail

namespace {

// Bytes of the act-order activations at the workspace's start (0 without act-order).
std::size_t gather_bytes(const MarlinMoeArgs& args) {
  if (!args.weights.act_order || args.blocks.num_slots <= 0 || args.shape.k <= 0) return 0;
  const std::size_t bytes = static_cast<std::size_t>(args.blocks.num_slots) * static_cast<std::size_t>(args.shape.k) * 2;
  return (bytes + 255) / 256 * 256;
}

// Whether the call runs 8-row items (the slice kernel, which needs the slice workspace).
bool eight_row_items(const MarlinMoeArgs& args) {
  return args.blocks.num_slots > 0 && detail::marlin_token_tiles(args.blocks.block_size, k_shard(args.weights)) == 1;
}

// The producer form's item counter (block_size 64 and 128), after the gathered activations.
bool counts_items(const MarlinMoeArgs& args) {
  return args.blocks.num_slots > 0 && (args.blocks.block_size == 64 || args.blocks.block_size == 128);
}

// A stamp per call for the arrival words of the slice kernel and of the 32-row split: call_stamp of
// the next value of a per-process counter.
std::uint32_t next_call_stamp() {
  static std::atomic<std::uint32_t> counter{0};
  for (;;) {
    const std::uint32_t stamp = detail::call_stamp(counter.fetch_add(1, std::memory_order_relaxed));
    if (stamp != 0) return stamp;
  }
}

}  // namespace

std::int64_t marlin_moe_split_slots(const MarlinMoeArgs& args) {
  if (args.blocks.block_size != 32 || !args.split_last_round || args.blocks.num_slots <= 0 || args.shape.n <= 0) return 0;
  const std::int64_t items = args.blocks.num_slots * ((args.shape.n + 255) / 256);  // a bound: a block holds ≥ 1 slot
  return std::min(kMarlinLastRoundSlots, 4 * items);
}

std::size_t marlin_moe_workspace_bytes(const MarlinMoeArgs& args) {
  const std::int64_t split_slots = marlin_moe_split_slots(args);
  return gather_bytes(args) + (eight_row_items(args) ? detail::kSliceWorkspaceBytes : 0) +
         (counts_items(args) ? detail::kItemCounterBytes : 0) +
         (split_slots > 0 ? kMarlinLastRoundArrivalBytes + static_cast<std::size_t>(split_slots) * kMarlinLastRoundSlotBytes
                          : 0);
}

namespace {

// The slice kernel's plan for an 8-row call (grid 0: the column kernel; a forced warps_k runs it).
// blocks: expected_block_count.
detail::SlicePlan slice_plan(const MarlinMoeArgs& args, std::int64_t blocks, int sms) {
  if (args.warps_k != 0) return {1, 0, 1};
  return detail::plan_slices(args, blocks * (args.shape.n / 64), sms);
}

std::int64_t expected_block_count(const MarlinMoeArgs& args) {
  return expected_block_count(args, args.blocks.sorted_capacity / args.blocks.block_size);
}

// Whether the call runs 8-row items on mma.sync (the slice or the column kernel) on `device`.
bool runs_eight_row_items(const MarlinMoeArgs& args, int device) {
  return eight_row_items(args) && args.blocks.sorted_capacity > 0 && !marlin_moe_uses_wgmma(args, device);
}

}  // namespace

bool marlin_moe_uses_slices(const MarlinMoeArgs& args, int device) {
  return runs_eight_row_items(args, device) && slice_plan(args, expected_block_count(args), sm_count(device)).grid > 0;
}

MarlinColumnPlan marlin_moe_column_plan(const MarlinMoeArgs& args, int device) {
  if (!runs_eight_row_items(args, device)) return {};
  const int sms = sm_count(device);
  const std::int64_t blocks = expected_block_count(args);
  if (slice_plan(args, blocks, sms).grid > 0) return {};
  const detail::ColumnPlan plan = detail::plan_columns(args, blocks, sms);
  return {plan.columns, plan.warps_k};
}

namespace detail {

// Where 8-row items run on the slice kernel (marlin_slice_kernel.cuh): only where the expected tile
// columns fill at least one round of resident warps. There its whole-column rounds and one sliced
// last round measured faster than the thread-block kernel (H200, same run: Qwen3-30B-A3B w13 M = 16
// 57.9 → 52.8 µs, Mixtral w13 M = 4 124.2 → 117.9) or equal (DeepSeek-V3 w13 and w2, M = 4–64).
// Where one round holds them, the thread-block kernel's K split inside a block was faster: slices
// across warps pay a pass through L2 and an arrival per slice (Qwen3 M = 1: 13.0 µs with a 4-way
// split in shared memory, 16.7 with 8 slices across warps), and unsplit whole columns leave warps
// idle (DeepSeek-V3 w13 M = 4: 156 vs 173 µs). Slices are whole rounds of kStages tiles, at least
// kMinSliceRounds each.
// Two tile columns per warp (where N holds whole pairs and there is no K shard) where the expected
// column pairs fill at least 9/10 of a round of the two-column grid's warps (3 thread blocks per
// SM): a warp then copies, waits for and reads each K tile's activation words once for two
// columns. Measured on the H200 (same run, docs/results/ab-h200-2026-12-03-c.txt): 5–17 % faster
// from 0.98 rounds of pairs on (DeepSeek-V3 w13 M = 16 445 → 373 µs; Qwen3-30B-A3B M = 64 77.8 →
// 68.9 at 0.98 rounds, DeepSeek-V3 w2 M = 4 89.5 → 85.0 at 1.10), 2 % slower at 0.85 (Mixtral w13
// M = 4: its pairs leave 15 % of the two-column warps idle, its single columns fill a round).
SlicePlan plan_slices(const MarlinMoeArgs& args, std::int64_t likely_columns, int sms) {
  const auto grid = [&](int columns) {
    std::int64_t blocks = std::int64_t{sms} * marlin_slice_resident_blocks(columns);
    if (args.max_thread_blocks > 0) blocks = std::min<std::int64_t>(blocks, args.max_thread_blocks);
    // A tail unit takes `columns` workspace slots: at most kMaxSliceWarps slots in all.
    return std::min<std::int64_t>(blocks, kMaxSliceWarps / (4 * columns));
  };
  const std::int64_t blocks = grid(1);
  if (likely_columns < 4 * blocks) return {1, 0, 1};
  const int stages = marlin_k_stages(marlin_bits(args.weights.type), 1);
  const std::int64_t rounds = (args.shape.k / 16 + stages - 1) / stages;
  const int max_slices = static_cast<int>(std::clamp<std::int64_t>(rounds / kMinSliceRounds, 1, 64));
  int columns = args.warp_columns;
  if (columns == 0) {
    columns = two_columns_allowed(args) && 10 * (likely_columns / 2) >= 9 * 4 * grid(2) ? 2 : 1;
  }
  return {max_slices, grid(columns), columns};
}

// The column kernel's plan: two tile columns per warp where N holds whole pairs, there is no K
// shard and the pairs keep kMinBusyWarps warps an SM busy; warps_k from {1, 2, 4}, the one with the
// fewest modelled rounds, (rounds of units) × (⌈K rounds / warps_k⌉ + kUnitRounds), where a round
// of units is as many units as the resident thread blocks (⌊warps an SM holds / warps_k⌋ per SM)
// and kUnitRounds is a unit's fixed cost (the ring's first fill, the reduction and the stores) in K
// rounds; ties go to fewer warps. Fitted to a same-run sweep on the H200
// (docs/results/ab-h200-2026-12-03-f.txt: every warps_k of 1–20 with one column and 1–12 with two
// on the seven decode cells that ran the 4-warp thread-block kernel): it picks the fastest measured
// or within 5 % of it on each, from 1 % slower than that kernel (Qwen3 M = 1) to 9 % faster. Three
// warps, and more than four, lost on most cells even where the model favoured them (more warps a
// block: 5–30 % slower on DeepSeek-V3 w13 M = 1), so they are not candidates. Two columns halve the
// warps: where the pairs keep fewer than 4 warps an SM busy, single columns keep more loads in
// flight (Qwen3-30B-A3B w13 M = 1, 96 pairs on 4 warps each: 13.8 µs with pairs, 13.2 with single
// columns). Forced values (warp_columns, warps_k) fix their part.
ColumnPlan plan_columns(const MarlinMoeArgs& args, std::int64_t blocks, int sms) {
  constexpr std::int64_t kUnitRounds = 5;
  constexpr std::int64_t kMinBusyWarps = 4;
  const bool pairs_allowed = two_columns_allowed(args) && args.warps_k <= marlin_column_max_warps(2);
  if (args.warps_k != 0) return {args.warp_columns != 0 ? args.warp_columns : pairs_allowed ? 2 : 1, args.warps_k};
  const int stages = marlin_k_stages(marlin_bits(args.weights.type), 1);
  const std::int64_t rounds = (args.shape.k / 16 + stages - 1) / stages;
  // The split with the fewest modelled rounds for `columns` a warp, and the warps it keeps busy.
  struct Split {
    int warps = 1;
    std::int64_t busy_warps = 0;
  };
  const auto fewest_rounds = [&](int columns) {
    const std::int64_t units = std::max<std::int64_t>(1, blocks) * (args.shape.n / 64 / columns);
    Split best;
    std::int64_t best_rounds = -1;
    for (int w : {1, 2, 4}) {
      if (w > 1 && w > rounds) break;
      std::int64_t slots = std::int64_t{marlin_column_max_warps(columns) / w} * sms;
      if (args.max_thread_blocks > 0) slots = std::min<std::int64_t>(slots, args.max_thread_blocks);
      const std::int64_t modelled = (units + slots - 1) / slots * ((rounds + w - 1) / w + kUnitRounds);
      if (best_rounds < 0 || modelled < best_rounds) {
        best_rounds = modelled;
        best = {w, std::min(units, slots) * w};
      }
    }
    return best;
  };
  if (args.warp_columns != 0) return {args.warp_columns, fewest_rounds(args.warp_columns).warps};
  if (pairs_allowed) {
    const Split pairs = fewest_rounds(2);
    if (pairs.busy_warps >= kMinBusyWarps * sms) return {2, pairs.warps};
  }
  return {1, fewest_rounds(1).warps};
}

}  // namespace detail

void marlin_moe(const MarlinMoeArgs& args) {
  check_arguments(args);
  const MarlinMoeWeights& w = args.weights;
  const bool act_order = w.act_order;
  const int device = same_device("marlin_moe", {{args.a, "a"},
                                                {args.c, "c"},
                                                {w.qweight, "qweight"},
                                                {w.scales, "scales"},
                                                {w.zeros, "zeros", true},
                                                {w.perm, "perm", !act_order},
                                                {w.g_idx, "g_idx", true},
                                                {args.workspace, "workspace", marlin_moe_workspace_bytes(args) == 0},
                                                {args.topk_weights, "topk_weights", !args.mul_topk_weights},
                                                {args.blocks.sorted_token_ids, "sorted_token_ids"},
                                                {args.blocks.expert_ids, "expert_ids"},
                                                {args.blocks.num_tokens_post_padded, "num_tokens_post_padded"}});
  DeviceGuard guard(device);
  const std::string wgmma_unavailable_here = wgmma_unavailable(args, device);
  if (args.mma_path == MarlinMmaPath::wgmma && !wgmma_unavailable_here.empty()) {
    reject("mma_path = wgmma cannot run here: " + wgmma_unavailable_here);
  }
  if (args.wgmma_warpgroups >= 2 && !wgmma_unavailable_here.empty()) {
    reject("wgmma_warpgroups = " + str(args.wgmma_warpgroups) + " cannot run here (it needs the wgmma path): " +
           wgmma_unavailable_here);
  }
  const bool wgmma = uses_wgmma(args, wgmma_unavailable_here);
  if (args.launched != nullptr) *args.launched = MarlinLaunchRecord{};
  if (args.blocks.num_slots == 0 || args.blocks.sorted_capacity == 0) return;

  const int block_size = args.blocks.block_size;
  const int token_tiles = detail::marlin_token_tiles(block_size, k_shard(w));
  const int sms = sm_count(device);
  if ((args.warp_columns == 2 || args.warps_k != 0) && (wgmma || token_tiles != 1)) {
    const std::string what = args.warp_columns == 2 ? "warp_columns = 2" : "warps_k = " + str(args.warps_k);
    reject(what + " runs 8-row items only (block_size 8 on mma.sync); here block_size = " + str(block_size) +
           (wgmma ? " on the wgmma path" : "") + (token_tiles != 1 ? ", which runs taller items" : ""));
  }

  detail::MarlinParams p{};
  p.a = static_cast<const std::uint16_t*>(args.a);
  p.top_k = args.top_k;
  p.block_capacity = args.blocks.sorted_capacity / block_size;
  if (act_order) {
    detail::MarlinGatherParams g{};
    g.a = static_cast<const std::uint16_t*>(args.a);
    g.out = static_cast<std::uint16_t*>(args.workspace);
    g.perm = w.perm;
    g.sorted_token_ids = args.blocks.sorted_token_ids;
    g.expert_ids = args.blocks.expert_ids;
    g.num_tokens_post_padded = args.blocks.num_tokens_post_padded;
    g.k = args.shape.k;
    g.num_slots = args.blocks.num_slots;
    g.block_capacity = p.block_capacity;
    g.block_size = block_size;
    g.top_k = args.top_k;
    g.num_experts = w.num_experts;
    detail::launch_marlin_gather(g, sms, args.stream);
    p.a = g.out;  // one gathered row per routed slot
    p.top_k = 1;
  }
  p.c = static_cast<std::uint16_t*>(args.c);
  p.qweight = w.qweight;
  p.scales = static_cast<const std::uint16_t*>(w.scales);
  p.zeros = w.zeros;
  p.g_idx = k_shard(w) ? w.g_idx : nullptr;
  p.topk_weights = args.mul_topk_weights ? args.topk_weights : nullptr;
  p.sorted_token_ids = args.blocks.sorted_token_ids;
  p.expert_ids = args.blocks.expert_ids;
  p.num_tokens_post_padded = args.blocks.num_tokens_post_padded;
  p.n = args.shape.n;
  p.k = args.shape.k;
  p.num_slots = args.blocks.num_slots;
  p.k_tiles = static_cast<int>(args.shape.k / 16);
  p.n_tiles = static_cast<int>(args.shape.n / 64);
  p.groups = w.num_groups;
  p.channelwise = !act_order && w.num_groups == 1;
  p.group_tile_shift = w.group_size == 32 ? 1 : w.group_size == 64 ? 2 : 3;
  p.group_tile_mask = p.channelwise ? 0x7FFFFFFF : (1 << p.group_tile_shift) - 1;
  p.num_experts = w.num_experts;
  p.block_size = block_size;
  // The work items of the kernel this call runs, and how many of them moe_align likely makes (the
  // persistent grid's size): one plan per kernel, from one estimate of the blocks.
  const std::int64_t blocks = expected_block_count(args, p.block_capacity);
  const int wgmma_warpgroups = wgmma ? detail::choose_wgmma_warpgroups(args, p.block_capacity, sms) : 0;
  p.max_grid = args.max_thread_blocks;
  p.row_groups = 1;
  p.warps_k = 1;
  if (wgmma) {
    // Items are whole blocks of 16 to 128 rows across 4 (2 for 128 rows) Marlin tile columns per
    // warpgroup; the warps move through K together (no K split inside a thread block).
    const int columns = detail::wgmma_tile_columns(block_size, wgmma_warpgroups);
    p.n_items = (p.n_tiles + columns - 1) / columns;
    p.likely_items = blocks * p.n_items;
  } else if (token_tiles == 1) {
    // 8-row items: the slice kernel where the tile columns fill the GPU, else the column kernel.
    const detail::SlicePlan plan = slice_plan(args, blocks, sms);
    p.max_slices = plan.max_slices;
    p.slice_grid = plan.grid;
    p.warp_columns = plan.columns;
    if (plan.grid == 0) {
      const detail::ColumnPlan columns = detail::plan_columns(args, blocks, sms);
      p.warp_columns = columns.columns;
      p.warps_k = columns.warps_k;
      p.likely_items = blocks * (p.n_tiles / columns.columns);
    } else {  // the slice kernel's workspace and this call's stamp
      char* slice_ws = static_cast<char*>(args.workspace) + gather_bytes(args);
      p.slice_partials = reinterpret_cast<float*>(slice_ws);
      p.slice_arrivals = reinterpret_cast<unsigned long long*>(slice_ws + detail::kMaxSliceWarps * detail::kSliceSlotBytes);
      p.call_stamp = next_call_stamp();
    }
  } else {
    // The thread-block kernel: 4 warps, K split warps_k ways among them.
    p.row_groups = (block_size + 8 * token_tiles - 1) / (8 * token_tiles);
    std::int64_t resident = static_cast<std::int64_t>(sms) * detail::marlin_resident_blocks(token_tiles);
    if (args.max_thread_blocks > 0) resident = std::min<std::int64_t>(resident, args.max_thread_blocks);
    p.warps_k = detail::choose_warps_k(args, p.block_capacity, p.row_groups, resident);
    const int warps_n = 4 / p.warps_k;
    p.n_items = (p.n_tiles + warps_n - 1) / warps_n;
    p.likely_items = blocks * p.row_groups * p.n_items;
  }
  p.implicit_zero = marlin_bits(w.type) == 4 ? 8u : 128u;
  if (counts_items(args)) {
    p.item_counter = reinterpret_cast<unsigned long long*>(static_cast<char*>(args.workspace) + gather_bytes(args));
  }
  if (const std::int64_t split_slots = marlin_moe_split_slots(args); wgmma && block_size == 32 && split_slots > 0) {
    char* const counters = static_cast<char*>(args.workspace) + gather_bytes(args);  // the last round's K pieces
    p.split_arrivals = reinterpret_cast<unsigned long long*>(counters);
    p.split_partials = reinterpret_cast<float*>(counters + kMarlinLastRoundArrivalBytes);
    p.split_slots = split_slots;
    p.call_stamp = next_call_stamp();
  }

  const bool shard = k_shard(w);
  if (args.launched != nullptr) {
    MarlinLaunchRecord& r = *args.launched;
    r.block_size = block_size;
    r.act_order_gather = act_order;
    if (wgmma) {
      r.form = wgmma_warpgroups == 3   ? MarlinKernelForm::wgmma_producer
               : wgmma_warpgroups == 2 ? MarlinKernelForm::wgmma_2wg
                                       : MarlinKernelForm::wgmma;
      r.wgmma_warpgroups = wgmma_warpgroups;
      r.split_slots = p.split_slots;
    } else {
      r.token_tiles = token_tiles;
      r.form = token_tiles != 1 ? MarlinKernelForm::thread_block
               : p.slice_grid > 0 ? MarlinKernelForm::slices
                                  : MarlinKernelForm::columns;
      r.warps_k = r.form == MarlinKernelForm::slices ? 0 : p.warps_k;
      r.warp_columns = token_tiles == 1 ? p.warp_columns : 0;
      r.max_slices = r.form == MarlinKernelForm::slices ? p.max_slices : 0;
      r.slice_grid = r.form == MarlinKernelForm::slices ? static_cast<int>(p.slice_grid) : 0;
    }
  }
#if defined(MOEVAL_HAVE_WGMMA)
  if (wgmma) {
    if (args.dtype == ActDType::f16) {
      if (marlin_bits(w.type) == 4) detail::launch_marlin_wgmma<__half, 4>(p, block_size, wgmma_warpgroups, args.stream);
      else detail::launch_marlin_wgmma<__half, 8>(p, block_size, wgmma_warpgroups, args.stream);
    } else {
      if (marlin_bits(w.type) == 4) detail::launch_marlin_wgmma<__nv_bfloat16, 4>(p, block_size, wgmma_warpgroups, args.stream);
      else detail::launch_marlin_wgmma<__nv_bfloat16, 8>(p, block_size, wgmma_warpgroups, args.stream);
    }
    return;
  }
#endif
  if (args.dtype == ActDType::f16) {
    if (marlin_bits(w.type) == 4) detail::launch_marlin<__half, 4>(p, token_tiles, shard, args.stream);
    else detail::launch_marlin<__half, 8>(p, token_tiles, shard, args.stream);
  } else {
    if (marlin_bits(w.type) == 4) detail::launch_marlin<__nv_bfloat16, 4>(p, token_tiles, shard, args.stream);
    else detail::launch_marlin<__nv_bfloat16, 8>(p, token_tiles, shard, args.stream);
  }
}

}  // namespace moeval::kernels
