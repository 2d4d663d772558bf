// The GPU Marlin repack against the fixtures' CPU packers, bit for bit: GPTQ (with the act-order perm,
// K shards included) and AWQ checkpoints → Marlin tiles, scales → Marlin's permutation, AWQ zero
// points → Marlin zero points, over weight type × group × act-order × E.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "device_vector.h"
#include "marlin_repack_cases.h"
#include "moeval/fixtures/layouts/awq.h"
#include "moeval/fixtures/layouts/gptq.h"
#include "moeval/fixtures/layouts/marlin.h"
#include "moeval/kernels/marlin_repack.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels::test {
namespace {

class MarlinRepack : public ::testing::TestWithParam<RepackCase> {};

TEST_P(MarlinRepack, GptqEqualsTheCpuPacker) {
  MOEVAL_REQUIRE_GPUS(1);
  const QuantizedWeights w = weights_for(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  DeviceVector<std::uint32_t> qweight(gptq_qweight(w));
  DeviceVector<std::int32_t> perm(w.perm);
  DeviceVector<std::uint32_t> out(want.qweight.size());
  out.poison(0xA5);  // a word the kernel does not write shows up
  GptqToMarlinArgs args;
  args.qweight = qweight.get();
  args.perm = w.scheme.act_order ? perm.get() : nullptr;
  args.out = out.get();
  args.num_experts = int(w.experts);
  args.size_k = w.k;
  args.size_n = w.n;
  args.num_bits = bits_of(w.scheme.type);
  gptq_to_marlin(args);
  EXPECT_EQ(out.download(), want.qweight);
}

TEST_P(MarlinRepack, ScalesEqualTheCpuPermutation) {
  MOEVAL_REQUIRE_GPUS(1);
  const QuantizedWeights w = weights_for(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  DeviceVector<std::uint16_t> scales(w.scales);
  DeviceVector<std::uint16_t> out(want.scales.size());
  out.poison(0xA5);
  MarlinScalesArgs args;
  args.scales = scales.get();
  args.out = out.get();
  args.num_experts = int(w.experts);
  args.num_groups = w.groups();  // a K shard's global G
  args.size_n = w.n;
  EXPECT_EQ(marlin_scale_permutation(args.num_groups) == MarlinScalePermutation::grouped,
            want.scale_order == layouts::MarlinScaleOrder::grouped);
  marlin_permute_scales(args);
  EXPECT_EQ(out.download(), want.scales);
}

// AWQ exists for 4-bit weights without act-order only.
class MarlinRepackAwq : public ::testing::TestWithParam<RepackCase> {};

TEST_P(MarlinRepackAwq, AwqEqualsTheCpuPacker) {
  MOEVAL_REQUIRE_GPUS(1);
  const QuantizedWeights w = weights_for(GetParam());
  const layouts::MarlinWeights want = layouts::pack_marlin(w);
  const layouts::AwqWeights awq = layouts::pack_awq(w);
  DeviceVector<std::uint32_t> qweight(awq.qweight);
  DeviceVector<std::uint32_t> out(want.qweight.size());
  out.poison(0xA5);
  AwqToMarlinArgs args;
  args.qweight = qweight.get();
  args.out = out.get();
  args.num_experts = int(w.experts);
  args.size_k = w.k;
  args.size_n = w.n;
  awq_to_marlin(args);
  EXPECT_EQ(out.download(), want.qweight);
  if (!has_zero_point(w.scheme.type)) return;
  DeviceVector<std::uint32_t> qzeros(awq.qzeros);
  DeviceVector<std::uint32_t> zeros(want.zeros.size());
  zeros.poison(0xA5);
  AwqZerosToMarlinArgs z;
  z.qzeros = qzeros.get();
  z.out = zeros.get();
  z.num_experts = int(w.experts);
  z.num_groups = w.groups();
  z.size_n = w.n;
  awq_zeros_to_marlin(z);
  EXPECT_EQ(zeros.download(), want.zeros);
}

std::vector<RepackCase> all_cases() {
  std::vector<RepackCase> out;
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8})
    for (int group : {kChannelwise, 32, 128})
      for (Order order : {Order::plain, Order::act_order, Order::k_shard}) {
        if (order != Order::plain && (has_zero_point(type) || group == kChannelwise)) continue;  // act-order: symmetric, grouped
        for (int experts : {1, 3}) out.push_back({type, group, order, experts});
      }
  return out;
}

std::vector<RepackCase> awq_cases() {
  std::vector<RepackCase> out;
  for (const RepackCase& c : all_cases()) {
    if (bits_of(c.type) == 4 && c.order == Order::plain) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, MarlinRepack, ::testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Matrix, MarlinRepackAwq, ::testing::ValuesIn(awq_cases()), case_name);

// A perm entry outside [0, K) is reported after the launch, never read past the weights.
TEST(MarlinRepackErrors, PermOutOfRangeIsReported) {
  MOEVAL_REQUIRE_GPUS(1);
  const QuantizedWeights w = weights_for({WeightType::uint4b8, 32, Order::act_order, 2});
  std::vector<std::int32_t> bad = w.perm;
  bad[std::size_t(w.k + 5)] = std::int32_t(w.k);  // expert 1, row 5
  DeviceVector<std::uint32_t> qweight(gptq_qweight(w));
  DeviceVector<std::int32_t> perm(bad);
  DeviceVector<std::uint32_t> out(std::size_t(w.experts * w.k * w.n / 8));
  GptqToMarlinArgs args;
  args.qweight = qweight.get();
  args.perm = perm.get();
  args.out = out.get();
  args.num_experts = int(w.experts);
  args.size_k = w.k;
  args.size_n = w.n;
  try {
    gptq_to_marlin(args);
    ADD_FAILURE() << "a perm entry of K was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("perm has an entry outside [0, size_k = 256)"), std::string::npos) << e.what();
  }
}

// Host memory is refused before any launch (the pointers must live on one device).
TEST(MarlinRepackErrors, HostPointersAreRefused) {
  MOEVAL_REQUIRE_GPUS(1);
  std::vector<std::uint16_t> host(64);
  DeviceVector<std::uint16_t> out(64);
  MarlinScalesArgs args;
  args.scales = host.data();
  args.out = out.get();
  args.num_experts = 1;
  args.num_groups = 1;
  args.size_n = 64;
  EXPECT_THROW(marlin_permute_scales(args), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::kernels::test
