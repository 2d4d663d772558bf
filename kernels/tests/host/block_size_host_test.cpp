// Host-side pieces of the kernels that need no device: they run in the cpu tier (a host test in a
// gpu binary would report Passed where every GPU test reports Skipped). Every heuristic is tested
// on both sides of each of its thresholds — a threshold off by one, a < turned into ≤, or a
// constant changed moves one of these cases to the other side.
#include <gtest/gtest.h>

#include "../../moe_align/align_kernels.h"
#include "../../wna16_moe/wna16_params.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"

namespace moeval::kernels::test {
namespace {

TEST(MoeForwardHost, BlockSizeHeuristic) {
  // p = M·topk / E tokens per expert: 8 below 7.2, 16 below 20.8, 32 below 41.6, else 64.
  EXPECT_EQ(choose_block_size({64, 7168, 2048, 256, 8}), 8);    // 2 per expert
  EXPECT_EQ(choose_block_size({256, 7168, 2048, 256, 8}), 16);  // 8 per expert: 8 ≥ 7.2
  EXPECT_EQ(choose_block_size({256, 2048, 768, 128, 8}), 16);   // 16 per expert: two 16-row blocks, not one of 32
  EXPECT_EQ(choose_block_size({128, 4096, 14336, 8, 2}), 32);   // 32 per expert: 32 rows, not 48
  EXPECT_EQ(choose_block_size({4096, 4096, 14336, 8, 2}), 64);  // 1024 per expert
}

// E = 10, topk = 1: p = M / 10, so M = 72, 208 and 416 sit exactly on the three thresholds.
TEST(MoeForwardHost, BlockSizeOnBothSidesOfEveryThreshold) {
  const auto pick = [](std::int64_t m) { return choose_block_size({m, 256, 128, 10, 1}); };
  struct Edge {
    std::int64_t below, at;  // M just below the threshold, and M exactly at it
    int b, next;
  };
  for (const Edge& e : {Edge{71, 72, 8, 16}, Edge{207, 208, 16, 32}, Edge{415, 416, 32, 64}}) {
    EXPECT_EQ(pick(e.below), e.b) << "M = " << e.below;
    EXPECT_EQ(pick(e.at), e.next) << "M = " << e.at;
  }
  // Between 0.9·8 and 8 per expert (7.5): already 16; between 16 and 20.8 (17): still 16.
  EXPECT_EQ(pick(75), 16);
  EXPECT_EQ(pick(170), 16);
  // 48 is never picked; 64 is the largest, up to any size.
  for (std::int64_t m = 1; m <= 2000; ++m) EXPECT_NE(pick(m), 48) << "M = " << m;
  EXPECT_EQ(pick(1'000'000), 64);
  // Fewest tokens: one token, one of 256 experts.
  EXPECT_EQ(choose_block_size({1, 7168, 2048, 256, 1}), 8);
}

// Marlin weights: 16 from 0.9·8 tokens per expert, 32 from 1.1·16, 64 from 0.85·32, 128 from 512
// (E = 10, topk = 1: M = 72, 176, 272 and 5120 are the thresholds); WNA16 weights and the
// shape-only form keep theirs (32 up to 1.3·32 = 41.6 per expert, 64 from there on).
TEST(MoeForwardHost, MarlinBlockSizeOnBothSidesOfEveryThreshold) {
  const auto marlin = [](std::int64_t m) { return choose_block_size({m, 256, 128, 10, 1}, MoeWeightFormat::marlin); };
  struct Edge {
    std::int64_t below, at;
    int b, next;
  };
  for (const Edge& e : {Edge{71, 72, 8, 16}, Edge{135, 136, 16, 32}, Edge{271, 272, 32, 64}, Edge{5119, 5120, 64, 128}}) {
    EXPECT_EQ(marlin(e.below), e.b) << "M = " << e.below;
    EXPECT_EQ(marlin(e.at), e.next) << "M = " << e.at;
  }
  for (std::int64_t m = 1; m <= 6000; ++m) EXPECT_NE(marlin(m), 48) << "M = " << m;
  EXPECT_EQ(marlin(1'000'000), 128);
  // Where the formats part: 13.6–20.8 per expert (32 vs 16) and 27.2–41.6 (64 vs 32), and from 512.
  const MoeLayerShape at{5120, 256, 128, 10, 1};
  EXPECT_EQ(choose_block_size(at, MoeWeightFormat::wna16), 64);
  EXPECT_EQ(choose_block_size(at), 64);
  for (std::int64_t m : {136, 207}) {
    EXPECT_EQ(choose_block_size({m, 256, 128, 10, 1}, MoeWeightFormat::wna16), 16) << "M = " << m;
    EXPECT_EQ(marlin(m), 32) << "M = " << m;
  }
  for (std::int64_t m : {272, 415}) {
    EXPECT_EQ(choose_block_size({m, 256, 128, 10, 1}, MoeWeightFormat::wna16), 32) << "M = " << m;
    EXPECT_EQ(marlin(m), 64) << "M = " << m;
  }
  for (std::int64_t m : {1, 71, 72, 135}) {
    const MoeLayerShape s{m, 256, 128, 10, 1};
    EXPECT_EQ(marlin(m), choose_block_size(s)) << "M = " << m;
  }
  // The bench's shapes at the survey's token counts: 20 and 24 per expert → 32, 32 → 64.
  EXPECT_EQ(choose_block_size({640, 7168, 2048, 256, 8}, MoeWeightFormat::marlin), 32);   // DeepSeek-V3: 20
  EXPECT_EQ(choose_block_size({384, 2048, 768, 128, 8}, MoeWeightFormat::marlin), 32);    // Qwen3-30B-A3B: 24
  EXPECT_EQ(choose_block_size({128, 4096, 14336, 8, 2}, MoeWeightFormat::marlin), 64);    // Mixtral: 32
  EXPECT_EQ(choose_block_size({512, 7168, 2048, 256, 8}, MoeWeightFormat::marlin), 32);   // DeepSeek-V3: 16
  EXPECT_EQ(choose_block_size({256, 2048, 768, 128, 8}, MoeWeightFormat::marlin), 32);    // Qwen3-30B-A3B: 16
  EXPECT_EQ(choose_block_size({64, 4096, 14336, 8, 2}, MoeWeightFormat::marlin), 32);     // Mixtral: 16
  EXPECT_EQ(choose_block_size({384, 7168, 2048, 256, 8}, MoeWeightFormat::marlin), 16);   // DeepSeek-V3: 12
  EXPECT_EQ(choose_block_size({2048, 4096, 14336, 8, 2}, MoeWeightFormat::marlin), 128);  // Mixtral: 512
  EXPECT_EQ(choose_block_size({4096, 7168, 2048, 256, 8}, MoeWeightFormat::marlin), 64);  // DeepSeek-V3: 128
}

// Where GEMM1's items run on mma.sync (marlin_layer_wgmma_items false: a K shard in w13, or no
// wgmma path on the device), Marlin weights take their mma.sync table: 16 from 0.9·8, 32 from
// 1.1·16, 64 from 1.15·32, never 128 (E = 10, topk = 1: M = 72, 176 and 368 are the thresholds).
// The two-argument form is the wgmma table; WNA16 ignores the path.
TEST(MoeForwardHost, MarlinBlockSizeOnMmaSyncOnBothSidesOfEveryThreshold) {
  const auto on = [](std::int64_t m, bool wgmma) {
    return choose_block_size({m, 256, 128, 10, 1}, MoeWeightFormat::marlin, wgmma);
  };
  struct Edge {
    std::int64_t below, at;
    int b, next;
  };
  for (const Edge& e : {Edge{71, 72, 8, 16}, Edge{175, 176, 16, 32}, Edge{367, 368, 32, 64}}) {
    EXPECT_EQ(on(e.below, false), e.b) << "M = " << e.below;
    EXPECT_EQ(on(e.at, false), e.next) << "M = " << e.at;
  }
  for (std::int64_t m = 1; m <= 6000; ++m) {
    const MoeLayerShape s{m, 256, 128, 10, 1};
    ASSERT_NE(on(m, false), 48) << "M = " << m;
    ASSERT_NE(on(m, false), 128) << "M = " << m;
    ASSERT_LE(on(m, false), on(m, true)) << "M = " << m;  // the wgmma table never picks smaller
    ASSERT_EQ(on(m, true), choose_block_size(s, MoeWeightFormat::marlin)) << "M = " << m;
    ASSERT_EQ(choose_block_size(s, MoeWeightFormat::wna16, true), choose_block_size(s)) << "M = " << m;
    ASSERT_EQ(choose_block_size(s, MoeWeightFormat::wna16, false), choose_block_size(s)) << "M = " << m;
  }
  EXPECT_EQ(on(1'000'000, false), 64);
  // Where the two Marlin tables part: 13.6–17.6 per expert (32 vs 16), 27.2–36.8 (64 vs 32), ≥ 512.
  for (std::int64_t m : {136, 175}) {
    EXPECT_EQ(on(m, true), 32) << "M = " << m;
    EXPECT_EQ(on(m, false), 16) << "M = " << m;
  }
  for (std::int64_t m : {272, 367}) {
    EXPECT_EQ(on(m, true), 64) << "M = " << m;
    EXPECT_EQ(on(m, false), 32) << "M = " << m;
  }
  EXPECT_EQ(on(5120, true), 128);
  EXPECT_EQ(on(5120, false), 64);
  // The survey's cells (DeepSeek-V3 w13, Qwen3-30B-A3B, Mixtral) on mma.sync: 16 at 16 per expert,
  // 32 at 20–32, 64 at 40.
  EXPECT_EQ(choose_block_size({512, 7168, 2048, 256, 8}, MoeWeightFormat::marlin, false), 16);
  EXPECT_EQ(choose_block_size({640, 7168, 2048, 256, 8}, MoeWeightFormat::marlin, false), 32);
  EXPECT_EQ(choose_block_size({512, 2048, 768, 128, 8}, MoeWeightFormat::marlin, false), 32);
  EXPECT_EQ(choose_block_size({160, 4096, 14336, 8, 2}, MoeWeightFormat::marlin, false), 64);
}

// moe_forward_workspace_bytes with block_size 0 on Marlin weights covers the block size of either
// table, so one size serves every device. Neither size bounds the other: a smaller block needs a
// smaller sorted array but more expert ids, and at 25000 tokens per expert (E = 8, topk = 2,
// M = 100000) the mma.sync table's 64-row blocks need more than the wgmma table's 128.
TEST(MoeForwardHost, MarlinWorkspaceCoversBothTables) {
  MoeForwardArgs args;
  args.format = MoeWeightFormat::marlin;
  auto bytes_at = [&args](int block) {
    MoeForwardArgs forced = args;
    forced.block_size = block;
    return moe_forward_workspace_bytes(forced);
  };
  args.shape = {100'000, 256, 128, 8, 2};
  ASSERT_EQ(choose_block_size(args.shape, MoeWeightFormat::marlin, true), 128);
  ASSERT_EQ(choose_block_size(args.shape, MoeWeightFormat::marlin, false), 64);
  EXPECT_GT(bytes_at(64), bytes_at(128));
  EXPECT_EQ(moe_forward_workspace_bytes(args), bytes_at(64));
  for (std::int64_t m : {1, 64, 136, 207, 272, 415, 5120, 100'000}) {
    for (bool act_order : {false, true}) {
      args.shape = {m, 256, 128, 10, 1};
      args.marlin_w13.act_order = args.marlin_w2.act_order = act_order;
      args.marlin_w13.is_k_full = args.marlin_w2.is_k_full = !act_order;
      const std::size_t chosen = moe_forward_workspace_bytes(args);
      for (bool wgmma : {false, true}) {
        EXPECT_GE(chosen, bytes_at(choose_block_size(args.shape, MoeWeightFormat::marlin, wgmma)))
            << "M = " << m << (act_order ? " act-order" : "") << (wgmma ? " wgmma" : " mma.sync");
      }
    }
  }
}

TEST(MoeAlignHost, CapacitiesAreTheWorstCaseAndRejectOverflow) {
  // T + E·(B − 1): 8 slots, 256 experts, B = 8 → 8 + 256·7 = 1800; blocks: ceil(1800 / 8) = 225.
  EXPECT_EQ(moe_align_sorted_capacity(8, 256, 8), 1800);
  EXPECT_EQ(moe_align_block_capacity(8, 256, 8), 225);
  EXPECT_TRUE(is_supported_block_size(48));
  EXPECT_FALSE(is_supported_block_size(24));
  // 2^31 slots cannot be indexed by int32 sorted ids.
  EXPECT_THROW(moe_align_sorted_capacity(std::int64_t(1) << 31, 8, 16), std::invalid_argument);
}

TEST(MoeAlignHost, CapacityLimitOnBothSidesOfTwoToThe31) {
  // T + E·(B − 1) < 2^31 is the limit: 2^31 − 1 − 8·15 slots with E = 8, B = 16 is the largest.
  const std::int64_t largest = (std::int64_t(1) << 31) - 1 - 8 * 15;
  EXPECT_EQ(moe_align_sorted_capacity(largest, 8, 16), (std::int64_t(1) << 31) - 1);
  EXPECT_THROW(moe_align_sorted_capacity(largest + 1, 8, 16), std::invalid_argument);
  EXPECT_NO_THROW(moe_align_sorted_capacity(0, 65536, 8));
  EXPECT_THROW(moe_align_sorted_capacity(0, 65537, 8), std::invalid_argument);
  EXPECT_THROW(moe_align_sorted_capacity(0, 0, 8), std::invalid_argument);
  for (int b : {8, 16, 32, 48, 64, 128}) EXPECT_TRUE(is_supported_block_size(b)) << b;
  for (int b : {0, 7, 9, 15, 17, 63, 65, 127, 129, 256}) EXPECT_FALSE(is_supported_block_size(b)) << b;
}

// The single-block path holds T + E ints in 48 KiB of shared memory (12288) and T ≤ 8192.
TEST(MoeAlignHost, SingleBlockPathOnBothSidesOfItsLimits) {
  EXPECT_TRUE(detail::align_fits_single_block(8192, 1));
  EXPECT_FALSE(detail::align_fits_single_block(8193, 1));
  EXPECT_TRUE(detail::align_fits_single_block(8192, 4096));   // 12288 ints
  EXPECT_FALSE(detail::align_fits_single_block(8192, 4097));  // 12289
  EXPECT_TRUE(detail::align_fits_single_block(0, 12288));
  EXPECT_FALSE(detail::align_fits_single_block(0, 12289));
  // The workspace follows the path: none for the single block, the tiled histogram otherwise.
  EXPECT_EQ(moe_align_workspace_bytes(8192, 1), 0u);
  EXPECT_EQ(moe_align_workspace_bytes(8193, 1), detail::align_tiled_workspace_bytes(8193, 1));
  EXPECT_GT(moe_align_workspace_bytes(8193, 1), 0u);
  EXPECT_EQ(moe_align_workspace_bytes(8192, 4097), detail::align_tiled_workspace_bytes(8192, 4097));
}

// Tiles of ≥ 1024 slots (a multiple of 32), longer when the E × tiles histogram would pass 2^22
// entries; at least one tile.
TEST(MoeAlignHost, TilingOnBothSidesOfItsThresholds) {
  EXPECT_EQ(detail::align_tiling(1024, 8).tile_len, 1024);
  EXPECT_EQ(detail::align_tiling(1024, 8).tiles, 1);
  EXPECT_EQ(detail::align_tiling(1025, 8).tiles, 2);
  EXPECT_EQ(detail::align_tiling(0, 8).tiles, 1);
  // T·E = 2^32 → 1024 slots per tile by memory, exactly the minimum; one more slot → 1025 → 1056.
  const std::int64_t e = 4096, t = (std::int64_t(1) << 32) / e;
  EXPECT_EQ(detail::align_tiling(t, int(e)).tile_len, 1024);
  EXPECT_EQ(detail::align_tiling(t + 1, int(e)).tile_len, 1056);
  EXPECT_LE(detail::align_tiling(t + 1, int(e)).tiles * e, std::int64_t(1) << 22);
}

// Row tiles: two 16-row weight tiles per warp for 4-bit items of ≤ 32 rows (token_tiles ≤ 4).
TEST(Wna16Host, RowTilesOnBothSidesOfTheirThreshold) {
  EXPECT_EQ(detail::wna16_row_tiles(4, 1), 2);
  EXPECT_EQ(detail::wna16_row_tiles(4, 4), 2);
  EXPECT_EQ(detail::wna16_row_tiles(4, 6), 1);
  EXPECT_EQ(detail::wna16_row_tiles(4, 8), 1);
  EXPECT_EQ(detail::wna16_row_tiles(8, 1), 1);
  EXPECT_EQ(detail::wna16_row_tiles(8, 4), 1);
}

// choose_warps_k: doubling while likely_blocks·row_groups·warp_tiles_n·warps_k < 32·SMs and
// chunks ≥ 4·warps_k, up to 4. One slot, one expert, B = 8: likely_blocks = 1.
Wna16MoeArgs one_slot_args(std::int64_t n, std::int64_t k, int bits) {
  Wna16MoeArgs a;
  a.blocks.num_slots = 1;
  a.blocks.block_size = 8;
  a.weights.num_experts = 1;
  a.weights.bits = bits;
  a.shape = {n, k};
  return a;
}

TEST(Wna16Host, SplitKOnBothSidesOfTheOccupancyThreshold) {
  const int sms = 132;  // 32·132 = 4224 warps wanted; K = 4096 (32 chunks) never limits here
  const auto warps = [&](std::int64_t warp_tiles_n) {
    return detail::choose_warps_k(one_slot_args(16 * warp_tiles_n, 4096, 4), 1000, 1, 1, sms);
  };
  EXPECT_EQ(warps(4224), 1);  // exactly the wanted warps: no split
  EXPECT_EQ(warps(4223), 2);  // one short: split in two; 2·4223 ≥ 4224 stops there
  EXPECT_EQ(warps(2112), 2);  // 2·2112 = 4224: not below, stays at 2
  EXPECT_EQ(warps(2111), 4);  // 2·2111 < 4224: split in four
  EXPECT_EQ(warps(1), 4);     // never more than 4
  // row_groups and row_tiles enter the item count: 2 row groups of 2111 tiles = 4222 < 4224.
  EXPECT_EQ(detail::choose_warps_k(one_slot_args(16 * 2111, 4096, 4), 1000, 2, 1, sms), 2);
  // Two row tiles halve the N tiles (rounding up): 4223 16-column tiles → 2112 warp tiles.
  EXPECT_EQ(detail::choose_warps_k(one_slot_args(16 * 4223, 4096, 4), 1000, 1, 2, sms), 2);
  EXPECT_EQ(detail::choose_warps_k(one_slot_args(16 * 4221, 4096, 4), 1000, 1, 2, sms), 4);
}

TEST(Wna16Host, SplitKOnBothSidesOfTheChunkThreshold) {
  // A tiny problem (one item) always wants a split; the K chunks decide: 128 per chunk at 4 bits,
  // 64 at 8 bits, ≥ 4·warps_k chunks needed to split into warps_k.
  const auto warps = [](std::int64_t k, int bits) { return detail::choose_warps_k(one_slot_args(16, k, bits), 1000, 1, 1, 132); };
  EXPECT_EQ(warps(384, 4), 1);   // 3 chunks
  EXPECT_EQ(warps(416, 4), 2);   // 3.25 → 4 chunks (rounded up)
  EXPECT_EQ(warps(512, 4), 2);   // 4
  EXPECT_EQ(warps(992, 4), 4);   // 7.75 → 8
  EXPECT_EQ(warps(896, 4), 2);   // 7
  EXPECT_EQ(warps(1024, 4), 4);  // 8
  EXPECT_EQ(warps(192, 8), 1);   // 3 chunks of 64
  EXPECT_EQ(warps(256, 8), 2);   // 4
  EXPECT_EQ(warps(448, 8), 2);   // 7
  EXPECT_EQ(warps(512, 8), 4);   // 8
}

TEST(Wna16Host, SplitKCountsLikelyBlocksCappedByTheCapacity) {
  // likely_blocks = min(capacity, min(T, E) + T / B). T = 64, E = 8, B = 8: 8 + 8 = 16 blocks;
  // 16 · 264 warp tiles = 4224 = 32·132 → no split; capacity 15 → 15·264 = 3960 → split.
  Wna16MoeArgs a = one_slot_args(16 * 264, 4096, 4);
  a.blocks.num_slots = 64;
  a.weights.num_experts = 8;
  EXPECT_EQ(detail::choose_warps_k(a, 16, 1, 1, 132), 1);
  EXPECT_EQ(detail::choose_warps_k(a, 15, 1, 1, 132), 2);
  a.blocks.num_slots = 63;  // 8 + 7 = 15 blocks
  EXPECT_EQ(detail::choose_warps_k(a, 1000, 1, 1, 132), 2);
}

}  // namespace
}  // namespace moeval::kernels::test
