// marlin_moe's host heuristics on both sides of every threshold: rows per work item, the expected
// block count, and the K split (the shallowest split that gives every resident thread block two
// items, never fewer than 4 K tiles per warp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "../../marlin_moe/marlin_params.h"

namespace moeval::kernels {
namespace {

MarlinMoeArgs args_for(std::int64_t n, std::int64_t k, std::int64_t slots, int experts, int block_size, int top_k = 1) {
  MarlinMoeArgs args;
  args.top_k = top_k;
  args.shape = {n, k};
  args.blocks.num_slots = slots;
  args.blocks.block_size = block_size;
  args.weights.num_experts = experts;
  return args;
}

TEST(MarlinHeuristics, TokenTilesPerBlockSize) {
  EXPECT_EQ(detail::marlin_token_tiles(8, false), 1);
  EXPECT_EQ(detail::marlin_token_tiles(16, false), 2);
  EXPECT_EQ(detail::marlin_token_tiles(32, false), 4);
  EXPECT_EQ(detail::marlin_token_tiles(48, false), 2);  // three 16-row groups, not 32 + a half-empty 32
  EXPECT_EQ(detail::marlin_token_tiles(64, false), 8);
  EXPECT_EQ(detail::marlin_token_tiles(64, true), 4);  // the K-shard path has no 64-row instance
  EXPECT_EQ(detail::marlin_token_tiles(128, false), 8);
  EXPECT_EQ(detail::marlin_token_tiles(128, true), 4);
}

TEST(MarlinHeuristics, LikelyBlocksAroundOneTokenPerExpertAndOneFullBlock) {
  // Fewer slots than experts: one block per routed slot.
  EXPECT_EQ(detail::likely_blocks(args_for(64, 64, 8, 256, 8), 1000), 8);
  // Exactly one block's worth per expert, and one slot more (each expert's share spills over).
  EXPECT_EQ(detail::likely_blocks(args_for(64, 64, 2048, 256, 8), 1000), 256);
  EXPECT_EQ(detail::likely_blocks(args_for(64, 64, 2049, 256, 8), 1000), 512);
  EXPECT_EQ(detail::likely_blocks(args_for(64, 64, 2048, 256, 16), 1000), 256);
  // Never more than the sorted buffer holds.
  EXPECT_EQ(detail::likely_blocks(args_for(64, 64, 2049, 256, 8), 300), 300);
}

// The blocks of moe_align for `tokens` tokens routed uniformly (top_k distinct experts each), averaged
// over `trials` draws: what expected_blocks computes in closed form.
double simulated_blocks(std::int64_t tokens, int top_k, int experts, int block_size, int trials) {
  std::mt19937_64 rng(20261130);
  std::vector<int> order(static_cast<std::size_t>(experts));
  double total = 0.0;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::int64_t> count(static_cast<std::size_t>(experts), 0);
    for (std::int64_t t = 0; t < tokens; ++t) {
      std::iota(order.begin(), order.end(), 0);
      for (int j = 0; j < top_k; ++j) {  // a partial Fisher–Yates shuffle: top_k distinct experts
        std::uniform_int_distribution<int> pick(j, experts - 1);
        std::swap(order[std::size_t(j)], order[std::size_t(pick(rng))]);
        ++count[std::size_t(order[std::size_t(j)])];
      }
    }
    for (std::int64_t c : count) total += static_cast<double>((c + block_size - 1) / block_size);
  }
  return total / trials;
}

TEST(MarlinHeuristics, ExpectedBlocksExactWhereRoutingIsForced) {
  // One token, top_k experts: exactly top_k blocks. Every expert taken by every token: E·⌈M/B⌉.
  EXPECT_NEAR(detail::expected_blocks(args_for(64, 64, 8, 256, 8, 8)), 8.0, 1e-9);
  EXPECT_NEAR(detail::expected_blocks(args_for(64, 64, 100 * 8, 8, 16, 8)), 8.0 * 7, 1e-9);
  EXPECT_EQ(detail::expected_blocks(args_for(64, 64, 0, 8, 16, 2)), 0.0);
}

TEST(MarlinHeuristics, ExpectedBlocksMatchesSimulatedRouting) {
  struct Case {
    std::int64_t tokens;
    int top_k, experts, block;
  };
  for (const Case c : {Case{4, 8, 256, 8}, Case{16, 8, 256, 8}, Case{64, 8, 256, 8}, Case{256, 8, 256, 16},
                       Case{16, 8, 128, 8}, Case{4, 2, 8, 8}, Case{1024, 2, 8, 64}}) {
    const double expected = detail::expected_blocks(args_for(64, 64, c.tokens * c.top_k, c.experts, c.block, c.top_k));
    const double simulated = simulated_blocks(c.tokens, c.top_k, c.experts, c.block, 400);
    EXPECT_NEAR(expected, simulated, 0.02 * simulated + 0.2)
        << "M = " << c.tokens << ", top_k = " << c.top_k << ", E = " << c.experts << ", B = " << c.block;
  }
}

TEST(MarlinHeuristics, WarpsKAroundTwoItemsPerResidentBlock) {
  constexpr std::int64_t kResident = 100;
  // One block, one row group: items = ceil(tile columns / warps_n).
  auto warps_k = [](std::int64_t tile_columns) {
    return detail::choose_warps_k(args_for(64 * tile_columns, 4096, 1, 1, 8), 1000, 1, kResident);
  };
  EXPECT_EQ(warps_k(800), 1);  // 200 items with 4 warps across N: two per resident block
  EXPECT_EQ(warps_k(796), 2);  // 199 → split K two ways: 398 items
  EXPECT_EQ(warps_k(399), 2);  // 100 items with K unsplit, 200 split two ways
  EXPECT_EQ(warps_k(398), 4);  // 199 split two ways → four ways
  EXPECT_EQ(warps_k(1), 4);
}

TEST(MarlinHeuristics, WarpsKKeepsFourKTilesPerWarp) {
  auto warps_k = [](std::int64_t k) { return detail::choose_warps_k(args_for(64, k, 1, 1, 8), 1000, 1, 100); };
  EXPECT_EQ(warps_k(16 * 7), 1);   // 7 K tiles: a 2-way split would leave 3 per warp
  EXPECT_EQ(warps_k(16 * 8), 2);   // 8: 4 per warp at 2 ways
  EXPECT_EQ(warps_k(16 * 15), 2);  // 15: a 4-way split would leave 3
  EXPECT_EQ(warps_k(16 * 16), 4);
}

// 8-row items take the slice kernel only where the expected tile columns fill a round of resident
// warps; its slices are at least kMinSliceRounds rounds of 8 K tiles (4-bit) or 4 (8-bit).
TEST(MarlinHeuristics, SliceKernelWhereColumnsFillARoundOfWarps) {
  constexpr int kSms = 132;  // 660 resident blocks of 8-row items, 2640 warps
  auto plan = [](std::int64_t k, std::int64_t columns, int cap = 0) {
    MarlinMoeArgs args = args_for(64, k, 1, 1, 8);
    args.max_thread_blocks = cap;
    return detail::plan_slices(args, columns, kSms);
  };
  EXPECT_EQ(plan(2048, 2639).grid, 0);  // one round holds them: the thread-block kernel
  EXPECT_EQ(plan(2048, 2640).grid, 660);
  EXPECT_EQ(plan(2048, 2640).max_slices, 8);  // 16 rounds of 8 tiles, 2 a slice
  EXPECT_EQ(plan(7168, 9000).max_slices, 28);
  EXPECT_EQ(plan(16 * 24, 9000).max_slices, 1);  // 3 rounds: no room for two slices
  MarlinMoeArgs eight = args_for(64, 2048, 1, 1, 8);
  eight.weights.type = MarlinWeightType::uint8b128;
  EXPECT_EQ(detail::plan_slices(eight, 9000, kSms).max_slices, 16);  // 32 rounds of 4 tiles
  // A thread-block cap lowers the round of warps, and the grid with it.
  EXPECT_EQ(plan(2048, 100, 20).grid, 20);
  EXPECT_EQ(plan(2048, 79, 20).grid, 0);
  // Never more warps than the slice workspace has slots.
  EXPECT_LE(detail::plan_slices(args_for(64, 2048, 1, 1, 8), 1 << 20, 1000).grid * 4, detail::kMaxSliceWarps);
}

// Two tile columns per warp on the slice kernel where N holds whole pairs, there is no K shard and
// the expected pairs fill 9/10 of a round of the two-column grid's warps (3 blocks per SM: 396 on
// 132 SMs, 1584 warps, 9/10 of them 1425.6: 1426 pairs = 2852 columns); a forced count is kept.
TEST(MarlinHeuristics, TwoColumnsPerWarpWherePairsFillNineTenthsOfARound) {
  constexpr int kSms = 132;
  auto plan = [](std::int64_t n, std::int64_t columns, int forced = 0) {
    MarlinMoeArgs args = args_for(n, 2048, 1, 1, 8);
    args.warp_columns = forced;
    return detail::plan_slices(args, columns, kSms);
  };
  EXPECT_EQ(plan(128, 2851).columns, 1);
  EXPECT_EQ(plan(128, 2851).grid, 660);
  EXPECT_EQ(plan(128, 2852).columns, 2);
  EXPECT_EQ(plan(128, 2852).grid, 396);
  EXPECT_EQ(plan(128, 2852).max_slices, 8);  // slices as with one column
  EXPECT_EQ(plan(192, 9000).columns, 1);     // N = 192: three columns, no whole pairs
  EXPECT_EQ(plan(128, 2639).grid, 0);        // one round of single-column warps holds them
  EXPECT_EQ(plan(128, 9000, 1).columns, 1);
  EXPECT_EQ(plan(128, 2700, 2).columns, 2);
  EXPECT_EQ(plan(128, 2700, 2).grid, 396);
  MarlinMoeArgs shard = args_for(128, 2048, 1, 1, 8);
  shard.weights.act_order = true;
  shard.weights.is_k_full = false;
  EXPECT_EQ(detail::plan_slices(shard, 9000, kSms).columns, 1);
  // Two columns take two workspace slots per tail unit: the grid stays within them.
  EXPECT_LE(detail::plan_slices(args_for(128, 2048, 1, 1, 8), 1 << 20, 1000).grid * 4 * 2, detail::kMaxSliceWarps);
}

// The column kernel's plan: forced values are kept, two tile columns per warp only where N holds
// whole pairs and there is no K shard, never more warps than K rounds unless forced, and within the
// warps an SM holds.
TEST(MarlinHeuristics, ColumnPlanKeepsForcedValuesAndItsLimits) {
  constexpr int kSms = 132;
  MarlinMoeArgs args = args_for(4096, 7168, 8, 256, 8, 8);  // DeepSeek-V3 w13 at M = 1: 8 blocks
  for (int columns : {1, 2}) {
    for (int warps : {1, 3, 7, 12}) {
      args.warp_columns = columns;
      args.warps_k = warps;
      const detail::ColumnPlan plan = detail::plan_columns(args, 8, kSms);
      EXPECT_EQ(plan.columns, columns);
      EXPECT_EQ(plan.warps_k, warps);
    }
  }
  args.warp_columns = 0;
  args.warps_k = 16;  // more than two columns per warp allow: one column
  EXPECT_EQ(detail::plan_columns(args, 8, kSms).columns, 1);
  EXPECT_EQ(detail::plan_columns(args, 8, kSms).warps_k, 16);
  for (std::int64_t k : {16, 128, 256, 2048, 7168}) {
    for (std::int64_t blocks : {1, 8, 31, 83, 400}) {
      for (std::int64_t n : {64, 192, 1536, 4096}) {
        MarlinMoeArgs chosen = args_for(n, k, 8, 256, 8, 8);
        const detail::ColumnPlan plan = detail::plan_columns(chosen, blocks, kSms);
        const std::int64_t rounds = (k / 16 + 7) / 8;
        EXPECT_TRUE(plan.columns == 1 || (plan.columns == 2 && n % 128 == 0)) << n;
        EXPECT_GE(plan.warps_k, 1);
        EXPECT_LE(plan.warps_k, detail::marlin_column_max_warps(plan.columns));
        EXPECT_TRUE(plan.warps_k == 1 || plan.warps_k <= rounds) << k << " " << blocks << " " << n;
      }
    }
  }
  MarlinMoeArgs shard = args_for(4096, 7168, 8, 256, 8, 8);
  shard.weights.act_order = true;
  shard.weights.is_k_full = false;
  EXPECT_EQ(detail::plan_columns(shard, 8, kSms).columns, 1);
}

// The column kernel's picks on the bench's decode cells (132 SMs, the expected block counts): 4
// warps where a round of 3 blocks per SM holds the column pairs, 2 where 6 do and the K rounds
// are few enough, 1 for Qwen3 M = 16 (82 blocks: one round of single warps beats two of two);
// single columns where the pairs would keep fewer than 4 warps an SM busy.
TEST(MarlinHeuristics, ColumnPlanOnTheDecodeCells) {
  constexpr int kSms = 132;
  auto plan = [](std::int64_t n, std::int64_t k, std::int64_t blocks) {
    return detail::plan_columns(args_for(n, k, 8, 256, 8, 8), blocks, kSms);
  };
  EXPECT_EQ(plan(4096, 7168, 8).warps_k, 4);   // DeepSeek-V3 w13 M = 1: 256 pairs
  EXPECT_EQ(plan(4096, 7168, 8).columns, 2);
  EXPECT_EQ(plan(4096, 7168, 31).warps_k, 4);  // M = 4: 992 pairs, 3 rounds of 14 + 5
  EXPECT_EQ(plan(7168, 2048, 8).warps_k, 2);   // DeepSeek-V3 w2 M = 1: 448 pairs, one round of 2
  EXPECT_EQ(plan(28672, 4096, 2).warps_k, 2);  // Mixtral w13 M = 1
  EXPECT_EQ(plan(1536, 2048, 8).warps_k, 4);   // Qwen3 M = 1: 96 pairs on 4 warps, 2.9 an SM:
  EXPECT_EQ(plan(1536, 2048, 8).columns, 1);   // single columns (192 units, 5.8 warps an SM)
  EXPECT_EQ(plan(1536, 2048, 30).columns, 2);  // M = 4: 360 pairs on 4 warps, 10.9 an SM
  EXPECT_EQ(plan(1536, 2048, 30).warps_k, 4);  // M = 4: 360 pairs
  EXPECT_EQ(plan(1536, 2048, 82).warps_k, 1);  // M = 16: 984 pairs
  // N = 192 (three tile columns): one column per warp, 20 warps an SM.
  EXPECT_EQ(plan(192, 2048, 8).columns, 1);
  // A thread-block cap shrinks the round: 256 pairs over 100 blocks.
  MarlinMoeArgs capped = args_for(4096, 7168, 8, 256, 8, 8);
  capped.max_thread_blocks = 100;
  EXPECT_EQ(detail::plan_columns(capped, 8, kSms).warps_k, 4);  // 3 rounds of 14 + 5 against 3 of 28 + 5
}

// The producer form for 64- and 128-row wgmma items wherever the zero points are absent or 16-byte
// aligned; a forced count is kept.
TEST(MarlinHeuristics, WgmmaProducerFormWhereZeroPointsAllowBulkCopies) {
  auto form = [](int block_size, const std::uint32_t* zeros, int forced = 0) {
    MarlinMoeArgs args = args_for(512, 2048, 10 * block_size, 1, block_size);
    args.weights.zeros = zeros;
    args.wgmma_warpgroups = forced;
    return detail::choose_wgmma_warpgroups(args, 1 << 20, 100);
  };
  const auto* aligned16 = reinterpret_cast<const std::uint32_t*>(std::uintptr_t{0x10010});
  const auto* aligned8 = reinterpret_cast<const std::uint32_t*>(std::uintptr_t{0x10008});
  EXPECT_EQ(form(64, nullptr), detail::kWgmmaProducerForm);
  EXPECT_EQ(form(128, nullptr), detail::kWgmmaProducerForm);
  EXPECT_EQ(form(64, aligned16), detail::kWgmmaProducerForm);
  EXPECT_EQ(form(64, aligned8), 1);  // the older forms' rule (below): K = 2048, one warpgroup
  EXPECT_EQ(form(64, nullptr, 1), 1);
  EXPECT_EQ(form(64, nullptr, 2), 2);
}

// Where the producer form cannot run (zero points only 8-byte aligned): two warpgroups per thread
// block for 64-row wgmma items where K ≥ 4096 and the 8-column items fill 20 rounds of the SMs;
// one otherwise, and a forced count is kept.
TEST(MarlinHeuristics, WgmmaWarpgroupsForLongKAndManyRounds) {
  constexpr int kSms = 100;
  // E = 1 and top_k = 1: every slot goes to the one expert, ⌈slots / 64⌉ blocks; N = 512 is one
  // item of 8 tile columns per block, so items = blocks.
  auto groups = [](std::int64_t k, std::int64_t blocks, int block_size = 64, int forced = 0) {
    MarlinMoeArgs args = args_for(512, k, blocks * block_size, 1, block_size);
    args.weights.zeros = reinterpret_cast<const std::uint32_t*>(std::uintptr_t{0x10008});
    args.wgmma_warpgroups = forced;
    return detail::choose_wgmma_warpgroups(args, 1 << 20, kSms);
  };
  EXPECT_EQ(groups(4096, 2000), 2);  // 20 rounds
  EXPECT_EQ(groups(4096, 1999), 1);
  EXPECT_EQ(groups(4080, 100000), 1);  // K below 4096: one, however many rounds
  EXPECT_EQ(groups(7168, 100000, 128), 1);  // 128-row items run on one warpgroup
  EXPECT_EQ(groups(2048, 10, 64, 2), 2);  // forced
  EXPECT_EQ(groups(7168, 100000, 64, 1), 1);
  // A thread-block cap lowers the round.
  MarlinMoeArgs capped = args_for(512, 4096, 400 * 64, 1, 64);
  capped.weights.zeros = reinterpret_cast<const std::uint32_t*>(std::uintptr_t{0x10008});
  capped.max_thread_blocks = 20;
  EXPECT_EQ(detail::choose_wgmma_warpgroups(capped, 1 << 20, kSms), 2);
}


// Arrival-word stamps (marlin_params.h, call_stamp): distinct per call, and never a value that a
// leftover int32 index array (below 2^24) or a one-byte fill of the workspace holds.
TEST(MarlinCallStamps, DistinctAndNeverSmallOrOneByteFilled) {
  std::set<std::uint32_t> seen;
  int skipped = 0;
  for (std::uint32_t n = 0; n < 200000; ++n) {
    const std::uint32_t stamp = detail::call_stamp(n);
    if (stamp == 0) {
      ++skipped;
      continue;
    }
    EXPECT_GE(stamp, 1u << 24) << "call " << n;
    EXPECT_NE(stamp, (stamp & 0xFFu) * 0x01010101u) << "call " << n;
    EXPECT_TRUE(seen.insert(stamp).second) << "call " << n << " repeats stamp " << stamp;
  }
  EXPECT_LT(skipped, 200000 / 100) << "calls without a stamp of their own";
}
}  // namespace
}  // namespace moeval::kernels
