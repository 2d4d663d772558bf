// marlin_moe's argument checks (no device needed: they run before any device access, so fake
// device pointers suffice): each unsupported input gets one clear std::invalid_argument.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "moeval/kernels/marlin_moe.h"

namespace moeval::kernels {
namespace {

// Argument checks run before any device access, so they are exercised with fake device pointers.
class MarlinMoeErrors : public ::testing::Test {
 protected:
  MarlinMoeArgs valid() const {
    MarlinMoeArgs args;
    void* fake = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
    args.a = fake;
    args.c = fake;
    args.weights.qweight = static_cast<const std::uint32_t*>(fake);
    args.weights.scales = fake;
    args.weights.num_experts = 4;
    args.weights.group_size = 128;
    args.weights.num_groups = 2;
    args.blocks = {static_cast<const std::int32_t*>(fake), static_cast<const std::int32_t*>(fake),
                   static_cast<const std::int32_t*>(fake), 64, 16, 8};
    args.shape = {128, 256};
    args.top_k = 2;
    return args;
  }
  static std::string error_of(const MarlinMoeArgs& args) {
    try {
      marlin_moe(args);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(MarlinMoeErrors, ShapesOutsideTheTiles) {
  MarlinMoeArgs args = valid();
  args.shape.n = 96;
  EXPECT_NE(error_of(args).find("N = 96; must be a positive multiple of 64"), std::string::npos) << error_of(args);
  args = valid();
  args.shape.k = 264;
  EXPECT_NE(error_of(args).find("K = 264; must be a positive multiple of 16"), std::string::npos) << error_of(args);
}

TEST_F(MarlinMoeErrors, GroupsMustMatchK) {
  MarlinMoeArgs args = valid();
  args.weights.num_groups = 3;
  EXPECT_NE(error_of(args).find("num_groups = 3 but K / group_size = 2"), std::string::npos) << error_of(args);
  args = valid();
  args.weights.group_size = 16;
  EXPECT_NE(error_of(args).find("group_size = 16; allowed 32, 64, 128 or -1"), std::string::npos) << error_of(args);
}

TEST_F(MarlinMoeErrors, ActOrderNeedsPermAndNoZeroPoints) {
  MarlinMoeArgs args = valid();
  args.weights.act_order = true;
  EXPECT_NE(error_of(args).find("act-order needs perm"), std::string::npos) << error_of(args);
  args.weights.type = MarlinWeightType::uint4;
  EXPECT_NE(error_of(args).find("act-order with zero points is not supported"), std::string::npos) << error_of(args);
}

TEST_F(MarlinMoeErrors, WorkspaceTooSmall) {
  MarlinMoeArgs args = valid();
  args.weights.act_order = true;
  args.weights.perm = static_cast<const std::int32_t*>(args.a);
  args.workspace = args.c;
  args.workspace_bytes = 1024;  // needs 8 slots · 256 · 2 = 4096
  EXPECT_NE(error_of(args).find("workspace_bytes = 1024 is too small; this call needs 4096"), std::string::npos)
      << error_of(args);
}

TEST_F(MarlinMoeErrors, BlockSizeEightNeedsTheSliceWorkspace) {
  MarlinMoeArgs args = valid();
  args.blocks.block_size = 8;
  EXPECT_EQ(marlin_moe_workspace_bytes(args), kMarlinSliceWorkspaceBytes);
  EXPECT_NE(error_of(args).find("workspace_bytes = 0 is too small; this call needs " +
                                std::to_string(kMarlinSliceWorkspaceBytes)),
            std::string::npos)
      << error_of(args);
  args.weights.act_order = true;  // the gathered activations come first: 8 slots · 256 · 2 = 4096
  EXPECT_EQ(marlin_moe_workspace_bytes(args), 4096 + kMarlinSliceWorkspaceBytes);
}

TEST_F(MarlinMoeErrors, BlockSizes64And128NeedTheItemCounter) {
  MarlinMoeArgs args = valid();
  for (int block : {64, 128}) {
    args.blocks.block_size = block;
    args.weights.act_order = false;
    EXPECT_EQ(marlin_moe_workspace_bytes(args), kMarlinItemCounterBytes) << "block_size " << block;
    EXPECT_NE(error_of(args).find("workspace_bytes = 0 is too small; this call needs 256"), std::string::npos)
        << error_of(args);
    args.weights.act_order = true;  // the counter follows the gathered activations: 8 slots · 256 · 2 = 4096
    EXPECT_EQ(marlin_moe_workspace_bytes(args), 4096 + kMarlinItemCounterBytes) << "block_size " << block;
  }
  args.blocks.block_size = 16;
  args.weights.act_order = false;
  EXPECT_EQ(marlin_moe_workspace_bytes(args), 0u);
}

TEST_F(MarlinMoeErrors, BlockSize32NeedsTheLastRoundSlots) {
  MarlinMoeArgs args = valid();
  args.blocks.block_size = 32;
  // 8 slots, N = 128: at most 8 items of ≤ 256 columns, 4 pieces each: 32 slots.
  EXPECT_EQ(marlin_moe_split_slots(args), 32);
  const std::size_t bytes = kMarlinLastRoundArrivalBytes + 32 * kMarlinLastRoundSlotBytes;
  EXPECT_EQ(marlin_moe_workspace_bytes(args), bytes);
  EXPECT_NE(error_of(args).find("workspace_bytes = 0 is too small; this call needs " + std::to_string(bytes)),
            std::string::npos)
      << error_of(args);
  args.blocks.num_slots = 32768;  // the cap
  args.blocks.sorted_capacity = 32768 + 8 * 31;
  EXPECT_EQ(marlin_moe_split_slots(args), kMarlinLastRoundSlots);
  args.split_last_round = false;  // no split: no workspace
  EXPECT_EQ(marlin_moe_split_slots(args), 0);
  EXPECT_EQ(marlin_moe_workspace_bytes(args), 0u);
}

TEST_F(MarlinMoeErrors, MaxThreadBlocksIsNotNegative) {
  MarlinMoeArgs args = valid();
  args.max_thread_blocks = -1;
  EXPECT_NE(error_of(args).find("max_thread_blocks = -1; must be ≥ 0"), std::string::npos) << error_of(args);
}

TEST_F(MarlinMoeErrors, ZeroPointsMustMatchTheType) {
  MarlinMoeArgs args = valid();
  args.weights.type = MarlinWeightType::uint4;
  EXPECT_NE(error_of(args).find("a zero-point type needs zeros"), std::string::npos) << error_of(args);
}

TEST_F(MarlinMoeErrors, WgmmaPathNeedsItsBlockSizesWithoutAKShard) {
  MarlinMoeArgs args = valid();  // block_size 16: a wgmma item shape
  args.mma_path = MarlinMmaPath::wgmma;
  const std::string shapes = "mma_path = wgmma runs block_size 16, 32, 64 or 128 without a K shard";
  for (int block : {16, 32, 64, 128}) {
    args.blocks.block_size = block;
    EXPECT_EQ(error_of(args).find(shapes), std::string::npos) << "block_size " << block << ": " << error_of(args);
  }
  for (int block : {8, 48}) {
    args.blocks.block_size = block;
    EXPECT_NE(error_of(args).find(shapes), std::string::npos) << error_of(args);
    EXPECT_NE(error_of(args).find("here block_size = " + std::to_string(block)), std::string::npos) << error_of(args);
  }
  MarlinMoeArgs shard = args;  // act-order on a K shard: 32-row groups on mma.sync only
  shard.blocks.block_size = 64;
  shard.weights.act_order = true;
  shard.weights.is_k_full = false;
  shard.weights.perm = static_cast<const std::int32_t*>(shard.a);
  shard.weights.g_idx = static_cast<const std::int32_t*>(shard.a);
  EXPECT_NE(error_of(shard).find(shapes + " (act-order with is_k_full = false); here block_size = 64 with a K shard"),
            std::string::npos)
      << error_of(shard);
  args.blocks.block_size = 16;
  args.mma_path = static_cast<MarlinMmaPath>(7);
  EXPECT_NE(error_of(args).find("mma_path = 7; allowed automatic, mma_sync or wgmma"), std::string::npos)
      << error_of(args);
}

TEST_F(MarlinMoeErrors, TwoWarpgroupsNeedSixtyFourRowWgmmaItems) {
  MarlinMoeArgs args = valid();  // block_size 16
  args.wgmma_warpgroups = 4;
  EXPECT_NE(error_of(args).find("wgmma_warpgroups = 4; allowed 0 (chosen), 1, 2 or 3 (producer form)"), std::string::npos)
      << error_of(args);
  args.wgmma_warpgroups = -1;
  EXPECT_NE(error_of(args).find("wgmma_warpgroups = -1; allowed 0 (chosen), 1, 2 or 3"), std::string::npos) << error_of(args);
  for (int forced : {2, 3}) {
    MarlinMoeArgs bad = args;
    bad.wgmma_warpgroups = forced;
    const std::string form = "wgmma_warpgroups = " + std::to_string(forced);
    const std::string items = forced == 2 ? " runs 64-row items on the wgmma path only: block_size 64,"
                                          : " runs 64- or 128-row items on the wgmma path only: block_size 64 or 128,";
    EXPECT_NE(error_of(bad).find(form + items), std::string::npos) << error_of(bad);
    EXPECT_NE(error_of(bad).find("here block_size = 16"), std::string::npos) << error_of(bad);
    bad.blocks.block_size = 32;
    EXPECT_NE(error_of(bad).find("here block_size = 32"), std::string::npos) << error_of(bad);
    bad.blocks.block_size = 128;  // the producer form takes 128-row items too
    if (forced == 2) {
      EXPECT_NE(error_of(bad).find("here block_size = 128"), std::string::npos) << error_of(bad);
    } else {
      EXPECT_EQ(error_of(bad).find(items), std::string::npos) << error_of(bad);
    }
    bad.blocks.block_size = 64;
    bad.mma_path = MarlinMmaPath::mma_sync;
    EXPECT_NE(error_of(bad).find("here block_size = 64, mma_path = mma_sync"), std::string::npos) << error_of(bad);
  }
}

// The column kernel's warps per thread block: 0 (chosen) or 1..20, at most 12 with two tile columns
// per warp (the warps an SM holds at their register count).
TEST_F(MarlinMoeErrors, ColumnWarpsWithinWhatAnSmHolds) {
  MarlinMoeArgs args = valid();  // N = 128
  args.blocks.block_size = 8;
  for (int warps : {0, 1, 12, 20}) {
    args.warps_k = warps;
    EXPECT_EQ(error_of(args).find("warps_k"), std::string::npos) << warps << ": " << error_of(args);
  }
  args.warps_k = 21;
  EXPECT_NE(error_of(args).find("warps_k = 21; allowed 0 (chosen) or 1..20"), std::string::npos) << error_of(args);
  args.warps_k = -1;
  EXPECT_NE(error_of(args).find("warps_k = -1; allowed 0 (chosen) or 1..20"), std::string::npos) << error_of(args);
  args.warp_columns = 2;
  args.warps_k = 12;
  EXPECT_EQ(error_of(args).find("warps_k"), std::string::npos) << error_of(args);
  args.warps_k = 13;
  EXPECT_NE(error_of(args).find("warps_k = 13 with warp_columns = 2; two tile columns per warp allow 1..12 warps"),
            std::string::npos)
      << error_of(args);
}

// The 8-row items' column count: 0, 1 or 2, and 2 only where N holds whole column pairs and the
// call has no K shard (whose per-row scale lookup runs one column per warp).
TEST_F(MarlinMoeErrors, TwoSliceColumnsNeedColumnPairsAndNoKShard) {
  MarlinMoeArgs args = valid();  // N = 128
  args.blocks.block_size = 8;
  for (int columns : {0, 1, 2}) {
    args.warp_columns = columns;
    EXPECT_EQ(error_of(args).find("warp_columns"), std::string::npos) << columns << ": " << error_of(args);
  }
  args.warp_columns = 3;
  EXPECT_NE(error_of(args).find("warp_columns = 3; allowed 0 (chosen), 1 or 2"), std::string::npos) << error_of(args);
  args.warp_columns = -1;
  EXPECT_NE(error_of(args).find("warp_columns = -1; allowed 0 (chosen), 1 or 2"), std::string::npos) << error_of(args);
  args.warp_columns = 2;
  args.shape.n = 192;
  EXPECT_NE(error_of(args).find("warp_columns = 2 needs N a multiple of 128 (N = 192) and no K shard"), std::string::npos)
      << error_of(args);
  args.shape.n = 128;
  args.weights.act_order = true;
  args.weights.is_k_full = false;
  args.weights.perm = static_cast<const std::int32_t*>(args.a);
  args.weights.g_idx = static_cast<const std::int32_t*>(args.a);
  EXPECT_NE(error_of(args).find("and no K shard (this call has one: act-order with is_k_full = false)"), std::string::npos)
      << error_of(args);
}

// The producer form copies zero points with the bulk copy engine, which needs 16-byte aligned
// sources; the other forms take 8-byte aligned zeros.
TEST_F(MarlinMoeErrors, ProducerFormNeedsSixteenByteAlignedZeros) {
  MarlinMoeArgs args = valid();
  args.blocks.block_size = 64;
  args.weights.type = MarlinWeightType::uint4;
  args.weights.zeros = reinterpret_cast<const std::uint32_t*>(std::uintptr_t{0x10008});
  args.wgmma_warpgroups = 3;
  EXPECT_NE(error_of(args).find("wgmma_warpgroups = 3 (producer form) copies zero points with the bulk copy engine: "
                                "zeros must be 16-byte aligned"),
            std::string::npos)
      << error_of(args);
  args.wgmma_warpgroups = 2;
  EXPECT_EQ(error_of(args).find("zeros must be 16-byte aligned"), std::string::npos) << error_of(args);
}

// 16-row items and taller copy activation rows in 16-byte pieces: an A only 4-byte aligned is an
// error there (it would be a misaligned cp.async on the device), and fine for 8-row items and
// act-order (which reads the gathered copy).
TEST_F(MarlinMoeErrors, ActivationsInSixteenBytePiecesNeedSixteenByteAlignment) {
  MarlinMoeArgs args = valid();  // block_size 16
  args.a = static_cast<const char*>(args.a) + 4;
  EXPECT_NE(error_of(args).find("a must be 16-byte aligned for block_size 16 without act-order"), std::string::npos)
      << error_of(args);
  args.blocks.block_size = 8;
  EXPECT_EQ(error_of(args).find("16-byte aligned"), std::string::npos) << error_of(args);
  args.blocks.block_size = 16;
  args.weights.act_order = true;
  EXPECT_EQ(error_of(args).find("16-byte aligned"), std::string::npos) << error_of(args);
}

// Those items address A's rows with 32-bit offsets in 16-byte units: 2^35 − 16 elements at most.
TEST_F(MarlinMoeErrors, ActivationsBeyondThirtyTwoBitRowOffsetsAreRejected) {
  MarlinMoeArgs args = valid();
  args.shape.k = 8192;
  args.weights.num_groups = 64;
  args.top_k = 1;
  args.blocks.num_slots = (std::int64_t{1} << 22) + 1;  // (2^22 + 1) · 8192 / 8 > 2^32 − 2
  args.blocks.sorted_capacity = std::int64_t{1} << 24;
  EXPECT_NE(error_of(args).find("A holds 4194305 rows × K = 8192 elements; block_size ≥ 16 supports at most"),
            std::string::npos)
      << error_of(args);
  args.blocks.num_slots = std::int64_t{1} << 22;  // exactly 2^32 units: still one too many
  EXPECT_NE(error_of(args).find("A holds 4194304 rows"), std::string::npos) << error_of(args);
  args.blocks.num_slots = (std::int64_t{1} << 22) - 1;  // passes this check; the fake pointers fail a later one
  std::string later;
  try {
    marlin_moe(args);
  } catch (const std::exception& e) {
    later = e.what();
  }
  EXPECT_EQ(later.find("A holds"), std::string::npos) << later;
}

}  // namespace
}  // namespace moeval::kernels
