// The cuBLAS reference path on one GPU: bit-exact dequant, agreement with the CPU reference within
// the bound over schemes × dtypes × act-order × E ∈ {8, 256}, zero rows, errors.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cublas_agreement.h"
#include "moeval/reference/cublas_reference.h"
#include "moeval/testbed/devices.h"

namespace moeval {
namespace {

const QuantScheme kSchemes[] = {
    {WeightType::uint4b8, 128},        {WeightType::uint4, 32},          {WeightType::uint8b128, kChannelwise},
    {WeightType::uint8, 64},           {WeightType::uint4b8, 64, true},  {WeightType::uint8b128, 32, true, false},
};

TEST(CublasReference, AgreesWithCpuReferenceOverSchemesDtypesActOrderAndExpertCounts) {
  MOEVAL_REQUIRE_GPUS(1);
  double max_ratio = 0.0;
  int cases = 0;
  for (std::int64_t experts : {8, 256}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (QuantScheme scheme : kSchemes) {
        scheme.act = act;
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          const GemmCase c = build_gemm_case(testing::agreement_problem(kind, scheme, experts));
          SCOPED_TRACE(c.problem.name());
          max_ratio = std::max(max_ratio, testing::expect_cublas_agrees_with_cpu(c, 0));
          ++cases;
        }
      }
    }
  }
  std::printf("cuBLAS vs CPU reference: %d cases, max ratio %.3f\n", cases, max_ratio);
}

TEST(CublasReference, ExpertParallelRowsAreZeroAndAgree) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = testing::agreement_problem(ProblemKind::gemm2, {WeightType::uint4b8, 128}, 8);
  p.expert_map = {-1, 0, -1, 1, 2, -1, -1, 3};
  const GemmCase c = build_gemm_case(p);
  testing::expect_cublas_agrees_with_cpu(c, 0);
  const reference::CublasGemmResult gpu = reference::cublas_reference_gemm(c, 0);
  int zero_rows = 0;
  for (std::int64_t t = 0; t < gpu.rows; ++t) {
    if (local_expert(p, c.routing.topk_ids[std::size_t(t)]) >= 0) continue;
    ++zero_rows;
    for (std::int64_t n = 0; n < gpu.cols; ++n) ASSERT_EQ(gpu.out_f32[std::size_t(t * gpu.cols + n)], 0.0f);
  }
  EXPECT_GT(zero_rows, 0);
}

// A K shard: the dequant kernel looks up the rank's rows' scales through their global g_idx among
// the layer's G groups (G > local K groups, here even G > K / group_size of the rank).
TEST(CublasReference, KShardDequantAndGemmAgree) {
  MOEVAL_REQUIRE_GPUS(1);
  for (std::int64_t local_k : {32, 64}) {
    MoeProblem p = testing::agreement_problem(ProblemKind::gemm2, {WeightType::uint4b8, 32, true, false}, 8);
    p.inter = local_k;
    p.k_shards = 4;
    p.k_shard_rank = 3;
    const GemmCase c = build_gemm_case(p);
    SCOPED_TRACE(c.problem.name());
    ASSERT_GT(c.w.groups(), c.w.k / 32);
    testing::expect_cublas_agrees_with_cpu(c, 0);
  }
}

TEST(CublasReference, RepeatedRunsAreBitwiseIdentical) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase c = build_gemm_case(testing::agreement_problem(ProblemKind::gemm1, {WeightType::uint4, 64}, 8));
  const reference::CublasGemmResult first = reference::cublas_reference_gemm(c, 0);
  const reference::CublasGemmResult second = reference::cublas_reference_gemm(c, 0);
  EXPECT_EQ(first.out16, second.out16);
  EXPECT_EQ(first.out_f32, second.out_f32);
}

// The benchmark's use: one path, several cases of different sizes, a non-default stream. The
// grow-only workspaces must not leak one case into the next.
TEST(CublasReference, OnePathRunsCasesOfDifferentSizesOnAStream) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase small = build_gemm_case(testing::agreement_problem(ProblemKind::gemm1, {WeightType::uint4, 32}, 8));
  const GemmCase large = build_gemm_case(testing::agreement_problem(ProblemKind::gemm2, {WeightType::uint4b8, 64, true}, 256));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  reference::CublasGemmPath path(0);
  for (const GemmCase* c : {&small, &large, &small, &large}) {
    SCOPED_TRACE(c->problem.name());
    const reference::DeviceGemmCase uploaded(*c, 0);
    path.run(uploaded.args(), stream);
    EXPECT_EQ(uploaded.download().out16, reference::cublas_reference_gemm(*c, 0).out16);
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(CublasReference, NoTokensGiveAnEmptyResult) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = testing::agreement_problem(ProblemKind::gemm1, {}, 8);
  p.tokens = 0;
  const reference::CublasGemmResult gpu = reference::cublas_reference_gemm(build_gemm_case(p), 0);
  EXPECT_EQ(gpu.rows, 0);
  EXPECT_TRUE(gpu.out16.empty());
}

template <typename F>
void expect_invalid(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CublasReference, BadInputGivesOneClearError) {
  MOEVAL_REQUIRE_GPUS(1);
  const GemmCase c = build_gemm_case(testing::agreement_problem(ProblemKind::gemm1, {WeightType::uint4b8, 128}, 8));

  // A code outside the 4-bit range is reported, not silently dequantized.
  QuantizedWeights bad_code = c.w;
  bad_code.codes[17] = 16;
  expect_invalid([&] { reference::cublas_dequantize(bad_code, 0); }, "a code >= 2^bits");
  QuantizedWeights bad_group = c.w;
  bad_group.g_idx[3] = std::int32_t(bad_group.groups());
  expect_invalid([&] { reference::cublas_dequantize(bad_group, 0); }, "g_idx entry outside");
  GemmCase bad_id = c;
  bad_id.routing.topk_ids[2] = 99;
  expect_invalid([&] { reference::cublas_reference_gemm(bad_id, 0); }, "topk_ids[2] = 99");

  // Raw device API: null, host and dtype errors.
  std::uint16_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 64), cudaSuccess);
  std::vector<std::uint8_t> host_codes(64);
  std::uint16_t host_scales[4] = {};
  reference::DeviceQuantWeights w;
  w.codes = host_codes.data();
  w.scales = host_scales;
  w.experts = 1;
  w.k = 4;
  w.n = 8;
  w.groups = 1;
  expect_invalid([&] { reference::dequantize_on_device(w, out, nullptr); }, "host memory");
  w.codes = nullptr;
  expect_invalid([&] { reference::dequantize_on_device(w, out, nullptr); }, "codes and scales are required");
  w.codes = host_codes.data();
  w.dtype = static_cast<reference::Float16Kind>(9);
  expect_invalid([&] { reference::dequantize_on_device(w, out, nullptr); }, "dtype code 9");
  w.dtype = reference::Float16Kind::bf16;
  w.bits = 3;
  expect_invalid([&] { reference::dequantize_on_device(w, out, nullptr); }, "3 bits");
  reference::CublasGemmPath path(0);
  reference::CublasGemmArgs args;
  args.w.codes = host_codes.data();
  args.w.scales = host_scales;
  args.w.experts = 1;
  args.w.k = 4;
  args.w.n = 8;
  args.w.groups = 1;
  args.routing = {nullptr, nullptr, nullptr, 1, 1, 1};
  args.a_rows = 1;
  expect_invalid([&] { path.run(args, nullptr); }, "both null");
  args.out16 = out;
  expect_invalid([&] { path.run(args, nullptr); }, "null pointer");
  EXPECT_THROW(reference::float16_kind(static_cast<DType>(5)), std::invalid_argument);
  ASSERT_EQ(cudaFree(out), cudaSuccess);
}

}  // namespace
}  // namespace moeval
