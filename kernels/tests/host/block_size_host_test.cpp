// Host-side pieces of the kernels that need no device: they run in the cpu tier (a host test in a
// gpu binary would report Passed where every GPU test reports Skipped).
#include <gtest/gtest.h>

#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/moe_forward.h"

namespace moeval::kernels::test {
namespace {

TEST(MoeForwardHost, BlockSizeHeuristic) {
  // M·topk / E tokens per expert; the smallest B in {8,..,64} with per_expert < 0.9·B.
  EXPECT_EQ(choose_block_size({64, 7168, 2048, 256, 8}), 8);    // 2 per expert
  EXPECT_EQ(choose_block_size({256, 7168, 2048, 256, 8}), 16);  // 8 per expert: 8 ≥ 7.2
  EXPECT_EQ(choose_block_size({4096, 4096, 14336, 8, 2}), 64);  // 1024 per expert
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

}  // namespace
}  // namespace moeval::kernels::test
