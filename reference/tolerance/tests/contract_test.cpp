// The numerics contract (reference/numerics_contract.h): the reference and the bound model exactly
// the contract a kernel declares. A kernel simulated on the CPU with its rounding at another point
// (simulated_kernel.h) must fail under the default contract and pass under the one that declares it,
// and the default contract must leave the reference as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "moeval/fixtures/quantize.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"
#include "simulated_kernel.h"

namespace moeval {
namespace {

using reference::Determinism;
using reference::Matrix16;
using reference::NumericsContract;
using reference::ReferenceOutput;
using reference::RoutingWeightPoint;
using testing::SimulatedNumerics;

// GEMM2 over routed rows (it multiplies the routing weights): E = 8, 16 tokens × top-2, N = 64.
MoeProblem gemm2_problem(DType act, std::int64_t k, QuantScheme scheme) {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = 8;
  p.tokens = 16;
  p.topk = 2;
  p.hidden = 64;
  p.inter = k;
  p.scheme = scheme;
  p.scheme.act = act;
  p.seed = 20261130;
  return p;
}

tolerance::Verdict judge(const std::vector<std::uint16_t>& out, const ReferenceOutput& ref) {
  return tolerance::compare_bounded(Matrix16{out, ref.rows, ref.cols, ref.dtype}, ref);
}

bool same_bits(const ReferenceOutput& a, const ReferenceOutput& b) {
  return a.y == b.y && a.y16 == b.y16 && a.s == b.s && a.reduction_length == b.reduction_length;
}

struct ContractCase {
  DType act;
  std::int64_t k;
};

std::string case_name(const ::testing::TestParamInfo<ContractCase>& info) {
  return std::string(to_string(info.param.act)) + "_K" + std::to_string(info.param.k);
}

class Contract : public ::testing::TestWithParam<ContractCase> {};

// Default contract: the reference and the bound are the ones every golden file and test was made with.
TEST_P(Contract, DefaultContractLeavesTheReferenceBitForBit) {
  const GemmCase c = build_gemm_case(gemm2_problem(GetParam().act, GetParam().k, {WeightType::uint4, 32}));
  const ReferenceOutput implicit = reference::reference_gemm(c);
  const ReferenceOutput declared = reference::reference_gemm(c, NumericsContract::parse(NumericsContract{}.name()));
  EXPECT_TRUE(same_bits(implicit, declared));
  for (std::size_t i = 0; i < implicit.y.size(); ++i) ASSERT_EQ(implicit.y16[i], round_to_bits(implicit.y[i], c.problem.scheme.act));
  EXPECT_EQ(implicit.rounding, reference::RoundingModel{});
  EXPECT_TRUE(judge(testing::simulate_gemm(c), implicit).pass());
}

// scaled_zero_fma equals sub_then_mul when z·s is exact in 16 bits (implicit zeros 8, 128), and
// differs with stored zero points; sub_then_mul_fp32 never rounds w, so it differs everywhere w
// needs more bits than the dtype has.
TEST_P(Contract, EachRecipesReferenceDiffersWhereItShould) {
  const DType act = GetParam().act;
  const GemmCase symmetric = build_gemm_case(gemm2_problem(act, GetParam().k, {WeightType::uint4b8, 128}));
  const GemmCase zero_point = build_gemm_case(gemm2_problem(act, GetParam().k, {WeightType::uint8, 64}));
  const auto with = [](const GemmCase& c, DequantRecipe r) { return reference::reference_gemm(c, {r}); };

  EXPECT_TRUE(same_bits(with(symmetric, DequantRecipe::sub_then_mul), with(symmetric, DequantRecipe::scaled_zero_fma)));
  EXPECT_FALSE(same_bits(with(zero_point, DequantRecipe::sub_then_mul), with(zero_point, DequantRecipe::scaled_zero_fma)));
  EXPECT_FALSE(same_bits(with(symmetric, DequantRecipe::sub_then_mul), with(symmetric, DequantRecipe::sub_then_mul_fp32)));
  EXPECT_FALSE(same_bits(with(zero_point, DequantRecipe::sub_then_mul), with(zero_point, DequantRecipe::sub_then_mul_fp32)));
  EXPECT_EQ(with(zero_point, DequantRecipe::sub_then_mul_fp32).rounding.exact_products, false);

  // The recipes element by element, against the arithmetic written out.
  const QuantizedWeights& w = zero_point.w;
  int fma_differs = 0;
  for (std::int64_t n = 0; n < w.n; ++n) {
    const int u = w.codes[w.code_index(0, 0, n)], z = w.zero_at(0, 0, n);
    const std::uint16_t s = w.scales[w.group_index(0, 0, n)];
    const double sv = to_double(s, act);
    EXPECT_EQ(dequant_value(DequantRecipe::sub_then_mul, u, z, s, act), to_double(w.dequant[w.code_index(0, 0, n)], act));
    EXPECT_EQ(dequant_value(DequantRecipe::sub_then_mul_fp32, u, z, s, act), double(u - z) * sv);
    const double fma = dequant_value(DequantRecipe::scaled_zero_fma, u, z, s, act);
    EXPECT_EQ(fma, round_to(u * sv - round_to(z * sv, act), act));
    fma_differs += fma != dequant_value(DequantRecipe::sub_then_mul, u, z, s, act);
  }
  EXPECT_GT(fma_differs, 0) << "no column of row 0 shows the scaled zero's rounding";
}

// The Marlin MoE habit: round the GEMM output to 16 bits, then multiply the routing weight.
TEST_P(Contract, RoundThenMultiplyFailsTheDefaultAndPassesItsOwnContract) {
  const GemmCase c = build_gemm_case(gemm2_problem(GetParam().act, GetParam().k, {WeightType::uint4b8, 128}));
  const std::vector<std::uint16_t> out =
      testing::simulate_gemm(c, testing::Accumulator::fp32, testing::OutputRounding::nearest_even, {.weight_after_rounding = true});
  const NumericsContract declared{.routing_weight = RoutingWeightPoint::after_output_rounding};

  const tolerance::Verdict under_default = judge(out, reference::reference_gemm(c));
  EXPECT_FALSE(under_default.pass()) << under_default.summary();
  EXPECT_GT(under_default.max_ratio, 1.0);

  const ReferenceOutput own = reference::reference_gemm(c, declared);
  EXPECT_EQ(own.rounding.output_roundings, 2);
  const tolerance::Verdict under_own = judge(out, own);
  std::printf("round then multiply, %s: max ratio %.3g under the default contract, %.3g under its own\n",
              c.problem.name().c_str(), under_default.max_ratio, under_own.max_ratio);
  EXPECT_TRUE(under_own.pass()) << under_own.summary();
  EXPECT_EQ(under_own.contract, declared);
  EXPECT_NE(under_own.summary().find("routing_weight=after_output_rounding"), std::string::npos) << under_own.summary();
  // The two-rounding bound is not slack: the kernel uses a good part of it.
  EXPECT_GT(under_own.max_ratio, 0.5) << under_own.summary();

  // Its bug classes are still caught under the declared contract: one scale off.
  const std::int32_t expert = local_expert(c.problem, c.routing.topk_ids[0]);
  const GemmCase scale_bug = testing::with_neighbour_scale(c, expert, c.w.groups() / 2, 5);
  const tolerance::Verdict bug = judge(testing::simulate_gemm(scale_bug, testing::Accumulator::fp32,
                                                              testing::OutputRounding::nearest_even, {.weight_after_rounding = true}),
                                       own);
  EXPECT_FALSE(bug.pass()) << bug.summary();
}

// A kernel that keeps (u − z)·s in fp32 and one that uses the scaled zero: each passes under its
// own recipe and fails under the default one.
TEST_P(Contract, DequantRecipesFailTheDefaultAndPassTheirOwnContract) {
  struct Item {
    DequantRecipe recipe;
    QuantScheme scheme;
  };
  for (const Item& item : {Item{DequantRecipe::sub_then_mul_fp32, {WeightType::uint4b8, 128}},
                           Item{DequantRecipe::sub_then_mul_fp32, {WeightType::uint8, 32}},
                           Item{DequantRecipe::scaled_zero_fma, {WeightType::uint8, 32}},
                           Item{DequantRecipe::scaled_zero_fma, {WeightType::uint4, 64}}}) {
    const GemmCase c = build_gemm_case(gemm2_problem(GetParam().act, GetParam().k, item.scheme));
    SCOPED_TRACE(std::string(to_string(item.recipe)) + " " + c.problem.name());
    const std::vector<std::uint16_t> out = testing::simulate_gemm(c, testing::Accumulator::fp32,
                                                                  testing::OutputRounding::nearest_even, {.dequant = item.recipe});
    const tolerance::Verdict under_default = judge(out, reference::reference_gemm(c));
    EXPECT_FALSE(under_default.pass()) << under_default.summary();
    const tolerance::Verdict under_own = judge(out, reference::reference_gemm(c, {.dequant = item.recipe}));
    std::printf("%s kernel, %s: max ratio %.3g under the default contract, %.3g under its own\n",
                std::string(to_string(item.recipe)).c_str(), c.problem.name().c_str(), under_default.max_ratio,
                under_own.max_ratio);
    EXPECT_TRUE(under_own.pass()) << under_own.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Contract,
                         ::testing::Values(ContractCase{DType::f16, 256}, ContractCase{DType::bf16, 256},
                                           ContractCase{DType::f16, 2048}, ContractCase{DType::bf16, 2048}),
                         case_name);

// Determinism: required gates the verdict, reported only shows it.
TEST(ContractDeterminism, ReportedDoesNotGateRequiredDoes) {
  tolerance::Verdict v;
  v.numerics_pass = true;
  v.canaries_intact = true;
  v.deterministic = false;
  EXPECT_FALSE(v.pass());
  v.contract.determinism = Determinism::reported;
  EXPECT_TRUE(v.pass());
  EXPECT_NE(v.summary().find("determinism FAILED (reported only)"), std::string::npos) << v.summary();
  v.numerics_pass = false;
  EXPECT_FALSE(v.pass());
}

TEST(ContractNames, NameParsesBackAndBadValuesAreNamed) {
  const NumericsContract c{DequantRecipe::scaled_zero_fma, RoutingWeightPoint::after_output_rounding, Determinism::reported};
  EXPECT_EQ(NumericsContract::parse(c.name()), c);
  EXPECT_EQ(NumericsContract::parse(""), NumericsContract{});
  EXPECT_EQ(NumericsContract::parse("determinism=reported").determinism, Determinism::reported);
  try {
    NumericsContract::parse("dequant=fma");
    FAIL() << "accepted an unknown recipe";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dequant 'fma' is not supported; allowed: sub_then_mul"), std::string::npos) << e.what();
  }
  EXPECT_THROW(NumericsContract::parse("rounding=twice"), std::invalid_argument);
  EXPECT_THROW(NumericsContract::parse("routing_weight"), std::invalid_argument);
}

// The bound under the other rounding models, against the derivation in bound.h written out.
TEST(ContractBound, TwoRoundingsAndInexactProducts) {
  for (DType dt : {DType::f16, DType::bf16}) {
    const double u = unit_roundoff(dt), ua = 0x1p-24, eta = std::ldexp(1.0, dt == DType::f16 ? -25 : -134);
    const double q = u + ua + u * ua;
    const double acc = 12.0 * ua * std::sqrt(100.0) * 3.0;
    EXPECT_DOUBLE_EQ(tolerance::element_bound(2.0, 3.0, 100, dt, {}, {2, true}),
                     (u + q * (1 + u)) * 2.0 + (2 + q) * eta + (1 + u + q * (1 + u)) * acc);
    EXPECT_DOUBLE_EQ(tolerance::element_bound(2.0, 3.0, 100, dt, {}, {1, false}),
                     u * 2.0 + eta + (1 + u) * 12.0 * ua * std::sqrt(101.0) * 3.0);
    EXPECT_THROW(tolerance::element_bound(2.0, 3.0, 100, dt, {}, {3, true}), std::invalid_argument);
  }
}

}  // namespace
}  // namespace moeval
