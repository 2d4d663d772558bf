// wna16_moe against a small host oracle: the same dequantized 16-bit weights (recipe
// round16((u - z)·s)), fp64 sums, and the statistical fp32-accumulation bound of docs/tolerance.md.
// Also: padding slots never written, -1 experts written as zeros, bitwise repeatability.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "device_vector.h"
#include "host_half.h"
#include "moeval/kernels/moe_align.h"
#include "moeval/kernels/wna16_moe.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels::test {
namespace {

constexpr std::uint16_t kPoison = 0xFFFF;  // NaN in fp16 and bf16

struct GemmCase {
  std::int64_t a_rows;  // M (GEMM1) or M·topk (GEMM2 with top_k = 1)
  int topk;             // slots per A row... see slots()
  int experts;
  std::int64_t n, k;
  int bits = 4;
  int group = 128;
  bool zero_points = false;
  ActDType dtype = ActDType::bf16;
  int block = 16;
  bool mul = false;
  bool expert_map = false;    // every third expert non-local → zeros
  bool dropped_slots = false; // some ids -1 → rows never written
  int gemm_top_k = 0;         // 0: = topk (GEMM1); 1: GEMM2 semantics (A row = slot)
  std::string name() const {
    return "n" + std::to_string(n) + " k" + std::to_string(k) + " b" + std::to_string(bits) + " g" + std::to_string(group) +
           (zero_points ? " zp" : "") + " " + to_string(dtype) + " B" + std::to_string(block) + " E" + std::to_string(experts);
  }
};

void run_gemm(const GemmCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::int64_t slots = c.a_rows * c.topk;
  const int top_k = c.gemm_top_k == 0 ? c.topk : 1;
  const std::int64_t a_rows = slots / top_k;
  const std::int64_t groups = c.group == -1 ? 1 : c.k / c.group;
  const std::int64_t group_len = c.k / groups;
  const int pack = 8 / c.bits;

  std::vector<std::uint8_t> qweight(static_cast<std::size_t>(c.experts * c.n * c.k / pack));
  for (auto& b : qweight) b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint16_t> scales(static_cast<std::size_t>(c.experts * c.n * groups));
  std::uniform_real_distribution<float> scale_dist(0.5f, 2.0f);
  for (auto& s : scales) s = to_bits(scale_dist(rng) / (c.bits == 4 ? 8.0f : 128.0f), c.dtype);
  std::vector<std::uint8_t> qzeros(static_cast<std::size_t>(c.experts * c.n / pack * groups));
  for (auto& z : qzeros) z = static_cast<std::uint8_t>(rng());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::uint16_t> a(static_cast<std::size_t>(a_rows * c.k));
  for (auto& x : a) x = to_bits(normal(rng), c.dtype);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(slots));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<unsigned>(c.experts));
  if (c.dropped_slots) {
    for (std::size_t i = 0; i < ids.size(); i += 5) ids[i] = -1;
  }
  std::vector<float> topk_weights(static_cast<std::size_t>(slots));
  for (auto& w : topk_weights) w = std::uniform_real_distribution<float>(0.05f, 1.0f)(rng);
  std::vector<std::int32_t> map(static_cast<std::size_t>(c.experts));
  int local = 0;
  for (int e = 0; e < c.experts; ++e) map[static_cast<std::size_t>(e)] = e % 3 == 2 ? -1 : local++;
  const int weight_experts = c.expert_map ? local : c.experts;
  // With an expert map, the weights hold the local experts only: local id l = global e's data.
  auto code = [&](int e, std::int64_t n, std::int64_t k) -> int {
    const std::uint8_t byte = qweight[static_cast<std::size_t>((e * c.n + n) * (c.k / pack) + k / pack)];
    return c.bits == 8 ? byte : (byte >> (4 * (k & 1))) & 0xF;
  };
  auto zero = [&](int e, std::int64_t n, std::int64_t g) -> int {
    if (!c.zero_points) return c.bits == 4 ? 8 : 128;
    const std::uint8_t byte = qzeros[static_cast<std::size_t>((e * (c.n / pack) + n / pack) * groups + g)];
    return c.bits == 8 ? byte : (byte >> (4 * (n & 1))) & 0xF;
  };
  auto w16 = [&](int e, std::int64_t n, std::int64_t k) -> double {
    const std::int64_t g = k / group_len;
    const float s = from_bits(scales[static_cast<std::size_t>((e * c.n + n) * groups + g)], c.dtype);
    return from_bits(to_bits(static_cast<float>(code(e, n, k) - zero(e, n, g)) * s, c.dtype), c.dtype);
  };

  // Align on the device (moe_align is tested separately against its own host oracle).
  const std::int64_t capacity = moe_align_sorted_capacity(slots, c.experts, c.block);
  DeviceVector<std::int32_t> d_ids(ids), d_map(map), sorted(static_cast<std::size_t>(capacity)),
      expert_ids(static_cast<std::size_t>(moe_align_block_capacity(slots, c.experts, c.block))), total(1);
  DeviceVector<unsigned char> align_ws(moe_align_workspace_bytes(slots, c.experts));
  MoeAlignArgs align;
  align.topk_ids = d_ids.get();
  align.num_slots = slots;
  align.num_experts = c.experts;
  align.block_size = c.block;
  align.expert_map = c.expert_map ? d_map.get() : nullptr;
  align.sorted_token_ids = sorted.get();
  align.expert_ids = expert_ids.get();
  align.num_tokens_post_padded = total.get();
  align.workspace = align_ws.size() ? align_ws.get() : nullptr;
  align.workspace_bytes = align_ws.size();
  moe_align(align);

  DeviceVector<std::uint8_t> d_qweight(qweight), d_qzeros(qzeros);
  DeviceVector<std::uint16_t> d_scales(scales), d_a(a), d_c(static_cast<std::size_t>(slots * c.n));
  DeviceVector<float> d_tw(topk_weights);
  Wna16MoeArgs args;
  args.a = d_a.get();
  args.c = d_c.get();
  args.weights = {d_qweight.get(), d_scales.get(), c.zero_points ? d_qzeros.get() : nullptr, weight_experts, c.bits, c.group};
  args.blocks = {sorted.get(), expert_ids.get(), total.get(), capacity, c.block, slots};
  args.shape = {c.n, c.k};
  args.top_k = top_k;
  args.dtype = c.dtype;
  args.topk_weights = d_tw.get();
  args.mul_topk_weights = c.mul;
  d_c.poison(0xFF);
  wna16_moe(args);
  const auto got = d_c.download();

  const double u_out = unit_roundoff(c.dtype);
  double worst = 0.0;
  for (std::int64_t i = 0; i < slots; ++i) {
    const int global = ids[static_cast<std::size_t>(i)];
    const bool dropped = global < 0;
    const int e = dropped ? -1 : (c.expert_map ? map[static_cast<std::size_t>(global)] : global);
    for (std::int64_t n = 0; n < c.n; ++n) {
      const std::uint16_t bits = got[static_cast<std::size_t>(i * c.n + n)];
      const std::string where = c.name() + " slot " + std::to_string(i) + " n " + std::to_string(n);
      if (dropped) {
        ASSERT_EQ(bits, kPoison) << where << ": a dropped slot's row was written";
        continue;
      }
      if (e < 0) {
        ASSERT_EQ(from_bits(bits, c.dtype), 0.0f) << where << ": non-local expert row must be zero";
        continue;
      }
      double y = 0.0, s2 = 0.0;
      for (std::int64_t k = 0; k < c.k; ++k) {
        const double p = from_bits(a[static_cast<std::size_t>((i / top_k) * c.k + k)], c.dtype) * w16(e, n, k);
        y += p;
        s2 += p * p;
      }
      const double w = c.mul ? topk_weights[static_cast<std::size_t>(i)] : 1.0;
      y *= w;
      const double bound = u_out * std::fabs(y) + (1 + u_out) * 12.0 * std::ldexp(1.0, -24) * std::sqrt(double(c.k)) *
                                                      std::sqrt(s2) * w + std::ldexp(1.0, -23) * std::fabs(y);
      const double err = std::fabs(from_bits(bits, c.dtype) - y);
      ASSERT_LE(err, bound) << where << ": got " << from_bits(bits, c.dtype) << " want " << y;
      if (bound > 0) worst = std::max(worst, err / bound);
    }
  }
  // Bitwise repeatability, including after poisoning the output again.
  d_c.poison(0xFF);
  wna16_moe(args);
  ASSERT_EQ(d_c.download(), got) << c.name() << ": second run differs";
  ::testing::Test::RecordProperty("worst_ratio_" + std::to_string(seed), std::to_string(worst));
}

TEST(Wna16Moe, Int4Bf16DecodeBlock8) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({3, 2, 8, 64, 256, 4, 128, false, ActDType::bf16, 8}, 1);
  run_gemm({1, 8, 32, 128, 2048, 4, 128, false, ActDType::bf16, 8, true}, 2);  // K split over warps
}

TEST(Wna16Moe, Int4Fp16ZeroPointsGroup32) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({40, 4, 16, 128, 512, 4, 32, true, ActDType::f16, 16, true}, 3);
}

TEST(Wna16Moe, Int4Group64Block48TailChunk) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({50, 2, 4, 80, 96, 4, 32, true, ActDType::bf16, 48}, 4);
  run_gemm({50, 2, 4, 80, 192, 4, 64, false, ActDType::f16, 48}, 5);
}

TEST(Wna16Moe, Int8Bf16Channelwise) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({64, 2, 4, 48, 160, 8, -1, false, ActDType::bf16, 32}, 6);
  run_gemm({64, 2, 4, 48, 160, 8, -1, true, ActDType::bf16, 32, true}, 7);
}

TEST(Wna16Moe, Int8Fp16ZeroPointsGroup64Block64) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({100, 2, 3, 32, 192, 8, 64, true, ActDType::f16, 64}, 8);
  run_gemm({100, 2, 3, 32, 192, 8, 64, false, ActDType::f16, 64}, 9);
}

TEST(Wna16Moe, Block128TwoRowGroups) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({300, 2, 2, 64, 256, 4, 128, false, ActDType::bf16, 128, true}, 10);
}

TEST(Wna16Moe, Gemm2SemanticsTopK1WithWeights) {
  MOEVAL_REQUIRE_GPUS(1);
  GemmCase c{20, 4, 8, 96, 128, 4, 128, false, ActDType::bf16, 16, true};
  c.gemm_top_k = 1;
  run_gemm(c, 11);
}

TEST(Wna16Moe, ExpertMapZerosAndDroppedSlots) {
  MOEVAL_REQUIRE_GPUS(1);
  GemmCase c{30, 2, 9, 64, 256, 4, 64, true, ActDType::f16, 8, true};
  c.expert_map = true;
  c.dropped_slots = true;
  run_gemm(c, 12);
}

TEST(Wna16Moe, RejectsUnsupportedShapes) {
  MOEVAL_REQUIRE_GPUS(1);
  DeviceVector<std::uint8_t> q(4096);
  DeviceVector<std::uint16_t> s(4096), a(4096), c(4096);
  DeviceVector<std::int32_t> sorted(64), experts(8), total(1);
  Wna16MoeArgs args;
  args.a = a.get();
  args.c = c.get();
  args.weights = {q.get(), s.get(), nullptr, 1, 4, 128};
  args.blocks = {sorted.get(), experts.get(), total.get(), 64, 8, 8};
  args.shape = {64, 128};
  args.top_k = 1;
  auto expect_reject = [&](Wna16MoeArgs bad, const char* what) {
    EXPECT_THROW(wna16_moe(bad), std::invalid_argument) << what;
  };
  Wna16MoeArgs bad = args;
  bad.weights.bits = 3;
  expect_reject(bad, "bits 3");
  bad = args;
  bad.shape.n = 40;
  expect_reject(bad, "N % 16");
  bad = args;
  bad.shape.k = 112;
  expect_reject(bad, "K % 32");
  bad = args;
  bad.weights.group_size = 96;
  expect_reject(bad, "group 96");
  bad = args;
  bad.shape.k = 192;
  expect_reject(bad, "K % group");
  bad = args;
  bad.weights.qweight = nullptr;
  expect_reject(bad, "null qweight");
  bad = args;
  std::vector<std::uint16_t> host(4096);
  bad.c = host.data();
  expect_reject(bad, "host output");
  bad = args;
  bad.mul_topk_weights = true;
  expect_reject(bad, "mul without weights");
  bad = args;
  bad.blocks.block_size = 24;
  expect_reject(bad, "block 24");
}

// Two 16-row weight tiles per warp (4-bit 8-, 16- and 32-row items): N with an odd number of
// 16-row tiles, so a warp holds one tile inside N and one past it; N = 16 (one tile, most warps of
// the block own none); K split across warps; expert maps and dropped slots.
TEST(Wna16MoeRowTiles, OddRowTilesBlock16) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({40, 4, 16, 80, 512, 4, 128, false, ActDType::bf16, 16, true}, 21);
  run_gemm({40, 4, 16, 80, 512, 4, 32, true, ActDType::f16, 16}, 22);
  run_gemm({60, 2, 4, 112, 256, 4, 64, false, ActDType::bf16, 16}, 23);
}

TEST(Wna16MoeRowTiles, OddRowTilesBlock8) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({3, 2, 8, 80, 256, 4, 128, false, ActDType::bf16, 8}, 24);
  run_gemm({9, 2, 8, 48, 256, 4, 64, true, ActDType::f16, 8, true}, 25);
}

TEST(Wna16MoeRowTiles, SingleTileAndKSplitBlock16) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({20, 2, 4, 16, 4096, 4, 64, true, ActDType::bf16, 16}, 26);
  run_gemm({1, 8, 32, 48, 2048, 4, 128, false, ActDType::bf16, 16, true}, 27);
  run_gemm({64, 8, 16, 96, 2048, 4, 128, false, ActDType::bf16, 16, true}, 28);
}

TEST(Wna16MoeRowTiles, Block32RowTiles) {
  MOEVAL_REQUIRE_GPUS(1);
  run_gemm({40, 4, 8, 80, 512, 4, 128, false, ActDType::bf16, 32, true}, 31);
  run_gemm({40, 4, 8, 80, 512, 4, 32, true, ActDType::f16, 32}, 32);
  run_gemm({20, 2, 4, 16, 4096, 4, 64, true, ActDType::bf16, 32}, 33);
  run_gemm({100, 2, 4, 256, 1024, 4, 128, false, ActDType::bf16, 32, true}, 34);
  GemmCase c{30, 2, 9, 96, 256, 4, 64, true, ActDType::bf16, 32, true};
  c.expert_map = true;
  c.dropped_slots = true;
  run_gemm(c, 35);
}

}  // namespace
}  // namespace moeval::kernels::test
