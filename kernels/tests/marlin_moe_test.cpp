// marlin_moe on Marlin-packed fixtures against the fp64 CPU reference: bitwise in the exact tier,
// under the statistical bound in the bounded tier, over weight type × group × act-order (with and
// without is_k_full) × dtype × GEMM × block size, with bitwise repeatability. (Argument errors:
// host/marlin_args_host_test.cpp, in the cpu tier.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../marlin_moe/marlin_params.h"
#include "device_vector.h"
#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/dtype.h"
#include "moeval/tolerance/compare.h"

namespace moeval::kernels::test {
namespace {


struct Config {
  WeightType type = WeightType::uint4b8;
  int group = 128;
  bool act_order = false;
  bool k_full = true;
  DType act = DType::bf16;
  ProblemKind gemm = ProblemKind::gemm1;
  Tier tier = Tier::exact;
  int block = 0;  // 0 = choose_block_size
  std::int64_t experts = 8, tokens = 24, topk = 2, hidden = 256, inter = 256;
  bool expert_map = false;
  std::int64_t k_shards = 1;  // > 1: a real K shard (act-order, is_k_full = false), rank k_shard_rank
  std::int64_t k_shard_rank = 0;
  MarlinMmaPath path = MarlinMmaPath::automatic;
  int warpgroups = 0;  // wgmma_warpgroups: 0 chosen, 1 or 2 forced, 3 the producer form forced
  // block_size 8: cap the thread blocks (max_thread_blocks) so that the call runs the slice kernel:
  // whole-column rounds, then a last round whose columns are split in K slices (see slice_cap).
  bool sliced_tail = false;
  // warp_columns: Marlin tile columns per warp of the 8-row items (0 chosen, 1 or 2 forced).
  int warp_columns = 0;
  // > 0: at most this many thread blocks (max_thread_blocks), so that each runs many items in turn.
  int thread_blocks = 0;
  // > 0: K split over this many warps of a thread block. block_size 8: forced (args.warps_k), which
  // runs the column kernel; taller items (the mma.sync thread-block kernel): the smallest thread-block
  // cap under which the call splits K that way (1, 2 or 4, choose_warps_k). Asserted.
  int warps_k = 0;
  // The routing must give some local expert a last 64-row block of 1..16 rows after a full one (an
  // expert tail that the producer form's 64-row items take along) and some other a longer last
  // block: asserted, so that the case cannot stop covering both when the fixtures change.
  bool expert_tails = false;
  // topk = 1 and a routing built here instead of drawn: experts 2j hold exactly 64 tokens (one full
  // block) and experts 2j + 1 then 1..16 (a short block right after it), the pair in which a wrong
  // expert test would take another expert's rows along as a tail. Asserted. `runs` calls, each
  // bitwise equal to the first: rows computed twice by two items race for their outputs.
  bool tail_pairs = false;
  int runs = 2;
  // Also run with the rows of every moe block shuffled (padding moved off the blocks' ends): the
  // outputs must not change by a bit (every output row is summed alone, in the same K order).
  bool shuffled = false;
  // c one element past a 4-byte boundary, as a view one element into a buffer gives: only 2-byte
  // aligned, which every store path must take (a kernel writing 4 bytes at a time would fault).
  bool odd_output = false;
  // block_size 32 on wgmma, the last round of items split in K pieces:
  //   capped:      cap the thread blocks so that a last round is left to split (last_round_cap), and
  //                assert from the sums left in the workspace's slots that it was split;
  //   capped_off:  the same cap with MarlinMoeArgs::split_last_round = false: assert that the call
  //                wrote nothing to the arrival words and slots (the flag, not the shape, kept every
  //                item whole);
  //   natural:     no cap, the shape itself leaves a last round to split (asserted as `capped`).
  enum class SplitRound { none, capped, capped_off, natural };
  SplitRound split_round = SplitRound::none;
  // Fill the workspace with small int32 values (0..4095, as a freed index array leaves it) instead of
  // random bytes: no arrival word may then count for the call (its stamp never is such a value).
  bool index_workspace = false;

  std::string name() const {
    std::string s = std::string(to_string(type)) + "_g" + (group < 0 ? std::string("ch") : std::to_string(group));
    if (act_order) s += k_full ? "_actorder" : "_actorder_kpart";
    s += act == DType::bf16 ? "_bf16" : "_fp16";
    s += gemm == ProblemKind::gemm1 ? "_w13" : "_w2";
    s += tier == Tier::exact ? "_exact" : "_bounded";
    s += "_E" + std::to_string(experts) + "_M" + std::to_string(tokens) + "_k" + std::to_string(topk);
    if (block != 0) s += "_B" + std::to_string(block);
    if (hidden != 256 || inter != 256) s += "_H" + std::to_string(hidden) + "_I" + std::to_string(inter);
    if (expert_map) s += "_ep";
    if (k_shards > 1) s += "_kshard" + std::to_string(k_shard_rank) + "of" + std::to_string(k_shards);
    if (path == MarlinMmaPath::wgmma) s += "_wgmma";
    if (path == MarlinMmaPath::mma_sync) s += "_mmasync";
    if (warpgroups == 3) s += "_producer";
    else if (warpgroups != 0) s += "_wg" + std::to_string(warpgroups);
    if (sliced_tail) s += "_slicedtail";
    if (warp_columns != 0) s += "_cw" + std::to_string(warp_columns);
    if (thread_blocks > 0) s += "_tb" + std::to_string(thread_blocks);
    if (warps_k > 0) s += "_wk" + std::to_string(warps_k);
    if (tail_pairs) s += "_tailpairs";
    if (runs != 2) s += "_runs" + std::to_string(runs);
    if (shuffled) s += "_shuffled";
    if (odd_output) s += "_oddc";
    if (split_round == SplitRound::capped) s += "_splitround";
    if (split_round == SplitRound::capped_off) s += "_capnosplit";
    if (split_round == SplitRound::natural) s += "_naturalround";
    if (index_workspace) s += "_idxws";
    return s;
  }
  MoeProblem problem(std::uint64_t seed) const {
    MoeProblem p;
    p.kind = gemm;
    p.experts = experts;
    p.tokens = tokens;
    p.topk = topk;
    p.hidden = hidden;
    p.inter = inter;
    p.scheme = {type, group, act_order, k_full, act};
    p.tier = tier;
    p.seed = seed;
    p.k_shards = k_shards;
    p.k_shard_rank = k_shard_rank;
    if (expert_map) {
      std::int32_t local = 0;
      for (std::int64_t e = 0; e < experts; ++e) p.expert_map.push_back(e % 3 == 2 ? -1 : local++);
    }
    p.validate();
    return p;
  }
};

// Everything one launch needs on the device, built from a fixtures case. The output buffer holds one
// guard element more than c, before c (c_offset = 1: c is then only 2-byte aligned) or after it;
// run() checks that no call wrote it.
struct DeviceCase {
  explicit DeviceCase(const GemmCase& c, int block_size, int output_offset = 0)
      : packed(layouts::pack_marlin(c.w)),
        a(c.a),
        qweight(packed.qweight),
        scales(packed.scales),
        zeros(packed.zeros),
        g_idx(packed.g_idx),
        perm(packed.perm),
        topk_ids(c.routing.topk_ids),
        topk_weights(c.routing.topk_weights),
        expert_map(c.problem.expert_map),
        slots(static_cast<std::int64_t>(c.routing.topk_ids.size())),
        block(block_size != 0 ? block_size
                              : choose_block_size({c.problem.tokens, c.problem.hidden, c.problem.inter,
                                                   int(c.problem.experts), int(c.problem.topk)},
                                                  MoeWeightFormat::marlin)),
        sorted(static_cast<std::size_t>(moe_align_sorted_capacity(slots, int(c.problem.experts), block))),
        expert_ids(static_cast<std::size_t>(moe_align_block_capacity(slots, int(c.problem.experts), block))),
        post_padded(1),
        align_ws(moe_align_workspace_bytes(slots, int(c.problem.experts))),
        c_offset(output_offset),
        out(static_cast<std::size_t>(slots * c.shape.n + 1)) {
    MoeAlignArgs align;
    align.topk_ids = topk_ids.get();
    align.num_slots = slots;
    align.num_experts = int(c.problem.experts);
    align.block_size = block;
    align.expert_map = c.problem.expert_map.empty() ? nullptr : expert_map.get();
    align.sorted_token_ids = sorted.get();
    align.expert_ids = expert_ids.get();
    align.num_tokens_post_padded = post_padded.get();
    align.workspace = align_ws.size() ? align_ws.get() : nullptr;
    align.workspace_bytes = align_ws.size();
    moe_align(align);

    args.a = a.get();
    args.c = out.get() + c_offset;
    MarlinMoeWeights& w = args.weights;
    w.qweight = qweight.get();
    w.scales = scales.get();
    w.zeros = packed.zeros.empty() ? nullptr : zeros.get();
    w.g_idx = packed.g_idx.empty() ? nullptr : g_idx.get();
    w.perm = packed.perm.empty() ? nullptr : perm.get();
    w.num_experts = int(c.w.experts);
    w.type = testbed::to_marlin_weight_type(c.w.scheme.type);
    w.group_size = c.w.scheme.group_size;
    w.num_groups = int(c.w.groups());
    w.act_order = c.w.scheme.act_order;
    w.is_k_full = c.w.scheme.is_k_full;
    args.blocks = {sorted.get(), expert_ids.get(), post_padded.get(), static_cast<std::int64_t>(sorted.size()), block, slots};
    args.shape = {c.shape.n, c.shape.k};
    args.top_k = int(c.a_row_divisor);
    args.dtype = c.w.scheme.act == DType::bf16 ? ActDType::bf16 : ActDType::f16;
    args.topk_weights = topk_weights.get();
    args.mul_topk_weights = c.mul_topk_weights;
    workspace = std::make_unique<DeviceVector<unsigned char>>(marlin_moe_workspace_bytes(args));
    args.workspace = workspace->size() ? workspace->get() : nullptr;
    args.workspace_bytes = workspace->size();
  }

  // c after a call, without the guard element.
  std::vector<std::uint16_t> run() {
    out.poison(0xFF);  // NaN in fp16 and bf16: an element the kernel skips shows
    marlin_moe(args);
    std::vector<std::uint16_t> all = out.download();
    const std::size_t guard = c_offset == 0 ? all.size() - 1 : 0;
    EXPECT_EQ(all[guard], 0xFFFF) << "the call wrote the element " << (c_offset == 0 ? "after" : "before") << " c";
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(guard));
    return all;
  }
  // Fills the workspace with int32 values 0, 1, …, 4095, 0, 1, …: what a freed index array leaves.
  void fill_workspace_with_indices() {
    std::vector<std::int32_t> values(workspace->size() / 4);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::int32_t(i % 4096);
    std::vector<unsigned char> bytes(workspace->size(), 0);
    std::memcpy(bytes.data(), values.data(), values.size() * 4);
    workspace->upload(bytes);
  }
  // Fills the workspace with pseudo-random bytes: no call may depend on what it held before.
  void scramble_workspace(std::uint64_t seed) {
    std::vector<unsigned char> bytes(workspace->size());
    std::mt19937_64 rng(seed);
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng() >> 56);
    workspace->upload(bytes);
  }

  layouts::MarlinWeights packed;
  DeviceVector<std::uint16_t> a;
  DeviceVector<std::uint32_t> qweight;
  DeviceVector<std::uint16_t> scales;
  DeviceVector<std::uint32_t> zeros;
  DeviceVector<std::int32_t> g_idx, perm, topk_ids;
  DeviceVector<float> topk_weights;
  DeviceVector<std::int32_t> expert_map;
  std::int64_t slots;
  int block;
  DeviceVector<std::int32_t> sorted, expert_ids, post_padded;
  DeviceVector<unsigned char> align_ws;
  int c_offset;                     // c = out + c_offset
  DeviceVector<std::uint16_t> out;  // c and a guard element
  std::unique_ptr<DeviceVector<unsigned char>> workspace;
  MarlinMoeArgs args;
};

// The smallest thread-block cap b ≥ 2 whose 4b warps leave a last round of at most 2b of the
// `columns` tile columns, so that it is split in ≥ 2 K slices, after ≥ 1 round of whole columns.
int slice_cap(std::int64_t columns) {
  for (int b = 2; 4 * b <= columns; ++b) {
    const std::int64_t tail = columns % (4 * b);
    if (tail > 0 && tail <= 2 * b) return b;
  }
  return 0;
}

// The smallest thread-block cap b ≥ 2 under which `items` items dealt round-robin leave a last round
// of 1..b/2 items (which a 32-row call then splits in K pieces), after ≥ 1 full round; 0 if none.
int last_round_cap(std::int64_t items) {
  for (int b = 2; b < items; ++b) {
    const std::int64_t rest = items % b;
    if (rest > 0 && 2 * rest <= b) return b;
  }
  return 0;
}

// Tokens routed to each local expert (global ids through the expert map, if any).
std::vector<std::int64_t> local_expert_counts(const GemmCase& c) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(c.problem.experts), 0);
  for (std::int32_t e : c.routing.topk_ids) {
    const std::int32_t local = c.problem.expert_map.empty() ? e : c.problem.expert_map[static_cast<std::size_t>(e)];
    if (local >= 0) ++counts[static_cast<std::size_t>(local)];
  }
  return counts;
}

// Shuffles the entries of every moe block in place on the device (fixed seed).
void shuffle_blocks(DeviceCase& d, std::uint64_t seed) {
  std::vector<std::int32_t> sorted = d.sorted.download();
  const std::int64_t rows = d.post_padded.download()[0];
  std::mt19937_64 rng(seed);
  for (std::int64_t b = 0; b < rows; b += d.block) std::shuffle(sorted.begin() + b, sorted.begin() + b + d.block, rng);
  d.sorted.upload(sorted);
}

// The `tail_pairs` routing of a topk = 1 case: for j < E / 2, expert 2j gets 64 tokens and expert
// 2j + 1 gets 1 + j % 16, in a seeded random token order. tokens must be their sum. (A first version
// drew routing weights of 24 significant bits here: the exact tier's weights are powers of two, so
// that w·sum rounds once; with those, 4 of GEMM2's outputs were one rounding off the reference.)
void route_tail_pairs(GemmCase& c, std::uint64_t seed) {
  std::vector<std::int32_t> ids;
  for (std::int32_t j = 0; 2 * j + 1 < c.problem.experts; ++j) {
    ids.insert(ids.end(), 64, 2 * j);
    ids.insert(ids.end(), 1 + j % 16, 2 * j + 1);
  }
  ASSERT_EQ(c.problem.topk, 1);
  ASSERT_EQ(std::int64_t(ids.size()), c.problem.tokens) << "tokens must be the pairs' sum";
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed));
  c.routing.topk_ids = ids;  // the drawn weights stay: one per token, as the tier draws them
}

// What the call launched (MarlinLaunchRecord, filled from the values the launch took) against what
// the case forced or needs: a forced choice read back through the query functions would only echo
// the argument, so the record is the evidence that the forced kernel, split and form ran. The
// query functions the benchmark plans with must agree with it too.
void check_launch(const Config& config, const DeviceCase& d, const MarlinLaunchRecord& r) {
  const bool wgmma_form = r.form == MarlinKernelForm::wgmma || r.form == MarlinKernelForm::wgmma_2wg ||
                          r.form == MarlinKernelForm::wgmma_producer;
  ASSERT_NE(r.form, MarlinKernelForm::none) << "the call launched nothing";
  EXPECT_EQ(r.block_size, d.block);
  EXPECT_EQ(wgmma_form, marlin_moe_uses_wgmma(d.args, 0)) << "ran " << marlin_kernel_form_name(r.form);
  EXPECT_EQ(r.wgmma_warpgroups, marlin_moe_wgmma_warpgroups(d.args, 0)) << "ran " << marlin_kernel_form_name(r.form);
  EXPECT_EQ(r.form == MarlinKernelForm::slices, marlin_moe_uses_slices(d.args, 0)) << "ran " << marlin_kernel_form_name(r.form);
  if (r.form == MarlinKernelForm::columns) {
    const MarlinColumnPlan plan = marlin_moe_column_plan(d.args, 0);
    EXPECT_EQ(r.warps_k, plan.warps_k);
    EXPECT_EQ(r.warp_columns, plan.warp_columns);
  }
  EXPECT_EQ(r.act_order_gather, config.act_order);
  if (config.path == MarlinMmaPath::wgmma) {
    EXPECT_TRUE(wgmma_form) << "forced wgmma, ran " << marlin_kernel_form_name(r.form);
  }
  if (config.path == MarlinMmaPath::mma_sync) {
    EXPECT_FALSE(wgmma_form) << "forced mma.sync, ran " << marlin_kernel_form_name(r.form);
  }
  if (config.warpgroups != 0) {
    EXPECT_EQ(r.wgmma_warpgroups, config.warpgroups) << "ran " << marlin_kernel_form_name(r.form);
  }
  if (config.sliced_tail) {
    EXPECT_EQ(r.form, MarlinKernelForm::slices) << "ran " << marlin_kernel_form_name(r.form);
    EXPECT_GT(r.max_slices, 1) << "the slice kernel may not split a last-round column";
  }
  if (config.warp_columns != 0) {
    EXPECT_EQ(r.warp_columns, config.warp_columns) << "ran " << marlin_kernel_form_name(r.form);
  }
  if (config.warps_k > 0) {
    EXPECT_EQ(r.form, d.block == 8 ? MarlinKernelForm::columns : MarlinKernelForm::thread_block)
        << "ran " << marlin_kernel_form_name(r.form);
    EXPECT_EQ(r.warps_k, config.warps_k) << "ran " << marlin_kernel_form_name(r.form);
  }
  if (config.split_round != Config::SplitRound::none) {
    EXPECT_EQ(r.form, MarlinKernelForm::wgmma) << "ran " << marlin_kernel_form_name(r.form);
    EXPECT_EQ(r.split_slots > 0, config.split_round != Config::SplitRound::capped_off);
  }
}

void check_case(const Config& config, std::uint64_t seed) {
  GemmCase c = build_gemm_case(config.problem(seed));
  if (config.tail_pairs) {
    route_tail_pairs(c, seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (config.expert_tails) {
    bool merged = false, longer = false;
    for (std::int64_t n : local_expert_counts(c)) {
      merged |= n > 64 && (n - 1) % 64 < 16;
      longer |= n > 64 && (n - 1) % 64 >= 16;
    }
    ASSERT_TRUE(merged && longer) << "the routing must hold an expert tail of 1..16 rows and a longer last block";
  }
  DeviceCase d(c, config.block, config.odd_output ? 1 : 0);
  d.args.mma_path = config.path;
  d.args.warp_columns = config.warp_columns;
  if (config.sliced_tail) {
    // slice_cap counts the kernel's units, which depend on the columns per warp: a case that left
    // them to the plan would count the wrong units wherever the plan takes pairs.
    ASSERT_NE(config.warp_columns, 0) << "a sliced-tail case forces its tile columns per warp (1 or 2)";
    const std::int64_t blocks = d.post_padded.download()[0] / d.block;
    // The slice kernel's units are tile columns, or pairs of them with two columns per warp.
    d.args.max_thread_blocks = slice_cap(blocks * (c.shape.n / (config.warp_columns == 2 ? 128 : 64)));
    ASSERT_GT(d.args.max_thread_blocks, 0) << "no cap gives a sliced last round for " << blocks << " blocks";
    ASSERT_TRUE(marlin_moe_uses_slices(d.args, 0)) << "the case must run the per-warp kernel";
  }
  if (config.path == MarlinMmaPath::wgmma && !marlin_moe_uses_wgmma(d.args, 0)) {
    GTEST_SKIP() << "the wgmma path needs a compute capability 9.0 device and a build with sm_90a code";
  }
  d.args.wgmma_warpgroups = config.warpgroups;
  if (config.thread_blocks > 0) d.args.max_thread_blocks = config.thread_blocks;
  if (config.warps_k > 0 && d.block == 8) {
    d.args.warps_k = config.warps_k;
    const MarlinColumnPlan plan = marlin_moe_column_plan(d.args, 0);
    ASSERT_EQ(plan.warps_k, config.warps_k) << "the case must run the column kernel with the forced warps";
    if (config.warp_columns != 0) {
      ASSERT_EQ(plan.warp_columns, config.warp_columns);
    }
  } else if (config.warps_k > 0) {
    const int token_tiles = detail::marlin_token_tiles(d.block, config.act_order && !config.k_full);
    const int row_groups = (d.block + 8 * token_tiles - 1) / (8 * token_tiles);
    const std::int64_t capacity = d.args.blocks.sorted_capacity / d.block;
    for (int cap = 1; cap <= 64 && d.args.max_thread_blocks == 0; ++cap) {
      if (detail::choose_warps_k(d.args, capacity, row_groups, cap) == config.warps_k) d.args.max_thread_blocks = cap;
    }
    ASSERT_GT(d.args.max_thread_blocks, 0) << "no thread-block cap splits K over " << config.warps_k << " warps";
    ASSERT_FALSE(marlin_moe_uses_wgmma(d.args, 0)) << "the case must run the mma.sync thread-block kernel";
  }
  if (config.warpgroups != 0) {
    ASSERT_EQ(marlin_moe_wgmma_warpgroups(d.args, 0), config.warpgroups) << "the forced warpgroups must run";
  }
  using SplitRound = Config::SplitRound;
  const bool split_case = config.split_round != SplitRound::none;
  d.args.split_last_round = config.split_round != SplitRound::capped_off;
  std::int64_t split_cap = 0;
  if (split_case) {
    ASSERT_EQ(d.block, 32) << "the case must run 32-row items";
    ASSERT_TRUE(marlin_moe_uses_wgmma(d.args, 0)) << "the case must run 32-row wgmma items";
    const std::int64_t blocks = d.post_padded.download()[0] / d.block;
    const std::int64_t items = blocks * ((c.shape.n / 64 + 3) / 4);  // 4 tile columns an item
    if (config.split_round != SplitRound::natural) {
      split_cap = last_round_cap(items);
      ASSERT_GT(split_cap, 0) << "no thread-block cap leaves a last round to split for " << blocks << " blocks";
      d.args.max_thread_blocks = int(split_cap);
    } else {
      // Uncapped, the grid is the resident one: 3 thread blocks an SM for 4-bit 32-row items
      // (WgmmaTile::kBlocksPerSm). A split needs a last round of 1..grid/2 items; where this GPU's
      // SM count leaves none, the case proves nothing here.
      int sms = 0;
      ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
      const std::int64_t grid = 3 * std::int64_t{sms}, rest = items % grid;
      ASSERT_EQ(marlin_bits(d.args.weights.type), 4) << "the grid above is the 4-bit one";
      if (items <= grid || rest == 0 || 2 * rest > grid) {
        GTEST_SKIP() << items << " items on " << grid << " thread blocks (" << sms
                     << " SMs) leave no last round of 1.." << grid / 2 << " items to split";
      }
    }
  }
  if (config.index_workspace) {
    d.fill_workspace_with_indices();
  } else {
    d.scramble_workspace(seed);
  }
  const bool sliced = config.sliced_tail;
  const std::vector<unsigned char> scrambled =
      split_case || sliced ? d.workspace->download() : std::vector<unsigned char>{};
  MarlinLaunchRecord launched;
  d.args.launched = &launched;
  const std::vector<std::uint16_t> first = d.run();
  d.args.launched = nullptr;
  check_launch(config, d, launched);
  if (sliced && !config.expert_map) {
    // The slice kernel's fp32 sums pass through workspace slots after the gathered activations
    // (marlin_moe_workspace_bytes): a last round split in K slices wrote some of them over the
    // bytes the test scrambled; a kernel that kept every column whole wrote none. (Not asserted with
    // non-local experts: a non-local column is stored as zeros by slice 0 alone.)
    const std::vector<unsigned char> ws = d.workspace->download();
    const std::size_t gather = config.act_order ? (std::size_t(d.slots) * std::size_t(c.shape.k) * 2 + 255) / 256 * 256 : 0;
    ASSERT_GE(ws.size(), gather + kMarlinSliceWorkspaceBytes);
    EXPECT_FALSE(std::equal(ws.begin() + std::ptrdiff_t(gather), ws.end(), scrambled.begin() + std::ptrdiff_t(gather)))
        << "no column of the last round was split in K slices: the slice slots hold what the test wrote";
  }
  if (split_case) {
    // The workspace ends in the arrival words, then the split slots (after the gathered activations
    // with act-order): a split item's pieces wrote their sums there, over the bytes the test
    // scrambled. (Not asserted with non-local experts: their items come last in the order, and a
    // non-local item's pieces write no sums, piece 0 stores its zeros.) The workspace was sized with
    // split_last_round = true, so an unsplit call has the slots too, and must leave them and the
    // arrival words as they were.
    const std::vector<unsigned char> ws = d.workspace->download();
    MarlinMoeArgs sized = d.args;
    sized.split_last_round = true;
    const std::size_t slot_bytes = std::size_t(marlin_moe_split_slots(sized)) * kMarlinLastRoundSlotBytes;
    ASSERT_EQ(ws.size(), scrambled.size());
    ASSERT_GT(slot_bytes, 0u) << "the workspace holds no split slots";
    ASSERT_GE(ws.size(), slot_bytes + kMarlinLastRoundArrivalBytes);
    const std::size_t slots_at = ws.size() - slot_bytes;
    const std::size_t arrivals_at = slots_at - kMarlinLastRoundArrivalBytes;
    const auto untouched_from = [&](std::size_t at) {
      return std::equal(ws.begin() + std::ptrdiff_t(at), ws.end(), scrambled.begin() + std::ptrdiff_t(at));
    };
    if (config.split_round == SplitRound::capped_off) {
      EXPECT_TRUE(untouched_from(arrivals_at)) << "split_last_round = false, yet the call (cap " << split_cap
                                          << ") wrote to the arrival words or the split slots";
    } else if (!config.expert_map) {
      EXPECT_FALSE(untouched_from(slots_at)) << "no item of the last round was split (cap " << split_cap
                                             << "): its slots hold what the test wrote";
    }
  }
  for (int run = 1; run < config.runs; ++run) {
    const std::vector<std::uint16_t> again = d.run();
    EXPECT_EQ(first, again) << "not bitwise deterministic on repeat (run " << run + 1 << ")";
  }
  if (config.shuffled) {
    shuffle_blocks(d, seed);
    EXPECT_EQ(d.run(), first) << "the outputs changed when the rows of each moe block were shuffled";
  }
  const reference::ReferenceOutput ref = reference::reference_gemm(c);
  const tolerance::Verdict v =
      tolerance::compare(config.tier, reference::Matrix16{first, ref.rows, ref.cols, ref.dtype}, ref);
  EXPECT_TRUE(v.numerics_pass) << v.summary();
}

class MarlinMoe : public ::testing::TestWithParam<Config> {};

std::string config_name(const ::testing::TestParamInfo<Config>& param_info) { return param_info.param.name(); }

TEST_P(MarlinMoe, MatchesReference) {
  MOEVAL_REQUIRE_GPUS(1);
  check_case(GetParam(), 11);
}

// Adds c and, for a symmetric type with a group size, its act-order variants (full K, K shard).
void add_with_act_order(std::vector<Config>& out, Config c) {
  out.push_back(c);
  if (has_zero_point(c.type) || c.group <= 0) return;
  c.act_order = true;
  out.push_back(c);
  c.k_full = false;
  out.push_back(c);
}

// `base` with every weight type × group × dtype × GEMM, in that order (by default every type and
// group: channelwise, 32, 64, 128).
std::vector<Config> every_format(const Config& base,
                                 std::initializer_list<WeightType> types = {WeightType::uint4b8, WeightType::uint4,
                                                                            WeightType::uint8b128, WeightType::uint8},
                                 std::initializer_list<int> groups = {-1, 32, 64, 128}) {
  std::vector<Config> out;
  for (WeightType type : types) {
    for (int group : groups) {
      for (DType act : {DType::bf16, DType::f16}) {
        for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          Config c = base;
          c.type = type;
          c.group = group;
          c.act = act;
          c.gemm = gemm;
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

std::vector<Config> matrix() {
  std::vector<Config> out;
  for (const Config& c : every_format(Config{})) add_with_act_order(out, c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Exact, MarlinMoe, ::testing::ValuesIn(matrix()),
                         config_name);

// Block sizes and token counts across the item shapes (8-, 16-, 32-row items; 48 → 3 × 16 rows;
// 64/128 → 64-row items, 32-row items on the K-shard path), E from 1 to 512, bounded-tier
// realistic data, expert parallelism.
std::vector<Config> shapes() {
  std::vector<Config> out;
  for (int block : {8, 16, 32, 48, 64, 128}) {
    for (DType act : {DType::bf16, DType::f16}) {
      Config c;
      c.block = block;
      c.act = act;
      c.tokens = 40;
      c.tier = Tier::bounded;
      c.hidden = 512;
      out.push_back(c);
      c.type = WeightType::uint8b128;
      c.act_order = true;
      c.k_full = false;
      c.gemm = ProblemKind::gemm2;
      out.push_back(c);
      if (block >= 64) {  // the 64-row instances of the other two modes
        c.k_full = true;  // act-order over the full K: grouped scales, symmetric
        out.push_back(c);
        c.type = WeightType::uint4;
        c.group = 64;
        c.act_order = false;
        c.gemm = ProblemKind::gemm1;
        out.push_back(c);
      }
    }
  }
  Config one;  // M = 1, topk = 1, E = 1
  one.experts = 1;
  one.tokens = 1;
  one.topk = 1;
  out.push_back(one);
  for (std::int64_t experts : {256, 512}) {
    Config many;
    many.experts = experts;
    many.tokens = 64;
    many.topk = 8;
    many.tier = Tier::bounded;
    many.type = WeightType::uint4;
    many.group = 32;
    out.push_back(many);
  }
  // Real K shards of a row-parallel act-order GEMM: uneven groups per rank, every group's scales,
  // a rank holding less than one group (local K 64 of g128), GEMM1 and GEMM2, both dtypes, 8-bit.
  for (const auto& [shards, rank, local_k, gemm] :
       {std::tuple{2, 1, 256, ProblemKind::gemm2}, std::tuple{4, 0, 64, ProblemKind::gemm2},
        std::tuple{4, 3, 128, ProblemKind::gemm1}, std::tuple{8, 5, 256, ProblemKind::gemm2}}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
      for (DType act : {DType::bf16, DType::f16}) {
        Config shard;
        shard.type = type;
        shard.act = act;
        shard.act_order = true;
        shard.k_full = false;
        shard.k_shards = shards;
        shard.k_shard_rank = rank;
        shard.gemm = gemm;
        (gemm == ProblemKind::gemm1 ? shard.hidden : shard.inter) = local_k;
        out.push_back(shard);
      }
    }
  }
  Config ep;
  ep.expert_map = true;
  ep.tokens = 33;
  out.push_back(ep);
  ep.act_order = true;
  ep.gemm = ProblemKind::gemm2;
  out.push_back(ep);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, MarlinMoe, ::testing::ValuesIn(shapes()),
                         config_name);

// Both tensor-core paths of blocks of 64 and 128 rows (wgmma on sm_90a, mma.sync elsewhere), each
// forced, bitwise against the fp64 reference: every weight type and group, act-order over the full
// K, both dtypes and GEMMs. H = I = 320: K = 320 is 20 K tiles (a partial round and chunk); w2's
// N = 320 is five Marlin tile columns, so its last item has warps past N on both wgmma item shapes
// (64 rows: 4 columns per item, 128 rows: 2), and so has w13's N = 640 with 64-row items; ~75 rows
// per expert (partial 64- and 128-row items, a second 64-row group). uint4b8 group 32 also runs each
// wgmma form with c only 2-byte aligned (odd_output).
std::vector<Config> paths() {
  std::vector<Config> out;
  for (MarlinMmaPath path : {MarlinMmaPath::wgmma, MarlinMmaPath::mma_sync}) {
    for (int block : {64, 128}) {
      for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
        for (int group : {-1, 32, 64}) {
          for (DType act : {DType::bf16, DType::f16}) {
            for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
              // The mma.sync path of these items: one dtype and block size here (Shapes has more).
              if (path == MarlinMmaPath::mma_sync && (act == DType::f16 || block == 128)) continue;
              Config c;
              c.path = path;
              c.type = type;
              c.group = group;
              c.act = act;
              c.gemm = gemm;
              c.block = block;
              c.experts = 4;
              c.tokens = 150;
              c.topk = 2;
              c.hidden = 320;
              c.inter = 320;
              // The wgmma path's three forms: one warpgroup per thread block, two (64-row items
              // only) and the producer form (N = 320 and 640: the second warpgroup's warps past N in
              // the last item).
              // wgmma: each form forced (the chosen one is the producer form); mma_sync: 0.
              for (int warpgroups : {0, 1, 2, 3}) {
                if ((warpgroups == 0) != (path == MarlinMmaPath::mma_sync)) continue;
                if (warpgroups == 2 && block != 64) continue;
                c.warpgroups = warpgroups;
                c.act_order = false;
                out.push_back(c);
                // Each wgmma form with c only 2-byte aligned.
                if (path == MarlinMmaPath::wgmma && type == WeightType::uint4b8 && group == 32) {
                  Config odd = c;
                  odd.odd_output = true;
                  out.push_back(odd);
                }
                if (path == MarlinMmaPath::wgmma && !has_zero_point(type) && group > 0) {
                  c.act_order = true;
                  out.push_back(c);
                }
                // The producer form copies chunks of 4 K tiles and 8 (64 rows) or 4 (128 rows) tile
                // columns: also I = 352, so that w2's K (22 tiles) ends in a chunk of 2 and w13's N
                // (11 tile columns) in an item of 3 (groups that divide 352 only).
                if (warpgroups == 3 && group != 64) {
                  Config tail = c;
                  tail.act_order = false;
                  tail.inter = 352;
                  out.push_back(tail);
                  // Two thread blocks for all items: each runs 4–16 items one after the other, so the
                  // ring of chunk buffers wraps many times and the two slot buffers are reused.
                  if (group == 32 && act == DType::bf16) {
                    tail.thread_blocks = 2;
                    out.push_back(tail);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Paths, MarlinMoe, ::testing::ValuesIn(paths()), config_name);

// The wgmma path's 16- and 32-row items (block_size 16 and 32, one warpgroup, m64n16k16 /
// m64n32k16), forced, bitwise against the fp64 reference, each also with its blocks' rows shuffled
// (padding off the blocks' ends: not a bit may change). Every weight type × channelwise, group 32
// and group 128 (the instances whose groups start once per K round) × both dtypes and GEMMs, then
// act-order over the full K. E = 4, 72 tokens × top-2: ~36 rows per expert, so blocks of 16 hold two
// full and one partial, blocks of 32 one full and one partial. H = I = 320 (384 for group 128):
// K = 320 is 20 K tiles (a partial round of 8), w2's N = 320 five tile columns (an item with three
// warps past N), 384: 6 columns. Then K = 352 (22 tiles: a last chunk of 2), two thread blocks for
// all items (rings, chunk and slot buffers reused across many items) and non-local experts.
std::vector<Config> small_wgmma_items() {
  std::vector<Config> out;
  for (int block : {16, 32}) {
    Config base;
    base.path = MarlinMmaPath::wgmma;
    base.block = block;
    base.experts = 4;
    base.tokens = 72;
    base.topk = 2;
    base.shuffled = true;
    for (Config c : every_format(base, {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8},
                                 {-1, 32, 128})) {
      c.hidden = c.inter = c.group == 128 ? 384 : 320;
      out.push_back(c);
      if (!has_zero_point(c.type) && c.group > 0 && c.act == DType::bf16) {
        c.act_order = true;
        out.push_back(c);
      }
    }
    Config c = base;
    c.group = 32;
    c.hidden = 320;
    c.inter = 352;
    c.gemm = ProblemKind::gemm2;
    out.push_back(c);
    c.thread_blocks = 2;
    out.push_back(c);
    c.odd_output = true;  // c only 2-byte aligned
    out.push_back(c);
    c = base;
    c.group = 32;
    c.hidden = c.inter = 320;
    c.expert_map = true;
    c.experts = 6;  // 4 local, 2 non-local (every third)
    c.tokens = 108;
    out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(SmallWgmmaItems, MarlinMoe, ::testing::ValuesIn(small_wgmma_items()), config_name);

// The producer form's expert tails (64-row items of 4-bit weights that take up to 16 rows of their
// expert's next and last block): E = 8, 288 tokens × top-2, ~72 rows per expert, so the routing
// holds experts of one block, experts whose tail is taken along and experts with a longer second
// block (asserted, `expert_tails`), bitwise against the fp64 reference. Both 4-bit types, three
// groups, act-order, both dtypes and GEMMs (w2 multiplies the tail rows' routing weights); then
// non-local experts, two thread blocks for all items (items that gave their rows away, in turn with
// the others), 8-bit weights (no tails), and every case also with its blocks' rows shuffled, which
// moves padding off the blocks' ends and so turns the tails off: the outputs must not change. Last,
// routings built for the one place where a tail must NOT be taken: an expert's full last block
// followed by another expert's short block (`tail_pairs`).
std::vector<Config> expert_tails() {
  Config base;
  base.path = MarlinMmaPath::wgmma;
  base.warpgroups = 3;
  base.block = 64;
  base.group = 64;  // K = 320: groups that divide it
  base.experts = 8;
  base.tokens = 288;
  base.topk = 2;
  base.hidden = 320;
  base.inter = 320;
  base.expert_tails = true;
  base.shuffled = true;
  std::vector<Config> out = every_format(base, {WeightType::uint4b8, WeightType::uint4}, {-1, 32, 64});
  Config c = base;
  c.act_order = true;
  out.push_back(c);
  c.gemm = ProblemKind::gemm2;
  out.push_back(c);
  c = base;
  c.expert_map = true;
  c.experts = 12;  // 8 local, 4 non-local (every third)
  c.tokens = 432;
  out.push_back(c);
  c = base;
  c.thread_blocks = 2;
  out.push_back(c);
  c.gemm = ProblemKind::gemm2;
  c.type = WeightType::uint4;
  out.push_back(c);
  c.odd_output = true;  // c only 2-byte aligned, with the 80-row items' stores
  out.push_back(c);
  c = base;
  c.type = WeightType::uint8b128;
  out.push_back(c);
  // Pairs of a full last block and another expert's short block right after it (route_tail_pairs:
  // 8 pairs, 548 tokens), K = 1024, GEMM1 N = 2048 and GEMM2 N = 1024 (4 and 2 items of 8 tile
  // columns a block), eight calls each: the short blocks' rows must be computed with their own
  // expert's weights.
  for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    c = base;
    c.expert_tails = false;
    c.shuffled = false;
    c.tail_pairs = true;
    c.runs = 8;
    c.gemm = gemm;
    c.experts = 16;
    c.topk = 1;
    c.tokens = 548;
    c.hidden = 1024;
    c.inter = 1024;
    out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(ExpertTails, MarlinMoe, ::testing::ValuesIn(expert_tails()), config_name);

// The last round of 32-row wgmma items split in K pieces (marlin_wgmma_kernel.cuh, last_round),
// under a thread-block cap that leaves 1..cap/2 items for it (asserted from the slots' contents),
// bitwise against the fp64 reference (exact-tier sums are exact in any order) and on repeat: every
// weight type, channelwise (zero points loaded at each piece's first tile, not only at K's), groups
// 32 and 128, both dtypes and GEMMs at K = 1024 (8 rounds of 8 tiles: up to 4 pieces; 8-bit GEMM2,
// whose top-k sum the exact tier cannot hold at that K, in the bounded tier), then K = 352 (22 tiles:
// pieces of 8, 8 and 6), act-order over the full K, non-local experts (piece 0 stores their zeros),
// and the same cap with split_last_round = false (the slots left untouched). E = 4, 150 tokens ×
// top-2: ~75 rows an expert, 3 blocks of 32. Last, the sanitize matrix's split case, uncapped.
std::vector<Config> last_round() {
  Config base;
  base.path = MarlinMmaPath::wgmma;
  base.block = 32;
  base.experts = 4;
  base.tokens = 150;
  base.topk = 2;
  base.hidden = 1024;
  base.inter = 1024;
  base.runs = 3;
  base.split_round = Config::SplitRound::capped;
  std::vector<Config> out;
  for (Config c : every_format(base, {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8},
                               {-1, 32, 128})) {
    if (marlin_bits(testbed::to_marlin_weight_type(c.type)) == 8 && c.gemm == ProblemKind::gemm2) c.tier = Tier::bounded;
    out.push_back(c);
  }
  Config c = base;
  c.group = 32;
  c.inter = 352;
  c.gemm = ProblemKind::gemm2;
  out.push_back(c);
  c.type = WeightType::uint4;
  c.group = -1;
  out.push_back(c);
  c = base;
  c.act_order = true;
  out.push_back(c);
  c = base;
  c.expert_map = true;
  c.experts = 6;  // 4 local, 2 non-local
  c.tokens = 225;
  out.push_back(c);
  c = base;
  c.index_workspace = true;  // small int32 values in every arrival word (a freed index array)
  out.push_back(c);
  c = base;
  c.split_round = Config::SplitRound::capped_off;  // the same cap, the split off: nothing written to the slots
  out.push_back(c);
  c.gemm = ProblemKind::gemm2;
  out.push_back(c);
  // The sanitize matrix's split case (sanitize_gpu_test.cpp), uncapped: 128 experts, 320 tokens ×
  // top-8 (~20 rows an expert, so block_size 32 is chosen), N = 1024: ~512–540 items; on an H200
  // (132 SMs, 396 thread blocks) a last round of ~116–144 items split in 2 pieces (K = 256: 2 K
  // rounds). Skipped where the SM count leaves no last round of 1..grid/2 items.
  c = Config{};
  c.type = WeightType::uint4;
  c.group = 64;
  c.path = MarlinMmaPath::wgmma;
  c.experts = 128;
  c.tokens = 320;
  c.topk = 8;
  c.hidden = 256;
  c.inter = 512;
  c.split_round = Config::SplitRound::natural;
  out.push_back(c);
  return out;
}

INSTANTIATE_TEST_SUITE_P(LastRound, MarlinMoe, ::testing::ValuesIn(last_round()), config_name);

// The format sweeps of the 8-row suites (Slices, Columns), on `base` (its kernel and split):
// - one tile column a warp: every weight type × group × act-order (full K and K shard) × dtype ×
//   GEMM, K = 1088 (68 K tiles: 8.5 rounds of 8 at 4 bits, 17 of 4 at 8 bits) or 1152 for group 128;
// - two tile columns a warp: every weight type × group × dtype × GEMM and act-order over the full K,
//   H = 1152 (GEMM2's N: 9 column pairs), I = 1088 or 1152 (GEMM1's N = 2I: 17 or 18 pairs).
// The exact tier needs fp32 to hold every partial sum exactly, which 8-bit codes at this K do not
// in GEMM2: those cases run under the bounded tier.
void add_one_column_formats(std::vector<Config>& out, Config base) {
  base.warp_columns = 1;
  for (Config c : every_format(base)) {
    c.hidden = c.inter = c.group == 128 ? 1152 : 1088;
    if (bits_of(c.type) == 8 && c.gemm == ProblemKind::gemm2) c.tier = Tier::bounded;
    add_with_act_order(out, c);
  }
}
void add_column_pair_formats(std::vector<Config>& out, Config base) {
  base.warp_columns = 2;
  for (Config c : every_format(base)) {
    c.hidden = 1152;
    c.inter = c.group == 128 ? 1152 : 1088;
    if (bits_of(c.type) == 8 && c.gemm == ProblemKind::gemm2) c.tier = Tier::bounded;
    out.push_back(c);
    if (!has_zero_point(c.type) && c.group > 0) {  // act-order over the full K: grouped scales
      c.act_order = true;
      out.push_back(c);
    }
  }
}

// The 8-row suites' edge cases on `base` (its kernel and split): non-local experts with one and
// with two tile columns a warp, and a real K shard (GEMM1 on rank 1 of 2, whose per-row group
// lookup runs one column a warp).
void add_eight_row_edge_cases(std::vector<Config>& out, const Config& base) {
  for (int columns : {1, 2}) {
    Config ep = base;
    ep.warp_columns = columns;
    ep.expert_map = true;
    ep.tokens = 33;
    ep.hidden = ep.inter = 1152;
    out.push_back(ep);
  }
  Config shard = base;
  shard.act_order = true;
  shard.k_full = false;
  shard.k_shards = 2;
  shard.k_shard_rank = 1;
  shard.hidden = 1152;  // the rank's K (GEMM1)
  shard.warp_columns = 1;  // a K shard runs one tile column per warp (pairs need the full K)
  out.push_back(shard);
}

// 8-row items on the slice kernel (block_size 8; thread blocks capped by slice_cap so that a small
// problem runs whole-column rounds and then a last round split in K slices). K = 1088 is 68 K tiles,
// 8.5 rounds of 8 (4-bit: up to 4 slices of 2–3 rounds, the last ending in a partial round; 8-bit:
// 17 rounds of 4), or 1152 for group 128 (72 tiles). Every weight type, group, act-order with and
// without the full K, both dtypes and GEMMs (w2 multiplies the routing weights into the sliced
// sums); then non-local experts and a real K shard.
std::vector<Config> slices() {
  std::vector<Config> out;
  Config sliced;
  sliced.block = 8;
  sliced.sliced_tail = true;
  add_one_column_formats(out, sliced);
  // Two tile columns per warp (N a multiple of 128, no K shard): H = 1152 (GEMM2's N: 9 column
  // pairs), I = 1088 or 1152 (GEMM1's N = 2I: 17 or 18 pairs), so a last round splits odd pair
  // counts too.
  add_column_pair_formats(out, sliced);
  add_eight_row_edge_cases(out, sliced);
  // The workspace as a freed index array leaves it (small int32 values in every arrival word). K of
  // 72 tiles (H = 1152, GEMM1's K), so that the last round is split and the arrival words are used:
  // at the default K of 16 tiles the plan allowed one slice, and the case (run so until 2026-12-05)
  // never read an arrival word — the launch record showed it. One tile column per warp, forced: at
  // K = 72 tiles the plan takes column pairs for N = 512, and slice_cap, counting single columns,
  // then chose a cap whose last round was empty (the GPU tier of 2026-12-05 showed that too).
  Config indices = sliced;
  indices.hidden = 1152;
  indices.warp_columns = 1;
  indices.index_workspace = true;
  out.push_back(indices);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Slices, MarlinMoe, ::testing::ValuesIn(slices()), config_name);

// 8-row items on the column kernel (block_size 8 off the slice kernel), warps per thread block
// forced. One tile column per warp over 3 warps: K = 1088 is 68 K tiles, 8.5 rounds of 8 at 4 bits
// (3 + 3 + 2.5 rounds: uneven, the last partial) and 17 rounds of 4 at 8 bits, or 1152 for group
// 128 (72 tiles); every weight type, group, act-order with and without the full K, both dtypes and
// GEMMs. Two tile columns per warp over 5 warps: H = 1152, I = 1088 or 1152 (odd pair counts), act-
// order over the full K. Then no K split (1 warp), more warps than K rounds (20 warps over 9 rounds,
// 12 over 9 with two columns: empty warps still take part in the reduction), two thread blocks for
// all units (rings reused across many units), non-local experts and a real K shard.
std::vector<Config> columns() {
  std::vector<Config> out;
  Config base;
  base.block = 8;
  base.warps_k = 3;
  add_one_column_formats(out, base);
  base.warps_k = 5;
  add_column_pair_formats(out, base);
  for (const auto& [columns, warps, blocks] :
       {std::tuple{1, 1, 0}, std::tuple{2, 1, 0}, std::tuple{1, 20, 0}, std::tuple{2, 12, 0}, std::tuple{1, 4, 2},
        std::tuple{2, 6, 2}}) {
    Config c;
    c.block = 8;
    c.warp_columns = columns;
    c.warps_k = warps;
    c.thread_blocks = blocks;
    c.hidden = c.inter = 1152;
    c.gemm = ProblemKind::gemm2;
    out.push_back(c);
  }
  Config split;
  split.block = 8;
  split.warps_k = 3;
  add_eight_row_edge_cases(out, split);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Columns, MarlinMoe, ::testing::ValuesIn(columns()), config_name);

// Every K split of the mma.sync thread-block kernel's activation-chunk items (16, 32, 48 and 64
// rows): thread blocks capped (warps_k) so that K is split over 1, 2 and 4 warps of a block and each
// block runs several items in turn, so that its rings and chunk buffers are reused across items.
// K = 352 is 22 K tiles (chunks of 4 and a last one of 2, 4-bit rounds of 8 and 8-bit rounds of 4,
// ending in partial ones, split over warps at round boundaries); w2's N = 320 is five tile
// columns, so the last item across N has warps past N. Against the fp64 reference, bitwise (the
// 8-bit cases under the bounded tier): both 4-bit types, 8-bit, act-order over the full K and a K
// shard (32-row items at block 64), both dtypes.
std::vector<Config> warp_splits() {
  std::vector<Config> out;
  for (int block : {16, 32, 48, 64}) {
    for (int warps_k : {1, 2, 4}) {
      Config c;
      c.path = MarlinMmaPath::mma_sync;
      c.block = block;
      c.warps_k = warps_k;
      c.experts = 4;
      c.tokens = 120;
      c.topk = 2;
      c.hidden = 320;
      c.inter = 352;
      c.group = 32;
      c.gemm = ProblemKind::gemm2;  // N = 320, K = 352
      out.push_back(c);
      if (block == 16 || block == 64) {
        Config z = c;
        z.type = WeightType::uint4;
        z.act = DType::f16;
        out.push_back(z);
        Config e = c;
        e.type = WeightType::uint8b128;
        e.group = -1;
        e.tier = Tier::bounded;  // fp32 does not hold every 8-bit partial sum of this K exactly
        out.push_back(e);
        Config a = c;
        a.act_order = true;
        out.push_back(a);
        a.k_full = false;
        a.k_shards = 2;
        a.k_shard_rank = 1;
        out.push_back(a);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(WarpSplits, MarlinMoe, ::testing::ValuesIn(warp_splits()), config_name);

// Two tile columns per warp and a forced warps_k exist only for 8-row items (block_size 8 on
// mma.sync): forced where a call runs taller items, one clear error before anything is launched (the
// output keeps its poison); on 8-row items both run.
TEST(MarlinMoeEightRowOptions, RejectedOnTallerItems) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase c = build_gemm_case(Config{}.problem(5));  // N = 512: whole column pairs
  const reference::ReferenceOutput ref = reference::reference_gemm(c);
  for (int block : {8, 16}) {
    for (const auto& [columns, warps] : {std::pair{2, 0}, std::pair{0, 3}, std::pair{2, 3}}) {
      DeviceCase d(c, block);
      d.args.warp_columns = columns;
      d.args.warps_k = warps;
      d.out.poison(0xFF);
      const std::string forced = columns == 2 ? "warp_columns = 2" : "warps_k = 3";
      if (block == 8) {
        ASSERT_FALSE(marlin_moe_uses_slices(d.args, 0)) << "a small problem runs the column kernel";
        // N = 512 holds whole column pairs: two columns a warp, forced or chosen.
        EXPECT_EQ(marlin_moe_column_plan(d.args, 0).warp_columns, 2) << forced;
        if (warps != 0) {
          EXPECT_EQ(marlin_moe_column_plan(d.args, 0).warps_k, warps) << forced;
        }
        const std::vector<std::uint16_t> out = d.run();
        const tolerance::Verdict v =
            tolerance::compare(Tier::exact, reference::Matrix16{out, ref.rows, ref.cols, ref.dtype}, ref);
        EXPECT_TRUE(v.numerics_pass) << forced << ": " << v.summary();
        continue;
      }
      try {
        marlin_moe(d.args);
        ADD_FAILURE() << "block_size " << block << ": " << forced << " was accepted";
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(forced + " runs 8-row items only"), std::string::npos) << what;
        EXPECT_NE(what.find("here block_size = 16"), std::string::npos) << what;
      }
      const std::vector<std::uint16_t> out = d.out.download();
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint16_t v) { return v == 0xFFFF; })) << "something ran";
    }
  }
}

}  // namespace
}  // namespace moeval::kernels::test
