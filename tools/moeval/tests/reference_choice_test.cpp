// Which reference judges a job (reference_choice.h), on the CPU: the CPU's fp64 reference up to
// its budget, the GPU's cuBLAS reference beyond; every quick and standard job stays on the CPU,
// the full matrix's real-size cases go to the GPU; `reference` in --filter and in the record; a
// gpu-cublas job without a device is SKIPPED, never PASS.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exit_codes.h"
#include "job_filter.h"
#include "job_runner.h"
#include "matrices.h"
#include "reference_choice.h"

namespace moeval::cli {
namespace {

std::vector<Job> jobs_of(MatrixName name) {
  MatrixOptions o;
  o.name = name;
  o.kernels = {"wna16_moe", "marlin_moe"};
  return build_jobs(o);
}

MoeProblem deepseek_v3(ProblemKind kind, std::int64_t tokens) {
  MoeProblem p;
  p.kind = kind;
  p.experts = 256;
  p.tokens = tokens;
  p.topk = 8;
  p.hidden = 7168;
  p.inter = 2048;
  p.scheme = {WeightType::uint4b8, 128, false, true, DType::bf16};
  p.tier = Tier::bounded;
  return p;
}

// The CPU reference's work grows with the tokens: the choice flips once, from CPU to GPU, at the
// budget, and never back.
class ChoiceByTokens : public ::testing::TestWithParam<ProblemKind> {};

TEST_P(ChoiceByTokens, FlipsOnceAtTheBudget) {
  bool gpu_seen = false;
  for (std::int64_t tokens = 1; tokens <= 4096; tokens *= 2) {
    const MoeProblem p = deepseek_v3(GetParam(), tokens);
    const ReferenceKind kind = choose_reference(p);
    EXPECT_EQ(kind == ReferenceKind::gpu_cublas, cpu_reference_work(p) > kCpuReferenceBudget) << p.name();
    if (gpu_seen) {
      EXPECT_EQ(kind, ReferenceKind::gpu_cublas) << p.name() << ": more tokens, back to the CPU";
    }
    gpu_seen = kind == ReferenceKind::gpu_cublas;
  }
  EXPECT_TRUE(gpu_seen) << "4096 tokens of DeepSeek-V3 with every expert local exceed the CPU's budget";
  EXPECT_EQ(choose_reference(deepseek_v3(GetParam(), 1)), ReferenceKind::cpu_fp64) << "one token is CPU-sized";
}

INSTANTIATE_TEST_SUITE_P(DeepSeekV3AllExperts, ChoiceByTokens, ::testing::Values(ProblemKind::gemm1, ProblemKind::gemm2),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(ReferenceChoice, WorkCountsOnlyTheRowsOfLocalExperts) {
  MoeProblem all = deepseek_v3(ProblemKind::gemm1, 4096);
  MoeProblem rank = all;
  rank.expert_map.assign(256, -1);
  for (int e = 0; e < 256; e += 32) rank.expert_map[std::size_t(e)] = e / 32;  // 8 local experts
  EXPECT_DOUBLE_EQ(cpu_reference_work(rank) * 32, cpu_reference_work(all));
  // 2 · M·topk · K · N: y and S are each a K-long sum per output element.
  EXPECT_DOUBLE_EQ(cpu_reference_work(all), 2.0 * 4096 * 8 * 7168 * 4096);
}

TEST(ReferenceChoice, ALayerIsAlwaysJudgedOnTheCpu) {
  MoeProblem p = deepseek_v3(ProblemKind::layer, 4096);
  EXPECT_EQ(choose_reference(p), ReferenceKind::cpu_fp64);
}

TEST(ReferenceChoice, QuickAndStandardAreJudgedByTheCpuOnly) {
  for (MatrixName name : {MatrixName::quick, MatrixName::standard}) {
    for (const Job& j : jobs_of(name)) {
      EXPECT_NE(j.reference_name(), "gpu-cublas") << to_string(name) << ": " << j.id();
    }
  }
}

TEST(ReferenceChoice, FullJudgesTheRealSizeModelsOnTheGpuAndNothingElse) {
  std::set<std::string> gpu_shapes;
  for (const Job& j : jobs_of(MatrixName::full)) {
    if (j.kind == JobKind::golden) {
      EXPECT_EQ(j.reference_name(), "golden file");
      continue;
    }
    const bool gpu = j.reference_name() == "gpu-cublas";
    EXPECT_EQ(gpu, cpu_reference_work(j.problem) > kCpuReferenceBudget && j.kind != JobKind::layer) << j.id();
    if (!gpu) continue;
    gpu_shapes.insert(j.shape);
    EXPECT_EQ(j.problem.tier, Tier::bounded) << j.id();
    EXPECT_TRUE(j.problem.expert_map.empty()) << j.id() << ": every expert local";
    EXPECT_GE(j.problem.tokens, 256) << j.id();
  }
  EXPECT_EQ(gpu_shapes, (std::set<std::string>{"deepseek-v3-all-experts", "qwen3-30b-a3b-all-experts",
                                               "mixtral-8x7b-all-experts"}));
}

TEST(ReferenceChoice, FilterSelectsByReference) {
  const auto jobs = jobs_of(MatrixName::full);
  const auto gpu = select_jobs(jobs, {JobFilter("reference=gpu-cublas")});
  const auto cpu = select_jobs(jobs, {JobFilter("reference!=gpu-cublas")});
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu.size() + cpu.size(), jobs.size());
  for (const Job& j : gpu) EXPECT_EQ(j.reference_name(), "gpu-cublas") << j.id();
  for (const Job& j : cpu) EXPECT_NE(j.reference_name(), "gpu-cublas") << j.id();
  EXPECT_EQ(select_jobs(jobs, {JobFilter("reference=golden file")}).size(), 4u);
  try {
    JobFilter("reference=cuda");
    ADD_FAILURE() << "an unknown reference is a usage error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: cpu-fp64, gpu-cublas, golden file"), std::string::npos) << e.what();
  }
}

TEST(ReferenceChoice, AGpuReferenceJobWithoutADeviceIsSkippedAndSaysItsReference) {
  const auto jobs = select_jobs(jobs_of(MatrixName::full), {JobFilter("reference=gpu-cublas,kernel=marlin_moe")});
  ASSERT_FALSE(jobs.empty());
  JobRunOptions options;
  options.gpu_skip_reason = "no CUDA device: test";
  const nlohmann::json rec = run_job(jobs.front(), -1, options);
  EXPECT_EQ(rec["status"], "SKIPPED");
  EXPECT_EQ(rec["reference"], "gpu-cublas");
  EXPECT_EQ(rec["reason"], "no CUDA device: test");
}

}  // namespace
}  // namespace moeval::cli
