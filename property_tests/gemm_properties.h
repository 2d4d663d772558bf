// Properties of docs/properties.md's catalogue that hold for every MoE GEMM kernel under test, for arbitrary
// problems: kernel vs reference within the tier's rule, bitwise determinism, canaries intact, a zero
// routing weight contributes nothing, permuting the token order permutes the output rows,
// relabelling experts changes nothing, remote experts give zeros. Each kernel's test file declares
// them with MOEVAL_GPU_PROPERTY for its kernel (one ctest entry per kernel × property).
#pragma once

#include <filesystem>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

#include "moeval/fixtures/arbitrary.h"
#include "moeval/fixtures/cases.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"

namespace moeval::properties {

// A kernel and how to move a generated problem into the shapes it supports, keeping everything
// else (scheme, routing, tier, edges) as generated; identity when the generator already fits.
struct PropertyKernel {
  std::shared_ptr<const testbed::GemmKernelUnderTest> kernel;
  std::function<MoeProblem(MoeProblem)> fit = [](MoeProblem p) { return p; };
};

// A generated GEMM problem the kernel supports (layer problems become one of their GEMMs, or `kind`
// when given).
inline GemmCase supported_case(const PropertyKernel& k, std::optional<ProblemKind> kind = std::nullopt) {
  MoeProblem p = *rc::gen::arbitrary<MoeProblem>();
  if (kind) {
    p.kind = *kind;
  } else if (p.kind == ProblemKind::layer) {
    p.kind = *rc::gen::element(ProblemKind::gemm1, ProblemKind::gemm2);
  }
  p = k.fit(p);
  gen::tag(p);
  GemmCase c = build_gemm_case(p);
  const auto reason = k.kernel->unsupported_reason(c);
  RC_PRE(reason.empty());
  return c;
}

inline void KernelMatchesReferenceDeterministicallyWithIntactCanaries(const PropertyKernel& k) {
  const GemmCase c = supported_case(k);
  const auto r = testbed::run_gemm_case(*k.kernel, c, 0);
  if (!(r.pass())) RC_FAIL(r.summary());
}

inline void ZeroRoutingWeightGivesZeroRows(const PropertyKernel& k) {
  GemmCase c = supported_case(k);
  RC_PRE(c.mul_topk_weights && !c.routing.topk_weights.empty());
  const auto slot = *rc::gen::inRange<std::size_t>(0, c.routing.topk_weights.size());
  c.routing.topk_weights[slot] = 0.0f;
  const auto r = testbed::run_gemm_case(*k.kernel, c, 0);
  if (!(r.pass())) RC_FAIL(r.summary());
  for (std::int64_t n = 0; n < c.shape.n; ++n) {
    const auto bits = r.output[std::size_t(std::int64_t(slot) * c.shape.n + n)];
    RC_ASSERT((bits & 0x7FFF) == 0);  // +0 or -0
  }
}

inline void PermutingTokensPermutesOutputRows(const PropertyKernel& k) {
  GemmCase c = supported_case(k, ProblemKind::gemm1);  // GEMM1: A rows are tokens
  RC_PRE(c.problem.tokens > 1);
  const std::int64_t m = c.problem.tokens, topk = c.problem.topk, kk = c.shape.k, n = c.shape.n;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  std::shuffle(perm.begin(), perm.end(), rng);
  GemmCase q = c;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t src = perm[std::size_t(i)];
    std::copy_n(c.a.begin() + src * kk, kk, q.a.begin() + i * kk);
    for (std::int64_t j = 0; j < topk; ++j) {
      q.routing.topk_ids[std::size_t(i * topk + j)] = c.routing.topk_ids[std::size_t(src * topk + j)];
      q.routing.topk_weights[std::size_t(i * topk + j)] = c.routing.topk_weights[std::size_t(src * topk + j)];
    }
  }
  const auto base = testbed::run_gemm_case(*k.kernel, c, 0);
  const auto permuted = testbed::run_gemm_case(*k.kernel, q, 0);
  if (!(base.pass() && permuted.pass())) RC_FAIL(base.summary() + "\n" + permuted.summary());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < topk; ++j) {
      const auto row_q = (i * topk + j) * n, row_c = (perm[std::size_t(i)] * topk + j) * n;
      RC_ASSERT(std::equal(permuted.output.begin() + row_q, permuted.output.begin() + row_q + n,
                           base.output.begin() + row_c));
    }
  }
}

// Relabelling the experts (weights move with their label) leaves every output bit unchanged.
inline void RelabellingExpertsLeavesOutputUnchanged(const PropertyKernel& k) {
  GemmCase c = supported_case(k);
  RC_PRE(c.problem.expert_map.empty() && c.w.experts > 1);
  const std::int64_t experts = c.w.experts;
  std::vector<std::int32_t> relabel(static_cast<std::size_t>(experts));
  std::iota(relabel.begin(), relabel.end(), 0);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  std::shuffle(relabel.begin(), relabel.end(), rng);
  GemmCase q = c;
  // Moves expert e's slice of a per-expert array to slot relabel[e].
  auto move_slices = [&](auto& dst, const auto& src) {
    if (src.empty()) return;
    const std::size_t per = src.size() / std::size_t(experts);
    for (std::int64_t e = 0; e < experts; ++e) {
      std::copy_n(src.begin() + std::ptrdiff_t(std::size_t(e) * per), per,
                  dst.begin() + std::ptrdiff_t(std::size_t(relabel[std::size_t(e)]) * per));
    }
  };
  move_slices(q.w.codes, c.w.codes);
  move_slices(q.w.scales, c.w.scales);
  move_slices(q.w.zeros, c.w.zeros);
  move_slices(q.w.g_idx, c.w.g_idx);
  move_slices(q.w.perm, c.w.perm);
  move_slices(q.w.dequant, c.w.dequant);
  for (auto& id : q.routing.topk_ids) id = relabel[std::size_t(id)];
  const auto base = testbed::run_gemm_case(*k.kernel, c, 0);
  const auto relabelled = testbed::run_gemm_case(*k.kernel, q, 0);
  if (!(base.pass() && relabelled.pass())) RC_FAIL(base.summary() + "\n" + relabelled.summary());
  RC_ASSERT(base.output == relabelled.output);
}

// Rows routed to experts another rank holds (expert_map -1) come out as exact zeros.
inline void RemoteExpertRowsAreZero(const PropertyKernel& k) {
  MoeProblem p = *rc::gen::arbitrary<MoeProblem>();
  p.kind = *rc::gen::element(ProblemKind::gemm1, ProblemKind::gemm2);
  RC_PRE(p.experts > 1);
  p.expert_map = *gen::expert_map(p.experts);
  RC_PRE(!p.expert_map.empty());
  p = k.fit(p);
  const GemmCase c = build_gemm_case(p);
  RC_PRE(k.kernel->unsupported_reason(c).empty());
  const auto r = testbed::run_gemm_case(*k.kernel, c, 0);
  if (!r.pass()) RC_FAIL(r.summary());
  for (std::size_t t = 0; t < c.routing.topk_ids.size(); ++t) {
    if (p.expert_map[std::size_t(c.routing.topk_ids[t])] >= 0) continue;
    for (std::int64_t n = 0; n < c.shape.n; ++n) RC_ASSERT((r.output[t * std::size_t(c.shape.n) + std::size_t(n)] & 0x7FFF) == 0);
  }
}

}  // namespace moeval::properties

// Declares TEST(Suite, Name) checking property `Name` on the PropertyKernel `make()` returns. Each
// property runs through rc::check inside a plain TEST, so a missing device skips it (never passes
// it); on failure rapidcheck prints the shrunk counterexample (showValue: every field of the
// MoeProblem) and its reproduce string, and the test prints the command that replays exactly it.
#define MOEVAL_GPU_PROPERTY(Suite, make, Name)                                                   \
  TEST(Suite, Name) {                                                                            \
    MOEVAL_REQUIRE_GPUS(1);                                                                      \
    const ::moeval::properties::PropertyKernel moeval_kernel_ = make();                          \
    EXPECT_TRUE(rc::check(#Name, [&] { ::moeval::properties::Name(moeval_kernel_); }))          \
        << "replay: RC_PARAMS=\"reproduce=<the reproduce string above>\" "                        \
        << std::filesystem::read_symlink("/proc/self/exe").string() << " --gtest_filter=" #Suite "." #Name; \
  }
