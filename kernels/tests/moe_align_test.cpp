// moe_align against a host counting sort: every output entry is specified (ascending slots per
// expert, padding value T, -1 tail), so the comparison is exact, for both implementation paths.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "device_vector.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels::test {
namespace {

struct AlignExpected {
  std::vector<std::int32_t> sorted, expert_ids;
  std::int32_t total = 0;
};

// The contract of moe_align.h, written as plainly as possible.
AlignExpected host_align(const std::vector<std::int32_t>& ids, int E, int B, const std::vector<std::int32_t>* map) {
  const std::int64_t T = static_cast<std::int64_t>(ids.size());
  const std::int64_t capacity = T + std::int64_t{E} * (B - 1);
  AlignExpected x;
  x.sorted.assign(static_cast<std::size_t>(capacity), static_cast<std::int32_t>(T));
  x.expert_ids.assign(static_cast<std::size_t>((capacity + B - 1) / B), -1);
  std::vector<std::vector<std::int32_t>> per_expert(static_cast<std::size_t>(E));
  for (std::int64_t i = 0; i < T; ++i) {
    if (ids[i] >= 0 && ids[i] < E) per_expert[static_cast<std::size_t>(ids[i])].push_back(static_cast<std::int32_t>(i));
  }
  std::int64_t offset = 0;
  for (int e = 0; e < E; ++e) {
    const auto& slots = per_expert[static_cast<std::size_t>(e)];
    for (std::size_t j = 0; j < slots.size(); ++j) x.sorted[static_cast<std::size_t>(offset) + j] = slots[j];
    const std::int64_t padded = (static_cast<std::int64_t>(slots.size()) + B - 1) / B * B;
    for (std::int64_t b = offset / B; b < (offset + padded) / B; ++b) x.expert_ids[static_cast<std::size_t>(b)] = map ? (*map)[e] : e;
    offset += padded;
  }
  x.total = static_cast<std::int32_t>(offset);
  return x;
}

struct AlignCase {
  std::int64_t slots;
  int experts;
  int block;
  bool invalid_ids = false;  // sprinkle -1 and E (must be ignored)
  bool expert_map = false;   // EP: every third expert is non-local (-1)
  bool skewed = false;       // half the slots go to expert E-1
};

void run_case(const AlignCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, c.experts - 1);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(c.slots));
  for (auto& id : ids) {
    id = pick(rng);
    if (c.skewed && (rng() & 1)) id = c.experts - 1;
    if (c.invalid_ids && rng() % 17 == 0) id = (rng() & 1) ? -1 : c.experts;
  }
  std::vector<std::int32_t> map(static_cast<std::size_t>(c.experts));
  for (int e = 0; e < c.experts; ++e) map[static_cast<std::size_t>(e)] = e % 3 == 2 ? -1 : e / 3 * 2 + e % 3;
  const AlignExpected want = host_align(ids, c.experts, c.block, c.expert_map ? &map : nullptr);

  DeviceVector<std::int32_t> d_ids(ids), d_map(map);
  DeviceVector<std::int32_t> sorted(want.sorted.size()), expert_ids(want.expert_ids.size()), total(1);
  DeviceVector<unsigned char> ws(moe_align_workspace_bytes(c.slots, c.experts));
  sorted.poison(0x7f);
  expert_ids.poison(0x7f);
  total.poison(0x7f);
  ws.poison(0x5a);  // the kernel must not rely on a zeroed workspace
  ASSERT_EQ(static_cast<std::int64_t>(want.sorted.size()), moe_align_sorted_capacity(c.slots, c.experts, c.block));
  ASSERT_EQ(static_cast<std::int64_t>(want.expert_ids.size()), moe_align_block_capacity(c.slots, c.experts, c.block));
  MoeAlignArgs args;
  args.topk_ids = d_ids.get();
  args.num_slots = c.slots;
  args.num_experts = c.experts;
  args.block_size = c.block;
  args.expert_map = c.expert_map ? d_map.get() : nullptr;
  args.sorted_token_ids = sorted.get();
  args.expert_ids = expert_ids.get();
  args.num_tokens_post_padded = total.get();
  args.workspace = ws.size() > 0 ? ws.get() : nullptr;
  args.workspace_bytes = ws.size();
  for (int repeat = 0; repeat < 2; ++repeat) {  // second run: same buffers, must give the same bits
    moe_align(args);
    const std::string where = "T=" + std::to_string(c.slots) + " E=" + std::to_string(c.experts) +
                              " B=" + std::to_string(c.block) + " run " + std::to_string(repeat);
    ASSERT_EQ(total.download()[0], want.total) << where;
    const auto got_sorted = sorted.download();
    for (std::size_t i = 0; i < want.sorted.size(); ++i) {
      ASSERT_EQ(got_sorted[i], want.sorted[i]) << where << " sorted_token_ids[" << i << "]";
    }
    const auto got_experts = expert_ids.download();
    for (std::size_t b = 0; b < want.expert_ids.size(); ++b) {
      ASSERT_EQ(got_experts[b], want.expert_ids[b]) << where << " expert_ids[" << b << "]";
    }
  }
}

TEST(MoeAlign, DecodeShapesEveryBlockSize) {
  MOEVAL_REQUIRE_GPUS(1);
  for (int block : {8, 16, 32, 48, 64, 128}) {
    run_case({1, 8, block}, 1);
    run_case({8, 256, block}, 2);
    run_case({512, 256, block}, 3);
    run_case({128, 128, block, true}, 4);
  }
}

TEST(MoeAlign, SingleExpertAndEmptyRouting) {
  MOEVAL_REQUIRE_GPUS(1);
  run_case({1, 1, 8}, 5);
  run_case({1000, 1, 16}, 6);
  run_case({0, 4, 16}, 7);
}

TEST(MoeAlign, ManyExperts) {
  MOEVAL_REQUIRE_GPUS(1);
  for (int experts : {1024, 1025, 2048, 4096}) {
    run_case({3000, experts, 16}, 8);     // single-block path
    run_case({40000, experts, 64}, 9);    // tiled path
  }
}

TEST(MoeAlign, TiledPathSkewedAndInvalidIds) {
  MOEVAL_REQUIRE_GPUS(1);
  run_case({100000, 256, 32, true, false, true}, 10);
  run_case({9000, 64, 8, true}, 11);
}

TEST(MoeAlign, ExpertMapMarksNonLocalBlocks) {
  MOEVAL_REQUIRE_GPUS(1);
  run_case({512, 12, 16, false, true}, 12);
  run_case({50000, 300, 32, true, true}, 13);
}

TEST(MoeAlign, LargeSlotCountNoInt32Overflow) {
  MOEVAL_REQUIRE_GPUS(1);
  run_case({(std::int64_t{1} << 24) + 77, 256, 64}, 14);
}

TEST(MoeAlign, RejectsBadArguments) {
  MOEVAL_REQUIRE_GPUS(1);
  EXPECT_THROW(moe_align_sorted_capacity(16, 8, 24), std::invalid_argument);
  EXPECT_THROW(moe_align_sorted_capacity(16, 0, 16), std::invalid_argument);
  EXPECT_THROW(moe_align_sorted_capacity(std::int64_t{1} << 31, 8, 16), std::invalid_argument);
  DeviceVector<std::int32_t> ids(16), sorted(16 + 8 * 15), experts(16), total(1);
  MoeAlignArgs args;
  args.topk_ids = ids.get();
  args.num_slots = 16;
  args.num_experts = 8;
  args.block_size = 16;
  args.sorted_token_ids = sorted.get();
  args.expert_ids = experts.get();
  args.num_tokens_post_padded = nullptr;
  EXPECT_THROW(moe_align(args), std::invalid_argument);  // null output
  std::vector<std::int32_t> host(16);
  args.num_tokens_post_padded = host.data();
  EXPECT_THROW(moe_align(args), std::invalid_argument);  // host memory
}

}  // namespace
}  // namespace moeval::kernels::test
