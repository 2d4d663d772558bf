// The named matrices: every job is a valid problem with a unique id, and the standard matrix keeps
// the coverage it promises (docs/reports.md): every scheme × dtype × group × GEMM × tier, act-order
// × is_k_full, expert parallelism, E from 1 to 512, M from 1 to 4096, every routing kind, the
// layer on both formats, and the golden families.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <map>
#include <set>
#include <tuple>

#include "exit_codes.h"
#include "matrices.h"
#include "moeval/testbed/matrices.h"

namespace moeval::cli {
namespace {

const std::vector<std::string> kKernels = {"wna16_moe", "marlin_moe"};

std::vector<Job> jobs_of(MatrixName name, int seeds = 1) {
  MatrixOptions o;
  o.name = name;
  o.seeds = seeds;
  o.kernels = kKernels;
  return build_jobs(o);
}

class EveryMatrix : public ::testing::TestWithParam<MatrixName> {};

TEST_P(EveryMatrix, JobsAreValidProblemsWithUniqueIdsInIndexOrder) {
  const auto jobs = jobs_of(GetParam());
  std::set<std::string> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].index, i);
    EXPECT_TRUE(ids.insert(jobs[i].id()).second) << "duplicate " << jobs[i].id();
    if (jobs[i].kind != JobKind::golden) {
      EXPECT_NO_THROW(jobs[i].problem.validate()) << jobs[i].id();
    }
    EXPECT_FALSE(jobs[i].shape.empty()) << jobs[i].id();
  }
}

TEST_P(EveryMatrix, EveryKernelGetsTheSameGemmCasesAndBothLayerFormatsRun) {
  const auto jobs = jobs_of(GetParam());
  std::map<std::string, std::set<std::string>> cases;
  std::set<std::string> kernels;
  for (const Job& j : jobs) {
    kernels.insert(j.kernel);
    if (j.kind == JobKind::gemm) cases[j.kernel].insert(j.case_name());
  }
  EXPECT_EQ(cases["wna16_moe"], cases["marlin_moe"]);
  EXPECT_TRUE(kernels.count("moe_forward[wna16]"));
  EXPECT_TRUE(kernels.count("moe_forward[marlin]"));
  EXPECT_EQ(std::count_if(jobs.begin(), jobs.end(), [](const Job& j) { return j.kind == JobKind::golden; }), 4);
}

TEST_P(EveryMatrix, SeedsMultiplyTheProblemsButNotTheGoldenFamiliesOrCrossDeviceJobs) {
  const auto one = jobs_of(GetParam(), 1);
  const auto three = jobs_of(GetParam(), 3);
  const auto seeded = [](const std::vector<Job>& v) {
    return std::size_t(std::count_if(v.begin(), v.end(), [](const Job& j) { return j.kind == JobKind::gemm || j.kind == JobKind::layer; }));
  };
  EXPECT_EQ(seeded(three), 3 * seeded(one));
  EXPECT_EQ(three.size() - seeded(three), one.size() - seeded(one));
}

// `moeval sweep`: the same GEMM cases (every seed) as check, each a cross-device job on every
// device; the same layers; no golden family (CPU only, nothing to sweep).
TEST_P(EveryMatrix, ASweepRunsCheckCasesOnEveryDevice) {
  const auto check = jobs_of(GetParam(), 2);
  MatrixOptions o;
  o.name = GetParam();
  o.seeds = 2;
  o.kernels = kKernels;
  o.golden = false;
  o.every_device = true;
  const auto sweep = build_jobs(o);
  std::multiset<std::string> check_gemms, sweep_gemms, check_layers, sweep_layers;
  for (const Job& j : check) {
    if (j.kind == JobKind::gemm) check_gemms.insert(j.id() + " on every device");
    if (j.kind == JobKind::layer) check_layers.insert(j.id());
  }
  for (const Job& j : sweep) {
    EXPECT_NE(j.kind, JobKind::golden) << j.id();
    EXPECT_NE(j.kind, JobKind::gemm) << j.id() << ": a sweep runs every GEMM case on every device";
    if (j.kind == JobKind::cross_device) sweep_gemms.insert(j.id());
    if (j.kind == JobKind::layer) sweep_layers.insert(j.id());
  }
  EXPECT_EQ(sweep_gemms, check_gemms);
  EXPECT_EQ(sweep_layers, check_layers);
  EXPECT_EQ(sweep.size(), sweep_gemms.size() + sweep_layers.size());
  // A case on both kernels is one group, as in check: one worker builds it once.
  for (std::size_t i = 1; i < sweep.size(); ++i) {
    if (sweep[i].kind == JobKind::cross_device && sweep[i].case_name() == sweep[i - 1].case_name()) {
      EXPECT_EQ(sweep[i].group, sweep[i - 1].group) << sweep[i].id();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Matrices, EveryMatrix,
                         ::testing::Values(MatrixName::quick, MatrixName::standard, MatrixName::full),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(StandardMatrix, CoversEverySchemeDtypeGroupGemmAndTier) {
  std::set<std::tuple<WeightType, DType, int, ProblemKind, Tier>> seen;
  for (const Job& j : jobs_of(MatrixName::standard)) {
    if (j.kind != JobKind::gemm || j.problem.scheme.act_order) continue;
    const auto& p = j.problem;
    seen.insert({p.scheme.type, p.scheme.act, p.scheme.group_size, p.kind, p.tier});
  }
  for (WeightType t : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (DType d : {DType::f16, DType::bf16}) {
      for (int g : {kChannelwise, 32, 64, 128}) {
        for (ProblemKind k : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          for (Tier tier : {Tier::exact, Tier::bounded}) {
            EXPECT_TRUE(seen.count({t, d, g, k, tier})) << to_string(t) << " " << to_string(d) << " g" << g << " "
                                                         << to_string(k) << " " << to_string(tier);
          }
        }
      }
    }
  }
}

TEST(StandardMatrix, CoversActOrderIsKFullAKShardExpertParallelismAndTheAxes) {
  std::set<std::tuple<bool, DType>> act_order;  // is_k_full × dtype
  bool k_shard = false, ep_gemm = false, ep_layer = false;
  std::int64_t e_min = 1 << 30, e_max = 0, m_min = 1 << 30, m_max = 0;
  std::set<RoutingKind> routing;
  for (const Job& j : jobs_of(MatrixName::standard)) {
    if (j.kind == JobKind::golden) continue;
    const auto& p = j.problem;
    if (p.scheme.act_order) act_order.insert({p.scheme.is_k_full, p.scheme.act});
    k_shard = k_shard || p.k_shards > 1;
    (j.kind == JobKind::layer ? ep_layer : ep_gemm) |= !p.expert_map.empty();
    e_min = std::min(e_min, p.experts);
    e_max = std::max(e_max, p.experts);
    m_min = std::min(m_min, p.tokens);
    m_max = std::max(m_max, p.tokens);
    routing.insert(p.routing.kind);
  }
  EXPECT_EQ(act_order.size(), 4u);
  EXPECT_TRUE(k_shard);
  EXPECT_TRUE(ep_gemm);
  EXPECT_TRUE(ep_layer);
  EXPECT_EQ(e_min, 1);
  EXPECT_EQ(e_max, 512);
  EXPECT_EQ(m_min, 1);
  EXPECT_EQ(m_max, 4096);
  EXPECT_EQ(routing.size(), 5u) << "every RoutingKind";
}

TEST(StandardMatrix, CoversActOrderAtEveryGroupBothIsKFullAndBothSymmetricTypes) {
  std::set<std::tuple<WeightType, int, bool>> seen;
  for (const Job& j : jobs_of(MatrixName::standard)) {
    if (j.kind != JobKind::golden && j.problem.scheme.act_order) {
      seen.insert({j.problem.scheme.type, j.problem.scheme.group_size, j.problem.scheme.is_k_full});
    }
  }
  for (WeightType t : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (int g : {32, 64, 128}) {
      for (bool k_full : {true, false}) EXPECT_TRUE(seen.count({t, g, k_full})) << to_string(t) << " g" << g << " " << k_full;
    }
  }
}

TEST(QuickMatrix, IsSmall) { EXPECT_LE(jobs_of(MatrixName::quick).size(), 30u); }

TEST(FullMatrix, HoldsTheRealModelShapes) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> models;  // shape → (H, I)
  for (const Job& j : jobs_of(MatrixName::full)) {
    if (j.kind == JobKind::gemm) models[j.shape] = {j.problem.hidden, j.problem.inter};
  }
  EXPECT_EQ(models["deepseek-v3"], std::make_pair(std::int64_t(7168), std::int64_t(2048)));
  EXPECT_EQ(models["qwen3-30b-a3b"], std::make_pair(std::int64_t(2048), std::int64_t(768)));
  EXPECT_EQ(models["mixtral-8x7b"], std::make_pair(std::int64_t(4096), std::int64_t(14336)));
}

// One registry of matrix names (moeval/testbed/matrices.h): the CLI's --matrix accepts exactly
// its names, the CMake function's MATRIX check lists the same ones, and each name's GEMM problems
// (what a kernel suite and Python's moeval.matrix run) are the GEMM problems of the CLI's jobs.
TEST(MatrixRegistry, CliCmakeAndTestbedShareTheNames) {
  std::set<std::string> testbed_names, cli_names;
  for (const std::string& n : testbed::matrix_names()) testbed_names.insert(n);
  EXPECT_EQ(testbed::gemm_matrix_names(), testbed::matrix_names());
  for (MatrixName n : {MatrixName::quick, MatrixName::standard, MatrixName::full, MatrixName::core, MatrixName::smoke}) {
    cli_names.insert(std::string(to_string(n)));
    EXPECT_EQ(parse_matrix_name(to_string(n)), n);
  }
  EXPECT_EQ(cli_names, testbed_names);
  std::ifstream in(MOEVAL_KERNEL_TESTS_CMAKE);
  std::stringstream text;
  text << in.rdbuf();
  const std::string cmake = text.str();
  const std::string marker = "MATCHES \"^(";
  const std::size_t at = cmake.find(marker);
  ASSERT_NE(at, std::string::npos) << "the MATRIX check of " << MOEVAL_KERNEL_TESTS_CMAKE;
  const std::string alternatives = cmake.substr(at + marker.size(), cmake.find(')', at) - at - marker.size());
  std::set<std::string> cmake_names;
  for (std::size_t b = 0; b <= alternatives.size();) {
    const std::size_t e = std::min(alternatives.find('|', b), alternatives.size());
    cmake_names.insert(alternatives.substr(b, e - b));
    b = e + 1;
  }
  EXPECT_EQ(cmake_names, testbed_names);
}

class RegistryName : public ::testing::TestWithParam<MatrixName> {};

TEST_P(RegistryName, GemmProblemsAreTheCliJobsGemmCases) {
  const std::string name(to_string(GetParam()));
  std::vector<std::string> from_registry, from_jobs;
  for (const MoeProblem& p : testbed::gemm_matrix(name)) from_registry.push_back(p.name());
  MatrixOptions o;
  o.name = GetParam();
  o.kernels = {"wna16_moe"};
  for (const Job& j : build_jobs(o)) {
    if (j.kind == JobKind::gemm) from_jobs.push_back(j.case_name());
  }
  ASSERT_FALSE(from_registry.empty());
  EXPECT_EQ(from_registry, from_jobs);
}

INSTANTIATE_TEST_SUITE_P(Names, RegistryName,
                         ::testing::Values(MatrixName::quick, MatrixName::standard, MatrixName::full, MatrixName::core,
                                           MatrixName::smoke),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(MatrixRegistry, AnUnknownNameListsTheKnownOnes) {
  try {
    testbed::matrix_entries("big");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "matrix 'big' is unknown; known: quick, standard, full, default, smoke");
  }
}

TEST(MatrixName, UnknownNameIsAUsageErrorListingTheNames) {
  try {
    parse_matrix_name("big");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--matrix: 'big' is unknown; allowed: quick, standard, full, default, smoke");
  }
}

}  // namespace
}  // namespace moeval::cli
