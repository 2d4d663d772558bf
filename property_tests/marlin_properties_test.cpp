// The catalogue of GEMM properties (gemm_properties.h) on our Marlin kernel, plus the act-order
// property of docs/properties.md: act-order ≡ the same problem with its rows physically permuted and no
// act-order, bitwise in the exact tier.
#include <algorithm>

#include "gemm_properties.h"
#include "moeval/fixtures/errors.h"
#include "moeval/fixtures/exact_tier.h"
#include "moeval/testbed/marlin_kernel.h"

namespace moeval::properties {
namespace {

std::int64_t round_up(std::int64_t v, std::int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

// Routed rows per expert, in the bands where the Marlin kernel changes item height (8-row blocks up
// to ~7 rows an expert, 16 from ~7, 32 from ~14, 64 from ~27 on the wgmma path): the tag of a draw.
const char* rows_per_expert_band(const MoeProblem& p) {
  const double per_expert = double(p.tokens * p.topk) / double(std::max<std::int64_t>(1, p.experts));
  return per_expert < 7 ? "rows/expert <7" : per_expert < 14 ? "rows/expert 7-14" : per_expert < 27 ? "rows/expert 14-27" : "rows/expert >=27";
}

// Marlin tiles are 64 columns wide: GEMM1's N = 2I and GEMM2's N = H are rounded up to a multiple
// of 64 (N is not a reduction size, so the scheme, the groups and the exact-tier bound are untouched).
// The generator draws mostly decode-sized problems (about 5 in 6 run 8-row blocks, ~3 % 64-row
// ones): half the draws get as many tokens as a target of routed rows per expert asks (12, 24, 48
// or 96; at most 1024 routed rows, which keeps the host's reference cheap), so every run reaches
// the 16-, 32- and 64-row items too. The tag counts the bands each run reached.
MoeProblem fit_marlin(MoeProblem p) {
  if (p.kind != ProblemKind::gemm2) p.inter = round_up(p.inter, 32);
  if (p.kind != ProblemKind::gemm1) p.hidden = round_up(p.hidden, 64);
  if (*rc::gen::arbitrary<bool>()) {
    const std::int64_t per_expert = *rc::gen::element<std::int64_t>(12, 24, 48, 96);
    const std::int64_t slots = std::min<std::int64_t>(per_expert * p.experts, 1024);
    p.tokens = std::max<std::int64_t>(1, slots / p.topk);
  }
  RC_TAG(rows_per_expert_band(p));
  return p;
}

PropertyKernel marlin() { return {testbed::make_marlin_kernel(), fit_marlin}; }

// An exact-tier act-order problem whose A rows each feed ONE expert — GEMM2 (a row per routed
// slot) or GEMM1 with topk = 1 — so that expert's perm can be applied to the row physically.
MoeProblem act_order_problem() {
  MoeProblem p = *gen::exact_problem();
  p.kind = *rc::gen::element(ProblemKind::gemm1, ProblemKind::gemm2);
  if (p.kind == ProblemKind::gemm1) p.topk = 1;
  p.scheme.type = *rc::gen::element(WeightType::uint4b8, WeightType::uint8b128);
  p.scheme.group_size = *rc::gen::element(32, 64, 128);
  p.scheme.act_order = true;
  p.scheme.is_k_full = *rc::gen::arbitrary<bool>();
  p.k_shards = 1;  // a K shard's uneven groups are no plain grouped problem
  p.k_shard_rank = 0;
  const std::int64_t k = p.scheme.group_size * *rc::gen::inRange<std::int64_t>(2, 512 / p.scheme.group_size + 1);
  (p.kind == ProblemKind::gemm1 ? p.hidden : p.inter) = k;
  if (p.kind == ProblemKind::gemm2) {  // the exact tier's top-k sum bound (exact_tier.h)
    p.topk = std::min(p.topk, std::int64_t((kExactLimit - 1) / exact_combine_span(k, p.scheme.type, 1)));
    RC_PRE(p.topk >= 1);
  }
  p = fit_marlin(p);
  try {
    p.validate();
  } catch (const InvalidProblem& e) {
    RC_DISCARD(e.what());
  }
  RC_TAG(to_string(p.kind), p.scheme.is_k_full ? "k_full" : "k_part");
  return p;
}

void ActOrderEqualsPhysicallyPermutedRowsWithoutActOrder(const PropertyKernel& k) {
  const GemmCase c = build_gemm_case(act_order_problem());
  RC_PRE(k.kernel->unsupported_reason(c).empty());
  const std::int64_t experts = c.w.experts, kk = c.w.k, n = c.w.n, group = c.w.scheme.group_size;
  // Marlin row j holds checkpoint row perm[j]; the plain problem stores that row at j, where plain
  // grouped quantization puts it in group j / group — the group act-order gave it (else the case is
  // not one plain problem, e.g. a K shard's uneven groups).
  GemmCase q = c;
  q.problem.scheme.act_order = false;
  q.problem.scheme.is_k_full = true;
  q.w.scheme = q.problem.scheme;
  q.w.perm.clear();
  for (std::int64_t e = 0; e < experts; ++e) {
    for (std::int64_t j = 0; j < kk; ++j) {
      const std::int64_t src = c.w.perm[std::size_t(e * kk + j)];
      RC_PRE(c.w.g_idx[std::size_t(e * kk + src)] == j / group);
      std::copy_n(c.w.codes.begin() + std::ptrdiff_t(c.w.code_index(e, src, 0)), n, q.w.codes.begin() + std::ptrdiff_t(q.w.code_index(e, j, 0)));
      std::copy_n(c.w.dequant.begin() + std::ptrdiff_t(c.w.code_index(e, src, 0)), n, q.w.dequant.begin() + std::ptrdiff_t(q.w.code_index(e, j, 0)));
      q.w.g_idx[std::size_t(e * kk + j)] = std::int32_t(j / group);
    }
  }
  // Every A row feeds one slot here (GEMM2, or GEMM1 with topk = 1): gather it through its expert's perm.
  for (std::size_t row = 0; row < c.routing.topk_ids.size(); ++row) {
    const std::int32_t e = c.routing.topk_ids[row] < 0 ? -1 : local_expert(c.problem, c.routing.topk_ids[row]);
    if (e < 0) continue;  // remote rows are zeros in both problems
    for (std::int64_t j = 0; j < kk; ++j) {
      q.a[row * std::size_t(kk) + std::size_t(j)] = c.a[row * std::size_t(kk) + std::size_t(c.w.perm[std::size_t(e * kk + j)])];
    }
  }
  const auto act_order = testbed::run_gemm_case(*k.kernel, c, 0);
  const auto permuted = testbed::run_gemm_case(*k.kernel, q, 0);
  if (!(act_order.pass() && permuted.pass())) RC_FAIL(act_order.summary() + "\n" + permuted.summary());
  RC_ASSERT(act_order.output == permuted.output);
}

MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, KernelMatchesReferenceDeterministicallyWithIntactCanaries)
MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, ZeroRoutingWeightGivesZeroRows)
MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, PermutingTokensPermutesOutputRows)
MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, RelabellingExpertsLeavesOutputUnchanged)
MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, RemoteExpertRowsAreZero)
MOEVAL_GPU_PROPERTY(MarlinProperties, marlin, ActOrderEqualsPhysicallyPermutedRowsWithoutActOrder)

}  // namespace
}  // namespace moeval::properties
