// The Marlin repack on the host: (1) its index maps — the very functions each GPU thread runs —
// compute every output word equal to the fixtures' CPU packers, over weight type × group ×
// act-order (with a K shard) × E; (2) its argument checks, which run before any CUDA call: each bad
// argument is one std::invalid_argument naming the function, the argument, its value and what is
// allowed (the pointers there are never dereferenced: the checks refuse the call first).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../../marlin_moe/marlin_repack_map.cuh"
#include "moeval/fixtures/cases.h"
#include "moeval/fixtures/layouts/awq.h"
#include "moeval/fixtures/layouts/gptq.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/kernels/marlin_repack.h"

namespace moeval::kernels::test {
namespace {

enum class Order { plain, act_order, k_shard };

struct MapCase {
  WeightType type;
  int group;
  Order order;
  int experts;
};

std::string map_case_name(const ::testing::TestParamInfo<MapCase>& info) {
  const MapCase& c = info.param;
  const char* order = c.order == Order::plain ? "plain" : c.order == Order::act_order ? "actorder" : "actorder_kshard1of4";
  return std::string(to_string(c.type)) + "_g" + (c.group < 0 ? std::string("ch") : std::to_string(c.group)) + "_" +
         order + "_E" + std::to_string(c.experts);
}

// K = 256, N = 128 (two tiles both ways); a K shard is rank 1 of 4 with local K = 64.
QuantizedWeights map_weights(const MapCase& c) {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = c.experts;
  p.tokens = 1;
  p.topk = 1;
  p.hidden = 128;
  p.inter = c.order == Order::k_shard ? 64 : 256;
  p.scheme = QuantScheme{c.type, c.group, c.order != Order::plain, c.order != Order::k_shard, DType::f16};
  p.seed = 91;
  if (c.order == Order::k_shard) {
    p.k_shards = 4;
    p.k_shard_rank = 1;
  }
  return build_gemm_case(p).w;
}

class MarlinRepackMap : public ::testing::TestWithParam<MapCase> {};

// GPTQ qweight (+ perm) → Marlin tiles, word by word with the kernel's functions.
TEST_P(MarlinRepackMap, GptqWordsEqualTheCpuPacker) {
  QuantizedWeights w = map_weights(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  if (has_zero_point(w.scheme.type)) {  // qweight does not depend on the zero points
    w.scheme.type = bits_of(w.scheme.type) == 4 ? WeightType::uint4b8 : WeightType::uint8b128;
    w.zeros.clear();
  }
  const std::vector<std::uint32_t> gptq = layouts::pack_gptq(w).qweight;
  const int bits = bits_of(w.scheme.type);
  const std::int64_t expert_words = w.k * w.n * bits / 32;
  std::vector<std::uint32_t> got(want.qweight.size());
  for (std::int64_t e = 0; e < w.experts; ++e)
    for (std::int64_t o = 0; o < expert_words; ++o) {
      got[std::size_t(e * expert_words + o)] = repack::marlin_tile_word(o, w.n, bits, [&](std::int64_t k, std::int64_t n) {
        const std::int64_t src = w.scheme.act_order ? w.perm[std::size_t(e * w.k + k)] : k;
        return repack::gptq_code(gptq.data() + e * expert_words, src, n, w.n, bits);
      });
    }
  EXPECT_EQ(got, want.qweight);
}

// Scales: the permutation chosen from G alone equals the packer's (chosen from the layer's K).
TEST_P(MarlinRepackMap, ScalePermutationEqualsTheCpuPacker) {
  const QuantizedWeights w = map_weights(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  const bool grouped = marlin_scale_permutation(w.groups()) == MarlinScalePermutation::grouped;
  EXPECT_EQ(grouped, want.scale_order == layouts::MarlinScaleOrder::grouped);
  std::vector<std::uint16_t> got(w.scales.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::int64_t row = std::int64_t(i) / w.n, x = std::int64_t(i) % w.n;
    got[i] = w.scales[std::size_t(row * w.n + repack::permuted_source(x, grouped))];
  }
  EXPECT_EQ(got, want.scales);
}

std::vector<MapCase> map_cases() {
  std::vector<MapCase> out;
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8})
    for (int group : {-1, 32, 128})
      for (Order order : {Order::plain, Order::act_order, Order::k_shard}) {
        if (order != Order::plain && (has_zero_point(type) || group < 0)) continue;  // act-order: symmetric, grouped
        for (int experts : {1, 3}) out.push_back({type, group, order, experts});
      }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, MarlinRepackMap, ::testing::ValuesIn(map_cases()), map_case_name);

// AWQ (4-bit, no act-order) qweight and qzeros → Marlin tiles and zero points.
class MarlinRepackAwqMap : public ::testing::TestWithParam<MapCase> {};

TEST_P(MarlinRepackAwqMap, AwqWordsAndZerosEqualTheCpuPacker) {
  const QuantizedWeights w = map_weights(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  const layouts::AwqWeights awq = layouts::pack_awq(w);
  const std::int64_t expert_words = w.k * w.n / 8;
  std::vector<std::uint32_t> got(want.qweight.size());
  for (std::int64_t e = 0; e < w.experts; ++e)
    for (std::int64_t o = 0; o < expert_words; ++o) {
      got[std::size_t(e * expert_words + o)] = repack::marlin_tile_word(o, w.n, 4, [&](std::int64_t k, std::int64_t n) {
        return repack::awq_code(awq.qweight.data() + e * expert_words, k, n, w.n);
      });
    }
  EXPECT_EQ(got, want.qweight);
  if (!has_zero_point(w.scheme.type)) return;  // Marlin carries no zero points for uint4b8
  std::vector<std::uint32_t> zeros(want.zeros.size());
  for (std::size_t i = 0; i < zeros.size(); ++i) {
    const std::int64_t row = std::int64_t(i) / (w.n / 8), word = std::int64_t(i) % (w.n / 8);
    zeros[i] = repack::marlin_zero_word(awq.qzeros.data() + row * (w.n / 8), word);
  }
  EXPECT_EQ(zeros, want.zeros);
}

std::vector<MapCase> awq_map_cases() {
  std::vector<MapCase> out;
  for (const MapCase& c : map_cases()) {
    if (bits_of(c.type) == 4 && c.order == Order::plain) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, MarlinRepackAwqMap, ::testing::ValuesIn(awq_map_cases()), map_case_name);

void expect_refused(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error containing: " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Host buffers large enough for the shapes below; only their addresses matter.
struct Buffers {
  std::vector<std::uint32_t> in = std::vector<std::uint32_t>(4096);
  std::vector<std::uint32_t> out = std::vector<std::uint32_t>(4096);
  std::vector<std::uint16_t> in16 = std::vector<std::uint16_t>(4096);
  std::vector<std::uint16_t> out16 = std::vector<std::uint16_t>(4096);
};

GptqToMarlinArgs gptq(Buffers& b) {
  GptqToMarlinArgs a;
  a.qweight = b.in.data();
  a.out = b.out.data();
  a.num_experts = 2;
  a.size_k = 32;
  a.size_n = 64;
  a.num_bits = 4;
  return a;
}

TEST(MarlinRepackHost, GptqShapesAndBits) {
  Buffers b;
  auto a = gptq(b);
  a.num_experts = 0;
  expect_refused([&] { gptq_to_marlin(a); }, "gptq_to_marlin: num_experts = 0 must be at least 1");
  a = gptq(b);
  a.size_k = 24;
  expect_refused([&] { gptq_to_marlin(a); }, "gptq_to_marlin: size_k = 24 must be a positive multiple of 16");
  a = gptq(b);
  a.size_n = 96;
  expect_refused([&] { gptq_to_marlin(a); }, "gptq_to_marlin: size_n = 96 must be a positive multiple of 64");
  a = gptq(b);
  a.size_n = 0;
  expect_refused([&] { gptq_to_marlin(a); }, "size_n = 0 must be a positive multiple of 64");
  a = gptq(b);
  a.num_bits = 2;
  expect_refused([&] { gptq_to_marlin(a); }, "num_bits = 2 is not supported; allowed: 4, 8");
  a = gptq(b);
  a.qweight = nullptr;
  expect_refused([&] { gptq_to_marlin(a); }, "qweight and out are required");
  a = gptq(b);
  a.out = nullptr;
  expect_refused([&] { gptq_to_marlin(a); }, "qweight and out are required");
}

TEST(MarlinRepackHost, InPlaceIsRefused) {
  Buffers b;
  auto a = gptq(b);
  a.out = const_cast<std::uint32_t*>(a.qweight) + 1;  // overlaps by all but one word
  expect_refused([&] { gptq_to_marlin(a); }, "the output overlaps the input");
  a = gptq(b);
  a.perm = reinterpret_cast<const std::int32_t*>(a.out);
  expect_refused([&] { gptq_to_marlin(a); }, "the output overlaps the input");
  MarlinScalesArgs s;
  s.scales = b.in16.data();
  s.out = b.in16.data();
  s.num_experts = 1;
  s.num_groups = 2;
  s.size_n = 64;
  expect_refused([&] { marlin_permute_scales(s); }, "marlin_permute_scales: the output overlaps the input");
}

TEST(MarlinRepackHost, AwqIsFourBitOnly) {
  Buffers b;
  AwqToMarlinArgs a;
  a.qweight = b.in.data();
  a.out = b.out.data();
  a.num_experts = 1;
  a.size_k = 16;
  a.size_n = 64;
  a.num_bits = 8;
  expect_refused([&] { awq_to_marlin(a); }, "awq_to_marlin: num_bits = 8 is not supported; allowed: 4 (AWQ is 4-bit only)");
  a.num_bits = 4;
  a.size_k = 8;
  expect_refused([&] { awq_to_marlin(a); }, "size_k = 8 must be a positive multiple of 16");
  AwqZerosToMarlinArgs z;
  z.qzeros = b.in.data();
  z.out = b.out.data();
  z.num_experts = 1;
  z.num_groups = 2;
  z.size_n = 64;
  z.num_bits = 8;
  expect_refused([&] { awq_zeros_to_marlin(z); }, "awq_zeros_to_marlin: num_bits = 8 is not supported");
  z.num_bits = 4;
  z.num_groups = 0;
  expect_refused([&] { awq_zeros_to_marlin(z); }, "num_groups = 0 must be at least 1");
  z.num_groups = 2;
  z.size_n = 32;
  expect_refused([&] { awq_zeros_to_marlin(z); }, "size_n = 32 must be a positive multiple of 64");
}

TEST(MarlinRepackHost, ScalesShapes) {
  Buffers b;
  MarlinScalesArgs s;
  s.scales = b.in16.data();
  s.out = b.out16.data();
  s.num_experts = 1;
  s.num_groups = 0;
  s.size_n = 64;
  expect_refused([&] { marlin_permute_scales(s); }, "marlin_permute_scales: num_groups = 0 must be at least 1");
  s.num_groups = 1;
  s.size_n = 48;
  expect_refused([&] { marlin_permute_scales(s); }, "size_n = 48 must be a positive multiple of 64");
  s.size_n = 64;
  s.scales = nullptr;
  expect_refused([&] { marlin_permute_scales(s); }, "scales and out are required");
}

// The permutation follows the number of groups (the rows of the scales), never K: one group is
// channelwise, two or more are grouped — a K shard passes the layer's global group count.
TEST(MarlinRepackHost, ScalePermutationFollowsTheGroupCount) {
  EXPECT_EQ(marlin_scale_permutation(1), MarlinScalePermutation::channelwise);
  EXPECT_EQ(marlin_scale_permutation(2), MarlinScalePermutation::grouped);
  EXPECT_EQ(marlin_scale_permutation(56), MarlinScalePermutation::grouped);
}

}  // namespace
}  // namespace moeval::kernels::test
