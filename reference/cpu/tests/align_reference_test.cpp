// reference_moe_align against the contract of kernels/moe_align.h: a known answer worked out by
// hand, and the invariants on seeded routings (every slot exactly once, padding, block owners).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/align_reference.h"

namespace moeval {
namespace {

TEST(AlignReference, KnownAnswerWithAnExpertMapAndAnInvalidId) {
  MoeProblem p;
  p.experts = 4;
  p.topk = 2;
  p.expert_map = {0, -1, 1, 2};  // expert 1 lives on another rank
  Routing r;
  r.tokens = 3;
  r.topk = 2;
  // slot: 0  1  2  3  4  5
  r.topk_ids = {2, 0, 2, 1, 7, 2};  // 7 is outside [0, E): not counted
  r.topk_weights.assign(6, 1.0f);
  const auto a = reference::reference_moe_align(r, p, 2);
  // expert 0: slot 1 + pad; expert 1: slot 3 + pad; expert 2: slots 0, 2, 5 + pad; expert 3: none.
  EXPECT_EQ(a.sorted_token_ids, (std::vector<std::int32_t>{1, 6, 3, 6, 0, 2, 5, 6}));
  EXPECT_EQ(a.expert_ids, (std::vector<std::int32_t>{0, -1, 1, 1}));
  EXPECT_EQ(a.num_tokens_post_padded, 8);
  EXPECT_THROW(reference::reference_moe_align(r, p, 0), std::invalid_argument);
}

// A block_size that pads the sorted ids past int32 is refused before anything is allocated (2^31
// with 4 experts in use asked for 32 GB of ids), with the limit named.
TEST(AlignReference, PaddingPastInt32IsRefusedBeforeAllocating) {
  MoeProblem p;
  p.experts = 4;
  p.topk = 2;
  Routing r;
  r.tokens = 3;
  r.topk = 2;
  r.topk_ids = {2, 0, 2, 1, 3, 2};  // experts 0, 1, 2 and 3 each hold a slot
  r.topk_weights.assign(6, 1.0f);
  for (const std::int64_t block_size : {std::int64_t{1} << 31, std::int64_t{1} << 29 | 1, std::numeric_limits<std::int64_t>::max()}) {
    try {
      reference::reference_moe_align(r, p, block_size);
      ADD_FAILURE() << "block_size " << block_size << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("past 2^31 - 1 sorted ids"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(reference::reference_moe_align(r, p, 2).num_tokens_post_padded, 10);  // 2 + 2 + 4 + 2
}

class AlignInvariants : public ::testing::TestWithParam<int> {};

TEST_P(AlignInvariants, EverySlotOnceInItsExpertsBlocks) {
  MoeProblem p;
  p.kind = ProblemKind::gemm1;
  p.experts = 64;
  p.tokens = 37;
  p.topk = 4;
  p.routing.kind = RoutingKind::zipf;
  const Routing r = make_routing(p);
  const std::int64_t block = GetParam();
  const auto a = reference::reference_moe_align(r, p, block);
  const std::int32_t slots = std::int32_t(p.tokens * p.topk);
  ASSERT_EQ(a.num_tokens_post_padded % block, 0);
  ASSERT_EQ(std::int64_t(a.expert_ids.size()) * block, a.num_tokens_post_padded);
  std::map<std::int32_t, int> seen;
  for (std::int64_t i = 0; i < a.num_tokens_post_padded; ++i) {
    const std::int32_t id = a.sorted_token_ids[std::size_t(i)];
    if (id == slots) continue;
    ASSERT_LT(id, slots);
    ++seen[id];
    EXPECT_EQ(r.topk_ids[std::size_t(id)], a.expert_ids[std::size_t(i / block)]) << "slot " << id << " in block " << i / block;
  }
  EXPECT_EQ(std::int32_t(seen.size()), slots);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](const auto& kv) { return kv.second == 1; }));
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, AlignInvariants, ::testing::Values(8, 16, 64),
                         [](const auto& param_info) { return "B" + std::to_string(param_info.param); });

}  // namespace
}  // namespace moeval
