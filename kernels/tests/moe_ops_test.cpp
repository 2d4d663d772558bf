// silu_and_mul and topk_combine against host loops, and moe_forward end to end against a host
// model of the layer (fp64 sums, 16-bit intermediates rounded where the kernels round them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>

#include "device_vector.h"
#include "host_half.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/moe_ops.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels::test {
namespace {

std::vector<std::uint16_t> random_halves(std::size_t count, ActDType t, std::mt19937& rng, float sigma = 2.0f) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<std::uint16_t> v(count);
  for (auto& x : v) x = to_bits(normal(rng), t);
  return v;
}

TEST(MoeOps, SiluAndMulMatchesHostFp32) {
  MOEVAL_REQUIRE_GPUS(1);
  for (ActDType t : {ActDType::bf16, ActDType::f16}) {
    std::mt19937 rng(1);
    const std::int64_t rows = 37, inter = 200;
    const auto in = random_halves(static_cast<std::size_t>(rows * 2 * inter), t, rng, 4.0f);
    DeviceVector<std::uint16_t> d_in(in), d_out(static_cast<std::size_t>(rows * inter));
    d_out.poison(0xFF);
    silu_and_mul({d_in.get(), d_out.get(), rows, inter, t, nullptr});
    const auto out = d_out.download();
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < inter; ++j) {
        const float g = from_bits(in[static_cast<std::size_t>(r * 2 * inter + j)], t);
        const float u = from_bits(in[static_cast<std::size_t>(r * 2 * inter + inter + j)], t);
        const float want = from_bits(to_bits(g / (1.0f + std::exp(-g)) * u, t), t);
        const float got = from_bits(out[static_cast<std::size_t>(r * inter + j)], t);
        // Device and host expf may differ by an fp32 ulp, which can move the 16-bit rounding by one.
        ASSERT_LE(std::fabs(got - want), 1.01 * unit_roundoff(t) * 2 * std::fabs(want) + 1e-30)
            << to_string(t) << " row " << r << " col " << j;
      }
    }
  }
}

TEST(MoeOps, TopkCombineSumsInOrderAndSkipsDroppedSlots) {
  MOEVAL_REQUIRE_GPUS(1);
  for (ActDType t : {ActDType::bf16, ActDType::f16}) {
    std::mt19937 rng(2);
    const std::int64_t tokens = 19, hidden = 136;
    const int topk = 3;
    const auto in = random_halves(static_cast<std::size_t>(tokens * topk * hidden), t, rng);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens * topk));
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i % 4 == 1 ? 9 : static_cast<std::int32_t>(i % 5);  // 9 ≥ E
    DeviceVector<std::uint16_t> d_in(in), d_out(static_cast<std::size_t>(tokens * hidden));
    DeviceVector<std::int32_t> d_ids(ids);
    for (bool filter : {false, true}) {
      d_out.poison(0xFF);
      TopkCombineArgs args{d_in.get(), d_out.get(), tokens, topk, hidden, t, filter ? d_ids.get() : nullptr, 5, nullptr};
      topk_combine(args);
      const auto out = d_out.download();
      for (std::int64_t m = 0; m < tokens; ++m) {
        for (std::int64_t h = 0; h < hidden; ++h) {
          float sum = 0.0f;
          for (int j = 0; j < topk; ++j) {
            if (filter && ids[static_cast<std::size_t>(m * topk + j)] >= 5) continue;
            sum += from_bits(in[static_cast<std::size_t>((m * topk + j) * hidden + h)], t);
          }
          ASSERT_EQ(out[static_cast<std::size_t>(m * hidden + h)], to_bits(sum, t)) << "token " << m << " h " << h;
        }
      }
    }
  }
}

TEST(MoeForward, LayerMatchesHostModel) {
  MOEVAL_REQUIRE_GPUS(1);
  const ActDType t = ActDType::bf16;
  std::mt19937 rng(3);
  const MoeLayerShape s{24, 256, 128, 8, 2};
  const std::int64_t slots = s.tokens * s.topk;
  const auto x = random_halves(static_cast<std::size_t>(s.tokens * s.hidden), t, rng, 1.0f);
  std::vector<std::uint8_t> q13(static_cast<std::size_t>(s.num_experts * 2 * s.inter * s.hidden / 2)),
      q2(static_cast<std::size_t>(s.num_experts * s.hidden * s.inter / 2));
  for (auto& b : q13) b = static_cast<std::uint8_t>(rng());
  for (auto& b : q2) b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint16_t> s13(static_cast<std::size_t>(s.num_experts * 2 * s.inter * (s.hidden / 128)), to_bits(0.02f, t));
  std::vector<std::uint16_t> s2(static_cast<std::size_t>(s.num_experts * s.hidden * 1), to_bits(0.03f, t));
  for (auto& v : s13) v = to_bits(std::uniform_real_distribution<float>(0.01f, 0.03f)(rng), t);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(slots));
  std::vector<float> tw(static_cast<std::size_t>(slots));
  for (std::int64_t m = 0; m < s.tokens; ++m) {
    const int first = static_cast<int>(rng() % 8);
    ids[static_cast<std::size_t>(m * 2)] = first;
    ids[static_cast<std::size_t>(m * 2 + 1)] = m == 5 ? -1 : (first + 1 + static_cast<int>(rng() % 7)) % 8;  // one dropped slot
    tw[static_cast<std::size_t>(m * 2)] = 0.7f;
    tw[static_cast<std::size_t>(m * 2 + 1)] = 0.3f;
  }
  DeviceVector<std::uint16_t> d_x(x), d_s13(s13), d_s2(s2), d_out(static_cast<std::size_t>(s.tokens * s.hidden));
  DeviceVector<std::uint8_t> d_q13(q13), d_q2(q2);
  DeviceVector<std::int32_t> d_ids(ids);
  DeviceVector<float> d_tw(tw);
  DeviceVector<unsigned char> ws(moe_forward_workspace_bytes(s));
  MoeForwardArgs args;
  args.shape = s;
  args.hidden_states = d_x.get();
  args.topk_ids = d_ids.get();
  args.topk_weights = d_tw.get();
  args.w13 = {d_q13.get(), d_s13.get(), nullptr, s.num_experts, 4, 128};
  args.w2 = {d_q2.get(), d_s2.get(), nullptr, s.num_experts, 4, -1};
  args.out = d_out.get();
  args.dtype = t;
  args.workspace = ws.get();
  args.workspace_bytes = ws.size();
  d_out.poison(0xFF);
  moe_forward(args);
  const auto out = d_out.download();

  auto w = [&](const std::vector<std::uint8_t>& q, const std::vector<std::uint16_t>& sc, std::int64_t n_dim, std::int64_t k_dim,
               std::int64_t g_len, int e, std::int64_t n, std::int64_t k) {
    const int u = (q[static_cast<std::size_t>((e * n_dim + n) * (k_dim / 2) + k / 2)] >> (4 * (k & 1))) & 0xF;
    const float scale = from_bits(sc[static_cast<std::size_t>((e * n_dim + n) * (k_dim / g_len) + k / g_len)], t);
    return static_cast<double>(from_bits(to_bits(static_cast<float>(u - 8) * scale, t), t));
  };
  double diff2 = 0, ref2 = 0;
  for (std::int64_t m = 0; m < s.tokens; ++m) {
    std::vector<double> y(static_cast<std::size_t>(s.hidden), 0.0);
    for (int j = 0; j < s.topk; ++j) {
      const int e = ids[static_cast<std::size_t>(m * 2 + j)];
      if (e < 0) continue;
      std::vector<float> act(static_cast<std::size_t>(s.inter));
      for (std::int64_t i = 0; i < s.inter; ++i) {
        double gate = 0, up = 0;
        for (std::int64_t k = 0; k < s.hidden; ++k) {
          const double a = from_bits(x[static_cast<std::size_t>(m * s.hidden + k)], t);
          gate += a * w(q13, s13, 2 * s.inter, s.hidden, 128, e, i, k);
          up += a * w(q13, s13, 2 * s.inter, s.hidden, 128, e, s.inter + i, k);
        }
        const float g = from_bits(to_bits(static_cast<float>(gate), t), t);
        const float u = from_bits(to_bits(static_cast<float>(up), t), t);
        act[static_cast<std::size_t>(i)] = from_bits(to_bits(g / (1.0f + std::exp(-g)) * u, t), t);
      }
      for (std::int64_t h = 0; h < s.hidden; ++h) {
        double acc = 0;
        for (std::int64_t i = 0; i < s.inter; ++i) acc += act[static_cast<std::size_t>(i)] * w(q2, s2, s.hidden, s.inter, s.inter, e, h, i);
        y[static_cast<std::size_t>(h)] += from_bits(to_bits(static_cast<float>(acc * tw[static_cast<std::size_t>(m * 2 + j)]), t), t);
      }
    }
    for (std::int64_t h = 0; h < s.hidden; ++h) {
      const double got = from_bits(out[static_cast<std::size_t>(m * s.hidden + h)], t);
      ASSERT_FALSE(std::isnan(got)) << "token " << m << " h " << h << " not written";
      diff2 += (got - y[static_cast<std::size_t>(h)]) * (got - y[static_cast<std::size_t>(h)]);
      ref2 += y[static_cast<std::size_t>(h)] * y[static_cast<std::size_t>(h)];
    }
  }
  // bf16 intermediates: a correct layer lands near 2^-9 normwise; a layout bug lands near 1. The
  // measured error goes into the JUnit report (property normwise_error), so a device run says how
  // much of the bound a correct layer uses before anyone tightens it.
  const double normwise = std::sqrt(diff2 / ref2);
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.3e", normwise);
  RecordProperty("normwise_error", shown);
  EXPECT_LT(normwise, 1e-2);
  EXPECT_GT(ref2, 0.0);
}

TEST(MoeForward, RejectsSmallWorkspace) {
  MOEVAL_REQUIRE_GPUS(1);
  const MoeLayerShape s{4, 256, 128, 8, 2};
  // Every buffer on the device, so that the workspace's size is the one thing wrong.
  DeviceVector<std::uint16_t> x(static_cast<std::size_t>(s.tokens * s.hidden)), out(static_cast<std::size_t>(s.tokens * s.hidden));
  DeviceVector<std::int32_t> ids(static_cast<std::size_t>(s.tokens * s.topk));
  DeviceVector<float> tw(static_cast<std::size_t>(s.tokens * s.topk));
  DeviceVector<unsigned char> ws(256);
  MoeForwardArgs args;
  args.shape = s;
  args.hidden_states = x.get();
  args.topk_ids = ids.get();
  args.topk_weights = tw.get();
  args.out = out.get();
  args.workspace = ws.get();
  args.workspace_bytes = 256;
  try {
    moe_forward(args);
    ADD_FAILURE() << "a 256-byte workspace was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace_bytes = 256"), std::string::npos) << e.what();
  }
}

// The block size moe_forward picks on Marlin weights follows the path GEMM1's items take on this
// device: at 16 tokens per expert (E = 8, topk = 2, M = 64) the wgmma table picks 32 and the
// mma.sync one 16; a K shard in w13 (act-order, is_k_full = false) runs mma.sync on every device.
// WNA16 weights and a given block size are not affected.
TEST(MoeForward, MarlinBlockSizeFollowsGemm1Path) {
  MOEVAL_REQUIRE_GPUS(1);
  int device = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  MoeForwardArgs args;
  args.shape = {64, 256, 128, 8, 2};
  args.format = MoeWeightFormat::marlin;
  MarlinMoeArgs gemm1;  // what marlin_moe itself decides for a 32-row call of these weights
  gemm1.blocks.block_size = 32;
  const bool wgmma_here = marlin_moe_uses_wgmma(gemm1, device);
  EXPECT_EQ(marlin_layer_wgmma_items(args.marlin_w13, device), wgmma_here);
  EXPECT_EQ(moe_forward_block_size(args, device), wgmma_here ? 32 : 16);

  args.marlin_w13.act_order = true;
  args.marlin_w13.is_k_full = false;
  EXPECT_FALSE(marlin_layer_wgmma_items(args.marlin_w13, device));
  EXPECT_EQ(moe_forward_block_size(args, device), 16);
  args.marlin_w13.is_k_full = true;  // act-order over the whole K: the grouped path, wgmma where it runs
  EXPECT_EQ(moe_forward_block_size(args, device), wgmma_here ? 32 : 16);
  args.marlin_w2.act_order = true;   // w2's K shard does not decide
  args.marlin_w2.is_k_full = false;
  EXPECT_EQ(moe_forward_block_size(args, device), wgmma_here ? 32 : 16);

  args.block_size = 48;
  EXPECT_EQ(moe_forward_block_size(args, device), 48);
  args.block_size = 0;
  args.format = MoeWeightFormat::wna16;
  EXPECT_EQ(moe_forward_block_size(args, device), 16);
}

}  // namespace
}  // namespace moeval::kernels::test
