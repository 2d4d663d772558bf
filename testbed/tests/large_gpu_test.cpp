// The int32-overflow regime (bug class: sorted_id·N in int32). M·topk·N > 2^31 output elements:
// every output row must be written (no poison left), the guards intact, and sampled rows near the
// start, the 2^31 element boundary and the end must equal the reference bitwise (exact tier).
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_case_support.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"

namespace moeval::testbed {
namespace {

// The sub-case made of routed rows `rows` of a GEMM2-style case (A row = routed row): its
// reference row s is the full case's row rows[s].
GemmCase slice_rows(const GemmCase& full, const std::vector<std::int64_t>& rows) {
  GemmCase s = full;
  s.problem.tokens = std::int64_t(rows.size());
  s.problem.topk = 1;
  s.shape.m = std::int64_t(rows.size());
  s.routing.tokens = std::int64_t(rows.size());
  s.routing.topk = 1;
  s.a.clear();
  s.routing.topk_ids.clear();
  s.routing.topk_weights.clear();
  for (std::int64_t t : rows) {
    s.a.insert(s.a.end(), full.a.begin() + t * full.shape.k, full.a.begin() + (t + 1) * full.shape.k);
    s.routing.topk_ids.push_back(full.routing.topk_ids[std::size_t(t)]);
    s.routing.topk_weights.push_back(full.routing.topk_weights[std::size_t(t)]);
  }
  return s;
}

TEST(Large, Wna16OutputBeyondTwoToThe31Elements) {
  MOEVAL_REQUIRE_GPUS(1);
  // T = 32768·8 = 262144 routed rows × N = 8448 columns = 2.2e9 elements > 2^31.
  MoeProblem p = gemm_problem(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, Tier::exact,
                              /*E*/ 8, /*M*/ 32768, /*topk*/ 8, /*H = N*/ 8448, /*I = K*/ 32);
  const GemmCase c = build_gemm_case(p);
  const std::int64_t rows = p.tokens * p.topk, n = c.shape.n;
  ASSERT_GT(rows * n, std::int64_t(1) << 31);

  const auto kernel = make_wna16_kernel();
  auto prepared = kernel->prepare(c, 0);
  GuardedBuffer out("out", 0, std::size_t(rows * n) * 2);
  prepared->run(out);
  const auto bits = out.download<std::uint16_t>();
  EXPECT_EQ(out.check_guards(), "");
  std::int64_t poisoned = 0;
  for (std::uint16_t b : bits) poisoned += b == 0xFFFF;
  EXPECT_EQ(poisoned, 0) << "output elements never written";

  const std::int64_t boundary = (std::int64_t(1) << 31) / n;  // first row crossing 2^31 elements
  std::vector<std::int64_t> sample{0, 1, boundary - 1, boundary, boundary + 1, rows - 2, rows - 1};
  const auto ref = reference::reference_gemm(slice_rows(c, sample));
  for (std::size_t s = 0; s < sample.size(); ++s) {
    for (std::int64_t col = 0; col < n; ++col) {
      const auto got = bits[std::size_t(sample[s] * n + col)];
      const auto want = ref.y16[ref.index(std::int64_t(s), col)];
      if (got != want) {
        ADD_FAILURE() << "row " << sample[s] << " col " << col << ": kernel bits " << got << ", reference bits " << want;
        break;
      }
    }
  }
}

}  // namespace
}  // namespace moeval::testbed
