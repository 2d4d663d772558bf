// The int32-overflow regimes, per registered kernel, at realistic full size (the `large` label):
//   - one GEMM whose weights exceed 2 GiB: DeepSeek-V3's w2 shape (E = 256, K = 2048, N = 7168) in
//     int8 g128, 3.76 GB of weights, so an expert's weight offset e·N·K past 2^31 bytes overflows
//     in 32-bit arithmetic for every expert from 147 on. (int8 rather than the equally large int4
//     w13 because the adapter packs every code on the host: half the codes, half the time.) It is
//     run as a GEMM1-kind case so the exact tier applies (no routing-weight multiply);
//   - one GEMM with more than 2^31 output elements (262144 routed rows × 8448 columns), so
//     sorted_id·N overflows;
//   - a memory-bound GEMM of 8-bit weights ten times the L2 at full load (copies behind the reads).
// What is compared, honestly: the CPU fp64 reference of the WHOLE output would cost minutes, so
// the kernel's full output is checked for coverage (no element left poisoned, guards intact,
// inputs unchanged, caller's device restored) and the routed rows of a sample of tokens —
// chosen where the overflow bites: the highest experts, the rows around the 2^31-element
// boundary, the last rows — are compared with the reference of exactly those tokens, exact tier
// (bitwise). Rows outside the sample are checked for coverage only.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "gpu_case_support.h"
#include "moeval/fixtures/parallel_for.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"
#include "moeval/tolerance/compare.h"
#include "registered_kernels.h"

namespace moeval::testbed {
namespace {

// Runs `c` on device 0 (another device current when two exist) and judges the full output for
// coverage and the routed rows of `tokens` against the reference of those tokens alone. runs > 1:
// the call is repeated (into a fresh output) and every output element must be bitwise the same in
// each run, which a race between the kernel's copies and its reads would break somewhere.
void expect_sampled_tokens_match(const GemmKernelUnderTest& kernel, const GemmCase& c, std::vector<std::int64_t> tokens,
                                 int runs = 1) {
  const std::string why = kernel.unsupported_reason(c);
  if (!why.empty()) {
    ADD_FAILURE() << kernel.name() << " does not support the large case " << c.problem.name() << ": " << why;
    return;
  }
  const std::int64_t topk = c.problem.topk, n = c.shape.n;
  const std::int64_t rows = std::int64_t(c.routing.topk_ids.size());
  auto prepared = kernel.prepare(c, 0);
  GuardedBuffer out("out", 0, std::size_t(rows * n) * 2, 2);
  {
    ForeignCurrentDevice caller(0);
    prepared->run(out);
    EXPECT_EQ(caller.check_restored(kernel.name()), "");
  }
  synchronize_device(0, kernel.name());
  const auto bits = out.download<std::uint16_t>();
  auto buffers = prepared->buffers();
  buffers.push_back(&out);
  for (const auto& e : memory_errors(buffers)) ADD_FAILURE() << e;
  const std::int64_t poisoned = std::count(bits.begin(), bits.end(), std::uint16_t(0xFFFF));
  EXPECT_EQ(poisoned, 0) << "output elements never written (of " << bits.size() << ")";
  for (int run = 1; run < runs; ++run) {
    GuardedBuffer again("out", 0, std::size_t(rows * n) * 2, 2);
    prepared->run(again);
    synchronize_device(0, kernel.name());
    const auto repeat = again.download<std::uint16_t>();
    std::int64_t differ = 0, first = -1;
    for (std::size_t i = 0; i < bits.size(); ++i) {
      if (repeat[i] != bits[i]) {
        if (first < 0) first = std::int64_t(i);
        ++differ;
      }
    }
    EXPECT_EQ(differ, 0) << kernel.name() << ": run " << run + 1 << " differs from run 1 in " << differ << " of "
                         << bits.size() << " output elements, the first at routed row " << first / n << ", column "
                         << first % n;
  }

  // The sub-case of the sampled tokens: same weights (by reference: they are tens of GB on the
  // host), the tokens' activations and routing. A rows per token: 1 (GEMM1) or topk (GEMM2).
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  const std::int64_t a_rows_per_token = topk / c.a_row_divisor, k = c.shape.k;
  MoeProblem sub_problem = c.problem;
  sub_problem.tokens = std::int64_t(tokens.size());
  Routing sub_routing{sub_problem.tokens, topk, {}, {}};
  std::vector<std::uint16_t> sub_a, sub_out;
  for (std::int64_t t : tokens) {
    const auto a_begin = c.a.begin() + std::ptrdiff_t(t * a_rows_per_token * k);
    sub_a.insert(sub_a.end(), a_begin, a_begin + std::ptrdiff_t(a_rows_per_token * k));
    for (std::int64_t j = 0; j < topk; ++j) {
      sub_routing.topk_ids.push_back(c.routing.topk_ids[std::size_t(t * topk + j)]);
      sub_routing.topk_weights.push_back(c.routing.topk_weights[std::size_t(t * topk + j)]);
    }
    sub_out.insert(sub_out.end(), bits.begin() + std::ptrdiff_t(t * topk * n), bits.begin() + std::ptrdiff_t((t + 1) * topk * n));
  }
  const auto routed = reference::RoutedRows::from_topk(sub_routing, sub_problem, c.a_row_divisor);
  const auto ref = reference::reference_gemm(reference::GemmOperands{
      reference::Matrix16{sub_a, sub_problem.tokens * a_rows_per_token, k, c.problem.scheme.act}, c.w, routed,
      c.mul_topk_weights});
  const auto verdict = tolerance::compare(c.problem.tier, reference::Matrix16{sub_out, ref.rows, n, ref.dtype}, ref);
  EXPECT_TRUE(verdict.pass()) << kernel.name() << " " << c.problem.name() << " (rows of " << tokens.size()
                              << " sampled tokens): " << verdict.summary();
}

class Large : public testing::TestWithParam<std::string> {};

// The case `p` with its E experts made from `distinct` experts built the usual way: expert e is
// expert e % distinct rotated by e columns along N — codes, scales, zero points and dequantized
// weights alike, so each is still a consistent quantized weight, and all E differ (e < N). Why:
// drawing 256 full-size experts costs minutes of CPU; copying costs seconds. Activations come
// from the small case (same M and K), the routing is p's own.
GemmCase with_rotated_experts(const MoeProblem& p, std::int64_t distinct) {
  MoeProblem small = p;
  small.experts = distinct;
  GemmCase base = build_gemm_case(small);
  GemmCase c;
  c.problem = p;
  c.shape = p.gemm();
  c.a_row_divisor = base.a_row_divisor;
  c.mul_topk_weights = base.mul_topk_weights;
  c.a = std::move(base.a);
  c.routing = make_routing(p);
  const QuantizedWeights& b = base.w;
  QuantizedWeights& w = c.w;
  w.scheme = b.scheme;
  w.experts = p.experts;
  w.k = b.k;
  w.n = b.n;
  const std::int64_t n = w.n;
  const auto rotate = [&](auto& to, const auto& from, std::int64_t rows) {
    to.resize(std::size_t(w.experts * rows * n));
    parallel_for(w.experts, [&](std::int64_t e) {
      const std::int64_t shift = e % n;
      for (std::int64_t r = 0; r < rows; ++r) {
        const auto src = from.begin() + std::ptrdiff_t(((e % distinct) * rows + r) * n);
        const auto dst = to.begin() + std::ptrdiff_t((e * rows + r) * n);
        std::copy(src + shift, src + n, dst);  // to[j] = from[(j + shift) % n]
        std::copy(src, src + shift, dst + (n - shift));
      }
    });
  };
  rotate(w.codes, b.codes, w.k);
  rotate(w.dequant, b.dequant, w.k);
  rotate(w.scales, b.scales, b.groups());
  if (!b.zeros.empty()) rotate(w.zeros, b.zeros, b.groups());
  for (std::int64_t e = 0; e < w.experts; ++e) {
    w.g_idx.insert(w.g_idx.end(), b.g_idx.begin() + (e % distinct) * w.k, b.g_idx.begin() + (e % distinct + 1) * w.k);
  }
  return c;
}

TEST_P(Large, WeightsBeyondTwoGiBDeepSeekV3W2Shape) {
  MOEVAL_REQUIRE_GPUS(1);
  // K = 2048, N = 7168, E = 256, int8 g128; 32 tokens, top-8 (256 routed rows).
  const MoeProblem p = gemm_problem(ProblemKind::gemm1, WeightType::uint8b128, 128, DType::bf16, Tier::exact,
                                    /*E*/ 256, /*M*/ 32, /*topk*/ 8, /*H = K*/ 2048, /*I = N/2*/ 3584, /*seed*/ 7);
  const GemmCase c = with_rotated_experts(p, 8);
  const std::int64_t expert_bytes = c.shape.n * c.shape.k;  // int8: one byte per code
  ASSERT_GT(p.experts * expert_bytes, std::int64_t(1) << 31);

  // Sample: the tokens routed to the highest experts (offsets far past 2^31 bytes), and token 0.
  std::vector<std::int64_t> order(std::size_t(p.tokens));
  std::iota(order.begin(), order.end(), 0);
  const auto top_expert = [&](std::int64_t t) {
    return *std::max_element(c.routing.topk_ids.begin() + t * p.topk, c.routing.topk_ids.begin() + (t + 1) * p.topk);
  };
  std::sort(order.begin(), order.end(), [&](auto x, auto y) { return top_expert(x) > top_expert(y); });
  std::vector<std::int64_t> sample(order.begin(), order.begin() + 6);
  sample.push_back(0);
  ASSERT_GT(top_expert(sample.front()) * expert_bytes, std::int64_t(1) << 31)
      << "the sample must reach an expert whose weights start past 2^31 bytes";
  expect_sampled_tokens_match(registered_kernel(GetParam()), c, sample);
}

TEST_P(Large, OutputBeyondTwoToThe31Elements) {
  MOEVAL_REQUIRE_GPUS(1);
  // GEMM2-style: T = 32768·8 = 262144 routed rows × N = 8448 columns = 2.2e9 elements > 2^31.
  const MoeProblem p = gemm_problem(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, Tier::exact,
                                    /*E*/ 8, /*M*/ 32768, /*topk*/ 8, /*H = N*/ 8448, /*I = K*/ 32);
  const GemmCase c = build_gemm_case(p);
  const std::int64_t rows = p.tokens * p.topk, n = c.shape.n;
  ASSERT_GT(rows * n, std::int64_t(1) << 31);
  const std::int64_t boundary_token = (std::int64_t(1) << 31) / n / p.topk;  // its rows cross 2^31 elements
  expect_sampled_tokens_match(registered_kernel(GetParam()), c,
                              {0, 1, boundary_token - 1, boundary_token, boundary_token + 1, p.tokens - 2, p.tokens - 1});
}

// A memory-bound GEMM at full load: 8-bit weights (fp16, whose dequantization is the cheap packed
// one) of 512 MiB, ten times the L2, streamed by every SM for several rounds of items, so that the
// weight copies rather than the arithmetic set the pace (predicted for Marlin's 64-row items: 40 KB
// of copies per chunk of 4 K tiles against ~0.9 µs of arithmetic is ~5.9 TB/s over 132 SMs, above
// what HBM delivers) and a kernel's readers keep catching up with its copies. Where the readers of
// a ring of copy stages can outrun the copies, this is where a wrong wait shows; on smaller cases
// the copies run far ahead, and a stage read too early still holds the right data. Measured on an
// H200 (docs/testing.md, GPU mutants): a producer-form consumer that asks the next stage's barrier
// with a stale parity where the ring wraps failed this case in 5 of 5 runs (47k–222k of the 16.8M
// outputs differing between runs), and only 1 of the 16 two-block `Paths` cases. 64 experts of
// K = 2048, N = 4096 (rotated copies of 8, as above), 512 tokens × top-8 (~64 rows per expert);
// checked: coverage, the routed rows of 17 tokens against the reference (exact tier), and the whole
// output bitwise equal over three runs.
TEST_P(Large, MemoryBoundEightBitWeightsAtFullLoad) {
  MOEVAL_REQUIRE_GPUS(1);
  const MoeProblem p = gemm_problem(ProblemKind::gemm1, WeightType::uint8b128, 128, DType::f16, Tier::exact,
                                    /*E*/ 64, /*M*/ 512, /*topk*/ 8, /*H = K*/ 2048, /*I = N/2*/ 2048, /*seed*/ 9);
  const GemmCase c = with_rotated_experts(p, 8);
  ASSERT_GE(p.experts * c.shape.n * c.shape.k, std::int64_t(512) << 20);
  std::vector<std::int64_t> sample;
  for (std::int64_t t = 0; t < p.tokens; t += p.tokens / 16) sample.push_back(t);
  sample.push_back(p.tokens - 1);
  expect_sampled_tokens_match(registered_kernel(GetParam()), c, sample, /*runs*/ 3);
}

MOEVAL_FOR_EVERY_KERNEL(Large);

}  // namespace
}  // namespace moeval::testbed
